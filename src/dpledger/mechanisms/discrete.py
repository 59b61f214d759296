"""Exact integer noise for integer-valued queries.

Textbook Laplace noise added in floating point leaks the true value through the low-order bits
of the released double (Mironov 2012). For an integer-valued query, ``DiscreteLaplace`` adds
exact integer noise with P(z) ∝ exp(-|z|/t), sampled with integer arithmetic only (Canonne,
Kamath & Steinke 2020, Algorithm 2; ``exact``): every released value is an exact integer and
nothing is left to rounding. ε-DP for ℓ1-sensitivity Δ (an integer) when t >= Δ/ε (t is rounded
*up* to a multiple of 2^-32, never down). Real-valued queries use the lattice mechanisms of
``laplace`` and ``gaussian``, which round to a power-of-two lattice and add this kind of noise.
"""

from __future__ import annotations

import math
from fractions import Fraction

import attrs
import dp_accounting
import numpy as np

from .. import _validate
from ..guarantees import PureDP
from . import exact
from .base import Mechanism, epsilon_field, shaped

_GRID = 2**32  # the discrete scale is a multiple of 2^-32, rounded up
_CLAMP = 2**52  # integer answers are clamped to ±_CLAMP (exact in a double, far from int64's end)


def _integer_sensitivity(value) -> int:
    return _validate.integer("sensitivity", value, minimum=1)


@attrs.frozen
class DiscreteLaplace(Mechanism):
    """Exact integer noise P(z) ∝ exp(-|z|/t), t >= Δ/ε: ε-DP for integer-valued queries of
    integer ℓ1-sensitivity Δ (Lemma A.8's argument on Z; sampler: Canonne, Kamath & Steinke 2020)."""

    source = "discrete Laplace mechanism (exact sampling, Canonne-Kamath-Steinke 2020)"

    epsilon: float = epsilon_field()
    sensitivity: int = attrs.field(default=1, converter=_integer_sensitivity)
    coordinates: int | None = attrs.field(default=None, converter=lambda v: None if v is None else _validate.integer(
        "coordinates", v, minimum=1))

    def __attrs_post_init__(self):
        if self.scale > exact.MAX_SCALE:
            raise ValueError(f"the noise scale Δ/ε = {float(self.scale):.3g} exceeds {exact.MAX_SCALE:.3g}, "
                             "beyond which draws would not fit in 64-bit integers; raise epsilon")

    @property
    def scale(self) -> Fraction:
        return Fraction(math.ceil(Fraction(self.sensitivity) / Fraction(self.epsilon) * _GRID), _GRID)

    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def dp_event(self):
        """A declared scalar (``coordinates=1``): its discrete Laplace noise, the parameter 1/t rounded up
        (docs/proofs.md: more noise is a post-processing), priced by its own privacy loss. Any other
        size: its pure ε, since the product of discrete Laplaces with shifts of ℓ1 norm Δ is not
        proven to be dominated by one shift Δ (docs/proofs.md, "Discrete Laplace")."""
        if self.coordinates != 1:
            return super().dp_event()
        parameter = float(1 / self.scale)
        if Fraction(parameter) < 1 / self.scale:
            parameter = math.nextafter(parameter, math.inf)
        return dp_accounting.dp_event.DiscreteLaplaceDpEvent(parameter, self.sensitivity)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "scale": float(self.scale),
                **({} if self.coordinates is None else {"coordinates": self.coordinates})}

    def _check_value(self, value):
        """The integer answer, clamped to ±2^52 (a public bound; clamping never increases a distance)."""
        array = super()._check_value(value)
        if not np.all(array == np.round(array)):
            raise ValueError("DiscreteLaplace releases integer-valued queries; use Laplace for real values")
        if self.coordinates is not None and array.size != self.coordinates:
            raise ValueError(f"the answer has {array.size} coordinates, not the declared coordinates={self.coordinates}")
        return np.clip(array, -_CLAMP, _CLAMP).astype(np.int64)

    def _draw(self, value, rng, size):
        return value + self.noise(shaped(value.shape, size), rng)


    def _draw_stacked(self, values, rng):
        return values + self.noise(values.shape, rng)

    def noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Exact int64 draws of the noise alone."""
        return exact.discrete_laplace(self.scale.numerator, self.scale.denominator, shape, rng)
