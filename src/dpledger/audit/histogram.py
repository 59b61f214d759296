"""A bounded summary of a tested event's statistic on the test half, for the audit figure.

An audit keeps no test outputs once it has counted them (the test half is streamed, batch by
batch), so each tested event records, per side, how many test-half values of its statistic fall
in each of about ``BINS`` bins (one bin per integer for integer statistics of small range), and
how many runs the statistic says nothing about (NaN: halted runs of a value statistic). The bins
are fixed on the training half, with the event, before any test draw: they span the central
99.8% of both training sides and the event's threshold, which is a bin edge (so no bin holds runs
both in and out of the event); values beyond are counted in the end bins, so heavy tails stay
visible without stretching the axis.
"""

from __future__ import annotations

import attrs
import numpy as np

BINS = 40
#: integer statistics spanning at most this many values get one bin per integer
MAX_INTEGER_BINS = 100
TAIL = 0.001


#: the two sides of a test, in the order of each direction's ratio
SIDE_NAMES = {"D→D'": ("M(D)", "M(D')"), "D'→D": ("M(D')", "M(D)")}


@attrs.frozen
class Histogram:
    """``counts[s][i]`` values of side s (0: M(D), 1: M(D')) in [edges[i], edges[i+1]);
    ``undefined[s]`` runs of side s where the statistic is NaN."""

    edges: tuple[float, ...]
    counts: tuple[tuple[int, ...], tuple[int, ...]]
    undefined: tuple[int, int]


def edges(first: np.ndarray, second: np.ndarray, op: str, threshold: float) -> np.ndarray:
    """Bin edges for the training values ``first`` and ``second`` of the event {s ``op``
    ``threshold``}, with one on its boundary: integers one bin per value, else about ``BINS`` equal
    bins."""
    finite = [side for side in (first[np.isfinite(first)], second[np.isfinite(second)]) if side.size]
    anchor = [threshold] if np.isfinite(threshold) else []  # an event {s >= ∞} has no boundary to show
    low = min(anchor + [float(np.quantile(side, TAIL)) for side in finite], default=0.0)
    high = max(anchor + [float(np.quantile(side, 1 - TAIL)) for side in finite], default=0.0)
    integers = all(np.array_equal(side, np.round(side)) for side in finite) and float(sum(anchor)).is_integer()
    if integers and high - low <= MAX_INTEGER_BINS:
        return np.arange(np.floor(low) - 0.5, np.ceil(high) + 1.0)
    boundary = low if not anchor else np.nextafter(threshold, np.inf) if op == "<=" else threshold  # {s <= t} holds t
    width = (high - low) / BINS or 1.0
    start = np.floor((low - boundary) / width)
    return boundary + width * np.arange(start, max(np.ceil((high - boundary) / width), start + 1) + 1)


def counts(values: np.ndarray, bin_edges: np.ndarray) -> tuple[np.ndarray, int]:
    """Per-bin counts of the defined ``values`` (clipped into the end bins) and how many are NaN."""
    undefined = np.isnan(values)
    defined = np.clip(values[~undefined], bin_edges[0], bin_edges[-1])
    return np.histogram(defined, bin_edges)[0], int(undefined.sum())
