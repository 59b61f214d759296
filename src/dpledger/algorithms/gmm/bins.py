"""Steps 7–9 of Algorithm D.5 on the privatised rows: bins, their counts, their averages.

Bins are the cubes of the histogram learner (side b, offset q, integer cell indices). No JL
projection is applied: step 9's sensitivity uses the deterministic diameter b·sqrt(d) of a cube,
which a random projection would only give with high probability (see docs/proofs.md).
"""

from __future__ import annotations

import attrs
import numpy as np

from ...graph.runtime import Halt
from ...mechanisms.histogram import Histogram, cells


@attrs.frozen
class Bins:
    """The k kept cells (heaviest noisy frequencies) with the histogram's public width and offset."""

    cells: np.ndarray = attrs.field(eq=False)
    width: float
    offset: float

    def members(self, rows: np.ndarray) -> list[np.ndarray]:
        """For each kept cell, the rows inside it, clipped to the closed cube (so that rounding in
        the cell assignment can never put a row outside the proven diameter)."""
        indices = cells(rows, self.offset, self.width)
        out = []
        for cell in self.cells:
            inside = rows[np.all(indices == cell, axis=1)]
            low = self.offset + cell * self.width
            out.append(np.clip(inside, low, low + self.width))
        return out


def heaviest(histogram: Histogram, k: int) -> Bins:
    """The k heaviest released bins (post-processing); halts when fewer than k were released."""
    kept = histogram.heaviest(k)
    if len(kept) < k:
        raise Halt(f"histogram released {len(kept)} < k={k} bins")
    return Bins(np.array([cell for cell, _ in kept], dtype=np.int64), histogram.bin_width, histogram.offset)


def smallest_count(rows: np.ndarray, bins: Bins) -> float:
    """The smallest number of rows in a kept bin (ℓ1-sensitivity 1 when one row changes)."""
    return float(min(len(members) for members in bins.members(rows)))


def averages(rows: np.ndarray, bins: Bins) -> np.ndarray:
    """(k, d) averages of the rows in each kept bin (step 9, before noise): the cube's corner plus
    the mean offset from it, so the rounding of the mean is relative to the cube's side, not to
    the rows' size (``calibration.average_sensitivity``). It runs only after the light-bin test
    passed, which proves every kept bin holds at least ``min_bin`` >= 2 rows."""
    out = []
    for cell, members in zip(bins.cells, bins.members(rows)):
        corner = bins.offset + cell * bins.width
        out.append(corner + np.clip(members - corner, 0.0, bins.width).mean(axis=0))  # offsets in [0, b] exactly
    return np.array(out)
