"""What ``audit`` can audit: registered estimators, graphs, mechanisms and plain functions.

``resolve`` turns a target into a ``Target``: the function to sample, the relation its claim is
about, the claim, candidate pairs to score first, and how to step to a neighbour of an input
(for the search). Estimators bring all of it (``example(rng)`` of the registry, the graph's
relation and planned guarantee); a graph or function needs ``data`` (or explicit pairs); a
mechanism's pairs are query answers at most its sensitivity apart, with known hard defaults.
"""

from __future__ import annotations

import math
from typing import Callable, Iterator

import attrs
import dp_accounting
import numpy as np
import scipy.sparse as sp

from ..graph import Graph, registry
from ..mechanisms import (DiscreteLaplace, Exponential, Gaussian, HistogramLearner, Laplace, Mechanism, ReportNoisyMax,
                          TextbookGaussian, TextbookLaplace, TextbookTruncatedLaplace, TopKPeeling, TruncatedLaplace)
from ..privacy import events as _events, gdp as _gdp, rdp as _rdp
from ..answers import AnswerDistance, EveryAnswer
from ..relations import AddRemoveOne, EdgeAdjacency, ReplaceOne
from .runners import RunEstimator, RunGraph, RunMechanism

#: neighbours of the example input scored before the search explores further
EXAMPLE_NEIGHBOURS = 4
#: candidate scores of a selection mechanism's default pair
DEFAULT_CANDIDATES = 4
#: noise mechanisms whose pairs are answers at most their sensitivity apart
NOISE = (Laplace, TruncatedLaplace, Gaussian, DiscreteLaplace, TextbookLaplace, TextbookTruncatedLaplace,
         TextbookGaussian)


@attrs.frozen
class Target:
    """Everything ``audit`` needs about what it audits; ``claim`` is (ε or None, δ), ``claims`` its
    claims in other currencies (``claims_of``);
    ``neighbours(data, rng, count)`` steps through inputs for the search (None: nothing to find,
    e.g. noise added to a scalar looks the same from every answer); ``domain`` the graph's declared
    domain, if any (a shrunk pair is rounded inside it)."""

    label: str
    fn: Callable
    relation: object | None
    claim: tuple[float | None, float]
    defaults: tuple[tuple[object, object], ...] = ()
    neighbours: Callable | None = None
    claims: dict = attrs.field(factory=dict)
    domain: object | None = None

    def runner(self, pairs) -> Callable:
        """The function to sample for these pairs (a histogram learner needs their bins)."""
        if isinstance(self.fn, RunMechanism):
            return self.fn.for_inputs([x for pair in pairs for x in pair])
        return self.fn


def _around(relation: object, example, rng: np.random.Generator, domain=None) -> dict:
    """Default pairs (the example and some of its neighbours) and the relation's neighbours, moved
    into the graph's ``domain`` when one is given (a neighbour outside it says nothing about the claim)."""
    if example is None or not callable(getattr(relation, "neighbours", None)):
        return {}

    def neighbours(data, rng, count=10):
        drawn = relation.neighbours(data, rng, count)
        return drawn if domain is None else (domain.project(other) for other in drawn)
    return {"defaults": tuple((example, other) for other in neighbours(example, rng, EXAMPLE_NEIGHBOURS)),
            "neighbours": neighbours}


def claims_of(event) -> dict:
    """What a plan's event claims beyond (ε, δ): {"mu": μ} when it is made of continuous Gaussians
    (μ-GDP, μ² = Σ 1/z², rounded up), {"rho": ρ} when it has zCDP or discrete Gaussian steps and a
    zCDP bound (a claim rounded up is never a false alarm)."""
    if event is None:
        return {}
    claims = {}
    mu_squared = _gdp.mu_squared(event)
    if mu_squared is not None and mu_squared > 0:
        claims["mu"] = math.nextafter(math.sqrt(float(mu_squared)), math.inf)
    gaussian = any(isinstance(leaf, (dp_accounting.ZCDpEvent, _events.DiscreteGaussianDpEvent))
                   for leaf, _ in _events.leaves(event))
    rho = _rdp.rho(event) if gaussian else None
    if rho is not None and rho > 0:
        claims["rho"] = rho
    return claims


def _graph(graph: Graph, fn: Callable, label: str, data, rng: np.random.Generator) -> Target:
    plan = graph.plan()
    example = None if data is None else graph.validate(data)
    return Target(label, fn, graph.relation, (plan.guarantee.epsilon, plan.guarantee.delta),
                  **_around(graph.relation, example, rng, graph.domain), claims=claims_of(plan.event),
                  domain=graph.domain)


def _estimator(name: str, data, rng: np.random.Generator) -> Target:
    try:
        info = registry.info(name)
    except KeyError as exc:
        raise ValueError(f"target: {exc.args[0]}") from None
    if info.example is None:
        raise ValueError(f"target: estimator {name!r} registers no example(rng), so its parameters are unknown; "
                         f"audit dpledger.estimator({name!r}, **params) as a Graph with data= or pairs=")
    params, example = info.example(rng)
    graph = registry.estimator(name, **params)
    settings = ", ".join(f"{key}={value!r}" for key, value in params.items())
    return _graph(graph, RunEstimator(name, params), f"{name} ({settings})", example if data is None else data, rng)


def _mechanism(mechanism: Mechanism) -> Target:
    guarantee = mechanism.guarantee()
    base = {"label": repr(mechanism), "fn": RunMechanism(mechanism), "claim": (guarantee.epsilon, guarantee.delta),
            "claims": claims_of(mechanism.dp_event())}
    if isinstance(mechanism, HistogramLearner):
        width = mechanism.bin_width
        points = np.full((mechanism.n, 1), 0.5 * width)
        moved = points.copy()
        moved[0] = 2.5 * width  # a bin only D' fills: the path the threshold's δ pays for
        return Target(**base, relation=ReplaceOne(), defaults=((points, moved),), neighbours=ReplaceOne().neighbours)
    sensitivity = getattr(mechanism, "sensitivity", None)
    if isinstance(mechanism, NOISE):
        norm = 2 if isinstance(mechanism, (Gaussian, TextbookGaussian)) else 1
        return Target(**base, relation=AnswerDistance(norm, sensitivity), defaults=((0.0, sensitivity),))
    if isinstance(mechanism, (Exponential, ReportNoisyMax, TopKPeeling)):
        monotone = getattr(mechanism, "monotonic", False)
        k = max(DEFAULT_CANDIDATES, getattr(mechanism, "k", 1) + 1)
        first = np.eye(k)[0] * sensitivity
        # one score down and all others up: the normaliser moves against the selected score
        pair = (np.zeros(k), first) if monotone else (first, sensitivity - first)
        relation = EveryAnswer(sensitivity, monotone)
        return Target(**base, relation=relation, defaults=(pair,), neighbours=relation.neighbours)
    return Target(**base, relation=None)


def _function(fn: Callable, relation: object | None, data, rng: np.random.Generator) -> Target:
    label = getattr(fn, "__name__", repr(fn))
    return Target(label, fn, relation, (None, 0.0), **_around(relation, data, rng))


def resolve(target: object, relation: object | None, data, rng: np.random.Generator) -> Target:
    """The ``Target`` for ``audit``'s ``target`` argument; ``rng`` draws examples and neighbours."""
    if isinstance(target, str):
        resolved = _estimator(target, data, rng)
    elif isinstance(target, Graph):
        resolved = _graph(target, RunGraph(target), f"graph {target.name!r}", data, rng)
    elif isinstance(target, Mechanism):
        resolved = _mechanism(target)
    elif callable(target):
        return _function(target, relation, data, rng)
    else:
        raise TypeError(f"target must be an estimator name, a Graph, a Mechanism or a function fn(data, rng), "
                        f"got {type(target).__name__}")
    if relation is not None and relation != resolved.relation:
        raise ValueError(f"relation: {resolved.label} is private under {resolved.relation}, so its claim says "
                         f"nothing about {relation}; leave relation unset")
    return resolved


def describe_pair(relation: object | None, a, b) -> str:
    """A pair in a few words: which edge or row changed, or the two answers."""
    if isinstance(relation, EdgeAdjacency):
        a, b = (x.toarray() if sp.issparse(x) else np.asarray(x) for x in (a, b))
        changed = np.argwhere(np.triu(a != b, k=1))
        if not len(changed):
            return "identical graphs"
        i, j = changed[0]
        return f"edge {{{i}, {j}}} {'removed' if a[i, j] else 'added'}"
    if isinstance(relation, ReplaceOne):
        rows_a, rows_b = (np.asarray(x, dtype=float).reshape(len(x), -1) for x in (a, b))
        i = int(np.argmax((rows_a != rows_b).any(axis=1)))
        return f"row {i} of {len(rows_a)} replaced: {_short(rows_a[i])} → {_short(rows_b[i])}"
    if isinstance(relation, AddRemoveOne):
        return f"{len(a)} rows vs {len(b)} rows"
    return f"{_short(a)} vs {_short(b)}"


def _short(value) -> str:
    return np.array2string(np.asarray(value, dtype=float), precision=4, threshold=8, separator=", ",
                           suppress_small=True, max_line_width=10_000)
