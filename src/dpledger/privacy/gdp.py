"""Gaussian differential privacy: μ of Gaussian events, and the (ε, δ) that μ-GDP implies.

A continuous Gaussian mechanism with noise multiplier z (σ / ℓ2-sensitivity) is exactly
(1/z)-GDP, and μ_i-GDP steps compose to sqrt(Σμ_i²)-GDP (Dong, Roth & Su 2022, Corollary 3.3).
μ-GDP implies (ε, δ(ε))-DP for every ε with δ(ε) = Φ(-ε/μ + μ/2) - e^ε·Φ(-ε/μ - μ/2) (their
Corollary 2.13), which is the analytic Gaussian's δ at σ/Δ = 1/μ, so the rounding-safe bound of
``analytic.delta_upper_bound`` serves here too. Only continuous Gaussian events are
μ-GDP here: a discrete Gaussian is ρ-zCDP (its tradeoff curve is not proven to dominate G_μ).
"""

from __future__ import annotations

import math
from fractions import Fraction

import dp_accounting

from .analytic import analytic_epsilon, delta_upper_bound
from . import events as _events

#: μ² is kept as a multiple of 2^-64, rounded up: sums stay exact and O(1) per step.
_GRID = 2**64


def mu_squared(event) -> Fraction | None:
    """An upper bound on μ² of the event, on the 2^-64 grid; ``None`` unless it is made of continuous
    Gaussian steps (and no-ops)."""
    total = Fraction(0)
    for leaf, count in _events.leaves(event):
        if isinstance(leaf, dp_accounting.NoOpDpEvent):
            continue
        if not isinstance(leaf, dp_accounting.GaussianDpEvent) or not leaf.noise_multiplier > 0:
            return None
        exact = Fraction(count) / Fraction(leaf.noise_multiplier) ** 2
        total += Fraction(math.ceil(exact * _GRID), _GRID)
    return total


def delta(mu: float, epsilon: float) -> float:
    """An upper bound on δ(ε) of μ-GDP (μ > 0) that survives rounding."""
    return delta_upper_bound(1.0 / mu, epsilon, 1.0)


def epsilon(mu: float, delta_: float) -> float:
    """The smallest ε (to a relative 1e-9, from above) with δ(ε) <= delta_ for μ-GDP."""
    return 0.0 if mu == 0 else analytic_epsilon(1.0 / mu, delta_, 1.0)


def budget_mu(epsilon_: float, delta_: float) -> float:
    """The largest μ (to a relative 1e-9, from below) whose δ(ε) is at most delta_: a μ-GDP session
    with this μ is (ε, δ)-DP."""
    if delta_ <= 0 or epsilon_ <= 0:
        return 0.0
    low, high = 0.0, 1.0
    while delta(high, epsilon_) <= delta_:
        low, high = high, 2.0 * high
    while high - low > 1e-9 * high:  # invariant: δ(low) <= delta_ < δ(high)
        middle = 0.5 * (low + high)
        low, high = (middle, high) if delta(middle, epsilon_) <= delta_ else (low, middle)
    return low
