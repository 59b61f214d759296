"""The analytic Gaussian's (ε, δ) curve, and σ or ε from it, bounded above despite rounding.

A continuous Gaussian with noise σ on a query of ℓ2-sensitivity Δ is (ε, δ(ε))-DP with
δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ) (Balle & Wang 2018, Theorem 8). The textbook Gaussian
calibrates with it, and μ-GDP converts through it (``gdp``).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
from scipy.special import log_ndtr

_EPS = float(np.finfo(float).eps)


def _delta_terms(sigma: float, epsilon: float, sensitivity: float) -> tuple[float, float]:
    """(log Φ(a), x) with δ(ε) = Φ(a)·(−expm1(x)), x = ε + log Φ(b) − log Φ(a) (Balle & Wang 2018,
    Theorem 8: δ = Φ(a) − e^ε·Φ(b), a = Δ/2σ − εσ/Δ, b = −Δ/2σ − εσ/Δ). Written in logs so that
    the difference of two nearly equal tiny terms is never formed."""
    s = sigma / sensitivity
    log_a = float(log_ndtr(1.0 / (2.0 * s) - epsilon * s))
    log_b = float(log_ndtr(-1.0 / (2.0 * s) - epsilon * s))
    return log_a, epsilon + log_b - log_a


def analytic_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The exact δ(ε) of the Gaussian mechanism with noise σ, evaluated in log space."""
    log_a, x = _delta_terms(sigma, epsilon, sensitivity)
    return float(np.exp(log_a) * -np.expm1(x))


def delta_upper_bound(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """An upper bound on δ(ε) that survives rounding. log Φ(a), log Φ(b) and x are each within
    e = 64 ulps of |log Φ(a)| + |log Φ(b)| + ε + 1 of their exact values (``log_ndtr`` is accurate
    to a few ulps), so δ <= exp(log Φ(a) + e)·(−expm1(x − e)) (docs/proofs.md)."""
    log_a, x = _delta_terms(sigma, epsilon, sensitivity)
    log_b = x - epsilon + log_a
    error = 64.0 * _EPS * (abs(log_a) + abs(log_b) + epsilon + 1.0)
    return float(np.exp(log_a + error) * max(-np.expm1(x - error), 0.0))


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ (to a relative 1e-9) whose δ(ε), bounded above despite rounding, is <= ``delta``:
    dp-accounting's root, then, if its rounding left δ(ε) above ``delta``, a geometric search and
    bisection upwards. The returned σ errs on the large side only."""
    low = dp_accounting.get_sigma_gaussian(epsilon, delta) * sensitivity
    if delta_upper_bound(low, epsilon, sensitivity) <= delta:
        return low
    step = 1e-9
    while delta_upper_bound(low * (1.0 + step), epsilon, sensitivity) > delta:
        step *= 2.0
    high = low * (1.0 + step)
    while high > low * (1.0 + 1e-9):  # invariant: bound(low) > delta >= bound(high)
        middle = 0.5 * (low + high)
        low, high = (middle, high) if delta_upper_bound(middle, epsilon, sensitivity) > delta else (low, middle)
    return high


def analytic_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest ε (to a relative 1e-9, from above) whose δ(ε), bounded above despite rounding,
    is at most ``delta`` for noise σ: the inverse of ``analytic_sigma``."""
    high = max(sensitivity / sigma, 1e-9)
    while delta_upper_bound(sigma, high, sensitivity) > delta:
        high *= 2.0
    low = 0.0
    while high - low > 1e-9 * high:  # invariant: bound(high) <= delta
        middle = 0.5 * (low + high)
        low, high = (middle, high) if delta_upper_bound(sigma, middle, sensitivity) > delta else (low, middle)
    return high


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Lemma A.12: σ = Δ2·sqrt(2 ln(2/δ))/ε, valid only for 0 < ε <= 1."""
    if not 0 < epsilon <= 1:
        raise ValueError(
            f"the classic Gaussian calibration (Lemma A.12) is proven only for 0 < epsilon <= 1, "
            f"got epsilon={epsilon}; use calibration='analytic'"
        )
    return sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon
