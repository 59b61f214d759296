"""A bounded summary of a tested event's statistic on the test half, for the audit figure.

An audit keeps no outputs once it has counted them (up to 10^8 per side would not fit in a
report), so each tested event records, per side, how many test-half values of its statistic fall
in each of about ``BINS`` bins (one bin per integer for integer statistics of small range), and
how many runs the statistic says nothing about (NaN: halted runs of a value statistic). Bins span
the central 99.8% of both sides and the event's threshold, which is a bin edge (so no bin holds
runs both in and out of the event); values beyond are counted in the end bins, so heavy tails
stay visible without stretching the axis.
"""

from __future__ import annotations

import attrs
import numpy as np

BINS = 40
#: integer statistics spanning at most this many values get one bin per integer
MAX_INTEGER_BINS = 100
TAIL = 0.001


@attrs.frozen
class Histogram:
    """``counts[s][i]`` values of side s (0: M(D), 1: M(D')) in [edges[i], edges[i+1]);
    ``undefined[s]`` runs of side s where the statistic is NaN."""

    edges: tuple[float, ...]
    counts: tuple[tuple[int, ...], tuple[int, ...]]
    undefined: tuple[int, int]


def _edges(sides: list[np.ndarray], op: str, threshold: float) -> np.ndarray:
    """Bin edges with one on the event's boundary: integers one bin per value, else about ``BINS``
    equal bins."""
    finite = [side for side in sides if side.size]
    low = min([threshold] + [float(np.quantile(side, TAIL)) for side in finite])
    high = max([threshold] + [float(np.quantile(side, 1 - TAIL)) for side in finite])
    integers = all(np.array_equal(side, np.round(side)) for side in finite) and float(threshold).is_integer()
    if integers and high - low <= MAX_INTEGER_BINS:
        return np.arange(np.floor(low) - 0.5, np.ceil(high) + 1.0)
    boundary = np.nextafter(threshold, np.inf) if op == "<=" else threshold  # {s <= t} holds s = t
    width = (high - low) / BINS or 1.0
    first = np.floor((low - boundary) / width)
    return boundary + width * np.arange(first, max(np.ceil((high - boundary) / width), first + 1) + 1)

def histogram(first: np.ndarray, second: np.ndarray, op: str, threshold: float) -> Histogram:
    """Counts of the statistic values ``first`` (on M(D)) and ``second`` (on M(D')) per bin, for
    the event {statistic ``op`` ``threshold``}."""
    sides = [values[~np.isnan(values)] for values in (first, second)]
    edges = _edges(sides, op, threshold)
    counts = tuple(tuple(int(c) for c in np.histogram(np.clip(side, edges[0], edges[-1]), edges)[0])
                   for side in sides)
    return Histogram(tuple(float(e) for e in edges), counts,
                     (int(np.isnan(first).sum()), int(np.isnan(second).sum())))
