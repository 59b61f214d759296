"""Graph pieces for pure-DP mean estimation, shared by ``mean.*`` and ``sparse_mean.*``.

Both pieces optionally run on the columns named by an earlier release (``columns``: the name of
an output holding coordinate indices), so a sparse estimator can reuse them on its chosen support.

Privacy under ReplaceOne with public n. Every released real vector goes through the lattice
``Laplace`` (ε-DP for ℓ1-sensitivity Δ, exact integer noise on a power-of-two lattice, clamped to
the public box: float-safe), and the histogram counts through ``DiscreteLaplace`` (integers).
Laplace noise needs the ℓ1 sensitivity, so clipping is per coordinate (to a box), never to an ℓ2
ball: the mean of n points clipped to [c - r, c + r]^m moves by at most 2r/n per coordinate when
one point is replaced, i.e. Δ1 = 2rm/n.

Refusal: when the ℓ2 standard deviation of the final noise, sqrt(2m)·Δ1/ε, exceeds R, the
constant output 0 is (in expectation) more accurate than the release; the factory refuses.
"""

from __future__ import annotations

import math

import numpy as np

from ...privacy.rules import remainder
from ...graph import per_record, postprocess, release, sequence
from ...mechanisms import DiscreteLaplace, Laplace
from ...rounding import mean_sensitivity

#: ``mean.clipped`` clips each coordinate to [-(R + SPREAD·σ), R + SPREAD·σ] (|μ_j| <= ||μ||_2 <= R).
SPREAD = 3.0
#: Localisation histogram: bins of width BIN_WIDTH·σ covering [-R - BIN_WIDTH·σ, R + BIN_WIDTH·σ].
BIN_WIDTH = 2.0
#: After localisation, clip to the centre ± LOCAL_RADIUS·σ: the chosen bin is typically the one holding
#: μ_j or a neighbour (within 1.5 bin widths), plus SPREAD·σ of spread. A utility choice: privacy
#: holds for any radius.
LOCAL_RADIUS = SPREAD + 1.5 * BIN_WIDTH
#: Most localisation bins per coordinate (R/σ up to about 2,000); more would exhaust memory.
MAX_BINS = 2048


def _selected(columns: str | None):
    """(uses, select(records, outputs)): all columns, or those named by an earlier release."""
    if columns is None:
        return (), lambda records, out: records
    return (columns,), lambda records, out: records[:, np.asarray(out[columns], dtype=int)]


def noisy_mean_mechanism(epsilon: float, radius: float, bound: float, n: int, dim: int, R: float) -> Laplace:
    """Lattice Laplace for the computed mean of n records clipped to a box of half-width ``radius``
    in ``dim`` coordinates (``rounding.mean_sensitivity``: Δ1 = 2·radius·dim/n, plus the rounding of
    the mean in any order, see module doc; answers clamped to ±``bound``), refusing when its noise
    alone exceeds R."""
    sensitivity = mean_sensitivity(radius, n, dim)
    noise_l2 = math.sqrt(2.0 * dim) * sensitivity / epsilon
    if not math.isfinite(bound + noise_l2):
        raise ValueError(f"R={R:g} with sigma and d this large overflows the clipping bound or the noise scale")
    if noise_l2 > R:
        raise ValueError(
            f"n={n} is too small for a meaningful answer: the Laplace noise alone has ℓ2 standard deviation "
            f"{noise_l2:.3g} > R={R:g} (outputting 0 would do better); need n >= {n * noise_l2 / R:.3g} "
            "at this ε and dimension")
    return Laplace(epsilon, sensitivity=sensitivity, bound=bound, coordinates=dim)


def _mean(records: np.ndarray) -> np.ndarray:
    return records.mean(axis=0)


def clipped_mean(name: str, epsilon: float, R: float, n: int, dim: int, sigma: float, columns: str | None = None):
    """Release the mean of the samples clipped per coordinate to [-B, B], B = R + SPREAD·σ, plus
    lattice Laplace noise: ε-DP (Δ1 = 2B·dim/n with the mean's rounding, Lemma A.8 on the lattice).
    The clipping is a per-record map."""
    bound = R + SPREAD * sigma
    uses, select = _selected(columns)
    return per_record(
        f"{name}_clipped", lambda records, **out: np.clip(select(records, out), -bound, bound),
        release(name, noisy_mean_mechanism(epsilon, bound, bound, n, dim, R), _mean,
                note=f"coordinates clipped to ±{bound:g}: ℓ1-sensitivity 2·B·dim·(1/n + γ_n)"),
        uses=uses)


def bin_centres(R: float, sigma: float) -> np.ndarray:
    """Centres of the localisation bins (public: they depend on R and σ only)."""
    if R / sigma > (MAX_BINS / 2 - 1) * BIN_WIDTH:
        raise ValueError(f"R/sigma = {R / sigma:.3g} needs more than MAX_BINS={MAX_BINS} localisation bins "
                         f"(R/sigma <= {(MAX_BINS / 2 - 1) * BIN_WIDTH:g}); rescale the data or give a larger sigma")
    width = BIN_WIDTH * sigma
    count = math.ceil(2.0 * (R + width) / width)
    return -(R + width) + width * (np.arange(count) + 0.5)


def bin_indices(samples: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """(n, dim) bin of every coordinate of every sample (a per-record map; values beyond the grid go
    to the end bins: clamped before the cast, so every finite value has a bin)."""
    width = centres[1] - centres[0] if centres.size > 1 else 1.0
    return np.clip(np.floor((samples - (centres[0] - width / 2)) / width), 0, centres.size - 1).astype(np.int64)


def coordinate_histograms(indices: np.ndarray, bins: int) -> np.ndarray:
    """(dim, bins) counts: for every coordinate, how many samples fall in each bin (exact integers)."""
    dim = indices.shape[1]
    flat = (np.arange(dim)[None, :] * bins + indices).ravel()
    return np.bincount(flat, minlength=dim * bins).reshape(dim, bins)


def localised_mean(name: str, epsilon: float, R: float, n: int, dim: int, sigma: float, locate_share: float,
                   columns: str | None = None):
    """Coarse private localisation, then clipping around it, then lattice Laplace noise.

    1. Per-coordinate histograms over ``bin_centres(R, σ)`` released with exact discrete Laplace
       noise at ε·share: replacing one point moves one unit of count between two bins in each of
       the ``dim`` histograms, so Δ1 = 2·dim (Lemma A.8 on the integers). The centre of each
       coordinate is its noisiest bin (post-processing, Lemma A.2).
    2. The mean of the offsets from the (released, public) centre clipped to ±LOCAL_RADIUS·σ, lattice
       Laplace at ε·(1 - share) (Δ1 = 2·LOCAL_RADIUS·σ·dim·(1/n + γ_n)); the centre is added back
       by post-processing, so no rounding of large values enters the sensitivity.
    Total ε by basic sequential composition. The bins and the clipped offsets are per-record maps;
    the two post-processing steps are vectorised (elementwise, or along the last axis).
    """
    centres = bin_centres(R, sigma)
    eps_locate = epsilon * locate_share
    eps_mean = remainder(epsilon, eps_locate)
    if n <= 2 * dim / eps_locate:
        raise ValueError(f"n={n} is too small to localise: the histogram noise scale 2·dim/ε = "
                         f"{2 * dim / eps_locate:.3g} exceeds n")
    radius = LOCAL_RADIUS * sigma
    uses, select = _selected(columns)
    mean_mechanism = noisy_mean_mechanism(eps_mean, radius, radius, n, dim, R)
    centre = f"{name}_centre"
    return sequence(
        per_record(f"{name}_bins", lambda records, **out: bin_indices(select(records, out), centres),
                   release(f"{name}_histograms", DiscreteLaplace(eps_locate, sensitivity=2 * dim),
                           lambda indices: coordinate_histograms(indices, centres.size),
                           note="per-coordinate histograms: ℓ1-sensitivity 2·dim under ReplaceOne"),
                   uses=uses),
        postprocess(centre, lambda **out: centres[np.argmax(out[f"{name}_histograms"], axis=-1)],
                    uses=f"{name}_histograms", vectorised=True),
        per_record(f"{name}_offsets",
                   lambda records, **out: np.clip(select(records, out) - out[centre], -radius, radius),
                   release(f"{name}_offset", mean_mechanism, _mean,
                           note=f"offsets from the released centre clipped to ±{radius:g}: ℓ1-sensitivity "
                                "2·r·dim·(1/n + γ_n)"),
                   uses=(*uses, centre)),
        postprocess(name, lambda **out: out[centre] + np.asarray(out[f"{name}_offset"], dtype=float),
                    uses=(centre, f"{name}_offset"), vectorised=True),
        name=f"{name}_localised",
    )
