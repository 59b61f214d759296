"""Mechanism-graph nodes: what a private estimator is made of.

A graph is a tree of nodes. Each node can ``plan`` (compute its guarantee and a step-by-step
breakdown without data) and ``execute`` (run on data). Combinators in ``graph.combinators`` build
them; users rarely touch these classes directly. Here: releases, halting tests and the nodes
that arrange others (sequence, split, repeat); ``graph.wrappers``: the nodes that wrap one
(absorb, transform, subsample, post-process, private, privatise); ``graph.runtime``: what they
share, and the rule for code that touches data (``touching``, ``ERROR_STATE``).

Data flow: every node runs on the data handed to it (the graph's input, a part of a random
split, a subsample, a transform's output); released values are stored under the node's name and
later nodes read them by naming them in ``uses``. Post-processing nodes never see data.

Scopes: a halting test establishes its condition for the later steps of the same sequence only.
Conditions never cross a partition, an absorbed failure, a transform (group privacy included),
a subsample or a privatised input, in either direction (docs/design.md, "Conditions").
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import dp_accounting

from ..errors import ConditionError, PrivacyError
from ..mechanisms.base import Mechanism
from ..mechanisms.partition import EdgeSplit, RowSplit
from ..privacy import rules, tight
from ..privacy.steps import PlanStep
from ..relations import AddRemoveOne, EdgeAdjacency, ReplaceOne
from .runtime import ERROR_STATE, Halt, NodePlan, PlanContext, RunState, _check_uses, _name, _uses, child_path, touching

__all__ = ["ERROR_STATE", "Conditional", "Halt", "HaltIf", "Release", "Repeat", "Sequence", "Split"]  # ERROR_STATE, Halt: documented here


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
    steps allow (``privacy.tight``: every step's parameters are fixed before the data, so a
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
