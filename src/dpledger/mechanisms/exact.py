"""Exact vectorised samplers for the discrete Laplace and discrete Gaussian distributions.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020) sample
Bernoulli(exp(-γ)) for rational γ (Algorithm 1), the discrete Laplace (Algorithm 2) and the
discrete Gaussian (Algorithm 3) from uniform integers with integer arithmetic only, so the outputs
have exactly the stated distributions; rounding floating-point Laplace or normal draws does not,
and its flaws leak through the released bits (Mironov 2012). The algorithms are run here three
ways: as stated, one uniform per Bernoulli trial, with Python integers (``reference_*``: the
oracle the tests compare against); a lean Python-int path (``_python_*``: any size of integer, a
few µs a draw) for calls of a few draws and for values beyond int64; and on numpy arrays for
every element still undecided ("rounds"), so that millions of draws take well under a second.

Algorithm 1 for γ = a/b in [0, 1] counts K = 1, 2, ... while Bernoulli(γ/K) succeeds and returns
"K odd"; it gets past step k with probability P(K > k) = γ^k/k!. Its first j steps are decided
by one uniform R on [0, N), N = b^j·j!: T_k = a^k·b^(j-k)·j!/k! is an integer, T_k/N = γ^k/k!,
and N = T_0 >= T_1 >= ... >= T_j (T_k/T_(k-1) = γ/k <= 1), so "K > k" is the event R < T_k for
k <= j. Only when R < T_j (K > j) does the loop go on, from step j + 1 with fresh uniforms as the
algorithm itself would; then P(K > k) = γ^k/k! for every k, so "K odd" is exactly
Bernoulli(exp(-γ)). For γ = 1 (a = b = 1, j = 8) the outcome of each of the 8! values of R is a
table.

Exactness assumes only that ``Generator.integers(0, b)`` is exactly uniform on [0, b) (numpy:
Lemire's method with rejection). Each uniform is used once, and what it is used for depends only
on earlier outcomes, so each element follows its algorithm exactly and the elements are
independent; uniforms drawn but not needed are discarded. Rejected candidates are the
algorithms' own retry loop: the candidates are independent and identically distributed, so the
accepted ones, taken in the order drawn, are independent draws of the target (surplus ones are
discarded). No exp, log or float enters the sampling path.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from .. import _random


def _uniform_below(m: int, rng: np.random.Generator) -> int:
    """Exactly uniform integer in [0, m), for any positive m (rejection on random bytes)."""
    if m < 2**62:
        return int(rng.integers(m))
    bits = m.bit_length()
    while True:
        value = int.from_bytes(rng.bytes((bits + 7) // 8), "little") >> (8 * ((bits + 7) // 8) - bits)
        if value < m:
            return value


def _bernoulli(p: Fraction, rng: np.random.Generator) -> bool:
    return _uniform_below(p.denominator, rng) < p.numerator


def reference_bernoulli_exp(gamma: Fraction, rng: np.random.Generator) -> bool:
    """One Bernoulli(exp(-γ)) for rational γ >= 0 with Python integers (CKS 2020, Algorithm 1)."""
    while gamma > 1:
        if not reference_bernoulli_exp(Fraction(1), rng):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(gamma / k, rng):
        k += 1
    return k % 2 == 1


def reference_discrete_laplace(scale: Fraction, rng: np.random.Generator) -> int:
    """One draw with P(z) ∝ exp(-|z|/scale) with Python integers (CKS 2020, Algorithm 2; scale = t/s)."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = _uniform_below(t, rng)
        if not reference_bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while reference_bernoulli_exp(Fraction(1), rng):
            v += 1
        y = (u + t * v) // s
        negative = _uniform_below(2, rng) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


# Bernoulli(exp(-1)) from one uniform R on [0, 8!) (module docstring, γ = 1, j = 8): T_k = 8!/k!,
# and K = 1 + #{k <= 8 : R < T_k} unless R < T_8 = 1. Codes: 0 "K even" (failure), 1 "K odd"
# (success), 2 "K > 8" (R = 0: Algorithm 1 goes on from step 9).
_ONE_STEPS = 8
_ONE_SPAN = math.factorial(_ONE_STEPS)
_UNDECIDED = 2
_passed = sum(np.arange(_ONE_SPAN) < _ONE_SPAN // math.factorial(k) for k in range(1, _ONE_STEPS + 1))
_EXP_ONE = np.where(_passed == _ONE_STEPS, _UNDECIDED, _passed % 2 == 0).astype(np.int8)
_EXP_ONE_CODES = _EXP_ONE.tobytes()
del _passed

# The Python-int path's uniforms come from words uniform on [0, 2**62), drawn in blocks.
_WORD = 2**62


class _Uniforms:
    """Exactly uniform integers below any bound m, from words that ``rng`` draws in blocks of
    ``block`` and that are consumed in order. For w uniform on [0, W) (one word, or c words read as
    one integer, W = 2**(62c) >= m) and r = w mod m, w is accepted when its run of m values
    [w - r, w - r + m) lies inside [0, W), i.e. w - r <= W - m: the accepted w are uniform on
    [0, m·floor(W/m)), so r is uniform on [0, m). A rejected w (probability < m/W) is redrawn."""

    __slots__ = ("_rng", "_block", "_words")

    def __init__(self, rng: np.random.Generator, block: int):
        self._rng, self._block, self._words = rng, block, iter(())

    def _word(self) -> int:
        word = next(self._words, None)
        if word is None:
            self._words = iter(self._rng.integers(0, _WORD, size=self._block).tolist())
            word = next(self._words)
        return word

    def below(self, m: int) -> int:
        if m <= _WORD:
            while True:
                w = self._word()
                r = w % m
                if w - r <= _WORD - m:
                    return r
        words = -(-(m - 1).bit_length() // 62)
        span = _WORD**words
        while True:
            w = 0
            for _ in range(words):
                w = w * _WORD + self._word()
            r = w % m
            if w - r <= span - m:
                return r


def _uniforms(rng: np.random.Generator, draws: int) -> _Uniforms:
    """A word source for about ``draws`` draws (about ten words a draw; more blocks if needed)."""
    return _Uniforms(rng, min(16 * draws + 16, 2**14))


def _python_exp_one(below) -> bool:
    """One Bernoulli(exp(-1)) with the table; from step 9 on, one uniform a step."""
    code = _EXP_ONE_CODES[below(_ONE_SPAN)]
    if code != _UNDECIDED:
        return code == 1
    k = _ONE_STEPS + 1
    while below(k) == 0:
        k += 1
    return k % 2 == 1


def _python_bernoulli_exp(a: int, b: int, below) -> bool:
    """One Bernoulli(exp(-a/b)) for Python ints a >= 0, b >= 1 of any size: CKS's reduction for
    γ > 1 (floor(γ) Bernoulli(exp(-1)) and one Bernoulli(exp(-(γ - floor γ))) must all succeed;
    stop at the first failure), then Algorithm 1 one uniform a step."""
    whole, a = divmod(a, b)
    for _ in range(whole):
        if not _python_exp_one(below):
            return False
    k = 1
    while below(b * k) < a:
        k += 1
    return k % 2 == 1


def _python_laplace(t: int, s: int, below) -> int:
    """One draw with P(z) ∝ exp(-|z|·s/t) (Algorithm 2) with Python ints of any size."""
    while True:
        u = below(t)
        if not _python_bernoulli_exp(u, t, below):
            continue
        v = 0
        while _python_exp_one(below):
            v += 1
        y = (u + t * v) // s
        if below(2) == 0:
            return y
        if y:
            return -y


def _python_gaussian(t: int, m: int, below) -> int:
    """One draw with P(z) ∝ exp(-z²/(2tm)) (Algorithm 3) with Python ints of any size."""
    while True:
        y = _python_laplace(t, 1, below)
        if _python_bernoulli_exp((abs(y) - m) ** 2, 2 * t * m, below):
            return y


# Calls of at most this many draws take the Python-int path: there a draw costs a few µs, and a
# numpy round at least that much.
_FEW = 16

# Integer safety of the int64 fast path, in one place. Its int64 inputs lie in [0, _SAFE]: they
# are admitted only where _within(value, 1). The products it forms are formed only where
# _within(a, b) holds, and for integers a >= 0, b >= 1: a <= _SAFE // b <=> a·b <= _SAFE. They
# are: Algorithm 1's uniform bound b^j·j! (j from _steps) and thresholds T_k, computed as
# a^k·(b^(j-k)·j!/k!) with a <= b, so every factor and partial product is at most b^j·j!; its
# later bound b·k (Bernoulli(a/(b·k))); whole·b <= a in the reduction of γ > 1; t·(V + 1)
# (Algorithm 2) and x·x (Algorithm 3). Its other arithmetic cannot leave int64 either: U + t·V <
# t·(V + 1); a // b, negation of values in range; |Y| - m lies in [-m, |Y|] for an int64 draw Y
# and 1 <= m <= 2**40; the counters k (a Python int) and V grow by at most four a round; table
# draws are below 8!. Where a check fails: the Bernoulli(a/(b·k)) of Algorithm 1's later steps
# is drawn as Bernoulli(a/b)·Bernoulli(1/k) (no product); U + t·V and x² are computed in Python
# ints (arbitrary precision) for those elements; elements whose inputs exceed _SAFE take the
# Python-int path.
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

# Rounds with more elements still running than this draw one Bernoulli(exp(-1)) trial for each
# (fewest spare trials); smaller rounds draw _WIDTH (fewest rounds).
_WIDE = 4096
_WIDTH = 4


def _within(values, factor):
    """Where values·factor <= _SAFE (values >= 0, factor >= 1), decided without the product."""
    return values <= _SAFE // factor


def _at(values, index):
    """``values[index]``, or ``values`` itself when it is one scalar shared by all elements."""
    return values if np.ndim(values) == 0 else values[index]


def _int64(values):
    """Values already checked to be within _SAFE, as int64 (a scalar stays a Python int)."""
    return values if np.ndim(values) == 0 else values.astype(np.int64, copy=False)


def _steps(b: int) -> int:
    """j for Algorithm 1 with denominators up to b: the largest j <= _STEPS with b^j·j! <= _SAFE
    (j = 1 always qualifies, as b <= _SAFE)."""
    j, span = 1, b
    while j < _STEPS and _within(span, b * (j + 1)):
        j += 1
        span *= b * j
    return j


def _bernoulli_ratio(numerator, denominator, k: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(numerator / (denominator·k)), for int64 0 <= numerator <= denominator <= _SAFE."""
    if np.all(_within(denominator, k)):
        return rng.integers(0, denominator * k, size=size) < numerator
    # denominator·k could overflow: use the product of Bernoulli(numerator/denominator) and Bernoulli(1/k).
    return (rng.integers(0, denominator, size=size) < numerator) & (rng.integers(0, k, size=size) == 0)


def _bernoulli_exp_tail(numerator, denominator, k: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """"K odd" for elements known to be past step k - 1 of Algorithm 1: its loop from step k on,
    in lockstep; round k draws Bernoulli(γ/k) for each element still running, a failure sets K = k."""
    result = np.empty(size, dtype=bool)
    running = np.arange(size)
    while running.size:
        more = _bernoulli_ratio(_at(numerator, running), _at(denominator, running), k, running.size, rng)
        result[running[~more]] = k % 2 == 1
        running = running[more]
        k += 1
    return result


def _bernoulli_exp_unit(numerator: np.ndarray, denominator, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-γ)), γ = numerator/denominator in [0, 1] (int64, denominator an array alike or
    one shared int): Algorithm 1 with its first j steps decided by one uniform R (module docstring);
    the elements with R < T_j (past all j steps) go on with the loop from step j + 1."""
    if not numerator.size:
        return np.ones(0, dtype=bool)
    j = _steps(int(np.max(denominator)))
    powers = [1]  # denominator^i for i <= j, each at most denominator^j
    for _ in range(j):
        powers.append(powers[-1] * denominator)
    r = rng.integers(0, powers[j] * math.factorial(j), size=numerator.size)
    power = numerator  # numerator^k
    for k in range(1, j + 1):
        if k > 1:
            power = power * numerator
        passed = r < power * (powers[j - k] * (math.factorial(j) // math.factorial(k)))
        odd = passed if k == 1 else odd ^ passed  # parity of the number of steps passed
    result = ~odd  # K = steps passed + 1 is odd
    if passed.any():
        tail = np.flatnonzero(passed)
        result[tail] = _bernoulli_exp_tail(numerator[tail], _at(denominator, tail), j + 1, tail.size, rng)
    return result


def _exp_one(shape, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-1)) trials of the given shape, with the table."""
    codes = _EXP_ONE[rng.integers(0, _ONE_SPAN, size=shape)]
    undecided = codes == _UNDECIDED
    if undecided.any():
        codes[undecided] = _bernoulli_exp_tail(1, 1, _ONE_STEPS + 1, int(undecided.sum()), rng)
    return codes == 1


def _successes(limit, size: int, rng: np.random.Generator) -> np.ndarray:
    """How many Bernoulli(exp(-1)) trials in a row succeed before the first failure, counting at
    most ``limit`` (an int64 array; None: no limit): Algorithm 2's V, and with limit floor(γ) the
    reduction of γ > 1. A round draws several trials for each element still running, and its
    count grows by those that succeed before the first failure; trials past it are discarded."""
    count = np.zeros(size, dtype=np.int64)
    running = np.arange(size) if limit is None else np.flatnonzero(limit)
    while running.size:
        width = 1 if running.size > _WIDE else _WIDTH
        passed = np.logical_and.accumulate(_exp_one((running.size, width), rng), axis=1).sum(axis=1)
        total = count[running] + passed
        more = passed == width
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
    """Algorithm 2 run once for each of n candidates: the accepted draws, in order (more than
    half of them: U is kept with probability over 1 - 1/e, the sign with at least 1/2)."""
    u = rng.integers(0, t, size=n)
    u = u[_bernoulli_exp_unit(u, t, rng)]
    y = _magnitude(u, _successes(None, u.size, rng), t, s)
    negative = rng.integers(0, 2, size=y.size) == 1
    return np.where(negative, -y, y)[~negative | (y != 0)]


def _squares(x: np.ndarray) -> np.ndarray:
    """x² element-wise: int64 when every square is at most _SAFE, else Python ints (object)."""
    magnitude = np.abs(x)
    if np.all(_within(magnitude, np.maximum(magnitude, 1))):
        return magnitude * magnitude
    return magnitude.astype(object) ** 2


def _gaussian_candidates(t: int, m: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 3 (with Laplace scale t) run once for each of n candidates: the accepted draws."""
    y = _laplace_candidates(t, 1, n, rng)
    return y[_bernoulli_exp(_squares(np.abs(y) - m), 2 * t * m, rng)]


def _fill(candidates, size: int, spare: int) -> np.ndarray:
    """``size`` draws from ``candidates(n)`` (the accepted among n independent candidates, in
    order): batches of ``spare``/4 candidates per draw still missing, until none is."""
    result = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        draws = candidates((size - filled) * spare // 4 + 8)[: size - filled]
        result[filled:filled + draws.size] = draws
        filled += draws.size
    return result


def _discrete_laplace(t: int, s: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with P(z) ∝ exp(-|z|·s/t) (CKS Algorithm 2)."""
    if size <= _FEW or not (_within(t, 1) and _within(s, 1)):
        below = _uniforms(rng, size).below
        return np.array([_python_laplace(t, s, below) for _ in range(size)], dtype=np.int64)
    return _fill(lambda n: _laplace_candidates(t, s, n, rng), size, 7)


def _discrete_gaussian(t: int, m: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with P(z) ∝ exp(-z²/(2tm)) (CKS Algorithm 3 with Laplace scale t)."""
    if size <= _FEW:
        below = _uniforms(rng, size).below
        return np.array([_python_gaussian(t, m, below) for _ in range(size)], dtype=np.int64)
    return _fill(lambda n: _gaussian_candidates(t, m, n, rng), size, 9)


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
