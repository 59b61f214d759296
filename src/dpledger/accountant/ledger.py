"""The ledger: an append-only record of every charge, renderable as a table and as JSON.

One entry per charge. A charge for a mechanism graph carries the graph's plan, step by step, in
``steps``; the entry's own guarantee is what the graph costs as a whole (its steps do not add up
when a random partition or a tight composition made the whole cheaper than the sum).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from typing import Any, Iterator

import attrs
import numpy as np

from .. import guarantees as _g
from .._render import render


def _plain(value: Any) -> Any:
    """JSON-friendly copy of ledger parameters (numpy scalars, tuples, nested dicts)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


@attrs.frozen
class PlanStep:
    """One line of a plan: where in the graph, which mechanism or rule, at what cost."""

    path: str
    mechanism: str
    guarantee: _g.Guarantee
    rule: str
    params: dict = attrs.field(factory=dict, converter=_plain)

    def to_dict(self) -> dict:
        return {"path": self.path, "mechanism": self.mechanism, "guarantee": _g.to_dict(self.guarantee),
                "rule": self.rule, "params": self.params}

    @classmethod
    def from_dict(cls, data: dict) -> "PlanStep":
        return cls(data["path"], data["mechanism"], _g.from_dict(data["guarantee"]), data["rule"], data["params"])


@attrs.frozen
class LedgerEntry:
    """A charge: recorded *before* the step ran, so a crash after it never loses the charge."""

    name: str
    mechanism: str
    relation: str
    guarantee: _g.Guarantee
    rule: str
    params: dict = attrs.field(factory=dict, converter=_plain)
    steps: tuple[PlanStep, ...] = attrs.field(default=(), converter=tuple)
    event: dict | None = None  # the dp-accounting event in JSON form (accountant.events), for the filter
    time: str = attrs.field(factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds"))
    charged: str = ""  # what the session's filter charged, in its currency
    prepaid: str | None = None  # the declared schedule that paid for this step in advance

    def to_dict(self) -> dict:
        return {"name": self.name, "mechanism": self.mechanism, "relation": self.relation,
                "guarantee": _g.to_dict(self.guarantee), "rule": self.rule, "params": self.params,
                "steps": [s.to_dict() for s in self.steps], "event": self.event, "time": self.time,
                "charged": self.charged, "prepaid": self.prepaid}

    @classmethod
    def from_dict(cls, data: dict) -> "LedgerEntry":
        return cls(data["name"], data["mechanism"], data["relation"], _g.from_dict(data["guarantee"]),
                   data["rule"], data["params"], tuple(PlanStep.from_dict(s) for s in data["steps"]),
                   data.get("event"), data["time"], data.get("charged", ""), data.get("prepaid"))


class Ledger:
    """Read-only view of the charges in a store (in memory or SQLite): iterate, index, ``len``.

    Only the accountant appends, inside the same transaction that checked the budget.
    """

    def __init__(self, store, summary=None):
        self._store = store
        self._summary = summary  # () -> lines stating the filter, spent and remaining

    @classmethod
    def from_dicts(cls, entries: list[dict]) -> "Ledger":
        from .storage import MemoryStore

        store = MemoryStore()
        for data in entries:
            store.append(LedgerEntry.from_dict(data))
        return cls(store)

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        return self._store.entries()

    def __iter__(self) -> Iterator[LedgerEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index):
        return self.entries[index]

    def to_dicts(self) -> list[dict]:
        return [entry.to_dict() for entry in self.entries]

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dicts(), **kwargs)

    def table(self, title: str = "ledger"):
        """A ``rich`` table: one row per charge, its plan's steps indented beneath it."""
        from rich.table import Table

        caption = None if self._summary is None else "\n".join(self._summary())
        table = Table(title=title if caption is None else f"{title}\n{caption}", show_lines=False)
        for column in ("#", "step", "mechanism", "guarantee", "charged", "rule", "parameters"):
            table.add_column(column, overflow="fold")
        for number, entry in enumerate(self.entries, start=1):
            charged = f"prepaid ({entry.prepaid})" if entry.prepaid else entry.charged
            table.add_row(str(number), entry.name, entry.mechanism, str(entry.guarantee), charged, entry.rule,
                          params_text(entry.params))
            for step in entry.steps:
                table.add_row("", f"  {step.path}", step.mechanism, str(step.guarantee), "", step.rule,
                              params_text(step.params), style="dim")
        return table

    def render(self, width: int = 140, html: bool = False) -> str:
        """The table as plain text (logs, ``str``) or as HTML (Jupyter)."""
        return render(self.table(), width, html)

    def _repr_html_(self) -> str:
        return self.render(html=True)

    def __str__(self) -> str:
        return self.render()


def params_text(params: dict) -> str:
    """Parameters as "key=value, ..." (floats to 4 significant digits), for tables."""
    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{k}={fmt(v)}" for k, v in params.items())

