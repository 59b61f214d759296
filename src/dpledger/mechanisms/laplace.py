"""Float-safe Laplace-family mechanisms for real-valued queries: Laplace (Lemma A.8) and truncated
Laplace (Lemma A.10), both released on a power-of-two lattice with exact integer noise.

The answer is clamped to a public [-bound, bound] and rounded to the lattice g·Z (``lattice``);
exact discrete Laplace noise (Canonne, Kamath & Steinke 2020) is added in lattice units, and
g·(integer) is released. The lattice sensitivity Δ_L covers the rounding, so the guarantee is
exactly the stated one for the values actually released (docs/proofs.md, "Lattice releases").
Textbook floating-point versions are in ``textbook`` (explicit opt-in only).

The exact samplers serve at most 2^40 lattice steps of noise per coordinate, and the lattice
gets finer as the answer grows, so a mechanism serves answers of at most ``max_coordinates``
coordinates. ``coordinates=D`` declares the answer's size: the mechanism then refuses, when it is
built (before any charge), a D it cannot serve, and every answer must have D coordinates.
"""

from __future__ import annotations

import abc

import math
from fractions import Fraction

import attrs
import dp_accounting
import numpy as np

from .. import _validate
from ..guarantees import ApproxDP, PureDP
from . import exact
from .base import Mechanism, delta_field, epsilon_field, sensitivity_field, shaped
from .discrete import DiscreteLaplace
from .lattice import _SMALLEST_EXPONENT, RESOLUTION, Lattice


def _bound_field():
    return attrs.field(default=None, converter=lambda v: None if v is None else _validate.positive("bound", v))


def round_up(value: Fraction, name: str = "noise scale") -> float:
    """The smallest double >= ``value``; a ValueError naming ``name`` when there is none."""
    try:
        result = float(value)
        if Fraction(result) < value:
            result = math.nextafter(result, math.inf)
    except OverflowError:
        result = math.inf
    if not math.isfinite(result):
        raise ValueError(f"the {name} overflows a double; rescale the query (a smaller sensitivity)")
    return result


def round_down(value: Fraction) -> float:
    """The largest double <= ``value`` (> 0): a noise multiplier that never overstates the noise."""
    result = float(value)
    return math.nextafter(result, 0.0) if Fraction(result) > value else result


#: Noise is calibrated to Δ·ROUNDING (ℓ1: ceil(Δ/g)·g + D·g <= Δ + 2g·D for g·D <= Δ/RESOLUTION).
ROUNDING = 1 + Fraction(2, RESOLUTION)


def _coordinates_field():
    return attrs.field(default=None, converter=lambda v: None if v is None else _validate.integer(
        "coordinates", v, minimum=1))


class _LatticeRelease(Mechanism):
    """What the lattice mechanisms share: the answer's size, checked against what the exact sampler
    serves, and the lattice for it. Subclasses define ``_noise`` (the noise's scale or σ in the
    query's units) and the fields ``sensitivity``, ``bound``, ``coordinates``."""

    def __attrs_post_init__(self):
        most = self.max_coordinates
        wanted = 1 if self.coordinates is None else self.coordinates
        if wanted > most:
            raise ValueError(
                f"{type(self).__name__}: an answer of {wanted:,} coordinate(s) with this noise (scale "
                f"{float(self._noise()):.4g}) and sensitivity {self.sensitivity:g} needs more than the exact sampler's "
                f"2^40 lattice steps per coordinate (it serves at most {most:,}): raise epsilon, lower the sensitivity "
                "or rescale the query")

    @property
    def max_coordinates(self) -> int:
        """The largest answer size D the exact sampler serves: the lattice g·Z for D coordinates
        (D·g <= Δ/1024 in ℓ1, sqrt(D)·g <= Δ/1024 in ℓ2) must keep noise/g <= 2^40 and g >= 2^-1074,
        i.e. g at least g_min, the smallest power of two with both (exact rational arithmetic)."""
        least = self._noise() / exact.MAX_SCALE
        exponent = least.numerator.bit_length() - least.denominator.bit_length() - 1
        while Fraction(2) ** exponent < least:
            exponent += 1
        g_min = Fraction(2) ** max(exponent, _SMALLEST_EXPONENT)
        room = Fraction(self.sensitivity) / RESOLUTION / g_min
        return min(math.floor(room if self.norm == 1 else room * room), 2**62)

    def _lattice(self, value: np.ndarray) -> Lattice:
        size = max(value.size, 1)
        if self.coordinates is not None and size != self.coordinates:
            raise ValueError(f"the answer has {size} coordinates, not the declared coordinates={self.coordinates}")
        if size > self.max_coordinates:
            raise ValueError(f"the answer has {size:,} coordinates, more than this noise serves "
                             f"({self.max_coordinates:,}); declare coordinates= so that this is refused before any "
                             "charge, and raise epsilon or rescale the query")
        return Lattice.for_query(self.sensitivity, size, self.norm, self.bound)


    def _draw(self, value, rng, size):
        return self._noisy(self._lattice(value), value, shaped(value.shape, size), rng)

    def _draw_stacked(self, values, rng):
        return self._noisy(self._lattice(values[0]), values, values.shape, rng)  # one lattice: one answer size

    @abc.abstractmethod
    def _noisy(self, lattice: Lattice, value: np.ndarray, shape: tuple[int, ...], rng) -> np.ndarray:
        """The rounded ``value`` plus exact noise of ``shape`` (broadcast), on ``lattice``."""


@attrs.frozen
class Laplace(_LatticeRelease):
    """ε-DP for a real query of ℓ1-sensitivity Δ (Lemma A.8's argument on a lattice): the answer,
    clamped and rounded to g·Z (``lattice``: g·D <= Δ/1024 for D coordinates), plus exact
    discrete Laplace noise of scale ``scale``/g in lattice units, where ``scale`` >= Δ(1 + 2/1024)/ε
    covers Δ_L = ceil(Δ/g) + D: the loss ratio exp(Δ_L·g/scale) is at most e^ε (docs/proofs.md).
    Answers beyond ±``bound`` (default: 2^50·g) are clamped."""

    source = "Laplace mechanism on a power-of-two lattice, exact discrete noise (Lemma A.8; docs/proofs.md)"
    norm = 1

    epsilon: float = epsilon_field()
    sensitivity: float = sensitivity_field()
    bound: float | None = _bound_field()
    coordinates: int | None = _coordinates_field()
    scale: float = attrs.field(init=False)

    @scale.default
    def _scale(self) -> float:
        """The noise scale in the query's units, the same for every answer size."""
        return round_up(Fraction(self.sensitivity) * ROUNDING / Fraction(self.epsilon))

    def _noise(self) -> Fraction:
        return Fraction(self.scale)

    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def dp_event(self):
        """A declared scalar (``coordinates=1``): its discrete Laplace noise, parameter g/scale rounded up,
        with the integer shift bound K = ⌊Δ/g⌋ + 1 (``privacy.pld`` prices it by its own loss; aK <= ε).
        Any other size: its pure ε (no PLD is proven for vectors: docs/proofs.md)."""
        if self.coordinates != 1:
            return super().dp_event()
        g = Fraction(Lattice.for_query(self.sensitivity, 1, self.norm, self.bound).spacing)
        parameter = round_up(g / Fraction(self.scale), "noise parameter")
        return dp_accounting.dp_event.DiscreteLaplaceDpEvent(parameter, math.floor(Fraction(self.sensitivity) / g) + 1)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "scale": self.scale, "bound": self.bound,
                **({} if self.coordinates is None else {"coordinates": self.coordinates})}

    def _noisy(self, lattice, value, shape, rng):
        scale = Fraction(self.scale) / Fraction(lattice.spacing)  # exact: g is a power of two
        noise = exact.discrete_laplace(scale.numerator, scale.denominator, shape, rng)
        return lattice.values(lattice.round(value) + noise)


def _log_excess(shift: int, scale: Fraction, distance: int) -> float:
    """log P[Z > -distance] for Z ∝ exp(-|z + shift|/t) on the integers z <= 0 (shift = -μ >= 0):
    with q = e^{-1/t} it is q^(shift - distance + 1)·(1 - q^distance)/(1 + q - q^(shift + 1))."""
    log_q = -1.0 / float(scale)
    return ((shift - distance + 1) * log_q + math.log(-math.expm1(distance * log_q))
            - math.log1p(math.exp(log_q) - math.exp((shift + 1) * log_q)))


@attrs.frozen
class TruncatedLaplace(Mechanism):
    """(ε, δ)-DP one-sided noise for a scalar of sensitivity Δ (Lemma A.10's argument on the
    lattice): the rounded answer plus integer noise Z <= 0 with P(Z = z) ∝ exp(-|z - μ|/t),
    t >= Δ_L/ε for Δ_L = floor(Δ/g) + 1, and μ the integer closest to 0 for which
    P[Z > -Δ_L] <= δ, computed from its closed form with a margin for rounding (docs/proofs.md).

    The noise is never positive, so the released value never exceeds the rounded true one: the
    one-sided test the halting steps of Algorithm D.5 need.
    """

    source = "truncated Laplace mechanism on a power-of-two lattice, exact discrete noise (Lemma A.10; docs/proofs.md)"
    norm = 1

    epsilon: float = epsilon_field()
    delta: float = delta_field()
    sensitivity: float = sensitivity_field()
    bound: float | None = _bound_field()
    lattice: Lattice = attrs.field(init=False)
    noise: DiscreteLaplace = attrs.field(init=False)
    offset: int = attrs.field(init=False)

    @lattice.default
    def _scalar_lattice(self) -> Lattice:
        return Lattice.for_query(self.sensitivity, 1, 1, self.bound)

    @noise.default
    def _noise(self) -> DiscreteLaplace:
        return DiscreteLaplace(self.epsilon, sensitivity=self.distance)

    @offset.default
    def _offset(self) -> int:
        """-μ >= Δ_L: the smallest that keeps P[Z > -Δ_L] below δ·(1 - 1e-9) (the margin covers
        the float evaluation), found by bisection; it decreases as the shift grows."""
        target = math.log(self.delta) + math.log1p(-1e-9)
        low, high = self.distance - 1, self.distance
        while _log_excess(high, self.noise.scale, self.distance) > target:
            low, high = high, 2 * high
        while high - low > 1:  # invariant: excess(low) > δ >= excess(high), or low below Δ_L
            middle = (low + high) // 2
            low, high = (middle, high) if _log_excess(middle, self.noise.scale, self.distance) > target else (low, middle)
        return high

    @property
    def distance(self) -> int:
        """Δ_L: the most two rounded answers within Δ can differ by, in lattice units."""
        return math.floor(self.sensitivity / self.lattice.spacing) + 1

    @property
    def scale(self) -> float:
        return float(self.noise.scale) * self.lattice.spacing

    @property
    def shift(self) -> float:
        """The location μ < 0 of the noise before truncation, in the query's units."""
        return -self.offset * self.lattice.spacing

    def guarantee(self) -> ApproxDP:
        return ApproxDP(self.epsilon, self.delta)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "sensitivity": self.sensitivity,
                "scale": self.scale, "shift": self.shift, **self.lattice.params()}

    def _check_value(self, value):
        if np.ndim(value) != 0:
            raise ValueError(f"TruncatedLaplace releases a scalar, got shape {np.shape(value)}")
        return super()._check_value(value)


    def _draw_stacked(self, values, rng):
        return self._draw(values, rng, len(values))  # scalars: answer i gets noise i

    def _draw(self, value, rng, size):
        value = self.lattice.round(value)
        shape = shaped((), size)
        noise = np.empty(shape, dtype=np.int64).reshape(-1)
        pending = np.arange(noise.size)
        while pending.size:  # Laplace noise about μ, conditioned on z <= 0 by rejection
            z = self.noise.noise((pending.size,), rng) - self.offset
            noise[pending[z <= 0]] = z[z <= 0]
            pending = pending[z > 0]
        return self.lattice.values(value + noise.reshape(shape))
