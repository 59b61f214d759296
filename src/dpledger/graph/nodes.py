"""Mechanism-graph nodes: what a private estimator is made of.

A graph is a tree of nodes. Each node can ``plan`` (compute its guarantee and a step-by-step
breakdown without data) and ``execute`` (run on data). Combinators in ``graph.combinators`` build
them; users rarely touch these classes directly.

Data flow: every node runs on the data handed to it (the graph's input, a part of a random
split, a subsample, a transform's output); released values are stored under the node's name and
later nodes read them by naming them in ``uses``. Post-processing nodes never see data.

Observables (docs/design.md, "What a run reveals"): a run reveals its released values, whether it
halted and which step halted it, and any error. Only a halting test (``halt_if``) or
post-processing of released values may halt a run. Code that touches data must be total on the
estimator's domain; if it raises anyway (a ``Halt`` or any other exception) the runtime reports a
``PrivacyError`` naming the step, because such an error depends on the data and no plan covers it.

Scopes: a halting test establishes its condition for the later steps of the same sequence only.
Conditions never cross a partition, an absorbed failure, a transform (group privacy included),
a subsample or a privatised input, in either direction (docs/design.md, "Conditions").
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import attrs
import dp_accounting
import numpy as np

from .. import guarantees as _g
from ..accountant import rules, tight
from ..accountant.events import EpsilonDeltaDpEvent
from ..accountant.ledger import PlanStep
from ..errors import ConditionError, PrivacyError
from ..mechanisms.base import Mechanism
from ..mechanisms.partition import EdgeSplit, PoissonSample, RowSplit, SampleWithoutReplacement
from ..relations import AddRemoveOne, EdgeAdjacency, Relation, ReplaceOne


class Halt(Exception):
    """Raised inside a run when a halting test fires; the run then outputs ⊥ (``None``)."""

    def __init__(self, test: str):
        super().__init__(test)
        self.test = test


@attrs.frozen
class NodePlan:
    """A node's planned cost. ``establishes``: halting tests later siblings may condition on;
    ``halting``: it contains a halting test or conditional step (so Lemma A.4 governs it);
    ``event``: the dp-accounting event of the whole node, for tight composition and the filters
    (when none is given, the worst case of its guarantee: a halting segment is one such step);
    ``releases``: the names of the values it releases (mechanism outputs and post-processing),
    in order: exactly what a run may show."""

    guarantee: _g.Guarantee
    rule: str
    steps: tuple[PlanStep, ...]
    produces: frozenset[str] = frozenset()
    establishes: frozenset[str] = frozenset()
    halting: bool = False
    event: Any = None
    releases: tuple[str, ...] = ()

    def __attrs_post_init__(self):
        if self.event is None:
            object.__setattr__(self, "event", EpsilonDeltaDpEvent.of(self.guarantee))


@attrs.frozen
class PlanContext:
    """What planning knows at a node: the relation, the path, earlier outputs and halting tests."""

    relation: Relation
    path: str = ""
    available: frozenset[str] = frozenset()
    established: frozenset[str] = frozenset()

    def child(self, name: str, **changes) -> "PlanContext":
        path = f"{self.path}/{name}" if self.path else name
        return attrs.evolve(self, path=path, **changes)

    def scope(self, name: str, **changes) -> "PlanContext":
        """The context inside a boundary that conditions do not cross (no condition holds inside)."""
        return self.child(name, established=frozenset(), **changes)


class RunState:
    """Mutable state of one execution: the generator and the outputs released so far."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.outputs: dict[str, Any] = {}

    def inputs(self, uses: tuple[str, ...]) -> dict[str, Any]:
        return {name: self.outputs[name] for name in uses}

    def map_records(self, path: str, fn: Callable, records, inputs: dict):
        """``fn(records, **inputs)`` for a ``per_record`` step (a hook: ``testing.position`` checks the
        maps a run makes by overriding it)."""
        return touching(path, fn, records, **inputs)


def child_path(path: str, name: str) -> str:
    return f"{path}/{name}"


#: numpy's floating-point error handling inside data-touching code, whatever the caller set: every
#: event ignored. "raise" (a caller's ``np.seterr``) would turn a subnormal or an overflow on one
#: input into an error where its neighbour runs; "warn" hands the event to Python's ``warnings``,
#: which the caller controls (``-W error`` makes it an exception), so a warning on D and none on D'
#: is an observable no plan covers. Ignoring an event is not hiding a result: code that touches
#: data clamps to public ranges before arithmetic, so what it computes is what its proof states
#: (the built-ins' stress pairs run under ``-W error`` and ``np.seterr(all="raise")`` in the suite).
ERROR_STATE = {"divide": "ignore", "over": "ignore", "invalid": "ignore", "under": "ignore"}


def touching(path: str, fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` for code that touches data, under ``ERROR_STATE`` (numpy's
    floating-point events all ignored, whatever the caller set; numpy keeps it per thread): any
    exception it raises (``Halt`` included) becomes a ``PrivacyError`` naming the step, because it
    depends on the data."""
    try:
        with np.errstate(**ERROR_STATE):
            return fn(*args, **kwargs)
    except PrivacyError:
        raise
    except Halt as halt:
        raise PrivacyError(
            f"step {path!r} halted ({halt.test}) while touching the data: only halting tests (halt_if) and "
            "post-processing of released values may halt a run. This is a bug in the estimator; the run's "
            "observables are not covered by its plan (the charge stands)") from None
    except Exception as exc:
        raise PrivacyError(
            f"step {path!r} raised {type(exc).__name__} while touching the data: {exc}. Code that touches data "
            "must be total on the estimator's domain; this is a bug in the estimator, and the run's observables "
            "are not covered by its plan (the charge stands)") from exc


def _check_uses(node, ctx: PlanContext, fn: Callable | None = None, leading: tuple[str, ...] = ()) -> None:
    """``uses`` names earlier outputs, and ``fn`` accepts them (after ``leading`` positional
    arguments, e.g. the data): checked when planning, so a typo never costs a charge."""
    missing = [u for u in node.uses if u not in ctx.available]
    if missing:
        raise PrivacyError(
            f"step {ctx.path!r} uses {missing} which no earlier step releases; "
            f"earlier outputs: {sorted(ctx.available) or 'none'}"
        )
    if fn is None:
        return
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return
    try:
        signature.bind(*leading, **{u: None for u in node.uses})
    except TypeError as exc:
        call = ", ".join([*leading, *(f"{u}=..." for u in node.uses)])
        raise TypeError(f"step {ctx.path!r}: its function cannot be called as fn({call}) ({exc}); the keyword "
                        f"names must match uses={list(node.uses)}. Nothing was charged.") from None


def _uses(value) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _name(value) -> str:
    if not isinstance(value, str) or not value or "/" in value:
        raise ValueError(f"a step name must be a non-empty string without '/', got {value!r}")
    return value


@attrs.frozen
class Release:
    """Apply ``mechanism`` to ``query(data, **uses)``: the mechanism's guarantee, by its lemma.
    ``note`` (shown in the ledger) says where the claimed sensitivity comes from."""

    name: str = attrs.field(converter=_name)
    mechanism: Mechanism
    query: Callable
    uses: tuple[str, ...] = attrs.field(default=(), converter=_uses)
    note: str = ""

    def plan(self, ctx: PlanContext) -> NodePlan:
        _check_uses(self, ctx, self.query, ("data",))
        if not isinstance(self.mechanism, Mechanism):
            raise TypeError(f"step {ctx.path!r}: mechanism must be a dpledger Mechanism, got {self.mechanism!r}")
        g = self.mechanism.guarantee()
        rule = f"{self.mechanism.source}; {self.note}" if self.note else self.mechanism.source
        step = PlanStep(ctx.path, self.mechanism.kind, g, rule, self.mechanism.params())
        return NodePlan(g, rule, (step,), frozenset({self.name}), event=self.mechanism.dp_event(),
                        releases=(self.name,))

    def execute(self, data, state: RunState, path: str):
        value = touching(path, self.query, data, **state.inputs(self.uses))
        state.outputs[self.name] = out = touching(path, self.mechanism.release, value, state.rng)
        return out


@attrs.frozen
class HaltIf:
    """A halting test: run ``release`` and halt the whole run if ``halt_when(noisy value)`` holds.

    Later steps may be ``conditional`` on this test not halting (Lemma A.4).
    """

    release: Release
    halt_when: Callable[[Any], bool]

    @property
    def name(self) -> str:
        return self.release.name

    def plan(self, ctx: PlanContext) -> NodePlan:
        base = self.release.plan(ctx)
        rule = f"halting test; {base.rule}"
        step = attrs.evolve(base.steps[0], rule=rule)
        return attrs.evolve(base, rule=rule, steps=(step,), establishes=frozenset({self.name}),
                            halting=True, event=None)

    def execute(self, data, state: RunState, path: str):
        out = self.release.execute(data, state, path)
        if bool(self.halt_when(out)):  # post-processing of the released value
            raise Halt(self.name)
        return out


@attrs.frozen
class Conditional:
    """A step whose guarantee holds only under the condition that test ``given`` did not halt."""

    node: Any
    given: str

    @property
    def name(self) -> str:
        return self.node.name

    def plan(self, ctx: PlanContext) -> NodePlan:
        if self.given not in ctx.established:
            raise ConditionError(
                f"step {ctx.path!r} is private only if halting test {self.given!r} did not halt, but no "
                f"such test runs before it in the same sequence (established: {sorted(ctx.established) or 'none'})"
            )
        inner = self.node.plan(ctx)
        rule = f"DP under condition '{self.given}' did not halt (Lemma A.4)"
        return attrs.evolve(inner, rule=rule, halting=True, event=None)

    def execute(self, data, state: RunState, path: str):
        return self.node.execute(data, state, path)


@attrs.frozen
class Sequence:
    """Run children in order; each may use earlier outputs. Basic composition, tightened where the
    steps allow (``accountant.tight``: every step's parameters are fixed before the data, so a
    sequence is a fixed composition even when its queries read earlier outputs), or Lemma A.4
    (halting composition, the sum) when a halting test or conditional step is inside."""

    name: str = attrs.field(converter=_name)
    nodes: tuple = attrs.field(converter=tuple)

    def __attrs_post_init__(self):
        if not self.nodes:
            raise ValueError(f"sequence {self.name!r} needs at least one step")
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"sequence {self.name!r} has repeated step names: {names}")

    def plan(self, ctx: PlanContext) -> NodePlan:
        plans, available, established = [], ctx.available, ctx.established
        for node in self.nodes:
            p = node.plan(ctx.child(node.name, available=available, established=established))
            plans.append(p)
            available |= p.produces
            established |= p.establishes
        halting = any(p.halting for p in plans)
        events = [p.event for p in plans]
        event = None if halting else dp_accounting.ComposedDpEvent(events)
        if halting:
            g, rule = rules.compose_halting(*(p.guarantee for p in plans)), "halting composition (Lemma A.4)"
        else:  # every step is fixed before the data, so the sequence's own steps compose tightly
            basic = rules.compose(*(p.guarantee for p in plans))
            g = tight.guarantee(event, basic)
            rule = (f"tight composition ({tight.route(event)}); basic composition gives {basic}" if g != basic
                    else "basic sequential composition")
        steps = tuple(s for p in plans for s in p.steps)
        if not halting and g != basic and "/" in ctx.path:  # a nested subtotal the sum of its rows does not show
            steps += (PlanStep(ctx.path, "sequence", g, rule, {"steps": len(plans)}),)
        return NodePlan(g, rule, steps, available - ctx.available | {self.name},
                        establishes=established - ctx.established, halting=halting, event=event,
                        releases=_releases(plans))

    def execute(self, data, state: RunState, path: str):
        out = None
        for node in self.nodes:
            out = node.execute(data, state, child_path(path, node.name))
        state.outputs[self.name] = out
        return out


def _releases(plans) -> tuple[str, ...]:
    return tuple(name for p in plans for name in p.releases)


_PARTITION_RELATIONS = {EdgeSplit: (EdgeAdjacency,), RowSplit: (ReplaceOne, AddRemoveOne)}


@attrs.frozen
class Split:
    """Random partition of the input's units; branch i runs on part i (and may use earlier
    outputs, including earlier branches'). Cost (max ε_i, max δ_i) (argument of Lemma C.15)."""

    name: str = attrs.field(converter=_name)
    partition: EdgeSplit | RowSplit
    branches: tuple = attrs.field(converter=tuple)

    def __attrs_post_init__(self):
        if len(self.branches) != self.partition.n_parts:
            raise ValueError(
                f"split {self.name!r}: partition has {self.partition.n_parts} parts but {len(self.branches)} branches"
            )

    def plan(self, ctx: PlanContext) -> NodePlan:
        allowed = _PARTITION_RELATIONS.get(type(self.partition), ())
        if not isinstance(ctx.relation, allowed):
            raise PrivacyError(
                f"split {ctx.path!r}: {type(self.partition).__name__} is a random partition of the units of "
                f"{' or '.join(r.__name__ for r in allowed)} neighbours, not of {ctx.relation!r}"
            )
        plans, available = [], ctx.available
        for branch in self.branches:
            p = branch.plan(ctx.scope(branch.name, available=available))
            plans.append(p)
            available |= p.produces
        g = rules.random_partition(*(p.guarantee for p in plans))
        rule = "random partition (Lemma C.15 argument)"
        steps = tuple(s for p in plans for s in p.steps)
        return NodePlan(g, rule, steps, available - ctx.available | {self.name},
                        halting=any(p.halting for p in plans), releases=_releases(plans))

    def execute(self, data, state: RunState, path: str):
        out = None
        for branch, part in zip(self.branches, touching(path, self.partition.parts, data, state.rng)):
            out = branch.execute(part, state, child_path(path, branch.name))
        state.outputs[self.name] = out
        return out


@attrs.frozen
class Repeat:
    """Run ``node`` ``times`` times in a row: the same step, fixed in advance (a training loop's
    iterations). Each iteration sees the outputs of the one before (the first, ``initial``:
    public values fixed before the data). Cost: the self-composition of the node, tight (PLD, as
    dp-accounting's ``SelfComposedDpEvent``); with a halting test inside, Lemma A.4's sum.
    Releases the last iteration's values under their names, and every iteration's output, in
    order, under the repeat's name."""

    name: str = attrs.field(converter=_name)
    node: Any
    times: int
    initial: dict = attrs.field(factory=dict)

    def plan(self, ctx: PlanContext) -> NodePlan:
        inner = self.node.plan(ctx.child(self.node.name, available=ctx.available | set(self.initial)))
        basic = rules.compose_repeated(inner.guarantee, self.times)
        if inner.halting:
            g, event, rule = basic, None, f"{self.times} runs, halting composition (Lemma A.4)"
        else:
            event = inner.event if self.times == 1 else dp_accounting.SelfComposedDpEvent(inner.event, self.times)
            g = tight.guarantee(event, basic)
            how = (f"tight self-composition ({tight.route(event)})" if g != basic
                   else "basic composition (no tighter here)")
            rule = f"{self.times} runs, {how}"
        step = PlanStep(ctx.path, "repeat", g, rule, {"times": self.times})
        return NodePlan(g, rule, inner.steps + (step,), inner.produces | set(self.initial) | {self.name},
                        halting=inner.halting, event=event, releases=inner.releases + (self.name,))

    def execute(self, data, state: RunState, path: str):
        state.outputs.update(self.initial)
        inner = child_path(path, self.node.name)
        state.outputs[self.name] = out = [self.node.execute(data, state, inner) for _ in range(self.times)]
        return out


@attrs.frozen
class Absorb:
    """The child is (ε, δ)-DP with probability >= 1 - γ over its coins: (ε + 2γ, δ + γ) (Fact I.3)."""

    node: Any
    gamma: float

    @property
    def name(self) -> str:
        return self.node.name

    def plan(self, ctx: PlanContext) -> NodePlan:
        inner = self.node.plan(attrs.evolve(ctx, established=frozenset()))
        g = rules.absorb_failure(inner.guarantee, self.gamma)
        rule = f"failure absorption, gamma={self.gamma:.3g} (Fact I.3)"
        step = PlanStep(ctx.path, "absorb", g, rule, {"gamma": self.gamma})
        return attrs.evolve(inner, guarantee=g, rule=rule, steps=inner.steps + (step,), event=None,
                            establishes=frozenset())

    def execute(self, data, state: RunState, path: str):
        return self.node.execute(data, state, path)


@attrs.frozen
class Transform:
    """Run the child on ``fn(data)``. ``stability`` k: neighbouring inputs map to inputs at most k
    neighbour-steps apart, so the child's guarantee degrades by group privacy (standard)."""

    name: str = attrs.field(converter=_name)
    fn: Callable
    node: Any
    stability: int = 1

    def plan(self, ctx: PlanContext) -> NodePlan:
        inner = self.node.plan(ctx.scope(self.node.name))
        if self.stability == 1:
            return attrs.evolve(inner, produces=inner.produces | {self.name}, establishes=frozenset())
        g = rules.group_privacy(inner.guarantee, self.stability)
        rule = f"{self.stability}-stable transform, group privacy"
        step = PlanStep(ctx.path, "group", g, rule, {"k": self.stability})
        return attrs.evolve(inner, guarantee=g, rule=rule, steps=inner.steps + (step,), event=None,
                            produces=inner.produces | {self.name}, establishes=frozenset())

    def execute(self, data, state: RunState, path: str):
        transformed = touching(path, self.fn, data)
        state.outputs[self.name] = out = self.node.execute(transformed, state, child_path(path, self.node.name))
        return out


@attrs.frozen
class Subsample:
    """Run the child on a random subsample: amplification by subsampling (Balle et al. 2018)."""

    name: str = attrs.field(converter=_name)
    sampler: PoissonSample | SampleWithoutReplacement
    node: Any

    def plan(self, ctx: PlanContext) -> NodePlan:
        needed = AddRemoveOne if isinstance(self.sampler, PoissonSample) else ReplaceOne
        if not isinstance(ctx.relation, needed):
            raise PrivacyError(
                f"subsample {ctx.path!r}: {type(self.sampler).__name__} amplifies under {needed.__name__}, "
                f"not under {ctx.relation!r}"
            )
        inner = self.node.plan(ctx.scope(self.node.name))
        g = rules.amplify_by_subsampling(inner.guarantee, self.sampler.rate, ctx.relation)
        event = None  # the worst case of the amplified guarantee, unless dp-accounting knows better:
        if isinstance(self.sampler, PoissonSample) and isinstance(
                inner.event, (dp_accounting.LaplaceDpEvent, dp_accounting.GaussianDpEvent)):
            event = dp_accounting.PoissonSampledDpEvent(self.sampler.rate, inner.event)
        rule = f"amplification by subsampling, rate={self.sampler.rate:.3g} (Balle et al. 2018)"
        step = PlanStep(ctx.path, type(self.sampler).__name__, g, rule, {"rate": self.sampler.rate})
        return attrs.evolve(inner, guarantee=g, rule=rule, steps=inner.steps + (step,), event=event,
                            produces=inner.produces | {self.name}, establishes=frozenset())

    def execute(self, data, state: RunState, path: str):
        sample = touching(path, self.sampler.subsample, data, state.rng)
        state.outputs[self.name] = out = self.node.execute(sample, state, child_path(path, self.node.name))
        return out


@attrs.frozen
class PostProcess:
    """``fn(**uses)`` on released outputs only, never the data: free (Lemma A.2)."""

    name: str = attrs.field(converter=_name)
    fn: Callable
    uses: tuple[str, ...] = attrs.field(default=(), converter=_uses)

    def plan(self, ctx: PlanContext) -> NodePlan:
        _check_uses(self, ctx, self.fn)
        g = _g.PureDP(0.0)
        step = PlanStep(ctx.path, "post-processing", g, "post-processing (Lemma A.2)")
        return NodePlan(g, "post-processing (Lemma A.2)", (step,), frozenset({self.name}),
                        event=dp_accounting.NoOpDpEvent(), releases=(self.name,))

    def execute(self, data, state: RunState, path: str):
        with np.errstate(**ERROR_STATE):  # silent whatever the caller set; it may halt: released values only
            state.outputs[self.name] = out = self.fn(**state.inputs(self.uses))
        return out


@attrs.frozen
class Private:
    """A step whose guarantee is proven outside the graph: ``fn(data, rng, **uses)`` with the
    stated ``guarantee`` and the ``source`` of its proof (shown in the ledger)."""

    name: str = attrs.field(converter=_name)
    fn: Callable
    guarantee: _g.Guarantee = attrs.field(validator=lambda _, __, v: _g.check("guarantee", v))
    source: str = attrs.field(validator=attrs.validators.instance_of(str))
    uses: tuple[str, ...] = attrs.field(default=(), converter=_uses)
    params: dict = attrs.field(factory=dict)

    def plan(self, ctx: PlanContext) -> NodePlan:
        _check_uses(self, ctx, self.fn, ("data", "rng"))
        step = PlanStep(ctx.path, "private step", self.guarantee, self.source, self.params)
        return NodePlan(self.guarantee, self.source, (step,), frozenset({self.name}), releases=(self.name,))

    def execute(self, data, state: RunState, path: str):
        state.outputs[self.name] = out = touching(path, self.fn, data, state.rng, **state.inputs(self.uses))
        return out


@attrs.frozen
class Privatise:
    """Privatised input (Lemma I.4): Gaussian noise on V = ``query(data, rng, **uses)``, then
    ``node`` runs on the noisy V as a dataset of rows (ReplaceOne). The noisy V is never released.
    The query may draw data-independent coins from ``rng`` (the subsample of Algorithm D.5, step 5).

    The caller claims that on neighbouring inputs the rows of V and V' are jointly within the
    mechanism's ℓ2 sensitivity outside at most ``m`` rows (``note`` says why). Cost:
    ``rules.privatised_input(gaussian, node's guarantee, m)``.
    """

    name: str = attrs.field(converter=_name)
    mechanism: Mechanism
    query: Callable
    node: Any
    m: int
    uses: tuple[str, ...] = attrs.field(default=(), converter=_uses)
    note: str = ""

    def plan(self, ctx: PlanContext) -> NodePlan:
        _check_uses(self, ctx, self.query, ("data", "rng"))
        first = self.mechanism.guarantee()
        inner = self.node.plan(ctx.scope(self.node.name, relation=ReplaceOne()))
        g = rules.privatised_input(first, inner.guarantee, self.m)
        rule = f"privatised input, m={self.m} (Lemma I.4)"
        noise = PlanStep(f"{ctx.path}/noise", self.mechanism.kind, first,
                         f"{self.mechanism.source}; {self.note}" if self.note else self.mechanism.source,
                         self.mechanism.params())
        total = PlanStep(ctx.path, "privatised input", g, rule, {"m": self.m})
        return NodePlan(g, rule, (noise, *inner.steps, total), inner.produces | {self.name},
                        halting=inner.halting, releases=inner.releases)

    def execute(self, data, state: RunState, path: str):
        rows = touching(path, self.query, data, state.rng, **state.inputs(self.uses))
        noisy = touching(path, self.mechanism.release, rows, state.rng)
        state.outputs[self.name] = out = self.node.execute(noisy, state, child_path(path, self.node.name))
        return out
