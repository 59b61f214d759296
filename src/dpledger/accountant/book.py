"""What a ledger's entries add up to, checked as they are read: the session's relation, the filter's
running total (also per analyst, per block: ``GROUPS``), and each charged schedule with how many of
its prepaid steps have run.

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
from .cost import Cost
from .entries import LedgerEntry
from .schedule import check_prepaid, declared_steps


#: what charges can be summed by (``dpledger ledger show --by``): each names the groups an entry
#: counts in — its analyst (None when not recorded), or each block it charged (none if it names none)
GROUPS = {"analyst": lambda entry: (entry.analyst,), "block": lambda entry: getattr(entry, "blocks", None) or ()}


class Book:
    """The session's relation, total and schedules, from the entries taken in so far. ``strict``
    refuses an entry that fails a check (``RelationError``, ``LedgerError``); otherwise (for
    ``Accountant.inspect``) it is taken in, priced at its own cost when it is a prepaid step no
    schedule covers, and ``doubts`` says why."""

    def __init__(self, rule, relation: Relation | None, where: str, strict: bool = True):
        self.filter, self.relation, self.where, self.strict = rule, relation, where, strict
        self.total = rule.zero()
        self.schedules: dict[str, list] = {}  # name -> [its charge, its declared steps, prepaid steps recorded]
        self.doubts: list[str] = []
        self.ids: dict[str, LedgerEntry] = {}  # client-chosen charge id -> its recorded entry
        self.totals: dict[str, dict] = {by: {} for by in GROUPS}  # "analyst" -> {alice: her total}

    def copy(self) -> "Book":
        other = copy.copy(self)
        other.schedules = {name: list(known) for name, known in self.schedules.items()}
        other.doubts = list(self.doubts)
        other.ids = dict(self.ids)
        other.totals = {by: dict(groups) for by, groups in self.totals.items()}
        return other

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

    def take(self, entries) -> None:
        """Take in recorded entries in order (module doc)."""
        for entry in entries:
            self._take(entry)

    def _take(self, entry: LedgerEntry) -> None:
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
        self.total = add(self.total, price)
        for by, groups in GROUPS.items():
            for group in groups(entry):
                self.totals[by][group] = add(self.totals[by].get(group, self.filter.zero()), price)
        if entry.charge_id is not None:
            self.ids.setdefault(entry.charge_id, entry)

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


def add(total, price):
    """A running total with one more price, componentwise (exact ``Fraction``s)."""
    return tuple(t + p for t, p in zip(total, price))
