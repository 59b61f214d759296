"""Schedules declared in advance (``Accountant.declare``).

A declared schedule is a list of steps fixed before any data is seen, so it composes tightly
(``privacy.tight``) and enters the session's filter once, in full, when declared. Its steps
then run one by one through the ``Schedule``, in the declared order; each must be *dominated* by
its declared step (the same mechanism with no less noise, no larger sampling rate or sensitivity,
or a guarantee no weaker than a declared (ε, δ)). Steps chosen adaptively but each dominated by a
fixed declared step compose to no more than the declared steps do (Dong, Roth & Su 2022, Theorem
3.2, for the tradeoff functions the declared events define), so the charge covers them; other
steps of the session may interleave (concurrent composition under a filter: Haney et al. 2023).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import attrs
import dp_accounting

from .. import _random, _validate
from .. import guarantees as _g
from ..errors import PrivacyError, RelationError
from ..privacy import events as _events, rules as _rules, tight as _tight
from .cost import Cost, cost_of
from ..privacy.steps import PlanStep
from .entries import LedgerEntry
from .result import execute


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
    if isinstance(actual, _events.DiscreteGaussianDpEvent):
        if declared.scalar:  # the same noise, a shift bound no larger (docs/proofs.md: shifts are dominated)
            ok = actual.scalar and actual.sigma == declared.sigma and actual.sensitivity <= declared.sensitivity
            return None if ok else "its scalar discrete Gaussian differs in noise, or exceeds the declared shift"
        ok = Fraction(actual.sensitivity) / Fraction(actual.sigma) <= Fraction(declared.sensitivity) / Fraction(declared.sigma)
        return None if ok else "its discrete Gaussian's Δ/σ exceeds the declared one's"
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
    if isinstance(actual, dp_accounting.SampledWithoutReplacementDpEvent):
        if (actual.source_dataset_size, actual.sample_size) != (declared.source_dataset_size, declared.sample_size):
            return (f"it samples {actual.sample_size} of {actual.source_dataset_size}, the declared step "
                    f"{declared.sample_size} of {declared.source_dataset_size}")
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


def declared(name: str, steps) -> Cost:
    """What the whole schedule costs (tight composition), before any charge: a ``Cost`` whose plan
    steps are the declared steps, each with its event and ``times`` (``declared_steps`` reads them
    back). The graphs among the steps must share one relation, which the cost then names."""
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
                                {**s.cost.params, "times": s.times}, _events.to_dict(s.cost.event)) for s in items)
    return Cost(g, event, "schedule", {}, rule, plan_steps, next(iter(relations), None))


def declared_steps(entry: LedgerEntry) -> tuple[DeclaredStep, ...]:
    """The steps a schedule's charge ``entry`` declared, read from the entry alone (so a ledger read
    after a restart, or by another process, checks its prepaid steps exactly as the live session
    does). A step recorded without its event (an older ledger) is held to its (ε, δ) guarantee."""
    out = []
    for step in entry.steps:
        event = _events.from_dict(step.event) if step.event is not None else _events.EpsilonDeltaDpEvent.of(step.guarantee)
        name = step.path.split("/", 1)[1] if "/" in step.path else step.path
        out.append(DeclaredStep(name, Cost(step.guarantee, event, step.mechanism, step.params, step.rule),
                                int(step.params.get("times", 1))))
    return tuple(out)


def next_step(steps: tuple[DeclaredStep, ...], done: int) -> tuple[DeclaredStep, int] | None:
    """The declared step that the ``done + 1``-th prepaid step must match, with its run number
    (1-based), or None when every declared step has run."""
    for step in steps:
        if done < step.times:
            return step, done + 1
        done -= step.times
    return None


def check_prepaid(schedule: str, steps: tuple[DeclaredStep, ...], done: int, name: str, actual: Cost) -> str:
    """The rule of the ``done + 1``-th prepaid step of ``schedule``, or a ``PrivacyError`` when
    ``name`` and ``actual`` are not the next declared step or not dominated by it."""
    found = next_step(steps, done)
    if found is None:
        raise PrivacyError(f"schedule {schedule!r} has run all its declared steps; {name!r} was not declared. "
                           "Nothing was run.")
    step, run = found
    where = f"declared step {step.name!r} ({run} of {step.times}) of schedule {schedule!r}"
    if name != step.name:
        raise PrivacyError(f"{name!r} is not the next step of schedule {schedule!r}: the next is {where}. "
                           "Nothing was run.")
    why = _within(actual, step.cost)
    if why is not None:
        raise PrivacyError(f"{name!r} departs from {where}: {why}. Nothing was run.")
    return f"{where}, paid when the schedule was declared; {actual.rule}"


class Schedule:
    """A declared schedule (``Accountant.declare``): paid in full when declared, its steps then run
    here in order, ``spend`` and ``run`` as on the accountant, each checked against its declared step
    before it runs. Stopping early is allowed; nothing paid is refunded.

    The declared steps and how many have run are the ledger's: the accountant checks every prepaid
    step, inside its charge's transaction, against the schedule's recorded charge ``entry`` (and
    refuses a schedule it never charged), so no handle records a step its declaration did not pay for."""

    def __init__(self, accountant, entry: LedgerEntry):
        if not accountant.charged_schedule(entry):
            raise PrivacyError(f"schedule {entry.name!r} was not charged by this accountant: declare it with "
                               "Accountant.declare, which charges it in full first")
        self._accountant, self.entry, self.name = accountant, entry, entry.name
        self.steps = declared_steps(entry)

    @property
    def left(self) -> tuple[tuple[str, int], ...]:
        """The declared steps still to run: (name, times left), as the ledger counts them."""
        done = self._accountant.prepaid_count(self.name)
        rest = []
        for step in self.steps:
            left = step.times - min(done, step.times)
            done = max(done - step.times, 0)
            if left:
                rest.append((step.name, left))
        return tuple(rest)

    def spend(self, name: str, what, *, charge_id: str | None = None) -> LedgerEntry:
        """Record the next declared step (already paid), after checking it against the declaration;
        ``charge_id`` as in ``Accountant.spend`` (a recorded id returns its entry, counting no step)."""
        return self._accountant._charge(name, cost_of(what), prepaid=self.name, charge_id=charge_id)  # noqa: SLF001

    def run(self, graph, data, rng=None, name: str | None = None, *, charge_id: str | None = None):
        """Run a graph as the next declared step: checked, validated and recorded before it runs.
        ``charge_id``: if the ledger already records it, no step is counted and nothing runs
        (``Result.replayed``), as in ``Accountant.run``."""
        plan = self._accountant.plan(graph)
        data = graph.validate(data)
        rng = _random.generator(rng)
        charged = self._accountant._charge_once(name or plan.name, cost_of(plan), prepaid=self.name,  # noqa: SLF001
                                                charge_id=charge_id)
        return execute(graph, plan, data, rng, *charged)


def _declared_step(index: int, item) -> DeclaredStep:
    if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
        raise ValueError(f"schedule step {index} must be (name, mechanism | guarantee | graph[, times]), got {item!r}")
    name, what, *rest = item
    if not isinstance(name, str) or not name:
        raise ValueError(f"schedule step {index}: the name must be a non-empty string, got {name!r}")
    times = _validate.integer("times", rest[0] if rest else 1, minimum=1)
    return DeclaredStep(name, cost_of(what), times)
