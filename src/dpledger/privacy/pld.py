"""Privacy loss distributions (dp-accounting) of events, for compositions fixed in advance.

Laplace and Gaussian steps (also Poisson-subsampled, composed and self-composed) become the PLD
that ``dp_accounting.pld.PLDAccountant`` itself builds for the same event, with the same
discretisation, so our totals equal dp-accounting's for the same events. A step known only by its
(ε, δ) (``EpsilonDeltaDpEvent``: a halting segment, a histogram, a random partition) enters as the
worst-case PLD of that guarantee, ``from_privacy_parameters``. A zCDP step has no PLD here.

A scalar discrete Gaussian (the lattice ``Gaussian`` with ``coordinates=1``,
``events.DiscreteGaussianDpEvent``) and a discrete Laplace (also Poisson-subsampled) become
dp-accounting's discrete privacy losses for their integer shift bound K, by connect-the-dots (its
pessimistic discretisation; Doroshenko et al. 2022). Two theorems make that a bound on the real
mechanism (docs/proofs.md, "Accounting discrete noise"): a shift k with |k| <= K is dominated by
the shift K (the noises have monotone likelihood ratios), and dp-accounting cuts the discrete
Gaussian to [-T, T], which moves each step by at most its tail mass τ, so the composition's δ(ε)
is at most δ_cut(ε + log(1 − Στ)) + Στ (``epsilon``).

PLD composition assumes the steps are fixed before any data is seen: it serves plans, ``repeat``
and declared schedules, never the adaptively chosen charges of a session (``accountant.filters``).

Events are normalised to sensitivity 1 (noise multiplier = scale / sensitivity, where the
sensitivity is measured under the graph's relation), which is the ADD_OR_REMOVE_ONE convention
of dp-accounting for un-sampled events.
"""

from __future__ import annotations

import math

import dp_accounting
from dp_accounting.pld import common, privacy_loss_distribution as pld_lib

from ..guarantees import Guarantee, PureDP
from ..relations import AddRemoveOne
from . import events as _events, rules
from .subsampled import pure_epsilon, sampled_pure

DISCRETISATION = 1e-4  # dp-accounting's PLDAccountant default
#: The discrete Gaussian is cut to [-T, T], T = ceil(TRUNCATION·σ) + K (``_cut``).
TRUNCATION = 11.6
#: dp-accounting's discrete privacy loss visits each of the 2T + K points, and each point of the loss
#: grid they span, in Python: beyond this many points (4× on the loss grid; σ_L above about 11,000
#: lattice units, e.g. small ε, or tiny noise, large ε) a scalar is priced by its Rényi curve.
MAX_SUPPORT = 2**18
#: δ set aside for each step for the floating-point evaluation of dp-accounting's PLDs: measured, not
#: proven (an independent check found its δ up to 2.8e-13 below the exact value, at 2-3 steps).
ALLOWANCE = 1e-12


def identity():
    return pld_lib.identity(value_discretization_interval=DISCRETISATION)


def from_guarantee(g: Guarantee):
    """Worst-case PLD of any (ε, δ)-DP mechanism."""
    params = common.DifferentialPrivacyParameters(g.epsilon, g.delta)
    return pld_lib.from_privacy_parameters(params, value_discretization_interval=DISCRETISATION)


def from_event(event) -> "pld_lib.PrivacyLossDistribution | None":
    """The PLD of a supported dp-accounting event, or ``None`` when the event is not supported."""
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return identity()
    if isinstance(event, _events.EpsilonDeltaDpEvent):
        return from_guarantee(event) if event.epsilon > 0 or event.delta > 0 else identity()
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return pld_lib.from_laplace_mechanism(event.noise_multiplier, value_discretization_interval=DISCRETISATION)
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return pld_lib.from_gaussian_mechanism(event.noise_multiplier, value_discretization_interval=DISCRETISATION)
    if isinstance(event, (_events.DiscreteGaussianDpEvent, dp_accounting.dp_event.DiscreteLaplaceDpEvent)):
        return _discrete(event, 1.0)
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        inner, q = event.event, event.sampling_probability
        if isinstance(inner, dp_accounting.LaplaceDpEvent):
            return pld_lib.from_laplace_mechanism(
                inner.noise_multiplier, value_discretization_interval=DISCRETISATION, sampling_prob=q)
        if isinstance(inner, dp_accounting.GaussianDpEvent):
            return pld_lib.from_gaussian_mechanism(
                inner.noise_multiplier, value_discretization_interval=DISCRETISATION, sampling_prob=q)
        if isinstance(inner, (_events.DiscreteGaussianDpEvent, dp_accounting.dp_event.DiscreteLaplaceDpEvent)):
            return _discrete(inner, q)
        if isinstance(inner, _events.EpsilonDeltaDpEvent) and inner.delta == 0:  # its amplified ε' (pure)
            return from_guarantee(rules.amplify_by_subsampling(PureDP(inner.epsilon), q, AddRemoveOne()))
        return None
    if isinstance(event, dp_accounting.SampledWithoutReplacementDpEvent):  # a pure step: the worst ε'-DP pair
        return from_guarantee(PureDP(sampled_pure(event))) if pure_epsilon(event.event) else None
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = from_event(event.event)
        return None if inner is None else inner.self_compose(event.count)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        total = identity()
        for part in event.events:
            inner = from_event(part)
            if inner is None:
                return None
            total = total.compose(inner)
        return total
    return None


def _discrete(event, q: float):
    """dp-accounting's discrete privacy loss for the integer shift bound K, Poisson-subsampled at
    rate ``q`` (its mixtures (1 − q)μ + qμ_K are the dominating pairs of Poisson subsampling for
    add/remove neighbours: Zhu, Dong & Wang 2022, Theorem 11); ``None`` for a vector Gaussian, and
    for a scalar whose noise spans more than ``MAX_SUPPORT`` points (priced by its Rényi curve)."""
    if isinstance(event, _events.DiscreteGaussianDpEvent):
        if not event.scalar or 2 * _cut(event) + event.sensitivity > MAX_SUPPORT or _losses(event) > 4 * MAX_SUPPORT:
            return None
        return pld_lib.from_discrete_gaussian_mechanism(
            event.sigma, sensitivity=int(event.sensitivity), truncation_bound=_cut(event),
            value_discretization_interval=DISCRETISATION, sampling_prob=q, use_connect_dots=True)
    return pld_lib.from_discrete_laplace_mechanism(
        event.noise_parameter, sensitivity=int(event.sensitivity), value_discretization_interval=DISCRETISATION,
        sampling_prob=q, use_connect_dots=True)


def _losses(event) -> float:
    """How many points of the loss grid the privacy losses K(2x + K)/(2σ²), |x| <= T, span."""
    return event.sensitivity * (2 * _cut(event) + event.sensitivity) / event.sigma**2 / DISCRETISATION


def _cut(event) -> int:
    """T = ceil(TRUNCATION·σ) + K: the cut noises around 0 and K then overlap on [−T + K, T], so the
    mass their cut leaves unmatched (priced as an infinite loss) is at most P(X < −11.6σ)."""
    return math.ceil(TRUNCATION * event.sigma) + int(event.sensitivity)


def tail_mass(event) -> float:
    """An upper bound on Στ, τ = P(|X| > T) <= 2 exp(-(T + 1)²/(2σ²)) over the composition's cut
    discrete Gaussians (σ²-subgaussian: Canonne, Kamath & Steinke 2020, Corollary 9; Chernoff), plus
    ``ALLOWANCE`` for each step priced by a PLD."""
    total = 0.0
    for leaf, count in _events.leaves(event):
        if isinstance(leaf, dp_accounting.NoOpDpEvent):
            continue
        total += count * ALLOWANCE
        if isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
            leaf = leaf.event
        if isinstance(leaf, _events.DiscreteGaussianDpEvent) and leaf.scalar:
            total += count * 2.0 * math.exp(-((_cut(leaf) + 1) / leaf.sigma) ** 2 / 2.0)
    return total * (1.0 + 1e-9)


def epsilon(pld, delta: float, tail: float = 0.0) -> float:
    """ε at ``delta`` of the mechanism whose cut composition has the PLD ``pld``, ``tail`` = Στ
    (``tail_mass``): cutting moves the first distribution by at most Στ and the second by a factor
    at least 1 − Στ, so δ(ε) <= δ_cut(ε + log(1 − Στ)) + Στ, and ε = ε_cut(δ − Στ)
    − log(1 − Στ).
    ∞ when Στ >= δ."""
    if not tail < delta:
        return math.inf
    return float(pld.get_epsilon_for_delta(delta - tail)) - math.log1p(-tail) * (1.0 + 1e-9)
