"""Floating-point-safe releases: exact discrete Laplace for integers, and for reals the lattice
Laplace, truncated Laplace and Gaussian mechanisms (rounding to a power-of-two lattice, exact
integer noise). Distribution checks are chi-square tests at p > 1e-6 on seeded samples."""

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import logsumexp

import dpledger as dp
from dpledger.mechanisms import DiscreteLaplace, Gaussian, Laplace, Lattice, TruncatedLaplace
from dpledger.mechanisms.gaussian import ORDERS, noise_multiplier
from dpledger.mechanisms.laplace import _log_excess
from dpledger.privacy.analytic import analytic_sigma


def chi_square(draws, support, pmf):
    observed = np.array([np.sum(draws == z) for z in support])
    expected = pmf * len(draws)
    return stats.chisquare(np.append(observed, len(draws) - observed.sum()),
                           np.append(expected, len(draws) - expected.sum())).pvalue


def test_discrete_laplace_is_exactly_the_discrete_laplace_pmf():
    mech = DiscreteLaplace(epsilon=0.5, sensitivity=2)
    assert mech.scale == 4 and mech.guarantee() == dp.PureDP(0.5)
    draws = mech.sample(7, np.random.default_rng(0), 40_000)
    assert draws.dtype == np.int64
    support = np.arange(-25, 26)
    assert chi_square(draws - 7, support, np.exp(-np.abs(support) / 4) * np.tanh(1 / 8)) > 1e-6
    doubled = np.exp(-np.abs(support) / 2) * np.tanh(1 / 4)  # a halved scale is rejected
    assert chi_square(draws - 7, support, doubled) < 1e-6


def test_discrete_laplace_scale_is_rounded_up_and_composes_tightly_when_fixed():
    mech = DiscreteLaplace(epsilon=0.3, sensitivity=1, coordinates=1)  # a scalar: priced by its own PLD
    assert mech.scale >= 1 / 0.3 and float(mech.scale) - 1 / 0.3 < 2**-31
    counts = dp.sequence(*(dp.release(f"count{i}", mech, lambda x: float(np.sum(x))) for i in range(10)))
    declared = dp.sequence(counts, dp.release("spare", dp.mechanisms.TextbookGaussian(0.5, 1e-6), lambda x: 0.0))
    plan = dp.Graph(declared, relation=dp.ReplaceOne()).plan()
    reference = dp_accounting.pld.PLDAccountant()
    reference.compose(mech.dp_event(), 10)
    reference.compose(dp.mechanisms.TextbookGaussian(0.5, 1e-6).dp_event())
    # connect-the-dots (ours) against privacy buckets (PLDAccountant's), with the PLD allowance
    assert plan.guarantee.epsilon == pytest.approx(reference.get_epsilon(1e-6), rel=1e-3)
    assert plan.guarantee.epsilon < 3.0 + 0.5  # below the basic sum


def test_discrete_laplace_refuses_non_integers():
    with pytest.raises(ValueError, match="integer"):
        DiscreteLaplace(1.0).release(0.5, np.random.default_rng(0))
    with pytest.raises(TypeError, match="sensitivity"):
        DiscreteLaplace(1.0, sensitivity=1.5)


# --- the lattice --------------------------------------------------------------------------------

@settings(derandomize=True, max_examples=300)
@given(st.integers(1, 6), st.sampled_from([1, 2]), st.floats(1e-3, 1e3), st.integers(0, 2**32))
def test_rounding_adds_at_most_the_stated_distance(dimension, norm, sensitivity, seed):
    rng = np.random.default_rng(seed)
    lattice = Lattice.for_query(sensitivity, dimension, norm)
    a = rng.normal(size=dimension) * 10 ** rng.uniform(-3, 4)
    step = rng.normal(size=dimension)
    b = a + sensitivity * step / np.linalg.norm(step, norm)
    moved = np.linalg.norm(lattice.round(a) - lattice.round(b), norm)
    assert moved <= lattice.distance(sensitivity, dimension, norm) * (1 + 1e-12)
    assert math.log2(lattice.spacing) == round(math.log2(lattice.spacing))  # a power of two
    assert lattice.distance(sensitivity, dimension, norm) <= (sensitivity / lattice.spacing) * (1 + 2 / 1024)


@pytest.mark.parametrize("sensitivity, size, norm", [(1e-300, 1, 1), (1e-300, 10**6, 1), (3e-300, 10**6, 2),
                                                    (1.0, 3, 2), (2.0**-20, 7, 1), (1e300, 1, 2)])
def test_the_lattice_spacing_is_decided_exactly(sensitivity, size, norm):
    # An independent review: a spacing clamped at 2^-1000 broke the rounding budget below Δ ≈ 1e-298
    # (true ε 1.03 for a claimed 1 at Δ = 1e-300; 9.3e3 at Δ = 1e-305).
    from fractions import Fraction

    g = Fraction(Lattice.for_query(sensitivity, size, norm).spacing)
    budget = Fraction(sensitivity) / 1024
    rounding = size if norm == 1 else math.sqrt(size)
    assert (g * size <= budget if norm == 1 else g * g * size <= budget * budget)
    assert (2 * g * size > budget if norm == 1 else 4 * g * g * size > budget * budget)  # the largest such
    assert float(g) * rounding <= sensitivity / 1024 * (1 + 1e-15)
    with pytest.raises(ValueError, match="finer than the smallest double"):
        Lattice.for_query(5e-324, 1, 1)


@pytest.mark.parametrize("args", [(-1.0, 1, 1), (0.0, 1, 1), (math.nan, 1, 1), (math.inf, 1, 1), (1.0, 0, 1),
                                  (1.0, 1, 3)])
def test_a_lattice_refuses_bad_arguments(args):
    with pytest.raises((ValueError, TypeError)):
        Lattice.for_query(*args)


@pytest.mark.parametrize("mechanism", [Laplace(0.5, sensitivity=2.0), Gaussian(1.0, 1e-5),
                                       TruncatedLaplace(1.0, 1e-6, sensitivity=3.0)])
@pytest.mark.parametrize("value", [0.1234567, [0.1234567, -3.3, 1e6], np.linspace(-1, 1, 1000)])
def test_released_reals_lie_on_the_lattice(mechanism, value):
    if isinstance(mechanism, TruncatedLaplace) and np.ndim(value):
        return
    value = np.asarray(value)
    out = mechanism.sample(value, np.random.default_rng(1), 50)
    lattice = mechanism.lattice if isinstance(mechanism, TruncatedLaplace) else mechanism._lattice(value)
    assert np.all(out / lattice.spacing == np.round(out / lattice.spacing))  # exact multiples: no low bits left
    assert np.all(mechanism.sample(value, np.random.default_rng(1), 50) == out)  # seeded
    assert lattice.spacing * lattice.distance(1.0, value.size, mechanism.norm) <= 1 + 2 / 1024  # rounding budget


def test_lattice_noise_in_the_query_units_does_not_depend_on_the_answer_size():
    mech = Laplace(0.5, sensitivity=2.0)
    assert mech.scale == pytest.approx(4.0 * (1 + 2 / 1024)) and mech.scale >= 4.0 * (1 + 2 / 1024)
    for size in (1, 10, 10_000):
        lattice = mech._lattice(np.zeros(size))
        needed = math.ceil(2.0 / lattice.spacing) + size  # Δ_L in lattice units, rounding included
        assert needed * lattice.spacing / 0.5 <= mech.scale
    draws = mech.sample(3.0, np.random.default_rng(2), 40_000)
    assert abs(np.median(draws) - 3.0) < 0.1 and stats.kstest(draws, stats.laplace(3.0, 4.0).cdf).pvalue > 1e-6
    assert stats.kstest(draws, stats.laplace(3.0, 2.0).cdf).pvalue < 1e-6


def test_lattice_laplace_keeps_epsilon_exactly_at_the_clamp_edge():
    # Finding 4: snapping drew its uniform on the 2^-53 grid, so some edge outputs were reachable from
    # one answer only. Here every lattice point has positive probability from every answer, and the
    # exact log-ratio of the output pmfs of neighbouring answers is at most ε everywhere.
    mech = Laplace(1.0, sensitivity=1.0, bound=4.0)
    lattice = mech._lattice(np.zeros(1))
    t = mech.scale / lattice.spacing
    for a, b in [(4.0, 3.0), (10.0, 3.5), (-4.0, -3.0001)]:
        ka, kb = lattice.round(np.array(a)), lattice.round(np.array(b))
        outputs = np.arange(min(ka, kb) - 200_000, max(ka, kb) + 200_000)
        ratio = (np.abs(outputs - kb) - np.abs(outputs - ka)) / t
        assert ratio.max() <= 1.0 + 1e-12


def test_truncated_laplace_delta_is_computed_exactly_and_the_noise_is_never_positive():
    mech = TruncatedLaplace(epsilon=0.5, delta=1e-4, sensitivity=2.0)
    t, shift, distance = float(mech.noise.scale), mech.offset, mech.distance
    z = np.arange(-shift - 40 * int(t) - 1000, 1)  # the support, up to a tail below e^-40
    log_pmf = -np.abs(z + shift) / t
    excess = np.exp(logsumexp(log_pmf[z > -distance]) - logsumexp(log_pmf))
    assert excess == pytest.approx(math.exp(_log_excess(shift, mech.noise.scale, distance)), rel=1e-9)
    assert excess <= 1e-4 and math.exp(_log_excess(shift - 1, mech.noise.scale, distance)) > 1e-4 * (1 - 1e-9)
    noise = mech.sample(0.0, np.random.default_rng(3), 20_000)
    assert noise.max() <= 0.0
    assert -mech.shift < 2.0 * (1 + math.log(1e4) / 0.5)  # tighter than Lemma A.10's constant
    with pytest.raises(ValueError, match="scalar"):
        mech.release([1.0, 2.0])


# --- the discrete Gaussian ------------------------------------------------------------------------

@pytest.mark.parametrize("sigma", [1.0, 3.0, 10.0])
@pytest.mark.parametrize("shift", [1, 2, 5])
def test_discrete_gaussian_renyi_divergence_is_at_most_the_continuous_one(sigma, shift):
    z = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
    log_p = -z**2 / (2 * sigma**2)
    log_q = -(z - shift) ** 2 / (2 * sigma**2)
    log_p, log_q = log_p - logsumexp(log_p), log_q - logsumexp(log_q)
    for alpha in (1.5, 2.0, 10.0, 50.0):
        divergence = logsumexp(alpha * log_p + (1 - alpha) * log_q) / (alpha - 1)
        assert divergence <= alpha * shift**2 / (2 * sigma**2) * (1 + 1e-12)


@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-6), (1.0, 1e-5), (4.0, 1e-6), (16.0, 1e-9), (0.01, 1e-10),
                                            (0.005, 1e-6), (0.01, 1e-20), (1.0, 1e-300), (1e4, 1e-6)])
def test_gaussian_is_calibrated_by_renyi_dp_and_costs_little_over_the_analytic_sigma(epsilon, delta):
    # dp-accounting's default orders stop at 1024: at (0.01, 1e-10) they certified nothing below σ ≈ 10^10
    z = noise_multiplier(epsilon, delta)
    accountant = dp_accounting.rdp.RdpAccountant(orders=list(ORDERS))
    accountant.compose(dp_accounting.GaussianDpEvent(z))
    assert accountant.get_epsilon(delta) <= epsilon
    slightly_less = dp_accounting.rdp.RdpAccountant(orders=list(ORDERS))
    slightly_less.compose(dp_accounting.GaussianDpEvent(z * (1 - 1e-6)))
    assert slightly_less.get_epsilon(delta) > epsilon  # the smallest, to 1e-6
    mech = Gaussian(epsilon, delta, sensitivity=3.0)
    for size in (1, 100, 10**6):
        lattice = mech._lattice(np.zeros(size))
        assert mech.sigma >= z * lattice.distance(3.0, size, 2) * lattice.spacing
    assert 1.0 < mech.sigma / analytic_sigma(epsilon, delta, 3.0) < 1.16  # the price of exactness


def test_gaussian_noise_is_the_discrete_gaussian_of_the_lattice_sensitivity():
    # (the sampler's exact pmf is tested in test_exact_sampling.py; here, its scale and placement)
    mech = Gaussian(1.0, 1e-5, sensitivity=3.0)
    draws = mech.sample(0.0, np.random.default_rng(4), 40_000)
    assert stats.kstest(draws, stats.norm(scale=mech.sigma).cdf).pvalue > 1e-6
    assert stats.kstest(draws, stats.norm(scale=mech.sigma / 2).cdf).pvalue < 1e-6


# --- the floating-point audit ----------------------------------------------------------------------

@pytest.mark.parametrize("mechanism", [DiscreteLaplace(epsilon=1.0), Laplace(epsilon=1.0), Gaussian(1.0, 1e-5),
                                       TruncatedLaplace(1.0, 1e-5)])
def test_the_float_safe_mechanisms_pass_the_floating_point_audit(mechanism):
    # The same audit that flags textbook float Laplace (tests/test_audit_zoo.py, certified ≈ 6.4
    # against 1) with the low-bit reachability statistic, plus its ordinary events.
    from dpledger.audit import audit_pairs, textbook_laplace_reachable

    def release(value, rng, size):
        return mechanism.sample(value, rng, size).astype(float)

    guarantee = mechanism.guarantee()
    report = audit_pairs(release, [(0.0, 1.0)], epsilon=guarantee.epsilon, delta=guarantee.delta, samples=20_000,
                         confidence=1 - 1e-8, seed=21, statistics=[textbook_laplace_reachable(0.0, 1.0)])
    assert report.ok and not report.violation, str(report)


@pytest.mark.parametrize("honest, halved", [(Laplace(1.0), Laplace(2.0)), (Gaussian(1.0, 1e-5), Gaussian(4.0, 1e-5))])
def test_the_auditor_flags_a_lattice_mechanism_with_a_fraction_of_its_noise(honest, halved):
    from dpledger.audit import audit_pairs

    claim = honest.guarantee()
    for mechanism, violation in ((halved, True), (honest, False)):
        report = audit_pairs(lambda value, rng, size: mechanism.sample(value, rng, size), [(0.0, 1.0)],
                             epsilon=claim.epsilon, delta=claim.delta, samples=100_000, confidence=1 - 1e-8, seed=31)
        assert report.ok and report.violation is violation, str(report)
