"""Counting the chosen events on the test half, batch by batch: memory O(batch), not O(samples).

Once the events of a pair are frozen on its training half, a ``Counter`` holds everything the test
half is reduced to: the events, the histogram bins of the figure (fixed on the training half too)
and the ``Layout`` that puts each test batch in the training outputs' columns. A batch of test
outputs becomes a ``Tally`` (per-event counts, histogram counts, runs), and the tallies of a side
are summed. A counter is a frozen value, so it travels to a process pool or a cluster with the
mechanism, and each worker returns a few integers per batch instead of its outputs.
"""

from __future__ import annotations

from typing import Sequence

import attrs
import numpy as np

from .events import Event
from .histogram import counts as histogram_counts, edges as histogram_edges
from .outputs import Outputs


#: training runs per side the figure's histogram bins are read from
BIN_ROWS = 20_000


@attrs.frozen(eq=False)
class Layout:
    """The training outputs' form: ``shape`` of a released output (None if every training run
    halted) and, for graph observations, the ``fields``. A test batch is laid out the same way:
    fields unseen in training are dropped and each field cut or NaN-padded to its training width
    (any fixed map of the output keeps the tests valid)."""

    shape: tuple[int, ...] | None
    fields: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, first: Outputs, second: Outputs) -> "Layout":
        return cls(first.shape if first.shape is not None else second.shape, first.fields)

    def __call__(self, outputs: Outputs) -> Outputs:
        if self.fields:
            return Outputs(outputs.widened(self.fields), outputs.reasons, (sum(w for _, w in self.fields),),
                           self.fields)
        if outputs.shape is not None and self.shape is not None and outputs.shape != self.shape:
            raise ValueError(f"fn returned outputs of different shapes {sorted({outputs.shape, self.shape})}; "
                             "outputs must have one fixed shape")
        if outputs.shape is None or self.shape is None:
            width = int(np.prod(self.shape)) if self.shape is not None else outputs.values.shape[1]
            values = np.full((len(outputs), width), np.nan) if outputs.shape is None else outputs.values
            return Outputs(values, outputs.reasons, self.shape if outputs.shape is None else outputs.shape)
        return outputs


@attrs.frozen(eq=False)
class Tally:
    """What a batch (or a whole side) of test outputs adds up to: ``counts[e]`` runs in event e,
    ``bins[e]`` and ``undefined[e]`` the figure's histogram of e's statistic, out of ``runs``."""

    counts: np.ndarray
    bins: tuple[np.ndarray, ...]
    undefined: np.ndarray
    runs: int

    def __add__(self, other: "Tally") -> "Tally":
        return Tally(self.counts + other.counts, tuple(a + b for a, b in zip(self.bins, other.bins)),
                     self.undefined + other.undefined, self.runs + other.runs)


@attrs.frozen(eq=False)
class Counter:
    """The frozen events of one pair and their figure's bins: turns test outputs into a ``Tally``."""

    layout: Layout
    events: tuple[Event, ...]
    edges: tuple[np.ndarray, ...]

    @classmethod
    def fixed(cls, events: Sequence[Event], train: tuple[Outputs, Outputs]) -> "Counter":
        """A counter for ``events``, with histogram bins read from the first ``BIN_ROWS`` training
        outputs of each side (the figure's bins need a few quantiles, not 2·10^6 runs of a learned score)."""
        rows = [side.rows(0, BIN_ROWS) for side in train]
        bins = tuple(histogram_edges(e.statistic(rows[0]), e.statistic(rows[1]), e.op, e.threshold) for e in events)
        return cls(Layout.of(*train), tuple(events), bins)

    @property
    def empty(self) -> Tally:
        """The tally of no runs (a side may draw none: its test size is a Poisson variable)."""
        return Tally(np.zeros(len(self.events), dtype=np.int64), tuple(np.zeros(len(e) - 1, dtype=np.int64)
                                                                        for e in self.edges),
                     np.zeros(len(self.events), dtype=np.int64), 0)

    def __call__(self, outputs: Outputs) -> Tally:
        outputs = self.layout(outputs)
        counts, bins, undefined, computed = [], [], [], {}
        for event, edges in zip(self.events, self.edges):
            # a statistic once per batch, however many events read it (the two tails of a learned score)
            if id(event.statistic) not in computed:
                computed[id(event.statistic)] = event.statistic(outputs)
            values = computed[id(event.statistic)]
            counts.append(event.count(values))
            histogram, missing = histogram_counts(values, edges)
            bins.append(histogram)
            undefined.append(missing)
        return Tally(np.array(counts, dtype=np.int64), tuple(bins), np.array(undefined, dtype=np.int64),
                     len(outputs))
