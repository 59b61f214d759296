"""The ledger: an append-only record of every charge, renderable as a table and as JSON.

One entry per charge. A charge for a mechanism graph carries the graph's plan, step by step, in
``steps``; the entry's own guarantee is what the graph costs as a whole (its steps do not add up
when a random partition or a tight composition made the whole cheaper than the sum).
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
from typing import Any, Iterator

import attrs
import numpy as np

from .. import guarantees as _g
from .._render import html_table, render


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
    """One line of a plan: where in the graph, which mechanism or rule, at what cost. ``event`` (the
    step's dp-accounting event in JSON form) is kept for a declared schedule's steps, which its
    prepaid steps are checked against whenever the ledger is read."""

    path: str
    mechanism: str
    guarantee: _g.Guarantee
    rule: str
    params: dict = attrs.field(factory=dict, converter=_plain)
    event: dict | None = None

    def to_dict(self) -> dict:
        out = {"path": self.path, "mechanism": self.mechanism, "guarantee": _g.to_dict(self.guarantee),
               "rule": self.rule, "params": self.params}
        return out if self.event is None else {**out, "event": self.event}

    @classmethod
    def from_dict(cls, data: dict) -> "PlanStep":
        return cls(data["path"], data["mechanism"], _g.from_dict(data["guarantee"]), data["rule"], data["params"],
                   data.get("event"))


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
        """A ``rich`` table: one row per charge, its plan's steps indented beneath it, a column per
        field. Printed narrower than 140 columns (an 80-column terminal) it shows ``narrow_table``'s
        layout instead, so that no name, mechanism or guarantee is folded into pieces."""
        from rich.markup import escape

        caption = None if self._summary is None else "\n".join(self._summary())
        table = _fitting_table()(title=escape(title if caption is None else f"{title}\n{caption}"), show_lines=False)
        for column in ("#", "step", "mechanism", "guarantee", "charged", "rule", "parameters"):
            table.add_column(column, overflow="fold")
        entries = self.entries
        for number, entry in enumerate(entries, start=1):
            charged = f"prepaid ({entry.prepaid})" if entry.prepaid else entry.charged
            table.add_row(str(number), *map(escape, (entry.name, entry.mechanism, str(entry.guarantee), charged,
                                                     entry.rule, params_text(entry.params))))
            for step in entry.steps:
                table.add_row("", *map(escape, (f"  {step.path}", step.mechanism, str(step.guarantee), "", step.rule,
                                                params_text(step.params))), style="dim")
        table.narrow = narrow_table(entries, table.title)
        return table

    def render(self, width: int = 140, html: bool = False) -> str:
        """The table as plain text (logs, ``str``) or as an HTML fragment (Jupyter: no page of its
        own, no global style); an accountant's ledger states its budget, spent and remaining."""
        return html_table(self.table()) if html else render(self.table(), width)

    def _repr_html_(self) -> str:
        return self.render(html=True)

    def __str__(self) -> str:
        return self.render()


#: the narrowest console a ledger table gets a column per field on (``Ledger.table``); narrower, its
#: seven columns would fold names and guarantees into pieces, so it is laid out as ``narrow_table``
WIDE = 140


@functools.cache
def _fitting_table():
    """A rich ``Table`` that, printed narrower than ``WIDE`` columns, shows its ``narrow`` table
    instead; still a ``Table`` (its columns and rows: the full layout, for ``html_table``). Defined
    on first use, as every rich import here is."""
    from rich.measure import Measurement
    from rich.table import Table

    class FittingTable(Table):
        narrow = None

        def _fits(self, options) -> bool:
            return self.narrow is None or options.max_width >= WIDE

        def __rich_console__(self, console, options):
            if self._fits(options):
                yield from super().__rich_console__(console, options)
            else:
                yield self.narrow

        def __rich_measure__(self, console, options):
            if self._fits(options):
                return super().__rich_measure__(console, options)
            return Measurement.get(console, options, self.narrow)

    return FittingTable


def narrow_table(entries, title: str | None = None):
    """The ledger laid out for a narrow console (an 80-column terminal): four columns, a plan's
    steps as the tree of their paths, each row's rule and parameters beneath its name and each
    charge beneath its guarantee, so that names, mechanisms and guarantees stay whole."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    def what(name: str, depth: int, *details: str, style: str = "") -> Group:
        lines = [Text("  " * depth + name, style=style)]
        lines += [Padding(Text(detail), (0, 0, 0, 2 * depth + 2)) for detail in details if detail]
        return Group(*lines)

    table = Table(title=title, show_lines=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("step: rule, parameters", overflow="fold")
    table.add_column("mechanism", overflow="fold")
    table.add_column("guarantee\ncharged", overflow="fold")
    for number, entry in enumerate(entries, start=1):
        charged = f"prepaid ({entry.prepaid})" if entry.prepaid else entry.charged
        table.add_row(str(number), what(entry.name, 0, entry.rule, params_text(entry.params), style="bold"),
                      Text(entry.mechanism), Text(f"{entry.guarantee}\n{charged}"))
        for depth, name, step in _tree(entry.steps):
            if step is None:
                table.add_row("", what(name, depth), style="dim")
            else:
                table.add_row("", what(name, depth, step.rule, params_text(step.params)), Text(step.mechanism),
                              Text(str(step.guarantee)), style="dim")
    return table


def _tree(steps) -> list[tuple[int, str, PlanStep | None]]:
    """The steps' paths as a tree, depth first, children in order of first appearance, each node
    after its parent: (depth, name, step); step None for a node that is only a prefix of paths."""
    root: dict = {}
    for step in steps:
        node = root
        for part in step.path.split("/"):
            node = node.setdefault(part, {})
        node.setdefault(None, []).append(step)
    rows = []

    def walk(node: dict, depth: int) -> None:
        for name, child in node.items():
            if name is not None:
                rows.extend((depth, name, step) for step in child.get(None, [None]))
                walk(child, depth + 1)

    walk(root, 1)
    return rows


def params_text(params: dict) -> str:
    """Parameters as "key=value, ..." (floats to 4 significant digits), for tables."""
    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{k}={fmt(v)}" for k, v in params.items())

