"""A zoo of faulty mechanisms from the literature, from real bug reports and from our own privacy
review: each must be flagged, and its correct counterpart must pass, on the same pairs and claim.

Sizing. Every audit runs at confidence 1 − 1e-8, so by Clopper–Pearson exactness and the
Bonferroni split a correct mechanism is reported as violating with probability at most 1e-8;
with 30 correct counterparts audited (18 with given pairs, 12 through the hypothesis path of
``assert_private``) the union bound puts a false alarm anywhere in this file below 3e-7 (a proof,
whatever the seeds). Each bug's sample size is chosen so that its expected
certified ε clears the claim by a wide margin (worked out next to it), so a miss is as unlikely.
Two of the review's findings are below what sampling can show (a δ of about 1e-16, a relative δ
excess of 3e-8): one is flagged in an amplified form, the other by an exact computation.

The zoo's mechanisms draw numpy's float noise, as the papers' pseudocode does, so every audit
here is of the mechanism on the reals (``ideal_reals=True``): each bug is flagged for itself, never
for its float rounding (tests/test_audit_core.py shows that the default catches that too).
"""

from __future__ import annotations

import functools
import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import strategies as st
from scipy import special

import dpledger as dp
from dpledger.audit import audit, audit_pairs, strategies, textbook_laplace_reachable
from dpledger.graph.nodes import Halt
from dpledger.mechanisms import (DiscreteLaplace, Exponential, Laplace, ReportNoisyMax,
                                 SampleWithoutReplacement, TextbookGaussian, TextbookLaplace, TruncatedLaplace,
                                 analytic_sigma)
from dpledger.relations import AddRemoveOne, EdgeAdjacency, ReplaceOne
from dpledger.testing import PrivacyViolation, assert_private

CONFIDENCE = 1 - 1e-8
pytestmark = pytest.mark.privacy(seconds=30)  # each test's time budget (the plugin lists overruns)


def check(buggy, correct, **audit_kwargs):
    """Audit both mechanisms on the same pairs and claim: the bug is flagged, the fix is not."""
    found = audit_pairs(buggy, confidence=CONFIDENCE, ideal_reals=True, **audit_kwargs)
    assert found.ok and found.violation, str(found)
    fixed = audit_pairs(correct, confidence=CONFIDENCE, seed=audit_kwargs["seed"] + 1000, ideal_reals=True,
                        **{k: v for k, v in audit_kwargs.items() if k != "seed"})
    assert fixed.ok and not fixed.violation, str(fixed)
    return found


# --- noise calibrated to the wrong sensitivity -----------------------------------------------------

def _noisy_sum(data, rng, size, *, scale):
    return np.sum(data) + rng.laplace(scale=scale, size=size)


def test_laplace_at_half_the_scale():
    # Replace-one sensitivity forgotten (the Gaussian twin: google/differential-privacy PR #464).
    # True ε = 2: {sum >= 1} has probabilities 0.5 and 0.5e^-2; 50,000 test samples certify ≈ 1.9.
    pair = [(np.array([0.2, 0.5, 1.0]), np.array([0.2, 0.5, 0.0]))]
    check(functools.partial(_noisy_sum, scale=0.5), functools.partial(_noisy_sum, scale=1.0),
          pairs=pair, epsilon=1.0, samples=100_000, seed=1, relation=ReplaceOne())


def _sum_of_squares(data, rng, size, *, scale):
    return np.sum(np.square(data)) + rng.laplace(scale=scale, size=size)


def test_sum_of_squares_sensitivity_from_the_lower_bound_only():
    # diffprivlib issue #105 / PR #110: max(|L|, |L|)² instead of max(|L|, |U|)², here 1 instead of 9
    # for bounds [-1, 3]. One row 0 → 3 moves the sum by 9: true ε = 9, claim 1; {s >= 7} has
    # probabilities ≈ 0.5 and 0.5e^-7, and 10,000 test samples certify ≈ 5.9.
    pair = [(np.zeros(3), np.array([3.0, 0.0, 0.0]))]
    check(functools.partial(_sum_of_squares, scale=1.0), functools.partial(_sum_of_squares, scale=9.0),
          pairs=pair, epsilon=1.0, samples=20_000, seed=2, relation=ReplaceOne())


def _histogram(data, rng, size, *, bins, scale):
    counts = np.bincount(np.asarray(data, dtype=int), minlength=bins)
    return counts + rng.laplace(scale=scale, size=(size, bins))


def test_histogram_with_noise_scale_epsilon():
    # Ding et al., CCS 2018, Alg. 10 (NoisyHist2): Lap(ε) instead of Lap(1/ε). At ε = 0.5 the
    # scale is 0.5, so adding one record to a bin costs true ε = 2; the changed coordinate
    # certifies ≈ 1.9 with 50,000 test samples against the claim of 0.5.
    data = np.array([0, 1, 1, 2, 4])
    pair = [(data, np.append(data, 1))]
    check(functools.partial(_histogram, bins=5, scale=0.5), functools.partial(_histogram, bins=5, scale=2.0),
          pairs=pair, epsilon=0.5, samples=100_000, seed=3, relation=AddRemoveOne())


def _degrees(graph, rng, size, *, scale):
    return graph.sum(axis=0) + rng.laplace(scale=scale, size=(size, len(graph)))


def test_degree_sequence_calibrated_as_if_one_edge_moved_one_degree():
    # Hay et al., ICDM 2009: under edge adjacency an edge moves two degrees (ℓ1 sensitivity 2).
    # Lap(1/ε) at ε = 2 is 4-DP. The sum of the two changed coordinates (projection on the mean
    # difference) shifts by 4 Laplace scales: at threshold 8 scales the ratio is e^4·8/12 ≈ e^3.6
    # with probability ≈ 0.027, so 50,000 test samples certify ≈ 2.9 > 2. The pairs are found by
    # ``audit``'s search around a random graph (every edge is equally bad).
    graph = np.triu(np.random.default_rng(4).random((10, 10)) < 0.3, k=1).astype(float)
    graph = graph + graph.T
    for scale, violation in [(0.5, True), (1.0, False)]:
        report = audit(functools.partial(_degrees, scale=scale), epsilon=2.0, relation=EdgeAdjacency(), data=graph,
                       samples=100_000, confidence=CONFIDENCE, seed=4, search_examples=3, audited_pairs=1)
        assert report.ok and report.violation is violation, str(report)
    assert report.search.pairs[0].startswith("edge {")


def _vector_sum(data, rng, size, *, sigma):
    return np.sum(data, axis=0) + sigma * rng.normal(size=(size, data.shape[1]))


def test_vector_gaussian_calibrated_to_one_coordinate():
    # ℓ∞ instead of ℓ2 sensitivity (Dwork & Roth 2014, Thm A.1 needs Δ2): 16 counts of
    # sensitivity 1 have Δ2 = 4. The mean-difference projection shifts by ≈ 1.07 σ units; at 2σ
    # the probabilities are 0.176 and 0.023 (ratio e^2.05); further out the ratio grows: ≈ 2.3
    # certified against 1 with 50,000 test samples.
    epsilon, delta, d = 1.0, 1e-5, 16
    sigma = analytic_sigma(epsilon, delta)
    base = np.zeros((5, d))
    changed = base.copy()
    changed[0] = 1.0
    check(functools.partial(_vector_sum, sigma=sigma), functools.partial(_vector_sum, sigma=sigma * math.sqrt(d)),
          pairs=[(base, changed)], epsilon=epsilon, delta=delta, samples=100_000, seed=5, relation=ReplaceOne())


def _classic_gaussian_sum(data, rng, size, *, sigma):
    return np.sum(data) + sigma * rng.normal(size=size)


def test_classic_gaussian_above_epsilon_one():
    # smartnoise-sdk issue #462 (Balle & Wang 2018, Thm 4): σ = sqrt(2 ln(1.25/δ))/ε outside
    # ε <= 1. At (4, 1e-5) it is in fact still private (true ε 3.51), so no auditor can flag it;
    # it breaks for large ε, and visibly only with a large δ (at δ = 1e-5 the excess δ is far too
    # small to sample). At (8, 0.2): σ = 0.239, true ε 9.6; 1.5·10^6 test samples per side
    # certify ≈ 9.1 > 8 (the analytic σ = 0.27 for the same claim passes).
    epsilon, delta = 8.0, 0.2
    classic = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    pair = [(np.array([0.0, 1.0]), np.array([0.0, 0.0]))]
    check(functools.partial(_classic_gaussian_sum, sigma=classic),
          functools.partial(_classic_gaussian_sum, sigma=TextbookGaussian(epsilon, delta).sigma),
          pairs=pair, epsilon=epsilon, delta=delta, samples=3_000_000, seed=6, relation=ReplaceOne())


def _mean(data, rng, size, *, epsilon):
    """Mean of values in [0, 1] with Lap(1/(nε)), n read from the data."""
    return np.mean(data) + rng.laplace(scale=1 / (len(data) * epsilon), size=size)


def _sum_and_count(data, rng, size, *, epsilon):
    """Noisy sum and noisy count at ε/2 each (their ratio is a mean, by post-processing)."""
    noise = rng.laplace(scale=2 / epsilon, size=(size, 2))
    return np.array([np.sum(data), len(data)]) + noise


def test_mean_whose_sensitivity_uses_the_private_count():
    # smartnoise-core issue #355: under add/remove the count n is private, so 1/n is not the
    # mean's sensitivity. D = [1] (mean 1, scale 1) vs D' = [1, 0] (mean 0.5, scale 0.5): for
    # t >= 1, P[≥ t] is ½e^-(t-1) against ½e^-2(t-0.5), a ratio e^t: unbounded; ≈ 2.8 certified
    # against 1 with 50,000 test samples.
    pair = [(np.array([1.0]), np.array([1.0, 0.0]))]
    check(functools.partial(_mean, epsilon=1.0), functools.partial(_sum_and_count, epsilon=1.0),
          pairs=pair, epsilon=1.0, samples=100_000, seed=7, relation=AddRemoveOne())


# --- selection --------------------------------------------------------------------------------------

def _noisy_max_with_value(scores, rng, size, *, epsilon):
    noisy = scores + rng.laplace(scale=2 / epsilon, size=(size, len(scores)))
    index = np.argmax(noisy, axis=1)
    return np.column_stack([index, noisy[np.arange(size), index]])


def test_report_noisy_max_releasing_the_value():
    # Ding et al., CCS 2018 (NoisyMax returning the maximum value) and Lyu, Su & Li, VLDB 2017:
    # P[max <= 0] is 1/16 under D and e^-2/16 under D' (all four scores move up by 1): ≈ 1.6
    # certified against 1 with 50,000 test samples. The fix releases the index only.
    scores = np.zeros(4)
    check(functools.partial(_noisy_max_with_value, epsilon=1.0), ReportNoisyMax(1.0).sample,
          pairs=[(scores, scores + 1)], epsilon=1.0, samples=100_000, seed=8)


def _exponential_without_the_two(scores, rng, size, *, epsilon):
    return np.argmax(epsilon * scores + rng.gumbel(size=(size, len(scores))), axis=1)


def test_exponential_mechanism_missing_the_factor_two():
    # mbi issue #65 (JAM's exponential mechanism): scores that move in opposite directions need
    # exp(ε·S/(2Δ)). With exp(ε·S/Δ) and scores (1, 0, ..., 0) → (0, 1, ..., 1) over 10
    # candidates, P[h = 0] is e/(e + 9) = 0.232 against 1/(1 + 9e) = 0.039: true ε ≈ 1.78, and
    # 50,000 test samples certify ≈ 1.55 > 1.
    first = np.eye(10)[0]
    check(functools.partial(_exponential_without_the_two, epsilon=1.0), Exponential(1.0).sample,
          pairs=[(first, 1 - first)], epsilon=1.0, samples=100_000, seed=9)


# --- sparse vector technique (Lyu, Su & Li, VLDB 2017) ----------------------------------------------

def _sparse_vector(queries, rng, size, *, epsilon, cutoff, threshold_noise=True, query_noise=True):
    """Bits [q_i + ν_i >= T + ρ] (T = 0), -1 after ``cutoff`` positive answers (None: no cutoff).

    Alg. 1 of Lyu et al.: ρ ~ Lap(2/ε), ν ~ Lap(4c/ε) (Lap(2/ε) without a cutoff, as in Alg. 6).
    """
    k = len(queries)
    rho = rng.laplace(scale=2 / epsilon, size=(size, 1)) if threshold_noise else np.zeros((size, 1))
    nu_scale = 4 * cutoff / epsilon if cutoff else 2 / epsilon
    nu = rng.laplace(scale=nu_scale, size=(size, k)) if query_noise else np.zeros((size, k))
    above = (queries + nu >= rho).astype(int)
    if cutoff:
        answered = np.cumsum(above, axis=1) - above  # positive answers before each query
        above[answered >= cutoff] = -1
    return above


correct_sparse_vector = functools.partial(_sparse_vector, epsilon=1.0, cutoff=1)


def test_sparse_vector_without_threshold_noise():
    # Lyu et al. §3: ⊥ answers are free only because they share the noisy threshold ρ. Without
    # it each ⊥ of a query at the threshold costs ε/4: with 8 such queries moved up by 1,
    # "no query answered" has probability 2^-8 against 0.389^8 (ratio e^2.0); 10^6 test samples
    # certify ≈ 1.6 > 1.
    queries = np.zeros(8)
    check(functools.partial(_sparse_vector, epsilon=1.0, cutoff=1, threshold_noise=False), correct_sparse_vector,
          pairs=[(queries, queries + 1)], epsilon=1.0, samples=2_000_000, seed=10)


def test_sparse_vector_without_query_noise():
    # Lyu et al. Alg. 5 (Stoddard et al. 2014), StatDP's iSVT1: the bits are then a deterministic
    # function of ρ, and queries (0, 0) → (1, -1) give the answer (1, 0), impossible under D.
    check(functools.partial(_sparse_vector, epsilon=1.0, cutoff=None, query_noise=False), correct_sparse_vector,
          pairs=[(np.zeros(2), np.array([1.0, -1.0]))], epsilon=1.0, samples=20_000, seed=11)


def test_sparse_vector_without_cutoff():
    # Lyu et al. Alg. 6 (Chen et al. 2015): answering every query is not ε-DP for any ε; its
    # loss grows with the number of queries. 20 queries, half moved up and half down: the
    # mean-difference projection certifies ≈ 3 against 1 with 50,000 test samples.
    queries = np.zeros(20)
    moved = np.repeat([1.0, -1.0], 10)
    check(functools.partial(_sparse_vector, epsilon=1.0, cutoff=None), correct_sparse_vector,
          pairs=[(queries, moved)], epsilon=1.0, samples=100_000, seed=12)


# --- floating point -------------------------------------------------------------------------------

def _textbook_laplace(value, rng, size, *, scale):
    """value ± (−scale·ln U), U uniform on the 2^-53 grid: the sampler Mironov attacks."""
    u = rng.integers(1, 2**53, endpoint=True, size=size) * 2.0**-53
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    return value + sign * (-scale * np.log(u))


def _geometric(value, rng, size, *, epsilon):
    """Two-sided geometric (discrete Laplace) noise: exactly ε-DP for integer answers."""
    p = 1 - math.exp(-epsilon)
    return value + rng.geometric(p, size) - rng.geometric(p, size)


def test_textbook_floating_point_laplace_leaks_through_its_low_bits():
    # Mironov, CCS 2012: far from f(D), few floats are reachable as f(D) ± (−b·ln U), and which
    # ones depends on f(D). Statistic: is the output reachable from f(D) = 0? Under D always;
    # under D' (f = 1) about 60% of outputs are not, an event of probability 0 under D: 20,000
    # test samples certify ≈ 6.5 against 1. The fix (integer noise) has nothing in its low bits.
    check(functools.partial(_textbook_laplace, scale=1.0), functools.partial(_geometric, epsilon=1.0),
          pairs=[(0.0, 1.0)], epsilon=1.0, samples=40_000, seed=13, statistics=[textbook_laplace_reachable(0.0, 1.0)])


def test_reachability_is_exact_for_the_textbook_sampler():
    rng = np.random.default_rng(14)
    outputs = _textbook_laplace(0.0, rng, 20_000, scale=1.0)
    assert textbook_laplace_reachable(0.0, 1.0)(outputs).all()
    shifted = _textbook_laplace(1.0, rng, 20_000, scale=1.0)
    far = np.abs(shifted - 1) > 6
    assert textbook_laplace_reachable(0.0, 1.0)(shifted[far]).mean() < 0.2


# --- the privacy review's findings, as faulty estimators (graphs audited as a whole) ------------------
# Each graph is audited through ``audit(graph, pairs=...)``: the auditor sees every release, the
# halting step and any error, and adds low-order-bit statistics for textbook float releases.

def _graph(*steps, relation=None):
    return dp.Graph(dp.sequence(*steps, name="g"), relation=relation or ReplaceOne())


def check_graph(buggy, correct, pairs, samples, seed):
    found = audit(buggy, pairs=pairs, samples=samples, confidence=CONFIDENCE, seed=seed)
    assert found.ok and found.violation, str(found)
    fixed = audit(correct, pairs=pairs, samples=samples, confidence=CONFIDENCE, seed=seed + 1000)
    assert fixed.ok and not fixed.violation, str(fixed)
    return found


def _edges(graph):
    return float(graph.sum() // 2)


def _certified(graph):
    """A stand-in for a solver whose certificate fails on dense graphs: a data-dependent halt."""
    if graph.sum() // 2 > 11:
        raise Halt("solver certificate above target")
    return _edges(graph)


def test_finding_1_a_data_dependent_solver_halt_is_flagged():
    # The halt inside a query becomes a PrivacyError naming the step (the runtime's rule); either
    # way the run's ending differs: 0% vs 100% of runs on an edge-adjacent pair, δ = 1.
    eleven = np.zeros((8, 8))
    rows, cols = np.triu_indices(8, k=1)
    eleven[rows[:11], cols[:11]] = 1.0
    eleven = eleven + eleven.T
    twelve = eleven.copy()
    twelve[rows[11], cols[11]] = twelve[cols[11], rows[11]] = 1.0
    buggy = _graph(dp.release("count", DiscreteLaplace(1.0), _certified), relation=EdgeAdjacency())
    correct = _graph(dp.release("count", DiscreteLaplace(1.0), _edges), relation=EdgeAdjacency())
    report = check_graph(buggy, correct, [(eleven, twelve)], samples=400, seed=20)
    assert max(report.pairs[0].tests, key=lambda t: t.epsilon_lower_bound).statistic in ("halted", "halt reason")


def test_finding_2_textbook_laplace_on_an_integer_count_is_flagged_by_its_low_bits():
    # The degree step released edge_count + float Laplace(1/ε): from the count on D, about a quarter
    # of the outputs on D' (one more edge) are unreachable floats, an event of probability 0 on D.
    graph = np.zeros((8, 8))
    graph[0, 1] = graph[1, 0] = 1.0
    other = graph.copy()
    other[2, 3] = other[3, 2] = 1.0
    buggy = _graph(dp.release("edge_count", TextbookLaplace(0.1), _edges), relation=EdgeAdjacency())
    correct = _graph(dp.release("edge_count", DiscreteLaplace(0.1), _edges), relation=EdgeAdjacency())
    report = check_graph(buggy, correct, [(graph, other)], samples=20_000, seed=21)
    assert "reachable" in str(report)


def test_finding_3_conditions_across_boundaries_are_flagged_by_the_planner():
    # No sample is needed: a conditional step inside group privacy, an absorbed failure or a
    # subsample is private only if its condition holds on inputs nothing tested; refused at plan time.
    count = lambda x: float(len(x))  # noqa: E731
    test = dp.halt_if("enough", TruncatedLaplace(1.0, 1e-6), count, lambda v: v < 10)
    after = dp.conditional("enough", dp.release("mean", Laplace(1.0, sensitivity=0.1), lambda x: float(np.mean(x))))
    for inner in (dp.group(after, 2), dp.absorb(after, 0.01), dp.subsample(SampleWithoutReplacement(5, 20), after)):
        with pytest.raises(dp.ConditionError):
            _graph(test, inner).plan()


def _coarse_snapping(value, rng, size, *, epsilon, bound):
    """Snapping (clamp, Laplace by inversion, round to Λ, clamp) with the uniform on a 2^-8 grid:
    the flaw of the reviewed snapping (a 2^-53 grid caps the noise at λ·53·ln 2, a δ of 1e-16 no
    sample can show), made coarse enough for sampling: the noise is capped at λ·8·ln 2."""
    lam = 1.0 / epsilon
    u = rng.integers(1, 2**8, endpoint=True, size=size) * 2.0**-8
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    noisy = np.clip(value, -bound, bound) + sign * lam * -np.log(u)
    return np.clip(np.round(noisy), -bound, bound)


def _lattice_laplace(value, rng, size, *, epsilon, bound):
    return Laplace(epsilon, sensitivity=1.0, bound=bound).sample(value, rng, size)


def test_finding_4_snapping_with_a_capped_uniform_is_flagged():
    # From f(D) = -4 the output +4 needs noise 8 > 8·ln 2 = 5.5: impossible; from f(D') = -3 it has
    # probability ½·2^-8·(...) ≈ 1e-3: 100,000 test samples see it ~100 times, certify ε ≫ 1.
    kwargs = {"epsilon": 1.0, "bound": 4.0}
    check(functools.partial(_coarse_snapping, **kwargs), functools.partial(_lattice_laplace, **kwargs),
          pairs=[(-4.0, -3.0)], epsilon=1.0, samples=200_000, seed=22)


def _naive_sigma(epsilon, delta):
    """The reviewed calibration: dp-accounting's root, kept when δ(σ) = exp(log Φ(a)) −
    exp(ε + log Φ(b)), a difference of two nearly equal tiny numbers, says it is <= δ."""
    def computed(sigma):
        a, b = 1 / (2 * sigma) - epsilon * sigma, -1 / (2 * sigma) - epsilon * sigma
        return float(np.exp(special.log_ndtr(a)) - np.exp(epsilon + special.log_ndtr(b)))
    sigma = dp_accounting.get_sigma_gaussian(epsilon, delta)
    assert computed(sigma) <= delta  # the check the reviewed code relied on passes
    return sigma


def _exact_delta(sigma, epsilon):
    import mpmath

    mpmath.mp.dps = 60
    s, e = mpmath.mpf(sigma), mpmath.mpf(epsilon)
    return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)


def test_finding_5_a_cancelled_gaussian_calibration_is_flagged_by_an_exact_reference():
    # A relative δ excess of 3e-8 is far below what any sample shows: the check is a 60-digit
    # evaluation of the true δ(ε) at the calibrated σ, which flags the naive formula and passes ours.
    epsilon, delta = 1e-5, 1e-30
    assert _exact_delta(_naive_sigma(epsilon, delta), epsilon) > delta
    assert _exact_delta(analytic_sigma(epsilon, delta), epsilon) <= delta


def test_finding_6_textbook_float_histogram_frequencies_are_flagged_by_their_low_bits():
    points = np.zeros(20)
    moved = points.copy()
    moved[0] = 1.0
    buggy = _graph(dp.release("frequencies", TextbookLaplace(1.0, sensitivity=0.1), _frequencies))
    correct = _graph(dp.release("counts", DiscreteLaplace(1.0, sensitivity=2), _counts))
    check_graph(buggy, correct, [(points, moved)], samples=20_000, seed=24)


def _fragile_mean(x):
    if np.max(np.abs(x)) > 1e6:
        raise ValueError("points lie too far out")
    return float(np.clip(x, 0, 1).mean())


def test_finding_6_an_error_raised_on_the_data_after_the_charge_is_flagged():
    # The error's type and message are observable: raised on D', never on D.
    data = np.full(10, 0.5)
    far = data.copy()
    far[0] = 1e7
    buggy = _graph(dp.release("mean", Laplace(1.0, sensitivity=0.1), _fragile_mean))
    correct = _graph(dp.release("mean", Laplace(1.0, sensitivity=0.1), lambda x: float(np.clip(x, 0, 1).mean())))
    report = check_graph(buggy, correct, [(data, far)], samples=400, seed=25)
    assert max(report.pairs[0].tests, key=lambda t: t.epsilon_lower_bound).statistic in ("halted", "halt reason")


# --- the same bugs through the hypothesis path (dpledger.testing.assert_private) --------------------
# No pair is given: hypothesis searches the strategy, fresh samples decide at CONFIDENCE, and the
# reported pair is the smallest one confirmed. A graph target brings its own claim and, for
# textbook float releases, its low-bit statistics. Every bug from the literature and the five
# review findings that sampling shows are here (findings 3 and 5 are planner and exact-reference
# checks); each is flagged and its fix passes on the same strategy and claim (the fix's seed
# differs). benchmarks/privacy_tests.py measures the detection rate and time over ten seeds.

def _integers_added(low: int, high: int, max_n: int):
    """(D, D + one value) for integer datasets in [low, high]: AddRemoveOne neighbours."""
    return st.lists(st.integers(low, high), max_size=max_n).flatmap(
        lambda xs: st.integers(low, high).map(lambda v: (np.array(xs, dtype=float), np.array(xs + [v], dtype=float))))


def _rounded_sum(x):
    return float(np.round(np.sum(x)))


def _integers_replaced(n: int, high: int):
    """(D, D') of n integers in [0, high], one replaced by a different one: ReplaceOne neighbours."""
    def replaced(xs):
        return st.tuples(st.integers(0, n - 1), st.integers(0, high)).filter(lambda iv: xs[iv[0]] != iv[1]).map(
            lambda iv: (np.array(xs, dtype=float), np.array(xs[:iv[0]] + [iv[1]] + xs[iv[0] + 1:], dtype=float)))
    return st.lists(st.integers(0, high), min_size=n, max_size=n).flatmap(replaced)


def _outlier_replaced(n: int):
    """(D, D'): n values in [0, 1], the first replaced by any value in [0, 10^7]."""
    return st.tuples(strategies.datasets(n, n, None, 0.0, 1.0), st.floats(0.0, 1e7)).map(
        lambda drawn: (drawn[0], np.concatenate([[drawn[1]], drawn[0][1:]])))


def _unit_moves(low: float, high: float):
    """(v, v + 1) for scalar v in [low, high]: sensitivity-1 neighbours."""
    return st.floats(low, high).map(lambda v: (np.array([v]), np.array([v + 1.0])))


def _frequencies(x):
    return np.bincount(np.asarray(x, dtype=int), minlength=2) / 20.0


def _counts(x):
    return np.bincount(np.asarray(x, dtype=int), minlength=2)


HYPOTHESIS_ZOO = {
    "laplace at half the scale": (
        functools.partial(_noisy_sum, scale=0.5), functools.partial(_noisy_sum, scale=1.0),
        lambda: strategies.replace_one_pairs(1, 8, None, 0.0, 1.0), dict(epsilon=1.0, relation=ReplaceOne())),
    "sum of squares, sensitivity from the lower bound": (
        functools.partial(_sum_of_squares, scale=1.0), functools.partial(_sum_of_squares, scale=9.0),
        lambda: strategies.replace_one_pairs(1, 8, None, -1.0, 3.0), dict(epsilon=1.0, relation=ReplaceOne())),
    "histogram with noise scale ε": (
        functools.partial(_histogram, bins=5, scale=0.5), functools.partial(_histogram, bins=5, scale=2.0),
        lambda: _integers_added(0, 4, 6), dict(epsilon=0.5, relation=AddRemoveOne())),
    "mean whose sensitivity uses the private count": (
        functools.partial(_mean, epsilon=1.0), functools.partial(_sum_and_count, epsilon=1.0),
        lambda: strategies.add_remove_pairs(1, 6, None, 0.0, 1.0), dict(epsilon=1.0, relation=AddRemoveOne())),
    "exponential mechanism missing the factor two": (
        functools.partial(_exponential_without_the_two, epsilon=1.0), Exponential(1.0).sample,
        lambda: strategies.score_pairs(2, 10), dict(epsilon=1.0)),
    "report noisy max releasing the value": (
        functools.partial(_noisy_max_with_value, epsilon=1.0), ReportNoisyMax(1.0).sample,
        lambda: strategies.score_pairs(2, 6, monotone=True),
        dict(epsilon=1.0, samples=100_000, search_samples=10_000, max_examples=80)),  # a weak bug: ε 1.6 vs 1
    "degree sequence calibrated as if one edge moved one degree": (
        functools.partial(_degrees, scale=0.5), functools.partial(_degrees, scale=1.0),
        lambda: strategies.graph_pairs(4, 10), dict(epsilon=2.0, relation=EdgeAdjacency())),
    "vector Gaussian calibrated to one coordinate": (
        functools.partial(_vector_sum, sigma=analytic_sigma(1.0, 1e-5)),
        functools.partial(_vector_sum, sigma=4 * analytic_sigma(1.0, 1e-5)),
        lambda: strategies.replace_one_pairs(1, 5, 16, 0.0, 1.0),
        dict(epsilon=1.0, delta=1e-5, relation=ReplaceOne(), max_examples=80)),
    "sparse vector without cutoff": (
        functools.partial(_sparse_vector, epsilon=1.0, cutoff=None), correct_sparse_vector,
        lambda: strategies.score_pairs(2, 20), dict(epsilon=1.0, samples=100_000, search_samples=10_000,
                                                    max_examples=80)),
    "classic Gaussian above ε = 1": (
        functools.partial(_classic_gaussian_sum, sigma=math.sqrt(2 * math.log(1.25 / 0.2)) / 8.0),
        functools.partial(_classic_gaussian_sum, sigma=TextbookGaussian(8.0, 0.2).sigma),
        lambda: strategies.replace_one_pairs(2, 2, None, 0.0, 1.0),
        dict(epsilon=8.0, delta=0.2, relation=ReplaceOne(), samples=3_000_000, search_samples=25_000, max_examples=30)),
    "textbook floating-point Laplace on a count (low bits)": (
        dp.Graph(dp.release("count", TextbookLaplace(1.0), _rounded_sum), relation=ReplaceOne()),
        dp.Graph(dp.release("count", DiscreteLaplace(1.0), _rounded_sum), relation=ReplaceOne()),
        lambda: strategies.replace_one_pairs(1, 5, None, 0.0, 1.0), dict(samples=40_000)),
    "sparse vector without threshold noise": (
        functools.partial(_sparse_vector, epsilon=1.0, cutoff=1, threshold_noise=False), correct_sparse_vector,
        lambda: strategies.score_pairs(2, 20), dict(epsilon=1.0, samples=300_000, search_samples=10_000)),
    "finding 1: a data-dependent solver halt": (
        _graph(dp.release("count", DiscreteLaplace(1.0), _certified), relation=EdgeAdjacency()),
        _graph(dp.release("count", DiscreteLaplace(1.0), _edges), relation=EdgeAdjacency()),
        lambda: strategies.graph_pairs(8, 8, 0.4), dict(samples=2_000)),
    "finding 2: textbook Laplace on an integer count": (
        _graph(dp.release("edge_count", TextbookLaplace(0.1), _edges), relation=EdgeAdjacency()),
        _graph(dp.release("edge_count", DiscreteLaplace(0.1), _edges), relation=EdgeAdjacency()),
        lambda: strategies.graph_pairs(4, 8), dict(samples=20_000)),
    "finding 4: snapping with a capped uniform": (
        functools.partial(_coarse_snapping, epsilon=1.0, bound=4.0),
        functools.partial(_lattice_laplace, epsilon=1.0, bound=4.0),
        lambda: _unit_moves(-4.0, 3.0), dict(epsilon=1.0, samples=200_000, search_samples=20_000)),
    "finding 6: textbook float histogram frequencies": (
        _graph(dp.release("frequencies", TextbookLaplace(1.0, sensitivity=0.1), _frequencies)),
        _graph(dp.release("counts", DiscreteLaplace(1.0, sensitivity=2), _counts)),
        lambda: _integers_replaced(20, 1), dict(samples=20_000)),
    "finding 6: an error raised on the data after the charge": (
        _graph(dp.release("mean", Laplace(1.0, sensitivity=0.1), _fragile_mean)),
        _graph(dp.release("mean", Laplace(1.0, sensitivity=0.1), lambda x: float(np.clip(x, 0, 1).mean()))),
        lambda: _outlier_replaced(10), dict(samples=2_000)),
    "sparse vector without query noise": (
        functools.partial(_sparse_vector, epsilon=1.0, cutoff=None, query_noise=False), correct_sparse_vector,
        lambda: strategies.score_pairs(2, 4), dict(epsilon=1.0)),
}


@pytest.mark.parametrize("name", HYPOTHESIS_ZOO)
def test_the_zoo_through_the_hypothesis_path(name):
    buggy, correct, pairs, claim = HYPOTHESIS_ZOO[name]
    with pytest.raises(PrivacyViolation) as caught:
        assert_private(buggy, pairs(), confidence=CONFIDENCE, seed=1, ideal_reals=True, **claim)
    assert caught.value.epsilon_lower_bound > caught.value.claimed[0]
    assert_private(correct, pairs(), confidence=CONFIDENCE, seed=2, ideal_reals=True, **claim)
