"""The sensitivity-1 support score of ``sparse_mean.exponential``.

For a size-k coordinate set T, V_T is the data-independent finite set of unit vectors
v = w/||w||, w ∈ {-1, 0, 1}^T \\ {0} (3^k - 1 directions per T), and for public thresholds
L_1 < ... < L_m (``thresholds``)

    S(T) = (1/m) Σ_l max_{v ∈ V_T} #{i : ⟨v, X_i⟩ >= L_l}.

Sensitivity 1 under ReplaceOne: replacing one sample changes each count by at most 1, hence each
max of counts by at most 1 (max is 1-Lipschitz in ℓ∞), hence their average by at most 1. (The
seed's score is one such max at one threshold L; averaging over a grid of thresholds keeps the
sensitivity and makes the score grow with the captured signal ⟨v, μ⟩ across [0, R].)
"""

from __future__ import annotations

import itertools
import math

import numpy as np

#: Refuse when C(d, k)·(3^k - 1) (supports × directions, each scored on n samples) exceeds this.
MAX_DIRECTIONS = 50_000
#: Refuse when the per-record levels, n·C(d, k)·(3^k - 1) bytes, exceed this.
MAX_LEVELS = 2**29
#: Number of thresholds L_l, spread over [2σ, 2σ + R).
THRESHOLD_COUNT = 8
_BLOCK_ELEMENTS = 1 << 22  # projections held in memory at once


def direction_count(d: int, k: int) -> int:
    """C(d, k)·(3^k - 1), or MAX_DIRECTIONS + 1 as soon as 3^k - 1 alone exceeds the limit (so that
    C(d, k) is never computed for a huge k)."""
    per_support = 3 ** min(k, 64) - 1
    return per_support * math.comb(d, k) if per_support <= MAX_DIRECTIONS else MAX_DIRECTIONS + 1


def support_candidates(d: int, k: int) -> np.ndarray:
    """All size-k subsets of range(d), one per row, in lexicographic order; refused above the limit."""
    if direction_count(d, k) > MAX_DIRECTIONS:
        raise ValueError(f"the exponential mechanism scores C(d, k)·(3^k - 1) directions, more than "
                         f"MAX_DIRECTIONS={MAX_DIRECTIONS:,} for d={d}, k={k}; "
                         "use sparse_mean.peeling (polynomial time) instead")
    return np.array(list(itertools.combinations(range(d), k)), dtype=int).reshape(-1, k)


def unit_directions(k: int) -> np.ndarray:
    """The (3^k - 1, k) unit vectors w/||w||, w ∈ {-1, 0, 1}^k \\ {0}."""
    patterns = np.array([w for w in itertools.product((-1.0, 0.0, 1.0), repeat=k) if any(w)])
    return patterns / np.linalg.norm(patterns, axis=1, keepdims=True)


def thresholds(R: float, sigma: float) -> np.ndarray:
    """Public thresholds L_l = 2σ + R·l/m, l = 0..m-1 (above the noise level of a null direction)."""
    return 2.0 * sigma + (R / THRESHOLD_COUNT) * np.arange(THRESHOLD_COUNT)


def levels(samples: np.ndarray, supports: np.ndarray, levels_: np.ndarray) -> np.ndarray:
    """(n, supports·directions) int8: for every sample, support T and direction v ∈ V_T, how many
    of the increasing thresholds ⟨v, X_T⟩ reaches (a per-record map, position-free: each projection
    is a sum of products in index order, elementwise)."""
    directions = unit_directions(supports.shape[1])
    n = samples.shape[0]
    out = np.empty((n, supports.shape[0] * directions.shape[0]), dtype=np.int8)
    block = max(1, _BLOCK_ELEMENTS // (supports.size * directions.shape[0]))
    for start in range(0, n, block):
        chosen = samples[start:start + block][:, supports]  # (rows, supports, k)
        projections = chosen[:, :, 0, None] * directions[:, 0]
        for j in range(1, supports.shape[1]):
            projections += chosen[:, :, j, None] * directions[:, j]
        reached = np.searchsorted(levels_, projections, side="right")  # thresholds <= the projection
        out[start:start + block] = reached.reshape(len(chosen), -1)
    return out


def subset_scores(reached: np.ndarray, supports: int, count: int = THRESHOLD_COUNT) -> np.ndarray:
    """S(T) for every support (module doc) from the samples' ``levels``: the count at threshold l is
    the number of samples that reach it, exact integers in any order."""
    columns = reached.shape[1]
    tallies = np.zeros(columns * (count + 1), dtype=np.int64)  # per column, how many samples reach exactly l
    block = max(1, _BLOCK_ELEMENTS // max(columns, 1))
    offsets = np.arange(columns) * (count + 1)
    for start in range(0, reached.shape[0], block):
        tallies += np.bincount((reached[start:start + block] + offsets).ravel(), minlength=len(tallies))
    at_least = np.cumsum(tallies.reshape(columns, count + 1)[:, ::-1], axis=1)[:, ::-1]  # reach >= l
    per_direction = at_least[:, 1:].T.reshape(count, supports, -1)  # (levels, supports, directions)
    return per_direction.max(axis=2).mean(axis=0)
