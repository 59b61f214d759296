"""The high-dimensional private histogram learner of Lemma A.13.

Bins are cubes of side b with offset q: coordinate x falls in interval ⌊(x - q)/b⌋. For every
non-empty bin the frequency p = count/n gets Lap(2/(nε)); empty bins stay 0; noisy frequencies
<= 3 ln(2/δ)/(εn) are set to 0. Under ReplaceOne (n fixed) two bins change by 1/n: the released
common bins are ε-DP by the Laplace mechanism, and a bin that is non-empty for only one of the
two inputs (frequency 1/n) survives the threshold with probability
½·exp(-(3 ln(2/δ) - ε)/2), which must be <= δ (checked; docs/proofs.md).
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from .. import _validate
from ..guarantees import ApproxDP
from .base import Mechanism, delta_field, epsilon_field


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

    def __attrs_post_init__(self):
        if self.delta >= 1.0 / self.n:
            raise ValueError(f"Lemma A.13 needs delta < 1/n = {1 / self.n:.3g}, got delta={self.delta}")
        if self.exclusive_bin_probability() > self.delta:
            raise ValueError(
                f"with epsilon={self.epsilon} and delta={self.delta} the threshold of Lemma A.13 "
                f"lets a one-point bin through with probability {self.exclusive_bin_probability():.3g} > delta; "
                "lower epsilon for this step"
            )

    @property
    def scale(self) -> float:
        return 2.0 / (self.n * self.epsilon)

    @property
    def threshold(self) -> float:
        return 3.0 * math.log(2.0 / self.delta) / (self.epsilon * self.n)

    def exclusive_bin_probability(self) -> float:
        """P[1/n + Lap(2/(nε)) > threshold]: the δ the proof of Lemma A.13 pays."""
        margin = max(self.threshold - 1.0 / self.n, 0.0)
        return 0.5 * math.exp(-margin / self.scale)

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
        if np.any(np.abs(points) / self.bin_width >= 2.0**62):
            raise ValueError("points lie too far out for integer bin indices of this bin_width; rescale the data")
        return points

    def _one(self, points, rng) -> Histogram:
        offset = rng.uniform(0.0, self.bin_width) if self.offset is None else self.offset
        cells = np.floor((points - offset) / self.bin_width).astype(np.int64)
        keys, counts = np.unique(cells, axis=0, return_counts=True)
        noisy = counts / self.n + rng.laplace(0.0, self.scale, size=counts.shape)
        kept = noisy > self.threshold
        frequencies = {tuple(int(c) for c in key): float(p) for key, p in zip(keys[kept], noisy[kept])}
        return Histogram(frequencies, self.bin_width, float(offset))

    def _draw(self, points, rng, size):
        if size is None:
            return self._one(points, rng)
        return [self._one(points, rng) for _ in range(size)]
