"""``audit_pairs``: test a claimed (ε, δ) on given neighbouring pairs by sampling.

Procedure, per pair (D, D'): draw ``samples`` outputs of M(D) and of M(D'), each split into a
training half (at most ``MAX_TRAINING``, kept in memory) and a test half (the rest, streamed), from
independent streams. On the training half, reduce outputs to scalar statistics (a learned score
among them: ``learned``) and pick the ``events_per_pair`` events (with their direction) whose
training counts give the largest ε lower bound. The events are then frozen, and only then are the
test streams drawn and counted (``sampling.count_test``), each side's test draws numbering
Poisson(test half). On the test half, each chosen (pair, direction, event) is one of m tests with
error budget w·α (α = 1 − confidence): the ratio test (``bounds.ratio_test``: one Clopper–Pearson
bound on p/q from the two Poisson counts, and with δ > 0 one on p) for the ε route, or, where the
training half rates it higher (common events), the trade-off test (p from below, q from above),
which μ-GDP and ρ-zCDP claims always take. The weights w sum to one and are
fixed on the training half (``bounds.weighted_levels``: half to the test each route rates best), so
by Bonferroni all the bounds hold together with probability >= confidence, and if the mechanism is
(ε, δ)-DP for these pairs the audit reports a violation (max ε_LB > ε) with probability at most α,
however many pairs it tries.
"""

from __future__ import annotations

import functools
import os
import time
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Callable, Iterable, Sequence

import numpy as np

from .. import _blas, _validate
from .bounds import (best_possible_bound, bonferroni_level, clopper_pearson_lower, clopper_pearson_upper,
                     epsilon_lower_bound, minimum_test_samples, mu_lower_bound, ratio_test, rho_lower_bound,
                     weighted_levels)
from .events import Candidate, choose_candidates, search_events
from .counting import Counter, Tally
from .histogram import Histogram
from .learned import fit_learned
from .outputs import Outputs
from .progress import tracking
from .report import AuditReport, EventTest, PairReport
from .sampling import count_test, draw_training, poisson_sizes
from .statistics import Custom, Statistic, fitting_parts

#: a sanity bound on the outputs per side of a pair (the test half is streamed: memory does not grow with it)
MAX_SAMPLES = 10**11
#: the training half is kept in memory, up to this many outputs per side; the rest of the samples test.
#: A tail event must be seen often enough in training to be chosen: at 2·10^7 per side, with 10^6
#: training draws NumericalSVT certified 0.024 and SVT3 0.138, with 2·10^6 0.040 and 0.195
MAX_TRAINING = 2_000_000
#: tests per pair: the best training event and the runner-up (typically the mirror-image event in
#: the other direction), a fallback against an event the training half over-rated (tested only
#: while its training bound is at least half the best's: ``events.FALLBACK_SHARE``)
EVENTS_PER_PAIR = 2
#: Currencies whose own best event ``audit_pairs`` can add to each pair's tests (a trade-off test each).
CURRENCIES = ("mu", "rho")


def checked_pairs(pairs: Iterable, relation: object | None) -> list[tuple[object, object]]:
    """``pairs`` as a list of (D, D') tuples, each neighbouring under ``relation`` when one is given."""
    try:
        pairs = list(pairs)
    except TypeError:
        raise TypeError(f"pairs must be an iterable of (D, D') pairs, got {type(pairs).__name__}") from None
    if not pairs:
        raise ValueError("pairs must contain at least one (D, D') pair, got none")
    if relation is not None and not callable(getattr(relation, "are_neighbours", None)):
        raise TypeError(f"relation must have an are_neighbours(a, b) method (e.g. dpledger.relations.ReplaceOne()), got {relation!r}")
    for index, pair in enumerate(pairs):
        if isinstance(pair, str) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"pairs[{index}] must be a (D, D') pair of two inputs, got {type(pair).__name__}")
        if relation is not None:
            try:
                neighbours = relation.are_neighbours(pair[0], pair[1])
            except (TypeError, ValueError) as exc:
                raise ValueError(f"pairs[{index}] cannot be checked under relation {relation}: {exc}") from exc
            if not neighbours:
                raise ValueError(f"pairs[{index}] is not a neighbouring pair under relation {relation}: the claimed "
                                 "guarantee says nothing about it; audit neighbouring pairs only")
    return [(pair[0], pair[1]) for pair in pairs]


def checked_samples(samples: object) -> int:
    """``samples`` as an int in [2, MAX_SAMPLES], or an error naming it."""
    samples = _validate.integer("samples", samples, minimum=2)
    if samples > MAX_SAMPLES:
        raise ValueError(f"samples must be <= {MAX_SAMPLES:.0e} per side, got {samples}")
    return samples


def split(samples: int) -> tuple[int, int]:
    """(training, test) outputs per side: half each, the training half capped at ``MAX_TRAINING``."""
    training = min(samples // 2, MAX_TRAINING)
    return training, samples - training


def check_samples(samples: int, epsilon: float, delta: float, confidence: float, tests: int) -> None:
    """Refuse a sample size with which no outcome at all could show a violation on a test half of
    its expected size (not even the leading test's, at the largest level any test can get)."""
    level = weighted_levels(confidence, tests, 1)[0]
    minimum = max(2 * minimum_test_samples(epsilon, delta, level) - 1, 2)
    if samples < minimum:
        best = best_possible_bound(split(samples)[1], level, delta)
        raise ValueError(
            f"samples={samples} is too few to audit epsilon={epsilon:g}, delta={delta:g} at confidence={confidence:g} "
            f"with up to {tests} test(s): about half the samples test the chosen events, and even an event that "
            f"separates M(D) from M(D') perfectly would certify only ε >= {max(best, 0.0):.3g} on that many. Use "
            f"samples >= {minimum}.")


def checked_statistics(statistics: Sequence[Callable]) -> list[tuple[str, Callable]]:
    """(label, function) of each caller statistic; labels from ``__name__`` or the position."""
    if callable(statistics) or isinstance(statistics, (str, bytes)):
        raise TypeError("statistics must be a sequence of functions, e.g. statistics=[my_statistic]")
    checked = []
    for index, function in enumerate(statistics):
        if not callable(function):
            raise TypeError(f"statistics[{index}] must be callable as f(outputs) -> one number per run, "
                            f"got {type(function).__name__}")
        checked.append((getattr(function, "__name__", f"statistics[{index}]"), function))
    return checked


def _learning(train: tuple[Outputs, Outputs]) -> bool:
    """Whether a pair's outputs get a learned score: anything but a scalar that never halts."""
    first, second = train
    shape = first.shape if first.shape is not None else second.shape
    scalar = shape == () or (len(first.fields) == 1 and first.fields[0][1] == 1)
    return not scalar or bool(first.halted.any() or second.halted.any())


def _search_parts(threads: ThreadPoolExecutor, fn: Callable, pair, train: tuple[Outputs, Outputs],
                  extra: list[tuple[str, Callable]], ideal_reals: bool, search: Callable) -> list[Future]:
    """The pair's event searches on ``threads``, one task per part that fits its statistics and then
    searches each (``search(statistic, first, second)``), in this order: the fitted statistics
    (``statistics.fitting_parts``), the learned score, the runner's own for this pair (a graph's
    low-order-bit statistics), then the caller's (when some output was released). Every
    statistic is fixed before the test half is drawn. The learned fit, the longest part, is
    submitted first; the order of the results is the parts' order."""
    first, second = train
    shape = first.shape if first.shape is not None else second.shape
    present = {field for field, _ in first.fields}
    own = fn.pair_statistics(pair) if callable(getattr(fn, "pair_statistics", None)) else []
    fixed = [s for s in own if s.field in present] + (
        [Custom(function, label, shape) for label, function in extra] if shape is not None else [])

    def learned() -> list[Statistic]:
        score = fit_learned(first, second) if _learning(train) else None
        return [] if score is None else [score]

    def run(part: Callable[[], list[Statistic]]) -> list[Candidate]:
        return [candidate for statistic in part() for candidate in search(statistic, first, second)]

    learning = threads.submit(run, learned)
    fitted = [threads.submit(run, part) for part in fitting_parts(first, second, ideal_reals)]
    return fitted + [learning, threads.submit(run, lambda: fixed)]


def _leading(chosen: list[list[Candidate] | str]) -> set[tuple[int, int]]:
    """(pair, event) indices of each route's leading test: its candidate with the largest training
    bound over all pairs (the first on a tie). Chosen on the training half only."""
    best: dict[str, tuple[float, int, int]] = {}
    for pair, candidates in enumerate(chosen):
        for index, candidate in enumerate(() if isinstance(candidates, str) else candidates):
            if candidate.currency not in best or candidate.training_bound > best[candidate.currency][0]:
                best[candidate.currency] = (candidate.training_bound, pair, index)
    return {(pair, index) for _, pair, index in best.values()}


def _evaluate(candidate: Candidate, index: int, counter: Counter, tallies: tuple[Tally, Tally], delta: float,
              level: float, leading: bool) -> EventTest:
    """Turn the test-half counts of the pair's ``index``-th event into its lower bounds, by the test
    its training half chose (``events.training_bound``: the ratio test, or the trade-off test that
    the μ and ρ routes always take), within the error budget ``level``."""
    event = candidate.event
    counts = (int(tallies[0].counts[index]), int(tallies[1].counts[index]))
    sizes = (tallies[0].runs, tallies[1].runs)
    first, second = (1, 0) if candidate.reverse else (0, 1)
    histogram = Histogram(tuple(float(e) for e in counter.edges[index]),
                          tuple(tuple(int(c) for c in tally.bins[index]) for tally in tallies),
                          tuple(int(tally.undefined[index]) for tally in tallies))
    common = dict(event=str(event), statistic=event.statistic.name, op=event.op, threshold=event.threshold,
                  direction="D'→D" if candidate.reverse else "D→D'", counts=counts, sizes=sizes, level=level,
                  leading=leading, training_bound=candidate.training_bound, histogram=histogram)
    if candidate.route == "ratio":
        # both sides' test draws number Poisson(the test half), as the ratio test needs (sampling.count_test)
        bound, ratio, p_lower = ratio_test(counts[first], counts[second], sizes[first], level, delta)
        return EventTest(**common, route="ratio", epsilon_lower_bound=max(0.0, float(bound)), ratio_lower=float(ratio),
                         p_lower=None if delta == 0 else float(p_lower))
    p_lower = float(clopper_pearson_lower(counts[first], sizes[first], level / 2))
    p_upper = float(clopper_pearson_upper(counts[second], sizes[second], level / 2))
    return EventTest(**common, route="trade-off", p_lower=p_lower, p_upper=p_upper,
                     epsilon_lower_bound=max(0.0, float(epsilon_lower_bound(p_lower, p_upper, delta))),
                     mu_lower_bound=float(mu_lower_bound(p_lower, p_upper)),
                     rho_lower_bound=float(rho_lower_bound(p_lower, p_upper)))


def _pair_report(index: int, candidates: list[Candidate] | str, counter: Counter | None,
                 tallies: tuple[Tally, Tally] | str | None, delta: float, levels: tuple[float, float],
                 leading: set[tuple[int, int]]) -> PairReport:
    if isinstance(candidates, str) or isinstance(tallies, str):
        return PairReport(index, (), error=candidates if isinstance(candidates, str) else tallies)
    if counter is None:
        return PairReport(index, ())
    return PairReport(index, tuple(
        _evaluate(c, e, counter, tallies, delta, levels[(index, e) not in leading], (index, e) in leading)
        for e, c in enumerate(candidates)))


def audit_pairs(fn: Callable, pairs: Iterable[tuple[object, object]], epsilon: float, delta: float = 0.0,
                samples: int = 100_000, confidence: float = 0.95, seed: int | None = None,
                executor: Executor | None = None, relation: object | None = None, *,
                events_per_pair: int = EVENTS_PER_PAIR, statistics: Sequence[Callable] = (),
                currencies: Sequence[str] = (), progress: object = False, ideal_reals: bool = False) -> AuditReport:
    """Audit the claim that ``fn`` is (``epsilon``, ``delta``)-DP on each neighbouring pair.

    ``fn(data, rng)`` returns one output (scalar, vector, label vector, or None / a string for a
    halted run); if it also takes a ``size`` keyword, ``fn(data, rng, size=m)`` must return m
    outputs along the first axis and is called once per batch. ``samples`` outputs are drawn per
    side of each pair (half choose events, half test them). ``seed`` None draws OS entropy; the
    report's ``seed`` reproduces the audit. ``executor``: any ``concurrent.futures.Executor``
    (then ``fn`` and the inputs must be picklable for process pools and clusters). ``relation``:
    when given, every pair must be neighbouring under it. ``events_per_pair``: how many events
    chosen on the training half are tested per pair at most (each costs Bonferroni budget; a
    runner-up far below the pair's best is not tested: ``events.FALLBACK_SHARE``).
    ``statistics``: extra reductions searched for events next to the built-in ones, each
    ``f(outputs) -> one number per run`` with ``outputs`` of shape (runs, *output shape); they
    must be fixed before sampling (any fixed function gives valid tests; see ``floating_point``)
    and safe to call from two threads at once (each pair's training half is searched in its own).
    ``progress``: a rich progress bar over the runs (``None``: only on an interactive terminal).
    ``currencies``: also test, per pair, the event with the best training bound in each of these
    ("mu": μ-GDP), one more test each in the same Bonferroni family.
    ``ideal_reals``: audit the claim for the mechanism on the reals, as a paper states it: the
    float-roundness statistic (``statistics.Roundness``), which catches textbook float noise (not
    ε-DP in floating point, whatever its scale), is then not searched, and the report says so.

    A mechanism that raises is recorded in the report's ``errors`` (that pair is not audited,
    ``ok`` is False); every other pair's tests stay valid.
    """
    start = time.perf_counter()
    if not callable(fn):
        raise TypeError(f"fn must be callable as fn(data, rng), got {type(fn).__name__}")
    epsilon = _validate.nonnegative("epsilon", epsilon)
    delta = _validate.probability("delta", delta)
    confidence = _validate.probability("confidence", confidence, low_open=True)
    samples = checked_samples(samples)
    events_per_pair = _validate.integer("events_per_pair", events_per_pair, minimum=1)
    if seed is not None:
        seed = _validate.integer("seed", seed, minimum=0)
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must be a concurrent.futures.Executor (with .submit), got {type(executor).__name__}")
    if not isinstance(ideal_reals, bool):
        raise TypeError(f"ideal_reals must be True or False, got {ideal_reals!r}")
    extra = checked_statistics(statistics)
    pairs = checked_pairs(pairs, relation)
    currencies = tuple(currencies)
    if any(currency not in CURRENCIES for currency in currencies):
        raise ValueError(f"currencies must be among {CURRENCIES}, got {currencies!r}")
    planned = len(pairs) * (events_per_pair + len(currencies))
    check_samples(samples, epsilon, delta, confidence, planned)

    root = np.random.SeedSequence(seed)
    half_sizes = split(samples)
    with tracking(progress, 2 * samples * len(pairs), "auditing") as tracker:
        trained = draw_training(fn, pairs, root.entropy, half_sizes[0], executor, tracker.advance)
        planned_level = bonferroni_level(confidence, planned)

        # every (pair, part) fit and its searches on a thread per core, the learned fits first:
        # sorting, counting and fitting are numpy calls that release the GIL.
        # One BLAS thread meanwhile, set and restored by this thread (threadpoolctl lets one thread set
        # OpenBLAS's process-wide count): the cores are busy with these threads, and a fit's small
        # products with two BLAS threads made a learned fit on 4,000 runs per side 0.53 s, not 0.12
        search = functools.partial(search_events, delta=delta, level=planned_level, currencies=("epsilon",) + currencies)
        with _blas.limit(1), ThreadPoolExecutor(os.cpu_count() or 1) as threads:
            searches = [result if isinstance(result, str) else
                        _search_parts(threads, fn, pair, result, extra, ideal_reals, search)
                        for pair, result in zip(pairs, trained)]
            chosen = [found if isinstance(found, str) else
                      choose_candidates([c for part in found for c in part.result()], events_per_pair, currencies)
                      for found in searches]
        tests = sum(len(c) for c in chosen if not isinstance(c, str))
        # weighted Bonferroni (bounds.weighted_levels): the weights depend on the training half only
        leading = _leading(chosen)
        levels = weighted_levels(confidence, tests, len(leading))
        # the events are frozen here; the test streams are created only now
        counters = [Counter.fixed([c.event for c in candidates], result) if not isinstance(candidates, str) and candidates
                    else None for candidates, result in zip(chosen, trained)]
        # each side's test draws number Poisson(the test half), from streams of their own (the ratio test)
        sizes = [poisson_sizes(root.entropy, index, half_sizes[1]) for index in range(len(pairs))]
        tracker.expect(sum(sum(size) - 2 * half_sizes[1] for size, counter in zip(sizes, counters) if counter)
                       - 2 * half_sizes[1] * sum(counter is None for counter in counters))
        tallies = count_test(fn, pairs, root.entropy, sizes, counters, executor, tracker.advance)
    reports = tuple(_pair_report(index, *found, delta, levels, leading)
                    for index, found in enumerate(zip(chosen, counters, tallies)))
    return AuditReport(claimed=(epsilon, delta), confidence=confidence, pairs=reports, samples=samples,
                       test_samples=half_sizes[1], tests=tests, levels=levels,
                       seconds=time.perf_counter() - start, seed=int(root.entropy), ideal_reals=ideal_reals)
