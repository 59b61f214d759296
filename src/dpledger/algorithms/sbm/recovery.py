"""Private community recovery: the graph pieces of Algorithms C.4 (weak), C.12/C.13 (exact) and
C.19 (exponential mechanism), shared by the registered estimators in ``estimators.py``.

Sensitivity of the projection (weak recovery). X1 = argmin_{X∈K} ||X - Y(G)||_F² with
Y(G) = (A - (d/n)J)/(γd). Three valid bounds on ||X1 - X1'||_F for edge-adjacent G, G':
- Lemma C.5 (via Lemma B.1): sqrt(24/(nγd));
- projection onto a fixed closed convex set is 1-Lipschitz and ||Y - Y'||_F = sqrt(2)/(γd);
- any two points of K are within sqrt(2) (PSD, trace 1).
We use the smallest and name it in the ledger. The solver returns X_f within its certified error
of X1, and that error is at most τ on *every* graph: τ is at least ``projection_target``'s floor,
a public function of (n, d, γ) that dominates the certificate's floating-point allowance on every
input, so the solver always reaches it (docs/proofs.md). Hence ||X_f - X_f'||_F <= Δ + 2τ, and no
run halts or fails on its data. Only the strict upper triangle is released (the diagonal is 1/n
for every input), clamped to [-1/n, 1/n] (where the entries of every point of K lie, so the
clamp keeps the certificate); for a symmetric E, ||triu(E)||_2 <= ||E||_F/sqrt(2), so the released
vector has ℓ2-sensitivity (Δ + 2τ)/sqrt(2), and never more than the box's diameter.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.linalg

from ... import _blas, _validate
from ...graph import postprocess, release, sequence
from ...mechanisms import DiscreteLaplace, Exponential, Gaussian
from ...stability import SolverError, certified_sensitivity
from ...stability.correlation import project_onto_elliptope, target_floor

#: Enumeration of balanced labelings is refused above this many vertices (C(24, 12) ≈ 2.7e6).
MAX_ENUMERATION_VERTICES = 24


def centred(adjacency: np.ndarray, d: float, gamma: float) -> np.ndarray:
    """Y(G) = (A(G) - (d/n)·J)/(γd)."""
    n = adjacency.shape[0]
    return (adjacency - d / n) / (gamma * d)


def projection_sensitivity(n: int, d: float, gamma: float) -> tuple[float, str]:
    """The smallest of the three bounds on ||X1 - X1'||_F (module doc), and which one it is."""
    bounds = {"Lemma C.5: sqrt(24/(nγd))": math.sqrt(24.0 / (n * gamma * d)),
              "1-Lipschitz projection: sqrt(2)/(γd)": math.sqrt(2.0) / (gamma * d),
              "diameter of K: sqrt(2) (WEAK: the release is noise at these parameters)": math.sqrt(2.0)}
    label = min(bounds, key=bounds.get)
    return bounds[label], label


def projection_target(n: int, d: float, gamma: float, target: float | None = None) -> float:
    """τ: ``target`` (None: 0) raised to the floor that every graph on n vertices reaches for
    Y(G) = (A - (d/n)J)/(γd) (``target_floor``). Public bounds on every 0/1 adjacency matrix:
    |Y_ij| <= max(1 - d/n, d/n)/(γd) off the diagonal and Y_ii = -1/(γn) (docs/proofs.md)."""
    p = d / n
    frobenius = math.sqrt(n * (n - 1) * max(1.0 - p, p) ** 2 + n * p * p) / (gamma * d)
    floor = target_floor(n, frobenius, 1.0 / n + 1.0 / (gamma * n))
    return max(floor, 0.0 if target is None else target)


def upper_triangle(matrix: np.ndarray) -> np.ndarray:
    return matrix[np.triu_indices(matrix.shape[0], k=1)]


def certified_projection(adjacency: np.ndarray, d: float, gamma: float, target: float | None) -> np.ndarray:
    """Strict upper triangle of X_f, within τ = ``projection_target(n, d, γ, target)`` of X1, clamped
    to [-1/n, 1/n]. Every graph reaches τ (docs/proofs.md): missing it is a ``SolverError`` (a bug)."""
    n = adjacency.shape[0]
    tau = projection_target(n, d, gamma, target)
    solution = project_onto_elliptope(centred(adjacency, d, gamma), target=tau)
    if not solution.meets_target:
        raise SolverError(solution)
    return np.clip(upper_triangle(solution.solution), -1.0 / n, 1.0 / n)


def leading_signs(upper: np.ndarray, n: int) -> np.ndarray:
    """Signs of the leading eigenvector of the symmetric matrix with this strict upper triangle
    (post-processing). The diagonal of X2 is c·I, which does not change eigenvectors, so it is
    left at 0; likewise a positive rescaling of ``upper``. Zeros map to +1."""
    matrix = np.zeros((n, n))
    matrix[np.triu_indices(n, k=1)] = upper
    matrix = matrix + matrix.T
    with _blas.limit(1):
        _, vector = scipy.linalg.eigh(matrix, subset_by_index=[n - 1, n - 1])
    return np.where(vector[:, 0] >= 0, 1, -1)


def _degree(d: float | str):
    """``d`` is either public (a number) or the name of an earlier released estimate d̂."""
    if isinstance(d, str):
        return (d,), (lambda out: out[d])
    return (), (lambda out: d)


def released_sensitivity(n: int, d: float, gamma: float, target: float | None) -> float:
    """ℓ2-sensitivity of ``certified_projection``'s output: (Δ + 2τ)/sqrt(2), at most the diameter
    sqrt(2(n-1)/n) of the box [-1/n, 1/n]^(n(n-1)/2) it is clamped to (module doc)."""
    exact, _ = projection_sensitivity(n, d, gamma)
    certified = certified_sensitivity(exact, projection_target(n, d, gamma, target)) / math.sqrt(2.0)
    return min(certified, math.sqrt(2.0 * (n - 1) / n))


def weak_recovery(name: str, epsilon: float, delta: float, n: int, d: float | str, gamma: float,
                  target: float | None):
    """Algorithm C.4 as a graph node: certified projection, Gaussian noise, leading-eigenvector signs.

    With a public d the Gaussian is calibrated to the sensitivity itself. With a released
    estimate d̂ (``d`` names it) the query is divided by the sensitivity computed from d̂ and the
    Gaussian has sensitivity 1: the same mechanism, calibrated adaptively to a public value.
    """
    uses, degree = _degree(d)
    note = ("sensitivity (smallest of Lemma C.5, the 1-Lipschitz projection and K's diameter, computed from "
            "released d̂) + 2τ, τ >= the floor every graph reaches, over sqrt(2) for the upper triangle; "
            "query divided by it" if uses else
            f"sensitivity ({projection_sensitivity(n, d, gamma)[1]}) + 2τ (τ={projection_target(n, d, gamma, target):.3g}, "
            "a target every graph reaches), over sqrt(2) for the upper triangle")

    def sensitivity(d_value: float) -> float:
        return released_sensitivity(n, d_value, gamma, target)

    if uses:
        noise = Gaussian(epsilon, delta, sensitivity=1.0, coordinates=n * (n - 1) // 2)
        query = lambda graph, **out: (certified_projection(graph, degree(out), gamma, target)  # noqa: E731
                                      / sensitivity(degree(out)))
    else:
        noise = Gaussian(epsilon, delta, sensitivity=sensitivity(d), coordinates=n * (n - 1) // 2)
        query = lambda graph: certified_projection(graph, d, gamma, target)  # noqa: E731
    return sequence(
        release(f"{name}_matrix", noise, query, uses=uses, note=note),
        postprocess(name, lambda **out: leading_signs(out[f"{name}_matrix"], n), uses=f"{name}_matrix"),
        name=f"{name}_recovery",
    )


def majority_vote(name: str, epsilon: float, uses: str):
    """Algorithm C.13: Z_v = Σ_{u ∈ N(v)} x̃_u has ℓ1-sensitivity 2 under edge adjacency (one edge
    changes two sums by one label each); sign(Z + noise) is ε-DP (Lemma C.14). Z is an integer
    vector, so the noise is the exact discrete Laplace with scale 2/ε (no floating-point leak)."""
    return sequence(
        release(f"{name}_scores", DiscreteLaplace(epsilon, sensitivity=2),
                lambda graph, **out: np.rint(graph @ out[uses].astype(float)), uses=uses,
                note="ℓ1-sensitivity 2 of the neighbour-label sums (Lemma C.14)"),
        postprocess(name, lambda **out: np.where(out[f"{name}_scores"] >= 0, 1, -1), uses=f"{name}_scores"),
        name=f"{name}_vote",
    )


def balanced_labelings(n: int) -> np.ndarray:
    """All x ∈ {±1}^n with Σx ∈ {0, 1} (balanced), one per row, in a fixed order."""
    n = _validate.integer("n", n, minimum=2)
    if n > MAX_ENUMERATION_VERTICES:
        raise ValueError(
            f"the exponential mechanism enumerates C(n, n/2) labelings; n={n} exceeds the limit "
            f"MAX_ENUMERATION_VERTICES={MAX_ENUMERATION_VERTICES} (use sbm.exact for larger graphs)"
        )
    positives = (n + 1) // 2
    rows = np.full((math.comb(n, positives), n), -1, dtype=np.int8)
    for row, chosen in zip(rows, itertools.combinations(range(n), positives)):
        row[list(chosen)] = 1
    return rows


def labeling_scores(adjacency: np.ndarray, d: float, gamma: float, candidates: np.ndarray) -> np.ndarray:
    """s(x) = ⟨x, Y(G)x⟩ for every candidate row x (batched to bound memory)."""
    y = centred(adjacency, d, gamma)
    scores = np.empty(candidates.shape[0])
    for start in range(0, candidates.shape[0], 1 << 16):
        block = candidates[start:start + (1 << 16)].astype(float)
        scores[start:start + block.shape[0]] = np.einsum("ij,ij->i", block @ y, block)
    return scores


def exponential_recovery(name: str, epsilon: float, n: int, d: float | str, gamma: float):
    """Algorithm C.19, step 2: sample a balanced x ∝ exp(ε·s(x)/(2Δ)), Δ = 2/(γd): an edge changes
    A in two symmetric entries, so s changes by at most 2/(γd). ε-DP (exponential mechanism).
    With a released d̂ the scores are divided by Δ(d̂) and the mechanism has sensitivity 1."""
    candidates = balanced_labelings(n)
    uses, degree = _degree(d)
    if uses:
        selector = Exponential(epsilon, sensitivity=1.0)
        query = lambda graph, **out: (labeling_scores(graph, degree(out), gamma, candidates)  # noqa: E731
                                      * gamma * degree(out) / 2.0)
    else:
        selector = Exponential(epsilon, sensitivity=2.0 / (gamma * d))
        query = lambda graph: labeling_scores(graph, d, gamma, candidates)  # noqa: E731
    return sequence(
        release(f"{name}_index", selector, query, uses=uses,
                note="score sensitivity 2/(γd) (Algorithm C.19)" + ("; scores divided by it" if uses else "")),
        postprocess(name, lambda **out: candidates[int(out[f"{name}_index"])].astype(int), uses=f"{name}_index"),
        name=f"{name}_selection",
    )
