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

import attrs
import numpy as np


#: Rounding adds at most this fraction of the sensitivity by default.
RESOLUTION = 1024
#: Lattice points on each side of 0: |k| <= 2^50 keeps k + noise, and g·(k + noise), exact.
SPAN = 2**50
_EXPONENTS = (-1000, 1000)


def _power_of_two_at_most(value: float) -> float:
    exponent = math.floor(math.log2(value)) if value > 0 else _EXPONENTS[0]
    return 2.0 ** min(max(exponent, _EXPONENTS[0]), _EXPONENTS[1])


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
        spacing = _power_of_two_at_most(sensitivity / (RESOLUTION * rounding_distance(coordinates, norm)))
        return cls(spacing, SPAN * spacing if bound is None else min(bound, SPAN * spacing))

    def distance(self, sensitivity: float, coordinates: int, norm: int) -> float:
        """Distance between the rounded integer vectors of answers ``sensitivity`` apart."""
        return sensitivity / self.spacing + rounding_distance(coordinates, norm)

    def round(self, value: np.ndarray) -> np.ndarray:
        """The clamped answer in lattice units, as int64."""
        return np.rint(np.clip(value, -self.bound, self.bound) / self.spacing).astype(np.int64)

    def values(self, points: np.ndarray) -> np.ndarray:
        """Lattice points (integers) as the doubles g·k, exactly."""
        return points.astype(float) * self.spacing

    def params(self) -> dict:
        return {"spacing": self.spacing, "bound": self.bound}
