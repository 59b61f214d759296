"""Floating-point-safe releases: exact discrete Laplace and Mironov's snapping mechanism."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

import dpledger as dp
from dpledger.mechanisms import DiscreteLaplace, SnappingLaplace


def test_discrete_laplace_is_exactly_the_discrete_laplace_pmf():
    mech = DiscreteLaplace(epsilon=0.5, sensitivity=2)
    assert mech.scale == 4 and mech.guarantee() == dp.PureDP(0.5)
    draws = mech.sample(7, np.random.default_rng(0), 40_000)
    assert draws.dtype == np.int64
    support = np.arange(-25, 26)
    pmf = np.exp(-np.abs(support) / 4) * np.tanh(1 / 8)
    observed = np.array([np.sum(draws - 7 == z) for z in support])
    tail = len(draws) - observed.sum()
    expected = np.append(pmf * len(draws), (1 - pmf.sum()) * len(draws))
    assert stats.chisquare(np.append(observed, tail), expected).pvalue > 1e-6
    doubled = np.exp(-np.abs(support) / 2) * np.tanh(1 / 4)  # a halved scale is rejected
    assert stats.chisquare(np.append(observed, tail), np.append(doubled, 1 - doubled.sum()) * len(draws)).pvalue < 1e-6


def test_discrete_laplace_scale_is_rounded_up_and_composes_in_pld():
    mech = DiscreteLaplace(epsilon=0.3, sensitivity=1)
    assert mech.scale >= 1 / 0.3 and float(mech.scale) - 1 / 0.3 < 2**-31
    acct = dp.Accountant(dp.ApproxDP(5, 1e-6), composition="pld", relation=dp.ReplaceOne())
    for i in range(10):
        acct.spend(f"count{i}", mech)
    reference = dp_accounting.pld.PLDAccountant()
    for _ in range(10):
        reference.compose(mech.dp_event())
    assert acct.spent.epsilon == pytest.approx(reference.get_epsilon(1e-6), rel=1e-9)
    assert acct.spent.epsilon < 3.0


def test_discrete_laplace_refuses_non_integers():
    with pytest.raises(ValueError, match="integer"):
        DiscreteLaplace(1.0).release(0.5, np.random.default_rng(0))
    with pytest.raises(TypeError, match="sensitivity"):
        DiscreteLaplace(1.0, sensitivity=1.5)


def test_snapping_outputs_lie_on_the_power_of_two_grid_within_the_bound():
    mech = SnappingLaplace(epsilon=0.5, bound=50.0, sensitivity=2.0)
    assert mech.lam == pytest.approx((1 + 2**-49 * 25) / 0.5)
    out = mech.sample(3.3, np.random.default_rng(1), 20_000)
    grid = mech.params()["grid"]
    assert grid == 8.0  # Λ = 4 on the normalised scale, times Δ = 2
    assert np.all(np.mod(out, grid) == 0) and np.all(np.abs(out) <= 50.0)
    # Laplace variance 2·4² plus the rounding's 8²/12
    assert abs(np.mean(out) - 3.3) < 0.3 and np.std(out) == pytest.approx(math.sqrt(32 + 64 / 12), rel=0.05)


def test_snapping_refuses_a_bound_below_the_noise_scale():
    with pytest.raises(ValueError, match="bound"):
        SnappingLaplace(epsilon=0.1, bound=5.0)
    with pytest.raises(ValueError, match="bound"):
        SnappingLaplace(epsilon=1.0, bound=0.0)


@pytest.mark.parametrize("mechanism", [DiscreteLaplace(epsilon=1.0), SnappingLaplace(epsilon=1.0, bound=64.0)])
def test_the_shipped_safe_variants_pass_the_floating_point_audit(mechanism):
    # The same audit that flags textbook float Laplace (tests/test_audit_zoo.py, certified ≈ 6.4
    # against 1) with the low-bit reachability statistic, plus its ordinary events.
    from dpledger.audit import audit_pairs, textbook_laplace_reachable

    def release(value, rng, size):
        return mechanism.sample(value, rng, size).astype(float)

    report = audit_pairs(release, [(0.0, 1.0)], epsilon=1.0, samples=20_000, confidence=1 - 1e-8, seed=21,
                         statistics=[textbook_laplace_reachable(0.0, 1.0)])
    assert report.ok and not report.violation, str(report)
