"""What a ledger's entries add up to, checked as they are read: the session's relation, the filter's
running total (on a block ledger, each block's, ``accountant.blocks``; per analyst, ``GROUPS``),
and each charged schedule with how many of its prepaid steps have run.

The accountant keeps one ``Book`` and changes it only by taking in recorded entries: its own
(after the store committed them) and other processes' (read inside each charge's transaction).
A charge works on a copy and replaces the book only once the store has committed, so a refused
or failed charge leaves the book exactly as it was (docs/design.md, "The accountant and the ledger
schema").
"""

from __future__ import annotations

import copy

from ..errors import LedgerError, RelationError
from ..relations import Relation, from_name
from ..privacy import events as _events
from . import blocks as _blocks
from .cost import Cost
from .entries import LedgerEntry
from .schedule import check_prepaid, declared_steps


#: groups the book sums charges by beside the blocks' own totals (``Book.blocks``), each naming the
#: groups an entry counts in: its analyst (None when not recorded)
GROUPS = {"analyst": lambda entry: (entry.analyst,)}


class Book:
    """The session's relation, total and schedules, from the entries taken in so far. ``strict``
    refuses an entry that fails a check (``RelationError``, ``LedgerError``); otherwise (for
    ``Accountant.inspect``) it is taken in, priced at its own cost when it is a prepaid step no
    schedule covers, and ``doubts`` says why.

    ``blocks``: on a block ledger, each block's total (None on a ledger-wide budget); ``total`` is
    then their componentwise maximum, what the most-charged block's records have lost at most."""

    def __init__(self, rule, relation: Relation | None, where: str, strict: bool = True):
        self.filter, self.relation, self.where, self.strict = rule, relation, where, strict
        self.total = rule.zero()
        self.blocks: dict[str, tuple] | None = None
        self.schedules: dict[str, list] = {}  # name -> [its charge, its declared steps, prepaid steps recorded]
        self.doubts: list[str] = []
        self.ids: dict[str, LedgerEntry] = {}  # client-chosen charge id -> its recorded entry
        self.totals: dict[str, dict] = {by: {} for by in GROUPS}  # "analyst" -> {alice: her total}

    def copy(self) -> "Book":
        other = copy.copy(self)
        other.schedules = {name: list(known) for name, known in self.schedules.items()}
        other.doubts = list(self.doubts)
        other.ids = dict(self.ids)
        other.blocks = None if self.blocks is None else dict(self.blocks)
        other.totals = {by: dict(groups) for by, groups in self.totals.items()}
        return other

    def know(self, blocks: tuple[str, ...] | None) -> None:
        """Take in the ledger's blocks (a block added since starts with a fresh budget: nothing spent)."""
        if blocks is not None:
            self.blocks = {**dict.fromkeys(blocks, self.filter.zero()), **(self.blocks or {})}

    def block(self, name: str):
        """The total of block ``name`` (a ``ValueError`` naming the fix for a block the ledger lacks)."""
        return self.blocks[_blocks.charged(self.where, self.blocks, (name,), then="")[0]]

    def paying(self, blocks: tuple[str, ...] | None) -> dict:
        """The totals a charge pays into: each of its ``blocks``' (checked names of a block ledger),
        or ``{None: the ledger's total}``."""
        return {None: self.total} if blocks is None else {name: self.blocks[name] for name in blocks}

    def adopt(self, relation: Relation | None, what: str) -> None:
        """Take the relation of a recorded charge (or of the ledger file) as the session's."""
        if relation is None:
            return
        if self.relation is None:
            self.relation = relation
        elif relation != self.relation:
            raise RelationError(f"{what} is under {relation}, but this ledger charges under {self.relation}: "
                                "guarantees under different relations do not compose. Nothing was charged; "
                                "Accountant.inspect reads the file.")

    def prepaid_rule(self, schedule: str, name: str, cost: Cost) -> str:
        """The rule for the next prepaid step of ``schedule`` (a ``PrivacyError`` unless ``name`` and
        ``cost`` are its next declared step, dominated by it; a ``LedgerError`` for no schedule)."""
        known = self.schedules.get(schedule)
        if known is None:
            raise LedgerError(f"no schedule named {schedule!r} was charged in {self.where}. Nothing was recorded.")
        return check_prepaid(schedule, known[1], known[2], name, cost)

    def take(self, entries) -> list:
        """Take in recorded entries in order (module doc); the price the filter charged each."""
        return [self._take(entry) for entry in entries]

    def _take(self, entry: LedgerEntry):
        try:
            if self.relation is None or self.relation.name != entry.relation:  # names compare any relation
                self.adopt(from_name(entry.relation), f"{self.where}: the charge {entry.name!r}")
        except RelationError:
            if self.strict:
                raise
            self._doubt(f"MIXED RELATIONS: {self.where} mixes {self.relation} and {entry.relation} (charge "
                        f"{entry.name!r}); its totals are a guarantee under neither")
        event = _events.from_dict(entry.event)
        why = None if entry.prepaid is None else self._covered(entry, event)
        if why is not None and self.strict:
            raise LedgerError(f"{self.where}: {why}; refused for charging (Accountant.inspect reads it)")
        if why is not None:
            self._doubt(f"{why}: priced at its own cost")
        covered = entry.prepaid is not None and why is None
        price = self.filter.zero() if covered else self.filter.price(entry.guarantee, event)
        if entry.prepaid is None and entry.mechanism == "schedule":
            if entry.name in self.schedules and self.strict:
                raise LedgerError(f"{self.where} charges two schedules named {entry.name!r}")
            self.schedules[entry.name] = [entry, declared_steps(entry), 0]
        self._pay(entry, price)
        for by, groups in GROUPS.items():
            for group in groups(entry):
                self.totals[by][group] = add(self.totals[by].get(group, self.filter.zero()), price)
        if entry.charge_id is not None:
            self.ids.setdefault(entry.charge_id, entry)
        return price

    def _pay(self, entry: LedgerEntry, price) -> None:
        """Add ``price`` to the totals ``entry`` paid from: the ledger's, or its blocks' (and their maximum)."""
        known = self.blocks
        if (known is None) != (entry.blocks is None) or any(name not in known for name in entry.blocks or ()):
            why = (f"the charge {entry.name!r} names the blocks {list(entry.blocks or [])}, but the ledger holds "
                   f"{'none' if known is None else ', '.join(known)}")
            if self.strict:
                raise LedgerError(f"{self.where}: {why}; refused for charging (Accountant.inspect reads it)")
            against = "the ledger" if known is None else "the blocks it names" if entry.blocks else "every block"
            self._doubt(f"{why}: counted against {against}")
        if known is None:
            self.total = add(self.total, price)
            return
        for name in entry.blocks or tuple(known):
            known[name] = add(known.get(name, self.filter.zero()), price)
            self.total = tuple(map(max, self.total, known[name]))

    def _covered(self, entry: LedgerEntry, event) -> str | None:
        """Count a prepaid step against its schedule's next declared step; why it is not covered, or None."""
        known = self.schedules.get(entry.prepaid)
        if known is None:
            return (f"the step {entry.name!r} is recorded as prepaid by {entry.prepaid!r}, but no schedule of that "
                    "name was charged before it")
        try:
            check_prepaid(entry.prepaid, known[1], known[2], entry.name, Cost(entry.guarantee, event, entry.mechanism))
        except Exception as refusal:  # noqa: BLE001 - why the declaration does not cover this step
            declared = sum(step.times for step in known[1])
            return f"schedule {entry.prepaid!r} declared {declared} steps, and does not cover {entry.name!r} ({refusal})"
        known[2] += 1
        return None

    def _doubt(self, line: str) -> None:
        if line not in self.doubts:
            self.doubts.append(line)


def add(total, price) -> tuple:
    """A running total with one more price, componentwise (exact ``Fraction``s)."""
    return tuple(t + p for t, p in zip(total, price))
