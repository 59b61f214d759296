"""The stochastic block model SBM_n(d, γ, x), its log-n parameterisation, and the error rate.

Edge {i, j} appears independently with probability (1 + γ·x_i·x_j)·d/n for balanced labels
x ∈ {±1}^n. Appendix C.2 writes exact recovery with within-probability α·log(n)/n and across-
probability β·log(n)/n, i.e. SBM_n((α+β)/2·log n, (α-β)/(α+β), x).
"""

from __future__ import annotations

import math

import numpy as np

from ... import _random, _validate


def check_parameters(n: int, d: float, gamma: float) -> tuple[int, float, float]:
    """Validated (n, d, γ): n >= 2, d > 0, γ in (0, 1], and edge probabilities within [0, 1]."""
    n = _validate.integer("n", n, minimum=2)
    d = _validate.positive("d", d)
    gamma = _validate.probability("gamma", gamma, low_open=True, high_open=False)
    if (1 + gamma) * d / n > 1:
        raise ValueError(f"(1 + gamma)·d/n = {(1 + gamma) * d / n:.3g} > 1 is not a probability; lower d")
    return n, d, gamma


def from_log_parameterisation(n: int, alpha: float, beta: float) -> tuple[float, float]:
    """(d, γ) for within-probability α log(n)/n and across-probability β log(n)/n (α > β > 0)."""
    alpha, beta = _validate.positive("alpha", alpha), _validate.positive("beta", beta)
    if alpha <= beta:
        raise ValueError(f"need alpha > beta (assortative communities), got alpha={alpha}, beta={beta}")
    n = _validate.integer("n", n, minimum=2)
    return (alpha + beta) / 2 * math.log(n), (alpha - beta) / (alpha + beta)


def balanced_labels(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random balanced x ∈ {±1}^n (one more +1 when n is odd)."""
    labels = np.where(np.arange(n) < (n + 1) // 2, 1, -1)
    return rng.permutation(labels)


def sample(n: int, d: float, gamma: float, rng: np.random.Generator | None = None,
           labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Draw (adjacency matrix, labels) from SBM_n(d, γ, x); x balanced at random unless given."""
    n, d, gamma = check_parameters(n, d, gamma)
    rng = _random.generator(rng)
    x = balanced_labels(n, rng) if labels is None else np.asarray(labels)
    if x.shape != (n,) or not np.all(np.abs(x) == 1):
        raise ValueError(f"labels must be a ±1 vector of length n={n}")
    probability = (1 + gamma * np.outer(x, x)) * d / n
    upper = np.triu(rng.random((n, n)) < probability, k=1)
    adjacency = (upper | upper.T).astype(float)
    return adjacency, x


def sample_log(n: int, alpha: float, beta: float, rng: np.random.Generator | None = None):
    """Draw from the log-n parameterisation of Appendix C.2."""
    d, gamma = from_log_parameterisation(n, alpha, beta)
    return sample(n, d, gamma, rng)


def error_rate(estimate, truth) -> float:
    """err(x̂, x) = min(Ham(x̂, x), Ham(x̂, -x))/n: the fraction misclassified, up to a global flip."""
    estimate, truth = np.asarray(estimate), np.asarray(truth)
    if estimate.shape != truth.shape or estimate.ndim != 1:
        raise ValueError(f"estimate and truth must be vectors of one length, got {estimate.shape} and {truth.shape}")
    wrong = int(np.count_nonzero(estimate != truth))
    return min(wrong, truth.size - wrong) / truth.size
