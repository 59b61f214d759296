"""Step 1 of Algorithm D.5: the relaxed membership matrix W, with a certified solution.

    W = argmin ||W − c·J||_F²  over  K(Y) = {W symmetric, 0 <= W_ij <= 1, W_ij = 0 when
                                            ||y_i − y_j|| > r, Σ_j W_ij <= cap for every i}.

The objective is 2-strongly convex and does not depend on Y; only K(Y) does, through the radius
mask. Zeroing the row and column of the changed sample maps any point of K(Y) into
K(Y) ∩ K(Y') (the mask of the other rows is unchanged, row sums only drop), which is the
property Lemma B.1 needs (docs/proofs.md, "gmm.centres").

Solver: projected accelerated gradient ascent on the dual of the row-sum constraints (u >= 0).
For fixed u the minimiser is entrywise, W(u)_ij = clip(c − (u_i + u_j)/4, 0, 1) on the mask.
Certificate: scaling the rows of W(u) down to their cap gives a feasible W_f; the duality gap
f(W_f) − g(u) is a sum of non-negative terms (computed without cancellation, plus a
floating-point allowance), and 2-strong convexity gives ||W_f − W*||_F <= sqrt(gap).
cvxpy is the reference oracle for small n; its dual is certified the same way.

The "neighbourhood" method skips W: the weights of row i are the indicator of the points within
r of y_i (``neighbourhoods``). Both methods form ν(i) with ``representatives``.
"""

from __future__ import annotations

import math

import numpy as np

from ...stability import CertifiedSolution

#: Dual iterations before the solver gives up (the caller then halts, never releases).
MAX_ITERATIONS = 20_000
#: How often (in iterations) the duality gap is evaluated.
CHECK_EVERY = 10


def radius_mask(points: np.ndarray, radius: float) -> np.ndarray:
    """Boolean n×n mask of the pairs within ``radius`` (the diagonal included)."""
    squares = np.einsum("ij,ij->i", points, points)
    distances = squares[:, None] + squares[None, :] - 2.0 * (points @ points.T)
    return distances <= radius * radius


def primal(u: np.ndarray, mask: np.ndarray, c: float) -> np.ndarray:
    """The minimiser of the Lagrangian for multipliers ``u``: clip(c − (u_i + u_j)/4, 0, 1) on the mask."""
    return np.where(mask, np.clip(c - 0.25 * (u[:, None] + u[None, :]), 0.0, 1.0), 0.0)


def feasible(w: np.ndarray, cap: float) -> np.ndarray:
    """Scale entry (i, j) by min(1, cap/rowsum_i, cap/rowsum_j): symmetric, in the box, rows <= cap."""
    sums = w.sum(axis=1)
    scale = np.minimum(1.0, cap * (1.0 - 1e-12) / np.maximum(sums, np.finfo(float).tiny))
    return w * np.minimum(scale[:, None], scale[None, :])


def duality_gap(u: np.ndarray, mask: np.ndarray, c: float, cap: float) -> tuple[np.ndarray, float]:
    """(feasible W_f, certified upper bound on f(W_f) − g(u)), every term non-negative.

    Per entry h(w) = (w − c)² + w(u_i + u_j)/2 is minimised over [0, 1] by W(u); the gap is
    Σ_ij [h(W_f) − h(W(u))] + Σ_i u_i (cap − rowsum_i(W_f)). The allowance bounds the rounding
    error of these sums.
    """
    wu = primal(u, mask, c)
    wf = feasible(wu, cap)
    half = 0.5 * (u[:, None] + u[None, :])
    diff = wf - wu
    terms = diff * (wf + wu - 2.0 * c + half)
    slack = u * (cap - wf.sum(axis=1))
    size = float(np.abs(diff).sum() * (2.0 + 2.0 * c) + np.abs(diff * half).sum() + (u * cap).sum() * 2)
    allowance = 8.0 * np.finfo(float).eps * (size + mask.shape[0] ** 2)
    return wf, float(max(terms.sum(), 0.0) + max(slack.sum(), 0.0) + allowance)


def solve(points: np.ndarray, radius: float, cap: float, c: float, target: float,
          max_iterations: int = MAX_ITERATIONS) -> CertifiedSolution:
    """W for ``points``, certified within ``target`` (Frobenius) of the exact minimiser, if reached.

    Accelerated projected gradient ascent on the dual (step 2/max-degree: the dual gradient
    rowsum(W(u)) − cap is Lipschitz with constant max-degree/2), with adaptive restart.
    """
    mask = radius_mask(points, radius)
    n = mask.shape[0]
    step = 2.0 / max(int(mask.sum(axis=1).max()), 1)
    u = np.zeros(n)
    best = _certify(u, mask, c, cap, target, 0)
    y, previous, momentum, iterations = u.copy(), u.copy(), 1.0, 0
    while not best.meets_target and iterations < max_iterations:
        iterations += 1
        u = np.maximum(0.0, y + step * (primal(y, mask, c).sum(axis=1) - cap))
        following = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * momentum * momentum))
        if np.dot(u - previous, y - u) > 0:  # restart when the momentum points uphill of the step
            following = 1.0
        y = u + ((momentum - 1.0) / following) * (u - previous)
        previous, momentum = u, following
        if iterations % CHECK_EVERY == 0:
            candidate = _certify(u, mask, c, cap, target, iterations)
            if candidate.certified_error < best.certified_error:
                best = candidate
    return best


def _certify(u, mask, c, cap, target, iterations) -> CertifiedSolution:
    wf, gap = duality_gap(u, mask, c, cap)
    return CertifiedSolution(wf, math.sqrt(gap), target, iterations=iterations, work=iterations, gap=gap)


def solve_cvxpy(points: np.ndarray, radius: float, cap: float, c: float, target: float) -> CertifiedSolution:
    """Reference oracle: the same program through cvxpy (small n); its dual multipliers are
    certified by ``duality_gap`` exactly as the production solver's are."""
    import cvxpy as cp

    mask = radius_mask(points, radius)
    n = mask.shape[0]
    w = cp.Variable((n, n), symmetric=True)
    rows = cp.sum(w, axis=1) <= cap
    problem = cp.Problem(cp.Minimize(cp.sum_squares(w - c)), [w >= 0, w <= mask.astype(float), rows])
    problem.solve()
    u = np.maximum(np.asarray(rows.dual_value, dtype=float).reshape(n), 0.0)
    return _certify(u, mask, c, cap, target, 0)


def soft_threshold(w: np.ndarray, low: float, high: float) -> np.ndarray:
    """ϕ of Definition D.4 with tunable knees: 0 below ``low``, 1 above ``high``, linear between
    ((high − low)^-1-Lipschitz; the paper's 0.8/0.9 give 10)."""
    return np.clip((w - low) / (high - low), 0.0, 1.0)


def neighbourhoods(points: np.ndarray, rows: np.ndarray, radius: float) -> np.ndarray:
    """0/1 weights (len(rows), n): which points lie within ``radius`` of each point in ``rows``
    (the "neighbourhood" method's replacement for steps 1–2)."""
    chosen = points[rows]
    squares = np.einsum("ij,ij->i", points, points)
    distances = squares[rows][:, None] + squares[None, :] - 2.0 * (chosen @ points.T)
    return (distances <= radius * radius).astype(float)


def representatives(points: np.ndarray, weights: np.ndarray, rows: np.ndarray, radius: float,
                    floor: float) -> np.ndarray:
    """ν(i) = y_i + Σ_j a_ij·clip_r(y_j − y_i) / max(Σ_j a_ij, floor) for i in ``rows`` (step 4);
    ``weights`` holds the rows a_i (one per entry of ``rows``).

    ``clip_r`` caps each offset's length at the radius, so every term is provably at most r
    long whatever the rounding in the mask; the floor bounds the normaliser's Lipschitz constant.
    """
    out = np.empty((len(rows), points.shape[1]))
    for position, i in enumerate(rows):
        a = weights[position]
        offsets = points - points[i]
        lengths = np.sqrt(np.einsum("ij,ij->i", offsets, offsets))
        offsets *= (radius / np.maximum(lengths, radius))[:, None]
        out[position] = points[i] + (a @ offsets) / max(a.sum(), floor)
    return out
