"""Exact vectorised discrete Laplace / Gaussian samplers (dpledger.mechanisms.exact).

Distributional checks are chi-square tests against the exact pmf on seeded samples, asserted at
p > 1e-6 (a false alarm is practically impossible; the seeds are fixed anyway), and the same tests
are shown to reject deliberately wrong samplers at p < 1e-20.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpledger.mechanisms import exact
from dpledger.mechanisms.exact import (bernoulli_exp, discrete_gaussian, discrete_laplace, gaussian_parameters,
                                      reference_discrete_laplace as reference_laplace)

N = 400_000
ALPHA = 1e-6


def laplace_pmf(t: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Support |z| <= 800·t/s + 10 (outside mass < e^-800) and P(z) = (1-q)/(1+q)·q^|z|, q = e^(-s/t)."""
    support = np.arange(-(800 * t // s + 10), 800 * t // s + 11)
    q = math.exp(-s / t)
    return support, (1 - q) / (1 + q) * q ** np.abs(support)


def gaussian_pmf(variance: int) -> tuple[np.ndarray, np.ndarray]:
    """Support |z| <= 40σ + 40 (outside mass < e^-800) and P(z) ∝ exp(-z²/(2σ²)), normalised."""
    width = int(40 * math.sqrt(variance)) + 40
    support = np.arange(-width, width + 1)
    weights = np.exp(-support.astype(float) ** 2 / (2 * variance))
    return support, weights / weights.sum()


def bins(support: np.ndarray, pmf: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Left edges and probabilities of bins of consecutive values, each expecting >= max(50, n/200)
    draws among n (the end bins also take the values outside the support)."""
    minimum = max(50.0, n / 200) / n
    cumulative = np.cumsum(pmf)
    starts, mass = [0], 0.0
    while True:
        end = int(np.searchsorted(cumulative, mass + minimum))
        if end >= len(support) - 1 or cumulative[-1] - cumulative[end] < minimum:
            break
        starts.append(end + 1)
        mass = cumulative[end]
    probabilities = np.diff(np.concatenate([[0.0], cumulative[np.array(starts[1:]) - 1], [cumulative[-1]]]))
    return support[starts], probabilities


def counts(samples: np.ndarray, edges: np.ndarray) -> np.ndarray:
    index = np.clip(np.searchsorted(edges, samples.ravel(), side="right") - 1, 0, len(edges) - 1)
    return np.bincount(index, minlength=len(edges))


def gof_pvalue(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    edges, probabilities = bins(support, pmf, samples.size)
    observed = counts(samples, edges)
    return float(stats.chisquare(observed, probabilities / probabilities.sum() * observed.sum()).pvalue)


def two_sample_pvalue(a: np.ndarray, b: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    edges, _ = bins(support, pmf, min(a.size, b.size))
    return float(stats.chi2_contingency(np.array([counts(a, edges), counts(b, edges)])).pvalue)


@pytest.fixture
def spies(monkeypatch):
    """Counts of calls into the Python-int path (one call a draw)."""
    calls = {"bernoulli_exp": 0, "laplace": 0}

    def counting(name, function):
        def wrapped(*args):
            calls[name] += 1
            return function(*args)
        return wrapped

    monkeypatch.setattr(exact, "_python_bernoulli_exp", counting("bernoulli_exp", exact._python_bernoulli_exp))
    monkeypatch.setattr(exact, "_python_laplace", counting("laplace", exact._python_laplace))
    return calls


# --- exactness against the pmf --------------------------------------------------------------------

@pytest.mark.parametrize(("t", "s"), [(1, 1), (7, 3), (1000, 1)])
def test_discrete_laplace_matches_pmf(t, s, spies):
    samples = discrete_laplace(t, s, N, np.random.default_rng(10 + t))
    assert gof_pvalue(samples, *laplace_pmf(t, s)) > ALPHA
    assert spies == {"bernoulli_exp": 0, "laplace": 0}  # all int64


@pytest.mark.parametrize(("t", "m"), [(1, 1), (2, 1), (10, 10), (1000, 1000)])
def test_discrete_gaussian_matches_pmf(t, m, spies):
    samples = discrete_gaussian(t, m, N, np.random.default_rng(20 + t))
    assert gof_pvalue(samples, *gaussian_pmf(t * m)) > ALPHA
    assert spies == {"bernoulli_exp": 0, "laplace": 0}


def test_the_gaussian_test_rejects_m_off_by_one():
    samples = discrete_gaussian(10, 11, N, np.random.default_rng(3))  # σ² = 110, tested against 100
    assert gof_pvalue(samples, *gaussian_pmf(100)) < 1e-20


def test_the_laplace_test_rejects_a_missing_sign_rejection():
    rng = np.random.default_rng(4)
    # Without "if B and Y == 0: retry" the output is ±Y with Y geometric: Y is our Z given Z >= 0.
    z = discrete_laplace(7, 3, 3 * N, rng)
    magnitude = z[z >= 0][:N]
    wrong = np.where(rng.integers(0, 2, magnitude.size) == 1, -magnitude, magnitude)
    assert gof_pvalue(wrong, *laplace_pmf(7, 3)) < 1e-20


def test_vectorised_laplace_matches_the_python_reference():
    rng = np.random.default_rng(5)
    reference = np.array([reference_laplace(Fraction(7, 3), rng) for _ in range(20_000)])
    ours = discrete_laplace(7, 3, 100_000, rng)
    assert two_sample_pvalue(ours, reference, *laplace_pmf(7, 3)) > ALPHA


# --- bernoulli_exp --------------------------------------------------------------------------------

@pytest.mark.parametrize(("numerator", "denominator"), [(3, 10), (1, 1), (5, 2), (10, 1), (30, 3)])
def test_bernoulli_exp_frequency(numerator, denominator):
    n = 1_000_000
    draws = bernoulli_exp(np.full(n, numerator), denominator, np.random.default_rng(numerator))
    assert draws.dtype == bool and draws.shape == (n,)
    assert stats.binomtest(int(draws.sum()), n, math.exp(-numerator / denominator)).pvalue > ALPHA


def test_bernoulli_exp_of_zero_is_always_true():
    assert bernoulli_exp(np.zeros(10_000, dtype=np.int64), np.arange(1, 10_001), np.random.default_rng(0)).all()


def test_bernoulli_exp_broadcasts_per_element_parameters():
    rng = np.random.default_rng(6)
    gammas = [(0, 1), (3, 10), (5, 2)]
    denominators = np.array([[b for _, b in gammas]]).repeat(300_000, 0)
    draws = bernoulli_exp(np.array([[a for a, _ in gammas]]), denominators, rng)
    assert draws.shape == (300_000, 3)
    for column, (a, b) in enumerate(gammas):
        assert stats.binomtest(int(draws[:, column].sum()), 300_000, math.exp(-a / b)).pvalue > ALPHA


# --- the exact Python-int path --------------------------------------------------------------------

@pytest.mark.parametrize("safe", [2**8, 2**7])  # 2tm = 200: fast then slow acceptance denominators
def test_forced_python_int_path_gaussian(monkeypatch, spies, safe):
    monkeypatch.setattr(exact, "_SAFE", safe)
    samples = discrete_gaussian(10, 10, 100_000, np.random.default_rng(7))
    assert spies["bernoulli_exp"] > 1000  # x² > _SAFE for |x| > 16 (or 11)
    assert gof_pvalue(samples, *gaussian_pmf(100)) > ALPHA


def test_forced_python_int_path_laplace(monkeypatch, spies):
    monkeypatch.setattr(exact, "_SAFE", 2**6)
    fast = discrete_laplace(20, 1, 100_000, np.random.default_rng(8))  # t·(V + 1) > 64 for V >= 3: Python ints
    assert gof_pvalue(fast, *laplace_pmf(20, 1)) > ALPHA
    slow = discrete_laplace(1000, 1, 10_000, np.random.default_rng(9))  # t > _SAFE: the reference throughout
    assert spies["laplace"] == 10_000
    assert gof_pvalue(slow, *laplace_pmf(1000, 1)) > ALPHA


def test_forced_split_bernoulli(monkeypatch):
    monkeypatch.setattr(exact, "_SAFE", 12)  # d·K > 12 for d = 10, K >= 2: Bernoulli(r/d)·Bernoulli(1/K)
    draws = bernoulli_exp(np.full(500_000, 7), 10, np.random.default_rng(10))
    assert stats.binomtest(int(draws.sum()), 500_000, math.exp(-0.7)).pvalue > ALPHA


def test_bernoulli_exp_beyond_int64():
    rng = np.random.default_rng(11)
    big = 2**70 + 12345
    numerators = np.array([3 * big // 10, 5 * big // 2, 0] * 5_000, dtype=object)
    draws = bernoulli_exp(numerators, big, rng).reshape(-1, 3)
    for column, gamma in enumerate([Fraction(3 * big // 10, big), Fraction(5 * big // 2, big)]):
        assert stats.binomtest(int(draws[:, column].sum()), 5_000, math.exp(-gamma)).pvalue > ALPHA
    assert draws[:, 2].all()
    mixed = bernoulli_exp(np.array([2**80, 0, 3], dtype=object), np.array([1, 2**75, 1], dtype=object), rng)
    assert mixed[1] and not mixed[0]  # exp(-2**80) is not 0, but no run of 2**80 successes will happen


def test_laplace_with_huge_unreduced_parameters():
    rng = np.random.default_rng(12)
    assert np.array_equal(discrete_laplace(7 * 2**70, 3 * 2**70, 1000, np.random.default_rng(1)),
                          discrete_laplace(7, 3, 1000, np.random.default_rng(1)))  # reduced to 7/3: fast
    samples = discrete_laplace(2**70 + 1, 2**69, 5_000, rng)  # scale just above 2, Python ints throughout
    assert samples.dtype == np.int64
    support, _ = laplace_pmf(2, 1)
    q = math.exp(-(2**69) / (2**70 + 1))
    assert gof_pvalue(samples, support, (1 - q) / (1 + q) * q ** np.abs(support)) > ALPHA


# --- reproducibility, shapes, parameters ----------------------------------------------------------

@pytest.mark.parametrize("sampler", [lambda shape, rng: discrete_laplace(7, 3, shape, rng),
                                     lambda shape, rng: discrete_gaussian(100, 101, shape, rng)])
def test_reproducible_int64_and_shaped(sampler):
    first, second = sampler((40, 50), np.random.default_rng(13)), sampler((40, 50), np.random.default_rng(13))
    assert np.array_equal(first, second) and first.dtype == np.int64 and first.shape == (40, 50)
    assert not np.array_equal(first, sampler((40, 50), np.random.default_rng(14)))
    for shape, expected in [(0, (0,)), ((0,), (0,)), ((3, 0, 2), (3, 0, 2)), (5, (5,)), ((), ())]:
        draws = sampler(shape, np.random.default_rng(0))
        assert draws.shape == expected and draws.dtype == np.int64


def test_bernoulli_exp_reproducible_and_shaped():
    rng = lambda: np.random.default_rng(15)  # noqa: E731
    numerators = np.arange(600).reshape(20, 30)
    assert np.array_equal(bernoulli_exp(numerators, 100, rng()), bernoulli_exp(numerators, 100, rng()))
    assert bernoulli_exp(np.zeros((0, 3), dtype=np.int64), 1, rng()).shape == (0, 3)
    assert bernoulli_exp(0, 1, rng()).shape == ()


@given(st.one_of(st.floats(min_value=1e-6, max_value=2.0**40), st.integers(1, 2**40),
                 st.fractions(min_value=Fraction(1, 1000), max_value=10**6)))
def test_gaussian_parameters_never_below_sigma_squared(sigma):
    t, m = gaussian_parameters(sigma)
    exact_sigma = Fraction(sigma)
    assert isinstance(t, int) and isinstance(m, int) and t >= 1 and m >= 1
    assert t == max(1, math.ceil(exact_sigma)) and exact_sigma**2 <= t * m < exact_sigma**2 + t


def test_gaussian_parameters_examples():
    assert gaussian_parameters(1e5) == (100_000, 100_000)
    assert gaussian_parameters(0.5) == (1, 1)
    assert gaussian_parameters(2.5) == (3, 3)  # m = ceil(6.25 / 3)
    assert gaussian_parameters(2**40) == (2**40, 2**40)


@pytest.mark.parametrize("sigma", [0, -1.0, float("nan"), float("inf"), 2.0**40 + 1, "1", True, None])
def test_gaussian_parameters_refuses(sigma):
    with pytest.raises(ValueError, match="sigma"):
        gaussian_parameters(sigma)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: discrete_laplace(0, 1, 3), "t"),
    (lambda: discrete_laplace(1.5, 1, 3), "t"),
    (lambda: discrete_laplace(True, 1, 3), "t"),
    (lambda: discrete_laplace(1, 0, 3), "s"),
    (lambda: discrete_laplace(2**41, 1, 3), "scale"),
    (lambda: discrete_laplace(1, 1, -1), "shape"),
    (lambda: discrete_laplace(1, 1, (2, -1)), "shape"),
    (lambda: discrete_laplace(1, 1, 2.0), "shape"),
    (lambda: discrete_gaussian(0, 1, 3), "t"),
    (lambda: discrete_gaussian(1, 2.0, 3), "m"),
    (lambda: discrete_gaussian(1, 2**41, 3), "m"),
    (lambda: bernoulli_exp(-1, 1), "numerator"),
    (lambda: bernoulli_exp(np.array([0.5]), 1), "numerator"),
    (lambda: bernoulli_exp(np.array([1, 2], dtype=object), np.array([1, 2.0], dtype=object)), "denominator"),
    (lambda: bernoulli_exp(1, 0), "denominator"),
    (lambda: bernoulli_exp([True], 1), "numerator"),
])
def test_bad_input_is_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()
