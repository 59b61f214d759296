"""The float-safe mechanisms' own accounting (docs/proofs.md, "Accounting discrete noise"): the
scalar discrete Gaussian's and discrete Laplace's PLDs bound the exact hockey-stick divergences of
the untruncated noise, a smaller shift is dominated, and the Poisson-subsampled discrete Gaussian's
Rényi curve bounds both directions of the exact divergence."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import special

import dpledger as dp
from dpledger.accountant import schedule
from dpledger.mechanisms import Gaussian, Laplace, PoissonSample
from dpledger.privacy import events, pld, rdp, tight

EPSILONS = np.linspace(0.0, 3.0, 31)


def _log_pmf(kind: str, parameter: float, shift: int, support: np.ndarray) -> np.ndarray:
    """log P(x) of N_Z(shift, σ²) or the discrete Laplace exp(-a|x - shift|), untruncated."""
    if kind == "gaussian":
        log_weights = -((support - shift) ** 2) / (2.0 * parameter**2)
        reach = int(40 * parameter) + 100
        normaliser = special.logsumexp(-(np.arange(-reach, reach + 1) ** 2) / (2.0 * parameter**2))
    else:
        log_weights = -parameter * np.abs(support - shift)
        normaliser = math.log((1 + math.exp(-parameter)) / (1 - math.exp(-parameter)))
    return log_weights - normaliser


def _hockey_stick(log_p: np.ndarray, log_q: np.ndarray, epsilon: float) -> float:
    return float(np.sum(np.maximum(0.0, np.exp(log_p) - np.exp(epsilon + log_q))))


def _pairs(kind, parameter, shift, q, support):
    """The subsampled pairs (remove, add) for a shift: ((1 − q)P + qP_k, P) and the swap."""
    base = _log_pmf(kind, parameter, 0, support)
    mixture = np.logaddexp(math.log1p(-q) + base, math.log(q) + _log_pmf(kind, parameter, shift, support)) \
        if q < 1 else _log_pmf(kind, parameter, shift, support)
    return (mixture, base), (base, mixture)


@pytest.mark.parametrize("kind, parameter, bound, q", [
    ("gaussian", 3.0, 2, 1.0), ("gaussian", 5.0, 4, 0.3), ("gaussian", 0.8, 1, 0.05),
    ("laplace", 0.7, 2, 1.0), ("laplace", 1.5, 3, 0.2),
])
def test_pld_bounds_the_exact_divergence_at_every_smaller_shift(kind, parameter, bound, q):
    """δ(ε) of every shift |k| <= K, both directions, under the PLD of the shift K plus its cut."""
    support = np.arange(-3000, 3001)
    event = (events.DiscreteGaussianDpEvent(parameter, bound, 1) if kind == "gaussian"
             else dp_accounting.dp_event.DiscreteLaplaceDpEvent(parameter, bound))
    if q < 1:
        event = dp_accounting.PoissonSampledDpEvent(q, event)
    distribution, tail = pld.from_event(event), pld.tail_mass(event)
    assert pld.ALLOWANCE <= tail < pld.ALLOWANCE * (1 + 1e-8) + 1e-29
    for shift in range(-bound, bound + 1):
        for first, second in _pairs(kind, parameter, shift, q, support):
            for epsilon in EPSILONS:
                exact = _hockey_stick(first, second, epsilon)
                assert exact <= distribution.get_delta_for_epsilon(epsilon + math.log1p(-tail)) + tail


def test_the_cut_is_paid_for_in_delta():
    """ε at δ with the cut's tail is the PLD's ε at δ − s (s > 0), so never below the PLD's own."""
    distribution = pld.from_event(events.DiscreteGaussianDpEvent(4.0, 3, 1)).self_compose(10)
    assert pld.epsilon(distribution, 1e-6, 1e-12) > pld.epsilon(distribution, 1e-6)
    assert pld.epsilon(distribution, 1e-6, 1e-6) == math.inf  # a tail too large for δ: refused


def test_scalar_rounding_stays_within_the_stated_shift():
    """Answers up to Δ apart round to lattice points at most K = ⌊Δ/g⌋ + 1 apart, ties included."""
    rng = np.random.default_rng(7)
    for sensitivity in (1.0, 0.37, 1e-3, 12.5):
        mechanism = Gaussian.from_sigma(2.0 * sensitivity, sensitivity, coordinates=1)
        event = mechanism.dp_event()
        lattice = mechanism._lattice(np.zeros(1))  # noqa: SLF001
        t, m = dp.mechanisms.exact.gaussian_parameters(mechanism.sigma / lattice.spacing)
        assert event.sigma == math.sqrt(t * m) >= mechanism.sigma / lattice.spacing  # the sampler's own σ
        a = rng.uniform(-5, 5, 10_000)
        b = a + rng.uniform(-1, 1, a.size) * sensitivity
        ties = (np.arange(-50, 50) + 0.5) * lattice.spacing  # k + 1/2 and the farthest neighbour
        a, b = np.concatenate([a, ties]), np.concatenate([b, ties + sensitivity])
        assert np.max(np.abs(lattice.round(a) - lattice.round(b))) <= event.sensitivity


def _exact_renyi(log_p, log_q, alpha):
    return float(special.logsumexp(alpha * log_p + (1 - alpha) * log_q)) / (alpha - 1)


@pytest.mark.parametrize("sigma, shift, q", [(3.0, 2, 0.2), (1.0, 1, 0.01), (8.0, 3, 0.5), (2.0, 2, 0.9)])
def test_subsampled_renyi_curve_bounds_both_directions(sigma, shift, q):
    orders = (1.5, 2.0, 3.0, 4.5, 7.8, 8.0, 16.0)
    event = dp_accounting.PoissonSampledDpEvent(q, events.DiscreteGaussianDpEvent(sigma, shift))
    curve = rdp.curve(event, orders)
    support = np.arange(-3000, 3001)
    (mixture, base), _ = _pairs("gaussian", sigma, shift, q, support)
    for alpha, bound in zip(orders, curve):
        remove, add = _exact_renyi(mixture, base, alpha), _exact_renyi(base, mixture, alpha)
        assert add <= remove + 1e-12  # the symmetric-pair lemma
        assert remove <= bound
        assert bound <= (1.001 if alpha.is_integer() else 1.2) * remove + 1e-9  # and close (chords between orders)


def test_default_gaussian_is_priced_like_its_continuous_twin():
    """Workloads 1 and 3 of the float-safe accounting issue, planned: within 1.02× of dp-accounting's
    continuous PLD (1.8282 and 4.8866) and never below it; the vector form is priced by its Rényi curve."""
    step = dp.subsample(PoissonSample(0.01), dp.release("g", Gaussian.from_sigma(1.0, coordinates=1), lambda x: 0.0))
    plan = dp.Graph(dp.repeat(step, 1000), relation=dp.AddRemoveOne()).plan()
    assert 1.8282 < plan.epsilon(1e-5) <= 1.02 * 1.8282
    event = dp_accounting.SelfComposedDpEvent(Gaussian.from_sigma(10.0, coordinates=1).dp_event(), 100)
    assert tight.route(event) == "PLD" and 4.8866 < tight.epsilon(event, 1e-6) <= 1.02 * 4.8866
    vector = dp_accounting.SelfComposedDpEvent(Gaussian.from_sigma(10.0).dp_event(), 100)
    assert tight.route(vector) == "Rényi curve" and tight.epsilon(vector, 1e-6) < 5.23


def test_lattice_laplace_scalar_has_its_discrete_laplace_loss():
    scalar, vector = Laplace(1.0, coordinates=1), Laplace(1.0)
    assert isinstance(scalar.dp_event(), dp_accounting.dp_event.DiscreteLaplaceDpEvent)
    assert isinstance(vector.dp_event(), events.EpsilonDeltaDpEvent)
    # ε of 50 scalar steps at δ = 1e-6: tight, and below the pure ε-DP worst case's
    tight_ = tight.epsilon(dp_accounting.SelfComposedDpEvent(scalar.dp_event(), 50), 1e-6)
    worst = tight.epsilon(dp_accounting.SelfComposedDpEvent(vector.dp_event(), 50), 1e-6)
    assert tight_ < 0.9 * worst


def test_subsampled_float_safe_gaussian_under_each_filter():
    """'rdp' prices it (workload 2: 1000 steps at the one order 7.8 within 1.02× of 2.1014);
    'zcdp' refuses it at plan time, naming 'rdp' (subsampling gains nothing in zCDP)."""
    graph = dp.Graph(dp.subsample(PoissonSample(0.01), dp.release("g", Gaussian.from_sigma(1.0), lambda x: 0.0)),
                     relation=dp.AddRemoveOne())
    accountant = dp.Accountant(dp.ApproxDP(100.0, 1e-5), "rdp", orders=[7.8], relation=dp.AddRemoveOne())
    rng = np.random.default_rng(0)
    for i in range(1000):
        accountant.run(graph, np.zeros(3), name=f"step{i}", rng=rng)
    assert 2.1014 < accountant.spent.epsilon <= 1.02 * 2.1014
    zcdp = dp.Accountant(dp.ApproxDP(1.0, 1e-5), "zcdp", relation=dp.AddRemoveOne())
    with pytest.raises(dp.PrivacyError, match=r"(?s)zCDP.*'rdp'"):
        zcdp.plan(graph)


def test_declared_discrete_gaussian_steps_are_dominated_by_the_rule():
    declared = events.DiscreteGaussianDpEvent(1024.0, 1025, 1)
    assert schedule.dominated(events.DiscreteGaussianDpEvent(1024.0, 1000, 1), declared) is None
    assert schedule.dominated(events.DiscreteGaussianDpEvent(1024.0, 1026, 1), declared)
    assert schedule.dominated(events.DiscreteGaussianDpEvent(2048.0, 1025, 1), declared)  # not proven
    vector, declared_vector = events.DiscreteGaussianDpEvent(2.0, 1.0), events.DiscreteGaussianDpEvent(1.0, 0.5)
    assert schedule.dominated(vector, declared_vector) is None
    assert schedule.dominated(events.DiscreteGaussianDpEvent(1.0, 1.0), events.DiscreteGaussianDpEvent(2.0, 1.0))


def test_discrete_gaussian_event_survives_the_ledger():
    event = dp_accounting.PoissonSampledDpEvent(0.01, events.DiscreteGaussianDpEvent(1024.0, 1025, 1))
    assert events.from_dict(events.to_dict(event)) == event


@pytest.mark.parametrize("sigma, shift", [(2.0, 2), (1.0, 1), (6.0, 3)])
def test_without_replacement_curve_bounds_a_two_record_example(sigma, shift):
    """m = 1 of n = 2 records in [0, shift] (any two are neighbours of size 1, so all must be within the
    sensitivity): M(D) = ½N_Z(a) + ½N_Z(0) against ½N_Z(a) + ½N_Z(shift)."""
    orders = (1.5, 2.0, 3.0, 7.8, 8.0)
    event = dp_accounting.SampledWithoutReplacementDpEvent(2, 1, events.DiscreteGaussianDpEvent(sigma, shift))
    curve = rdp.curve(event, orders)
    support = np.arange(-3000, 3001)
    for a in sorted({0, 1, shift // 2, shift}):
        common = _log_pmf("gaussian", sigma, a, support)
        first = np.logaddexp(common, _log_pmf("gaussian", sigma, 0, support)) - math.log(2)
        second = np.logaddexp(common, _log_pmf("gaussian", sigma, shift, support)) - math.log(2)
        for alpha, bound in zip(orders, curve):
            assert max(_exact_renyi(first, second, alpha), _exact_renyi(second, first, alpha)) <= bound


def test_without_replacement_is_priced_in_plans_and_by_the_renyi_filter():
    """No worse than dp-accounting's (tighter, Gaussian-specific) bound says, and far below the
    generic amplified (ε, δ) a sampled step without a priced loss keeps."""
    from dpledger.mechanisms import SampleWithoutReplacement

    orders = (2.0, 8.0, 32.0)
    wor = dp_accounting.SampledWithoutReplacementDpEvent(1000, 10, dp_accounting.GaussianDpEvent(1.0))
    accountant = dp_accounting.rdp.RdpAccountant(orders=list(orders),
                                                 neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    accountant.compose(wor)
    assert np.all(rdp.curve(wor, orders) >= np.asarray(accountant._rdp))  # noqa: SLF001
    step = dp.subsample(SampleWithoutReplacement(10, 1000),
                        dp.release("g", Gaussian.from_sigma(1.0, delta=1e-8), lambda x: 0.0))
    plan = dp.Graph(dp.repeat(step, 100), relation=dp.ReplaceOne(), domain=dp.Records(n=1000)).plan()
    assert "tight self-composition (Rényi curve)" in plan.rule and plan.epsilon(1e-5) < 1.5
    session = dp.Accountant(dp.ApproxDP(10.0, 1e-5), "rdp", relation=dp.ReplaceOne())
    session.plan(dp.Graph(step, relation=dp.ReplaceOne(), domain=dp.Records(n=1000)))  # priced, not refused


@pytest.mark.parametrize("parameter, bound, q", [(0.7, 2, 0.2), (1.5, 1, 0.01), (0.3, 3, 0.5)])
def test_subsampled_pure_step_curve_bounds_the_discrete_laplace(parameter, bound, q):
    """The chord bound for any Poisson-subsampled ε-DP step, against the discrete Laplace's exact
    divergences at every shift, both directions; equal for a shift of one (randomised-response-like)."""
    orders = (1.5, 2.0, 3.0, 7.8, 32.0)
    curve = rdp.curve(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.dp_event.DiscreteLaplaceDpEvent(
        parameter, bound)), orders)
    support = np.arange(-3000, 3001)
    for shift in range(1, bound + 1):
        (mixture, base), _ = _pairs("laplace", parameter, shift, q, support)
        for alpha, value in zip(orders, curve):
            exact = max(_exact_renyi(mixture, base, alpha), _exact_renyi(base, mixture, alpha))
            assert exact <= value
            assert shift < bound or value <= 1.25 * exact + 1e-12  # and close at the largest shift


def test_subsampled_laplace_steps_are_priced_by_the_renyi_filter():
    for mechanism in (Laplace(1.0), Laplace(1.0, coordinates=1), dp.mechanisms.DiscreteLaplace(1.0)):
        graph = dp.Graph(dp.subsample(PoissonSample(0.01), dp.release("s", mechanism, lambda x: 0.0)),
                         relation=dp.AddRemoveOne())
        session = dp.Accountant(dp.ApproxDP(2.0, 1e-6), "rdp", relation=dp.AddRemoveOne())
        rng = np.random.default_rng(0)
        for i in range(100):
            session.run(graph, np.zeros(3), rng=rng, name=f"s{i}")
        assert session.spent.epsilon < 0.9  # the basic filter would charge 100 × 0.0172


def test_scalar_extremes_plan_quickly_and_never_crash():
    """Little noise (losses beyond 4·MAX_SUPPORT grid points; 2T < K under dp-accounting's own cut) and
    much noise (beyond MAX_SUPPORT lattice points) fall back to the Rényi curve, fast; a scalar's
    shift bound must be an integer."""
    for mechanism, route in ((Gaussian(1000.0, 1e-6, coordinates=1), "Rényi curve"),
                             (Gaussian(20.0, 1e-6, coordinates=1), "PLD"),
                             (Gaussian(0.005, 1e-6, coordinates=1), "Rényi curve")):
        event = dp_accounting.SelfComposedDpEvent(mechanism.dp_event(), 2)
        assert tight.route(event) == route and math.isfinite(tight.epsilon(event, 1e-5))
    with pytest.raises(ValueError, match="integer"):
        events.DiscreteGaussianDpEvent(100.0, 2.5, 1)


def test_pure_curves_stay_above_randomised_response_in_floats():
    """min(ε, αε²/2) is tight against randomised response at small ε, so its two roundings need a
    margin: the exact divergence (80 digits) never exceeds it (a reviewer's case first)."""
    import mpmath

    mpmath.mp.dps = 80
    rng = np.random.default_rng(3)
    cases = [(1.7049e-8, 1.04506)] + [(10 ** rng.uniform(-9, -4), 1 + 10 ** rng.uniform(-2, 1)) for _ in range(200)]
    for epsilon, alpha in cases:
        e, a = mpmath.mpf(epsilon), mpmath.mpf(alpha)
        p, q = mpmath.exp(e) / (1 + mpmath.exp(e)), 1 / (1 + mpmath.exp(e))
        exact = mpmath.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)
        assert rdp.curve(events.EpsilonDeltaDpEvent(epsilon, 0.0), (alpha,))[0] >= exact


def test_the_poisson_sampler_never_keeps_a_row_more_often_than_its_rate():
    for rate in (1.0, 0.5, 0.3, 1e-9, 2.0**-60, 0.1 + 2.0**-54):
        sampler = PoissonSample(rate)
        assert sampler.threshold <= rate and math.floor(sampler.threshold * 2.0**53) == math.floor(rate * 2.0**53)
    assert len(PoissonSample(1.0).subsample(np.zeros(1000), np.random.default_rng(0))) == 1000
    with pytest.raises(ValueError):
        events.DiscreteGaussianDpEvent(0.0, 1.0)
    whole = dp_accounting.PoissonSampledDpEvent(1.0, events.EpsilonDeltaDpEvent(40.0, 0.0))
    assert rdp.curve(whole, (2.0,))[0] == pytest.approx(40.0)  # no crash at q = 1


def test_pure_steps_sampled_without_replacement_are_priced_by_their_amplified_epsilon():
    from dpledger.mechanisms import SampleWithoutReplacement

    step = dp.subsample(SampleWithoutReplacement(10, 1000), dp.release("s", Laplace(1.0), lambda x: 0.0))
    graph = dp.Graph(step, relation=dp.ReplaceOne(), domain=dp.Records(n=1000))
    amplified = math.log1p(0.01 * math.expm1(1.0))
    assert graph.plan().guarantee.epsilon == pytest.approx(amplified)
    session = dp.Accountant(dp.ApproxDP(4.0, 1e-6), "rdp", orders=[8.0], relation=dp.ReplaceOne())
    session.run(graph, np.zeros(1000), rng=np.random.default_rng(0))  # priced, not refused
    assert session.spent.amounts[0] <= 8.0 * amplified**2 / 2 * (1 + 1e-9)


def test_only_a_scalar_discrete_laplace_claims_its_own_loss():
    """A vector answer states its pure ε (no proof that ℓ1 shifts are dominated by one shift), and a
    declared scalar refuses an answer of another size."""
    assert isinstance(dp.mechanisms.DiscreteLaplace(1.0, 2).dp_event(), events.EpsilonDeltaDpEvent)
    scalar = dp.mechanisms.DiscreteLaplace(1.0, 2, coordinates=1)
    assert isinstance(scalar.dp_event(), dp_accounting.dp_event.DiscreteLaplaceDpEvent)
    with pytest.raises(ValueError, match="coordinates=1"):
        scalar.release(np.array([1.0, 2.0]), np.random.default_rng(0))
