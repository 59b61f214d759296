"""Registered SBM estimators: ``sbm.weak`` (Alg. C.4), ``sbm.exact`` (Alg. C.12 + C.13),
``sbm.exponential`` (Alg. C.19), and for sparse graphs at any n ``sbm.spectral`` and
``sbm.spectral_exact`` (the noisy power method, ``spectral``).

Public parameters follow the paper: ``epsilon``, ``delta``, ``n``, ``d``, ``gamma`` (or ``alpha``,
``beta`` for the log n parameterisation, Appendix C.2). With ``d=None`` the average degree is
estimated privately from the edge count (sensitivity 1 under edge adjacency) with the share
``degree_share`` of ε, and composed sequentially with the rest; later steps are calibrated to the
released estimate d̂ (floored at 1/n).

``target``: the projection's accuracy τ, public and fixed before the data; None (the default)
uses the floor every graph reaches (``recovery.projection_target``), and a smaller value is
raised to that floor, so that no run can miss it.
"""

from __future__ import annotations

import numpy as np

from ... import _validate
from ...graph import Graph, postprocess, register, release, sequence, split
from ...mechanisms import DiscreteLaplace, EdgeSplit
from ...mechanisms.base import checked_epsilon
from ...privacy.rules import remainder
from ...domains import Graphs
from ...relations import EdgeAdjacency
from . import model
from .graphs import check_size
from .recovery import exponential_recovery, majority_vote, weak_recovery
from .spectral import as_csr, power_method

def _parameters(epsilon, delta, n, d, gamma, alpha, beta, degree_share, needs_delta):
    """Validated public parameters, and the ε split between degree estimate and recovery."""
    epsilon = _validate.positive("epsilon", epsilon)
    if needs_delta:
        delta = _validate.probability("delta", delta, low_open=True)
    elif delta not in (None, 0, 0.0):
        raise ValueError("this estimator is pure ε-DP: leave delta unset")
    n = _validate.integer("n", n, minimum=2)
    if alpha is not None or beta is not None:
        if d is not None or gamma is not None:
            raise ValueError("give either (d, gamma) or (alpha, beta), not both")
        d, gamma = model.from_log_parameterisation(n, alpha, beta)
    if gamma is None:
        raise ValueError("gamma (or alpha and beta) is required: every sensitivity here depends on it")
    if d is None:
        gamma = _validate.probability("gamma", gamma, low_open=True, high_open=False)
        share = _validate.probability("degree_share", degree_share, low_open=True)
        return epsilon, delta, n, None, gamma, share * epsilon, remainder(epsilon, share * epsilon)
    n, d, gamma = model.check_parameters(n, d, gamma)
    return epsilon, delta, n, d, gamma, 0.0, epsilon


def _degree_steps(n: int, epsilon: float) -> list:
    """Edge count + exact discrete Laplace noise (an integer of sensitivity 1), then d̂ = 2·count/n
    and d̂/2 for a half."""
    return [
        release("edge_count", DiscreteLaplace(epsilon, sensitivity=1, coordinates=1),
                lambda graph: float(graph.sum() // 2), note="one edge changes the count by 1"),
        postprocess("d_hat", lambda edge_count: max(2.0 * edge_count / n, 1.0 / n), uses="edge_count"),
        postprocess("d_half", lambda d_hat: d_hat / 2.0, uses="d_hat"),
    ]


def _example(n: int, p: float = 0.9, q: float = 0.1, public=("epsilon", "n", "gamma"), **extra):
    """Synthetic input for audits: a small two-community SBM and its ``public`` parameters (d
    left out by default, so that the default degree estimate, an integer release, is audited too)."""
    def example(rng):
        params, adjacency, _ = _sample(n, p, q, 1.0, rng)
        return {key: params[key] for key in public} | extra, adjacency
    return example


def _stress(**extra):
    """The projection's hardest edge-adjacent pair we know: n = 8, d = 1e-5, γ = 0.1 (|Y| ~ 1e6),
    2 vs 3 edges of a seeded walk. A fixed τ = 1e-7 was certified on one and never on the other."""
    def stress(rng):
        rows, cols = np.triu_indices(8, k=1)
        order = np.random.default_rng(0).permutation(len(rows))[:3]
        three = np.zeros((8, 8))
        three[rows[order], cols[order]] = three[cols[order], rows[order]] = 1.0
        two = three.copy()
        two[rows[order[2]], cols[order[2]]] = two[cols[order[2]], rows[order[2]]] = 0.0
        return {"epsilon": 1.0, "n": 8, "d": 1e-5, "gamma": 0.1, **extra}, [(two, three)]
    return stress


def _utility(n: int, p: float, q: float, public=("epsilon", "n", "d", "gamma"), **extra):
    """Privacy–utility sampler: an SBM with within-probability p and across-probability q, and the
    error rate err(x̂, x) of the released labels against the planted ones."""
    def utility(epsilon, rng):
        params, adjacency, truth = _sample(n, p, q, epsilon, rng)
        return {key: params[key] for key in public} | extra, adjacency, lambda labels: model.error_rate(labels, truth)
    utility.metric = "misclassified fraction"
    utility.chance = 0.5  # labels that ignore the graph: half wrong, up to the global flip
    return utility


def _sample(n: int, p: float, q: float, epsilon: float, rng) -> tuple[dict, np.ndarray, np.ndarray]:
    """Public parameters (d, γ from p, q), adjacency matrix and planted labels."""
    d, gamma = n * (p + q) / 2, (p - q) / (p + q)
    adjacency, labels = model.sample(n, d, gamma, rng)
    return {"epsilon": epsilon, "n": n, "d": d, "gamma": gamma}, adjacency, labels


def _graph(name: str, n: int, eps_degree: float, body, description: str) -> Graph:
    steps = (_degree_steps(n, eps_degree) if eps_degree else []) + [body]
    root = sequence(*steps, name=name.replace(".", "_")) if len(steps) > 1 else body
    return Graph(root, EdgeAdjacency(), name=name, check_input=check_size, description=description,
                 domain=Graphs(n=n))


@register("sbm.weak", example=_example(8, delta=1e-3), utility=_utility(300, 0.5, 0.1, delta=1e-6),
          stress=_stress(delta=1e-3))
def weak(epsilon: float, delta: float, n: int, d: float | None = None, gamma: float | None = None,
         alpha: float | None = None, beta: float | None = None, target: float | None = None,
         degree_share: float = 0.1) -> Graph:
    """Private weak recovery (Algorithm C.4): certified SDP projection + Gaussian noise, (ε, δ)-DP."""
    epsilon, delta, n, d, gamma, eps_degree, eps = _parameters(epsilon, delta, n, d, gamma, alpha, beta,
                                                               degree_share, needs_delta=True)
    target = None if target is None else _validate.positive("target", target)
    body = weak_recovery("labels", eps, delta, n, d if d is not None else "d_hat", gamma, target)
    return _graph("sbm.weak", n, eps_degree, body, "weak recovery, Algorithm C.4")


@register("sbm.exact", example=_example(8, delta=1e-3), utility=_utility(300, 0.5, 0.1, delta=1e-6),
          stress=_stress(delta=1e-3))
def exact(epsilon: float, delta: float, n: int, d: float | None = None, gamma: float | None = None,
          alpha: float | None = None, beta: float | None = None, target: float | None = None,
          degree_share: float = 0.1) -> Graph:
    """Private exact recovery (Algorithms C.12, C.13): edge split, weak recovery on one half,
    Laplace majority vote on the other; (ε, δ)-DP by the random-partition rule."""
    epsilon, delta, n, d, gamma, eps_degree, eps = _parameters(epsilon, delta, n, d, gamma, alpha, beta,
                                                               degree_share, needs_delta=True)
    target = None if target is None else _validate.positive("target", target)
    half = d / 2 if d is not None else "d_half"  # G1 keeps each edge with probability 1/2
    body = split(EdgeSplit(0.5), weak_recovery("rough", eps, delta, n, half, gamma, target),
                 majority_vote("labels", eps, uses="rough"), name="edge_split")
    return _graph("sbm.exact", n, eps_degree, body, "exact recovery, Algorithms C.12 + C.13")


@register("sbm.exponential", example=_example(8), utility=_utility(16, 0.9, 0.1))
def exponential(epsilon: float, n: int, d: float | None = None, gamma: float | None = None,
                alpha: float | None = None, beta: float | None = None, delta: None = None,
                degree_share: float = 0.1) -> Graph:
    """Pure ε-DP recovery by the exponential mechanism over balanced labelings (Algorithm C.19),
    boosted by a majority vote; exact enumeration, so small n only."""
    epsilon, _, n, d, gamma, eps_degree, eps = _parameters(epsilon, delta, n, d, gamma, alpha, beta,
                                                           degree_share, needs_delta=False)
    half = d / 2 if d is not None else "d_half"
    body = split(EdgeSplit(0.5), exponential_recovery("rough", eps, n, half, gamma),
                 majority_vote("labels", eps, uses="rough"), name="edge_split")
    return _graph("sbm.exponential", n, eps_degree, body, "exponential mechanism, Algorithm C.19")


def _spectral_graph(name: str, n: int, body, description: str) -> Graph:
    return Graph(body, EdgeAdjacency(), name=name, check_input=as_csr, description=description, domain=Graphs(n=n))


def _spectral_parameters(epsilon, delta, n):
    return (checked_epsilon(epsilon), _validate.probability("delta", delta, low_open=True),
            _validate.integer("n", n, minimum=2))


_SPECTRAL = ("epsilon", "n")


@register("sbm.spectral", example=_example(8, public=_SPECTRAL, delta=1e-3, iterations=3),
          utility=_utility(300, 0.5, 0.1, public=_SPECTRAL, delta=1e-6))
def spectral(epsilon: float, delta: float, n: int, iterations: int = 10, clip: float = 0.5, seed: int = 0) -> Graph:
    """Private weak recovery at any n, sparse input, near-linear time: the noisy power method
    (``iterations`` lattice-Gaussian steps of A·x, x clipped to ±clip/√n), (ε, δ)-DP."""
    epsilon, delta, n = _spectral_parameters(epsilon, delta, n)
    body = power_method("labels", epsilon, delta, n, iterations, clip, seed)
    return _spectral_graph("sbm.spectral", n, body, "weak recovery, noisy power method")


@register("sbm.spectral_exact", example=_example(8, public=_SPECTRAL, delta=1e-3, iterations=3),
          utility=_utility(300, 0.5, 0.1, public=_SPECTRAL, delta=1e-6))
def spectral_exact(epsilon: float, delta: float, n: int, iterations: int = 10, clip: float = 0.5,
                   share: float = 0.6, seed: int = 0) -> Graph:
    """Private exact recovery at any n, sparse input, near-linear time: edge split, the noisy
    power method on the ``share`` of edges, discrete-Laplace majority vote on the rest; (ε, δ)-DP
    by the random-partition rule."""
    epsilon, delta, n = _spectral_parameters(epsilon, delta, n)
    body = split(EdgeSplit(share), power_method("rough", epsilon, delta, n, iterations, clip, seed),
                 majority_vote("labels", epsilon, uses="rough"), name="edge_split")
    return _spectral_graph("sbm.spectral_exact", n, body, "exact recovery, noisy power method + vote")
