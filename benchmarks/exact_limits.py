"""What any Clopper–Pearson audit could certify, from exact outcome probabilities.

For the DP-Sniper mechanisms whose output takes few values (SVT1, SVT2, SVT4 with c = 1: the
position of the first ⊤ or none; ReportNoisyMax1/2: the argmax index), the probability of every
outcome under D and D' is a one-dimensional integral, computed here on a fine grid. The best
bound an event-counting audit can certify with n test draws per side is then that of the best
set of outcomes, counted exactly n·p and n·q times, with its two Clopper–Pearson bounds at level
α/2 (one test, all n draws testing: more generous than any real audit, which must choose its
event on draws of its own and test more than one). When that limit is below DP-Sniper's published
bound at 2·10^8 draws, no auditor of this kind reaches it with ``benchmarks/auditors.py``'s 2·10^7.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats

from dpledger.audit.bounds import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound

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


EPS = 0.1
#: name -> outcome probabilities of one input (the mechanisms as in ``dpsniper_zoo``)
OUTCOMES = {
    "SparseVectorTechnique1": lambda q: _first_top(q, 0.5, 2 / EPS, 4 / EPS),
    "SparseVectorTechnique2": lambda q: _first_top(q, 1.0, 2 / EPS, 4 / EPS),
    "SparseVectorTechnique4": lambda q: _first_top(q, 1.0, 1 / (EPS / 4), 1 / (EPS - EPS / 4)),
    "ReportNoisyMax1": lambda q: _argmax(q, stats.laplace(scale=2 / EPS)),
    "ReportNoisyMax2": lambda q: _argmax(q, stats.expon(scale=2 / EPS)),
}


def best_event(first: np.ndarray, second: np.ndarray, n: int, level: float) -> tuple[float, float, tuple[int, ...]]:
    """(certified ε, true ln(p/q), outcome set) of the best set of outcomes, counted exactly."""
    best = (0.0, 0.0, ())
    for size in range(1, len(first)):
        for chosen in itertools.combinations(range(len(first)), size):
            p, q = first[list(chosen)].sum(), second[list(chosen)].sum()
            if p > q:
                bound = float(epsilon_lower_bound(clopper_pearson_lower(round(n * p), n, level),
                                                  clopper_pearson_upper(round(n * q), n, level)))
                if bound > best[0]:
                    best = (bound, float(np.log(p / q)), chosen)
    return best


def limit(entry, n: int, confidence: float) -> dict | None:
    """The limit for ``entry`` over its pairs, or None when its outcome probabilities are not here."""
    if entry.name not in OUTCOMES:
        return None
    outcome = OUTCOMES[entry.name]
    found = [best_event(outcome(np.asarray(a, float)), outcome(np.asarray(b, float)), n, (1 - confidence) / 2)
             for a, b in entry.pairs]
    bound, loss, chosen = max(found)
    return {"limit": bound, "true_loss": loss, "outcomes": list(chosen)}
