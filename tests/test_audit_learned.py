"""Learned events: a logistic regression over the whole output, fitted on the training half only.

The false-alarm test runs 200 seeded audits of a mechanism that is exactly as private as it
claims (five randomised-response bits at unequal shares of ε: on the pair 0⁵ vs 1⁵ the loss of the
outcome 0⁵ is exactly ε, and no count of bits is sufficient, so the weights matter), at
confidence 0.9. Each audit is a violation with probability at most 0.1 by the ratio-test/Bonferroni
argument, learned event included, so at most 10% + 3 standard errors (32 of 200) may be flagged.
The audits come close to the claim (median certified ε ≈ 0.75, 7 of 200 flagged), so a procedure
that overstated its confidence, or a learner that saw test draws, would be flagged far more often;
the learned event is among the tests in about half of them (94 of 200).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from dpledger.audit import audit_pairs
from dpledger.audit.learned import fit_learned
from dpledger.audit.outputs import Outputs

pytestmark = pytest.mark.privacy(seconds=30)


SHARES = np.array([0.4, 0.3, 0.15, 0.1, 0.05])


def randomised_bits(data, rng, size, epsilon=1.0):
    """Bit i of the input kept with probability e^(ε_i)/(1 + e^(ε_i)), ε_i = ε·SHARES[i], else
    flipped: ε-DP, exactly, for inputs that differ in every bit."""
    bits = np.asarray(data, dtype=float)
    keep = rng.random((size, bits.size)) < 1 / (1 + np.exp(-epsilon * SHARES))
    return np.where(keep, bits, 1 - bits)


def test_a_correct_mechanism_is_flagged_at_most_at_the_stated_rate():
    pair = [(np.zeros(5), np.ones(5))]
    flagged = learned = 0
    bounds = []
    for seed in range(200):
        report = audit_pairs(randomised_bits, pair, epsilon=1.0, samples=6_000, confidence=0.9, seed=seed)
        flagged += report.violation
        bounds.append(report.epsilon_lower_bound)
        learned += any(test.statistic.startswith("learned score") for test in report.pairs[0].tests)
    assert flagged <= 20 + 3 * math.sqrt(200 * 0.1 * 0.9), flagged
    assert np.median(bounds) > 0.6  # near the claim: an overconfident audit would be flagged often
    assert learned >= 60, learned  # the learned event is among what this test exercises


def mixed_answers(data, rng, size, scale=4.0):
    """Per query, ⊤ when its noisy answer clears 0.5, then a second noisy answer, else ⊥ (-inf): each
    query costs 2/scale, six of them 3 at scale 4 — far above a claim of 1.5."""
    answers = np.asarray(data, dtype=float)
    above = answers + rng.laplace(0.0, scale, (size, answers.size)) >= 0.5
    return np.where(above, answers + rng.laplace(0.0, scale, (size, answers.size)), -np.inf)


def test_the_learned_event_sees_what_no_single_statistic_shows():
    # Every column alone is 0.5-DP, and with ⊥ present the projection on the mean difference is
    # undefined; the ℓ2 norm reaches about 1.36. The learned score sums the six columns' evidence
    # (⊥ indicators and signs of the values): ≈ 1.9 certified at 10^5 samples.
    report = audit_pairs(mixed_answers, [(np.zeros(6), np.ones(6))], epsilon=1.5, samples=100_000,
                         confidence=0.999, seed=3, ideal_reals=True)
    assert report.violation, str(report)
    assert report.pairs[0].best.statistic.startswith("learned score"), str(report)
    others = [t.epsilon_lower_bound for t in report.pairs[0].tests if not t.statistic.startswith("learned")]
    assert max(others, default=0.0) < 1.5


def prefix_sums(data, rng, size):
    """Running sums of the answers plus Laplace(1) noise: on answers 0.25 apart the loss is 8 · 0.25 = 2."""
    answers = np.asarray(data, dtype=float)
    return np.cumsum(answers + rng.laplace(0.0, 1.0, (size, answers.size)), axis=1)


def test_a_vector_of_bits_gets_one_feature_per_bit_and_its_true_likelihood_ratio():
    # a bit's z, z² and one of its two level indicators are spanned by the other and the intercept:
    # one weight per bit is left, and it is the bit's log-likelihood ratio, 2·ε_i (an unpruned fit
    # spreads it over four collinear features and scores every test run on all twenty)
    rng = np.random.default_rng(0)
    sides = [Outputs.from_batch(randomised_bits(data, rng, 30_000), 30_000) for data in (np.zeros(5), np.ones(5))]
    score = fit_learned(*sides)
    assert score.coefficients.size == 5
    assert np.allclose(-score.coefficients, 2 * SHARES, atol=0.05)


def test_the_learned_score_sees_the_increments_of_a_cumulative_output():
    # the likelihood ratio is a sum over the increments; on the running sums alone the learned
    # score certifies about 0.9, with the increments as columns about 1.28 (10^5 samples)
    report = audit_pairs(prefix_sums, [(np.zeros(8), np.full(8, 0.25))], epsilon=1.1, samples=100_000,
                         confidence=0.999, seed=1, ideal_reals=True)
    assert report.violation, str(report)
    assert report.pairs[0].best.statistic.startswith("learned score"), str(report)


def test_only_continuous_finite_columns_get_increments():
    rng = np.random.default_rng(0)
    sides = [Outputs.from_batch(np.column_stack([prefix_sums(data, rng, 4_000), rng.integers(0, 2, (4_000, 2)),
                                                 np.where(rng.random(4_000) < 0.5, -np.inf, 1.0)]), 4_000)
             for data in (np.zeros(3), np.full(3, 0.25))]
    assert fit_learned(*sides).features.steps.tolist() == [0, 1]  # not into the labels or the ⊥ column


def test_the_score_is_the_same_bits_batch_by_batch():
    # the test half is scored batch by batch (in workers): a run's score must not depend on its batch
    rng = np.random.default_rng(0)
    sides = [Outputs.from_batch(mixed_answers(data, rng, 5_000), 5_000) for data in (np.zeros(6), np.ones(6))]
    score = fit_learned(*sides)
    whole = score(sides[0])
    parts = np.concatenate([score(Outputs(sides[0].values[i:i + 777], sides[0].reasons[i:i + 777],
                                          sides[0].shape)) for i in range(0, 5_000, 777)])
    assert np.array_equal(whole, parts)


def test_halt_reasons_are_features():
    # a run that halts more often under D is told apart by its reason alone
    def halting(data, rng, size):
        return [None if rng.random() < 0.3 + 0.4 * float(data) else float(rng.normal()) for _ in range(size)]

    sides = [Outputs.from_batch(halting(data, np.random.default_rng(data), 2_000), 2_000) for data in (1, 0)]
    score = fit_learned(*sides)
    assert score is not None
    values = [score(side) for side in sides]
    assert np.mean(values[0][sides[0].halted]) > np.mean(values[1][~sides[1].halted])



@pytest.mark.filterwarnings("error")
def test_fitting_is_silent_without_touching_the_warning_filters(monkeypatch):
    # Each pair's training half is fitted in its own thread, and the process's warning filters are
    # shared: a `catch_warnings` block in one thread restores the filters under another's feet, so
    # an all-absent column's "Mean of empty slice" once reached a user's tutorial run. The fitting
    # must be silent by its arithmetic, not by changing the filters.
    from dpledger.audit.statistics import fit_statistics

    def refused(*args, **kwargs):
        raise AssertionError("warnings.catch_warnings is not thread-safe")

    rng = np.random.default_rng(0)
    sides = []
    for data in (np.zeros(6), np.ones(6)):
        values = mixed_answers(data, rng, 4_000)
        values[:, 1] = np.nan  # never released: an all-absent field, as graph observations have
        values[:, 2] = np.inf  # always ⊤
        sides.append(Outputs(values, np.full(4_000, ""), (6,), (("a", 1), ("absent", 1), ("b", 4))))
    with monkeypatch.context() as patched:
        patched.setattr("warnings.catch_warnings", refused)
        assert fit_learned(*sides) is not None
        assert fit_statistics(*sides, False)


def test_an_audit_leaves_the_blas_thread_count_as_it_found_it():
    # the training stage limits BLAS to one thread while its threads fit (pairs.audit_pairs)
    def threads() -> set:
        return {entry["num_threads"] for entry in threadpool_info() if entry["user_api"] == "blas"}

    before = threads()
    audit_pairs(mixed_answers, [(np.zeros(6), np.ones(6))], epsilon=1.5, samples=8_000, seed=0)  # a learned fit
    assert threads() == before  # not left at one thread (a limit restored by the wrong thread would be)


def test_the_scored_columns_are_the_fitted_ones():
    # the fit reads the columns and increments from one map, the score from a column-major one
    from dpledger.audit.learned import _column_rows, _columns
    values = np.random.default_rng(0).normal(size=(50, 5))
    steps, columns = np.array([0, 2, 3]), np.array([1, 4, 5, 7])
    assert np.array_equal(_column_rows(values, steps, columns), _columns(values, steps)[:, columns].T)
