"""The ledger: an append-only record of every charge, renderable as a table and as JSON.

One entry per charge. A charge for a mechanism graph carries the graph's plan, step by step, in
``steps``; the entry's own guarantee is what the graph costs as a whole (its steps do not add up
when a random partition or a tight composition made the whole cheaper than the sum).
"""

from __future__ import annotations

import functools
import json
from typing import Iterator

from .._render import html_table, render
from ..privacy.steps import PlanStep, params_text
from .entries import LedgerEntry
from .storage import MemoryStore


class Ledger:
    """Read-only view of the charges in a store (in memory or SQLite): iterate, index, ``len``.

    Only the accountant appends, inside the same transaction that checked the budget.
    """

    def __init__(self, store, summary=None):
        self._store = store
        self._summary = summary  # () -> lines stating the filter, spent and remaining

    @classmethod
    def from_dicts(cls, entries: list[dict]) -> "Ledger":
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
        from rich.text import Text

        caption = None if self._summary is None else "\n".join(self._summary())
        table = _fitting_table()(title=escape(title if caption is None else f"{title}\n{caption}"), show_lines=False)
        entries = self.entries
        for column in ("#", "step", "mechanism", "guarantee", "charged", "rule", "parameters"):
            table.add_column(column, overflow="fold", min_width=_step_width(entries) if column == "step" else None)
        for number, entry in enumerate(entries, start=1):
            charged = f"prepaid ({entry.prepaid})" if entry.prepaid else entry.charged
            table.add_row(str(number), _what(entry.name, 0, _stamp(entry), style="bold"),
                          *map(Text, (entry.mechanism, str(entry.guarantee), charged, entry.rule,
                                      params_text(entry.params))))
            for depth, name, step in _tree(entry.steps):
                cells = () if step is None else map(Text, (step.mechanism, str(step.guarantee), "", step.rule,
                                                           params_text(step.params)))
                table.add_row("", _what(name, depth), *cells, style="dim")
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
    """The ledger laid out for a narrow console (an 80-column terminal): four columns, each row's
    time, input, rule and parameters beneath its name and each charge beneath its guarantee, so
    that names, mechanisms and guarantees stay whole."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, show_lines=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("step: rule, parameters", overflow="fold", min_width=_step_width(entries))
    table.add_column("mechanism", overflow="fold")
    table.add_column("guarantee\ncharged", overflow="fold")
    for number, entry in enumerate(entries, start=1):
        charged = f"prepaid ({entry.prepaid})" if entry.prepaid else entry.charged
        table.add_row(str(number), _what(entry.name, 0, _stamp(entry), entry.rule, params_text(entry.params),
                                         style="bold"),
                      Text(entry.mechanism), Text(f"{entry.guarantee}\n{charged}"))
        for depth, name, step in _tree(entry.steps):
            if step is None:
                table.add_row("", _what(name, depth), style="dim")
            else:
                table.add_row("", _what(name, depth, step.rule, params_text(step.params)), Text(step.mechanism),
                              Text(str(step.guarantee)), style="dim")
    return table


def _what(name: str, depth: int, *details: str, style: str = ""):
    """A step's name at its depth in the plan's tree, with detail lines beneath it."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    lines = [Text("  " * depth + name, style=style)]
    lines += [Padding(Text(detail), (0, 0, 0, 2 * depth + 2)) for detail in details if detail]
    return Group(*lines)


def _stamp(entry) -> str:
    """When it was charged (UTC, to the second), the input's label if the run gave one, and the blocks
    it paid from on a block ledger."""
    blocks = None if entry.blocks is None else f"blocks {', '.join(entry.blocks)}"
    return " · ".join(part for part in (entry.time[:19].replace("T", " ") + " UTC", entry.label, blocks) if part)


def _step_width(entries) -> int:
    """Wide enough for every step name at its depth (names are never folded mid-word), at most 40."""
    widths = [len(entry.name) for entry in entries]
    widths += [2 * depth + len(name) for entry in entries for depth, name, _ in _tree(entry.steps)]
    return min(max(widths, default=4), 40)


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
