"""What a charged run returns, and the run itself once its cost is recorded."""

from __future__ import annotations

from typing import Any

import attrs

from .entries import LedgerEntry


@attrs.frozen
class Result:
    """Outcome of ``Accountant.run``: ``output`` (None when halted), which step halted, every
    value the plan releases (``outputs``, by step name, those released before a halt included)
    and the ledger entry that paid for it. Nothing else about the run is exposed.

    ``replayed``: the run's charge id was already recorded, so this call charged nothing and ran
    nothing (``output`` None, ``outputs`` empty): the first call's output is the only one."""

    output: Any
    halted: bool
    halted_by: str | None
    outputs: dict
    entry: LedgerEntry
    replayed: bool = False


def execute(graph, plan, data, rng, entry: LedgerEntry, fresh: bool = True) -> Result:
    """Run a graph whose cost ``entry`` has already been charged; a charge recorded before this call
    (``fresh`` False: its charge id was known) runs nothing, so a retry never yields a second output."""
    if not fresh:
        return Result(None, False, None, {}, entry, replayed=True)
    output, halted_by, outputs = graph.execute(data, rng, plan.releases)
    return Result(output, halted_by is not None, halted_by, outputs, entry)
