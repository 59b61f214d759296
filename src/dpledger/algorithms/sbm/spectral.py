"""The noisy power method for two communities: near-linear time and memory, any n.

Each of ``iterations`` steps releases ỹ = A·x + lattice Gaussian noise, where x = bounded(ỹ of
the step before) is public: centred (which removes the all-ones, degree direction), scaled to
unit norm, then clipped to ±c/√n (so only close to centred and unit). One edge {i, j} changes A·x in coordinates
i and j only, by x_j and x_i, so the ℓ2 sensitivity of the computed product is at most
√2·(c/√n)·(1 + 2n·γ_n) for every input (γ_n = nu/(1 − nu), u = 2^-53: the rounding of each
row's sum; docs/proofs.md, "Noisy power method"). The bound and the noise are the same at every
step and fixed before the data, so the steps are one ``repeat`` of a zCDP step, composed
tightly (not the adaptive filter): the input of a step depends on released values, its privacy
loss does not. The labels are the signs of the last release (post-processing).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import scipy.sparse as sp

from ... import _validate
from ...privacy import rules
from ...privacy.rdp import budget_rho
from ...graph import postprocess, release, repeat, sequence
from ...mechanisms import Gaussian
from ...mechanisms.laplace import ROUNDING

#: unit roundoff of a double: every row sum of A·x is within γ_k·Σ|x_j| of the exact one
UNIT_ROUNDOFF = 2.0**-53
#: covers the rounding of evaluating Δ itself and the clip limit c/√n in doubles (a few ulps)
EVALUATION = 1 + 2.0**-40


def step_sensitivity(n: int, clip: float) -> float:
    """ℓ2-sensitivity of the computed A·bounded(x) under edge adjacency, rounding included; c/√n
    must be a normal double (a subnormal limit would lose the relative accuracy this relies on)."""
    limit = clip / math.sqrt(n)
    if not limit >= sys.float_info.min:
        raise ValueError(f"clip/√n = {limit:g} is below the smallest normal double; use a larger clip")
    gamma_n = n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)
    return math.sqrt(2.0) * limit * (1 + 2 * n * gamma_n) * EVALUATION


def bounded(vector, clip: float) -> np.ndarray:
    """Centred, unit-norm and clipped to ±clip/√n: a public vector every step may multiply. Total:
    a vector with no direction left (constant, or not finite) becomes the alternating ±1/√n."""
    vector = np.asarray(vector, dtype=float)
    n = vector.shape[0]
    peak = float(np.max(np.abs(vector)))  # scaled to [-1, 1] first: no overflow in the mean or norm
    centred = vector / peak - np.mean(vector / peak) if math.isfinite(peak) and peak > 0 else np.zeros(n)
    norm = float(np.linalg.norm(centred))
    if not norm > 0:
        centred, norm = np.where(np.arange(n) % 2 == 0, 1.0, -1.0), math.sqrt(n)
    limit = clip / math.sqrt(n)
    return np.clip(centred / norm, -limit, limit)


def as_csr(graph) -> sp.csr_matrix:
    """The adjacency as a CSR matrix with sorted indices (the form ``_product`` multiplies); a
    CSR input already in that form is returned as is (no copy of a large graph)."""
    matrix = sp.csr_matrix(graph, dtype=float)
    return matrix if matrix.has_sorted_indices else matrix.sorted_indices()


def _product(graph, iterate, clip: float) -> np.ndarray:
    """A·bounded(iterate) by scipy's CSR product on sorted indices (one sequential sum per row, so
    rows an edge does not touch are computed identically on both graphs)."""
    matrix = graph if isinstance(graph, sp.csr_matrix) and graph.has_sorted_indices else as_csr(graph)
    return np.asarray(matrix @ bounded(iterate, clip), dtype=float)


def signs(vector) -> np.ndarray:
    """±1 labels: the sign of each centred coordinate (0 counts as +1)."""
    vector = np.asarray(vector, dtype=float)
    return np.where(vector - vector.mean() >= 0, 1, -1)


def start(n: int, seed: int) -> np.ndarray:
    """The public first iterate: a standard normal vector from ``seed`` (data-independent)."""
    return np.random.default_rng(seed).standard_normal(n)


def power_method(name: str, epsilon: float, delta: float, n: int, iterations: int, clip: float, seed: int):
    """``iterations`` noisy power steps and their signs, (ε, δ)-DP in total: each step is
    ρ/T-zCDP with ρ the largest zCDP budget whose (ε, δ) conversion fits."""
    iterations = _validate.integer("iterations", iterations, minimum=1)
    clip = _validate.positive("clip", clip)
    sensitivity = step_sensitivity(n, clip)
    rho = budget_rho(epsilon, delta) * (1 - 1e-8) / iterations  # room for the roundings of σ, ρ and ε
    # the larger lattice allowance, the one the mechanism's own (ε, δ) uses: a single step's plan
    # states that (ε, δ), and it must fit the budget too (ρ's allowance is 1 + 1/RESOLUTION)
    sigma = sensitivity * float(ROUNDING) / math.sqrt(2 * rho)
    noise = Gaussian.from_sigma(sigma, sensitivity=sensitivity, delta=rules.per_run(delta, iterations), coordinates=n)
    step = release(f"{name}_iterate", noise, lambda graph, **out: _product(graph, out[f"{name}_iterate"], clip),
                   uses=f"{name}_iterate",
                   note=f"ℓ2-sensitivity √2·c/√n·(1 + 2nγ_n) of A·x for the public x clipped to ±c/√n (c={clip:g})")
    return sequence(
        repeat(step, iterations, initial={f"{name}_iterate": start(n, seed)}, name=f"{name}_power"),
        postprocess(name, lambda **out: signs(out[f"{name}_iterate"]), uses=f"{name}_iterate"),
        name=f"{name}_spectral",
    )
