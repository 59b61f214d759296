"""Audit every primitive mechanism and every registered estimator against its own claim.

Parametrised over ``dpledger.estimators()``: an estimator is audited the day it is registered
(it needs an ``example(rng)``; its planned guarantee is the claim, its relation gives the pairs).

False alarms: each audit runs at confidence 1 − 1e-8, so a mechanism that keeps its claim is
reported as violating with probability at most 1e-8 (Clopper–Pearson exactness, Bonferroni over
the audit's tests, and a pair search on draws independent of the test). By the union bound over
the audits of this file (``AUDITS``, checked below to stay under 100) the chance of any false
alarm here is below 1e-6, whatever the seeds.

Cost: registered estimators take milliseconds per run, so each gets ``assert_private`` with 3
pairs drawn by hypothesis (shaped like its example) scored on 300 runs, and up to two candidates
decided on 1,500 fresh runs per side, on a process pool; such an audit catches gross violations
(it can certify up to ε ≈ 3.7) rather than small ones. An estimator that
registers ``stress`` pairs (inputs at the limits of its data-dependent code) is audited on those
too, with 400 runs per side: enough to flag a halt or an error that one side shows and the other
never does (ε >= 2.2 certified for a 0%/100% split).

Every audit of an estimator sees its whole release: each released value (halting tests and
intermediate steps included), the halting step, any error, and low-order-bit statistics for
textbook floating-point releases.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpledger
from dpledger.testing import assert_private
from dpledger.audit import audit
from dpledger.audit.strategies import pairs_like
from dpledger.mechanisms import (DiscreteLaplace, Exponential, Gaussian, HistogramLearner, Laplace, ReportNoisyMax,
                                 TextbookGaussian, TextbookLaplace, TextbookTruncatedLaplace, TopKPeeling,
                                 TruncatedLaplace)

CONFIDENCE = 1 - 1e-8
pytestmark = pytest.mark.privacy(seconds=30)  # each audit's time budget (the plugin lists overruns)

MECHANISMS = {
    "laplace": (Laplace(1.0), {}),
    "laplace-sensitivity-2": (Laplace(0.5, sensitivity=2.0), {}),
    "gaussian": (Gaussian(1.0, 1e-5), {}),
    "truncated-laplace": (TruncatedLaplace(1.0, 1e-3), {}),
    "discrete-laplace": (DiscreteLaplace(1.0, sensitivity=2), {}),
    # textbook float noise keeps its claim on the reals only (the default audit flags its rounding)
    "textbook-laplace": (TextbookLaplace(1.0), {"ideal_reals": True}),
    "textbook-gaussian-analytic": (TextbookGaussian(1.0, 1e-5), {"ideal_reals": True}),
    "textbook-truncated-laplace": (TextbookTruncatedLaplace(1.0, 1e-3), {"ideal_reals": True}),
    "exponential": (Exponential(1.0), {}),
    "report-noisy-max": (ReportNoisyMax(1.0), {}),
    "report-noisy-max-monotone": (ReportNoisyMax(1.0, monotonic=True), {}),
    "top-k-peeling": (TopKPeeling(1.0, k=2), {}),
    # one Python loop per histogram: fewer, smaller samples
    "histogram-learner": (HistogramLearner(2.0, 1e-3, n=20), {"samples": 10_000, "search_examples": 3,
                                                             "search_samples": 1_000}),
}
ESTIMATORS = dpledger.estimators()
#: Estimators audited on their stress pairs. The mixture estimators run one graph at a time (about
#: 10 ms a run), so auditing their extremes here would take half a minute; their extremes are run
#: under np.seterr(all="raise") and -W error in tests/test_silent.py, and their ordinary pairs are
#: audited above.
STRESSED = [name for name in ESTIMATORS if dpledger.graph.registry.info(name).stress is not None
            and not name.startswith("gmm.")]
AUDITS = len(MECHANISMS) + len(ESTIMATORS) + len(STRESSED)


def test_union_bound_keeps_false_alarms_below_one_in_a_million():
    assert AUDITS * (1 - CONFIDENCE) < 1e-6


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_primitive_mechanism_keeps_its_claim(name):
    mechanism, options = MECHANISMS[name]
    settings = {"samples": 100_000, "search_examples": 8} | options
    report = audit(mechanism, confidence=CONFIDENCE, seed=sorted(MECHANISMS).index(name), **settings)
    assert report.ok and not report.violation, str(report)
    assert report.claimed == (mechanism.guarantee().epsilon, mechanism.guarantee().delta)


@pytest.mark.privacy(seconds=45)
@pytest.mark.parametrize("name", ESTIMATORS)
def test_registered_estimator_keeps_its_planned_claim(name):
    """Through ``assert_private``, as ``pytest --dpledger-audit`` audits third-party estimators:
    hypothesis draws pairs shaped like the example, fresh samples decide."""
    params, data = dpledger.graph.registry.info(name).example(np.random.default_rng(0))
    relation = dpledger.estimator(name, **params).relation
    report = assert_private(name, pairs_like(relation, data), confidence=CONFIDENCE, seed=100 + ESTIMATORS.index(name),
                            samples=1_500, search_samples=300, max_examples=3, executor="processes")
    assert report.ok and not report.violation and report.samples == 1_500


@pytest.mark.parametrize("name", STRESSED)
def test_registered_estimator_keeps_its_claim_on_its_stress_pairs(name):
    from dpledger.audit.bounds import bonferroni_level, minimum_test_samples
    from dpledger.audit.pairs import EVENTS_PER_PAIR

    params, pairs = dpledger.graph.registry.info(name).stress(np.random.default_rng(0))
    graph = dpledger.estimator(name, **params)
    pairs = pairs[:2]  # the extremes' silence and totality are tests/test_silent.py's; two are audited here
    claim = graph.plan().guarantee
    needed = 2 * minimum_test_samples(claim.epsilon, claim.delta, bonferroni_level(CONFIDENCE, EVENTS_PER_PAIR * len(pairs)))
    report = audit(graph, pairs=pairs, confidence=CONFIDENCE, seed=200 + STRESSED.index(name), samples=max(400, needed))
    assert report.ok and not report.violation, str(report)
