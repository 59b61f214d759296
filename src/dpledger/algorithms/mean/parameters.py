"""Public parameters of the mean estimators, the input check, and a synthetic model for examples.

Model: X_1..X_n in R^d with mean μ, ||μ||_2 <= R (a priori, public), coordinates spread about
their mean with scale σ (Gaussian N(μ, σ²I) or bounded by a few σ). n, d, R, σ are public.
"""

from __future__ import annotations

import numpy as np

from ... import _validate
from ...domains import Records


def check_public(epsilon, R, n, d, sigma) -> tuple[float, float, int, int, float]:
    """Validated (ε, R, n, d, σ); a ``ValueError``/``TypeError`` naming the argument otherwise."""
    return (_validate.positive("epsilon", epsilon), _validate.positive("R", R),
            _validate.integer("n", n, minimum=2), _validate.integer("d", d, minimum=1),
            _validate.positive("sigma", sigma))


def check_share(name: str, share) -> float:
    return _validate.probability(name, share, low_open=True)


def domain(n: int, d: int) -> Records:
    """The estimators' input: n points of R^d, any finite doubles (n and d are public)."""
    return Records(shape=(d,), n=n)


def project_to_ball(vector: np.ndarray, radius: float) -> np.ndarray:
    """The nearest point of the ℓ2 ball of the a priori radius (post-processing, Lemma A.2)."""
    scale = float(np.max(np.abs(vector))) if vector.size else 0.0
    if scale == 0.0:
        return vector
    norm = scale * float(np.sqrt(np.sum((vector / scale) ** 2)))  # scaled: no overflow near 1e308
    return vector if norm <= radius else vector * (radius / norm)


def project_rows(vectors: np.ndarray, radius: float) -> np.ndarray:
    """``project_to_ball`` of each row of ``vectors`` (the last axis is the vector), the same bits
    row by row: the same operations, elementwise or reduced along the last axis (vectorised
    post-processing: one call for a batch of runs)."""
    vectors = np.asarray(vectors)
    if vectors.shape[-1] == 0:
        return vectors
    scale = np.max(np.abs(vectors), axis=-1, keepdims=True)
    zero = scale == 0.0
    divisor = np.where(zero, 1.0, scale)
    norm = scale * np.sqrt(np.sum((vectors / divisor) ** 2, axis=-1, keepdims=True))  # scaled: no overflow
    outside = ~zero & (norm > radius)
    return np.where(outside, vectors * (radius / np.where(outside, norm, 1.0)), vectors)


def sparse_gaussian(n: int, d: int, k: int, R: float, rng: np.random.Generator, sigma: float = 1.0):
    """(samples, μ): n draws of N(μ, σ²I_d), μ with k random coordinates of equal magnitude and
    random signs, ||μ||_2 = R."""
    mean = np.zeros(d)
    support = rng.choice(d, size=k, replace=False)
    mean[support] = rng.choice([-1.0, 1.0], size=k) * R / np.sqrt(k)
    return mean + sigma * rng.standard_normal((n, d)), mean
