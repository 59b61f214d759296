"""The stochastic block model SBM_n(d, γ, x), its log-n parameterisation, and the error rate.

Edge {i, j} appears independently with probability (1 + γ·x_i·x_j)·d/n for balanced labels
x ∈ {±1}^n. Appendix C.2 writes exact recovery with within-probability α·log(n)/n and across-
probability β·log(n)/n, i.e. SBM_n((α+β)/2·log n, (α-β)/(α+β), x).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

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


def _labels(n: int, labels, rng: np.random.Generator) -> np.ndarray:
    x = balanced_labels(n, rng) if labels is None else np.asarray(labels)
    if x.shape != (n,) or not np.all(np.abs(x) == 1):
        raise ValueError(f"labels must be a ±1 vector of length n={n}")
    return x


def sample(n: int, d: float, gamma: float, rng: np.random.Generator | None = None,
           labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Draw (adjacency matrix, labels) from SBM_n(d, γ, x); x balanced at random unless given."""
    n, d, gamma = check_parameters(n, d, gamma)
    rng = _random.generator(rng)
    x = _labels(n, labels, rng)
    probability = (1 + gamma * np.outer(x, x)) * d / n
    upper = np.triu(rng.random((n, n)) < probability, k=1)
    adjacency = (upper | upper.T).astype(float)
    return adjacency, x


def sample_log(n: int, alpha: float, beta: float, rng: np.random.Generator | None = None):
    """Draw from the log-n parameterisation of Appendix C.2."""
    d, gamma = from_log_parameterisation(n, alpha, beta)
    return sample(n, d, gamma, rng)


_CHUNK = 1 << 22  # pairs decoded per pass, to bound the temporaries


def _subset(total: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random ``size``-subset of range(``total``), sorted, in O(size) memory.

    Draws with replacement until ``size`` distinct values are in hand, then keeps a uniformly random
    ``size`` of them: given its size, the set of distinct draws is uniform by symmetry. A block
    denser than 1/4 is sampled directly (O(total) = O(size) there)."""
    if 4 * size >= total:
        return np.sort(rng.choice(total, size=size, replace=False, shuffle=False))
    collisions = -total * math.log1p(-size / total) - size  # expected repeats among the draws
    keys = _distinct(rng.integers(0, total, size=size + math.ceil(collisions + 4 * math.sqrt(collisions)) + 16))
    while keys.size < size:
        keys = _distinct(np.concatenate([keys, rng.integers(0, total, size=2 * (size - keys.size) + 16)]))
    if keys.size > size:
        keys = np.delete(keys, rng.choice(keys.size, size=keys.size - size, replace=False))
    return keys


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (``values`` is sorted in place; faster than ``np.unique`` here)."""
    values.sort()
    return values[np.concatenate([[True], values[1:] != values[:-1]])]


def _triangular(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j), i < j, for pair indices k = j(j-1)/2 + i; the float square root is corrected by ±1."""
    j = np.floor((1 + np.sqrt(1 + 8 * keys.astype(float))) / 2).astype(np.int64)
    j -= j * (j - 1) // 2 > keys
    j += (j + 1) * j // 2 <= keys
    return keys - j * (j - 1) // 2, j


def sample_sparse(n: int, d: float, gamma: float, rng: np.random.Generator | None = None,
                  labels: np.ndarray | None = None) -> tuple[sp.csr_matrix, np.ndarray]:
    """``sample`` as a scipy CSR matrix, in O(n + m) memory and O(n + m log m) time for m edges.

    For each block (within +1, within -1, across) the edge count is binomial over the block's
    pairs and the edges a uniformly random subset of that size: the same distribution as
    independent coins per pair. Indices are int32 when they fit."""
    n, d, gamma = check_parameters(n, d, gamma)
    rng = _random.generator(rng)
    x = _labels(n, labels, rng)
    plus, minus = np.flatnonzero(x == 1), np.flatnonzero(x == -1)
    within, across = (1 + gamma) * d / n, (1 - gamma) * d / n
    blocks = [(plus, plus, plus.size * (plus.size - 1) // 2, within),
              (minus, minus, minus.size * (minus.size - 1) // 2, within),
              (plus, minus, plus.size * minus.size, across)]
    counts = [int(rng.binomial(total, p)) for _, _, total, p in blocks]
    m = sum(counts)
    keys = np.empty(2 * m, dtype=np.int64)  # u·n + v for both directions of every edge
    start = 0
    for (a, b, total, _), count in zip(blocks, counts):
        pairs = _subset(total, count, rng)
        for low in range(0, count, _CHUNK):
            chunk = pairs[low:low + _CHUNK]
            i, j = _triangular(chunk) if a is b else np.divmod(chunk, b.size)  # within: i < j
            u, v = a[i], b[j]
            keys[start:start + chunk.size] = u * n + v
            keys[m + start:m + start + chunk.size] = v * n + u
            start += chunk.size
        del pairs
    keys.sort()
    index = np.int32 if max(n, 2 * m) < 2**31 else np.int64
    indptr = np.searchsorted(keys, np.arange(n + 1, dtype=np.int64) * n).astype(index)
    indices = np.empty(2 * m, dtype=index)
    for low in range(0, 2 * m, _CHUNK):
        indices[low:low + _CHUNK] = keys[low:low + _CHUNK] % n
    del keys
    return sp.csr_matrix((np.ones(2 * m), indices, indptr), shape=(n, n)), x


def sample_sparse_log(n: int, alpha: float, beta: float, rng: np.random.Generator | None = None):
    """``sample_sparse`` in the log-n parameterisation of Appendix C.2 (p = α ln n/n, q = β ln n/n)."""
    d, gamma = from_log_parameterisation(n, alpha, beta)
    return sample_sparse(n, d, gamma, rng)


def error_rate(estimate, truth) -> float:
    """err(x̂, x) = min(Ham(x̂, x), Ham(x̂, -x))/n: the fraction misclassified, up to a global flip."""
    estimate, truth = np.asarray(estimate), np.asarray(truth)
    if estimate.shape != truth.shape or estimate.ndim != 1:
        raise ValueError(f"estimate and truth must be vectors of one length, got {estimate.shape} and {truth.shape}")
    wrong = int(np.count_nonzero(estimate != truth))
    return min(wrong, truth.size - wrong) / truth.size
