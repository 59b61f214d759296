"""The float-safe Gaussian mechanism: exact discrete Gaussian noise on a power-of-two lattice.

The answer (D coordinates, ℓ2-sensitivity Δ) is clamped to a public [-bound, bound], rounded to
the lattice g·Z (``lattice``: sqrt(D)·g <= Δ/1024), and exact discrete Gaussian noise N_Z(0, σ_L²)
is added to every coordinate in lattice units (Canonne, Kamath & Steinke 2020, Algorithm 3;
``exact``); g·(integer) is released. Rounded neighbouring answers are integer vectors at ℓ2
distance at most Δ_L = Δ/g + sqrt(D) <= Δ(1 + 1/1024)/g.

Privacy. For integer vectors x, x' the Rényi divergence of x + N_Z(0, σ²)^D from x' + N_Z(0, σ²)^D
is at most α·||x − x'||²/(2σ²): CKS 2020 prove it for one coordinate and integer shifts, and
Rényi divergences of independent coordinates add up. That is the continuous Gaussian's own RDP
curve (tests/test_float_safe.py checks it numerically). So ``sigma`` = z·Δ(1 + 2/1024) in the
query's units (1/1024 covers the rounding, the other 1/1024 the float evaluation of ε), with z the
smallest noise multiplier whose Gaussian RDP curve, converted to (ε, δ) by dp-accounting's RDP
accountant (CKS's optimal conversion, over the orders ``ORDERS``), gives at most ε at δ, and
σ_L² >= (sigma/g)² >= (z·Δ_L)² (docs/proofs.md). This costs 3–11% more noise than the analytic
calibration of a continuous Gaussian at δ = 1e-6 for ε from 8 down to 0.005 (18% at ε = 0.001,
0.3% at ε = 10^4), the price of a proof for the values actually released. The textbook continuous
mechanism is ``textbook.TextbookGaussian`` (explicit opt-in).

Composition prices the discrete Gaussian itself (``dp_event``): a declared scalar
(``coordinates=1``) by its own privacy loss distribution, within 0.2% of the continuous Gaussian's
ε on long subsampled runs; any other size by its Rényi curve (docs/proofs.md, "Accounting discrete
noise").
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import attrs
import dp_accounting
from dp_accounting import rdp

from .. import _validate
from ..guarantees import ApproxDP
from ..privacy.events import DiscreteGaussianDpEvent
from ..privacy.rdp import ORDERS
from . import exact
from .base import delta_field, epsilon_field, sensitivity_field, shaped
from .laplace import ROUNDING, _bound_field, _coordinates_field, _LatticeRelease, round_up
from .lattice import RESOLUTION, Lattice

#: Relative precision of the noise multiplier's bisection (it is rounded up).
_PRECISION = 1e-9


def _rdp_epsilon(noise_multiplier: float, delta: float) -> float:
    accountant = rdp.RdpAccountant(orders=list(ORDERS))
    accountant.compose(dp_accounting.GaussianDpEvent(noise_multiplier))
    return accountant.get_epsilon(delta)


@functools.lru_cache(maxsize=1024)
def noise_multiplier(epsilon: float, delta: float) -> float:
    """The smallest z (to a relative 1e-9, from above) whose Gaussian RDP curve α/(2z²) gives at most
    ``epsilon`` at ``delta`` through dp-accounting's conversion: σ = z·(ℓ2-sensitivity)."""
    high = 1.0
    while _rdp_epsilon(high, delta) > epsilon:
        high *= 2.0
    low = high / 2.0
    while _rdp_epsilon(low, delta) <= epsilon:
        low, high = low / 2.0, low
    while high > low * (1.0 + _PRECISION):  # invariant: ε(low) > epsilon >= ε(high)
        middle = math.sqrt(low * high)
        low, high = (middle, high) if _rdp_epsilon(middle, delta) > epsilon else (low, middle)
    return high


@attrs.frozen
class Gaussian(_LatticeRelease):
    """(ε, δ)-DP for a real query of ℓ2-sensitivity Δ, float-safe: exact discrete Gaussian noise on
    a power-of-two lattice (module doc). ``sigma`` is the noise's standard deviation parameter in
    the query's units, the same for every answer size. Answers beyond ±``bound`` (default: 2^50·g)
    are clamped."""

    source = "Gaussian mechanism on a power-of-two lattice, exact discrete Gaussian noise (RDP, CKS 2020; docs/proofs.md)"
    norm = 2

    epsilon: float = epsilon_field()
    delta: float = delta_field()
    sensitivity: float = sensitivity_field()
    bound: float | None = _bound_field()
    coordinates: int | None = _coordinates_field()
    sigma: float = attrs.field(init=False)

    @sigma.default
    def _sigma(self) -> float:
        return round_up(Fraction(noise_multiplier(self.epsilon, self.delta)) * Fraction(self.sensitivity) * ROUNDING,
                        "noise σ")

    @classmethod
    def from_sigma(cls, sigma: float, sensitivity: float = 1.0, *, delta: float = 1e-6,
                   bound: float | None = None, coordinates: int | None = None) -> "Gaussian":
        """The mechanism with noise ``sigma`` (in the query's units) for ℓ2-sensitivity ``sensitivity``.

        Filters and tight composition charge its discrete Gaussian (``dp_event``); ``delta`` only fixes the
        (ε, δ) it states for the basic filter and plan tables: ε is the smallest its RDP curve gives
        at ``delta`` (rounded up), so ``Gaussian(ε, delta, sensitivity)`` would need no more noise."""
        sigma = _validate.positive("sigma", sigma)
        delta = _validate.probability("delta", delta, low_open=True)
        z = Fraction(sigma) / (Fraction(_validate.positive("sensitivity", sensitivity)) * ROUNDING)
        epsilon = math.nextafter(_rdp_epsilon(float(z) * (1.0 - 1e-12), delta) * (1.0 + 1e-9), math.inf)
        mechanism = cls(epsilon, delta, sensitivity, bound)
        object.__setattr__(mechanism, "sigma", sigma)  # valid: the RDP ε of σ itself is at most epsilon
        object.__setattr__(mechanism, "coordinates", coordinates)
        mechanism.__attrs_post_init__()  # the sampler's limit for this σ
        return mechanism

    def _noise(self) -> Fraction:
        return Fraction(self.sigma)

    def guarantee(self) -> ApproxDP:
        return ApproxDP(self.epsilon, self.delta)

    def dp_event(self):
        """The discrete Gaussian it adds, in lattice units (``privacy.events.DiscreteGaussianDpEvent``).

        A declared scalar (``coordinates=1``): the sampler's own σ_L = sqrt(t·m) (``_draw``; t·m >= (σ/g)²,
        an integer) and the integer shift bound K = ⌊Δ/g⌋ + 1 of the rounded answers, which
        ``privacy.pld`` accounts by its own privacy loss distribution. Any other size: the ratio
        Δ(1 + 1/1024)/σ >= Δ_L/σ_L for every lattice (module doc), which ``privacy.rdp`` accounts by
        the discrete Gaussian's Rényi curve."""
        if self.coordinates == 1:
            g = Fraction(Lattice.for_query(self.sensitivity, 1, self.norm, self.bound).spacing)
            t, m = exact.gaussian_parameters(Fraction(self.sigma) / g)
            return DiscreteGaussianDpEvent(math.sqrt(t * m), math.floor(Fraction(self.sensitivity) / g) + 1, 1)
        sensitivity = round_up(Fraction(self.sensitivity) * (1 + Fraction(1, RESOLUTION)), "sensitivity")
        return DiscreteGaussianDpEvent(self.sigma, sensitivity)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "sensitivity": self.sensitivity, "sigma": self.sigma,
                "bound": self.bound, **({} if self.coordinates is None else {"coordinates": self.coordinates})}

    def _noisy(self, lattice, value, shape, rng):
        t, m = exact.gaussian_parameters(Fraction(self.sigma) / Fraction(lattice.spacing))  # σ/g <= 2^40
        return lattice.values(lattice.round(value) + exact.discrete_gaussian(t, m, shape, rng))
