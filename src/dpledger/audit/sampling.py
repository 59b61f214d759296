"""Drawing the outputs of M(D) and M(D'): seeding, batching, streaming, and optional executors.

Randomness: batch b of half h (0 training, 1 test) of side s (0 for D, 1 for D') of pair p uses
``np.random.default_rng(SeedSequence(entropy, spawn_key=(p, s, h, b)))``. Every batch has its own
independent stream, addressed by position, so an audit is reproduced from its entropy alone and
gives the same outputs whether batches run in-process, in threads, in processes or on a cluster.

Two phases. ``draw_training`` draws the training half of every pair and keeps it in memory (it
is capped: ``pairs.MAX_TRAINING``). Events are then chosen and frozen, and only after that does
``count_test`` create the test streams: each test batch is drawn and at once reduced by the
pair's ``counting.Counter`` to a ``Tally`` of a few integers, so memory is O(batch) however many
test samples are drawn. The test draws are independent of everything the events were chosen on,
and each side of a pair draws N ~ Poisson(test half) of them, N from a stream of its own
(spawn key (p, s, 2)), so that the two sides' counts of any event are independent Poisson
variables, as the ratio test needs (``bounds``).

Executors: any ``concurrent.futures.Executor`` (``ThreadPoolExecutor``, ``ProcessPoolExecutor``,
``distributed.Client.get_executor()``) receives one task per batch: the module-level
``draw_batch`` (training) or ``count_batch`` (test, with the frozen counter) with ``fn``, the
input, a ``SeedSequence`` and the batch size. For process pools and clusters ``fn`` and the
inputs must be picklable (a module-level function or a mechanism object, not a lambda or a
closure, for the standard library's pickle); so must caller statistics.

Progress: ``advance(size)`` is called as each batch finishes (from executor threads too).
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from concurrent.futures import Executor
from typing import Callable, Sequence

import attrs
import numpy as np

from .counting import Counter, Tally
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


def _plan(half: int, sizes: tuple[int, int]) -> list[_Batch]:
    return [_Batch(side, half, index, n) for side in (0, 1) for index, n in enumerate(batch_sizes(sizes[side]))]


def poisson_sizes(entropy: int, pair: int, mean: int) -> tuple[int, int]:
    """The test draws of each side of ``pair``: N ~ Poisson(``mean``), from streams of their own."""
    return tuple(int(np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(pair, side, 2))).poisson(mean))
                 for side in (0, 1))


def count_batch(fn: Callable, data: object, seed: np.random.SeedSequence, size: int, batched: bool,
                counter: Counter) -> Tally:
    """``size`` fresh outputs of ``fn`` on ``data``, reduced by ``counter`` (only the tally travels back)."""
    return counter(draw_batch(fn, data, seed, size, batched))


def _ignore(runs: int) -> None:
    """The default progress callback."""


def _draw_all(pairs: dict[int, tuple], entropy: int, half: int, sizes: Callable[[int], tuple[int, int]],
              executor: Executor | None, advance: Callable[[int], None],
              task: Callable[[int], Callable]) -> list[tuple[list[_Batch], list]]:
    """Every batch of ``half`` for each pair ``{index: (D, D')}``, ``sizes(index)`` runs per side, run
    by ``task(index)(data, seed, size)`` in-process or on ``executor``: per pair, the batches and their
    results in plan order, stopping at the first failure (an exception in the list); that pair's other
    batches are cancelled."""
    plans = {i: _plan(half, sizes(i)) for i in pairs}

    def seed(pair: int, batch: _Batch) -> np.random.SeedSequence:
        return np.random.SeedSequence(entropy, spawn_key=(pair, batch.side, batch.half, batch.index))

    found = []
    if executor is None:
        for i, pair in pairs.items():
            results = []
            for batch in plans[i]:
                try:
                    results.append(task(i)(pair[batch.side], seed(i, batch), batch.size))
                except Exception as exc:  # the mechanism's own failure: recorded, never swallowed
                    results.append(exc)
                    break
                advance(batch.size)
            found.append((plans[i], results))
        return found
    futures = {i: [executor.submit(task(i), pair[b.side], seed(i, b), b.size) for b in plans[i]]
               for i, pair in pairs.items()}
    for i, pending in futures.items():
        for batch, future in zip(plans[i], pending):
            future.add_done_callback(lambda _, size=batch.size: advance(size))
    for i, pending in futures.items():
        results = []
        for future in pending:
            try:
                results.append(future.result())
            except Exception as exc:  # noqa: BLE001 - as above
                results.append(exc)
                for other in pending:
                    other.cancel()
                break
        found.append((plans[i], results))
    return found


def _failure(plan: list[_Batch], results: list) -> str | None:
    """The message of a pair's first failed batch: where and what."""
    for batch, result in zip(plan, results):
        if isinstance(result, Exception):
            return (f"{SIDES[batch.side]}, {HALVES[batch.half]} batch {batch.index}: "
                    f"{type(result).__name__}: {result}")
    return None


def draw_training(fn: Callable, pairs: Sequence[tuple[object, object]], entropy: int, size: int,
                  executor: Executor | None, advance: Callable[[int], None] = _ignore
                  ) -> list[tuple[Outputs, Outputs] | str]:
    """``size`` training outputs of each side of every pair (M(D), M(D')), or the pair's error."""
    task = functools.partial(draw_batch, fn, batched=accepts_size(fn))
    found = []
    for plan, results in _draw_all(dict(enumerate(pairs)), entropy, 0, lambda _: (size, size), executor, advance,
                                   lambda _: task):
        error = _failure(plan, results)
        if error is not None:
            found.append(error)
            continue
        try:
            fields = common_fields(results)  # observations of graph runs: one layout across both sides
            shape = None if fields else common_shape(results)
            found.append(tuple(Outputs.concatenate([r for b, r in zip(plan, results) if b.side == side], shape, fields)
                               for side in (0, 1)))
        except ValueError as exc:
            found.append(f"ValueError: {exc}")
    return found


def count_test(fn: Callable, pairs: Sequence[tuple[object, object]], entropy: int, sizes: Sequence[tuple[int, int]],
               counters: Sequence[Counter | None], executor: Executor | None,
               advance: Callable[[int], None] = _ignore) -> list[tuple[Tally, Tally] | str | None]:
    """``sizes[p]`` fresh test outputs of each side of every pair p with a counter (``poisson_sizes``),
    streamed and reduced to one ``Tally`` per side (None for a pair without a counter), or the pair's error."""
    batched = accepts_size(fn)
    live = [i for i, counter in enumerate(counters) if counter is not None]
    drawn = iter(_draw_all({i: pairs[i] for i in live}, entropy, 1, lambda i: sizes[i], executor, advance,
                           lambda i: functools.partial(count_batch, fn, batched=batched, counter=counters[i])))
    found: list = [None] * len(pairs)
    for i in live:
        plan, results = next(drawn)
        error = _failure(plan, results)
        found[i] = error if error is not None else tuple(
            functools.reduce(operator.add, [r for b, r in zip(plan, results) if b.side == side], counters[i].empty)
            for side in (0, 1))
    return found
