"""The statistical core of the auditor: bounds, verdicts on known mechanisms, errors, bad input.

Sizing. Audits that must pass run at confidence 0.999999: by Clopper–Pearson exactness and the
Bonferroni split, a truly (ε, δ)-DP mechanism is reported as violating with probability at most
1e-6 per audit, whatever the seed; with fewer than 20 such audits here, a false alarm has
probability below 2e-5 (a proof, not a simulation, so the fixed seeds are not cherry-picked).
Audits that must flag a bug use the same confidence, and sample sizes chosen so that the expected
certified ε exceeds the claim by many standard errors (each case's margin is worked out next to
it), so a missed bug is equally improbable.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math

import dp_accounting
import numpy as np
import pytest

from dpledger.audit import audit
from dpledger.audit.bounds import (best_possible_bound, bonferroni_level, clopper_pearson_lower,
                                   clopper_pearson_upper, epsilon_lower_bound, minimum_test_samples, ratio_test,
                                   weighted_levels)
from dpledger.audit.pairs import audit_pairs
from dpledger.mechanisms import Laplace
from dpledger.relations import ReplaceOne

STRICT = 0.999999


# --- mechanisms under audit: module-level functions (parameters bound with functools.partial) so
# that process pools can pickle them -------------------------------------------------------------

def _laplace_sum(data, rng, size, *, scale):
    return np.sum(data) + rng.laplace(scale=scale, size=size)


def _gaussian_vector_sum(data, rng, size, *, sigma):
    return np.sum(data, axis=0) + sigma * rng.normal(size=(size, data.shape[1]))


def _noisy_max_with_value(scores, rng, size, *, epsilon):
    noisy = scores + rng.laplace(scale=2 / epsilon, size=(size, len(scores)))
    index = np.argmax(noisy, axis=1)
    return np.column_stack([index, noisy[np.arange(size), index]])


def _randomized_response(labels, rng, size, *, keep):
    flip = rng.random((size, len(labels))) >= keep
    return np.where(flip, -labels, labels).astype(int)


def laplace_sum(scale: float):
    return functools.partial(_laplace_sum, scale=scale)


def gaussian_vector_sum(sigma: float):
    return functools.partial(_gaussian_vector_sum, sigma=sigma)


def noisy_max_with_value(epsilon: float):
    """Report-noisy-max with Lap(2/ε) (ε-DP for the index alone) that also releases the max value."""
    return functools.partial(_noisy_max_with_value, epsilon=epsilon)


def randomized_response(keep: float):
    return functools.partial(_randomized_response, keep=keep)


def halting_sum(data, rng):
    """Halts when the *exact* sum is below 2: a halting test without noise."""
    if np.sum(data) < 2:
        return None
    return float(np.sum(data) + rng.laplace())


def fails_on_marked_input(data, rng):
    """Laplace sum, except that it raises on about 1 run in 100 of the input marked with -1."""
    if data[0] == -1 and rng.random() < 0.01:
        raise RuntimeError("solver diverged")
    return float(np.sum(data) + rng.laplace())


SUM_PAIR = (np.array([0.2, 0.5, 1.0]), np.array([0.2, 0.5, 0.0]))  # replace-one, the sum moves by 1


# --- bounds --------------------------------------------------------------------------------------

def test_clopper_pearson_known_values():
    # 5/10 two-sided 95%: the textbook interval [0.1871, 0.8129]
    assert clopper_pearson_lower(5, 10, 0.025) == pytest.approx(0.187086, abs=1e-6)
    assert clopper_pearson_upper(5, 10, 0.025) == pytest.approx(0.812914, abs=1e-6)
    # extreme counts have closed forms: upper(0, n) = 1 - α^(1/n), lower(n, n) = α^(1/n)
    assert clopper_pearson_upper(0, 10, 0.025) == pytest.approx(1 - 0.025 ** 0.1, rel=1e-12)
    assert clopper_pearson_lower(10, 10, 0.025) == pytest.approx(0.025 ** 0.1, rel=1e-12)
    assert clopper_pearson_lower(0, 10, 0.025) == 0.0
    assert clopper_pearson_upper(10, 10, 0.025) == 1.0
    lower = clopper_pearson_lower(np.array([0, 3, 7]), 7, 0.05)
    assert lower.shape == (3,) and lower[0] == 0 and 0 < lower[1] < 3 / 7 < lower[2] < 1


def test_epsilon_lower_bound_formula():
    assert epsilon_lower_bound(0.5, 0.25) == pytest.approx(math.log(2))
    assert epsilon_lower_bound(0.5, 0.2, delta=0.1) == pytest.approx(math.log(2))
    assert epsilon_lower_bound(0.1, 0.2, delta=0.1) == -math.inf
    assert bonferroni_level(0.95, 4) == pytest.approx(0.05 / 4)  # each test's whole error budget


@pytest.mark.parametrize("rate, p, epsilon, delta", [
    (1e4, 0.3, 1.0, 0.0),     # large counts
    (1e3, 0.01, 0.5, 0.0),    # small counts (about 10 and 6)
    (1e6, 1e-4, 0.1, 0.0),    # a rare event, ε small
    (1e4, 0.3, 1.0, 0.02),    # δ > 0: the ratio and p̲, at half the budget each
])
def test_the_ratio_test_holds_its_level_and_comes_close_to_it(rate, p, epsilon, delta):
    # The worst case of a true claim: p = e^ε·q + δ exactly. Each side draws N ~ Poisson(rate) runs,
    # each in E with its probability; the bound may exceed ε in at most a fraction `level` of
    # audits (3 standard errors of slack for the simulation), and with δ = 0 in not much less
    # (Clopper–Pearson's discreteness): an overconfident bound, or one at half its budget, fails.
    rng, trials, level = np.random.default_rng(7), 100_000, 0.05
    q = (p - delta) / math.exp(epsilon)
    sizes = rng.poisson(rate, (2, trials))
    counts = rng.binomial(sizes[0], p), rng.binomial(sizes[1], q)
    bound, ratio, p_lower = ratio_test(counts[0], counts[1], sizes[0], level, delta)
    exceeded = float(np.mean(bound > epsilon))
    assert exceeded <= level + 3 * math.sqrt(level * (1 - level) / trials)
    if delta == 0:
        assert exceeded >= 0.5 * level and np.isnan(p_lower).all()
        assert np.array_equal(bound, np.log(ratio, where=ratio > 0, out=np.full(trials, -np.inf)))


def test_each_event_gets_the_test_its_training_counts_rate_higher():
    # the same counts, the same error budget: one bound on p/q, or p̲ and p̄ at half each. The ratio
    # test wins on rare events (Poisson and binomial counts vary alike), bounding p and q apart on
    # common ones (a binomial count near its size varies less); the training half picks per event.
    from dpledger.audit.events import _best_thresholds, training_bound

    level, size = 0.05, 10_000
    for counts, better in [((500, 300), "ratio"), ((120, 40), "ratio"), ((30, 0), "ratio"),
                           ((9_000, 8_000), "trade-off")]:
        ratio, apart = training_bound("epsilon", np.array([counts[0]]), size, np.array([counts[1]]), size, 0.0, level)
        assert (ratio[0] > apart[0]) == (better == "ratio"), (counts, ratio, apart)
        n = np.array([[size]], dtype=float)
        chosen = _best_thresholds(np.array([[counts[0]]]), n, np.array([[counts[1]]]), n, 0.0, level, "epsilon")
        assert chosen[2][0] == (better == "ratio")


@pytest.mark.parametrize("tests, leads", [(1, 1), (2, 1), (3, 2), (8, 1), (9, 2), (40, 1), (5, 0)])
def test_weighted_levels_spend_exactly_the_budget_and_never_shortchange_a_lead(tests, leads):
    lead, other = weighted_levels(0.9, tests, leads)
    counted = min(leads, tests)
    assert counted * lead + (tests - counted) * other == pytest.approx(0.1)  # the union bound's α
    assert lead >= bonferroni_level(0.9, tests) >= other
    if tests >= 4 and leads == 1:
        assert lead == pytest.approx(0.1 / 2)  # half the budget


def test_minimum_test_samples_is_the_first_size_that_could_show_a_violation():
    for epsilon, delta in [(0.0, 0.0), (1.0, 0.0), (1.0, 1e-5), (3.0, 0.01)]:
        n = minimum_test_samples(epsilon, delta, 1e-3)
        assert best_possible_bound(n, 1e-3, delta) > epsilon >= best_possible_bound(n - 1, 1e-3, delta)


# --- verdicts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_correct_laplace_passes(epsilon):
    # numpy's float Laplace is ε-DP on the reals only (the next test): audited as such
    report = audit_pairs(laplace_sum(1 / epsilon), [SUM_PAIR], epsilon, samples=100_000, confidence=STRICT,
                         seed=11, relation=ReplaceOne(), ideal_reals=True)
    assert report.ok and not report.violation
    assert report.epsilon_lower_bound > 0.4 * epsilon  # the audit is not vacuous either
    assert "float rounding was not tested" in str(report) and report.ideal_reals


def test_float_laplace_is_flagged_by_its_rounding_and_the_lattice_one_is_not():
    # Near the other centre, fl(1 + X) is a multiple of 2^-53 where X itself has all 53 bits, so
    # roundness events separate the sides (Mironov's leak, found with no knowledge of the sampler):
    # about 0.33 certified against a claim of 0.1 with 3·10^5 samples at confidence 1 − 1e-6 (3.2
    # with 10^6 at 0.9); the same claim on lattice releases passes.
    floats = audit_pairs(laplace_sum(10.0), [SUM_PAIR], 0.1, samples=300_000, confidence=STRICT, seed=15)
    assert floats.epsilon_lower_bound > 0.2 and floats.pairs[0].best.statistic.startswith("float roundness"), \
        str(floats)
    lattice = audit(Laplace(0.1), pairs=[(0.0, 1.0)], samples=100_000, confidence=STRICT, seed=16)
    assert not lattice.violation, str(lattice)
    with pytest.raises(TypeError, match="ideal_reals must be True or False"):
        audit_pairs(laplace_sum(10.0), [SUM_PAIR], 0.1, ideal_reals="no")


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_laplace_with_half_the_scale_is_flagged(epsilon):
    # True ε is 2ε. Best event {sum >= 1}: probabilities 0.5 and 0.5·e^(-2ε); with 50,000 test
    # samples per side and z ≈ 5 the bound loses about 5·(0.0045 + 0.0054) ≈ 0.05 at ε = 0.1
    # (certifies ≈ 0.15 > 0.1) and ≈ 0.1 at ε = 1 (certifies ≈ 1.9 > 1).
    report = audit_pairs(laplace_sum(1 / (2 * epsilon)), [SUM_PAIR], epsilon, samples=100_000,
                         confidence=STRICT, seed=12)
    assert report.violation, str(report)
    assert report.epsilon_lower_bound > 1.2 * epsilon


def test_thinned_thresholds_still_find_the_event(monkeypatch):
    """Past MAX_THRESHOLDS distinct training values, evenly spaced ones are ranked: the best event of
    Laplace noise at half its scale (its true ε twice the claim) is still found and certified."""
    from dpledger.audit import events
    monkeypatch.setattr(events, "MAX_THRESHOLDS", 64)
    report = audit_pairs(laplace_sum(1 / (2 * 0.5)), [SUM_PAIR], 0.5, samples=100_000, confidence=STRICT, seed=12,
                         ideal_reals=True)
    assert report.violation and report.epsilon_lower_bound > 0.75, str(report)


def test_vector_gaussian_calibrated_to_one_coordinate_is_flagged():
    # 16 sensitivity-1 counts: the ℓ2 sensitivity is 4. Calibrating to 1 makes the projection on
    # the mean difference a Gaussian shifted by 4/σ(1, 1e-5) ≈ 1.07 standard deviations; the event
    # {projection >= 2σ} has probabilities 0.176 and 0.023 (ratio e^2.05), and 50,000 test samples
    # lose about 0.2 of it: ≈ 1.85 certified against a claim of 1.
    epsilon, delta, d = 1.0, 1e-5, 16
    unit_sigma = dp_accounting.get_sigma_gaussian(epsilon, delta)
    base = np.zeros((5, d))
    changed = base.copy()
    changed[0] = 1.0
    pair = [(base, changed)]
    correct = audit_pairs(gaussian_vector_sum(unit_sigma * math.sqrt(d)), pair, epsilon, delta, samples=100_000,
                          confidence=STRICT, seed=13, relation=ReplaceOne(), ideal_reals=True)
    assert correct.ok and not correct.violation
    buggy = audit_pairs(gaussian_vector_sum(unit_sigma), pair, epsilon, delta, samples=100_000,
                        confidence=STRICT, seed=14, ideal_reals=True)
    assert buggy.violation, str(buggy)
    assert buggy.pairs[0].event.startswith(("projection on mean difference", "learned score"))  # a vector statistic


def test_report_noisy_max_that_releases_the_value_is_flagged():
    # Four sensitivity-1 scores all move by 1. The index alone is ε-DP; the released maximum is not:
    # P[max <= 0] = 1/16 under D and e^-2/16 under D' (ratio e^2 at ε = 1). With 50,000 test samples
    # the counts ≈ 3,100 and ≈ 420 lose about 0.35: ≈ 1.65 certified against a claim of 1.
    scores = np.zeros(4)
    report = audit_pairs(noisy_max_with_value(1.0), [(scores, scores + 1)], 1.0, samples=100_000,
                         confidence=STRICT, seed=15)
    assert report.violation, str(report)
    assert report.pairs[0].best.statistic in ("coordinate 1", "projection on mean difference")


def test_randomized_response_with_the_wrong_probability_is_flagged():
    # The bug: "replace the label by a uniformly random one" with probability 1/(1 + e^ε) instead of
    # flipping it, so a label is kept with probability 1 - 1/(2(1 + e^ε)) ≈ 0.866: true ε = ln(1 + 2e)
    # ≈ 1.86. Coordinate 0's counts (≈ 8,700 vs ≈ 1,300 of 10,000) certify about 1.7.
    epsilon = 1.0
    labels = np.array([1, -1, 1, 1, -1, -1, 1, -1])
    flipped = labels.copy()
    flipped[0] = -flipped[0]
    correct_keep = math.exp(epsilon) / (1 + math.exp(epsilon))
    pair = [(labels, flipped)]
    correct = audit_pairs(randomized_response(correct_keep), pair, epsilon, samples=20_000, confidence=STRICT, seed=16)
    assert correct.ok and not correct.violation
    buggy = audit_pairs(randomized_response(1 - (1 - correct_keep) / 2), pair, epsilon, samples=20_000,
                        confidence=STRICT, seed=17)
    assert buggy.violation, str(buggy)
    assert buggy.epsilon_lower_bound > 1.4


def test_deterministic_halting_is_flagged():
    # M(D) always halts, M(D') never does: with about 1,000 test draws per side, all K in the event
    # come from one side, π̲ = level^(1/K) ≈ 0.99 and p/q >= π̲/(1 − π̲): ≈ 4.6 is certified whatever
    # the claim below that (the halt, or its mirror image, a release, in the other direction).
    report = audit_pairs(halting_sum, [(np.array([1.0, 0.5]), np.array([1.0, 1.0]))], 1.0, samples=2_000,
                         confidence=STRICT, seed=18)
    assert report.violation, str(report)
    assert report.pairs[0].event in ("run halted", "run released an output")
    assert report.epsilon_lower_bound > 4


# --- failures, reproducibility, executors --------------------------------------------------------

def test_a_mechanism_that_raises_is_recorded_and_the_other_pairs_still_count():
    pairs = [SUM_PAIR, (np.array([-1.0, 1.0]), np.array([-1.0, 2.0]))]
    report = audit_pairs(fails_on_marked_input, pairs, 1.0, samples=4_000, confidence=STRICT, seed=19)
    assert not report.ok
    assert [error.pair for error in report.errors] == [1]
    assert "RuntimeError: solver diverged" in report.errors[0].message
    assert "M(D)" in report.errors[0].message
    assert report.pairs[1].failed and report.pairs[1].tests == ()
    assert not report.pairs[0].failed and report.pairs[0].tests
    assert report.tests == len(report.pairs[0].tests)
    assert not report.violation
    assert "FAILED" in str(report) and "INCOMPLETE" in str(report)


def test_batched_output_of_the_wrong_length_is_recorded():
    report = audit_pairs(lambda data, rng, size: rng.normal(size=size - 1), [(0, 1)], 1.0, samples=1_000, seed=20)
    assert not report.ok and "must return" in report.errors[0].message


def test_same_seed_same_report_in_process_threads_and_processes():
    fn = laplace_sum(1.0)
    first = audit_pairs(fn, [SUM_PAIR], 1.0, samples=20_000, seed=21)
    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        threaded = audit_pairs(fn, [SUM_PAIR], 1.0, samples=20_000, seed=21, executor=executor)
    with concurrent.futures.ProcessPoolExecutor(2) as executor:
        in_processes = audit_pairs(fn, [SUM_PAIR], 1.0, samples=20_000, seed=21, executor=executor)
    again = audit_pairs(fn, [SUM_PAIR], 1.0, samples=20_000, seed=first.seed)
    assert first.pairs == threaded.pairs == in_processes.pairs == again.pairs
    unseeded = audit_pairs(fn, [SUM_PAIR], 1.0, samples=20_000)
    assert audit_pairs(fn, [SUM_PAIR], 1.0, samples=20_000, seed=unseeded.seed).pairs == unseeded.pairs


def test_report_contents():
    report = audit_pairs(laplace_sum(1.0), [SUM_PAIR, SUM_PAIR[::-1]], 1.0, samples=20_000, confidence=STRICT,
                         seed=22, ideal_reals=True)
    assert report.claimed == (1.0, 0.0) and report.confidence == STRICT
    assert report.samples == 20_000 and report.test_samples == 10_000
    assert report.tests == sum(len(pair.tests) for pair in report.pairs) <= 4
    lead, other = report.levels
    tests = [test for pair in report.pairs for test in pair.tests]
    assert sum(test.leading for test in tests) == 1 and lead >= other
    assert sum(test.level for test in tests) == pytest.approx(1 - STRICT)  # the weights sum to one
    best = report.pairs[0].best
    assert all(abs(size - 10_000) < 500 for size in best.sizes) and best.event.startswith("output ")  # Poisson(10^4)
    assert best.route == "ratio" and best.ratio_lower > 1 and best.p_lower is None  # δ = 0: the ratio alone
    assert report.epsilon_lower_bound == max(pair.epsilon_lower_bound for pair in report.pairs)
    assert report.to_dict()["violation"] is False
    assert "no violation" in str(report)


def rare_label(data, rng, size):
    """1 with probability 0.2 on D = 1, 0.05 on D' = 0: the label 1 has ratio 4, its mirror image 0
    only 0.95/0.8."""
    return (rng.random(size) < (0.2 if data else 0.05)).astype(float)


def test_a_runner_up_far_below_the_best_is_not_tested():
    # ln 4 against ln 1.19 on the training half: the mirror-image event cannot beat the leader, so
    # the leader is the only test and has the whole error budget
    report = audit_pairs(rare_label, [(1, 0)], 1.0, samples=20_000, confidence=0.9, seed=25)
    assert report.tests == 1 and report.levels == pytest.approx((0.1, 0.1))
    assert report.pairs[0].best.event == "output == 1" or report.pairs[0].best.event == "output >= 1"
    assert report.violation  # ln 4 = 1.39 > 1


def test_each_side_of_the_test_half_draws_a_poisson_number_of_runs():
    # the ratio test needs the two sides' counts to be independent Poisson variables: each side of
    # each pair draws N ~ Poisson(test half) runs, from a stream of its own (reproduced by the seed)
    report = audit_pairs(laplace_sum(1.0), [SUM_PAIR, SUM_PAIR[::-1], SUM_PAIR], 1.0, samples=20_000,
                         confidence=STRICT, seed=24, ideal_reals=True)
    sizes = [size for pair in report.pairs for size in pair.tests[0].sizes]
    assert len(set(sizes)) == len(sizes)  # six independent draws
    assert all(abs(size - 10_000) < 6 * math.sqrt(10_000) for size in sizes)
    assert all(test.sizes == pair.tests[0].sizes for pair in report.pairs for test in pair.tests)


# --- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"epsilon": -0.5}, "epsilon"),
    ({"epsilon": math.nan}, "epsilon"),
    ({"delta": 1.0}, "delta"),
    ({"delta": -1e-9}, "delta"),
    ({"confidence": 1.0}, "confidence"),
    ({"confidence": 0.0}, "confidence"),
    ({"pairs": []}, "pairs"),
    ({"samples": 40, "epsilon": 2.0}, "samples"),
])
def test_bad_input_is_refused_naming_the_argument(kwargs, name):
    arguments = {"fn": laplace_sum(1.0), "pairs": [SUM_PAIR], "epsilon": 1.0, "samples": 1_000} | kwargs
    with pytest.raises(ValueError, match=name):
        audit_pairs(**arguments)


def test_too_few_samples_states_the_minimum():
    level = bonferroni_level(0.95, 2)
    minimum = 2 * minimum_test_samples(2.0, 0.0, level) - 1
    with pytest.raises(ValueError, match=f"samples >= {minimum}"):
        audit_pairs(laplace_sum(1.0), [SUM_PAIR], 2.0, samples=minimum - 1)
    audit_pairs(laplace_sum(1.0), [SUM_PAIR], 2.0, samples=minimum, seed=23)


def test_pairs_that_are_not_neighbours_are_refused():
    far = (np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match=r"pairs\[1\] is not a neighbouring pair"):
        audit_pairs(laplace_sum(1.0), [SUM_PAIR, far], 1.0, relation=ReplaceOne())


def test_a_side_that_always_halts_is_compared_with_a_vector_side():
    """Regression: every run on D halts while D' releases vectors; the halt itself is the event."""
    def halts_on_zero(data, rng):
        return None if data == 0 else rng.normal(size=2)

    report = audit_pairs(halts_on_zero, [(0, 1)], 1.0, samples=2_000, seed=0)
    assert report.ok and report.violation, str(report)
