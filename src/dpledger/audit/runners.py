"""The ``fn(data, rng, size)`` the auditor samples, for estimators, graphs and mechanisms.

Each runner returns outputs ``audit_pairs`` accepts: numbers and arrays as they are, a sequence
of them flattened into one vector, a halted graph run as the name of the halting test that fired
(a string: distinct tests stay distinct outcomes), and a ``Histogram`` as its frequencies over a
fixed list of bins (0 for a bin not released), preceded by its offset when that is random.

Pickling, for process pools: ``RunEstimator`` travels as the estimator's name and parameters and
rebuilds the graph in the worker, so every registered estimator works in any pool; ``RunGraph``
pickles its graph, which the standard library cannot do when a node holds a lambda or a closure
(dask pickles those with cloudpickle); ``RunMechanism`` pickles the mechanism (attrs values).
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import attrs
import numpy as np

from ..graph import Graph, registry
from ..mechanisms import Mechanism
from ..mechanisms.histogram import Histogram, HistogramLearner, cells


def auditable(output: Any, bins: tuple[tuple[int, ...], ...] | None = None, random_offset: bool = False):
    """``output`` as a number, an array, or None; see the module docstring."""
    if output is None or isinstance(output, (str, int, float, np.number, np.ndarray)):
        return output
    if isinstance(output, Histogram):
        if bins is None:
            raise TypeError("a Histogram output needs the list of bins it may release; audit the HistogramLearner "
                            "mechanism, or end the graph with a postprocess step that returns an array")
        unknown = set(output.frequencies) - set(bins)
        if unknown:
            raise ValueError(f"the histogram released bins {sorted(unknown)} outside the bins of the audited inputs")
        frequencies = [output.frequencies.get(key, 0.0) for key in bins]
        return np.array(([output.offset] if random_offset else []) + frequencies)
    if isinstance(output, (list, tuple)):
        return np.concatenate([np.ravel(np.asarray(part, dtype=float)) for part in output])
    raise TypeError(f"an output of type {type(output).__name__} cannot be audited: return numbers, arrays or a "
                    "sequence of them (e.g. with a final postprocess step)")


def _graph_runs(graph: Graph, data, rng: np.random.Generator, size: int) -> list:
    data = graph.validate(data)
    runs = []
    for _ in range(size):
        output, halted_by, _ = graph.execute(data, rng)
        runs.append(halted_by if halted_by is not None else auditable(output))
    return runs


@attrs.frozen
class RunEstimator:
    """Runs the registered estimator ``name`` built with ``params`` (rebuilt in each worker)."""

    name: str
    params: dict = attrs.field(eq=False)

    def __call__(self, data, rng: np.random.Generator, size: int) -> list:
        return _graph_runs(registry.estimator(self.name, **self.params), data, rng, size)


@attrs.frozen
class RunGraph:
    """Runs ``graph`` without charging (the auditor needs many runs on the same input)."""

    graph: Graph

    def __call__(self, data, rng: np.random.Generator, size: int) -> list:
        return _graph_runs(self.graph, data, rng, size)


def reachable_bins(learner: HistogramLearner, inputs: Sequence) -> tuple[tuple[int, ...], ...]:
    """Every bin a point of ``inputs`` can fall in: its own, or for a random offset q in [0, b)
    also the one below in each coordinate."""
    found = set()
    for points in inputs:
        points = learner._check_value(points)
        offset = 0.0 if learner.offset is None else learner.offset
        indices = cells(points, offset, learner.bin_width)
        d = points.shape[1]
        shifts = itertools.product((0, -1), repeat=d) if learner.offset is None else [(0,) * d]
        for shift in shifts:
            found.update(tuple(int(c) for c in row) for row in indices + np.array(shift))
    return tuple(sorted(found))


@attrs.frozen
class RunMechanism:
    """``mechanism.sample`` on a query answer (or, for a histogram learner, on points)."""

    mechanism: Mechanism
    bins: tuple[tuple[int, ...], ...] | None = None

    def __call__(self, value, rng: np.random.Generator, size: int):
        samples = self.mechanism.sample(value, rng, size)
        if isinstance(self.mechanism, HistogramLearner):
            return [auditable(h, self.bins, self.mechanism.offset is None) for h in samples]
        return samples

    def for_inputs(self, inputs: Sequence) -> "RunMechanism":
        """This runner with the bins of ``inputs`` (histogram learners only need them)."""
        if isinstance(self.mechanism, HistogramLearner):
            return attrs.evolve(self, bins=reachable_bins(self.mechanism, inputs))
        return self
