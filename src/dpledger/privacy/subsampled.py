"""Rényi curves of subsampled steps that need only the base step's own curve: any pure ε-DP step
Poisson-subsampled (a chord bound) or sampled without replacement (its amplified ε'), and a
Gaussian step (continuous or discrete) sampled without replacement (Wang, Balle & Kasiviswanathan
2019). ``rdp`` reads them; every value is an upper bound,
floating-point error included (docs/proofs.md, "Accounting discrete noise").
"""

from __future__ import annotations

import functools
import math

import dp_accounting
import numpy as np
from scipy import special

from ..guarantees import PureDP
from ..relations import ReplaceOne
from ..rounding import UNIT_ROUNDOFF as _U
from . import events as _events
from .rules import amplify_by_subsampling


def pure_epsilon(event) -> float | None:
    """The ε of a pure ε-DP leaf event (Laplace 1/b, discrete Laplace a·Δ, an (ε, 0) step), else None."""
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return 1.0 / event.noise_multiplier * (1.0 + 4.0 * _U)
    if isinstance(event, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        return event.noise_parameter * event.sensitivity * (1.0 + 4.0 * _U)
    if isinstance(event, _events.EpsilonDeltaDpEvent) and event.delta == 0:
        return event.epsilon
    return None


def sampled_pure(event) -> float:
    """ε' = log(1 + γ(e^ε − 1)), rounded up, of an ε-DP step on m of n records drawn without
    replacement, γ = m/n, under replace-one neighbours (Balle, Barthe & Gaboardi 2018, Theorem 9)."""
    gamma = event.sample_size / event.source_dataset_size
    return amplify_by_subsampling(PureDP(pure_epsilon(event.event)), gamma, ReplaceOne()).epsilon


def poisson_pure(q: float, epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Upper bounds on ε(α) of any ε-DP step Poisson-subsampled at rate q (add/remove neighbours).

    By joint convexity it suffices to bound one pair P = M(S), ν = (1 − q)P + qM(S ∪ {x}) (either
    way round). L = ν/P has E_P[L] = 1 and lies in [a, b], a = 1 − q + qe^−ε, b = 1 − q + qe^ε, so for
    the convex φ(x) = x^α (remove) and x^(1−α) (add), E_P[φ(L)] <= w_a φ(a) + w_b φ(b), the chord at
    the mean (w_a = 1/(1 + e^−ε), w_b = e^−ε/(1 + e^−ε): the weights with mean 1). Both chords are
    the divergences of subsampled randomised response, a symmetric pair, whose add direction is the
    smaller (docs/proofs.md, "Accounting discrete noise", item 4): the remove chord bounds both. The
    float error of the log-sum is within 8u of the magnitudes of its parts.
    """
    if q == 0:
        return np.zeros_like(orders)
    keep = math.log1p(-q) if q < 1 else -math.inf
    log_a, log_b = np.logaddexp(keep, math.log(q) - epsilon), np.logaddexp(keep, math.log(q) + epsilon)
    log_wa, log_wb = -math.log1p(math.exp(-epsilon)), -epsilon - math.log1p(math.exp(-epsilon))
    values = []
    for alpha in orders.tolist():
        if not math.isfinite(alpha):
            values.append(epsilon)
            continue
        sizes = abs(log_wa) + abs(log_wb) + alpha * (abs(log_a) + abs(log_b)) + 1.0
        remove = float(np.logaddexp(log_wa + alpha * log_a, log_wb + alpha * log_b))
        values.append((remove + 8.0 * _U * sizes) / (alpha - 1.0))
    return np.asarray(values)


#: Orders above this get the base curve only under sampling without replacement (O(α) terms each).
_MAX_WOR = 4096


def without_replacement(gamma: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Upper bounds on ε(α) of a Gaussian step (continuous or discrete: RDP α/(2σ²) either way, CKS
    2020) on m of n records drawn without replacement, γ = m/n, under replace-one neighbours:

    - at an integer order 2 <= α <= ``_MAX_WOR``, Wang, Balle & Kasiviswanathan 2019, Theorem 9 with
      ε(∞) = ∞: A_α <= 1 + γ²C(α,2)·min(4(e^ε(2) − 1), 2e^ε(2)) + Σ_{j>=3} 2γ^j C(α,j) e^((j−1)ε(j)).
      Each term's log is a sum of parts (gammaln, logs, j(j − 1)/(2σ²)) computed within 16u of their
      magnitudes M_j, and a log-sum-exp moves by at most the softmax-weighted mean of its terms'
      errors, so log S is raised by 16u·Σ softmax_j M_j + 8u (and S by a relative 1e-9);
    - at a fractional order, the chord of log A between its integer neighbours (their Corollary 10:
      log A_α is convex in α), with log A_1 = 0;
    - at any order, α/(2σ²): by joint convexity the sample never does worse than the whole step.
    """
    own = orders / (2.0 * sigma * sigma) * (1.0 + 4.0 * _U)
    if gamma >= 1:
        return own

    @functools.lru_cache(maxsize=None)
    def log_a(n: int) -> float:
        if n == 1:
            return 0.0
        j = np.arange(3.0, n + 1.0)
        log_binomial = special.gammaln(n + 1.0) - special.gammaln(j + 1.0) - special.gammaln(n - j + 1.0)
        second = min(math.log(4.0) + math.log(math.expm1(1.0 / sigma**2)), math.log(2.0) + 1.0 / sigma**2)
        exponents = j * (j - 1.0) / (2.0 * sigma**2)
        terms = np.concatenate([[2 * math.log(gamma) + math.log(n * (n - 1) / 2.0) + second],
                                math.log(2.0) + j * math.log(gamma) + log_binomial + exponents])
        sizes = np.concatenate([[2 * abs(math.log(gamma)) + math.log(n * n) + abs(second) + 2.0],
                                1.0 + j * abs(math.log(gamma)) + special.gammaln(n + 1.0) + special.gammaln(j + 1.0)
                                + special.gammaln(n - j + 1.0) + exponents])
        total = special.logsumexp(terms)
        error = 16.0 * _U * float(np.sum(np.exp(terms - total) * sizes)) + 8.0 * _U
        return float(np.logaddexp(0.0, total + error + 1e-9))

    values = []
    for alpha, bound in zip(orders.tolist(), own.tolist()):
        if alpha > _MAX_WOR or not math.isfinite(alpha):
            values.append(bound)
            continue
        low, high = math.floor(alpha), math.ceil(alpha)
        chord = log_a(low) if low == high else (high - alpha) * log_a(low) + (alpha - low) * log_a(high)
        values.append(min(bound, chord / (alpha - 1.0) * (1.0 + 8.0 * _U)))
    return np.asarray(values)
