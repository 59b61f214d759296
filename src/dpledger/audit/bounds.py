"""Confidence bounds for an empirical privacy audit: the ratio test, Clopper–Pearson, the ε lower bound.

An (ε, δ)-DP mechanism satisfies p <= e^ε·q + δ for every event E, where p = P[M(D) ∈ E] and
q = P[M(D') ∈ E]. An audit counts E on fresh draws of both sides and bounds what the counts allow.

The ratio test (``ratio_lower_bound``): each side's test draws number N ~ Poisson(n), so the counts
X ~ Poisson(n·p) and Y ~ Poisson(n·q) are independent, and given X + Y = K, X ~ Binomial(K,
p/(p + q)) exactly. One Clopper–Pearson bound π̲ on p/(p + q) then bounds the ratio p/q >= π̲/(1 − π̲):
one bound at the test's whole error budget where bounding p and q apart would split it in two
(for rare events nearly half the sampling margin for the same draws; for common ones the
binomial counts of fixed-size draws vary less than Poisson ones, and bounding p and q apart is
tighter: the training half picks the test per event). With δ > 0 it is paired with a bound p̲ on
p: ε >= ln(r̲) + ln(1 − δ/p̲), each bound at half the budget. docs/proofs.md ("The audit's ratio test").

The trade-off test (``mu_lower_bound``, ``rho_lower_bound``): μ-GDP and zCDP claims are about the
pair (p, q) itself, so these tests bound p from below and q from above, each at half the budget.
Clopper–Pearson bounds are exact (never below their nominal coverage), given the realised N.

Each test has an error budget (its ``level``: the probability that one of its bounds fails), and
the budgets of an audit's m tests sum to 1 − confidence, so by the union bound all hold together.
The split is weighted (``weighted_levels``): the test each route's training half rates best gets
half the budget, the others share the rest; any weights summing to one that are fixed before the
test half is drawn keep the union bound (docs/design.md, "Weighted Bonferroni").
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy import special


def clopper_pearson_lower(count, n, alpha: float):
    """One-sided lower bound on a binomial probability: P[p < bound] <= alpha (0 when count = 0)."""
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    safe = np.maximum(count, 1.0)
    with np.errstate(invalid="ignore"):  # count = 0 with n = 0: no bound, and none is taken
        bound = special.betaincinv(safe, n - safe + 1.0, alpha)  # Beta's quantile, without scipy.stats' overhead
    return np.where(count > 0, bound, 0.0)[()]


def clopper_pearson_upper(count, n, alpha: float):
    """One-sided upper bound on a binomial probability: P[p > bound] <= alpha (1 when count = n)."""
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    safe = np.minimum(count, n - 1.0)
    with np.errstate(invalid="ignore"):
        bound = special.betainccinv(safe + 1.0, n - safe, alpha)  # Beta's upper quantile
    return np.where(count < n, bound, 1.0)[()]


def epsilon_lower_bound(p_lower, p_upper, delta: float = 0.0):
    """ln((p̲ − δ)/p̄): the ε an (ε, δ) claim must at least have; −inf when p̲ <= δ."""
    p_lower, p_upper = np.asarray(p_lower, dtype=float), np.asarray(p_upper, dtype=float)
    excess = p_lower - delta
    with np.errstate(divide="ignore"):
        return np.where(excess > 0, np.log(np.maximum(excess, 1e-300)) - np.log(p_upper), -np.inf)[()]


def ratio_lower_bound(count, other, level: float, scale: float = 1.0):
    """Lower bound r̲ on p/q from Poisson counts ``count`` ~ Poisson(λp) and ``other`` ~ Poisson(λ'q):
    P[p/q < r̲] <= ``level``. Given the total K, ``count`` ~ Binomial(K, λp/(λp + λ'q)), whose
    Clopper–Pearson lower bound π̲ gives p/q >= π̲/(1 − π̲)·λ'/λ (``scale`` = λ'/λ); 0 when count = 0.
    π̲ is Beta(count, other + 1)'s ``level`` quantile and 1 − π̲ Beta(other + 1, count)'s upper one,
    each computed directly: 1 − π̲ by subtraction would lose its digits when π̲ is near 1."""
    count, other = np.asarray(count, dtype=float), np.asarray(other, dtype=float)
    safe = np.maximum(count, 1.0)
    share, rest = special.betaincinv(safe, other + 1.0, level), special.betainccinv(other + 1.0, safe, level)
    return np.where(count > 0, share / rest * scale, 0.0)[()]


def ratio_epsilon(ratio_lower, p_lower=None, delta: float = 0.0):
    """The ε lower bound of a ratio test: ln r̲, and with δ > 0, ln r̲ + ln(1 − δ/p̲) (from
    p − e^ε q >= p(1 − e^ε/r̲) >= p̲(1 − e^ε/r̲)); −inf when r̲ = 0 or p̲ <= δ."""
    ratio = np.asarray(ratio_lower, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(ratio > 0, np.log(np.maximum(ratio, 1e-300)), -np.inf)
        if delta > 0:
            kept = 1.0 - delta / np.asarray(p_lower, dtype=float)
            bound = np.where(kept > 0, bound + np.log(np.maximum(kept, 1e-300)), -np.inf)
    return bound[()]


def ratio_test(count, other, size, level: float, delta: float = 0.0, scale: float = 1.0):
    """(ε lower bound, r̲, p̲) of the ratio test with error budget ``level``: r̲ alone at ``level``
    when δ = 0 (p̲ is then NaN: not needed), else r̲ and p̲ (``count`` of ``size`` runs) at half each."""
    if delta == 0:
        ratio = ratio_lower_bound(count, other, level, scale)
        return ratio_epsilon(ratio), ratio, np.full_like(np.asarray(ratio, dtype=float), np.nan)[()]
    ratio = ratio_lower_bound(count, other, level / 2, scale)
    p_lower = clopper_pearson_lower(count, size, level / 2)
    return ratio_epsilon(ratio, p_lower, delta), ratio, p_lower


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


def rho_lower_bound(p_lower, p_upper):
    """The ρ a ρ-zCDP claim must at least have: max over α of d_α(p̲ ‖ p̄)/α, or 0.

    ρ-zCDP gives D_α(M(D) ‖ M(D')) <= αρ at every α > 1, and post-processing to the indicator of E
    gives D_α >= d_α(Bern(p) ‖ Bern(p')), the divergence of the two probabilities; d_α increases in p
    and decreases in p' while p > p', so p̲ > p̄ bounds it from below (Bun & Steinke 2016, Definition
    1.1; the data-processing inequality). Valid for any mechanism whenever both bounds hold, at each
    order of ``RHO_ORDERS``; lowered by 1e-12 relative for the float evaluation."""
    p_lower, p_upper = np.asarray(p_lower, dtype=float), np.asarray(p_upper, dtype=float)
    low, high = np.clip(p_upper, 1e-300, 1.0)[..., None], np.clip(p_lower, 1e-300, 1.0)[..., None]
    a = RHO_ORDERS
    with np.errstate(all="ignore"):
        terms = np.logaddexp(a * np.log(high) + (1 - a) * np.log(low),
                             np.where(high < 1, a * np.log1p(-np.minimum(high, 1 - 1e-16))
                                      + (1 - a) * np.log1p(-np.minimum(low, 1 - 1e-16)), -np.inf))
        ratios = terms / ((a - 1) * a)
    best = np.max(np.where(np.isfinite(ratios), ratios, 0.0), axis=-1)
    return np.where(p_lower > p_upper, np.maximum(best, 0.0) * (1 - 1e-12), 0.0)[()]


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
    """Error budget of each of m tests split equally: α/m, so all hold jointly at 1 − α."""
    return (1.0 - confidence) / tests


#: the share of the audit's error budget that goes to the leading tests (the best training event of
#: each route), split equally among them; the other tests share the rest equally
LEAD_SHARE = 0.5


def weighted_levels(confidence: float, tests: int, leads: int) -> tuple[float, float]:
    """(leading, other) error budget of each of m = ``tests`` tests, ``leads`` of them leading.

    Weighted Bonferroni: test i gets w_i·α with Σ w_i = 1, so all hold jointly at 1 − α. A leading
    test gets w = max(LEAD_SHARE/leads, 1/m), never less than the equal split; the others
    (1 − leads·w)/(m − leads) each.
    """
    if tests <= leads or leads <= 0 or LEAD_SHARE / leads <= 1.0 / tests:
        level = bonferroni_level(confidence, max(tests, 1))
        return level, level
    lead = LEAD_SHARE / leads
    other = (1.0 - leads * lead) / (tests - leads)
    alpha = 1.0 - confidence
    return alpha * lead, alpha * other


def _half(level: float, delta: float) -> float:
    """The level of the ratio bound in a ratio test of budget ``level``: all of it, or half with δ > 0."""
    return level if delta == 0 else level / 2


def best_possible_bound(n: int, level: float, delta: float = 0.0) -> float:
    """The largest ε lower bound a ratio test of budget ``level`` can give on n test draws per side:
    all n in E under D, none under D'."""
    return float(ratio_test(n, 0, n, level, delta)[0])


def minimum_test_samples(epsilon: float, delta: float, level: float) -> int:
    """Smallest n per side for which some outcome of a ratio test of budget ``level`` could certify
    more than ``epsilon``.

    The best outcome (n in E under D, none under D') gives π̲ = p̲ = c with c = L^(1/n), L the
    level of each bound (``level``, or half of it with δ > 0), so ε_LB = ln((c − δ)/(1 − c)) > ε iff
    c > (e^ε + δ)/(1 + e^ε), i.e. n > ln(L)/ln((e^ε + δ)/(1 + e^ε)).
    """
    ratio_log = math.log1p(-(1.0 - delta) * special.expit(-epsilon))
    if ratio_log == 0.0:  # e^-ε underflows: no realistic sample size can certify such an ε
        return sys.maxsize
    return math.floor(math.log(_half(level, delta)) / ratio_log) + 1
