"""Power-of-two lattices: how a real query answer becomes an integer that exact noise can hide.

A float-safe mechanism for real values clamps the answer to a public [-bound, bound], rounds each
coordinate to the nearest multiple of a power of two g (x/g is exact in binary floating point),
adds exact integer noise, and releases g·(integer), which a double represents exactly. Nothing of
the answer survives in low-order bits: the released value is a function of the noisy integer.

Rounding moves each coordinate by at most g/2 and clamping never increases a distance, so
answers at ℓ1 distance Δ become integer vectors at ℓ1 distance <= Δ/g + D, and answers at ℓ2
distance Δ integer vectors at ℓ2 distance <= Δ/g + sqrt(D), for D coordinates
(docs/proofs.md, "Lattice releases"). g is the largest power of two with D·g <= Δ/RESOLUTION
(ℓ2: sqrt(D)·g), chosen when the answer's size D is known: the mechanisms calibrate their noise
in the query's units to Δ·(1 + 2/RESOLUTION), which covers the rounding for every D, so a
larger answer only gets a finer lattice, never less noise per unit of sensitivity.
"""

from __future__ import annotations

import math
from fractions import Fraction

import attrs
import numpy as np

from .. import _validate


#: Rounding adds at most this fraction of the sensitivity by default.
RESOLUTION = 1024
#: Lattice points on each side of 0: |k| <= 2^50 keeps k + noise, and g·(k + noise), exact.
SPAN = 2**50
#: The smallest power of two a double holds (2^-1074); a finer lattice is refused.
_SMALLEST_EXPONENT = -1074


def spacing(sensitivity: float, coordinates: int, norm: int) -> float:
    """The largest power of two g with D·g <= Δ/RESOLUTION (ℓ1) or sqrt(D)·g <= Δ/RESOLUTION (ℓ2),
    decided in exact rational arithmetic; a ValueError when no double is that small."""
    sensitivity = _validate.positive("sensitivity", sensitivity)
    coordinates = _validate.integer("coordinates", coordinates, minimum=1)
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    budget = Fraction(sensitivity) / RESOLUTION

    def fits(exponent: int) -> bool:
        g = Fraction(2) ** exponent
        return g * coordinates <= budget if norm == 1 else g * g * coordinates <= budget * budget

    ratio = budget / coordinates if norm == 1 else budget * budget / coordinates
    guess = ratio.numerator.bit_length() - ratio.denominator.bit_length()
    exponent = guess if norm == 1 else guess // 2
    while not fits(exponent):
        exponent -= 1
    while fits(exponent + 1):
        exponent += 1
    if exponent < _SMALLEST_EXPONENT:
        raise ValueError(f"sensitivity {sensitivity:.3g} over {coordinates} coordinate(s) needs a lattice finer than "
                         "the smallest double; rescale the query")
    return math.ldexp(1.0, exponent)


def rounding_distance(coordinates: int, norm: int) -> float:
    """The most rounding adds to a distance between D-coordinate answers: D (ℓ1) or sqrt(D) (ℓ2)."""
    return float(coordinates) if norm == 1 else math.sqrt(coordinates)


@attrs.frozen
class Lattice:
    """The lattice g·Z (``spacing`` g, a power of two) and the clamp [-bound, bound] (bound <= SPAN·g)."""

    spacing: float
    bound: float

    @classmethod
    def for_query(cls, sensitivity: float, coordinates: int, norm: int, bound: float | None = None) -> "Lattice":
        """The lattice for an answer of ``coordinates`` coordinates and this sensitivity under the
        ℓ``norm`` distance, clamped to ±min(``bound``, SPAN·g) (SPAN·g when ``bound`` is None)."""
        g = spacing(sensitivity, coordinates, norm)
        return cls(g, SPAN * g if bound is None else min(bound, SPAN * g))

    def distance(self, sensitivity: float, coordinates: int, norm: int) -> float:
        """Distance between the rounded integer vectors of answers ``sensitivity`` apart: at most
        ⌊Δ/g⌋ + D (ℓ1, an integer) or Δ/g + sqrt(D) (ℓ2)."""
        if norm == 1:
            return float(math.floor(sensitivity / self.spacing) + coordinates)
        return sensitivity / self.spacing + rounding_distance(coordinates, norm)

    def round(self, value: np.ndarray) -> np.ndarray:
        """The clamped answer in lattice units, as int64."""
        return np.rint(np.clip(value, -self.bound, self.bound) / self.spacing).astype(np.int64)

    def values(self, points: np.ndarray) -> np.ndarray:
        """Lattice points (integers) as the doubles g·k, exactly."""
        return points.astype(float) * self.spacing

    def params(self) -> dict:
        return {"spacing": self.spacing, "bound": self.bound}
