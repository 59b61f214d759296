"""Regression tests for the privacy review's findings: every observable of a run is covered by
its plan (halting, errors, released values), conditions stay inside their scope, and released
values are float-safe. Each test failed on the code the review looked at."""

from __future__ import annotations

import numpy as np
import pytest

import dpledger as dp
from dpledger.mechanisms import Laplace, PoissonSample, SampleWithoutReplacement, TruncatedLaplace


def _count(x):
    return float(np.clip(x, 0, 1).sum())


def _test(name="enough"):
    return dp.halt_if(name, TruncatedLaplace(1.0, 1e-6), _count, lambda v: v < 3)


def _after(name="enough"):
    return dp.conditional(name, dp.release("after", Laplace(1.0), _count))


# --- finding 3: conditions do not cross absorb, transform or subsample -----------------------------

CROSSING = {
    "group of a conditional": lambda: dp.sequence(_test(), dp.group(_after(), 3), name="g"),
    "absorb of a conditional": lambda: dp.sequence(_test(), dp.absorb(_after(), 0.01), name="g"),
    "subsample of a conditional": lambda: dp.sequence(
        _test(), dp.subsample(SampleWithoutReplacement(5, 10), _after()), name="g"),
    "test inside a transform conditioning a later step": lambda: dp.sequence(
        dp.transform("t", lambda x: x, _test()), _after(), name="g"),
    "test inside a subsample conditioning a later step": lambda: dp.sequence(
        dp.subsample(SampleWithoutReplacement(5, 10), _test()), _after(), name="g"),
}


@pytest.mark.parametrize("case", sorted(CROSSING))
def test_planner_refuses_conditions_that_cross_a_boundary(case):
    graph = dp.Graph(CROSSING[case](), relation=dp.ReplaceOne())
    with pytest.raises(dp.ConditionError):
        graph.plan()


def test_a_condition_inside_one_scope_is_still_accepted():
    inner = dp.sequence(_test(), _after(), name="inner")
    for root in (dp.group(inner, 2), dp.absorb(inner, 0.01), dp.transform("t", lambda x: x, inner),
                 dp.subsample(PoissonSample(0.5), inner)):
        relation = dp.AddRemoveOne() if isinstance(root, dp.graph.nodes.Subsample) else dp.ReplaceOne()
        assert dp.Graph(root, relation=relation).plan().guarantee.epsilon > 0


# --- finding 5: the analytic Gaussian's σ never leaves the true δ above the request -----------------

@pytest.mark.parametrize("epsilon, delta", [(1e-5, 1e-30), (0.01, 1e-50), (1e-3, 1e-12), (1.0, 1e-6), (4.0, 1e-9),
                                            (50.0, 1e-3), (10.0, 1e-300), (1e-4, 1e-300), (1e4, 1e-6)])
def test_analytic_sigma_keeps_the_exact_delta_below_the_request(epsilon, delta):
    import mpmath  # a dependency of dp-accounting

    from dpledger.mechanisms.gaussian import analytic_sigma

    mpmath.mp.dps = 60
    sigma = mpmath.mpf(analytic_sigma(epsilon, delta))
    e = mpmath.mpf(epsilon)
    exact = mpmath.ncdf(1 / (2 * sigma) - e * sigma) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * sigma) - e * sigma)
    assert exact <= delta
    assert exact >= delta * (1 - 1e-3)  # and σ is still (nearly) the smallest
