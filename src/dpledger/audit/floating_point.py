"""Statistics on the low-order bits of floating-point outputs (Mironov, CCS 2012).

A textbook sampler computes its noise as a float function g(U) of a uniform U on a grid
(U = k·2⁻⁵³) and releases y = fl(c + s·g(U)) for the exact answer c and a random sign s. Far from
c, consecutive grid points give noise values further apart than consecutive floats, so only some
floats are reachable from c at all, and the reachable set depends on c: an output of M(D') is
often impossible under M(D), whatever the noise scale. ``LatticeReachable`` tests, for every
output, whether some grid point gives exactly that float from a given centre; the auditor uses
it as a caller statistic (``audit_pairs(..., statistics=[...])``), fixed before sampling.
"""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

GRID = 2.0 ** -53
#: grid points tried on each side of the one the inverse points to (covers its rounding error)
WINDOW = 8


@attrs.frozen
class LatticeReachable:
    """1.0 where an output equals fl(centre + s·magnitude(k·grid)) for some sign s and integer k.

    ``magnitude(u)`` must be the sampler's own float computation (vectorised), decreasing in u on
    (0, 1]; ``inverse(m)`` any approximate inverse of it. Outputs are scalars.
    """

    centre: float
    magnitude: Callable[[np.ndarray], np.ndarray] = attrs.field(eq=False)
    inverse: Callable[[np.ndarray], np.ndarray] = attrs.field(eq=False)
    grid: float = GRID
    window: int = WINDOW

    @property
    def __name__(self) -> str:
        return f"reachable from {self.centre:g} on the sampler's grid"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        y = np.asarray(outputs, dtype=float).reshape(len(outputs))
        sign = np.where(y < self.centre, -1.0, 1.0)
        with np.errstate(invalid="ignore"):
            nearest = np.rint(self.inverse(np.abs(y - self.centre)) / self.grid)
        steps = round(1 / self.grid)
        found = np.zeros(len(y), dtype=bool)
        for offset in range(-self.window, self.window + 1):
            k = np.clip(np.nan_to_num(nearest, nan=1.0) + offset, 1, steps)
            found |= self.centre + sign * self.magnitude(k * self.grid) == y
        return found.astype(float)


def textbook_laplace_reachable(centre: float, scale: float) -> LatticeReachable:
    """Reachability for the textbook Laplace sampler y = c ± (−scale·ln U), U = k·2⁻⁵³, k in 1..2⁵³."""
    return LatticeReachable(centre, lambda u: -scale * np.log(u), lambda m: np.exp(-m / scale))
