"""The ``fn(data, rng, size)`` the auditor samples, for estimators, graphs and mechanisms.

A graph run (registered estimators and graphs) is audited as a whole: the runner returns an
``Observation`` of every value the plan releases (intermediate releases and halting-test values
included, ``encode``d as flat vectors), and how the run ended: to the end, halted at a step, or
with an error (its type and message). Errors are outcomes too, because a user sees them. The
runner also proposes low-order-bit statistics for the textbook floating-point releases of a
pair (``floating_point.low_bit_statistics``). A mechanism's runner returns its samples; a
``Histogram`` becomes its frequencies over a fixed list of bins (0 for a bin not released),
preceded by its offset when that is random.

A batch of graph runs is drawn by ``Graph.observe_runs`` (``graph.batch``: distributed exactly as
that many independent ``Graph.observe`` calls, whatever the graph's shape) and laid out by
``outputs_of`` as the ``Outputs`` that ``Outputs.from_observations`` would make of the runs'
observations, encoding stacked numeric releases a batch at a time; ``per_run=True`` forces the
run-by-run reference path.

Pickling, for process pools: ``RunEstimator`` travels as the estimator's name and parameters and
rebuilds the graph in the worker (once per runner and process: ``_kept``), so every registered
estimator works in any pool; ``RunGraph`` pickles its graph, which the standard library cannot do when a node holds a lambda or a closure
(dask pickles those with cloudpickle); ``RunMechanism`` pickles the mechanism (attrs values).
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any, Sequence

import attrs
import numpy as np

from ..graph import Graph, registry
from ..mechanisms import Mechanism
from ..mechanisms.histogram import Histogram, HistogramLearner, cells
from .floating_point import low_bit_statistics
from .outputs import Observation, Outputs


def histogram_vector(histogram: Histogram, bins: tuple[tuple[int, ...], ...], random_offset: bool) -> np.ndarray:
    """A histogram learner's output as its frequencies over ``bins`` (0 for a bin not released),
    preceded by its offset when that is random."""
    unknown = set(histogram.frequencies) - set(bins)
    if unknown:
        raise ValueError(f"the histogram released bins {sorted(unknown)} outside the bins of the audited inputs")
    frequencies = [histogram.frequencies.get(key, 0.0) for key in bins]
    return np.array(([histogram.offset] if random_offset else []) + frequencies)


#: A released mapping (a histogram's bins) is audited as its size and its heaviest items.
MAPPING_ITEMS = 8


def encode(value: Any) -> np.ndarray:
    """A released value as a flat float vector: numbers and arrays flattened, sequences and attrs
    values joined (scalar fields first), a mapping as its size then its ``MAPPING_ITEMS`` largest
    (key, value) items."""
    if value is None:
        return np.zeros(0)
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: (-float(item[1]), item[0]))[:MAPPING_ITEMS]
        return np.concatenate([[float(len(value))]] + [np.append(np.ravel(np.asarray(key, dtype=float)), float(v))
                                                      for key, v in items])
    if attrs.has(type(value)):
        parts = [getattr(value, field.name) for field in attrs.fields(type(value))]
        parts.sort(key=lambda part: isinstance(part, dict))  # fixed-width fields before mappings
        return _joined(parts)
    if isinstance(value, (list, tuple)):
        return _joined(value)
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"a released value of type {type(value).__name__} cannot be audited: release numbers, "
                        "arrays, sequences of them, mappings or attrs values of them")
    return array.astype(float).ravel()


def _joined(parts) -> np.ndarray:
    return np.concatenate([encode(part) for part in parts]) if len(parts) else np.zeros(0)


#: Graphs (with their plans' releases) kept per process, so a worker builds and plans each once per
#: runner: the key holds the runner's ``token``, made when the runner is, so a new audit builds anew
#: (a factory may read module state that changed in between: a test's monkeypatch, a re-registration).
_KEPT: dict = {}
_KEEP = 32


def _token() -> str:
    return uuid.uuid4().hex


def _kept(key, build):
    """``build()``'s (graph, releases), built once per ``key`` in this process (the last ``_KEEP``)."""
    if key not in _KEPT:
        if len(_KEPT) >= _KEEP:
            _KEPT.pop(next(iter(_KEPT)))
        graph = build()
        _KEPT[key] = (graph, graph.plan().releases)
    return _KEPT[key]




def _graph_runs(graph: Graph, data, rng: np.random.Generator, size: int, releases=None, per_run: bool = False):
    """``size`` runs of ``graph`` on ``data``: sampled in one batch (``Graph.observe_runs``) as the
    rows of an ``Outputs``, or with ``per_run`` one ``Graph.observe`` at a time, as ``Observation``s
    (the reference the batch is tested against, and what benchmarks/audit_speed.py compares)."""
    data = graph.validate(data)
    releases = graph.plan().releases if releases is None else releases
    if per_run:
        runs = []
        for _ in range(size):
            outputs, ending = graph.observe(data, rng, releases)
            runs.append(Observation(tuple((name, encode(value)) for name, value in outputs.items()), ending))
        return runs
    return outputs_of(graph.observe_runs(data, rng, size, releases))


def outputs_of(runs) -> Outputs:
    """The ``Outputs`` that ``Outputs.from_observations`` makes of these runs' ``Observation``s
    (fields in order of first appearance, each as wide as its widest encoding, NaN where a run
    released nothing), encoding stacked numeric releases a batch at a time."""
    found = []
    for index, name in enumerate(runs.releases):
        column = runs.columns.get(name)
        rows = np.flatnonzero(column.owner >= 0) if column is not None else np.zeros(0, dtype=np.int64)
        if not len(rows):
            continue
        blocks, width = [], 0
        for where, values, positions in column.parts(rows):
            if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
                whole = len(positions) == len(values) and (positions == np.arange(len(values))).all()
                encoded = (values if whole else values[positions]).reshape(len(positions), -1)
                width = max(width, encoded.shape[1])
            else:
                encoded = [encode(values[position]) for position in positions.tolist()]
                width = max([width] + [value.size for value in encoded])
            blocks.append((rows[where], encoded))
        found.append((int(rows[0]), index, name, width, blocks))
    found.sort(key=lambda item: item[:2])
    fields = tuple((name, width) for _, _, name, width, _ in found)
    values = np.full((runs.size, sum(width for _, width in fields)), np.nan)
    start = 0
    for _, _, _, width, blocks in found:
        for targets, encoded in blocks:
            if isinstance(encoded, np.ndarray) and len(targets) == runs.size:  # every run, in order
                values[:, start:start + encoded.shape[1]] = encoded
            elif isinstance(encoded, np.ndarray):
                values[targets, start:start + encoded.shape[1]] = encoded
            else:
                for target, value in zip(targets.tolist(), encoded):
                    values[target, start:start + value.size] = value
        start += width
    ended = any(runs.endings)
    reasons = np.array(runs.endings, dtype=str) if ended else np.full(runs.size, "", dtype="<U1")
    return Outputs(values, reasons, (values.shape[1],) if fields else None, fields)


@attrs.frozen
class RunEstimator:
    """Runs the registered estimator ``name`` built with ``params`` (rebuilt in each worker)."""

    name: str
    params: dict = attrs.field(eq=False)
    per_run: bool = False
    token: str = attrs.field(factory=_token, eq=False, repr=False)

    def __call__(self, data, rng: np.random.Generator, size: int) -> Outputs | list[Observation]:
        graph, releases = _kept(self.token, lambda: registry.estimator(self.name, **self.params))
        return _graph_runs(graph, data, rng, size, releases, self.per_run)

    def pair_statistics(self, pair) -> list:
        return low_bit_statistics(registry.estimator(self.name, **self.params), pair)


@attrs.frozen
class RunGraph:
    """Runs ``graph`` without charging (the auditor needs many runs on the same input)."""

    graph: Graph
    per_run: bool = False
    token: str = attrs.field(factory=_token, eq=False, repr=False)

    def __call__(self, data, rng: np.random.Generator, size: int) -> Outputs | list[Observation]:
        graph, releases = _kept(self.token, lambda: self.graph)
        return _graph_runs(graph, data, rng, size, releases, self.per_run)

    def pair_statistics(self, pair) -> list:
        return low_bit_statistics(self.graph, pair)


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
            return [histogram_vector(h, self.bins, self.mechanism.offset is None) for h in samples]
        return samples

    def for_inputs(self, inputs: Sequence) -> "RunMechanism":
        """This runner with the bins of ``inputs`` (histogram learners only need them)."""
        if isinstance(self.mechanism, HistogramLearner):
            return attrs.evolve(self, bins=reachable_bins(self.mechanism, inputs))
        return self
