"""Nodes that wrap one other node: an absorbed failure, a transform (group privacy included), a
subsample, post-processing of released values, a private sub-estimator and a privatised input."""

from __future__ import annotations

from typing import Any, Callable

import attrs
import dp_accounting
import numpy as np

from .. import guarantees as _g
from ..errors import PrivacyError
from ..mechanisms.base import Mechanism
from ..mechanisms.partition import PoissonSample, SampleWithoutReplacement
from ..privacy import events as _events, rules
from ..privacy.steps import PlanStep
from ..relations import AddRemoveOne, ReplaceOne
from .runtime import ERROR_STATE, NodePlan, PlanContext, RunState, _check_uses, _name, _uses, child_path, touching


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


#: Base events whose Poisson-subsampled loss is priced (``privacy.pld``, ``privacy.rdp``).
_SAMPLED = (dp_accounting.LaplaceDpEvent, dp_accounting.GaussianDpEvent, _events.DiscreteGaussianDpEvent,
            dp_accounting.dp_event.DiscreteLaplaceDpEvent)
def _pure(event) -> bool:
    """A pure ε-DP step known only by its ε: Poisson-subsampled, it has a Rényi curve (``privacy.rdp``)."""
    return isinstance(event, _events.EpsilonDeltaDpEvent) and event.delta == 0 and event.epsilon > 0


#: Base events whose loss sampled without replacement is priced (``privacy.rdp``: Rényi curve only).
_SAMPLED_WOR = (dp_accounting.GaussianDpEvent, _events.DiscreteGaussianDpEvent, dp_accounting.LaplaceDpEvent,
                dp_accounting.dp_event.DiscreteLaplaceDpEvent)


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
        if isinstance(self.sampler, PoissonSample) and (isinstance(inner.event, _SAMPLED) or _pure(inner.event)):
            event = dp_accounting.PoissonSampledDpEvent(self.sampler.rate, inner.event)
        elif isinstance(self.sampler, SampleWithoutReplacement) and (isinstance(inner.event, _SAMPLED_WOR)
                                                                      or _pure(inner.event)):
            event = dp_accounting.SampledWithoutReplacementDpEvent(self.sampler.n, self.sampler.size, inner.event)
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
    """``fn(**uses)`` on released outputs only, never the data: free (Lemma A.2).

    ``vectorised``: ``fn`` takes every output stacked along a new leading axis of runs and returns
    its result stacked the same way, row i depending on row i of the inputs only; one run calls it
    on a stack of one and releases row 0, and the auditor calls it once for a whole batch of runs.
    """

    name: str = attrs.field(converter=_name)
    fn: Callable
    uses: tuple[str, ...] = attrs.field(default=(), converter=_uses)
    vectorised: bool = attrs.field(default=False, kw_only=True, validator=attrs.validators.instance_of(bool))

    def plan(self, ctx: PlanContext) -> NodePlan:
        _check_uses(self, ctx, self.fn)
        g = _g.PureDP(0.0)
        step = PlanStep(ctx.path, "post-processing", g, "post-processing (Lemma A.2)")
        return NodePlan(g, "post-processing (Lemma A.2)", (step,), frozenset({self.name}),
                        event=dp_accounting.NoOpDpEvent(), releases=(self.name,))

    def execute(self, data, state: RunState, path: str):
        state.outputs[self.name] = out = self.apply(state.inputs(self.uses))
        return out

    def apply(self, inputs: dict):
        """``fn`` on one run's outputs (a vectorised ``fn`` on a stack of one, row 0 of its result),
        silent whatever the caller set; it may halt: it sees released values only."""
        if self.vectorised:
            return self.apply_stacked({name: np.asarray(value)[None] for name, value in inputs.items()})[0]
        with np.errstate(**ERROR_STATE):
            return self.fn(**inputs)

    def apply_stacked(self, stacked: dict):
        """A vectorised ``fn`` on outputs stacked along a leading axis of runs."""
        with np.errstate(**ERROR_STATE):
            return self.fn(**stacked)


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
