"""Exact vectorised samplers for the discrete Laplace and discrete Gaussian distributions.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020) sample
Bernoulli(exp(-γ)) for rational γ (Algorithm 1), the discrete Laplace (Algorithm 2) and the
discrete Gaussian (Algorithm 3) from uniform integers with integer arithmetic only, so the outputs
have exactly the stated distributions; rounding floating-point Laplace or normal draws does not,
and its flaws leak through the released bits (Mironov 2012). The algorithms are run here three
ways: as stated, one uniform per Bernoulli trial, with Python integers (``reference_*``: the
oracle the tests compare against); a lean Python-int path (``_python_*``: any size of integer,
2-4 µs a draw) for calls of a few draws and for values beyond int64; and on numpy arrays for
every element still undecided ("rounds"), so that millions of draws take well under a second.

Algorithm 1 for γ = a/b in [0, 1] counts K = 1, 2, ... while Bernoulli(γ/K) succeeds and returns
"K odd" (P(K > k) = γ^k/k!). The numpy path decides j steps at a time with one uniform: from
step k, with R uniform on [0, N), N = b^j·k(k + 1)···(k + j - 1), the integers T_i =
a^i·b^(j-i)·(k + i)···(k + j - 1) have T_0 = N, T_i/T_(i-1) = γ/(k + i - 1) <= 1 and
T_i/N = γ/k·γ/(k + 1)···γ/(k + i - 1), the probability that steps k, ..., k + i - 1 all pass. So
the events R < T_i are nested with exactly the algorithm's probabilities, and K = k + #{i <= j :
R < T_i} unless R < T_j (all j steps passed): then the loop goes on from step k + j with fresh
uniforms, as the algorithm itself would, independently of how it got there. For γ = 1 (a = b =
1, k = 1, j = 8) both fast paths look the outcome up in a table of the 8! values of R.

Exactness assumes only that ``Generator.integers(0, b)`` is exactly uniform on [0, b) (numpy:
Lemire's method with rejection; the Python-int path draws blocks of words on [0, 2**62) and
turns them into uniforms below any bound by rejection, _Uniforms). Each uniform is used once,
and what it is used for depends only on earlier outcomes, so each element follows its algorithm
exactly and the elements are independent; uniforms drawn but not needed are discarded. Rejected
candidates are the algorithms' own retry loop: the candidates are independent and identically
distributed, so the accepted ones, taken in the order drawn, are independent draws of the target
(surplus ones are discarded). No exp, log or float enters the sampling path.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from .. import _random
from .exact_python import (_EXP_ONE, _ONE_SPAN, _ONE_STEPS, _UNDECIDED, _python_bernoulli_exp, _python_gaussian,
                           _python_laplace, _uniforms)


# Laplace calls of at most this many draws take the Python-int path (about 2.5 µs a draw, against
# about 60 µs for a numpy batch), and Gaussian calls of at most twice as many (4 µs against 130).
_FEW = 20

# Integer safety of the int64 fast path, in one place. Its int64 inputs lie in [0, _SAFE]: they
# are admitted only where _within(value, 1), and the Laplace's t where _within(t, 2), for the
# bound 2t of (U, sign). The products it forms are formed only where _within(a, b) holds, and
# for integers a >= 0, b >= 1: a <= _SAFE // b <=> a·b <= _SAFE. They are: the bound N =
# b^j·k···(k + j - 1) of a chunk of Algorithm 1, a product that _steps builds factor by factor
# under that check (in Python ints, for the largest b), and its thresholds T_i =
# a^i·(b^(j-i)·(k + i)···(k + j - 1)), the factor in brackets a suffix of N's product and a^i <=
# b^i as a <= b, so that every partial product is at most N; whole·b <= a in the reduction of
# γ > 1; t·(V + 1) (Algorithm 2) and x·x (Algorithm 3). Its other arithmetic cannot leave int64
# either: U + t·V < t·(V + 1); a // b, W // 2, W mod 2, negation of values in range; |Y| - m
# lies in [-m, |Y|] for an int64 draw Y and 1 <= m <= 2**40; a chunk's count of steps passed is
# at most _STEPS (int8), and K (from the Python int k), V and the γ > 1 count grow by at most
# _STEPS or _WIDTH a round; table draws are below 8!. Where a check fails: a step of Algorithm 1
# with b·k > _SAFE is drawn as Bernoulli(a/b)·Bernoulli(1/k) (no product); U + t·V and x² are
# computed in Python ints (arbitrary precision) for those elements; elements whose inputs exceed
# _SAFE take the Python-int path.
_SAFE = 2**62

# Largest discrete Laplace scale t/s and Gaussian t, m (so sigma <= 2**40). A draw has
# |Y| < (t/s)·(V + 1) <= 2**40·(V + 1) with P(V >= k) = e**-k, so it fits in int64 unless
# V >= 2**23 - 1 (then the int64 conversion raises OverflowError rather than wrap). For s = 1, as
# in the Gaussian, t·(V + 1) <= 2**62 also keeps Algorithm 2 in int64 unless V >= 2**22 - 1.
# The Gaussian's acceptance test x²/(2tm), x = |Y| - m, is in int64 while 2tm <= 2**62 (true for
# sigma <= 2**30) and x² <= 2**62 (|x| <= 2**31: all but a fraction e**-(2**31/t) of the draws);
# beyond, it takes the exact Python-int path, one element at a time (a few µs each).
MAX_SCALE = 2**40

# At most this many of Algorithm 1's steps are decided by one uniform: the rest of the loop is
# reached with probability γ^6/6! <= 1/720, rarely enough not to pay for more thresholds.
_STEPS = 6

# Rounds of more than _WIDE elements draw one Bernoulli(exp(-1)) trial for each (fewest spare
# trials); smaller rounds draw _WIDTH for each (fewest rounds: a run of six has probability e**-6).
_WIDE = 128
_WIDTH = 6


def _within(values, factor):
    """Where values·factor <= _SAFE (values >= 0, factor >= 1), decided without the product."""
    return values <= _SAFE // factor


def _at(values, index):
    """``values[index]``, or ``values`` itself when it is one int shared by all elements."""
    return values[index] if isinstance(values, np.ndarray) else values


def _int64(values):
    """Values already checked to be within _SAFE, as int64 (a shared int stays a Python int)."""
    return values.astype(np.int64, copy=False) if isinstance(values, np.ndarray) else values


def _steps(b: int, k: int) -> int:
    """j for a chunk of Algorithm 1 from step k with denominators up to b: the largest j <= _STEPS
    with N = b^j·k·(k + 1)···(k + j - 1) <= _SAFE (j = 0 where b·k > _SAFE). N grows with b, so
    it is within _SAFE for every denominator up to b."""
    j, span = 0, 1
    while j < _STEPS and _within(span, b * (k + j)):
        span *= b * (k + j)
        j += 1
    return j


def _algorithm1(numerator: np.ndarray, denominator, rng: np.random.Generator, k: int = 1) -> np.ndarray:
    """K of Algorithm 1 (int64) for γ = numerator/denominator in [0, 1] (int64, denominator an
    array alike or one shared int), for elements past its step k - 1: its loop from step k on, in
    chunks of j steps decided by one uniform R on [0, N) an element (_steps; module docstring):
    steps k, ..., k + i - 1 all pass iff R < T_i = a^i·b^(j-i)·(k + i)···(k + j - 1), so K =
    k + #{i : R < T_i} unless R < T_j: those elements are past all j steps and go on to the next
    chunk. Where b·k > _SAFE (j = 0), step k is Bernoulli(a/b)·Bernoulli(1/k), with no product."""
    result = np.empty(numerator.size, dtype=np.int64)
    running = slice(None)  # all elements, in the first chunk
    a, b, shared = numerator, denominator, not isinstance(denominator, np.ndarray)
    while a.size:
        j = _steps(b if shared else int(b.max()), k)
        if j == 0:
            more = (rng.integers(0, b, size=a.size) < a) & (rng.integers(0, k, size=a.size) == 0)
            passed, j = 0, 1
        else:
            # factors[i] = b^i·(k + j - i)···(k + j - 1), so that T_i = a^i·factors[j - i] and N = factors[j]
            factors = [1]
            for i in range(j):
                factors.append(factors[-1] * (b * (k + j - 1 - i)))
            r = rng.integers(0, factors[j], size=a.size)
            passed, power = np.zeros(a.size, dtype=np.int8), a  # steps passed (<= j <= _STEPS); a^i
            for i in range(1, j + 1):
                if i > 1:
                    power = power * a
                more = r < power * factors[j - i]
                passed += more
        result[running] = np.add(passed, k, dtype=np.int64)  # K, final where the element stops
        running = np.flatnonzero(more) if isinstance(running, slice) else running.compress(more)
        a, b, k = a.compress(more), b if shared else b.compress(more), k + j
    return result


def _bernoulli_exp_unit(numerator: np.ndarray, denominator, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-γ)) for γ = numerator/denominator in [0, 1]: "K odd" (Algorithm 1)."""
    return (_algorithm1(numerator, denominator, rng) & 1).astype(bool)


def _exp_one(shape, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-1)) trials of the given shape, with the table; from step 9 on, _algorithm1."""
    codes = _EXP_ONE[rng.integers(0, _ONE_SPAN, size=shape)]
    undecided = codes == _UNDECIDED
    if undecided.any():
        codes[undecided] = _algorithm1(np.ones(int(undecided.sum()), dtype=np.int64), 1, rng, _ONE_STEPS + 1) & 1
    return codes == 1


def _successes(limit, size: int, rng: np.random.Generator) -> np.ndarray:
    """How many Bernoulli(exp(-1)) trials in a row succeed before the first failure, counting at
    most ``limit`` (an int64 array; None: no limit): Algorithm 2's V, and with limit floor(γ) the
    reduction of γ > 1. A round draws several trials for each element still running, and its
    count grows by those that succeed before the first failure; trials past it are discarded."""
    count = np.zeros(size, dtype=np.int64)
    running = np.arange(size) if limit is None else np.flatnonzero(limit)
    while running.size > _WIDE:
        running = running.compress(_exp_one(running.size, rng))
        count[running] += 1
        if limit is not None:
            running = running.compress(count[running] < limit[running])
    while running.size:
        passed = np.logical_and.accumulate(_exp_one((running.size, _WIDTH), rng), axis=1).sum(axis=1)
        total = count[running] + passed
        more = passed == _WIDTH
        if limit is not None:
            total = np.minimum(total, limit[running])
            more &= total < limit[running]
        count[running] = total
        running = running[more]
    return count


def _bernoulli_exp_fast(numerator: np.ndarray, denominator, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-numerator/denominator)) for int64 values in [0, _SAFE]. CKS's reduction for
    γ > 1: floor(γ) Bernoulli(exp(-1)) and one Bernoulli(exp(-(γ - floor γ))) must all succeed;
    an element stops drawing at its first failure."""
    whole = numerator // denominator
    result = _successes(whole, numerator.size, rng) == whole
    alive = np.flatnonzero(result)
    rest = numerator[alive] - whole[alive] * _at(denominator, alive)
    result[alive] = _bernoulli_exp_unit(rest, _at(denominator, alive), rng)
    return result


def _bernoulli_exp(numerator: np.ndarray, denominator, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-numerator/denominator)) for a 1-D int64 or object (Python int) numerator and
    a denominator alike or one shared scalar; elements beyond _SAFE go to the Python-int path."""
    fast = _within(numerator, 1) & _within(denominator, 1)
    if np.all(fast):
        return _bernoulli_exp_fast(_int64(numerator), _int64(denominator), rng)
    result = np.empty(numerator.size, dtype=bool)
    fast, slow = np.flatnonzero(fast), np.flatnonzero(~fast)
    if fast.size:
        result[fast] = _bernoulli_exp_fast(_int64(numerator[fast]), _int64(_at(denominator, fast)), rng)
    below = _uniforms(rng, slow.size).below
    denominators = np.broadcast_to(denominator, numerator.shape)[slow]
    result[slow] = [_python_bernoulli_exp(int(a), int(b), below) for a, b in zip(numerator[slow], denominators)]
    return result


def _magnitude(u: np.ndarray, v: np.ndarray, t: int, s: int) -> np.ndarray:
    """Y = (U + t·V) // s: in int64 where t·(V + 1) <= _SAFE, in Python ints elsewhere."""
    fast = _within(v + 1, t)
    if fast.all():
        return (u + t * v) // s
    y = np.empty(u.size, dtype=np.int64)
    y[fast] = (u[fast] + t * v[fast]) // s
    y[~fast] = [(int(a) + t * int(b)) // s for a, b in zip(u[~fast], v[~fast])]
    return y


def _laplace_candidates(t: int, s: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 2 run once for each of n candidates (2t <= _SAFE): the accepted draws, in order
    (over half of them: U is kept with probability over 1 - 1/e, the sign with at least 1/2). U
    and the sign B come from one uniform W on [0, 2t), U = W // 2 and B = W mod 2 (independent and
    uniform); B is drawn with U rather than after V, which changes nothing, as it is independent
    of everything else in the candidate."""
    w = rng.integers(0, 2 * t, size=n)
    w = w.compress(_bernoulli_exp_unit(w >> 1, t, rng))
    y = _magnitude(w >> 1, _successes(None, w.size, rng), t, s)
    negative = (w & 1) == 1
    return np.where(negative, -y, y).compress(~negative | (y != 0))


def _squares(x: np.ndarray) -> np.ndarray:
    """x² element-wise: int64 when every square is at most _SAFE, else Python ints (object)."""
    magnitude = np.abs(x)
    if np.all(_within(magnitude, np.maximum(magnitude, 1))):
        return magnitude * magnitude
    return magnitude.astype(object) ** 2


def _gaussian_candidates(t: int, m: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 3 (with Laplace scale t) run once for each of n candidates: the accepted draws."""
    y = _laplace_candidates(t, 1, n, rng)
    return y.compress(_bernoulli_exp(_squares(np.abs(y) - m), 2 * t * m, rng))


def _fill(candidates, size: int, percent: int) -> np.ndarray:
    """``size`` draws from ``candidates(n)`` (the accepted among n independent candidates, in
    order), in batches of ``percent``/100 candidates (the inverse of a lower bound on the
    acceptance rate) for the draws still missing plus a margin of about three standard
    deviations, so that one batch nearly always suffices."""
    result = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        missing = size - filled
        draws = candidates((missing + 3 * math.isqrt(missing) + 4) * percent // 100)[:missing]
        result[filled:filled + draws.size] = draws
        filled += draws.size
    return result


def _discrete_laplace(t: int, s: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with P(z) ∝ exp(-|z|·s/t) (CKS Algorithm 2)."""
    if size <= _FEW or not (_within(t, 2) and _within(s, 1)):
        below = _uniforms(rng, size).below
        return np.array([_python_laplace(t, s, below) for _ in range(size)], dtype=np.int64)
    return _fill(lambda n: _laplace_candidates(t, s, n, rng), size, 160)  # acceptance >= 0.63 for t/s >= 1


def _discrete_gaussian(t: int, m: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with P(z) ∝ exp(-z²/(2tm)) (CKS Algorithm 3 with Laplace scale t)."""
    if size <= 2 * _FEW:
        below = _uniforms(rng, size).below
        return np.array([_python_gaussian(t, m, below) for _ in range(size)], dtype=np.int64)
    return _fill(lambda n: _gaussian_candidates(t, m, n, rng), size, 210)  # acceptance about 0.48


def _integer(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _shape(shape: int | tuple[int, ...]) -> tuple[int, ...]:
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return tuple(_integer("shape", n, 0) for n in dims)


def _integer_array(name: str, value: object, minimum: int) -> np.ndarray:
    """``value`` as int64, or as Python ints (object) when it holds integers beyond int64."""
    array = np.asarray(value)
    if array.dtype == object:
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in array.flat):
            raise ValueError(f"{name} must hold integers only")
    elif not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be integers, got dtype {array.dtype}")
    array = array.astype(object if array.dtype in (np.uint64, object) else np.int64)
    if array.size and array.min() < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {array.min()}")
    return array


def bernoulli_exp(numerator, denominator, rng: np.random.Generator | None = None) -> np.ndarray:
    """Element-wise Bernoulli(exp(-numerator/denominator)) as a bool array of the broadcast shape,
    for integers numerator >= 0, denominator >= 1 (any size: beyond 2**62, Python ints)."""
    numerator = _integer_array("numerator", numerator, 0)
    denominator = _integer_array("denominator", denominator, 1)
    shape = np.broadcast_shapes(numerator.shape, denominator.shape)
    shared = denominator.item() if denominator.ndim == 0 else np.broadcast_to(denominator, shape).ravel()
    flat = np.broadcast_to(numerator, shape).ravel()
    rng = _random.generator(rng)
    if flat.size <= _FEW:
        below = _uniforms(rng, flat.size).below
        denominators = np.broadcast_to(shared, flat.shape)
        return np.array([_python_bernoulli_exp(int(a), int(b), below) for a, b in zip(flat, denominators)],
                        dtype=bool).reshape(shape)
    return _bernoulli_exp(flat, shared, rng).reshape(shape)


def discrete_laplace(t: int, s: int, shape: int | tuple[int, ...],
                     rng: np.random.Generator | None = None) -> np.ndarray:
    """Exact int64 draws with P(z) ∝ exp(-|z|·s/t), i.e. scale t/s (at most 2**40)."""
    t, s, shape = _integer("t", t, 1), _integer("s", s, 1), _shape(shape)
    common = math.gcd(t, s)
    t, s = t // common, s // common
    if t > MAX_SCALE * s:
        raise ValueError(f"the scale t/s must be at most 2**40 (draws must fit in int64), got {t / s:.4g}")
    return _discrete_laplace(t, s, math.prod(shape), _random.generator(rng)).reshape(shape)


def discrete_gaussian(t: int, m: int, shape: int | tuple[int, ...],
                      rng: np.random.Generator | None = None) -> np.ndarray:
    """Exact int64 draws with P(z) ∝ exp(-z²/(2σ²)), σ² = t·m; fastest for t ≈ σ
    (``gaussian_parameters``). t and m are at most 2**40."""
    t, m, shape = _integer("t", t, 1), _integer("m", m, 1), _shape(shape)
    for name, value in (("t", t), ("m", m)):
        if value > MAX_SCALE:
            raise ValueError(f"{name} must be at most 2**40 (draws must fit in int64), got {value}")
    return _discrete_gaussian(t, m, math.prod(shape), _random.generator(rng)).reshape(shape)


def gaussian_parameters(sigma: float) -> tuple[int, int]:
    """(t, m) with t = ceil(sigma) (at least 1) and m = ceil(sigma²/t): σ² = t·m is never below
    sigma², and exceeds it by less than t (relative excess below about 1/sigma). sigma is at most
    2**40, the limit on t and m."""
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real):
        raise ValueError(f"sigma must be a real number, got {sigma!r}")
    if not isinstance(sigma, numbers.Rational) and not math.isfinite(sigma):
        raise ValueError(f"sigma must be finite, got {sigma!r}")
    exact = Fraction(sigma) if isinstance(sigma, numbers.Rational) else Fraction(float(sigma))
    if not 0 < exact <= MAX_SCALE:
        raise ValueError(f"sigma must be in (0, 2**40] (the limit on t and m), got {sigma!r}")
    t = max(1, math.ceil(exact))
    return t, math.ceil(exact**2 / t)
