"""Data-independent random partitions and subsamples of an input's units (edges or rows).

They cost nothing by themselves; what they buy is a composition rule. ``EdgeSplit`` and
``RowSplit`` put every unit in exactly one part, independently of the data, which is what the
random-partition rule needs (argument of Lemma C.15). ``PoissonSample`` and
``SampleWithoutReplacement`` feed amplification by subsampling.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import scipy.sparse as sp

from .. import _random, _validate
from ..relations import EdgeAdjacency


def _probabilities(value) -> tuple[float, ...]:
    probs = tuple(_validate.probability(f"probabilities[{i}]", p, low_open=True) for i, p in enumerate(value))
    if len(probs) < 2 or abs(sum(probs) - 1.0) > 1e-12:
        raise ValueError(f"probabilities must list at least two parts and sum to 1, got {value!r}")
    return probs


@attrs.frozen
class EdgeSplit:
    """Each edge of a graph goes to G1 with probability ``probability``, else to G2 (Alg. C.12)."""

    probability: float = attrs.field(
        default=0.5, converter=lambda v: _validate.probability("probability", v, low_open=True)
    )
    n_parts = 2

    def parts(self, graph, rng: np.random.Generator | None = None):
        """(G1, G2), dense for a dense graph; for a sparse one, CSR in O(n + m), one coin per edge
        (in row-major order of the upper triangle)."""
        graph = EdgeAdjacency.validate(graph)
        rng = _random.generator(rng)
        if sp.issparse(graph):
            first = _sparse_coins(graph, self.probability, rng)
            return _kept(graph, first), _kept(graph, ~first)
        coins = np.triu(rng.random(graph.shape) < self.probability, k=1)
        coins = coins | coins.T
        first = np.where(coins, graph, 0.0)
        return first, graph - first


def _sparse_coins(graph: sp.csr_matrix, probability: float, rng: np.random.Generator) -> np.ndarray:
    """Per stored entry of a canonical symmetric CSR graph: does its edge go to G1? One coin per
    upper-triangular entry, copied to its mirror (found by transposing the entries' positions)."""
    position = sp.csr_matrix((np.arange(graph.nnz, dtype=graph.indices.dtype), graph.indices, graph.indptr),
                             shape=graph.shape)
    mirror = position.T.tocsr().data  # mirror[k]: where entry k's transpose is stored
    upper = mirror > position.data  # (i, j) with i < j is stored before (j, i)
    del position
    coins = np.empty(graph.nnz, dtype=bool)
    coins[upper] = rng.random(np.count_nonzero(upper)) < probability
    lower = ~upper
    coins[lower] = coins[mirror[lower]]
    return coins


def _kept(graph: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """The graph with only the stored entries where ``keep`` is True (canonical, like ``graph``)."""
    indptr = np.concatenate([[0], np.cumsum(keep, dtype=graph.indptr.dtype)])[graph.indptr]
    return sp.csr_matrix((np.ones(indptr[-1]), graph.indices[keep], indptr), shape=graph.shape)


@attrs.frozen
class RowSplit:
    """Each row goes to part i with probability ``probabilities[i]``, independently."""

    probabilities: tuple[float, ...] = attrs.field(default=(0.5, 0.5), converter=_probabilities)

    @property
    def n_parts(self) -> int:
        return len(self.probabilities)

    def parts(self, data, rng: np.random.Generator | None = None) -> tuple[np.ndarray, ...]:
        rows = np.asarray(data)
        labels = _random.generator(rng).choice(self.n_parts, size=rows.shape[0], p=self.probabilities)
        return tuple(rows[labels == i] for i in range(self.n_parts))


@attrs.frozen
class PoissonSample:
    """Keeps each row independently with probability ``rate`` (amplification under AddRemoveOne).

    numpy draws uniforms on the grid k·2^-53, so ``u < t`` holds with probability ceil(t·2^53)/2^53;
    the threshold ⌊rate·2^53⌋/2^53 makes that at most ``rate``, and a smaller rate is never less
    private ((1 − q')P + q'R is a mixture of P and (1 − q)P + qR for q' <= q: docs/proofs.md)."""

    rate: float = attrs.field(converter=lambda v: _validate.probability("rate", v, low_open=True, high_open=False))

    @property
    def threshold(self) -> float:
        return math.floor(self.rate * 2.0**53) * 2.0**-53

    def subsample(self, data, rng: np.random.Generator | None = None) -> np.ndarray:
        rows = np.asarray(data)
        return rows[_random.generator(rng).random(rows.shape[0]) < self.threshold]

    def subsample_each(self, data, rng: np.random.Generator | None, count: int) -> list[np.ndarray]:
        """``count`` independent subsamples of ``data``, each distributed as ``subsample`` (the
        uniforms of many at once, at most 2^22 per draw)."""
        rows, rng = np.asarray(data), _random.generator(rng)
        n, out = rows.shape[0], []
        step = max(1, 2**22 // max(n, 1))
        while len(out) < count:
            keep = rng.random((min(step, count - len(out)), n)) < self.threshold
            out.extend(rows[mask] for mask in keep)
        return out


@attrs.frozen
class SampleWithoutReplacement:
    """Keeps ``size`` of the n rows, uniformly without replacement (amplification under ReplaceOne)."""

    size: int = attrs.field(converter=lambda v: _validate.integer("size", v, minimum=1))
    n: int = attrs.field(converter=lambda v: _validate.integer("n", v, minimum=1))

    def __attrs_post_init__(self):
        if self.size > self.n:
            raise ValueError(f"size must be <= n, got size={self.size} > n={self.n}")

    @property
    def rate(self) -> float:
        return self.size / self.n

    def subsample(self, data, rng: np.random.Generator | None = None) -> np.ndarray:
        rows = np.asarray(data)
        if rows.shape[0] != self.n:
            raise ValueError(f"data must have n={self.n} rows (public under ReplaceOne), got {rows.shape[0]}")
        return rows[np.sort(_random.generator(rng).choice(self.n, size=self.size, replace=False))]
