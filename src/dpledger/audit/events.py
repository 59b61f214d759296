"""Distinguishing events and their choice on the training half.

An event is {s >= t}, {s <= t} or, for a discrete statistic, {s == v}. For each statistic, operator
and direction, the threshold is the one maximising the ε lower bound the training counts would
give at the audit's planned Bonferroni level: the training half plays the test half's role, so
the choice trades a large probability ratio against counts large enough to bound it tightly.

The training score is taken at the stricter level ``level / max(1, ln K)²`` for K candidate thresholds:
the largest of K noisy training bounds is biased upwards, most in the far tails where counts are
small, and without a penalty the search often picks a tail event that the test half then refutes
(40 seeded audits of Laplace at ε = 0.1: worst case 0.76 of ε certified without it, 0.88 with
it; Laplace at ε = 1 and the Gaussian mechanism are unchanged or better).

All thresholds are scored at once: with both sides' training values sorted, the count of each
event at every candidate threshold is one ``searchsorted`` (O(N log N) in total). Exact
Clopper–Pearson scoring of a million thresholds would cost seconds, so thresholds are ranked by
Wilson bounds and only the best ``RESCORED`` per family are scored exactly.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
from scipy import special

from .bounds import (clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound, mu_lower_bound,
                     ratio_epsilon, ratio_test, rho_lower_bound, wilson_bounds)
from .outputs import Outputs
from .statistics import Statistic

RESCORED = 32
#: a runner-up event is tested only while its training bound is at least this share of its pair's
#: best: it is a fallback against a leader the training half over-rated (by a few per cent, seen),
#: and one far below would not beat the leader, whose share of the error budget it would take
#: (a report-noisy-max's mirror-image event, 0.023 against 0.099: the leader then gets all of it)
FALLBACK_SHARE = 0.5
#: a statistic with at most this many distinct integer training values also gets {s == v} events
MAX_DISCRETE_VALUES = 256
#: thresholds ranked per statistic: its distinct training values, or this many evenly spaced among
#: them (an event's mass is then resolved to about 1/MAX_THRESHOLDS of the training draws; ranking
#: the 4·10^6 distinct values of 2·10^6 draws per side cost LaplaceParallel a minute)
MAX_THRESHOLDS = 50_000

_OPERATIONS = {
    ">=": lambda values, t: values >= t,
    "<=": lambda values, t: values <= t,
    "==": lambda values, t: values == t,
}


@attrs.frozen
class Event:
    """{statistic(output) op threshold}; halted runs are in it only for the halting statistics."""

    statistic: Statistic
    op: str
    threshold: float

    def count(self, values: np.ndarray) -> int:
        """How many runs, given their statistic ``values``, fall in the event (NaN never does)."""
        return int(np.count_nonzero(_OPERATIONS[self.op](values, self.threshold)))

    def __str__(self) -> str:
        return self.statistic.describe(self.op, self.threshold)


@attrs.frozen
class Candidate:
    """An event chosen on training data, with the side it is more likely under.

    ``reverse`` False: the bound is on ln(P[M(D) ∈ E]/P[M(D') ∈ E]); True: on the reverse ratio.
    ``route``: the test it gets on the test half, "ratio" or "trade-off" (``training_bound``).
    """

    event: Event
    reverse: bool
    training_bound: float
    currency: str = "epsilon"
    route: str = "ratio"


def _counts(sorted_values: np.ndarray, thresholds: np.ndarray) -> dict[str, np.ndarray]:
    """Number of ``sorted_values`` in the event {s op t} at every threshold t, for each op."""
    below = np.searchsorted(sorted_values, thresholds, "left")
    up_to = np.searchsorted(sorted_values, thresholds, "right")
    return {">=": len(sorted_values) - below, "<=": up_to, "==": up_to - below}


def _approximate(currency: str, first: np.ndarray, n_first, second: np.ndarray, n_second,
                 delta: float, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(ratio test, trade-off test) training bounds of every threshold in ``currency``, with Wilson
    bounds in place of Clopper–Pearson (a ranking only; a ρ test is ranked by its μ bound, which
    orders trade-offs alike; −inf where a currency has no such test)."""
    z = -float(special.ndtri(level / 2))  # the normal's upper quantile, without scipy.stats' overhead
    p_lower, p_upper = wilson_bounds(first, n_first, z)[0], wilson_bounds(second, n_second, z)[1]
    if currency != "epsilon":
        return np.full(np.shape(first), -np.inf), mu_lower_bound(p_lower, p_upper)
    total = first + second
    share = np.where(total > 0, wilson_bounds(first, np.maximum(total, 1), -float(special.ndtri(
        level if delta == 0 else level / 2)))[0], 0.0)
    with np.errstate(divide="ignore"):
        ratio = share / (1.0 - share) * (n_second / n_first)
    return ratio_epsilon(ratio, p_lower, delta), epsilon_lower_bound(p_lower, p_upper, delta)


def training_bound(currency: str, first, n_first, second, n_second, delta: float,
                   level: float) -> tuple[np.ndarray, np.ndarray]:
    """(ratio test, trade-off test) bounds a test of budget ``level`` would certify in ``currency``
    if the test half gave these counts. For ε both are valid and the training half picks, per
    event, the larger: the ratio test is tighter for rare events, bounding p and q apart (at half
    the budget each) for common ones, whose binomial counts vary less than Poisson ones. μ and ρ
    have only the trade-off test (−inf for the ratio)."""
    p_lower = clopper_pearson_lower(first, n_first, level / 2)
    p_upper = clopper_pearson_upper(second, n_second, level / 2)
    if currency != "epsilon":
        other = mu_lower_bound(p_lower, p_upper) if currency == "mu" else rho_lower_bound(p_lower, p_upper)
        return np.full(np.shape(other), -np.inf), other
    return (ratio_test(first, second, n_first, level, delta, scale=n_second / n_first)[0],
            epsilon_lower_bound(p_lower, p_upper, delta))


def _best_thresholds(first: np.ndarray, n_first: np.ndarray, second: np.ndarray, n_second: np.ndarray,
                     delta: float, level: float, currency: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of counts ``first`` over ``second`` (one row per operator and direction, with its
    sizes in the column vectors ``n_first``, ``n_second``): the index, training bound and route
    (True: ratio) of the threshold and test with the largest training bound in ``currency``
    (``training_bound``): ranked approximately, the best ``RESCORED`` exactly. All rows in one
    call each: an audit's small samples made the calls' overhead most of its event search."""
    approximate = np.maximum(*_approximate(currency, first, n_first, second, n_second, delta, level))
    width = approximate.shape[1]
    top = (np.argpartition(-approximate, RESCORED, axis=1)[:, :RESCORED] if width > RESCORED
           else np.broadcast_to(np.arange(width), approximate.shape))
    ratio, trade_off = training_bound(currency, np.take_along_axis(first, top, 1), n_first,
                                      np.take_along_axis(second, top, 1), n_second, delta, level)
    exact = np.maximum(ratio, trade_off)
    rows, best = np.arange(len(top)), np.argmax(exact, axis=1)
    return top[rows, best], exact[rows, best], ratio[rows, best] >= trade_off[rows, best]


def search_events(statistic: Statistic, first: Outputs, second: Outputs, delta: float, level: float,
                  currencies: tuple[str, ...] = ("epsilon",)) -> list[Candidate]:
    """The best event of every (operator, direction, currency) for ``statistic`` on training outputs.

    ``level`` is the planned error budget of each test; events whose training bound is
    not positive are dropped (they would only spend Bonferroni budget). A statistic fitted on the
    first ``fitted_rows`` training runs of each side (a learned score) is ranked on the others.
    """
    skip = getattr(statistic, "fitted_rows", 0)
    if skip and min(len(first), len(second)) > skip:
        first, second = first.rows(skip), second.rows(skip)
    values = statistic(first), statistic(second)
    sizes = len(first), len(second)
    ordered = [np.sort(v[~np.isnan(v)]) for v in values]
    merged = np.concatenate(ordered)
    merged.sort(kind="stable")  # two sorted runs: a merge, twice as fast as np.unique's sort
    # +0.0: one zero threshold whichever side's zero came first ({s >= -0} is {s >= 0})
    thresholds = merged[np.r_[True, merged[1:] != merged[:-1]]] + 0.0 if merged.size else merged
    if thresholds.size == 0:
        return []
    ops = statistic.ops
    if "==" not in ops and thresholds.size <= MAX_DISCRETE_VALUES and np.array_equal(thresholds, np.round(thresholds)):
        ops = ops + ("==",)
    if thresholds.size > MAX_THRESHOLDS:
        thresholds = thresholds[np.linspace(0, thresholds.size - 1, MAX_THRESHOLDS).round().astype(int)]
    selection_level = level / max(1.0, math.log(thresholds.size) ** 2)
    counts = [_counts(side, thresholds) for side in ordered]
    rows = [(op, reverse) for op in ops for reverse in (False, True)]  # reverse: M(D') over M(D)
    first_side = [1 if reverse else 0 for _, reverse in rows]
    first_counts = np.stack([counts[a][op] for (op, _), a in zip(rows, first_side)])
    second_counts = np.stack([counts[1 - a][op] for (op, _), a in zip(rows, first_side)])
    n_first = np.array([[sizes[a]] for a in first_side], dtype=float)
    n_second = np.array([[sizes[1 - a]] for a in first_side], dtype=float)
    found = []
    for currency in currencies:
        indices, bounds, ratios = _best_thresholds(first_counts, n_first, second_counts, n_second, delta,
                                                   selection_level, currency)
        for (op, reverse), index, bound, ratio in zip(rows, indices, bounds, ratios):
            if bound > 0:  # an event no more likely under one side than the other cannot certify anything
                found.append(Candidate(Event(statistic, op, float(thresholds[index])), reverse, float(bound),
                                       currency, "ratio" if ratio else "trade-off"))
    return found


def choose_candidates(found: list[Candidate], count: int, currencies: tuple[str, ...] = ()) -> list[Candidate]:
    """Of the candidates ``search_events`` found over a pair's statistics: the ``count`` with the
    largest training ε bounds (a runner-up only while its bound is at least ``FALLBACK_SHARE`` of
    the best's), then, for each of ``currencies`` (e.g. "mu"), the one with the largest training
    bound in it."""
    ranked = _distinct(sorted((c for c in found if c.currency == "epsilon"), key=lambda c: -c.training_bound))[:count]
    chosen = [c for c in ranked if c.training_bound >= FALLBACK_SHARE * ranked[0].training_bound]
    for currency in currencies:
        chosen += sorted((c for c in found if c.currency == currency), key=lambda c: -c.training_bound)[:1]
    return chosen


def _distinct(ranked: list[Candidate]) -> list[Candidate]:
    """``ranked`` without the events that repeat a better one's statistic, direction and training
    bound ({s >= 1} and {s == 1} on a 0/1 label are one event: testing it twice only spends budget)."""
    seen, kept = set(), []
    for candidate in ranked:
        key = (candidate.event.statistic.name, candidate.reverse, candidate.training_bound)
        if key not in seen:
            seen.add(key)
            kept.append(candidate)
    return kept
