"""Laplace-family mechanisms: Laplace (Lemma A.8) and truncated Laplace (Lemma A.10).

Floating-point caveat (Mironov 2012): a real number released as value + textbook Laplace noise
can leak the value through its low-order bits. The released values here are IEEE doubles; use
them for accounting-faithful experiments and audits, and prefer a snapping or discrete variant
for releases on sensitive data (tracked separately; see docs/design.md).
"""

from __future__ import annotations

import math

import attrs
import dp_accounting
import numpy as np

from ..guarantees import ApproxDP, PureDP
from .base import Mechanism, delta_field, epsilon_field, sensitivity_field, shaped


@attrs.frozen
class Laplace(Mechanism):
    """Adds Lap(Δ1/ε) to every coordinate: ε-DP for a query of ℓ1-sensitivity Δ1 (Lemma A.8)."""

    source = "Laplace mechanism (Lemma A.8)"

    epsilon: float = epsilon_field()
    sensitivity: float = sensitivity_field()

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def dp_event(self):
        # dp-accounting's events are normalised to sensitivity 1: noise multiplier = scale / Δ.
        return dp_accounting.LaplaceDpEvent(self.scale / self.sensitivity)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "scale": self.scale}

    def _draw(self, value, rng, size):
        return value + rng.laplace(0.0, self.scale, size=shaped(value.shape, size))


@attrs.frozen
class TruncatedLaplace(Mechanism):
    """Adds tLap(-Δ1(1 + ln(1/δ)/ε), Δ1/ε): Laplace noise conditioned on being <= 0 (Lemma A.10).

    (ε, δ)-DP for a scalar query of sensitivity Δ1. The noise is never positive, so the released
    value never exceeds the true one: the one-sided test the halting steps of Algorithm D.5 need.
    """

    source = "truncated Laplace mechanism (Lemma A.10)"

    epsilon: float = epsilon_field()
    delta: float = delta_field()
    sensitivity: float = sensitivity_field()

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    @property
    def shift(self) -> float:
        """The location μ < 0 of the Laplace distribution before truncation."""
        return -self.sensitivity * (1.0 + math.log(1.0 / self.delta) / self.epsilon)

    def guarantee(self) -> ApproxDP:
        return ApproxDP(self.epsilon, self.delta)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "sensitivity": self.sensitivity,
                "scale": self.scale, "shift": self.shift}

    def _check_value(self, value):
        value = super()._check_value(value)
        if value.ndim != 0:
            raise ValueError(f"TruncatedLaplace releases a scalar, got shape {value.shape}")
        return value

    def noise(self, rng: np.random.Generator, size) -> np.ndarray:
        """Inverse-CDF draws of Lap(μ, b) conditioned on (-inf, 0]."""
        mu, b = self.shift, self.scale
        mass_below_zero = -0.5 * math.expm1(mu / b) + 0.5  # F(0) = 1 - ½e^{μ/b}, μ < 0
        u = rng.uniform(0.0, mass_below_zero, size=size)
        lower = mu + b * np.log(2.0 * np.maximum(u, np.finfo(float).tiny))
        upper = mu - b * np.log(2.0 * (1.0 - u))
        return np.minimum(np.where(u <= 0.5, lower, upper), 0.0)

    def _draw(self, value, rng, size):
        return value + self.noise(rng, size)
