"""Textbook floating-point noise: an explicit opt-in, never a default.

``TextbookLaplace``, ``TextbookTruncatedLaplace`` and ``TextbookGaussian`` add numpy's float
Laplace or normal draws to the answer and release the double. Their guarantees hold for the
mathematical mechanisms, not for the doubles released: the low-order bits of fl(f(D) + noise)
depend on f(D), and Mironov (2012) shows outputs that are impossible from a neighbour, so the
true privacy loss can be unbounded. They stay for experiments against the literature and for the
auditor's own tests (``audit.floating_point`` finds the leak); every plan step that uses one says
so. The float-safe mechanisms are ``Laplace``, ``TruncatedLaplace``, ``Gaussian`` and
``DiscreteLaplace`` (docs/design.md, "Floating point").

Calibration of the Gaussian: the classic σ = Δ2·sqrt(2 ln(2/δ))/ε of Lemma A.12 is proven only for
0 < ε <= 1, so ``calibration="classic"`` refuses ε > 1. The default ``"analytic"`` σ is the
smallest with Φ(Δ/2σ - εσ/Δ) - e^ε·Φ(-Δ/2σ - εσ/Δ) <= δ (Balle & Wang 2018), found by
``dp_accounting.get_sigma_gaussian`` and then checked against an upper bound on δ that survives
rounding (log space, inflated by its evaluation error), and nudged up if needed.
"""

from __future__ import annotations

import math
from fractions import Fraction

import attrs
import dp_accounting
import numpy as np

from .. import _validate
from ..guarantees import ApproxDP, PureDP
from ..privacy.analytic import analytic_epsilon, analytic_sigma, classic_sigma
from .base import Mechanism, delta_field, epsilon_field, sensitivity_field, shaped
from .laplace import round_down

CALIBRATIONS = ("analytic", "classic")
def _calibration(value: str) -> str:
    if value not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {value!r}")
    return value


@attrs.frozen
class TextbookLaplace(Mechanism):
    """Adds Lap(Δ1/ε) to every coordinate: ε-DP for a query of ℓ1-sensitivity Δ1 (Lemma A.8)."""

    source = "Laplace mechanism (Lemma A.8), textbook floating point (opt-in; not float-safe)"

    epsilon: float = epsilon_field()
    sensitivity: float = sensitivity_field()

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def dp_event(self):
        # dp-accounting's events are normalised to sensitivity 1: noise multiplier = scale / Δ, rounded down.
        return dp_accounting.LaplaceDpEvent(round_down(Fraction(self.scale) / Fraction(self.sensitivity)))

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "scale": self.scale}

    def _draw(self, value, rng, size):
        return value + rng.laplace(0.0, self.scale, size=shaped(value.shape, size))


    def _draw_stacked(self, values, rng):
        return self._draw(values, rng, None)  # noise of the stacked shape: one independent draw per coordinate


@attrs.frozen
class TextbookTruncatedLaplace(Mechanism):
    """Adds tLap(-Δ1(1 + ln(1/δ)/ε), Δ1/ε): Laplace noise conditioned on being <= 0 (Lemma A.10).

    (ε, δ)-DP for a scalar query of sensitivity Δ1. The noise is never positive, so the released
    value never exceeds the true one: the one-sided test the halting steps of Algorithm D.5 need.
    """

    source = "truncated Laplace mechanism (Lemma A.10), textbook floating point (opt-in; not float-safe)"

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


    def _draw_stacked(self, values, rng):
        return self._draw(values, rng, len(values))  # scalars: answer i gets noise i


@attrs.frozen
class TextbookGaussian(Mechanism):
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
            return "Gaussian mechanism (Lemma A.12), textbook floating point (opt-in; not float-safe)"
        return "analytic Gaussian mechanism (Balle & Wang 2018), textbook floating point (opt-in; not float-safe)"

    @classmethod
    def from_sigma(cls, sigma: float, sensitivity: float = 1.0, *, delta: float = 1e-6) -> "TextbookGaussian":
        """The mechanism with noise ``sigma``: exactly (Δ/σ)-GDP (its ``dp_event``); ``delta`` only fixes
        the (ε, δ) it states, the smallest ε whose analytic δ(ε) is at most ``delta``."""
        sigma = _validate.positive("sigma", sigma)
        delta = _validate.probability("delta", delta, low_open=True)
        epsilon = analytic_epsilon(sigma, delta, _validate.positive("sensitivity", sensitivity))
        mechanism = cls(epsilon, delta, sensitivity)
        object.__setattr__(mechanism, "sigma", sigma)  # valid: δ(ε) at σ itself is at most delta
        return mechanism

    def guarantee(self) -> ApproxDP:
        return ApproxDP(self.epsilon, self.delta)

    def dp_event(self):
        return dp_accounting.GaussianDpEvent(round_down(Fraction(self.sigma) / Fraction(self.sensitivity)))

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "sensitivity": self.sensitivity,
                "sigma": self.sigma, "calibration": self.calibration}

    def _draw(self, value, rng, size):
        return value + rng.normal(0.0, self.sigma, size=shaped(value.shape, size))


    def _draw_stacked(self, values, rng):
        return self._draw(values, rng, None)  # noise of the stacked shape: one independent draw per coordinate
