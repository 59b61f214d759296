"""One private Lloyd step's query: per-cluster sums of clipped offsets and the cluster sizes.

Every point x is assigned to its nearest public centre a_j (or, for the map-back step, to the
nearest centre of a projection of x), its offset x − a_j is clipped to length ``clip`` (``terms``,
a per-record map, position-free: ``rowwise``), and the query answers the vector z = [S_1, …, S_k, clip·N_1, …, clip·N_k] of k(d + 1) coordinates: the
sums S_j of the clipped offsets and the counts N_j, scaled by ``clip``. Assignment and clipping
are maps of each point alone, so when one point changes from x to x' (ReplaceOne) only the terms
of that point change: in one cluster S_j moves by at most 2·clip; between clusters a ≠ b, S_a
and S_b by at most clip each and the scaled counts by clip each, so ||z − z'|| <= sqrt(4)·clip
either way. Scaling the counts by ``clip`` is what makes them free: the counts cost nothing the
sums do not already pay (docs/proofs.md, "gmm.projected").

``step_sensitivity`` adds what floating point can add to that bound on every input: the length of
a computed clipped offset, the rounding of the sums in any order and of clip·N.
"""

from __future__ import annotations

import math

import numpy as np

from ... import rowwise
from ...rounding import EVALUATION, UNIT_ROUNDOFF, gamma

#: most points a step accepts: the summation term n·γ_n of the sensitivity grows like n²u, 1% at
#: n = 10^7 (and 2× at 10^8)
MAX_POINTS = 10**7
#: smallest clip radius accepted (``rowwise.MIN_LENGTH``): from 1e-100 up, underflow moves a
#: clipped offset by at most sqrt(d)·2^-1074, far inside the γ allowance (docs/proofs.md)
MIN_CLIP = rowwise.MIN_LENGTH


def step_sensitivity(n: int, d: int, clip: float) -> float:
    """ℓ2-sensitivity of the computed ``clipped_sums`` of n points in R^d, rounding included.

    A computed clipped offset is at most b = clip·(1 + γ_{2d+10}) long (d squares summed, a square
    root, a division and a product); any summation order of at most n such vectors errs by at most
    γ_n·n·b in ℓ2 (Higham §4.2, coordinatewise), and each clip·N_j by u·clip·N_j. Exact answers
    on neighbours differ by at most 2b, so the computed ones by 2(b + n·γ_n·b + u·clip·n).
    """
    if n > MAX_POINTS:
        raise ValueError(f"a Lloyd step takes at most {MAX_POINTS:.0e} points, got n={n}")
    if not clip >= MIN_CLIP:
        raise ValueError(f"clip radius {clip:g} is below {MIN_CLIP:g}, where rounding could leave offsets unclipped; "
                         "rescale the data")
    length = clip * (1 + gamma(2 * d + 10))
    bound = 2.0 * (length + n * gamma(n) * length + UNIT_ROUNDOFF * clip * n) * EVALUATION
    if not math.isfinite(bound):
        raise ValueError(f"clip radius {clip:g} is too large: its sensitivity overflows; rescale the data")
    return bound


def terms(points: np.ndarray, labels: np.ndarray, anchors: np.ndarray, clip: float) -> np.ndarray:
    """(n, 1 + d): each point's label j and its offset x − a_j shortened to ``clip`` (a per-record
    map, position-free: ``rowwise``)."""
    return np.column_stack([labels.astype(float), rowwise.shortened(points - anchors[labels], clip)])


def clipped_sums(mapped: np.ndarray, k: int, clip: float) -> np.ndarray:
    """z = [S_1, …, S_k, clip·N_1, …, clip·N_k] (module doc) from the points' ``terms``:
    S_j = Σ_{label j} clipped offset, N_j the number of points labelled j."""
    labels, offsets = mapped[:, 0].astype(np.int64), mapped[:, 1:]
    sums = np.zeros((k, offsets.shape[1]))
    for j in range(k):
        sums[j] = offsets[labels == j].sum(axis=0)
    counts = np.bincount(labels, minlength=k).astype(float)
    return np.concatenate([sums.ravel(), clip * counts])


def centres_from(noisy: np.ndarray, anchors: np.ndarray, clip: float) -> np.ndarray:
    """The new centres a_j + m_j from a noisy z (post-processing): m_j = S̃_j / max(Ñ_j, 1), projected
    onto the ball of radius ``clip``. The mean of offsets clipped to ``clip`` lies in that ball, so
    the projection only brings m_j closer to it; the floor 1 keeps an empty or negative noisy
    count from dividing by zero, and the projection keeps its noise from throwing the centre away."""
    k, d = anchors.shape
    sums = np.asarray(noisy[: k * d], dtype=float).reshape(k, d)
    counts = np.asarray(noisy[k * d:], dtype=float) / clip
    return anchors + rowwise.shortened(sums / np.maximum(counts, 1.0)[:, None], clip)


def weighted_kmeans(points: np.ndarray, weights: np.ndarray, k: int, seed: int, restarts: int = 100,
                    iterations: int = 30) -> np.ndarray:
    """k centres of weighted points by k-means++ seeding and Lloyd's iterations, the best of
    ``restarts`` (post-processing of released cells: the coins come from the public ``seed``).
    With k = 10 clusters in 64 dimensions, 10 restarts merged two clusters in 7 of 16 runs and 100
    in none; the cells are few (hundreds), so restarts are cheap."""
    rng = np.random.default_rng(seed)
    squares = (points * points).sum(axis=1)

    def scores(centres: np.ndarray) -> np.ndarray:
        return squares[:, None] + (centres * centres).sum(axis=1)[None, :] - 2.0 * (points @ centres.T)

    def draw(mass: np.ndarray) -> np.ndarray:  # all mass on chosen points (cells equal as doubles): by weight
        total = mass.sum()
        return points[rng.choice(len(points), p=mass / total if total > 0 else weights / weights.sum())]

    best, best_cost = None, math.inf
    for _ in range(restarts):
        centres = draw(weights)[None, :]
        gaps = ((points - centres[0]) ** 2).sum(axis=1)
        for _ in range(1, k):
            chosen = draw(weights * gaps)
            centres = np.vstack([centres, chosen])
            gaps = np.minimum(gaps, ((points - chosen) ** 2).sum(axis=1))
        labels = None
        for _ in range(iterations):
            new = np.argmin(scores(centres), axis=1)
            if labels is not None and np.array_equal(new, labels):
                break
            labels = new
            members = (labels[None, :] == np.arange(k)[:, None]) * weights[None, :]
            totals = members.sum(axis=1)
            moved = (members @ points) / np.maximum(totals, np.finfo(float).tiny)[:, None]
            centres = np.where(totals[:, None] > 0, moved, centres)
        cost = float((weights * np.maximum(scores(centres).min(axis=1), 0.0)).sum())
        if cost < best_cost:
            best, best_cost = centres, cost
    return best
