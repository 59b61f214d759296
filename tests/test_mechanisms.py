"""Primitive mechanisms: calibrations against dp-accounting and the lemmas, distributions by exact
goodness-of-fit tests at p < 1e-6 (false alarm practically impossible; a factor-2 scale error is
rejected with overwhelming power at these sample sizes). The noise mechanisms here are the
textbook (opt-in) ones; the float-safe defaults are tested in test_lattice_mechanisms.py."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

import dpledger as dp
from dpledger.mechanisms import (EdgeSplit, Exponential, HistogramLearner, PoissonSample, ReportNoisyMax, RowSplit,
                                 SampleWithoutReplacement, TopKPeeling, analytic_delta)
from dpledger.mechanisms import TextbookGaussian as Gaussian, TextbookLaplace as Laplace
from dpledger.mechanisms import TextbookTruncatedLaplace as TruncatedLaplace

N = 100_000
ALPHA = 1e-6


def rng(seed=0):
    return np.random.default_rng(seed)


def test_laplace_scale_and_distribution():
    mech = Laplace(epsilon=0.5, sensitivity=2.0)
    assert mech.scale == 4.0 and mech.guarantee() == dp.PureDP(0.5)
    assert mech.dp_event() == dp_accounting.LaplaceDpEvent(1.0 / 0.5)
    draws = mech.sample(3.0, rng(), N)
    assert draws.shape == (N,)
    assert stats.kstest(draws, stats.laplace(loc=3.0, scale=4.0).cdf).pvalue > ALPHA
    assert stats.kstest(draws, stats.laplace(loc=3.0, scale=2.0).cdf).pvalue < ALPHA  # halved scale is caught


def test_laplace_vectors_get_independent_noise_per_coordinate():
    out = Laplace(1.0).sample(np.zeros(3), rng(), 10)
    assert out.shape == (10, 3) and len(np.unique(out)) == 30
    assert Laplace(1.0).release([1.0, 2.0], rng()).shape == (2,)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (1.0, 1e-5), (4.0, 1e-6), (16.0, 1e-9)])
def test_analytic_gaussian_matches_dp_accounting_and_is_tight(eps, delta):
    mech = Gaussian(eps, delta, sensitivity=3.0)
    assert mech.sigma == pytest.approx(3.0 * dp_accounting.get_sigma_gaussian(eps, delta), rel=1e-8)
    assert analytic_delta(mech.sigma, eps, 3.0) <= delta
    assert analytic_delta(mech.sigma * (1 - 1e-6), eps, 3.0) > delta  # smallest sigma, to 1e-6
    # dp-accounting's PLD agrees that this sigma gives (eps, delta)
    pld = dp_accounting.pld.PLDAccountant().compose(mech.dp_event())
    assert pld.get_epsilon(delta) == pytest.approx(eps, rel=2e-3)


def test_classic_gaussian_is_lemma_a12_and_refused_above_one():
    mech = Gaussian(1.0, 1e-5, calibration="classic")
    assert mech.sigma == pytest.approx(math.sqrt(2 * math.log(2 / 1e-5)))
    assert mech.sigma > Gaussian(1.0, 1e-5).sigma  # the analytic one is tighter
    with pytest.raises(ValueError, match="epsilon <= 1"):
        Gaussian(1.5, 1e-5, calibration="classic")
    with pytest.raises(ValueError, match="calibration"):
        Gaussian(1.0, 1e-5, calibration="exact")


def test_gaussian_distribution():
    mech = Gaussian(1.0, 1e-5)
    draws = mech.sample(0.0, rng(1), N)
    assert stats.kstest(draws, stats.norm(scale=mech.sigma).cdf).pvalue > ALPHA
    assert stats.kstest(draws, stats.norm(scale=mech.sigma / 2).cdf).pvalue < ALPHA


def test_truncated_laplace_is_lemma_a10():
    mech = TruncatedLaplace(epsilon=0.5, delta=1e-4, sensitivity=2.0)
    assert mech.shift == pytest.approx(-2.0 * (1 + math.log(1e4) / 0.5)) and mech.scale == 4.0
    noise = mech.sample(0.0, rng(2), N)
    assert noise.max() <= 0.0
    laplace = stats.laplace(loc=mech.shift, scale=mech.scale)
    truncated_cdf = lambda x: np.minimum(laplace.cdf(x) / laplace.cdf(0.0), 1.0)  # noqa: E731
    assert stats.kstest(noise, truncated_cdf).pvalue > ALPHA
    with pytest.raises(ValueError, match="scalar"):
        mech.release([1.0, 2.0])


def test_truncated_laplace_privacy_bound_holds_exactly():
    # P[f + noise in S] vs P[f + Δ + noise in S]: the worst event is the region only the shifted
    # input reaches, (f, f + Δ]; its probability must be <= δ (plus e^ε-ratio elsewhere).
    mech = TruncatedLaplace(epsilon=1.0, delta=1e-6, sensitivity=1.0)
    laplace = stats.laplace(loc=mech.shift, scale=mech.scale)
    leak = (laplace.cdf(0.0) - laplace.cdf(-1.0)) / laplace.cdf(0.0)
    assert leak <= 1e-6


def test_exponential_mechanism_distribution():
    scores = np.array([0.0, 1.0, 2.0, 5.0])
    mech = Exponential(epsilon=1.0, sensitivity=1.0)
    p = mech.probabilities(scores)
    assert p == pytest.approx(np.exp(scores / 2) / np.exp(scores / 2).sum())
    counts = np.bincount(mech.sample(scores, rng(3), N), minlength=4)
    assert stats.chisquare(counts, p * N).pvalue > ALPHA
    huge = mech.release(np.array([1e6, 1e6 + 10]), rng())  # no overflow
    assert huge in (0, 1)


def test_report_noisy_max_scales_and_returns_only_the_index():
    assert ReportNoisyMax(0.5, 2.0).scale == 8.0 and ReportNoisyMax(0.5, 2.0, monotonic=True).scale == 4.0
    out = ReportNoisyMax(1.0).sample([0.0, 0.0, 100.0], rng(), 50)
    assert out.dtype.kind == "i" and np.all(out == 2)


def test_top_k_peeling_matches_sequential_exponential_mechanism():
    scores = np.array([0.0, 1.0, 3.0])
    mech = TopKPeeling(epsilon=2.0, k=2)
    pairs = mech.sample(scores, rng(4), N)
    assert pairs.shape == (N, 2) and np.all(pairs[:, 0] != pairs[:, 1])
    w = np.exp((2.0 / 2) * scores / 2)  # ε/k per round, sensitivity 1
    expected = {(a, b): w[a] / w.sum() * w[b] / (w.sum() - w[a]) for a in range(3) for b in range(3) if a != b}
    keys = list(expected)
    counts = np.array([np.sum((pairs[:, 0] == a) & (pairs[:, 1] == b)) for a, b in keys])
    assert stats.chisquare(counts, np.array([expected[k] for k in keys]) * N).pvalue > ALPHA
    with pytest.raises(ValueError, match="k=2"):
        mech.release([1.0])


def test_histogram_learner_is_lemma_a13():
    n = 2000
    mech = HistogramLearner(epsilon=1.0, delta=1e-5, n=n, bin_width=1.0, offset=0.0)
    assert mech.scale == 2 / (n * 1.0) and mech.threshold == pytest.approx(3 * math.log(2e5) / n)
    assert mech.exclusive_bin_probability() <= 1e-5
    points = np.vstack([np.full((n - 1, 2), 0.5), [[10.5, 10.5]]])
    hist = mech.release(points, rng())
    assert set(hist.frequencies) == {(0, 0)}  # the lone point's bin is suppressed
    assert hist.frequencies[(0, 0)] == pytest.approx((n - 1) / n, abs=0.02)
    with pytest.raises(ValueError, match="1/n"):
        HistogramLearner(1.0, 1e-3, n=2000)
    with pytest.raises(ValueError, match="one-point bin"):
        HistogramLearner(40.0, 1e-5, n=2000)
    with pytest.raises(ValueError, match="n=2000"):
        mech.release(points[:10])


def test_histogram_random_offset_is_drawn_per_release():
    mech = HistogramLearner(1.0, 1e-5, n=500, bin_width=2.0)
    offsets = {h.offset for h in mech.sample(np.zeros((500, 1)), rng(), 5)}
    assert len(offsets) == 5 and all(0 <= q < 2 for q in offsets)


def test_edge_split_puts_every_edge_in_exactly_one_part():
    graph = (rng().random((30, 30)) < 0.3).astype(float)
    graph = np.triu(graph, 1)
    graph = graph + graph.T
    g1, g2 = EdgeSplit(0.5).parts(graph, rng(7))
    assert np.array_equal(g1 + g2, graph) and np.all(g1 * g2 == 0)
    assert np.array_equal(g1, g1.T) and 0.3 < g1.sum() / graph.sum() < 0.7


def test_row_split_and_subsamples():
    data = np.arange(1000.0)
    parts = RowSplit((0.25, 0.75)).parts(data, rng())
    assert sorted(np.concatenate(parts)) == list(data) and 150 < len(parts[0]) < 350
    assert 50 < len(PoissonSample(0.1).subsample(data, rng())) < 150
    sub = SampleWithoutReplacement(size=10, n=1000).subsample(data, rng())
    assert len(set(sub)) == 10
    with pytest.raises(ValueError, match="sum to 1"):
        RowSplit((0.5, 0.6))
    with pytest.raises(ValueError, match="size"):
        SampleWithoutReplacement(size=11, n=10)


@pytest.mark.parametrize("factory", [
    lambda: Laplace(0.0), lambda: Laplace(math.nan), lambda: Laplace(1.0, sensitivity=0.0),
    lambda: Laplace(1.0, sensitivity=-1), lambda: Gaussian(1.0, 0.0), lambda: Gaussian(1.0, 1.0),
    lambda: Gaussian(math.inf, 1e-5), lambda: TruncatedLaplace(1.0, 0.0), lambda: Exponential(-1.0),
    lambda: TopKPeeling(1.0, k=0), lambda: HistogramLearner(1.0, 1e-6, n=0),
])
def test_bad_parameters_are_refused(factory):
    with pytest.raises((ValueError, TypeError)):
        factory()


@pytest.mark.parametrize("value", [math.nan, [1.0, math.inf], "abc"])
def test_bad_values_are_refused_before_noise(value):
    with pytest.raises((ValueError, TypeError)):
        Laplace(1.0).release(value, rng())


def test_default_generator_is_os_seeded_and_ints_are_refused():
    a, b = Laplace(1.0).release(0.0), Laplace(1.0).release(0.0)
    assert a != b
    with pytest.raises(TypeError, match="default_rng"):
        Laplace(1.0).release(0.0, rng=42)


# --- second review, finding 6: the exact sampler's limit is refused before any charge -------------

def test_the_samplers_limit_is_refused_when_the_mechanism_is_built():
    from dpledger.mechanisms import Gaussian, Laplace

    laplace = Laplace(5e-4, sensitivity=1e6)
    assert laplace.max_coordinates == 500_000  # 2^40 lattice steps at the finest lattice a D allows
    laplace.sample(np.zeros(laplace.max_coordinates), np.random.default_rng(0))  # the largest it serves
    with pytest.raises(ValueError, match="2\\^40"):
        Laplace(5e-4, sensitivity=1e6, coordinates=500_001)
    with pytest.raises(ValueError, match="2\\^40"):
        Gaussian.from_sigma(1e10, coordinates=10**9)
    with pytest.raises(ValueError, match="2\\^40"):
        Laplace(1e-10)  # below about 1e-9 no lattice serves even a scalar
    acct = dp.Accountant(dp.PureDP(1.0), relation=dp.ReplaceOne())
    undeclared = dp.Graph(dp.release("v", Laplace(5e-4, sensitivity=1e6), lambda x: np.zeros(10**6)),
                          relation=dp.ReplaceOne())
    with pytest.raises(dp.PrivacyError, match="coordinates="):  # a bug after the charge, naming the fix
        acct.run(undeclared, np.zeros(3), rng=np.random.default_rng(0))
    declared = Laplace(0.5, sensitivity=1.0, coordinates=3)
    with pytest.raises(ValueError, match="declared coordinates=3"):
        declared.release(np.zeros(4), np.random.default_rng(0))
