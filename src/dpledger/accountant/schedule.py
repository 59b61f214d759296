"""Schedules declared in advance (``Accountant.declare``).

A declared schedule is a list of steps fixed before any data is seen, so it composes tightly
(``accountant.tight``) and enters the session's filter once, in full, when declared. Its steps
then run one by one through the ``Schedule``, in the declared order; each must be *dominated* by
its declared step (the same mechanism with no less noise, no larger sampling rate or sensitivity,
or a guarantee no weaker than a declared (ε, δ)). Steps chosen adaptively but each dominated by a
fixed declared step compose to no more than the declared steps do (Dong, Roth & Su 2022, Theorem
3.2, for the tradeoff functions the declared events define), so the charge covers them; other
steps of the session may interleave (concurrent composition under a filter: Haney et al. 2023).
"""

from __future__ import annotations

from typing import Any

import attrs
import dp_accounting

from .. import _random, _validate
from .. import guarantees as _g
from ..errors import PrivacyError, RelationError
from . import events as _events, rules as _rules, tight as _tight
from .cost import Cost, cost_of
from .ledger import LedgerEntry, PlanStep


def self_composed(cost: Cost, times: int) -> tuple[_g.Guarantee, Any]:
    """``times`` copies of one step fixed in advance: (the basic sum, the self-composed event)."""
    event = cost.event if times == 1 else dp_accounting.SelfComposedDpEvent(cost.event, times)
    return _rules.compose_repeated(cost.guarantee, times), event


def dominated(actual, declared) -> str | None:
    """Why the event ``actual`` is not dominated by ``declared``, or ``None`` when it is."""
    if type(actual) is not type(declared):
        return f"it is a {type(actual).__name__}, the declared step a {type(declared).__name__}"
    if isinstance(actual, dp_accounting.NoOpDpEvent):
        return None
    if isinstance(actual, (dp_accounting.GaussianDpEvent, dp_accounting.LaplaceDpEvent)):
        ok = actual.noise_multiplier >= declared.noise_multiplier
        return None if ok else (f"its noise multiplier {actual.noise_multiplier:.6g} (noise / sensitivity) is "
                                f"below the declared {declared.noise_multiplier:.6g}")
    if isinstance(actual, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        ok = actual.sensitivity == declared.sensitivity and actual.noise_parameter <= declared.noise_parameter
        return None if ok else "its discrete Laplace noise or sensitivity differs from the declared one's"
    if isinstance(actual, dp_accounting.ZCDpEvent):
        ok = actual.rho <= declared.rho and actual.xi <= declared.xi
        return None if ok else f"its zCDP ρ = {actual.rho:.6g} exceeds the declared {declared.rho:.6g}"
    if isinstance(actual, _events.EpsilonDeltaDpEvent):
        ok = actual.epsilon <= declared.epsilon and actual.delta <= declared.delta
        return None if ok else f"(ε, δ) = ({actual.epsilon:.6g}, {actual.delta:.3g}) exceeds the declared one"
    if isinstance(actual, dp_accounting.PoissonSampledDpEvent):
        if actual.sampling_probability > declared.sampling_probability:
            return (f"its sampling rate {actual.sampling_probability:.6g} exceeds the declared "
                    f"{declared.sampling_probability:.6g}")
        return dominated(actual.event, declared.event)
    if isinstance(actual, dp_accounting.SelfComposedDpEvent):
        if actual.count != declared.count:
            return f"it repeats {actual.count} times, the declared step {declared.count}"
        return dominated(actual.event, declared.event)
    if isinstance(actual, dp_accounting.ComposedDpEvent):
        if len(actual.events) != len(declared.events):
            return f"it composes {len(actual.events)} steps, the declared one {len(declared.events)}"
        return next((why for a, d in zip(actual.events, declared.events) if (why := dominated(a, d))), None)
    return f"no domination rule for {type(actual).__name__}"


def _within(actual: Cost, declared: Cost) -> str | None:
    if isinstance(declared.event, _events.EpsilonDeltaDpEvent):  # the worst (ε, δ)-DP step: any weaker one
        g, d = actual.guarantee, declared.guarantee
        ok = g.epsilon <= d.epsilon and g.delta <= d.delta
        return None if ok else f"its guarantee {g} is weaker than the declared {d}"
    return dominated(actual.event, declared.event)


@attrs.frozen
class DeclaredStep:
    name: str
    cost: Cost
    times: int


def declared(name: str, steps) -> tuple[tuple[DeclaredStep, ...], Cost]:
    """The declared steps and what the whole schedule costs (tight composition), before any charge.
    The graphs among the steps must share one relation, which the schedule's cost then names."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if isinstance(steps, (str, bytes)) or not hasattr(steps, "__iter__"):
        raise TypeError(f"steps must be a list of (name, mechanism | guarantee | graph[, times]), got {steps!r}")
    items = tuple(_declared_step(i, item) for i, item in enumerate(steps))
    if not items:
        raise ValueError(f"schedule {name!r} declares no steps")
    relations = {s.cost.relation for s in items if s.cost.relation is not None}
    if len(relations) > 1:
        raise RelationError(f"schedule {name!r} declares graphs under {' and '.join(sorted(map(str, relations)))}: "
                            "one session charges under one relation. Nothing was charged.")
    parts = [self_composed(s.cost, s.times) for s in items]
    event = parts[0][1] if len(parts) == 1 else dp_accounting.ComposedDpEvent([e for _, e in parts])
    g = _tight.guarantee(event, _rules.compose(*(g for g, _ in parts)))
    rule = "declared schedule, fixed in advance: tight composition (PLD / Rényi, dp-accounting)"
    plan_steps = tuple(PlanStep(f"{name}/{s.name}", s.cost.kind, s.cost.guarantee, s.cost.rule,
                                {**s.cost.params, "times": s.times}) for s in items)
    return items, Cost(g, event, "schedule", {}, rule, plan_steps, next(iter(relations), None))


def declared_count(entry: LedgerEntry) -> int:
    """How many steps the schedule charged by ``entry`` declared (its steps' ``times``)."""
    return sum(int(step.params.get("times", 1)) for step in entry.steps)


class Schedule:
    """A declared schedule (``Accountant.declare``): paid in full when declared, its steps then run
    here in order, ``spend`` and ``run`` as on the accountant, each checked against its declared step
    before it runs. Stopping early is allowed; nothing paid is refunded.

    Only the accountant that recorded ``entry`` (the schedule's charge) can hold it: a schedule
    never records a step that its declaration did not pay for."""

    def __init__(self, accountant, entry: LedgerEntry, steps: tuple[DeclaredStep, ...]):
        if not accountant.charged_schedule(entry):
            raise PrivacyError(f"schedule {entry.name!r} was not charged by this accountant: declare it with "
                               "Accountant.declare, which charges it in full first")
        self._accountant, self.entry, self.name, self.steps = accountant, entry, entry.name, tuple(steps)
        self._position, self._done = 0, 0  # index of the current declared step, runs done of it

    @property
    def left(self) -> tuple[tuple[str, int], ...]:
        """The declared steps still to run: (name, times left)."""
        rest = [(s.name, s.times) for s in self.steps[self._position:]]
        if rest:
            rest[0] = (rest[0][0], rest[0][1] - self._done)
        return tuple(rest)

    def spend(self, name: str, what) -> LedgerEntry:
        """Record the next declared step (already paid), after checking it against the declaration."""
        return self._record(name, cost_of(what))

    def run(self, graph, data, rng=None, name: str | None = None):
        """Run a graph as the next declared step: checked, validated and recorded before it runs."""
        from .accountant import execute

        plan = self._accountant.plan(graph)
        data = graph.validate(data)
        rng = _random.generator(rng)
        entry = self._record(name or plan.name, cost_of(plan))
        return execute(graph, plan, data, rng, entry)

    def _record(self, name: str, actual: Cost) -> LedgerEntry:
        with self._accountant._lock:  # noqa: SLF001 - the schedule's position moves with the ledger
            if self._position >= len(self.steps):
                raise PrivacyError(f"schedule {self.name!r} has run all its declared steps; {name!r} was not declared")
            step = self.steps[self._position]
            where = f"declared step {step.name!r} ({self._done + 1} of {step.times}) of schedule {self.name!r}"
            if name != step.name:
                raise PrivacyError(f"{name!r} is not the next step of schedule {self.name!r}: the next is {where}. "
                                   "Nothing was run.")
            why = _within(actual, step.cost)
            if why is not None:
                raise PrivacyError(f"{name!r} departs from {where}: {why}. Nothing was run.")
            rule = f"{where}, paid when the schedule was declared"
            entry = self._accountant._charge(name, attrs.evolve(actual, rule=f"{rule}; {actual.rule}"), None,
                                             prepaid=self.name)  # noqa: SLF001
            self._done += 1
            if self._done == step.times:
                self._position, self._done = self._position + 1, 0
            return entry


def _declared_step(index: int, item) -> DeclaredStep:
    if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
        raise ValueError(f"schedule step {index} must be (name, mechanism | guarantee | graph[, times]), got {item!r}")
    name, what, *rest = item
    if not isinstance(name, str) or not name:
        raise ValueError(f"schedule step {index}: the name must be a non-empty string, got {name!r}")
    times = _validate.integer("times", rest[0] if rest else 1, minimum=1)
    return DeclaredStep(name, cost_of(what), times)
