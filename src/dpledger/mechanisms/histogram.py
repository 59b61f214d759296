"""The high-dimensional private histogram learner of Lemma A.13, with exact integer noise.

Bins are cubes of side b with offset q: coordinate x falls in interval ⌊(x - q)/b⌋ (clamped to
±2^62, so every finite point has a bin). For every non-empty bin the count gets exact discrete
Laplace noise of scale 2/ε (rounded up; ``DiscreteLaplace``), i.e. the frequency p = count/n gets
noise of scale 2/(nε) as in the lemma; empty bins stay 0; noisy counts <= T = 3 ln(2/δ)/ε are set
to 0, and the frequencies noisy count/n are released (post-processing of integers). Under
ReplaceOne (n fixed) two counts change by 1: the released common bins are ε-DP by the discrete
Laplace mechanism, and a bin that is non-empty for only one of the two inputs (count 1) survives
the threshold with probability P[Z >= ⌊T⌋] = q^⌊T⌋/(1 + q), q = e^(-1/scale), which must be
<= δ (checked; docs/proofs.md).
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from .. import _validate
from ..guarantees import ApproxDP
from .base import Mechanism, delta_field, epsilon_field
from .discrete import DiscreteLaplace

#: Cell indices are clamped to ±2^62 (a per-point map: it keeps ReplaceOne neighbours neighbours).
_CELL_LIMIT = float(2**62)


def cells(points: np.ndarray, offset: float, width: float) -> np.ndarray:
    """Integer cell indices ⌊(x - q)/b⌋ of every point, clamped to ±2^62 (total on finite points)."""
    with np.errstate(over="ignore"):
        scaled = np.floor((points - offset) / width)
    return np.clip(scaled, -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)


@attrs.frozen
class Histogram:
    """Released bins (integer index tuples) with their noisy frequencies; offset and width public."""

    frequencies: dict
    bin_width: float
    offset: float

    def heaviest(self, k: int) -> list[tuple[tuple[int, ...], float]]:
        return sorted(self.frequencies.items(), key=lambda item: -item[1])[:k]


@attrs.frozen
class HistogramLearner(Mechanism):
    """(ε, δ)-DP histogram of n points in R^d (Lemma A.13). ``offset=None`` draws q ~ U[0, b)."""

    source = "private histogram learner (Lemma A.13)"

    epsilon: float = epsilon_field()
    delta: float = delta_field()
    n: int = attrs.field(converter=lambda v: _validate.integer("n", v, minimum=1))
    bin_width: float = attrs.field(default=1.0, converter=lambda v: _validate.positive("bin_width", v))
    offset: float | None = attrs.field(
        default=None, converter=lambda v: None if v is None else _validate.real("offset", v)
    )
    noise: DiscreteLaplace = attrs.field(init=False)

    @noise.default
    def _noise(self) -> DiscreteLaplace:
        return DiscreteLaplace(self.epsilon, sensitivity=2)

    def __attrs_post_init__(self):
        if self.delta >= 1.0 / self.n:
            raise ValueError(f"Lemma A.13 needs delta < 1/n = {1 / self.n:.3g}, got delta={self.delta}")
        if self.delta_paid() > self.delta * (1.0 - 1e-9):  # the margin covers the float evaluation
            raise ValueError(
                f"with epsilon={self.epsilon} and delta={self.delta} the threshold of Lemma A.13 "
                f"lets a one-point bin through with probability {self.exclusive_bin_probability():.3g}, a δ of "
                f"{self.delta_paid():.3g} > delta; lower epsilon for this step"
            )

    @property
    def scale(self) -> float:
        """The noise scale on frequencies (2/(nε), rounded up with the count noise)."""
        return float(self.noise.scale) / self.n

    @property
    def threshold(self) -> float:
        """Noisy frequencies at or below 3 ln(2/δ)/(εn) are not released."""
        return self.count_threshold / self.n

    @property
    def count_threshold(self) -> float:
        return 3.0 * math.log(2.0 / self.delta) / self.epsilon

    def exclusive_bin_probability(self) -> float:
        """p = P[1 + Z > T] = P[Z >= ⌊T⌋] for the integer noise Z: a one-point bin survives."""
        least = math.floor(self.count_threshold)
        if least <= 0:
            return 1.0
        log_q = -1.0 / float(self.noise.scale)
        return math.exp(least * log_q) / (1.0 + math.exp(log_q))

    def delta_paid(self) -> float:
        """The δ of the proof of Lemma A.13 (docs/proofs.md): p for the input with the one-point bin;
        for the other input, when the moved point joins a bin both share (a count ratio of
        r = e^{1/t} <= e^{ε/2}), min(max(0, r/(1 − p) − e^ε), r·p) — zero unless p > 1 − e^{-ε/2}."""
        p = self.exclusive_bin_probability()
        if p >= 1.0:
            return 1.0
        ratio = math.exp(1.0 / float(self.noise.scale))
        return max(p, min(max(0.0, ratio / (1.0 - p) - math.exp(self.epsilon)), ratio * p))

    def guarantee(self) -> ApproxDP:
        return ApproxDP(self.epsilon, self.delta)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "n": self.n, "bin_width": self.bin_width,
                "offset": self.offset, "scale": self.scale, "threshold": self.threshold}

    def _check_value(self, value):
        points = _validate.finite_array("points", value, min_size=0)
        points = points[:, None] if points.ndim == 1 else points
        if points.ndim != 2 or points.shape[0] != self.n:
            raise ValueError(f"points must be an (n={self.n}, d) array, got shape {np.shape(value)}")
        return points

    def _one(self, points, rng) -> Histogram:
        offset = rng.uniform(0.0, self.bin_width) if self.offset is None else self.offset  # public coins
        keys, counts = np.unique(cells(points, offset, self.bin_width), axis=0, return_counts=True)
        noisy = counts + self.noise.noise(counts.shape, rng)
        kept = noisy > self.count_threshold
        frequencies = {tuple(int(c) for c in key): int(k) / self.n for key, k in zip(keys[kept], noisy[kept])}
        return Histogram(frequencies, self.bin_width, float(offset))

    def _draw(self, points, rng, size):
        if size is None:
            return self._one(points, rng)
        return [self._one(points, rng) for _ in range(size)]
