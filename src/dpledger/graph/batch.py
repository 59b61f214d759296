"""Many runs of a graph at once, for the auditor: ``Graph.observe_runs``.

The batch holds, for every output, its values over the runs (``columns.Column``), and for every
run how it ended. Each node runs on *groups*: runs that share one input (the graph's input, a
transform of it, the records a per-record map made for runs with the same earlier releases) or a
single run's own input (a subsample, a part of a split, a privatised input). Why the observations
are distributed exactly as ``size`` independent calls of ``Graph.observe``:

- Code that touches data and draws no coins (a query, a per-record map, a transform) is a function
  of its arguments, so it is evaluated once for all runs of a group whose arguments — the input
  and the earlier releases named in ``uses`` — are the same bits (``columns.key``); each run is
  handed the value it would have computed itself. Runs whose releases differ are evaluated apart,
  on their own releases.
- Noise is drawn fresh for every run: ``Mechanism.sample(value, rng, m)`` for the m runs of one
  answer, ``Mechanism.sample_each`` for runs with answers of their own; both are independent draws
  distributed as ``release``. Partitions, subsamples, ``private`` steps and privatised inputs draw
  their coins run by run. The order in which runs consume the generator differs from run-by-run
  execution; each run's coins are still fresh and independent of every other run's.
- Post-processing is user code that sees one run's outputs: it is called run by run, unless the node
  declares ``vectorised=True`` (``fn`` takes its inputs stacked along a leading run axis, and row i
  of its result is what it returns for run i alone); a vectorised call that raises or returns no
  row per run is redone run by run, so errors and halts stay each run's own.
- Errors and halts end the runs they happen in, with the same ending ("Type: message", or the
  halting step) as ``Graph.observe``; a node of an unknown type runs run by run through its own
  ``execute``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .columns import Column, Constant, segments
from .nodes import Conditional, HaltIf, Release, Repeat, Sequence, Split
from .records import PerRecord, checked_rows
from .runtime import Halt, RunState, child_path, touching
from .wrappers import Absorb, PostProcess, Private, Privatise, Subsample, Transform


class Runs:
    """``size`` runs of a graph: ``columns`` (each output's values over the runs), ``endings``
    (per run: "" to the end, the halting step, or "Type: message") and ``releases`` (plan order)."""

    def __init__(self, size: int, columns: dict[str, Column], endings: list[str], releases: tuple[str, ...]):
        self.size, self.columns, self.endings, self.releases = size, columns, endings, releases

    def run(self, i: int) -> tuple[dict, str]:
        """Run ``i`` as ``Graph.observe`` shows one: (released values in plan order, ending)."""
        outputs = {name: self.columns[name].get(i) for name in self.releases
                   if name in self.columns and self.columns[name].owner[i] >= 0}
        return outputs, self.endings[i]


def observe_runs(root, data, rng: np.random.Generator, size: int, releases: tuple[str, ...]) -> Runs:
    """``size`` runs of the node ``root`` on ``data`` (see the module docstring)."""
    batch = _Batch(size, rng)
    batch.run(root, [(np.arange(size), data)], root.name)
    return Runs(size, batch.columns, batch.endings, releases)


def _subset(runs: np.ndarray, values, keep: np.ndarray):
    if isinstance(values, Constant):
        return runs[keep], values
    if isinstance(values, np.ndarray):
        return runs[keep], values[keep]
    return runs[keep], [value for value, kept in zip(values, keep.tolist()) if kept]


def _rows(values, count: int):
    return (values[i] for i in range(count)) if isinstance(values, (np.ndarray, Constant)) else iter(values)


class _Batch:
    """The state of a batch of runs: outputs, endings, which runs still run."""

    def __init__(self, size: int, rng: np.random.Generator):
        self.size, self.rng = size, rng
        self.columns: dict[str, Column] = {}
        self.endings = [""] * size
        self.alive = np.ones(size, dtype=bool)

    # --- bookkeeping ---------------------------------------------------------------------------
    def column(self, name: str) -> Column:
        if name not in self.columns:
            self.columns[name] = Column(self.size)
        return self.columns[name]

    def store(self, name: str, blocks) -> None:
        for runs, values in blocks:
            self.column(name).set(runs, values)

    def fail(self, runs, error: BaseException) -> None:
        """End ``runs`` as ``Graph.observe`` ends a run that raised ``error`` (a ``Halt``: halted)."""
        self.end(runs, error.test if isinstance(error, Halt) else f"{type(error).__name__}: {error}")

    def end(self, runs, ending: str) -> None:
        runs = np.asarray(runs, dtype=np.int64)
        for run in runs.tolist():
            self.endings[run] = ending
        self.alive[runs] = False

    def live(self, groups) -> list:
        if self.alive.all():
            return groups
        return [(runs[self.alive[runs]], data) for runs, data in groups if self.alive[runs].any()]

    def still(self, blocks) -> list:
        if self.alive.all():
            return blocks
        return [_subset(runs, values, self.alive[runs]) for runs, values in blocks if self.alive[runs].any()]

    def present(self, uses: tuple[str, ...], runs: np.ndarray) -> np.ndarray:
        """The runs that hold every output of ``uses``; the others end with the KeyError a run
        raises for the first one it lacks."""
        for name in uses:
            have = self.columns[name].present(runs) if name in self.columns else np.zeros(len(runs), dtype=bool)
            if not have.all():
                self.fail(runs[~have], KeyError(name))
                runs = runs[have]
        return runs

    def by_inputs(self, uses: tuple[str, ...], runs: np.ndarray) -> list[tuple[np.ndarray, dict]]:
        """``runs`` grouped by the values of the outputs in ``uses`` (the same bits: one group),
        each with those values, in order of their first run (however the values are held)."""
        if not uses:
            return [(runs, {})]
        if len(runs) == 1:  # a run with an input of its own (a subsample, a part of a split)
            run = int(runs[0])
            for name in uses:
                if name not in self.columns or self.columns[name].owner[run] < 0:
                    self.fail(runs, KeyError(name))
                    return []
            return [(runs, {name: self.columns[name].get(run) for name in uses})]
        runs = self.present(uses, runs)
        if not len(runs):
            return []
        codes = [self.columns[name].codes(runs) for name in uses]
        labels = codes[0] if len(codes) == 1 else np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)[1]
        groups = sorted(segments(np.ravel(labels)), key=lambda where: where[0])  # in order of first run
        return [(runs[where], {name: self.columns[name].get(runs[where[0]]) for name in uses}) for where in groups]

    def inputs(self, uses: tuple[str, ...], runs: np.ndarray) -> tuple[np.ndarray, list[dict]]:
        """The runs that hold ``uses`` and, for each, its own inputs."""
        runs = self.present(uses, runs)
        columns = [self.columns[name].values(runs) for name in uses]
        return runs, [dict(zip(uses, values)) for values in zip(*columns)] if uses else [{} for _ in runs]

    # --- nodes ---------------------------------------------------------------------------------
    def run(self, node, groups, path: str) -> list:
        """Run ``node`` on ``groups`` [(runs, data)]: the blocks [(runs, values)] of its result
        for the runs that completed it."""
        handler = _HANDLERS.get(type(node))
        return handler(self, node, groups, path) if handler else self._one_by_one(node, groups, path)

    def _release(self, node: Release, groups, path: str) -> list:
        answers = []
        for runs, data in groups:
            for same, inputs in self.by_inputs(node.uses, runs):
                try:
                    answers.append((same, touching(path, node.query, data, **inputs)))
                except Exception as error:  # noqa: BLE001 - an error is an outcome, as in Graph.observe
                    self.fail(same, error)
        blocks = self._draw(node.mechanism, answers, path)
        self.store(node.name, blocks)
        return blocks

    def _draw(self, mechanism, answers, path: str) -> list:
        """Fresh noise for each run: one ``sample`` per answer shared by several runs, one
        ``sample_each`` for the answers of single runs (run by run if one of those fails)."""
        blocks, single = [], [(runs, value) for runs, value in answers if len(runs) == 1]
        for runs, value in answers:
            if len(runs) > 1:
                try:
                    blocks.append((runs, touching(path, mechanism.sample, value, self.rng, len(runs))))
                except Exception as error:  # noqa: BLE001
                    self.fail(runs, error)
        if not single:
            return blocks
        runs = np.concatenate([runs for runs, _ in single])
        try:
            return blocks + [(runs, touching(path, mechanism.sample_each, [value for _, value in single], self.rng))]
        except Exception:  # noqa: BLE001 - some answer fails: each run gets its own outcome
            kept, values = [], []
            for run, value in single:
                try:
                    values.append(touching(path, mechanism.release, value, self.rng))
                    kept.append(run)
                except Exception as error:  # noqa: BLE001
                    self.fail(run, error)
            return blocks + ([(np.concatenate(kept), values)] if kept else [])

    def _halt_if(self, node: HaltIf, groups, path: str) -> list:
        out = []
        for runs, values in self._release(node.release, groups, path):
            keep = np.ones(len(runs), dtype=bool)
            for i, value in enumerate(_rows(values, len(runs))):
                try:
                    stop = bool(node.halt_when(value))  # post-processing of the released value
                except Exception as error:  # noqa: BLE001 - a Halt halts, anything else is an error
                    self.fail(runs[i:i + 1], error)
                    keep[i] = False
                    continue
                if stop:
                    self.end(runs[i:i + 1], node.name)
                    keep[i] = False
            out.append(_subset(runs, values, keep))
        return out

    def _wrapped(self, node, groups, path: str) -> list:
        return self.run(node.node, groups, path)

    def _sequence(self, node: Sequence, groups, path: str) -> list:
        out = []
        for child in node.nodes:
            groups = self.live(groups)
            if not groups:
                break
            out = self.run(child, groups, child_path(path, child.name))
        out = self.still(out)
        self.store(node.name, out)
        return out

    def _split(self, node: Split, groups, path: str) -> list:
        parts = {}
        for runs, data in groups:
            for run in runs.tolist():
                try:
                    parts[run] = iter(touching(path, node.partition.parts, data, self.rng))
                except Exception as error:  # noqa: BLE001
                    self.fail([run], error)
        entered, last = np.array(sorted(parts), dtype=np.int64), Column(self.size)
        for branch in node.branches:  # zip(branches, parts): a run leaves when its parts run out
            mine = []
            for run, remaining in parts.items():
                if not self.alive[run]:
                    continue
                try:
                    mine.append((np.array([run]), next(remaining)))
                except StopIteration:
                    continue
                except Exception as error:  # noqa: BLE001
                    self.fail([run], error)
            parts = {int(runs[0]): parts[int(runs[0])] for runs, _ in mine}
            for runs, values in (self.run(branch, mine, child_path(path, branch.name)) if mine else ()):
                last.set(runs, values)
        done = entered[self.alive[entered]]
        out = [(done, [last.get(run) if last.owner[run] >= 0 else None for run in done.tolist()])] if len(done) else []
        self.store(node.name, out)
        return out

    def _repeat(self, node: Repeat, groups, path: str) -> list:
        for runs, _ in groups:
            for name, value in node.initial.items():
                self.column(name).set(runs, Constant(value))
        iterations = []
        for _ in range(node.times):
            groups = self.live(groups)
            if not groups:
                break
            column = Column(self.size)
            for runs, values in self.run(node.node, groups, child_path(path, node.node.name)):
                column.set(runs, values)
            iterations.append(column)
        groups = self.live(groups)
        if not groups:
            return []
        runs = np.sort(np.concatenate([runs for runs, _ in groups]))
        out = [(runs, [list(values) for values in zip(*(column.values(runs) for column in iterations))])]
        self.store(node.name, out)
        return out

    def _inner(self, node, made, path: str) -> list:
        """Run ``node.node`` on the groups ``made`` and store its result under ``node.name``."""
        out = self.run(node.node, made, child_path(path, node.node.name)) if made else []
        self.store(node.name, out)
        return out

    def _transform(self, node: Transform, groups, path: str) -> list:
        made = []
        for runs, data in groups:
            try:
                made.append((runs, touching(path, node.fn, data)))
            except Exception as error:  # noqa: BLE001
                self.fail(runs, error)
        return self._inner(node, made, path)

    def _each(self, groups, uses: tuple[str, ...], step) -> tuple[np.ndarray, list]:
        """``step(data, inputs)`` for every run alone (its coins its own, its outputs its own): the
        runs it completed and their values; a run it raises in ends with that error."""
        kept, values = [], []
        for runs, data in groups:
            runs, inputs = self.inputs(uses, runs)
            for run, own in zip(runs.tolist(), inputs):
                try:
                    values.append(step(data, own))
                    kept.append(run)
                except Exception as error:  # noqa: BLE001 - a Halt halts, anything else is an error
                    self.fail([run], error)
        return np.array(kept, dtype=np.int64), values

    def _subsample(self, node: Subsample, groups, path: str) -> list:
        made, each = [], getattr(node.sampler, "subsample_each", None)
        for runs, data in groups:  # a sampler that draws many subsamples at once; else (or if it fails) one by one
            try:
                samples = touching(path, each, data, self.rng, len(runs)) if each else None
            except Exception:  # noqa: BLE001
                samples = None
            if samples is None:
                runs, samples = self._each([(runs, data)], (), lambda data, _: touching(
                    path, node.sampler.subsample, data, self.rng))
            made += [(runs[i:i + 1], sample) for i, sample in enumerate(samples)]
        return self._inner(node, made, path)

    def _per_record(self, node: PerRecord, groups, path: str) -> list:
        made = []
        for runs, data in groups:
            for same, inputs in self.by_inputs(node.uses, runs):
                try:
                    made.append((same, checked_rows(path, touching(path, node.fn, data, **inputs), data)))
                except Exception as error:  # noqa: BLE001
                    self.fail(same, error)
        return self._inner(node, made, path)

    def _privatise(self, node: Privatise, groups, path: str) -> list:
        def noisy(data, inputs):
            return touching(path, node.mechanism.release, touching(path, node.query, data, self.rng, **inputs), self.rng)
        runs, rows = self._each(groups, node.uses, noisy)
        return self._inner(node, [(runs[i:i + 1], noisy_rows) for i, noisy_rows in enumerate(rows)], path)

    def _private(self, node: Private, groups, path: str) -> list:
        runs, values = self._each(groups, node.uses, lambda data, inputs: touching(path, node.fn, data, self.rng, **inputs))
        out = [(runs, values)] if len(runs) else []
        self.store(node.name, out)
        return out

    def _postprocess(self, node: PostProcess, groups, path: str) -> list:
        runs = self.present(node.uses, np.sort(np.concatenate([runs for runs, _ in groups])))
        if node.vectorised and len(runs):
            try:
                result = node.apply_stacked({name: self.columns[name].stacked(runs) for name in node.uses})
                if isinstance(result, np.ndarray) and result.ndim >= 1 and len(result) == len(runs):
                    self.store(node.name, [(runs, result)])
                    return [(runs, result)]
            except Exception:  # noqa: BLE001 - redone run by run below: each run its own outcome
                pass
        runs, values = self._each([(runs, None)], node.uses, lambda _, inputs: node.apply(inputs))
        out = [(runs, values)] if len(runs) else []
        self.store(node.name, out)
        return out

    def _one_by_one(self, node, groups, path: str) -> list:
        """A node of another type: its own ``execute``, run by run, on the run's own outputs."""
        kept, values = [], []
        for runs, data in groups:
            for run in runs.tolist():
                state = RunState(self.rng)
                state.outputs = {name: column.get(run) for name, column in self.columns.items()
                                 if column.owner[run] >= 0}
                before = dict(state.outputs)
                try:
                    values.append(node.execute(data, state, path))
                    kept.append(run)
                except Exception as error:  # noqa: BLE001
                    self.fail([run], error)
                for name, value in state.outputs.items():
                    if name not in before or before[name] is not value:
                        self.column(name).set(np.array([run]), [value])
        return [(np.array(kept, dtype=np.int64), values)] if kept else []


_HANDLERS: dict[type, Any] = {
    Release: _Batch._release, HaltIf: _Batch._halt_if, Conditional: _Batch._wrapped, Absorb: _Batch._wrapped,
    Sequence: _Batch._sequence, Split: _Batch._split, Repeat: _Batch._repeat, Transform: _Batch._transform,
    Subsample: _Batch._subsample, PerRecord: _Batch._per_record, Privatise: _Batch._privatise,
    Private: _Batch._private, PostProcess: _Batch._postprocess,
}
