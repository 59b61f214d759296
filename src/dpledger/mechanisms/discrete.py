"""Floating-point-safe releases.

Textbook Laplace noise added in floating point leaks the true value through the low-order bits
of the released double (Mironov 2012): the set of doubles reachable from f(D) + noise differs
from the set reachable from f(D') + noise. Two remedies:

- ``DiscreteLaplace``: for integer-valued queries, exact integer noise with P(z) ∝ exp(-|z|/t)
  sampled with integer arithmetic only (Canonne, Kamath & Steinke 2020, Algorithm 2). Every
  released value is an exact integer; nothing is left to rounding. ε-DP for ℓ1-sensitivity Δ
  (an integer) when t >= Δ/ε (t is rounded *up* to a multiple of 2^-32, never down).
- ``SnappingLaplace``: for real-valued queries, Mironov's snapping mechanism: clamp to [-B, B],
  add Laplace noise, round to a multiple of Λ (the smallest power of two >= the scale), clamp
  again. Theorem 1 of Mironov (2012) makes it (1 + 2^-49·B/Δ)/λ-DP for λ = scale/Δ when
  λ < B/Δ < 2^46·λ. For a vector of m coordinates whose shifts add up to at most Δ (ℓ1), the
  rounding term is paid once per coordinate: (1 + m·2^-49·B/Δ)/λ (docs/proofs.md); we solve for λ
  so that the stated ε holds. Remaining risk: the theorem assumes a correctly rounded logarithm;
  numpy's is accurate to about one ulp. We document it rather than claim more.
"""

from __future__ import annotations

import math
from fractions import Fraction

import attrs
import dp_accounting
import numpy as np

from .. import _validate
from ..guarantees import PureDP
from .base import Mechanism, epsilon_field, shaped

_GRID = 2**32  # the discrete scale is a multiple of 2^-32, rounded up


def _uniform_below(m: int, rng: np.random.Generator) -> int:
    """Exactly uniform integer in [0, m), for any positive m (rejection on random bytes)."""
    if m < 2**62:
        return int(rng.integers(m))
    bits = m.bit_length()
    while True:
        value = int.from_bytes(rng.bytes((bits + 7) // 8), "little") >> (8 * ((bits + 7) // 8) - bits)
        if value < m:
            return value


def _bernoulli(p: Fraction, rng: np.random.Generator) -> bool:
    return _uniform_below(p.denominator, rng) < p.numerator


def _bernoulli_exp(gamma: Fraction, rng: np.random.Generator) -> bool:
    """Bernoulli(exp(-γ)) for rational γ >= 0 (CKS 2020, Algorithm 1)."""
    while gamma > 1:
        if not _bernoulli_exp(Fraction(1), rng):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(gamma / k, rng):
        k += 1
    return k % 2 == 1


def _discrete_laplace(scale: Fraction, rng: np.random.Generator) -> int:
    """One exact draw with P(z) ∝ exp(-|z|/scale) (CKS 2020, Algorithm 2; scale = t/s)."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = _uniform_below(t, rng)
        if not _bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while _bernoulli_exp(Fraction(1), rng):
            v += 1
        y = (u + t * v) // s
        negative = _uniform_below(2, rng) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def _integer_sensitivity(value) -> int:
    return _validate.integer("sensitivity", value, minimum=1)


@attrs.frozen
class DiscreteLaplace(Mechanism):
    """Exact integer noise P(z) ∝ exp(-|z|/t), t >= Δ/ε: ε-DP for integer-valued queries of
    integer ℓ1-sensitivity Δ (Lemma A.8's argument on Z; sampler: Canonne, Kamath & Steinke 2020)."""

    source = "discrete Laplace mechanism (exact sampling, Canonne-Kamath-Steinke 2020)"

    epsilon: float = epsilon_field()
    sensitivity: int = attrs.field(default=1, converter=_integer_sensitivity)

    @property
    def scale(self) -> Fraction:
        exact = Fraction(self.sensitivity) / Fraction(self.epsilon)
        return Fraction(math.ceil(exact * _GRID), _GRID)

    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def dp_event(self):
        return dp_accounting.dp_event.DiscreteLaplaceDpEvent(float(1 / self.scale), self.sensitivity)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "scale": float(self.scale)}

    def _check_value(self, value):
        array = super()._check_value(value)
        if not np.all(array == np.round(array)) or np.any(np.abs(array) > 2**52):
            raise ValueError("DiscreteLaplace releases integer-valued queries; round or use SnappingLaplace")
        return array.astype(np.int64)

    def _draw(self, value, rng, size):
        noise = np.array([_discrete_laplace(self.scale, rng) for _ in range(int(np.prod(shaped(value.shape, size))))],
                         dtype=np.int64).reshape(shaped(value.shape, size))
        return value + noise


@attrs.frozen
class SnappingLaplace(Mechanism):
    """Mironov's snapping mechanism: ε-DP real-valued releases for queries in [-bound, bound]
    of ℓ1-sensitivity Δ, whose outputs are multiples of a power of two (Mironov 2012, Thm 1)."""

    source = "snapping mechanism (Mironov 2012, Theorem 1)"

    epsilon: float = epsilon_field()
    bound: float = attrs.field(converter=lambda v: _validate.positive("bound", v))
    sensitivity: float = attrs.field(default=1.0, converter=lambda v: _validate.positive("sensitivity", v))
    dimension: int = attrs.field(default=1, converter=lambda v: _validate.integer("dimension", v, minimum=1))

    def __attrs_post_init__(self):
        ratio = (self.bound / self.sensitivity) / self.lam
        if not 1 < ratio < 2**46:
            raise ValueError(f"Mironov's theorem needs λ < B/Δ < 2^46·λ; here B/Δ = {ratio:.3g}·λ. "
                             "Choose a bound larger than the noise scale")

    @property
    def lam(self) -> float:
        """λ on the normalised query f/Δ: solves ε = (1 + m·2^-49·B/Δ)/λ for m = ``dimension``."""
        return (1.0 + self.dimension * 2.0**-49 * self.bound / self.sensitivity) / self.epsilon

    @property
    def scale(self) -> float:
        return self.lam * self.sensitivity

    @property
    def grid(self) -> float:
        """Λ: the smallest power of two >= λ (on the normalised scale)."""
        return 2.0 ** math.ceil(math.log2(self.lam))

    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "bound": self.bound,
                "dimension": self.dimension, "scale": self.scale, "grid": self.grid * self.sensitivity}

    def _check_value(self, value):
        array = super()._check_value(value)
        if array.size > self.dimension:
            raise ValueError(f"this SnappingLaplace was calibrated for {self.dimension} coordinate(s), got {array.size}; "
                             "pass dimension=")
        return array

    def _draw(self, value, rng, size):
        b = self.bound / self.sensitivity
        normalised = np.clip(value / self.sensitivity, -b, b)
        shape = shaped(value.shape, size)
        u = 1.0 - rng.random(shape)  # uniform on (0, 1], 53-bit grid
        sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        noisy = normalised + sign * self.lam * np.log(u)
        snapped = np.clip(np.round(noisy / self.grid) * self.grid, -b, b)
        return snapped * self.sensitivity  # scaling back is post-processing
