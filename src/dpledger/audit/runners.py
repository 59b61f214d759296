"""The ``fn(data, rng, size)`` the auditor samples, for estimators, graphs and mechanisms.

A graph run (registered estimators and graphs) is audited as a whole: the runner returns an
``Observation`` of every value the plan releases (intermediate releases and halting-test values
included, ``encode``d as flat vectors), and how the run ended: to the end, halted at a step, or
with an error (its type and message). Errors are outcomes too, because a user sees them. The
runner also proposes low-order-bit statistics for the textbook floating-point releases of a
pair (``floating_point.low_bit_statistics``). A mechanism's runner returns its samples; a
``Histogram`` becomes its frequencies over a fixed list of bins (0 for a bin not released),
preceded by its offset when that is random.

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

from ..errors import PrivacyError
from ..graph import Graph, registry
from ..graph.nodes import Conditional, HaltIf, Release, Sequence as SequenceNode
from ..graph.runtime import Halt, touching
from ..graph.wrappers import PostProcess
from ..graph.records import PerRecord
from ..mechanisms import Mechanism
from ..mechanisms.histogram import Histogram, HistogramLearner, cells
from .floating_point import low_bit_statistics
from .outputs import Observation


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


def _graph_runs(graph: Graph, data, rng: np.random.Generator, size: int) -> list[Observation]:
    data = graph.validate(data)
    batched = _batched_runs(graph, data, rng, size)
    if batched is not None:
        return batched
    releases = graph.plan().releases
    runs = []
    for _ in range(size):
        outputs, ending = graph.observe(data, rng, releases)
        runs.append(Observation(tuple((name, encode(value)) for name, value in outputs.items()), ending))
    return runs


def _flat_steps(node, path: str, maps: tuple = ()) -> list | None:
    """(path, node, maps) of a graph made only of releases without ``uses``, halting tests,
    conditional releases and post-processing, in sequences and per-record maps without ``uses``
    (``maps``: the (path, fn) of the maps its data goes through); ``None`` for any other graph."""
    if isinstance(node, SequenceNode):
        steps = [_flat_steps(child, f"{path}/{child.name}", maps) for child in node.nodes]
        return None if any(s is None for s in steps) else [step for part in steps for step in part]
    if isinstance(node, Conditional):
        return _flat_steps(node.node, path, maps)
    if isinstance(node, PerRecord):
        return None if node.uses else _flat_steps(node.node, f"{path}/{node.node.name}", (*maps, (path, node.fn)))
    if isinstance(node, (Release, HaltIf)):
        release = node if isinstance(node, Release) else node.release
        return None if release.uses else [(path, node, maps)]
    return [(path, node, maps)] if isinstance(node, PostProcess) else None


def _batched_runs(graph: Graph, data, rng: np.random.Generator, size: int) -> list[Observation] | None:
    """``size`` runs of a graph whose releases do not depend on one another, drawn as one batch per
    release (``Mechanism.sample``) and then post-processed run by run: the same distribution of
    observations as ``size`` calls of ``Graph.observe``, errors and halts included, at the cost of
    a batched mechanism. ``None`` when the graph is not of that form."""
    steps = _flat_steps(graph.root, graph.root.name)
    if steps is None:
        return None
    draws: dict[str, Any] = {}
    for path, node, maps in steps:
        if isinstance(node, PostProcess):
            continue
        release = node if isinstance(node, Release) else node.release
        try:
            records = data
            for where, fn in maps:
                records = touching(where, fn, records)
            value = touching(path, release.query, records)
            draws[release.name] = touching(path, release.mechanism.sample, value, rng, size)
        except PrivacyError as error:  # a data-dependent error ends every run, as in Graph.observe
            draws[release.name] = error
    runs = []
    for i in range(size):
        outputs, ending = {}, ""
        for _, node, _ in steps:
            try:
                if isinstance(node, PostProcess):
                    outputs[node.name] = node.fn(**{u: outputs[u] for u in node.uses})
                    continue
                name = node.name
                if isinstance(draws[name], Exception):
                    raise draws[name]
                outputs[name] = draws[name][i]
                if isinstance(node, HaltIf) and bool(node.halt_when(outputs[name])):
                    ending = name
                    break
            except Halt as halt:
                ending = halt.test
                break
            except Exception as error:  # noqa: BLE001 - an error is an outcome, as in Graph.observe
                ending = f"{type(error).__name__}: {error}"
                break
        runs.append(Observation(tuple((name, encode(value)) for name, value in outputs.items()), ending))
    return runs


@attrs.frozen
class RunEstimator:
    """Runs the registered estimator ``name`` built with ``params`` (rebuilt in each worker)."""

    name: str
    params: dict = attrs.field(eq=False)

    def __call__(self, data, rng: np.random.Generator, size: int) -> list[Observation]:
        return _graph_runs(registry.estimator(self.name, **self.params), data, rng, size)

    def pair_statistics(self, pair) -> list:
        return low_bit_statistics(registry.estimator(self.name, **self.params), pair)


@attrs.frozen
class RunGraph:
    """Runs ``graph`` without charging (the auditor needs many runs on the same input)."""

    graph: Graph

    def __call__(self, data, rng: np.random.Generator, size: int) -> list[Observation]:
        return _graph_runs(self.graph, data, rng, size)

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
