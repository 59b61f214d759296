"""Confidence bounds for an empirical privacy audit: Clopper–Pearson, the ε lower bound, limits.

An (ε, δ)-DP mechanism satisfies P[M(D) ∈ E] <= e^ε·P[M(D') ∈ E] + δ for every event E, so
ε >= ln((P[M(D) ∈ E] − δ) / P[M(D') ∈ E]). Replacing the left probability by a lower confidence
bound p̲ and the right one by an upper bound p̄ gives a lower bound on ε that holds whenever both
one-sided bounds hold. Clopper–Pearson bounds are exact (never below their nominal coverage), and
the Bonferroni split over the m tests of an audit makes the whole audit hold at its confidence.
The split is weighted (``weighted_levels``): the test each route's training half rates best gets
half the budget, the others share the rest; any weights summing to one that are fixed before the
test half is drawn keep the union bound (docs/design.md, "Weighted Bonferroni").
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy import special, stats


def clopper_pearson_lower(count, n, alpha: float):
    """One-sided lower bound on a binomial probability: P[p < bound] <= alpha (0 when count = 0)."""
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    safe = np.maximum(count, 1.0)
    bound = stats.beta.ppf(alpha, safe, n - safe + 1.0)
    return np.where(count > 0, bound, 0.0)[()]


def clopper_pearson_upper(count, n, alpha: float):
    """One-sided upper bound on a binomial probability: P[p > bound] <= alpha (1 when count = n)."""
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    safe = np.minimum(count, n - 1.0)
    bound = stats.beta.ppf(1.0 - alpha, safe + 1.0, n - safe)
    return np.where(count < n, bound, 1.0)[()]


def epsilon_lower_bound(p_lower, p_upper, delta: float = 0.0):
    """ln((p̲ − δ)/p̄): the ε an (ε, δ) claim must at least have; −inf when p̲ <= δ."""
    p_lower, p_upper = np.asarray(p_lower, dtype=float), np.asarray(p_upper, dtype=float)
    excess = p_lower - delta
    with np.errstate(divide="ignore"):
        return np.where(excess > 0, np.log(np.maximum(excess, 1e-300)) - np.log(p_upper), -np.inf)[()]


#: Rényi orders at which a measured point is read as a zCDP lower bound (``rho_lower_bound``).
RHO_ORDERS = np.concatenate([1.0 + np.geomspace(1e-3, 1e3, 241)])


def mu_lower_bound(p_lower, p_upper):
    """The μ a μ-GDP claim must at least have: Φ⁻¹(p̲) − Φ⁻¹(p̄), or 0.

    A test rejecting M(D') when the output is in E has size α = P[M(D') ∈ E] <= p̄ and type II
    error β = 1 − P[M(D) ∈ E] <= 1 − p̲; μ-GDP needs β >= G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), which decreases
    in α, so every μ < Φ⁻¹(p̲) − Φ⁻¹(p̄) is contradicted (Dong, Roth & Su 2022, Definition 2.6). Valid
    for any mechanism whenever both bounds hold; lowered by 1e-12 relative for the float evaluation."""
    p_lower, p_upper = np.asarray(p_lower, dtype=float), np.asarray(p_upper, dtype=float)
    with np.errstate(all="ignore"):
        gap = special.ndtri(p_lower) - special.ndtri(p_upper)
    return np.where(np.isfinite(gap) & (gap > 0), gap * (1 - 1e-12), 0.0)[()]


def rho_lower_bound(p_lower: float, p_upper: float) -> float:
    """The ρ a ρ-zCDP claim must at least have: max over α of d_α(p̲ ‖ p̄)/α, or 0.

    ρ-zCDP gives D_α(M(D) ‖ M(D')) <= αρ at every α > 1, and post-processing to the indicator of E
    gives D_α >= d_α(Bern(p) ‖ Bern(p')), the divergence of the two probabilities; d_α increases in p
    and decreases in p' while p > p', so p̲ > p̄ bounds it from below (Bun & Steinke 2016, Definition
    1.1; the data-processing inequality). Valid for any mechanism whenever both bounds hold, at each
    order of ``RHO_ORDERS``; lowered by 1e-12 relative for the float evaluation."""
    if not p_lower > p_upper:
        return 0.0
    a = RHO_ORDERS
    with np.errstate(all="ignore"):
        terms = np.logaddexp(a * math.log(p_lower) + (1 - a) * math.log(p_upper),
                             a * math.log1p(-p_lower) + (1 - a) * math.log1p(-p_upper) if p_lower < 1 else -np.inf)
        ratios = terms / ((a - 1) * a)
    best = float(np.max(np.where(np.isfinite(ratios), ratios, 0.0)))
    return max(best, 0.0) * (1 - 1e-12)


def wilson_bounds(count, n, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score bounds: a closed-form stand-in for Clopper–Pearson, used only to rank events.

    Ranking a million thresholds with exact Clopper–Pearson would cost seconds (one incomplete-beta
    inversion each); the few best by Wilson are then re-scored exactly.
    """
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    p = count / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def bonferroni_level(confidence: float, tests: int) -> float:
    """Level of each one-sided bound: α/(2m), so m tests of two bounds each hold jointly at 1 − α."""
    return (1.0 - confidence) / (2 * tests)


#: the share of the audit's error budget that goes to the leading tests (the best training event of
#: each route), split equally among them; the other tests share the rest equally
LEAD_SHARE = 0.5


def weighted_levels(confidence: float, tests: int, leads: int) -> tuple[float, float]:
    """(leading, other) level of each one-sided bound of m = ``tests`` tests, ``leads`` of them leading.

    Weighted Bonferroni: test i's two bounds each get level w_i·α/2 with Σ w_i = 1, so all hold
    jointly at 1 − α. A leading test gets w = max(LEAD_SHARE/leads, 1/m), never less than the equal
    split; the others (1 − leads·w)/(m − leads) each.
    """
    if tests <= leads or leads <= 0 or LEAD_SHARE / leads <= 1.0 / tests:
        level = bonferroni_level(confidence, max(tests, 1))
        return level, level
    lead = LEAD_SHARE / leads
    other = (1.0 - leads * lead) / (tests - leads)
    half = (1.0 - confidence) / 2
    return half * lead, half * other


def best_possible_bound(n: int, level: float, delta: float = 0.0) -> float:
    """The largest ε lower bound n test samples per side can give: all n in E under D, none under D'."""
    return float(epsilon_lower_bound(clopper_pearson_lower(n, n, level), clopper_pearson_upper(0, n, level), delta))


def minimum_test_samples(epsilon: float, delta: float, level: float) -> int:
    """Smallest n per side for which some outcome could certify more than ``epsilon``.

    The best outcome gives p̲ = q and p̄ = 1 − q with q = level^(1/n); ε_LB > ε iff
    q > (e^ε + δ)/(1 + e^ε), i.e. n > ln(level)/ln((e^ε + δ)/(1 + e^ε)).
    """
    ratio_log = math.log1p(-(1.0 - delta) * special.expit(-epsilon))
    if ratio_log == 0.0:  # e^-ε underflows: no realistic sample size can certify such an ε
        return sys.maxsize
    return math.floor(math.log(level) / ratio_log) + 1
