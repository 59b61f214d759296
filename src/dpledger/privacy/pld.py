"""Privacy loss distributions (dp-accounting) of events, for compositions fixed in advance.

Laplace and Gaussian steps (also Poisson-subsampled, composed and self-composed) become the PLD
that ``dp_accounting.pld.PLDAccountant`` itself builds for the same event, with the same
discretisation, so our totals equal dp-accounting's for the same events. A step known only by its
(ε, δ) (``EpsilonDeltaDpEvent``: a halting segment, a histogram, a random partition) enters as the
worst-case PLD of that guarantee, ``from_privacy_parameters``. A zCDP step has no PLD here.

PLD composition assumes the steps are fixed before any data is seen: it serves plans, ``repeat``
and declared schedules, never the adaptively chosen charges of a session (``accountant.filters``).

Events are normalised to sensitivity 1 (noise multiplier = scale / sensitivity, where the
sensitivity is measured under the graph's relation), which is the ADD_OR_REMOVE_ONE convention
of dp-accounting for un-sampled events.
"""

from __future__ import annotations

import dp_accounting
from dp_accounting.pld import common, privacy_loss_distribution as pld_lib

from ..guarantees import Guarantee
from . import events as _events

DISCRETISATION = 1e-4  # dp-accounting's PLDAccountant default


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
    if isinstance(event, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        return pld_lib.from_discrete_laplace_mechanism(event.noise_parameter, sensitivity=event.sensitivity,
                                                       value_discretization_interval=DISCRETISATION)
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        inner, q = event.event, event.sampling_probability
        if isinstance(inner, dp_accounting.LaplaceDpEvent):
            return pld_lib.from_laplace_mechanism(
                inner.noise_multiplier, value_discretization_interval=DISCRETISATION, sampling_prob=q)
        if isinstance(inner, dp_accounting.GaussianDpEvent):
            return pld_lib.from_gaussian_mechanism(
                inner.noise_multiplier, value_discretization_interval=DISCRETISATION, sampling_prob=q)
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


def epsilon(pld, delta: float) -> float:
    return float(pld.get_epsilon_for_delta(delta))
