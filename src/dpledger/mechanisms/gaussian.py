"""The Gaussian mechanism, calibrated analytically for every ε (Balle & Wang 2018).

The classic calibration σ = Δ2·sqrt(2 ln(2/δ))/ε of Lemma A.12 is proven only for 0 < ε <= 1;
using it above 1 is a real bug seen in a public library, so ``calibration="classic"`` refuses
ε > 1. The default ``"analytic"`` σ is the smallest with
Φ(Δ/2σ - εσ/Δ) - e^ε·Φ(-Δ/2σ - εσ/Δ) <= δ, found by ``dp_accounting.get_sigma_gaussian`` and
then checked (and nudged up if a root-finder tolerance left it a hair too small).
"""

from __future__ import annotations

import math

import attrs
import dp_accounting
import numpy as np
from scipy.special import log_ndtr

from ..guarantees import ApproxDP
from .base import Mechanism, delta_field, epsilon_field, sensitivity_field, shaped

CALIBRATIONS = ("analytic", "classic")


def analytic_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The exact δ(ε) of the Gaussian mechanism with noise σ (Balle & Wang 2018, Theorem 8)."""
    s = sigma / sensitivity
    a, b = 1.0 / (2.0 * s) - epsilon * s, -1.0 / (2.0 * s) - epsilon * s
    return float(np.exp(log_ndtr(a)) - np.exp(epsilon + log_ndtr(b)))


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ (to a relative 1e-9) whose exact δ(ε) is <= ``delta``: dp-accounting's root,
    then, if its rounding left δ(ε) above ``delta``, a geometric search and bisection upwards."""
    low = dp_accounting.get_sigma_gaussian(epsilon, delta) * sensitivity
    if analytic_delta(low, epsilon, sensitivity) <= delta:
        return low
    step = 1e-9
    while analytic_delta(low * (1.0 + step), epsilon, sensitivity) > delta:
        step *= 2.0
    high = low * (1.0 + step)
    while high > low * (1.0 + 1e-9):  # invariant: δ(low) > delta >= δ(high)
        middle = 0.5 * (low + high)
        low, high = (middle, high) if analytic_delta(middle, epsilon, sensitivity) > delta else (low, middle)
    return high


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Lemma A.12: σ = Δ2·sqrt(2 ln(2/δ))/ε, valid only for 0 < ε <= 1."""
    if not 0 < epsilon <= 1:
        raise ValueError(
            f"the classic Gaussian calibration (Lemma A.12) is proven only for 0 < epsilon <= 1, "
            f"got epsilon={epsilon}; use calibration='analytic'"
        )
    return sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon


def _calibration(value: str) -> str:
    if value not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {value!r}")
    return value


@attrs.frozen
class Gaussian(Mechanism):
    """Adds N(0, σ²) to every coordinate: (ε, δ)-DP for a query of ℓ2-sensitivity Δ2."""

    epsilon: float = epsilon_field()
    delta: float = delta_field()
    sensitivity: float = sensitivity_field()
    calibration: str = attrs.field(default="analytic", converter=_calibration)
    sigma: float = attrs.field(init=False)

    @sigma.default
    def _sigma(self) -> float:
        if self.calibration == "classic":
            return classic_sigma(self.epsilon, self.delta, self.sensitivity)
        return analytic_sigma(self.epsilon, self.delta, self.sensitivity)

    @property
    def source(self) -> str:
        if self.calibration == "classic":
            return "Gaussian mechanism (Lemma A.12)"
        return "analytic Gaussian mechanism (Balle & Wang 2018)"

    def guarantee(self) -> ApproxDP:
        return ApproxDP(self.epsilon, self.delta)

    def dp_event(self):
        return dp_accounting.GaussianDpEvent(self.sigma / self.sensitivity)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "sensitivity": self.sensitivity,
                "sigma": self.sigma, "calibration": self.calibration}

    def _draw(self, value, rng, size):
        return value + rng.normal(0.0, self.sigma, size=shaped(value.shape, size))
