"""Rényi DP curves of events at fixed orders, for the Rényi filter and for fixed compositions.

Every value is an upper bound on ε(α) at that order, floating-point error included. The
Poisson-subsampled Gaussian's curve is computed here (``_poisson_gaussian``): dp-accounting's
integer-order sum cancels when A_α ≈ 1 (large noise, small rate: at σ = 100, q = 1e-4 it falls
3.4e-7 relative below the exact value at α = 232), and its fractional-order series is far above,
∞, or (by up to 1e-10 on log A_α) below it (benchmarks/renyi_margin.py). The other curves come from
dp-accounting's ``RdpAccountant`` (Gaussian, Laplace, zCDP), inflated by ``MARGIN`` and
``ABSOLUTE_MARGIN`` for the float evaluation of their closed forms. A pure ε-DP step without a
curve of its own (``EpsilonDeltaDpEvent`` with δ = 0, a discrete Laplace) has ε(α) = min(ε, αε²/2)
(ε-DP implies ε²/2-zCDP: Bun & Steinke 2016, Proposition 3.3; and D_α <= D_∞ = ε). A step with
δ > 0 and no curve has none: ``curve`` returns ``None``.
"""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _rdp
from scipy import special

from . import events as _events
from .subsampled import poisson_pure, pure_epsilon, sampled_pure, without_replacement

#: Inflation of dp-accounting's Gaussian, Laplace and zCDP values for their float evaluation:
#: relative, and absolute. Their closed forms take a few correctly rounded operations (relative error
#: a few 1e-16), except Laplace's at tiny ε, which cancels: its error is then ~1e-16·ε absolute,
#: under 1e-18 wherever it exceeds 1e-9 relative (ε < 1e-7). Also ρ's relative margin in ``rho``.
MARGIN, ABSOLUTE_MARGIN = 1e-9, 1e-18

#: Rényi orders for the conversion: 500, geometric in α − 1 from 1e-4 to 1e7. dp-accounting's
#: default grid stops at 1024 and is coarse above 64, which at small ε or tiny δ left no order
#: that certifies ε (σ came out 10^3–10^17 times too large); any set of orders gives a valid bound.
ORDERS = tuple(1.0 + float(x) for x in np.geomspace(1e-4, 1e7, 500))

#: The Rényi filter's default orders, fixed before any data: wide enough for ε from about 0.1 to
#: 20 at δ from 1e-12 to 1e-3, few enough that splitting δ over them costs little (log 20 / (α - 1)).
FILTER_ORDERS = (1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0,
                 64.0, 128.0, 256.0)


def _pure(epsilon: float, orders: np.ndarray) -> np.ndarray:
    return np.minimum(epsilon, orders * epsilon**2 / 2.0) * (1.0 + 4.0 * _U)  # two roundings


# The Poisson-subsampled Gaussian (rate q, noise multiplier σ, add/remove-one neighbours): ε(α) =
# log(A_α)/(α − 1), A_α = E[L^α] with L = 1 − q + q·exp((2z − 1)/(2σ²)) and z ~ N(0, σ²) (E[L] = 1),
# the quantity dp-accounting's RdpAccountant computes. Each order takes the least of the upper
# bounds of ``_poisson_gaussian``.

_U = 2.0**-53  # unit roundoff of float64
#: Integer orders up to ``_MAX_SUMMED`` are summed exactly (``_log_a_minus_1``), and fractional orders
#: below it also get the bounds from their integer neighbours; larger orders get the others only.
_MAX_SUMMED, _BLOCK = 2**26, 2**12
#: Inflation of dp-accounting's fractional-order series (``_compute_log_a_frac``): relative, and
#: absolute on log A_α. Its float sum of terms of A_α ≈ 1 resolves log A_α to ~1e-16 only (it even
#: returns log A_α < 0), and it drops the tail after a term under e^-30 A_α, up to ~1000 e^-30 =
#: 1e-10 of log A_α. Against the 80-digit reference of benchmarks/renyi_margin.py (σ in [0.5, 1e3],
#: q in [1e-6, 1], orders 1 + 1e-4 to 1 + 1e7) it fell at most 1.1e-10 below on log A_α (q = 1e-4,
#: σ = 63, α = 65712), and at most 1.5e-11 relative where log A_α > 1: the margins are 18 and 67
#: times that.
FRACTIONAL_MARGIN, FRACTIONAL_ABSOLUTE_MARGIN = 1e-9, 2e-9


def _stirling(x):
    """log Γ(x + 1) − ((x + 1/2) log x − x + log(2π)/2) at float integers x >= 1: Stirling's series
    above 15 (truncated below 2e-16), else from gammaln (parts of magnitude under 90)."""
    small = np.asarray(x) <= 15.0
    y, z = np.where(small, 16.0, x), np.where(small, x, 1.0)
    w = y * y
    series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / (1188 * w)) / w) / w) / w) / y
    direct = special.gammaln(z + 1.0) - (z + 0.5) * np.log(z) + z - 0.5 * math.log(2 * math.pi)
    return np.where(small, direct, series)


def _log_terms(k: np.ndarray, n: float, log_q: float, log_1mq: float, x: np.ndarray):
    """log(C(n,k) q^k (1 − q)^(n−k) expm1(x)) at float integers 2 <= k <= n, and a bound on the sum of
    its parts' magnitudes. log C(n,k) = log C(n,j), j = min(k, n − k), is j log(n/j) − (n − j)
    log(1 − j/n) − log(2πj(1 − j/n))/2 plus three Stirling errors: parts of size ~j log n, where
    gammaln(n + 1) − gammaln(k + 1) − gammaln(n − k + 1) would cancel parts of size n log n."""
    j = np.maximum(np.minimum(k, n - k), 1.0)  # j = 0 (k = n, C = 1) is patched below
    binomial = (j * np.log(n / j), -(n - j) * np.log1p(-j / n), -0.5 * np.log(2 * math.pi * j * (1.0 - j / n)),
                _stirling(n) - _stirling(j) - _stirling(n - j))
    parts = (np.where(k == n, 0.0, sum(binomial)), k * log_q, (n - k) * log_1mq, x,
             np.log(-np.expm1(-x)))  # the last two: log expm1(x), without overflow
    return sum(parts), sum(np.abs(p) for p in binomial + parts[1:]) + 300.0


def _log_a_minus_1(q: float, sigma: float, n: int) -> float:
    """An upper bound on log(A_n − 1), for an integer order 2 <= n <= ``_MAX_SUMMED`` and 0 < q < 1.

    Binomially, A_n = Σ_k C(n,k) q^k (1 − q)^(n−k) exp(k(k − 1)/(2σ²)); the weights sum to 1 and the
    k = 0, 1 exponentials are 1, so A_n − 1 = Σ_{k>=2} C(n,k) q^k (1 − q)^(n−k) expm1(k(k − 1)/(2σ²)):
    positive terms, summed in log space with no cancellation (dp-accounting sums all n + 1 terms of
    A_n, and log A_n loses digits when A_n ≈ 1). Blocks of 2^12 terms are summed in decreasing order
    of an upper bound on their sum, (terms) × (the largest weight: binomial weights are log-concave in
    k, so at the mode clamped to the block) × (the block's last expm1); the blocks left once their
    bounds add up to under e^-45 of the sum are counted by those bounds. Error: each log is a sum of
    parts (``_log_terms``; gammaln, log, log1p, expm1 within a few u, u = 2^-53; k exact), within 8u
    of their magnitudes M (3u measured against mpmath for log C(n,k), 300 covering the small
    arguments' Stirling errors), added with eight roundings: within 16u·M, and each term is rounded
    up by 32u·M. The shifts by a block's largest, the exponentials, the pairwise sums of <= 2^14
    terms and the logs add under 64u·(1 + |log(A_n − 1)|).
    """
    log_q, log_1mq, m, scale = math.log(q), math.log1p(-q), float(n), 2.0 * sigma * sigma
    starts = np.arange(2.0, m + 1.0, _BLOCK)
    ends = np.minimum(starts + (_BLOCK - 1), m)
    mode = np.clip(math.floor((m + 1.0) * q), starts, ends)
    bounds, magnitudes = _log_terms(mode, m, log_q, log_1mq, ends * (ends - 1.0) / scale)
    bounds = bounds + np.log(ends - starts + 1.0) + 32.0 * _U * (magnitudes + math.log(_BLOCK))
    total, order = -math.inf, np.argsort(-bounds)
    remaining = np.logaddexp.accumulate(bounds[order][::-1])[::-1]  # to stop: the rest adds under e^-45
    for i, block in enumerate(order):
        if remaining[i] < total - 45.0:
            total = float(np.logaddexp(total, special.logsumexp(bounds[order[i:]])))
            break
        k = np.arange(starts[block], ends[block] + 1.0)
        logs, magnitudes = _log_terms(k, m, log_q, log_1mq, k * (k - 1.0) / scale)
        logs = logs + 32.0 * _U * magnitudes  # each term rounded up past its own error
        top = float(logs.max())
        total = float(np.logaddexp(total, top + math.log(float(np.exp(logs - top).sum()))))
    return total + 64.0 * _U * (1.0 + abs(total))


@functools.lru_cache(maxsize=None)
def _context(digits: int):
    """A private mpmath context at ``digits`` (never changed after creation: the global context's
    precision is shared by threads). mpmath is a dp-accounting dependency, needed only here."""
    import mpmath

    context = mpmath.MPContext()
    context.dps = digits
    return context


def _log_ratio(q: float, alpha: float, m: int) -> float:
    """An upper bound on log(f_α(1 − q)/f_m(1 − q)), f_a(u) = u^a − 1 − a(u − 1), for 1 < α < m.

    Evaluated in mpmath with digits to spare for the cancellation (~2 log10(1/q) + 16 of them);
    rounding to a float and the log's error are covered by 4u·(1 + |value|)."""
    context = _context(60 + 2 * max(0, math.ceil(-math.log10(q))))
    u, a = 1 - context.mpf(q), context.mpf(alpha)
    value = float(context.log((u**a - 1 + a * q) / (u**m - 1 + m * q)))
    return value + 4.0 * _U * (1.0 + abs(value))


def _poisson_gaussian(q: float, sigma: float, orders: np.ndarray, continuous: bool = True) -> np.ndarray:
    """Upper bounds on the Poisson-subsampled Gaussian's ε(α) at the given orders (> 1), the least of:

    - at any order, α/(2σ²), the Gaussian's own curve: subsampling never hurts, since
      (P, Q) -> E_Q[(P/Q)^α] is jointly convex, so A_α <= 1 − q + q·exp(α(α − 1)/(2σ²));
    - at an integer order n up to ``_MAX_SUMMED``, log(1 + (A_n − 1)) with ``_log_a_minus_1``;
    - at a fractional order α in (n, n + 1), n + 1 <= ``_MAX_SUMMED``:
      * ((n + 1 − α) log A_n + (α − n) log A_(n+1))/(α − 1), log A_1 = 0: α -> log A_α is convex
        (Hölder), and the weights are exact in floats (Sterbenz);
      * log(1 + R·(A_(n+1) − 1))/(α − 1), R = f_α(1 − q)/f_(n+1)(1 − q) (``_log_ratio``): A_a − 1 =
        E[f_a(L)] as E[L] = 1, and f_α/f_(n+1) decreases on (0, ∞) (it is C(α,2)/C(n+1,2) times the
        mean of s^(α−n−1), decreasing, under weights |u − s| s^(n−1) between 1 and u, which move to
        larger s as u grows), so f_α(L) <= R f_(n+1)(L) as L >= 1 − q. Tight (to ~q/3 relative) when
        L stays near 1: small q or large σ, where A_α ≈ 1 and dp-accounting's series is least exact;
    - at a fractional order, dp-accounting's series when it converges (it sums the absolute values
      of its terms: an overestimate, but for its float error and truncation), inflated by
      ``FRACTIONAL_MARGIN`` and ``FRACTIONAL_ABSOLUTE_MARGIN``/(α − 1).
    The float operations of the last steps (softplus, a product, a quotient) are covered by 8u.

    ``continuous=False``: the Poisson-subsampled discrete Gaussian with integer shifts at ℓ2 distance
    <= 1 (σ = σ_L/Δ_L): every bound above but the series holds for it (docs/proofs.md, "Accounting
    discrete noise", item 4): its binomial terms E[Λ^j] = exp((j − 1)D_j) are at most the continuous ones
    (CKS 2020), the other direction is smaller (the pair is symmetric), and the rest are general.
    """
    if not (np.all(orders > 1) and 0 <= q <= 1 and sigma >= 0):
        raise ValueError(f"need orders > 1, q in [0, 1] and σ >= 0, got {orders}, {q}, {sigma}")
    if q == 0 or sigma == 0:  # nothing released; no noise (dp-accounting's ∞)
        return np.zeros_like(orders) if q == 0 else np.full_like(orders, np.inf)
    gaussian = orders / (2.0 * sigma * sigma) * (1.0 + 4.0 * _U)  # ∞ at α = ∞, as dp-accounting's
    if q == 1:
        return gaussian
    log_am1 = functools.lru_cache(maxsize=None)(lambda n: _log_a_minus_1(q, sigma, n))
    log_a = functools.lru_cache(maxsize=None)(lambda n: 0.0 if n == 1 else float(np.logaddexp(0.0, log_am1(n))))
    values = []
    for alpha, bound in zip(orders.tolist(), gaussian.tolist()):
        candidates = [bound]
        if alpha.is_integer() and alpha <= _MAX_SUMMED:
            candidates.append(log_a(int(alpha)) / (alpha - 1.0))
        elif not alpha.is_integer() and math.isfinite(alpha):
            if alpha < _MAX_SUMMED:
                n = math.floor(alpha)
                candidates.append(((n + 1 - alpha) * log_a(n) + (alpha - n) * log_a(n + 1)) / (alpha - 1.0))
                log_a_ratio = float(np.logaddexp(0.0, _log_ratio(q, alpha, n + 1) + log_am1(n + 1)))
                candidates.append(log_a_ratio / (alpha - 1.0))
            if continuous and min(candidates) * (alpha - 1.0) > FRACTIONAL_ABSOLUTE_MARGIN:  # else it cannot win
                series = float(_rdp._compute_log_a_frac(q, sigma, alpha))  # noqa: SLF001
                if math.isfinite(series):
                    candidates.append((series * (1 + FRACTIONAL_MARGIN) + FRACTIONAL_ABSOLUTE_MARGIN) / (alpha - 1))
        values.append(min(candidates[0], min(candidates[1:], default=math.inf) * (1.0 + 8.0 * _U)))
    return np.asarray(values)


@functools.lru_cache(maxsize=4096)
def _leaf(key: str, orders: tuple[float, ...]) -> np.ndarray | None:
    """One leaf's curve, whatever the caller's numpy error state: exponentials that underflow to 0
    are terms under 2^-1074 of the largest, far inside the margins above (np.errstate is per thread)."""
    with np.errstate(all="ignore"):
        return _leaf_curve(_events.from_dict(json.loads(key)), orders)


def _leaf_curve(event, orders: tuple[float, ...]) -> np.ndarray | None:
    grid = np.asarray(orders, dtype=float)
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return np.zeros_like(grid)
    if isinstance(event, _events.EpsilonDeltaDpEvent):
        return _pure(event.epsilon, grid) if event.delta == 0 else None
    if isinstance(event, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        return _pure(event.noise_parameter * event.sensitivity, grid)
    if isinstance(event, _events.DiscreteGaussianDpEvent):  # D_α <= α Δ²/(2σ²) (CKS 2020, Proposition 5)
        return grid * (_ratio(event) ** 2 / 2.0) * (1.0 + MARGIN)
    if isinstance(event, dp_accounting.PoissonSampledDpEvent) and isinstance(
            event.event, _events.DiscreteGaussianDpEvent):
        return _poisson_gaussian(float(event.sampling_probability), _multiplier(event.event), grid, continuous=False)
    if isinstance(event, dp_accounting.PoissonSampledDpEvent) and (pure := pure_epsilon(event.event)) is not None:
        return np.minimum(_pure(pure, grid), poisson_pure(float(event.sampling_probability), pure, grid))
    if isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent) and (pure := pure_epsilon(event.event)):
        amplified = sampled_pure(event)  # an ε'-DP step: randomised response's curve at ε' bounds it
        return np.minimum(_pure(amplified, grid), poisson_pure(1.0, amplified, grid))
    if isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent):
        inner = event.event
        multiplier = (_multiplier(inner) if isinstance(inner, _events.DiscreteGaussianDpEvent)
                      else inner.noise_multiplier if isinstance(inner, dp_accounting.GaussianDpEvent) else None)
        if multiplier is None:
            return None
        return without_replacement(event.sample_size / event.source_dataset_size, multiplier, grid)
    accountant = _rdp.RdpAccountant(orders=list(orders))
    if not accountant.supports(event):
        return None
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        sigma = _rdp._effective_gaussian_noise_multiplier(event.event)  # noqa: SLF001
        if not isinstance(event.event, dp_accounting.GaussianDpEvent):
            sigma *= 1.0 - 1e-12  # σ of composed Gaussians, from float sums: rounded down
        return _poisson_gaussian(float(event.sampling_probability), float(sigma), grid)
    accountant.compose(event)
    values = np.asarray(accountant._rdp, dtype=float)  # noqa: SLF001 - the curve itself is what we need
    return values * (1.0 + MARGIN) + ABSOLUTE_MARGIN


def _ratio(event) -> float:
    """Δ/σ of a discrete Gaussian event, rounded up (so 1/ratio never overstates the noise)."""
    value = Fraction(event.sensitivity) / Fraction(event.sigma)
    ratio = float(value)
    return math.nextafter(ratio, math.inf) if Fraction(ratio) < value else ratio


def _multiplier(event) -> float:
    """σ/Δ of a discrete Gaussian event, rounded down."""
    value = Fraction(event.sigma) / Fraction(event.sensitivity)
    multiplier = float(value)
    return math.nextafter(multiplier, 0.0) if Fraction(multiplier) > value else multiplier


def curve(event, orders: tuple[float, ...]) -> np.ndarray | None:
    """ε(α) at each order (an upper bound), or ``None`` when some part of the event has no curve."""
    total = np.zeros(len(orders))
    for leaf, count in _events.leaves(event):
        values = _leaf(_events.key(leaf), tuple(orders))
        if values is None:
            return None
        total = total + count * values
    return total


def epsilon(event, delta: float, orders: tuple[float, ...]) -> float | None:
    """ε at δ of a *fixed* composition with this curve (dp-accounting's conversion, optimised over the
    orders: valid because the curve holds at every order at once). ``None`` without a curve."""
    values = curve(event, orders)
    if values is None:
        return None
    return float(_rdp.compute_epsilon(list(orders), list(values), delta)[0])


#: Candidate orders for ``accountant.suggest_order``: 200, geometric in α − 1 from 0.01 to 1023 (past 1024
#: dp-accounting's fractional-order series stops converging, and no useful budget is met there).
CANDIDATE_ORDERS = tuple(1.0 + float(x) for x in np.geomspace(0.01, 1023.0, 200))


def rho(event) -> float | None:
    """An upper bound on the zCDP ρ of the event (ξ = 0), or ``None`` when it is not zCDP here: a
    zCDP event's ρ, a Gaussian's 1/(2z²), a pure ε-DP step's ε²/2 (Bun & Steinke 2016, Prop. 3.3)."""
    total = 0.0
    for leaf, count in _events.leaves(event):
        if isinstance(leaf, dp_accounting.NoOpDpEvent):
            continue
        if isinstance(leaf, dp_accounting.ZCDpEvent) and leaf.xi == 0:
            value = leaf.rho
        elif isinstance(leaf, dp_accounting.GaussianDpEvent):
            value = 0.5 / leaf.noise_multiplier**2
        elif isinstance(leaf, dp_accounting.LaplaceDpEvent):  # pure ε = 1/b
            value = 0.5 * (1.0 / leaf.noise_multiplier) ** 2
        elif isinstance(leaf, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
            value = 0.5 * (leaf.noise_parameter * leaf.sensitivity) ** 2
        elif isinstance(leaf, _events.DiscreteGaussianDpEvent):  # CKS 2020, Proposition 5
            value = 0.5 * _ratio(leaf) ** 2
        elif isinstance(leaf, _events.EpsilonDeltaDpEvent) and leaf.delta == 0:
            value = 0.5 * leaf.epsilon**2
        else:
            return None
        total += count * value * (1.0 + MARGIN)
    return total


def zcdp_epsilon(rho_: float, delta: float) -> float:
    """ε at δ of ρ-zCDP: dp-accounting's conversion over the fine grid ``ORDERS`` (valid at any order,
    since ρ-zCDP holds at all of them)."""
    if rho_ == 0:
        return 0.0
    return float(_rdp.compute_epsilon(list(ORDERS), [rho_ * a for a in ORDERS], delta)[0])


def budget_rho(epsilon_: float, delta: float) -> float:
    """The largest ρ (to a relative 1e-9, from below) with ``zcdp_epsilon(ρ, δ) <= ε``."""
    low, high = 0.0, 1.0
    while zcdp_epsilon(high, delta) <= epsilon_:
        low, high = high, 2.0 * high
    while high - low > 1e-9 * high:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if zcdp_epsilon(middle, delta) <= epsilon_ else (low, middle)
    return low
