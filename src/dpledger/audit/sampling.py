"""Drawing the outputs of M(D) and M(D'): seeding, batching, and optional executors.

Randomness: batch b of half h (0 training, 1 test) of side s (0 for D, 1 for D') of pair p uses
``np.random.default_rng(SeedSequence(entropy, spawn_key=(p, s, h, b)))``. Every batch has its own
independent stream, addressed by position, so an audit is reproduced from its entropy alone and
gives the same outputs whether batches run in-process, in threads, in processes or on a cluster.
Training and test halves come from different streams, so the events chosen on the first are
independent of the counts taken on the second.

Executors: any ``concurrent.futures.Executor`` (``ThreadPoolExecutor``, ``ProcessPoolExecutor``,
``distributed.Client.get_executor()``) receives one task per batch: the module-level
``draw_batch`` with ``fn``, the input, a ``SeedSequence`` and the batch size. For process pools
and clusters ``fn`` and the inputs must be picklable (a module-level function or a mechanism
object, not a lambda or a closure, for the standard library's pickle).

Progress: ``advance(size)`` is called as each batch finishes (from executor threads too).
"""

from __future__ import annotations

import functools
import inspect
import math
from concurrent.futures import Executor
from typing import Callable, Sequence

import attrs
import numpy as np

from .outputs import Outputs, common_fields, common_shape

BATCHES_PER_HALF = 16
MIN_BATCH = 256
MAX_BATCH = 65_536
SIDES = ("M(D)", "M(D')")
HALVES = ("training", "test")


def accepts_size(fn: Callable) -> bool:
    """True when ``fn`` takes a ``size`` keyword: it then returns a whole batch per call."""
    try:
        parameter = inspect.signature(fn).parameters.get("size")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)


def batch_sizes(total: int) -> list[int]:
    """Split ``total`` runs into about ``BATCHES_PER_HALF`` batches of MIN_BATCH..MAX_BATCH runs."""
    size = min(max(math.ceil(total / BATCHES_PER_HALF), MIN_BATCH), MAX_BATCH)
    full, rest = divmod(total, size)
    return [size] * full + ([rest] if rest else [])


def draw_batch(fn: Callable, data: object, seed: np.random.SeedSequence, size: int, batched: bool) -> Outputs:
    """``size`` outputs of ``fn`` on ``data`` from a fresh generator seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    if batched:
        return Outputs.from_batch(fn(data, rng, size=size), size)
    return Outputs.from_list([fn(data, rng) for _ in range(size)])


@attrs.frozen
class _Batch:
    side: int
    half: int
    index: int
    size: int


@attrs.frozen(eq=False)
class PairSamples:
    """Outputs of one pair: ``train`` and ``test`` are (M(D), M(D')) tuples."""

    train: tuple[Outputs, Outputs]
    test: tuple[Outputs, Outputs]


def _plan(half_sizes: tuple[int, int]) -> list[_Batch]:
    return [_Batch(side, half, index, size)
            for side in (0, 1) for half in (0, 1) for index, size in enumerate(batch_sizes(half_sizes[half]))]


def _assemble(plan: list[_Batch], results: Sequence[Callable[[], Outputs]]) -> PairSamples | str:
    """Fetch each batch in order; the first failure becomes the pair's error message."""
    parts: dict[tuple[int, int], list[Outputs]] = {(side, half): [] for side in (0, 1) for half in (0, 1)}
    for batch, result in zip(plan, results):
        try:
            parts[batch.side, batch.half].append(result())
        except Exception as exc:  # the mechanism's own failure: recorded, never swallowed
            return f"{SIDES[batch.side]}, {HALVES[batch.half]} batch {batch.index}: {type(exc).__name__}: {exc}"
    every = [part for value in parts.values() for part in value]
    try:
        fields = common_fields(every)  # observations of graph runs: one layout across sides and halves
        shape = None if fields else common_shape(every)
        joined = {key: Outputs.concatenate(value, shape, fields) for key, value in parts.items()}
    except ValueError as exc:
        return f"ValueError: {exc}"
    return PairSamples(train=(joined[0, 0], joined[1, 0]), test=(joined[0, 1], joined[1, 1]))


def _counted(advance: Callable[[int], None], fn: Callable, data: object, seed: np.random.SeedSequence, size: int,
             batched: bool) -> Outputs:
    """``draw_batch``, then report ``size`` finished runs."""
    outputs = draw_batch(fn, data, seed, size, batched)
    advance(size)
    return outputs


def _ignore(runs: int) -> None:
    """The default progress callback."""


def sample_pairs(fn: Callable, pairs: Sequence[tuple[object, object]], entropy: int,
                 half_sizes: tuple[int, int], executor: Executor | None,
                 advance: Callable[[int], None] = _ignore) -> list[PairSamples | str]:
    """Training and test outputs of both sides of every pair, or an error message per failed pair."""
    batched = accepts_size(fn)
    plan = _plan(half_sizes)

    def seed(pair: int, batch: _Batch) -> np.random.SeedSequence:
        return np.random.SeedSequence(entropy, spawn_key=(pair, batch.side, batch.half, batch.index))

    if executor is None:
        return [_assemble(plan, [functools.partial(_counted, advance, fn, pair[b.side], seed(i, b), b.size, batched)
                                 for b in plan])
                for i, pair in enumerate(pairs)]
    futures = [[executor.submit(draw_batch, fn, pair[b.side], seed(i, b), b.size, batched) for b in plan]
               for i, pair in enumerate(pairs)]
    for pending in futures:
        for batch, future in zip(plan, pending):
            future.add_done_callback(lambda _, size=batch.size: advance(size))
    results = []
    for pending in futures:
        results.append(_assemble(plan, [future.result for future in pending]))
        if isinstance(results[-1], str):
            for future in pending:
                future.cancel()
    return results
