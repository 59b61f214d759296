"""Statistics on the low-order bits of floating-point outputs (Mironov, CCS 2012).

A textbook sampler computes its noise as a float function g(U) of a uniform U on a grid
(U = k·2⁻⁵³) and releases y = fl(c + s·g(U)) for the exact answer c and a random sign s. Far from
c, consecutive grid points give noise values further apart than consecutive floats, so only some
floats are reachable from c at all, and the reachable set depends on c: an output of M(D') is
often impossible under M(D), whatever the noise scale. ``LatticeReachable`` tests, for every
output, whether some grid point gives exactly that float from a given centre; the auditor uses
it as a caller statistic (``audit_pairs(..., statistics=[...])``), fixed before sampling.

For graphs the auditor applies such statistics itself (``low_bit_statistics``): for every release
by ``TextbookLaplace`` whose query reads the graph's input directly (its centre is then the
query's answer on D, or on D'), the fraction of the release's coordinates reachable from that
centre under numpy's own Laplace sampler (``NumpyLaplaceReachable``). Float-safe mechanisms
release lattice points, which no such statistic can tell apart.
"""

from __future__ import annotations

import math
from typing import Callable

import attrs
import numpy as np

from ..graph import nodes, wrappers
from ..graph.records import PerRecord
from ..mechanisms import TextbookLaplace
from .statistics import FieldStatistic, ValueStatistic

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


_LOG = np.vectorize(math.log, otypes=[float])  # libm's log: what numpy's C sampler calls


def numpy_laplace_reachable(outputs: np.ndarray, centre: np.ndarray, scale: float, window: int = WINDOW) -> np.ndarray:
    """Where ``outputs`` equals fl(centre + X) for one of numpy's ``Generator.laplace(0, scale)``
    draws X: U = k·2⁻⁵³, X = 0 − scale·log((2 − U) − U) for U >= 1/2, else scale·log(U + U)."""
    y = np.asarray(outputs, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        m = (y - centre) / scale
        guess = np.where(y >= centre, 1.0 - np.exp(-m) / 2.0, np.exp(m) / 2.0)
    nearest = np.rint(np.nan_to_num(guess, nan=0.5) * 2.0**53)
    found = np.zeros(y.shape, dtype=bool)
    for offset in range(-window, window + 1):
        u = np.clip(nearest + offset, 1, 2**53 - 1) * GRID
        noise = np.where(u >= 0.5, 0.0 - scale * _LOG((2.0 - u) - u), scale * _LOG(u + u))
        found |= centre + noise == y
    return found


@attrs.frozen
class NumpyLaplaceReachable(ValueStatistic):
    """The fraction of a release's coordinates reachable from ``centre`` by ``TextbookLaplace``."""

    centre: np.ndarray = attrs.field(eq=False)
    scale: float
    side: str

    @property
    def name(self) -> str:
        return f"fraction of coordinates reachable from the answer on {self.side} by float Laplace"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return numpy_laplace_reachable(values, self.centre, self.scale).mean(axis=1)


def _direct_releases(node, maps: tuple = ()):
    """(release, maps) for the release nodes whose query reads the graph's input itself, or its
    records through per-record maps that read no release (``maps``: their functions); not a part,
    subsample or transform."""
    if isinstance(node, nodes.Release):
        yield node, maps
    elif isinstance(node, nodes.HaltIf):
        yield node.release, maps
    elif isinstance(node, nodes.Sequence):
        for child in node.nodes:
            yield from _direct_releases(child, maps)
    elif isinstance(node, (nodes.Conditional, wrappers.Absorb)):
        yield from _direct_releases(node.node, maps)
    elif isinstance(node, PerRecord) and not node.uses:
        yield from _direct_releases(node.node, (*maps, node.fn))


def low_bit_statistics(graph, pair) -> list[FieldStatistic]:
    """For each ``TextbookLaplace`` release of ``graph`` that reads its input and no earlier
    output: reachability from its answer on either side of ``pair`` (fixed before sampling)."""
    found = []
    for release, maps in _direct_releases(graph.root):
        if not isinstance(release.mechanism, TextbookLaplace) or release.uses:
            continue
        for side, data in zip(("D", "D'"), pair):
            records = graph.validate(data)
            for fn in maps:
                records = fn(records)
            centre = np.asarray(release.query(records), dtype=float).ravel()
            found.append(FieldStatistic(NumpyLaplaceReachable(centre, release.mechanism.scale, side), release.name))
    return found
