"""The accountant: holds a budget, proves and charges each step *before* it runs, keeps the ledger.

Two composition modes:

- ``"basic"``: (Σε_i, Σδ_i) over all charges (standard adaptive composition).
- ``"pld"``: charges compose through dp-accounting privacy loss distributions (``accountant.pld``);
  the total reported is ε at the budget's δ, and never more than the basic total (both are valid
  upper bounds, so we keep the smaller).

A charge that would exceed the budget raises ``BudgetExceeded``: nothing is recorded and no data
is touched. Charges never depend on the data: a graph run is charged its planned cost before it
starts, whether it later halts or not. ``Accountant.open(path, ...)`` keeps the ledger in an
SQLite file: the budget survives restarts and processes sharing the file never overspend.
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any

import attrs
import numpy as np

from .. import _random
from .. import guarantees as _g
from ..errors import BudgetExceeded, PrivacyError
from ..mechanisms.base import Mechanism
from ..relations import Relation, check as check_relation, from_name
from . import events as _events, pld as _pld
from .ledger import Ledger, LedgerEntry
from .storage import MemoryStore, SQLiteStore

COMPOSITIONS = ("basic", "pld")


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


class _Totals:
    """Running totals of the charges seen so far (from this process or, durable, any other)."""

    def __init__(self, composition: str, budget: _g.Guarantee):
        self.composition, self.budget = composition, budget
        self.epsilons: list[float] = []
        self.deltas: list[float] = []
        self.pld = _pld.identity() if composition == "pld" else None
        self.pld_epsilon = 0.0

    def with_step(self, g: _g.Guarantee, event) -> tuple[float, float, object]:
        """(ε, δ) of the total if ``g`` were added, and (PLD mode) the composed PLD to keep."""
        basic_epsilon = math.fsum(self.epsilons + [g.epsilon])
        basic_delta = math.fsum(self.deltas + [g.delta])
        if self.composition == "basic":
            return basic_epsilon, basic_delta, None
        step = (_pld.from_event(event) if event is not None else None) or _pld.from_guarantee(g)
        candidate = self.pld.compose(step)
        epsilon = _pld.epsilon(candidate, self.budget.delta)
        if basic_delta <= self.budget.delta:
            epsilon = min(epsilon, basic_epsilon)  # basic composition is valid too; keep the tighter
        return epsilon, self.budget.delta, candidate

    def add(self, entry: LedgerEntry, totals=None) -> None:
        epsilon, _, candidate = totals or self.with_step(entry.guarantee, _events.from_dict(entry.event))
        self.epsilons.append(entry.guarantee.epsilon)
        self.deltas.append(entry.guarantee.delta)
        if candidate is not None:
            self.pld, self.pld_epsilon = candidate, epsilon

    def spent(self) -> _g.ApproxDP:
        if self.composition == "basic":
            return _g.ApproxDP(math.fsum(self.epsilons), math.fsum(self.deltas))
        if not self.epsilons:
            return _g.ApproxDP(0.0, 0.0)
        return _g.ApproxDP(self.pld_epsilon, self.budget.delta)


class Accountant:
    """A privacy budget with a ledger. Thread-safe: concurrent charges never overspend.

    ``relation``: the neighbouring relation every charge is made under; if omitted, the first
    charge that names one fixes it, and later charges under another relation are refused.
    """

    def __init__(self, budget: _g.Guarantee, composition: str = "basic", relation: Relation | None = None):
        self._setup(budget, composition, relation, MemoryStore())

    @classmethod
    def open(cls, path, budget: _g.Guarantee, composition: str = "basic",
             relation: Relation | None = None) -> "Accountant":
        """A durable accountant whose ledger is the SQLite file ``path`` (created if missing).

        Reopening restores the spent budget and the ledger; a different budget or composition
        mode is refused. Every charge is committed to the file before its step runs.
        """
        self = cls.__new__(cls)
        budget = _g.check("budget", budget)
        self._check_mode(composition)
        store = SQLiteStore(path, budget, composition, None if relation is None else check_relation("relation", relation))
        self._setup(budget, composition, store.relation, store)
        with self._lock, store.transaction() as earlier:
            for entry in earlier:
                self._totals.add(entry)
        return self

    def _setup(self, budget, composition, relation, store) -> None:
        self.budget = _g.check("budget", budget)
        self.composition = self._check_mode(composition)
        self.relation = None if relation is None else check_relation("relation", relation)
        self._store = store
        self.ledger = Ledger(store)
        self._lock = threading.RLock()
        self._totals = _Totals(composition, self.budget)

    @staticmethod
    def _check_mode(composition: str) -> str:
        if composition not in COMPOSITIONS:
            raise ValueError(f"composition must be one of {COMPOSITIONS}, got {composition!r}")
        return composition

    # -- totals -------------------------------------------------------------------------------
    @property
    def spent(self) -> _g.ApproxDP:
        """Total cost so far (basic: (Σε, Σδ); pld: ε at the budget's δ). A durable accountant
        reports what it has seen; ``refresh()`` reads charges other processes made since."""
        with self._lock:
            return self._totals.spent()

    @property
    def remaining(self) -> _g.ApproxDP:
        """Headroom. Basic: budget minus spent, coordinate-wise. PLD: ε headroom at the budget's
        δ (tight composition is not subtractive: whether a step fits is decided by composing it)."""
        spent = self.spent
        delta = self.budget.delta - spent.delta if self.composition == "basic" else self.budget.delta
        return _g.ApproxDP(max(self.budget.epsilon - spent.epsilon, 0.0), max(delta, 0.0))

    def refresh(self) -> None:
        """Take in charges that other processes sharing the ledger file made since we last looked."""
        with self._lock, self._store.transaction() as others:
            self._absorb(others)

    # -- charging -----------------------------------------------------------------------------
    def spend(self, name: str, what: _g.Guarantee | Mechanism, relation: Relation | None = None) -> LedgerEntry:
        """Charge one step (a guarantee or a mechanism) and record it; raise before recording if
        it does not fit. Call this *before* running the step."""
        if isinstance(what, Mechanism):
            g, event, kind, params, rule = what.guarantee(), what.dp_event(), what.kind, what.params(), what.source
        else:
            g, event, kind, params, rule = _g.check("what", what), None, "declared", {}, "declared guarantee"
        return self._charge(name, g, event, kind, params, rule, (), relation)

    def plan(self, graph):
        """The graph's total guarantee and step-by-step breakdown, computed without data."""
        self._relation_for(graph.relation)
        return graph.plan()

    def run(self, graph, data, rng: np.random.Generator | None = None, name: str | None = None) -> Result:
        """Validate the input, plan, charge the full planned cost, then execute the graph.

        A halted run returns ``Result(output=None, halted=True, ...)`` and stays charged: the
        charge never depends on the data. Bad input is refused before the charge; an error raised
        while the graph touches the data is a bug and surfaces as a ``PrivacyError`` naming the
        step, after the charge.
        """
        plan = self.plan(graph)
        data = graph.validate(data)
        rng = _random.generator(rng)
        entry = self._charge(name or plan.name, plan.guarantee, plan.event, "graph", {}, plan.rule, plan.steps,
                             graph.relation)
        output, halted_by, outputs = graph.execute(data, rng, plan.releases)
        return Result(output, halted_by is not None, halted_by, outputs, entry)

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

    def _absorb(self, entries) -> None:
        for entry in entries:
            if self.relation is None:
                self.relation = from_name(entry.relation)
            self._totals.add(entry)

    def _charge(self, name, g, event, kind, params, rule, steps, relation) -> LedgerEntry:
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        with self._lock, self._store.transaction() as others:
            self._absorb(others)
            relation = self._relation_for(relation)
            totals = self._totals.with_step(g, event)
            epsilon, delta, _ = totals
            if epsilon > self.budget.epsilon or delta > self.budget.delta:
                raise BudgetExceeded(
                    f"charging {name!r} {g} would bring the total to ε={epsilon:.6g} (δ={delta:.3g}); "
                    f"budget {self.budget}, spent {self._totals.spent()}. Nothing was charged."
                )
            entry = LedgerEntry(name, kind, str(relation), g, rule, params, steps, _events.to_dict(event))
            self._store.set_relation(relation)
            self._store.append(entry)
            self._totals.add(entry, totals)
            return entry

    # -- export -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"budget": _g.to_dict(self.budget), "composition": self.composition,
                "relation": str(self.relation), "spent": _g.to_dict(self.spent), "entries": self.ledger.to_dicts()}

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def close(self) -> None:
        """Release the ledger file (durable accountants)."""
        close = getattr(self._store, "close", None)
        if close is not None:
            close()

    def __repr__(self) -> str:
        return f"Accountant(budget={self.budget}, composition={self.composition!r}, spent={self.spent})"
