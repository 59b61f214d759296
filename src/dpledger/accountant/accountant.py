"""The accountant: holds a budget, proves and charges each step *before* it runs, keeps the ledger.

What is fixed in advance composes tightly: the steps of one graph's plan (``Plan.guarantee``), a
``repeat``, a schedule declared with ``declare`` (charged in full when declared, then enforced
step by step). What the user chooses after seeing earlier outputs (each ``spend``, ``run`` and
``declare``) is charged through the session's *filter*, fixed when the accountant is created:
``"basic"``, ``"gdp"``, ``"zcdp"`` or ``"rdp"`` (``accountant.filters``). The session's guarantee is its budget
under that filter, whenever it stops; ``spent`` and ``remaining`` are the filter's bookkeeping.

A charge that would exceed the budget raises ``BudgetExceeded``: nothing is recorded and no data
is touched. Charges never depend on the data: a graph run is charged its planned cost before it
starts, whether it later halts or not. ``Accountant.open(path, ...)`` keeps the ledger in an
SQLite file: the budget survives restarts and processes sharing the file never overspend.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import attrs
import numpy as np

from .. import _random
from .. import guarantees as _g
from ..errors import BudgetExceeded, PrivacyError
from ..mechanisms.base import Mechanism
from ..relations import Relation, check as check_relation, from_name
from . import events as _events, filters as _filters
from .ledger import Ledger, LedgerEntry
from .cost import cost_of
from .schedule import Schedule
from . import storage
from .storage import MemoryStore, SQLiteStore


@attrs.frozen
class Result:
    """Outcome of ``Accountant.run``: ``output`` (None when halted), which step halted, every
    value the plan releases (``outputs``, by step name, those released before a halt included)
    and the ledger entry that paid for it. Nothing else about the run is exposed."""

    output: Any
    halted: bool
    halted_by: str | None
    outputs: dict
    entry: LedgerEntry


class Accountant:
    """A privacy budget with a ledger and a filter. Thread-safe: concurrent charges never overspend.

    ``filter``: the rule for the session's adaptively chosen steps, fixed now, before any data:
    ``"basic"`` (any steps), ``"gdp"`` (continuous Gaussian steps), ``"zcdp"`` (zCDP steps: the
    float-safe Gaussian) or ``"rdp"`` (steps with a Rényi curve, subsampled ones included;
    ``orders`` fixes its orders), or a ``filters.Filter``. ``relation``: the neighbouring
    relation every charge is made under; if omitted, the first charge that names one fixes it, and
    later charges under another relation are refused.
    """

    def __init__(self, budget: _g.Guarantee, filter="basic", relation: Relation | None = None, *,  # noqa: A002
                 orders=None):
        budget = _g.check("budget", budget)
        self._setup(budget, _filters.make(filter, budget, orders), relation, MemoryStore())

    @classmethod
    def open(cls, path, budget: _g.Guarantee, filter="basic", relation: Relation | None = None, *,  # noqa: A002
             orders=None) -> "Accountant":
        """A durable accountant whose ledger is the SQLite file ``path`` (created if missing).

        Reopening restores the spent budget and the ledger; a different budget or filter is
        refused. Every charge is committed to the file before its step runs.
        """
        self = cls.__new__(cls)
        budget = _g.check("budget", budget)
        rule = _filters.make(filter, budget, orders)
        store = SQLiteStore(path, budget, rule.describe(), None if relation is None else check_relation("relation", relation))
        self._setup(budget, rule, store.relation, store)
        with self._lock, store.transaction() as earlier:
            self._absorb(earlier)
        return self

    def _setup(self, budget, rule, relation, store) -> None:
        self.budget = budget
        self.filter = rule
        self.relation = None if relation is None else check_relation("relation", relation)
        self._store = store
        self.ledger = Ledger(store, summary=self.summary)
        self._lock = threading.RLock()
        self._total = rule.zero()

    @classmethod
    def inspect(cls, path) -> "Accountant":
        """A read-only, in-memory copy of the ledger file ``path``: its entries, filter, spent and
        remaining (for ``dpledger ledger show``). Files written before filters existed (schema 1)
        are read under the basic filter, valid for any steps."""
        meta, entries = storage.read(path)
        budget = _g.from_dict(json.loads(meta["budget"]))
        spec = json.loads(meta["filter"]) if "filter" in meta else {"filter": "basic"}
        relation = from_name(meta["relation"]) if "relation" in meta else None
        self = cls(budget, spec["filter"], relation, orders=spec.get("orders"))
        for entry in entries:
            self._store.append(entry)
        self._absorb(entries)
        return self

    def summary(self) -> list[str]:
        """The budget, its filter, spent and remaining: the lines above a ledger's table."""
        return [f"budget {self.budget} under the {self.filter.name!r} filter ({self.filter.source})",
                f"spent: {self.spent}", f"remaining: {self.remaining}"]

    # -- the budget ---------------------------------------------------------------------------
    @property
    def guarantee(self) -> _g.Guarantee:
        """What the whole session promises, however and whenever it stops: its budget, by its filter."""
        return self.budget

    @property
    def spent(self) -> _filters.Usage:
        """The filter's bookkeeping of what was charged (its own currency, and ε at the budget's δ
        for reading). A durable accountant reports what it has seen; ``refresh()`` reads charges
        other processes made since."""
        with self._lock:
            return self.filter.usage(self._total)

    @property
    def remaining(self) -> _filters.Usage:
        """The filter's headroom, in its own currency. Whether a step fits is decided by pricing it."""
        with self._lock:
            return self.filter.remaining(self._total)

    def refresh(self) -> None:
        """Take in charges that other processes sharing the ledger file made since we last looked."""
        with self._lock, self._store.transaction() as others:
            self._absorb(others)

    # -- charging -----------------------------------------------------------------------------
    def spend(self, name: str, what: _g.Guarantee | Mechanism, relation: Relation | None = None) -> LedgerEntry:
        """Charge one adaptively chosen step (a guarantee or a mechanism) through the filter and
        record it; raise before recording if it does not fit. Call this *before* running the step."""
        return self._charge(name, cost_of(what), relation)

    def plan(self, graph):
        """The graph's total guarantee and step-by-step breakdown, computed without data."""
        self._relation_for(graph.relation)
        return graph.plan()

    def run(self, graph, data, rng: np.random.Generator | None = None, name: str | None = None) -> Result:
        """Validate the input, plan, charge the full planned cost through the filter, then execute
        the graph.

        A halted run returns ``Result(output=None, halted=True, ...)`` and stays charged: the
        charge never depends on the data. Bad input is refused before the charge; an error raised
        while the graph touches the data is a bug and surfaces as a ``PrivacyError`` naming the
        step, after the charge.
        """
        plan = self.plan(graph)
        data = graph.validate(data)
        rng = _random.generator(rng)
        entry = self._charge(name or plan.name, cost_of(plan), graph.relation)
        return execute(graph, plan, data, rng, entry)

    def declare(self, name: str, steps, relation: Relation | None = None) -> Schedule:
        """Declare a schedule fixed in advance and charge it in full now; its steps then run through
        the returned ``Schedule``, each refused unless dominated by its declared step.

        ``steps``: ``(step name, mechanism | guarantee | graph[, times])`` in the order they will
        run. The steps compose tightly (``accountant.tight``: they are fixed before the data), and
        the whole enters the filter as one step.
        """
        schedule = Schedule.declared(self, name, steps)
        entry = self._charge(name, schedule.cost, relation)
        return schedule.started(entry)

    def _relation_for(self, relation: Relation | None) -> Relation:
        with self._lock:
            if relation is None:
                relation = self.relation
            elif self.relation is None:
                self.relation = check_relation("relation", relation)
            elif relation != self.relation:
                raise PrivacyError(
                    f"this accountant charges under {self.relation}; a step under {relation} cannot be "
                    "composed with it (use a separate accountant, or restate the step under the same relation)"
                )
            if relation is None:
                raise PrivacyError(
                    "name the neighbouring relation: Accountant(budget, relation=ReplaceOne()) or "
                    "spend(..., relation=...)"
                )
            return relation

    def _price(self, entry: LedgerEntry):
        if entry.prepaid is not None:
            return self.filter.zero()
        return self.filter.price(entry.guarantee, _events.from_dict(entry.event))

    def _absorb(self, entries) -> None:
        for entry in entries:
            if self.relation is None:
                self.relation = from_name(entry.relation)
            self._total = _add(self._total, self._price(entry))

    def _charge(self, name, cost, relation, prepaid: str | None = None) -> LedgerEntry:
        """Price ``cost`` through the filter (nothing for a step of a schedule paid in advance) and
        append its entry, atomically; ``BudgetExceeded`` with nothing recorded if it does not fit."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        with self._lock, self._store.transaction() as others:
            self._absorb(others)
            relation = self._relation_for(relation)
            price = self.filter.zero() if prepaid is not None else self.filter.price(cost.guarantee, cost.event)
            total = _add(self._total, price)
            if not self.filter.fits(total):
                raise BudgetExceeded(
                    f"charging {name!r} ({cost.guarantee}; {self.filter.price_text(price)}) would exceed the "
                    f"budget {self.budget} under the {self.filter.name!r} filter: spent {self.filter.usage(self._total)}. "
                    "Nothing was charged."
                )
            entry = LedgerEntry(name, cost.kind, str(relation), cost.guarantee, cost.rule, cost.params, cost.steps,
                                _events.to_dict(cost.event), charged=self.filter.price_text(price), prepaid=prepaid)
            self._store.set_relation(relation)
            self._store.append(entry)
            self._total = total
            return entry

    # -- export -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"budget": _g.to_dict(self.budget), **self.filter.describe(), "relation": str(self.relation),
                "spent": self.spent.to_dict(), "remaining": self.remaining.to_dict(),
                "entries": self.ledger.to_dicts()}

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def close(self) -> None:
        """Release the ledger file (durable accountants)."""
        close = getattr(self._store, "close", None)
        if close is not None:
            close()

    def __repr__(self) -> str:
        return f"Accountant(budget={self.budget}, filter={self.filter.name!r}, spent: {self.spent})"


def _add(total, price):
    return tuple(t + p for t, p in zip(total, price))


def execute(graph, plan, data, rng, entry: LedgerEntry) -> Result:
    """Run a graph whose cost ``entry`` has already been charged."""
    output, halted_by, outputs = graph.execute(data, rng, plan.releases)
    return Result(output, halted_by is not None, halted_by, outputs, entry)
