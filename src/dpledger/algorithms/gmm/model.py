"""Model 1.2 (mixtures of spherical Gaussians) for examples and benchmarks, and the centre error.

k centres with pairwise distances >= Δ (the separation), n samples y_i = μ_{z_i} + σ·g_i with
uniform labels z_i and standard Gaussian g_i.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def separated_centres(k: int, d: int, separation: float, rng: np.random.Generator) -> np.ndarray:
    """k random centres in R^d rescaled so that the closest pair is exactly ``separation`` apart."""
    centres = rng.standard_normal((k, d))
    if k == 1:
        return centres
    gaps = np.linalg.norm(centres[:, None, :] - centres[None, :, :], axis=-1)
    closest = gaps[np.triu_indices(k, 1)].min()
    return centres * (separation / closest)


def sample_mixture(n: int, k: int, d: int, separation: float, rng: np.random.Generator,
                   sigma: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(samples (n, d), centres (k, d), labels (n,)) of Model 1.2."""
    centres = separated_centres(k, d, separation, rng)
    labels = rng.integers(k, size=n)
    return centres[labels] + sigma * rng.standard_normal((n, d)), centres, labels


#: What ``centre_error`` measures, for privacy–utility reports.
CENTRE_METRIC = "largest centre error after matching"


def nonprivate_centres(k: int, restarts: int = 3):
    """A non-private reference for the utility samplers: k-means on the raw points (k-means++ and
    Lloyd's iterations, the best of ``restarts``, public seed 0)."""
    def centres(data):
        from .lloyd import weighted_kmeans

        points = np.asarray(data, float)
        return weighted_kmeans(points, np.ones(len(points)), k, 0, restarts=restarts)
    return centres


def centre_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """max_ℓ ||μ̂_π(ℓ) − μ_ℓ|| under the matching π that minimises the total distance (Hungarian)."""
    estimate, truth = np.asarray(estimate, float), np.asarray(truth, float)
    distances = np.linalg.norm(estimate[:, None, :] - truth[None, :, :], axis=-1)
    rows, cols = linear_sum_assignment(distances)
    return float(distances[rows, cols].max())
