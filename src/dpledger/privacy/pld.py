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
Gaussian to [-T, T], which moves each step by at most its tail mass τ in total variation, so the
composition's δ(ε) is at most the cut PLD's plus Στ·(1 + e^ε) (``epsilon``).

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

from ..guarantees import Guarantee
from . import events as _events

DISCRETISATION = 1e-4  # dp-accounting's PLDAccountant default
#: The discrete Gaussian is cut to [-T, T], T = ceil(TRUNCATION·σ) (dp-accounting's default).
TRUNCATION = 11.6


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
        return None
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
    add/remove neighbours: Zhu, Dong & Wang 2022, Theorem 11); ``None`` for a vector Gaussian."""
    if isinstance(event, _events.DiscreteGaussianDpEvent):
        if not event.scalar:
            return None
        return pld_lib.from_discrete_gaussian_mechanism(
            event.sigma, sensitivity=int(event.sensitivity), truncation_bound=_cut(event.sigma),
            value_discretization_interval=DISCRETISATION, sampling_prob=q, use_connect_dots=True)
    return pld_lib.from_discrete_laplace_mechanism(
        event.noise_parameter, sensitivity=int(event.sensitivity), value_discretization_interval=DISCRETISATION,
        sampling_prob=q, use_connect_dots=True)


def _cut(sigma: float) -> int:
    return math.ceil(TRUNCATION * sigma)


def tail_mass(event) -> float:
    """An upper bound on the total variation between the composition and the one whose discrete
    Gaussians are cut to [-T, T]: Σ over them of P(|X| > T) <= 2 exp(-(T + 1)²/(2σ²)) (the discrete
    Gaussian is σ²-subgaussian: Canonne, Kamath & Steinke 2020, Corollary 9; Chernoff)."""
    total = 0.0
    for leaf, count in _events.leaves(event):
        if isinstance(leaf, dp_accounting.PoissonSampledDpEvent):
            leaf = leaf.event
        if isinstance(leaf, _events.DiscreteGaussianDpEvent) and leaf.scalar:
            total += count * 2.0 * math.exp(-((_cut(leaf.sigma) + 1) / leaf.sigma) ** 2 / 2.0)
    return total * (1.0 + 1e-9)


def epsilon(pld, delta: float, tail: float = 0.0) -> float:
    """ε at ``delta`` of the mechanism whose cut composition has the PLD ``pld``, ``tail`` its total
    variation from the cut one (``tail_mass``): with ε_half the PLD's ε at δ/2 and s = tail·(1 + e^ε_half)
    <= δ/2, the PLD's ε at δ − s is at most ε_half, and there δ(ε) <= (δ − s) + tail·(1 + e^ε) <= δ.
    ∞ when the tail is too large for that (never at the cut above)."""
    if tail == 0.0:
        return float(pld.get_epsilon_for_delta(delta))
    half = float(pld.get_epsilon_for_delta(delta / 2.0))
    slack = tail * (1.0 + math.exp(min(half, 700.0))) * (1.0 + 1e-9)
    if not slack <= delta / 2.0:
        return math.inf
    return float(pld.get_epsilon_for_delta(delta - slack))
