"""The accountant: holds a budget, proves and charges each step *before* it runs, keeps the ledger.

Two composition modes:

- ``"basic"``: (Σε_i, Σδ_i) over all charges (standard adaptive composition).
- ``"pld"``: charges compose through dp-accounting privacy loss distributions (``accountant.pld``);
  the total reported is ε at the budget's δ, and never more than the basic total (both are valid
  upper bounds, so we keep the smaller).

A charge that would exceed the budget raises ``BudgetExceeded``: nothing is recorded and no data
is touched. Charges never depend on the data: a graph run is charged its planned cost before it
starts, whether it later halts or not.
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
from ..relations import Relation, check as check_relation
from . import pld as _pld
from .ledger import Ledger, LedgerEntry

COMPOSITIONS = ("basic", "pld")


@attrs.frozen
class Result:
    """Outcome of ``Accountant.run``: ``output`` (None when halted), which test halted, every
    released intermediate output by step name, and the ledger entry that paid for it."""

    output: Any
    halted: bool
    halted_by: str | None
    outputs: dict
    entry: LedgerEntry


class Accountant:
    """A privacy budget with a ledger. Thread-safe: concurrent charges never overspend.

    ``relation``: the neighbouring relation every charge is made under; if omitted, the first
    charge that names one fixes it, and later charges under another relation are refused.
    """

    def __init__(self, budget: _g.Guarantee, composition: str = "basic", relation: Relation | None = None):
        self.budget = _g.check("budget", budget)
        if composition not in COMPOSITIONS:
            raise ValueError(f"composition must be one of {COMPOSITIONS}, got {composition!r}")
        self.composition = composition
        self.relation = None if relation is None else check_relation("relation", relation)
        self.ledger = Ledger()
        self._lock = threading.RLock()
        self._epsilons: list[float] = []
        self._deltas: list[float] = []
        self._pld = _pld.identity() if composition == "pld" else None
        self._pld_epsilon = 0.0

    # -- totals -------------------------------------------------------------------------------
    @property
    def spent(self) -> _g.ApproxDP:
        """Total cost so far (basic: (Σε, Σδ); pld: ε at the budget's δ)."""
        with self._lock:
            if self.composition == "basic":
                return _g.ApproxDP(math.fsum(self._epsilons), math.fsum(self._deltas))
            if not self._epsilons:
                return _g.ApproxDP(0.0, 0.0)
            return _g.ApproxDP(self._pld_epsilon, self.budget.delta)

    @property
    def remaining(self) -> _g.ApproxDP:
        """Headroom. Basic: budget minus spent, coordinate-wise. PLD: ε headroom at the budget's
        δ (tight composition is not subtractive: whether a step fits is decided by composing it)."""
        spent = self.spent
        with self._lock:
            delta = self.budget.delta - spent.delta if self.composition == "basic" else self.budget.delta
            return _g.ApproxDP(max(self.budget.epsilon - spent.epsilon, 0.0), max(delta, 0.0))

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
        charge never depends on the data.
        """
        plan = self.plan(graph)
        data = graph.validate(data)
        rng = _random.generator(rng)
        entry = self._charge(name or plan.name, plan.guarantee, plan.event, "graph", {}, plan.rule, plan.steps,
                             graph.relation)
        output, halted_by, outputs = graph.execute(data, rng)
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

    def _charge(self, name, g, event, kind, params, rule, steps, relation) -> LedgerEntry:
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        with self._lock:
            relation = self._relation_for(relation)
            epsilon, candidate = self._total_with(g, event)
            if epsilon > self.budget.epsilon or (self.composition == "basic" and
                                                 math.fsum(self._deltas + [g.delta]) > self.budget.delta):
                raise BudgetExceeded(
                    f"charging {name!r} {g} would bring the total to ε={epsilon:.6g} (δ={self._delta_with(g):.3g}); "
                    f"budget {self.budget}, spent {self.spent}. Nothing was charged."
                )
            entry = LedgerEntry(name, kind, str(relation), g, rule, params, steps)
            self.ledger.append(entry)
            self._epsilons.append(g.epsilon)
            self._deltas.append(g.delta)
            if candidate is not None:
                self._pld, self._pld_epsilon = candidate, epsilon
            return entry

    def _delta_with(self, g) -> float:
        return math.fsum(self._deltas + [g.delta]) if self.composition == "basic" else self.budget.delta

    def _total_with(self, g, event):
        """ε of the total if ``g`` were added, and (pld mode) the composed PLD to keep."""
        basic_epsilon = math.fsum(self._epsilons + [g.epsilon])
        if self.composition == "basic":
            return basic_epsilon, None
        step = (_pld.from_event(event) if event is not None else None) or _pld.from_guarantee(g)
        candidate = self._pld.compose(step)
        epsilon = _pld.epsilon(candidate, self.budget.delta)
        if math.fsum(self._deltas + [g.delta]) <= self.budget.delta:
            epsilon = min(epsilon, basic_epsilon)  # basic composition is valid too; keep the tighter
        return epsilon, candidate

    # -- export -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"budget": _g.to_dict(self.budget), "composition": self.composition,
                "relation": str(self.relation), "spent": _g.to_dict(self.spent), "entries": self.ledger.to_dicts()}

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __repr__(self) -> str:
        return f"Accountant(budget={self.budget}, composition={self.composition!r}, spent={self.spent})"
