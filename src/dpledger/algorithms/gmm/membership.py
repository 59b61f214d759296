"""Step 1 of Algorithm D.5: the relaxed membership matrix W, with a certified solution.

    W = argmin ||W − c·J||_F²  over  K(Y) = {W symmetric, 0 <= W_ij <= 1, W_ij = 0 when
                                            ||y_i − y_j|| > r, Σ_j W_ij <= cap for every i}.

The objective is 2-strongly convex and does not depend on Y; only K(Y) does, through the radius
mask. Zeroing the row and column of the changed sample maps any point of K(Y) into
K(Y) ∩ K(Y') (the mask of the other rows is unchanged, row sums only drop), which is the
property Lemma B.1 needs (docs/proofs.md, "gmm.centres").

Solver: monotone accelerated projected gradient ascent (Beck & Teboulle's MFISTA, 2009) on the
dual of the row-sum constraints (u >= 0). For fixed u the minimiser is entrywise,
W(u)_ij = clip(c − (u_i + u_j)/4, 0, 1) on the mask, and the dual
g(u) = Σ_mask h_ij(W(u)_ij) + Σ_off-mask c² − cap·Σ_i u_i is concave with a gradient
rowsum(W(u)) − cap that is Lipschitz with constant max-degree/2. MFISTA never lets g decrease and
converges as O(1/k²) for every input, so the certificate below reaches any target above its
floating-point floor (``accuracy_floor``): no input makes the solver give up (docs/proofs.md).
Certificate: scaling the rows of W(u) down to their cap gives a feasible W_f; the duality gap
f(W_f) − g(u) is a sum of non-negative terms (computed without cancellation, plus a
floating-point allowance), and 2-strong convexity gives ||W_f − W*||_F <= sqrt(gap).
cvxpy is the reference oracle in tests (small n); its dual is certified the same way.

The "neighbourhood" method skips W: the weights of row i are the indicator of the points within
r of y_i (``neighbourhoods``). Both methods form ν(i) with ``representatives``.

Domain: every finite point. Both methods first clamp each coordinate to ±2^300 (``clamped``), so
that no squared distance overflows; clamping is a map of each row alone, so neighbouring datasets
stay neighbours and every guarantee is unchanged (only points beyond ±2^300 move).
"""

from __future__ import annotations

import math

import numpy as np

from ... import rowwise
from ...stability import CertifiedSolution

#: How often (in iterations) the duality gap is evaluated.
CHECK_EVERY = 10
#: ``feasible`` scales rows to cap·(1 − margin), so that rounding in a row sum never exceeds cap.
FEASIBLE_MARGIN = 1e-12
_EPS = float(np.finfo(float).eps)


#: ``representatives`` forms the offsets of about this many (point, coordinate) pairs at a time.
BLOCK = 2**20
#: Coordinates are clamped to ±LIMIT before anything else (module doc).
LIMIT = 2.0**300


def clamped(points: np.ndarray) -> np.ndarray:
    """Each coordinate clamped to ±LIMIT: squared distances between clamped points stay finite."""
    return np.clip(points, -LIMIT, LIMIT)


def radius_mask(points: np.ndarray, radius: float) -> np.ndarray:
    """Boolean n×n mask of the pairs within ``radius`` (the diagonal included). Whether a pair is in
    depends on its two points alone, bit for bit (``rowwise.squared_distances``, position-free and
    symmetric): on neighbouring inputs only the changed point's row and column differ."""
    return rowwise.squared_distances(points, points) <= radius * radius


def primal(u: np.ndarray, mask: np.ndarray, c: float) -> np.ndarray:
    """The minimiser of the Lagrangian for multipliers ``u``: clip(c − (u_i + u_j)/4, 0, 1) on the mask."""
    return np.where(mask, np.clip(c - 0.25 * (u[:, None] + u[None, :]), 0.0, 1.0), 0.0)


def feasible(w: np.ndarray, cap: float) -> np.ndarray:
    """Scale entry (i, j) by min(1, cap/rowsum_i, cap/rowsum_j): symmetric, in the box, rows <= cap."""
    sums = w.sum(axis=1)
    scale = np.minimum(1.0, cap * (1.0 - FEASIBLE_MARGIN) / np.maximum(sums, np.finfo(float).tiny))
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


def accuracy_floor(n: int, c: float, cap: float) -> float:
    """A target every input reaches: twice the certificate's floor at the optimum u*, where only
    ``duality_gap``'s allowance and the slack left by ``feasible``'s margin remain. With
    0 <= u*_i <= 4c (a row with u_i > 4c would be all zero, below its cap, so its multiplier would
    vanish) these are at most 8·eps·(n²(3 + 6c) + 8·n·c·cap) and n·4c·cap·FEASIBLE_MARGIN
    (docs/proofs.md)."""
    allowance = 8.0 * _EPS * (n * n * (3.0 + 6.0 * c) + 8.0 * n * c * cap)
    slack = n * 4.0 * c * cap * FEASIBLE_MARGIN
    return 2.0 * math.sqrt(allowance + slack)


def solve(points: np.ndarray, radius: float, cap: float, c: float, target: float,
          max_iterations: int | None = None) -> CertifiedSolution:
    """W for ``points``, certified within ``target`` (Frobenius) of the exact minimiser.

    MFISTA on the dual (step 2/max-degree), the gap checked every ``CHECK_EVERY`` iterations.
    With ``target >= accuracy_floor`` every input reaches the target; ``max_iterations`` (None:
    no limit) is for experiments that want the best certificate after a fixed effort.
    """
    mask = radius_mask(points, radius)
    n = mask.shape[0]
    step = 2.0 / max(int(mask.sum(axis=1).max()), 1)
    u = np.zeros(n)
    best = _certify(u, mask, c, cap, target, 0)
    value = dual_value(u, mask, c, cap)
    y, momentum, iterations = u.copy(), 1.0, 0
    while not best.meets_target and (max_iterations is None or iterations < max_iterations):
        iterations += 1
        z = np.maximum(0.0, y + step * (primal(y, mask, c).sum(axis=1) - cap))
        z_value = dual_value(z, mask, c, cap)
        previous = u
        if z_value >= value:  # the monotone step of MFISTA: keep the better of z and u
            u, value = z, z_value
        following = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * momentum * momentum))
        y = u + (momentum / following) * (z - u) + ((momentum - 1.0) / following) * (u - previous)
        momentum = following
        if iterations % CHECK_EVERY == 0:
            candidate = _certify(u, mask, c, cap, target, iterations)
            if candidate.certified_error < best.certified_error:
                best = candidate
    return best


def dual_value(u: np.ndarray, mask: np.ndarray, c: float, cap: float) -> float:
    """g(u) = min over the box of the Lagrangian (module doc)."""
    w = primal(u, mask, c)
    half = 0.5 * (u[:, None] + u[None, :])
    inside = np.where(mask, (w - c) ** 2 + w * half, 0.0).sum()
    return float(inside + c * c * np.count_nonzero(~mask) - cap * u.sum())


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
    (the "neighbourhood" method's replacement for steps 1–2; position-free, as ``radius_mask``)."""
    return (rowwise.squared_distances(points[rows], points) <= radius * radius).astype(float)


def representatives(points: np.ndarray, weights: np.ndarray, rows: np.ndarray, radius: float,
                    floor: float) -> np.ndarray:
    """ν(i) = y_i + Σ_j a_ij·clip_r(y_j − y_i) / max(Σ_j a_ij, floor) for i in ``rows`` (step 4);
    ``weights`` holds the rows a_i (one per entry of ``rows``).

    ``clip_r`` caps each offset's length at the radius (computed offsets are at most
    r·(1 + γ_{2d+10}) long, as in ``lloyd``); the floor bounds the normaliser's Lipschitz constant;
    the sums' rounding in any order is covered by ``calibration.row_bound``. Rows are computed in
    blocks of about ``BLOCK`` offsets (each row from its own offsets only).
    """
    n, d = points.shape
    out = np.empty((len(rows), d))
    size = max(1, BLOCK // max(n * d, 1))
    for start in range(0, len(rows), size):
        chosen, a = rows[start:start + size], weights[start:start + size]
        offsets = points[None, :, :] - points[chosen][:, None, :]
        lengths = np.sqrt(rowwise.ordered_sum(offsets * offsets))  # radius >= rowwise.MIN_LENGTH: no underflow
        offsets *= (radius / np.maximum(lengths, radius))[..., None]
        sums = np.einsum("cj,cjd->cd", a, offsets)
        out[start:start + size] = points[chosen] + sums / np.maximum(a.sum(axis=1), floor)[:, None]
    return out
