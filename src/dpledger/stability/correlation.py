"""Certified projection onto K = {X ⪰ 0 symmetric, X_ii = 1/n} (docs/proofs.md, "Certified solvers").

X* = argmin_{X∈K} ||X − Y||_F² equals (1/n)·NCM(nY), the scaled nearest correlation matrix. The
weak-recovery mechanism releases it, so its accuracy enters the privacy proof: we return a feasible
point with a *certified* bound on ||X_f − X*||_F, never just a point.

**Dual.** For y ∈ R^n let M = Y + Diag(y) = M₊ + M₋ (spectral positive and negative parts) and
b = (1/n)·1. Minimising the Lagrangian ½||X − Y||² − yᵀ(diag X − b) over X ⪰ 0 gives X_p = M₊ and
the dual value g(y) = ½||Y||² + bᵀy − ½||M₊||² <= ½||X* − Y||² (weak duality). Its negative
θ(y) = ½||M₊||² − bᵀy is convex with gradient F(y) = diag(M₊) − b; we minimise θ by the
semismooth Newton method of Qi & Sun (SIAM J. Matrix Anal. Appl. 28 (2006) 360–385): a generalised
Jacobian built from the eigendecomposition of M, Newton systems solved by diagonally
preconditioned CG, Armijo line search on θ (safeguarded quadratic backtracking).

**Primal point.** X_f = D·X_p·D with D_ii = sqrt((1/n)/(X_p)_ii) is PSD with diagonal 1/n. If
(X_p)_ii = 0 the whole row i of the PSD matrix X_p is zero, so we set D_ii = 0 and put 1/n on that
diagonal entry: X_f is then a direct sum of a PSD block and positive diagonal entries, still in K.

**Gap without cancellation.** Write Y = M − Diag(y) and use diag(X_f) = b:
½||X_f − Y||² − g(y) = ½||X_f − M||² − ½||M||² + ½||M₊||² = ½||X_f − M||² − ½||M₋||²; expanding
X_f − M = (X_f − M₊) − M₋ with ⟨M₊, M₋⟩ = 0 gives

    gap = ½||X_f − X_p||² + ⟨X_f, −M₋⟩,

a sum of two non-negative terms (X_f ⪰ 0, −M₋ ⪰ 0). With E = D − I and X_p·M₋ = 0 the first-order
terms of ⟨D X_p D, −M₋⟩ vanish, so ⟨X_f, −M₋⟩ = ||C||² + Σ_{D_ii=0} (1/n)(−M₋)_ii with
C = |Λ₋|^{1/2} Q₋ᵀ E Q₊ Λ₊^{1/2}: computed from small factors, not as a difference of large
numbers. ½||X − Y||² is 1-strongly convex, so ||X_f − X*||_F <= sqrt(2·gap).

**Floating-point allowance.** LAPACK's symmetric eigensolver is backward stable: the computed
(Q̂, Λ̂) is within O(n·eps) of an exactly orthogonal Q with Q Λ̂ Qᵀ = M + E_bw, ||E_bw||_F <=
p(n)·eps·||M||_F (measured here: ||E_bw||_F <= 18·eps·||M||_F and ||Q̂ᵀQ̂ − I||_F <= 0.4·n·eps up
to n = 2000). Everything above is then exact for the input Y + E_bw, and the projection onto a
closed convex set is 1-Lipschitz, so E_bw moves the certificate by at most ||E_bw||_F. The other
roundings (the non-orthogonality of Q̂, forming X_p, X_f and the gap, b = fl(1/n)) perturb the
*norms* ||X_f − X_p|| and ||C|| (not the squared gap) by O(n·eps) times ||M||_F + ||X_f||_F, where
||M||_F <= ||Y||_F + ||y||_2 and ||X_f||_F <= tr X_f = 1, amplified by at most max D_ii² through the
rescaling. We add

    allowance = 10·n·eps·(||Y||_F + ||y||_2 + 1)·max(1, max_i D_ii²),

the standard O(n·eps) normwise model, with a margin of 50–1000× over the backward errors measured
for n = 50..2000; solves of signed permutations of one input (same optimum, different rounding)
differed by under 3% of their certificates in our stress runs. It is a stated model of the
eigensolver's error, not a machine-checked bound; it is part of ``certified_error``.

**A target every input reaches** (``target_floor``). A private caller must fix τ before the data
and may never let "the certificate missed τ" decide what a user sees. At the optimum y* the
allowance is 10·n·eps·(||Y||_F + ||y*||_2 + 1) (there D = I), and ||y*||_2 is bounded by public
quantities: (M*₋)_ii <= 0 gives y*_i <= u_i = 1/n − Y_ii, and strong duality gives
Σ y*_i = n(||X*||² − ⟨X*, Y⟩) >= −n·||Y||_F, so ||y*||_2 <= ||u||_2 + ||u||_1 + n·||Y||_F.
``target_floor`` is four times the allowance this gives for public bounds on ||Y||_F and |u_i|;
the iteration converges in exact arithmetic (Qi & Sun 2006, with a gradient step whenever the
Newton line search fails: θ has a 1-Lipschitz gradient, so y − F(y) decreases it by ½||F||²),
so the certificate reaches such a τ on every input in the domain (docs/proofs.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg
from .. import _blas, _validate
from .certified import CertifiedSolution

__all__ = ["project_onto_elliptope"]

_EPS = float(np.finfo(float).eps)
_ALLOWANCE_CONSTANT = 10.0
_SYMMETRY_RTOL = 1e-10
_ARMIJO = 1e-4
_MAX_BACKTRACKS = 20
_CG_MAX_ITERATIONS = 200
_PATIENCE = 3  # steps in a row improving neither θ (beyond rounding) nor the certificate
_FLOOR_FACTOR = 4.0  # target_floor over the allowance at the optimum
_REGULARISATION = 1e-10  # μ in (V + μI) d = −F, relative to the mean of diag V


def target_floor(n: int, frobenius: float, diagonal: float) -> float:
    """A certificate target every Y in a public domain reaches: 4·10·n·eps·(F + ||y*|| bound + 1),
    for public bounds ``frobenius`` >= ||Y||_F and ``diagonal`` >= max_i |1/n − Y_ii| (module doc)."""
    n = _validate.integer("n", n, minimum=2)
    frobenius = _validate.nonnegative("frobenius", frobenius)
    diagonal = _validate.nonnegative("diagonal", diagonal)
    dual = (np.sqrt(n) + n) * diagonal + n * frobenius  # >= ||u||_2 + ||u||_1 + n·||Y||_F
    return float(_FLOOR_FACTOR * _ALLOWANCE_CONSTANT * n * _EPS * (frobenius + dual + 1.0))


def project_onto_elliptope(
    Y: np.ndarray,
    target: float = 1e-8,
    max_iterations: int | None = None,
    *,
    blas_threads: int | None = 1,
) -> CertifiedSolution:
    """Project Y onto K = {X ⪰ 0, X_ii = 1/n} with a certified Frobenius error bound.

    Iterates semismooth Newton on the dual (a gradient step whenever the Newton line search
    finds no descent) until ``certified_error <= target``. It stops short only after
    ``max_iterations`` steps (None: no limit) or after ``_PATIENCE`` steps in a row that improve
    neither the certificate nor the dual value beyond rounding, which happens only for a target
    below ``target_floor`` (the floating-point allowance); it never raises for an unmet target
    but returns the best certificate found, so the caller must check ``meets_target``: a private
    caller uses a target at or above the floor, which every input reaches. ``work`` counts
    eigendecompositions.

    ``blas_threads``: BLAS threads for the eigendecompositions; the other, small BLAS calls run on
    one thread (two only add overhead there). None leaves BLAS threading alone. The default 1 is
    the robust choice on a 2-core machine: two threads make one eigendecomposition ~1.6× faster at
    n >= 1000 when the machine is idle, but ~2× slower at n = 200, and whole solves ran ~10×
    slower than with one thread while other processes kept the cores busy
    (benchmarks/projection_speed.py).

    Y may be asymmetric by at most 1e-10·max|Y_ij| (rounding); it is then symmetrised, which does
    not change the projection: the skew part is orthogonal to every symmetric matrix.
    """
    Y = _check_matrix(Y)
    target = _validate.positive("target", target)
    if max_iterations is not None:
        max_iterations = _validate.integer("max_iterations", max_iterations, minimum=1)
    if blas_threads is None:
        return _solve(Y, target, max_iterations, _eigh)
    blas_threads = _validate.integer("blas_threads", blas_threads, minimum=1)

    def eigh(Y: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with _blas.limit(blas_threads):
            return _eigh(Y, y)

    with _blas.limit(1):
        return _solve(Y, target, max_iterations, eigh)


def _check_matrix(Y: object) -> np.ndarray:
    if np.iscomplexobj(Y):
        raise TypeError("Y must be a real matrix, got complex entries")
    Y = _validate.finite_array("Y", Y, ndim=2)
    n, m = Y.shape
    if n != m:
        raise ValueError(f"Y must be square, got shape {Y.shape}")
    if n < 2:
        raise ValueError(f"Y must be at least 2×2, got shape {Y.shape}")
    asymmetry = float(np.max(np.abs(Y - Y.T)))
    if asymmetry > _SYMMETRY_RTOL * float(np.max(np.abs(Y))):
        raise ValueError(f"Y must be symmetric, got max |Y − Yᵀ| = {asymmetry:.3g}")
    return (Y + Y.T) / 2


def _solve(
    Y: np.ndarray,
    target: float,
    max_iterations: int | None,
    eigh: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> CertifiedSolution:
    n = Y.shape[0]
    b = np.full(n, 1.0 / n)
    y = b - np.diag(Y)  # diag(M) = b; Y ∈ K is then certified by the first eigendecomposition
    lam, Q = eigh(Y, y)
    work = 1
    theta = _theta(lam, y, b)
    best = _certificate(Y, y, lam, Q, b, target)
    iterations = stale = 0
    while not best.meets_target and stale < _PATIENCE and (max_iterations is None or iterations < max_iterations):
        F = _gradient(lam, Q, b)
        # θ is only known to about n·eps times its terms: within that, a step is no increase
        slack = n * _EPS * (float(np.sum(np.maximum(lam, 0.0) ** 2)) + abs(float(b @ y)))
        trial, tries = _line_search(Y, y, theta, F, _newton_direction(lam, Q, F, b), b, slack, eigh)
        work += tries
        if trial is None:  # no Newton descent (rounding, or a poor CG direction): a gradient step
            trial_lam, trial_Q = eigh(Y, y - F)
            work += 1
            trial = (y - F, trial_lam, trial_Q, _theta(trial_lam, y - F, b))
        progressed = theta - trial[3] > slack
        y, lam, Q, theta = trial
        iterations += 1
        candidate = _certificate(Y, y, lam, Q, b, target)
        if candidate.certified_error < best.certified_error:
            best, progressed = candidate, True
        stale = 0 if progressed else stale + 1
    return CertifiedSolution(
        best.solution, best.certified_error, target, iterations=iterations, work=work, gap=best.gap
    )


def _line_search(Y, y, theta, F, direction, b, slack, eigh) -> tuple[tuple | None, int]:
    """Armijo backtracking along a Newton direction: ((y, λ, Q, θ) at the accepted step, or None
    when the direction does not descend within ``_MAX_BACKTRACKS`` steps; eigendecompositions).

    Near the optimum θ's decrease (about ||F||²) falls below its rounding error ``slack`` while
    ||F|| is still far above the certificate's floor: a step whose predicted decrease is below
    the rounding is then accepted when it shrinks the residual ||F|| instead (Newton's local
    quadratic convergence on F)."""
    slope = float(F @ direction)
    if not slope < 0:
        return None, 0
    residual = float(np.linalg.norm(F))
    step = 1.0
    for tries in range(1, _MAX_BACKTRACKS + 1):
        trial_y = y + step * direction
        trial_lam, trial_Q = eigh(Y, trial_y)
        trial_theta = _theta(trial_lam, trial_y, b)
        descends = trial_theta <= theta + _ARMIJO * step * slope + slack
        if descends and -step * slope > slack:
            return (trial_y, trial_lam, trial_Q, trial_theta), tries
        if (descends or -step * slope <= slack) and (
                float(np.linalg.norm(_gradient(trial_lam, trial_Q, b))) <= (1.0 - _ARMIJO * step) * residual):
            return (trial_y, trial_lam, trial_Q, trial_theta), tries
        step = _backtrack(step, slope, trial_theta - theta)
    return None, _MAX_BACKTRACKS


def _backtrack(step: float, slope: float, increase: float) -> float:
    """Next step length: minimiser of the quadratic through θ(y), its slope and θ(y + step·d),
    kept within [step/10, step/2] (safeguarded interpolation, Dennis & Schnabel §6.3)."""
    curvature = increase - slope * step
    return float(np.clip(-slope * step**2 / (2.0 * curvature), step / 10, step / 2))


def _eigh(Y: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    M = Y + np.diag(y)
    return scipy.linalg.eigh(M, driver="evd", overwrite_a=True, check_finite=False)


def _theta(lam: np.ndarray, y: np.ndarray, b: np.ndarray) -> float:
    """The dual objective to minimise, θ(y) = ½||M₊||² − bᵀy = ½||Y||² − g(y)."""
    return 0.5 * float(np.sum(np.maximum(lam, 0.0) ** 2)) - float(b @ y)


def _gradient(lam: np.ndarray, Q: np.ndarray, b: np.ndarray) -> np.ndarray:
    """∇θ(y) = diag(M₊) − b."""
    pos = lam > 0
    return np.einsum("ij,ij,j->i", Q[:, pos], Q[:, pos], lam[pos]) - b


def _certificate(
    Y: np.ndarray, y: np.ndarray, lam: np.ndarray, Q: np.ndarray, b: np.ndarray, target: float
) -> CertifiedSolution:
    """Feasible X_f from M₊ and the bound sqrt(2·gap) + floating-point allowance (module doc)."""
    n = Y.shape[0]
    pos = lam > 0
    B = Q[:, pos] * np.sqrt(lam[pos])
    X_p = B @ B.T
    diag_p = np.diag(X_p).copy()
    scaled = diag_p > 0
    scale = np.zeros(n)
    scale[scaled] = np.sqrt(b[scaled] / diag_p[scaled])
    X_f = np.outer(scale, scale) * X_p  # d_i·d_j is commutative, so X_f stays exactly symmetric
    np.fill_diagonal(X_f, b)
    neg = ~pos
    cross = (Q[:, neg].T @ ((scale - 1.0)[:, None] * B)) * np.sqrt(-lam[neg])[:, None]
    Q_unscaled = Q[~scaled][:, neg]
    unscaled = -float(np.einsum("ij,ij,j,i->", Q_unscaled, Q_unscaled, lam[neg], b[~scaled]))
    gap = 0.5 * float(np.sum((X_f - X_p) ** 2)) + float(np.sum(cross**2)) + unscaled
    amplification = max(1.0, float(np.max(scale)) ** 2)
    allowance = (
        _ALLOWANCE_CONSTANT
        * n
        * _EPS
        * (float(np.linalg.norm(Y)) + float(np.linalg.norm(y)) + 1.0)
        * amplification
    )
    return CertifiedSolution(X_f, float(np.sqrt(2.0 * gap)) + allowance, target, gap=gap)


def _newton_direction(lam: np.ndarray, Q: np.ndarray, F: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Approximately solve (V + μI) d = −F by diagonally preconditioned CG.

    V h = diag(Q (Ω ∘ (Qᵀ Diag(h) Q)) Qᵀ) is Qi–Sun's element of the generalised Jacobian of
    F(y) = diag((Y + Diag y)₊), with Ω = 1 on positive×positive eigenvalue pairs, 0 on
    non-positive pairs and λ_k/(λ_k − λ_l) on mixed ones; 0 ⪯ V ⪯ I. The tiny μ = 10⁻¹⁰·mean(diag V)
    (10⁻¹⁰ when V = 0, i.e. M has no positive eigenvalue) only guards against a singular V far
    from the solution (Qi–Sun show V is positive definite at it), and the CG
    tolerance ρ·||F|| with ρ = min(10⁻², ||F||/||b||) vanishes like ||F||, which keeps the local
    convergence quadratic. One product costs O(n²·min(r, n − r)) for r positive eigenvalues: the
    block term uses the thinner of Q₊, Q₋.
    """
    n = Q.shape[0]
    pos = lam > 0
    P1, P2 = Q[:, pos], Q[:, ~pos]
    lam1, lam2 = lam[pos], lam[~pos]
    omega = lam1[:, None] / (lam1[:, None] - lam2[None, :])
    small_positive = P1.shape[1] <= n // 2
    W = P1 @ P1.T if small_positive else P2 @ P2.T
    W2 = W * W
    mixed_weight = omega if small_positive else 1.0 - omega
    H = Q * Q
    H1, H2 = H[:, pos], H[:, ~pos]
    diag_V = np.sum(H1, axis=1) ** 2 + 2.0 * np.sum((H1 @ omega) * H2, axis=1)
    norm_F = float(np.linalg.norm(F))
    relative = min(1e-2, norm_F / float(np.linalg.norm(b)))
    mu = _REGULARISATION * (float(np.mean(diag_V)) or 1.0)

    def jacobian(h: np.ndarray) -> np.ndarray:
        mixed = 2.0 * np.einsum("ij,ij->i", P1 @ (mixed_weight * (P1.T @ (h[:, None] * P2))), P2)
        if small_positive:
            return W2 @ h + mixed + mu * h
        return h - W2 @ h - mixed + mu * h

    preconditioner = diag_V + mu
    tolerance = relative * norm_F
    d = np.zeros(n)
    residual = -F
    z = residual / preconditioner
    p = z.copy()
    rz = float(residual @ z)
    for _ in range(_CG_MAX_ITERATIONS):
        Vp = jacobian(p)
        curvature = float(p @ Vp)
        if curvature <= 0:
            break
        alpha = rz / curvature
        d += alpha * p
        residual -= alpha * Vp
        if float(np.linalg.norm(residual)) <= tolerance:
            break
        z = residual / preconditioner
        rz_next = float(residual @ z)
        p = z + (rz_next / rz) * p
        rz = rz_next
    return d
