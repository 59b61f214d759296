"""``assert_private``: a privacy test in three lines, hypothesis searching, fresh samples deciding.

1. **Search** (hypothesis): draws neighbouring pairs from the caller's strategy, scores each on its
   own *search* samples (``audit.auditor.search_score``: a held-out ε estimate, a ranking, not a
   test), steers towards high scores with ``hypothesis.target``, and when a score exceeds the
   claim and so does a recheck on more search samples at a stricter level, lets hypothesis shrink
   that pair (smaller datasets, simpler values) within a budget of shrink steps, then rounds it to
   short decimals where it still exceeds (``testing.shrinking``). Every score is deterministic in
   (seed, pair), so hypothesis sees a consistent test and the run depends on the seed alone
   (``reproducible.seed_only``).
2. **Decide** (fresh samples): the candidates (the first pair that exceeded and its shrunk form,
   or else the two best-scoring pairs) are audited once by ``audit_pairs`` on samples drawn from a
   stream the search never touched, with one Bonferroni family over every (pair, direction,
   event) tested. Given the candidates, which depend on the search draws only, a mechanism that
   keeps its claim is reported as violating with probability at most 1 − ``confidence``, however
   many examples hypothesis tried and however the pairs were shrunk (docs/design.md,
   "Privacy tests").
"""

from __future__ import annotations

import hashlib
import math

import hypothesis
import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis.strategies import SearchStrategy

from .. import _validate
from ..audit.auditor import SEARCH_CONFIDENCE, claim_of, executor_for, scored, search_sample_size
from ..audit.pairs import EVENTS_PER_PAIR, audit_pairs, check_samples, checked_samples, checked_statistics
from ..audit.report import AuditReport, EventTest
from ..audit.search import _key as pair_key
from ..audit.targets import describe_pair, resolve
from .reproducible import seed_only
from .shrinking import SHRINK_SECONDS, SHRINK_STEPS, Budget, readable

#: candidates decided on fresh samples: the pair that exceeded and its shrunk form (or the two best)
CANDIDATES = 2
#: a score above the claim is rechecked on this many times the search samples, at this confidence,
#: before hypothesis stops searching to shrink it: on a mechanism that is exactly as private as it
#: claims (a count under discrete Laplace), some scores exceed the claim by chance, and the first
#: such pair used to end the search (measured on that count: 7% of 400 scores on 2,000 samples
#: exceed the claim, 1% of rechecks on 8,000 at 0.995, 5.5% at 0.95; the same 39 of 40 seeds catch
#: a sum with twice its stated sensitivity at 0.995 as at 0.95)
RECHECK_FACTOR, RECHECK_CONFIDENCE = 4, 0.995


class PrivacyViolation(AssertionError):
    """A confirmed violation: ``pair`` (the smallest confirmed), ``epsilon_lower_bound`` certified on
    fresh samples, ``claimed`` (ε, δ), the distinguishing ``event`` in words, the ``report``."""

    def __init__(self, message: str, pair, epsilon_lower_bound: float, claimed: tuple[float, float], event: str,
                 report: AuditReport):
        super().__init__(message)
        self.pair, self.epsilon_lower_bound, self.claimed, self.event, self.report = (
            pair, epsilon_lower_bound, claimed, event, report)


class _Exceeds(Exception):
    """Raised inside the search when a pair's score exceeds the claim: hypothesis then shrinks it."""

    def __init__(self, pair):
        super().__init__("score above the claim")
        self.pair = pair


class _Raised(Exception):
    def __init__(self, pair, message: str):
        super().__init__(message)
        self.pair, self.message = pair, message


class _NotNeighbours(Exception):
    def __init__(self, pair, why: str):
        super().__init__(why)
        self.pair, self.why = pair, why


def _seed_for(seed: int, pairs: list, stream: str) -> int:
    """A seed that depends on the run's seed, the stream's name and the pairs' contents only."""
    digest = hashlib.sha256(repr((seed, stream, [pair_key(pair) for pair in pairs])).encode()).digest()
    return int.from_bytes(digest[:16], "little")


def _size(pair) -> tuple[int, float]:
    """How big a pair is, for choosing the smallest confirmed one: its inputs' sizes, then values."""
    arrays = [np.asarray(x, dtype=float) for x in pair]
    return sum(a.size for a in arrays), float(sum(np.abs(a).sum() for a in arrays))


def _neighbouring(pair, relation):
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise _NotNeighbours(pair, f"the strategy drew {type(pair).__name__} {pair!r}, not a (D, D') pair")
    if relation is not None:
        try:
            ok = relation.are_neighbours(pair[0], pair[1])
        except (TypeError, ValueError) as exc:
            raise _NotNeighbours(pair, f"the pair cannot be checked under {relation}: {exc}") from None
        if not ok:
            raise _NotNeighbours(pair, f"the pair is not neighbouring under {relation}")
    return pair[0], pair[1]


def assert_private(target, pairs: SearchStrategy, *, epsilon: float | None = None, delta: float | None = None,
                   relation=None, samples: int = 20_000, search_samples: int = 2_000, confidence: float = 0.999,
                   seed: int = 0, max_examples: int = 40, executor=None, statistics=(), shrink_steps: int = SHRINK_STEPS,
                   shrink_seconds: float = SHRINK_SECONDS, ideal_reals: bool = False) -> AuditReport:
    """Test that ``target`` keeps its privacy claim on the neighbouring pairs ``pairs`` draws.

    ``target``: a mechanism, a ``Graph``, a registered estimator's name, or a function
    ``fn(data, rng[, size])`` (then ``epsilon`` (and ``delta``) are the claim, and ``relation``
    may name the relation the pairs must satisfy). ``pairs``: a hypothesis strategy of (D, D')
    pairs, e.g. ``dpledger.audit.strategies.replace_one_pairs(...)``. ``max_examples`` pairs are
    searched on ``search_samples`` draws per side each; the decision uses ``samples`` fresh draws
    per side of each candidate. Passes silently (returning the deciding report) when no violation
    is confirmed; raises ``PrivacyViolation`` otherwise. A false alarm on a target that keeps its
    claim has probability at most 1 − ``confidence``. ``seed`` reproduces everything.
    ``executor``: as for ``audit`` (a ``concurrent.futures.Executor`` or "processes").
    ``statistics``: extra reductions searched for events, as for ``audit`` (fixed before sampling).
    ``ideal_reals``: test the claim for the mechanism on the reals, float rounding untested (``audit_pairs``).
    A violating pair is shrunk in at most ``shrink_steps`` steps (deterministic: same seed, same
    pair), ``shrink_seconds`` being only a safety stop the violation names, then rounded to short
    decimals where it still violates (``testing.shrinking``).
    """
    __tracebackhide__ = True  # pytest shows the violation's message, not this library's source
    if not isinstance(pairs, SearchStrategy):
        raise TypeError(f"pairs must be a hypothesis strategy of (D, D') pairs (e.g. "
                        f"dpledger.audit.strategies.replace_one_pairs()), got {type(pairs).__name__}")
    seed = _validate.integer("seed", seed, minimum=0)
    max_examples = _validate.integer("max_examples", max_examples, minimum=1)
    checked_statistics(statistics)
    if not isinstance(ideal_reals, bool):
        raise TypeError(f"ideal_reals must be True or False, got {ideal_reals!r}")
    samples = checked_samples(samples)
    confidence = _validate.probability("confidence", confidence, low_open=True)
    budget = Budget(shrink_steps, shrink_seconds)
    resolved = resolve(target, relation, None, np.random.default_rng(seed))
    epsilon, delta = claim_of(resolved, epsilon, delta)
    check_samples(samples, epsilon, delta, confidence, CANDIDATES * EVENTS_PER_PAIR)  # before any sampling
    search_samples = search_sample_size(search_samples, samples, 1, epsilon, delta)

    with executor_for(executor) as pool:
        return _search_and_decide(resolved, pairs, epsilon, delta, samples, search_samples, confidence, seed,
                                  max_examples, pool, {"statistics": tuple(statistics), "ideal_reals": ideal_reals},
                                  budget)


def _search_and_decide(resolved, pairs, epsilon, delta, samples, search_samples, confidence, seed, max_examples,
                       pool, audit_options: dict, budget: Budget) -> AuditReport:
    __tracebackhide__ = True

    def run(chosen, **options) -> AuditReport:
        return audit_pairs(resolved.runner(chosen), chosen, epsilon=epsilon, delta=delta, relation=resolved.relation,
                           executor=pool, **audit_options, **options)

    scores: dict[tuple, tuple[float | None, tuple]] = {}
    rechecked: dict[tuple, bool] = {}
    exceeded: list[tuple] = []
    known: set[tuple] = set()  # pairs known to exceed: they raise again whatever the budget

    def estimate(pair, samples: int, confidence: float, stream: str) -> float | None:
        report = run([pair], samples=samples, confidence=confidence, seed=_seed_for(seed, [pair], stream),
                     events_per_pair=1)
        if not report.ok:  # code that touches data must be total: a crash on a drawn pair fails the test
            raise _Raised(pair, report.errors[0].message)
        return scored(report, delta)

    def score(pair) -> float | None:
        key = pair_key(pair)
        if key not in scores:
            scores[key] = (estimate(pair, search_samples, SEARCH_CONFIDENCE, "search"), pair)
        return scores[key][0]

    def exceeds(pair) -> bool:
        """The score, and a recheck on more search samples at a stricter level, exceed the claim."""
        key = pair_key(pair)
        if key not in rechecked:
            value = estimate(pair, RECHECK_FACTOR * search_samples, RECHECK_CONFIDENCE, "recheck")
            rechecked[key] = value is not None and value > epsilon
        return rechecked[key]

    @hypothesis.settings(max_examples=max_examples, database=None, deadline=None, derandomize=False,
                         phases=(Phase.explicit, Phase.generate, Phase.target, Phase.shrink),
                         suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                         verbosity=Verbosity.quiet)
    @hypothesis.seed(seed)
    @hypothesis.given(pairs)
    def search(pair):
        pair = _neighbouring(pair, resolved.relation)
        if pair_key(pair) not in known:
            if exceeded and not budget.take():  # shrinking, and out of steps: keep the smallest so far
                return
            value = score(pair)
            finite = value is not None and math.isfinite(value)
            hypothesis.target(value if finite else -1.0, label="search estimate of ε")
            if not (finite and value > epsilon and exceeds(pair)):
                return
            if not exceeded:
                exceeded.append(pair)
            known.add(pair_key(pair))
        raise _Exceeds(pair)  # one place: hypothesis tells failures apart by where they are raised

    def still_exceeds(pair) -> bool:
        try:
            pair = _neighbouring(pair, resolved.relation)
            value = score(pair)
            return value is not None and value > epsilon and exceeds(pair)
        except (_NotNeighbours, _Raised, TypeError, ValueError):  # e.g. outside the target's domain
            return False

    shrunk = None
    try:
        with seed_only():
            search()
    except _Exceeds as found:
        domain = resolved.domain
        shrunk = readable(found.pair, still_exceeds, (getattr(domain, "low", -math.inf), getattr(domain, "high", math.inf)))
    except _Raised as crash:  # shrunk by hypothesis to a small input that still raises
        raise AssertionError(f"{resolved.label} raised on a neighbouring pair (an error that depends on the data "
                             f"is an observable no claim covers): {crash.message}\n  D  = {crash.pair[0]!r}\n"
                             f"  D' = {crash.pair[1]!r}") from None
    except _NotNeighbours as bad:
        raise ValueError(f"pairs: {bad.why} (the claim of {resolved.label} speaks only of neighbours): "
                         f"D = {bad.pair[0]!r}, D' = {bad.pair[1]!r}" if isinstance(bad.pair, (tuple, list))
                         and len(bad.pair) == 2 else f"pairs: {bad.why}") from None
    candidates = _candidates(exceeded, shrunk, scores)
    report = run(candidates, samples=samples, confidence=confidence, seed=_seed_for(seed, candidates, "decide"))
    if not report.ok:
        raise AssertionError(f"{resolved.label} raised on a candidate pair: {report.errors[0].message}")
    if report.violation:
        raise _violation(resolved, report, candidates, len(scores), budget if shrunk is not None else None)
    return report


def _candidates(exceeded: list, shrunk, scores: dict) -> list:
    if exceeded:
        chosen = [exceeded[0]] + ([shrunk] if shrunk is not None else [])
    else:
        ranked = sorted((s for s in scores.values() if s[0] is not None), key=lambda s: -s[0])
        chosen = [pair for _, pair in ranked[:CANDIDATES]] or [pair for _, pair in list(scores.values())[:1]]
    unique = {pair_key(pair): pair for pair in chosen}
    return list(unique.values())


def _violation(resolved, report: AuditReport, candidates: list, searched: int,
               budget: Budget | None) -> PrivacyViolation:
    """The shrunk pair if confirmed (``budget``: how it was shrunk), else the smallest confirmed, in words."""
    confirmed = [(index, p) for index, p in enumerate(report.pairs) if p.epsilon_lower_bound > report.claimed[0]]
    index, pair_report = (confirmed[-1] if budget is not None else
                          min(confirmed, key=lambda item: _size(candidates[item[0]])))
    pair = candidates[index]
    test: EventTest = pair_report.best
    epsilon, delta = report.claimed
    origin = ("" if len(candidates) == 1 or index == 0 else
              f", shrunk by hypothesis from {describe_pair(resolved.relation, *candidates[0])}")
    message = (
        f"{resolved.label} claims (ε = {epsilon:g}, δ = {delta:g}) but fresh samples certify ε >= "
        f"{pair_report.epsilon_lower_bound:.4g} on this pair at confidence {report.confidence:g}:\n"
        f"  D  = {np.asarray(pair[0]).tolist()!r}\n  D' = {np.asarray(pair[1]).tolist()!r}\n"
        f"  ({describe_pair(resolved.relation, *pair)}{origin})\n"
        f"  distinguishing event E = {{{test.event}}}: {test.evidence}\n"
        + (f"  {budget.describe()}\n" if budget is not None else "") +
        f"  searched {searched} pair(s) with hypothesis; {report.tests} test(s) on {report.samples} fresh samples "
        f"per side decided, {report.bonferroni}")
    return PrivacyViolation(message, pair, pair_report.epsilon_lower_bound, report.claimed, test.event, report)
