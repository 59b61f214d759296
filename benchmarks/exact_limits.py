"""What any Clopper–Pearson audit could certify, from exact outcome probabilities.

For the DP-Sniper mechanisms whose output takes few values (SVT1, SVT2, SVT4 with c = 1: the
position of the first ⊤ or none; ReportNoisyMax1/2: the argmax index), the probability of every
outcome under D and D' is a one-dimensional integral, computed here on a fine grid; for RAPPOR and
one-time RAPPOR (independent bits) the outcomes are the classes of equal likelihood ratio: how many
of the bits only M(D)'s Bloom filter sets, and how many of those only M(D')'s sets, are reported 1
(outcomes of equal ratio are interchangeable in an event, so an optimal event takes whole
classes). The best bound an event-counting audit can certify with n test draws per side is then
that of the best union of outcomes, counted exactly n·p and n·q times, by one ratio test (the
auditor's: one Clopper–Pearson bound on p/(p + q)) at the whole level α (one test, all n draws
testing: more generous than any real audit, which must choose its event on draws of its own and
test more than one). When that limit is below DP-Sniper's published
bound at 2·10^8 draws, no auditor of this kind reaches it with ``benchmarks/auditors.py``'s 2·10^7.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

import dpsniper_zoo
from dpledger.audit.bounds import ratio_test

GRID = np.linspace(-800.0, 800.0, 800_001)  # the noise's support, far beyond every scale used (<= 40)


def _first_top(queries: np.ndarray, threshold: float, rho_scale: float, nu_scale: float) -> np.ndarray:
    """P[first ⊤ at i] (i < k) and P[no ⊤] for SVT with c = 1: ⊤ iff q_i + Lap(nu) >= T + Lap(rho)."""
    weight = stats.laplace.pdf(GRID, scale=rho_scale)
    weight /= weight.sum()
    out, none_yet = [], np.ones_like(GRID)
    for query in queries:
        below = stats.laplace.cdf(threshold + GRID - query, scale=nu_scale)
        out.append(float((none_yet * (1 - below) * weight).sum()))
        none_yet = none_yet * below
    return np.array(out + [float((none_yet * weight).sum())])


def _argmax(queries: np.ndarray, noise) -> np.ndarray:
    """P[argmax_i (q_i + noise_i) = i] for i.i.d. continuous noise."""
    step = GRID[1] - GRID[0]
    return np.array([float((noise.pdf(GRID - q) * np.prod([noise.cdf(GRID - other) for j, other in enumerate(queries)
                                                            if j != i], axis=0)).sum() * step)
                     for i, q in enumerate(queries)])


def _bits(first: np.ndarray, second: np.ndarray, one_if_set: float, one_if_clear: float) -> tuple[np.ndarray, np.ndarray]:
    """Outcome classes of RAPPOR-like reports of Bloom filters ``first`` and ``second``: each bit is
    reported 1 with probability ``one_if_set`` / ``one_if_clear``, independently. Class (i, j): i of
    the bits set only in ``first`` and j of those set only in ``second`` are reported 1."""
    only_first, only_second = int(((first == 1) & (second == 0)).sum()), int(((first == 0) & (second == 1)).sum())
    def classes(set_first: bool) -> np.ndarray:
        a = stats.binom.pmf(np.arange(only_first + 1), only_first, one_if_set if set_first else one_if_clear)
        b = stats.binom.pmf(np.arange(only_second + 1), only_second, one_if_clear if set_first else one_if_set)
        return np.outer(a, b).ravel()
    return classes(True), classes(False)


def _rappor(a, b, f: float, p: float | None = None, q: float | None = None):
    """Classes for (one-time, when p is None) RAPPOR on the integers a and b, as ``dpsniper_zoo``."""
    kept = 1 - f / 2  # P[permanent bit = 1] when the Bloom bit is 1 (f/2 when it is 0)
    set_one, clear_one = (kept, 1 - kept) if p is None else (kept * q + (1 - kept) * p, (1 - kept) * q + kept * p)
    return _bits(dpsniper_zoo.bloom(a), dpsniper_zoo.bloom(b), set_one, clear_one)


def _each(outcome):
    return lambda a, b: (outcome(np.asarray(a, float)), outcome(np.asarray(b, float)))


EPS = 0.1
#: name -> (P, Q): outcome probabilities under D and D' (the mechanisms as in ``dpsniper_zoo``)
OUTCOMES = {
    "SparseVectorTechnique1": _each(lambda q: _first_top(q, 0.5, 2 / EPS, 4 / EPS)),
    "SparseVectorTechnique2": _each(lambda q: _first_top(q, 1.0, 2 / EPS, 4 / EPS)),
    "SparseVectorTechnique4": _each(lambda q: _first_top(q, 1.0, 1 / (EPS / 4), 1 / (EPS - EPS / 4))),
    "ReportNoisyMax1": _each(lambda q: _argmax(q, stats.laplace(scale=2 / EPS))),
    "ReportNoisyMax2": _each(lambda q: _argmax(q, stats.expon(scale=2 / EPS))),
    "Rappor": lambda a, b: _rappor(a, b, 0.75, 0.45, 0.55),
    "OneTimeRappor": lambda a, b: _rappor(a, b, 0.95),
}


def best_event(first: np.ndarray, second: np.ndarray, n: int, level: float) -> tuple[float, float]:
    """(certified ε, true ln(p/q)) of the best union of outcomes, counted exactly (every union tried)."""
    k = len(first)
    unions = (np.arange(1, 2 ** k - 1)[:, None] >> np.arange(k)) & 1  # every nonempty proper subset
    p, q = unions @ first, unions @ second
    bound = np.where(p > q, ratio_test(np.round(n * p), np.round(n * q), n, level)[0], 0.0)
    best = int(np.argmax(bound))
    return max(float(bound[best]), 0.0), float(np.log(p[best] / q[best]))


def limit(entry, n: int, confidence: float) -> dict | None:
    """For ``entry`` over its pairs: the limit at n draws per side and the largest true ln(p/q) of any
    event (the mechanism's ε on these pairs); None when its outcome probabilities are not here."""
    if entry.name not in OUTCOMES:
        return None
    pairs = [OUTCOMES[entry.name](a, b) for a, b in entry.pairs]
    return {"limit": max(best_event(p, q, n, 1 - confidence)[0] for p, q in pairs),
            "true": max(float(np.log(p / q).max()) for p, q in pairs)}
