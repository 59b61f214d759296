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

from dpledger.mechanisms import exact, exact_python
from dpledger.mechanisms.exact import bernoulli_exp, discrete_gaussian, discrete_laplace, gaussian_parameters
from dpledger.mechanisms.exact_python import reference_discrete_laplace as reference_laplace

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
    few = np.concatenate([discrete_laplace(7, 3, 5, rng) for _ in range(10_000)])  # the Python-int path
    assert two_sample_pvalue(few, reference, *laplace_pmf(7, 3)) > ALPHA


@pytest.mark.parametrize("size", [1, 5, exact._FEW])
def test_small_calls_match_the_pmf(size, spies):
    """Calls of up to _FEW draws (2·_FEW for the Gaussian) take the Python-int path, one call a draw."""
    rng = np.random.default_rng(30 + size)
    calls = 50_000 // size
    laplace = np.concatenate([discrete_laplace(7, 3, size, rng) for _ in range(calls)])
    assert gof_pvalue(laplace, *laplace_pmf(7, 3)) > ALPHA
    assert spies["laplace"] == calls * size
    gaussian = np.concatenate([discrete_gaussian(10, 11, 2 * size, rng) for _ in range(calls // 2)])
    assert gof_pvalue(gaussian, *gaussian_pmf(110)) > ALPHA


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


@pytest.mark.parametrize(("numerator", "denominator"), [(3, 10), (7, 3)])
def test_bernoulli_exp_frequency_in_small_calls(numerator, denominator):
    rng = np.random.default_rng(numerator + 40)
    draws = np.concatenate([bernoulli_exp(np.full(10, numerator), denominator, rng) for _ in range(10_000)])
    assert stats.binomtest(int(draws.sum()), draws.size, math.exp(-numerator / denominator)).pvalue > ALPHA


# --- Algorithm 1 in chunks, the exp(-1) table, V, the word source ---------------------------------

def k_law(gamma: Fraction, start: int, n: int) -> tuple[list[int], np.ndarray]:
    """Values of K (the last one standing for K >= it) and their probabilities given K >= start,
    P(K > k) = γ/start·γ/(start + 1)···γ/k, merged at the top so each expects >= 50 of n draws."""
    values, probabilities, survive, k = [], [], Fraction(1), start
    while survive * n >= 100:
        values.append(k)
        probabilities.append(survive * (1 - gamma / k))
        survive *= gamma / k
        k += 1
    values.append(k)
    probabilities.append(survive)
    return values, np.array([float(p) for p in probabilities])


def k_pvalue(k: np.ndarray, gamma: Fraction, start: int) -> float:
    values, probabilities = k_law(gamma, start, k.size)
    observed = np.bincount(np.clip(k - start, 0, len(values) - 1), minlength=len(values))
    possible = probabilities > 0  # K = 1 is impossible for γ = 1
    assert not observed[~possible].any()
    return float(stats.chisquare(observed[possible], probabilities[possible] * k.size).pvalue)


@pytest.mark.parametrize(("a", "b"), [(3, 10), (1, 1), (700, 1025), (2 * 10**10 - 1, 2 * 10**10), (0, 5)])
@pytest.mark.parametrize("steps", [exact._STEPS, 1, 2])
def test_algorithm1_k_matches_its_law(monkeypatch, a, b, steps):
    """K by chunks of up to _STEPS steps a uniform, and with chunks of one or two steps (many chunks)."""
    monkeypatch.setattr(exact, "_STEPS", steps)
    k = exact._algorithm1(np.full(200_000, a), b, np.random.default_rng(a % 1000 + steps))
    if a == 0:
        assert (k == 1).all()
    else:
        assert k_pvalue(k, Fraction(a, b), 1) > ALPHA


def test_algorithm1_from_a_later_step_and_per_element_denominators():
    rng = np.random.default_rng(50)
    k = exact._algorithm1(np.full(200_000, 9), 10, rng, k=3)  # past steps 1 and 2: K >= 3
    assert k.min() >= 3 and k_pvalue(k, Fraction(9, 10), 3) > ALPHA
    gammas = [(1, 2), (5, 7), (999, 1000)]
    k = exact._algorithm1(np.tile([a for a, _ in gammas], 100_000), np.tile([b for _, b in gammas], 100_000), rng)
    for column, (a, b) in enumerate(gammas):
        assert k_pvalue(k.reshape(-1, 3)[:, column], Fraction(a, b), 1) > ALPHA


class Enumerating:
    """A stand-in generator: its first ``integers`` call returns every value 0, ..., N - 1 once (one
    element each); later calls return their largest value, so each later chunk stops at its first step."""

    def __init__(self):
        self.first = True

    def integers(self, low, high, size):
        if self.first:
            self.first = False
            assert size == high
            return np.arange(high)
        return np.full(size, high - 1)


@pytest.mark.parametrize(("a", "b", "start", "steps"), [(2, 3, 1, 6), (4, 5, 3, 3), (1, 1, 1, 6), (0, 4, 2, 3)])
def test_algorithm1_chunk_thresholds_exactly(monkeypatch, a, b, start, steps):
    """Over all N values of one chunk's uniform, exactly N·P(K = k | K >= start) give K = k for each k
    decided in the chunk, and the rest, N·P(K >= start + j), go on to the next chunk."""
    monkeypatch.setattr(exact, "_STEPS", steps)
    j = exact._steps(b, start)
    span = math.prod(b * (start + i) for i in range(j))
    k = exact._algorithm1(np.full(span, a), b, Enumerating(), k=start)
    gamma, survive = Fraction(a, b), Fraction(1)
    for step in range(start, start + j):
        assert np.count_nonzero(k == step) == span * survive * (1 - gamma / step)
        survive *= gamma / step
    assert np.count_nonzero(k >= start + j) == span * survive


def test_exp_one_table_exactly():
    """The table's counts are those of K = 1, ..., 8 over the 8! values of R; R = 0 alone is undecided
    (K > 8), and the decided successes bracket exp(-1)."""
    codes = np.bincount(exact_python._EXP_ONE, minlength=3)
    span = math.factorial(8)
    survive = [span // math.factorial(k) for k in range(9)]  # #{R : K > k}
    assert codes[1] == sum(survive[k - 1] - survive[k] for k in range(1, 9, 2))  # K odd: success
    assert codes[0] == sum(survive[k - 1] - survive[k] for k in range(2, 9, 2))
    assert codes[2] == 1 and exact_python._EXP_ONE[0] == 2
    assert codes[1] / span < math.exp(-1) < (codes[1] + 1) / span
    assert exact_python._EXP_ONE_CODES == exact_python._EXP_ONE.tobytes()


def test_exp_one_past_the_table(monkeypatch):
    """R = 0 (probability 1/8!) continues Algorithm 1 from step 9: forced for every trial here."""
    monkeypatch.setattr(exact, "_EXP_ONE", np.full_like(exact._EXP_ONE, 2))
    n = 200_000
    draws = exact._exp_one(n, np.random.default_rng(51))
    survive = lambda k: Fraction(math.factorial(8), math.factorial(k))  # noqa: E731  P(K > k | K > 8), k >= 8
    p = sum(survive(k - 1) - survive(k) for k in range(9, 61, 2))  # P(K odd | K > 8), to within 1/60!
    assert stats.binomtest(int(draws.sum()), n, float(p)).pvalue > ALPHA


@pytest.mark.parametrize("limit", [None, 3])
@pytest.mark.parametrize("size", [200_000, 100])  # rounds of one trial an element, then of _WIDTH; or only the latter
def test_run_of_exp_one_successes(limit, size):
    rng = np.random.default_rng(52 + size)
    limits = None if limit is None else np.full(size, limit)
    v = np.concatenate([exact._successes(limits, size, rng) for _ in range(200_000 // size)])
    top = 12 if limit is None else limit
    probabilities = np.array([math.exp(-k) * (1 - math.exp(-1)) for k in range(top)] + [math.exp(-top)])
    observed = np.bincount(np.minimum(v, top), minlength=top + 1)
    assert v.max() <= (limit or v.max()) and observed[:top].sum() + observed[top] == v.size
    assert stats.chisquare(observed, probabilities * v.size).pvalue > ALPHA


class Words:
    """A stand-in generator handing out the given words, then zeros."""

    def __init__(self, words):
        self.words = list(words)

    def integers(self, low, high, size):
        assert (low, high) == (0, 2**62)
        chunk, self.words = self.words[:size], self.words[size:]
        return np.array(chunk + [0] * (size - len(chunk)), dtype=np.int64)


def test_uniforms_rejection_boundary():
    """2**62 = 1 (mod 3): the word 2**62 - 1 starts an incomplete run of 3 and is rejected, 2**62 - 2 is not."""
    uniforms = exact_python._Uniforms(Words([2**62 - 1, 2**62 - 2, 5, 2**62 - 1]), block=8)
    assert uniforms.below(3) == (2**62 - 2) % 3
    assert uniforms.below(3) == 2
    assert uniforms.below(2) == 1  # 2 divides 2**62: the word 2**62 - 1 ends the last full run, accepted
    assert uniforms.below(2**62) == 0  # nothing is rejected either (then the stand-in's zeros)
    uniforms = exact_python._Uniforms(Words([1, 2]), block=1)  # two words read as one integer, one block each
    assert uniforms.below(2**62 + 5) == (1 * 2**62 + 2) % (2**62 + 5)


@pytest.mark.parametrize("m", [6, 2**61 + 1, 3 * 2**70 + 5])  # small; rejection about 1/2; three words
def test_uniforms_below_is_uniform(m):
    below = exact_python._Uniforms(np.random.default_rng(m % 97), block=1000).below
    draws = [below(m) for _ in range(60_000)]
    assert 0 <= min(draws) and max(draws) < m
    cells = np.bincount([r * 6 // m for r in draws], minlength=6)  # six cells of (almost exactly) equal size
    assert stats.chisquare(cells).pvalue > ALPHA


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


def test_small_gaussian_calls_at_the_largest_sigma():
    """σ = 2**40 (t = m = 2**40, the limits): 2tm = 2**81 and x² are Python ints throughout. Y // 2**36
    is N(0, 16²) rounded down, to within about 1/σ in each cell."""
    rng = np.random.default_rng(53)
    samples = np.concatenate([discrete_gaussian(2**40, 2**40, 8, rng) for _ in range(6_000)]) // 2**36
    support = np.arange(-200, 200)
    assert gof_pvalue(samples, support, np.diff(stats.norm.cdf(np.arange(-200, 201) / 16))) > ALPHA


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
    for shape in [(40, 50), 5]:  # the numpy and the Python-int paths
        first, second = sampler(shape, np.random.default_rng(13)), sampler(shape, np.random.default_rng(13))
        assert np.array_equal(first, second) and first.dtype == np.int64 and first.shape == np.empty(shape).shape
        assert not np.array_equal(first, sampler(shape, np.random.default_rng(14)))
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
