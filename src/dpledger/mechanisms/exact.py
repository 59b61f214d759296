"""Exact vectorised samplers for the discrete Laplace and discrete Gaussian distributions.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020) sample
Bernoulli(exp(-γ)) for rational γ (Algorithm 1), the discrete Laplace (Algorithm 2) and the
discrete Gaussian (Algorithm 3) from uniform integers with integer arithmetic only, so the outputs
have exactly the stated distributions; rounding floating-point Laplace or normal draws does not,
and its flaws leak through the released bits (Mironov 2012). The algorithms are run here twice: one draw at a time with Python integers (``reference_*``: any
size of integer, tens of µs a draw; the slow path), and on numpy arrays for every element still
undecided ("rounds"), so that millions of draws take about a second.

Exactness assumes only that ``Generator.integers(0, b)`` is exactly uniform on [0, b) (numpy:
Lemire's method with rejection). Each uniform is used by one element once, and which element
draws next depends only on earlier outcomes, so the elements are independent and each follows
its algorithm exactly; redrawing only the rejected elements is the algorithms' own retry loop.
No exp, log or float enters the sampling path.
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


# Integer safety of the int64 fast path, in one place. Its int64 inputs lie in [0, _SAFE]: they
# are admitted only where _within(value, 1). The products it forms, the uniform bound d·K
# (Algorithm 1), t·(V + 1) (Algorithm 2) and x·x (Algorithm 3), are formed only where
# _within(a, b) holds, and for integers a >= 0, b >= 1: a <= _SAFE // b <=> a·b <= _SAFE. Its
# other arithmetic cannot leave int64 either: U + t·V < t·(V + 1); divmod and negation of values
# in range; |Y| - m lies in [-m, |Y|] for an int64 draw Y and 1 <= m <= 2**40; the counters K
# (a Python int) and V grow by one a round. Where a check fails: Algorithm 1 draws
# Bernoulli(r/d) and Bernoulli(1/K) instead of Bernoulli(r/(d·K)) (no product); U + t·V and x²
# are computed in Python ints (arbitrary precision) for those elements; elements whose inputs
# exceed _SAFE are finished by the Python-int reference code above.
_SAFE = 2**62

# Largest discrete Laplace scale t/s and Gaussian t, m (so sigma <= 2**40). A draw has
# |Y| < (t/s)·(V + 1) <= 2**40·(V + 1) with P(V >= k) = e**-k, so it fits in int64 unless
# V >= 2**23 - 1 (then the int64 conversion raises OverflowError rather than wrap). For s = 1, as
# in the Gaussian, t·(V + 1) <= 2**62 also keeps Algorithm 2 in int64 unless V >= 2**22 - 1.
# The Gaussian's acceptance test x²/(2tm), x = |Y| - m, is in int64 while 2tm <= 2**62 (true for
# sigma <= 2**30) and x² <= 2**62 (|x| <= 2**31: all but a fraction e**-(2**31/t) of the draws);
# beyond, it takes the exact Python-int path, one element at a time (tens of µs each).
MAX_SCALE = 2**40


def _within(values, factor):
    """Where values·factor <= _SAFE (values >= 0, factor >= 1), decided without the product."""
    return values <= _SAFE // factor


def _split(fast) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the elements for the int64 path and for the Python-int path."""
    return np.flatnonzero(fast), np.flatnonzero(~fast)


def _at(values, index):
    """``values[index]``, or ``values`` itself when it is one scalar shared by all elements."""
    return values if np.ndim(values) == 0 else values[index]


def _int64(values):
    """Values already checked to be within _SAFE, as int64 (a scalar stays a Python int)."""
    return values if np.ndim(values) == 0 else values.astype(np.int64, copy=False)


def _bernoulli_ratio(numerator, denominator, k: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(numerator / (denominator·k)), for int64 0 <= numerator <= denominator <= _SAFE."""
    if np.all(_within(denominator, k)):
        return rng.integers(0, denominator * k, size=size) < numerator
    # denominator·k could overflow: use the product of Bernoulli(numerator/denominator) and Bernoulli(1/k).
    return (rng.integers(0, denominator, size=size) < numerator) & (rng.integers(0, k, size=size) == 0)


def _bernoulli_exp_unit(numerator, denominator, size: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-γ)), γ = numerator/denominator in [0, 1] (CKS Algorithm 1), K in lockstep:
    round K draws Bernoulli(γ/K) for each element still running; a failure stops it with "K odd"."""
    result = np.empty(size, dtype=bool)
    running = np.arange(size)
    k = 1
    while running.size:
        more = _bernoulli_ratio(_at(numerator, running), _at(denominator, running), k, running.size, rng)
        result[running[~more]] = k % 2 == 1
        running = running[more]
        k += 1
    return result


def _exp_minus_one(size: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-1)) element-wise (Algorithm 1 with γ = 1)."""
    return _bernoulli_exp_unit(1, 1, size, rng)


def _bernoulli_exp_fast(numerator: np.ndarray, denominator, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-numerator/denominator)) for int64 values in [0, _SAFE]. CKS's reduction for
    γ > 1: floor(γ) Bernoulli(exp(-1)) and one Bernoulli(exp(-(γ - floor γ))) must all succeed;
    an element stops drawing at its first failure."""
    whole, rest = np.divmod(numerator, denominator)
    result = np.ones(numerator.size, dtype=bool)
    running = np.flatnonzero(whole > 0)
    passed = 0
    while running.size:
        survived = _exp_minus_one(running.size, rng)
        result[running[~survived]] = False
        passed += 1
        running = running[survived & (whole[running] > passed)]
    alive = np.flatnonzero(result)
    result[alive] = _bernoulli_exp_unit(rest[alive], _at(denominator, alive), alive.size, rng)
    return result


def _bernoulli_exp(numerator: np.ndarray, denominator, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-numerator/denominator)) for a 1-D int64 or object (Python int) numerator and
    a denominator alike or one shared scalar; elements beyond _SAFE go to the Python-int path."""
    result = np.empty(numerator.size, dtype=bool)
    fast, slow = _split(_within(numerator, 1) & _within(denominator, 1))
    if fast.size:
        result[fast] = _bernoulli_exp_fast(_int64(numerator[fast]), _int64(_at(denominator, fast)), rng)
    denominators = np.broadcast_to(denominator, numerator.shape)[slow]
    result[slow] = [reference_bernoulli_exp(Fraction(int(a), int(b)), rng) for a, b in zip(numerator[slow], denominators)]
    return result


def _run_length(size: int, rng: np.random.Generator) -> np.ndarray:
    """V of Algorithm 2: the number of successive Bernoulli(exp(-1)) successes before a failure."""
    v = np.zeros(size, dtype=np.int64)
    running = np.arange(size)
    while running.size:
        running = running[_exp_minus_one(running.size, rng)]
        v[running] += 1
    return v


def _magnitude(u: np.ndarray, v: np.ndarray, t: int, s: int) -> np.ndarray:
    """Y = (U + t·V) // s: in int64 where t·(V + 1) <= _SAFE, in Python ints elsewhere."""
    y = np.empty(u.size, dtype=np.int64)
    fast, slow = _split(_within(v + 1, t))
    y[fast] = (u[fast] + t * v[fast]) // s
    y[slow] = [(int(a) + t * int(b)) // s for a, b in zip(u[slow], v[slow])]
    return y


def _discrete_laplace(t: int, s: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with P(z) ∝ exp(-|z|·s/t) (CKS Algorithm 2); rejected elements are redrawn."""
    if not (_within(t, 1) and _within(s, 1)):
        return np.array([reference_discrete_laplace(Fraction(t, s), rng) for _ in range(size)], dtype=np.int64)
    result = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        u = rng.integers(0, t, size=pending.size)
        kept = _bernoulli_exp_unit(u, t, pending.size, rng)
        retry, pending, u = pending[~kept], pending[kept], u[kept]
        y = _magnitude(u, _run_length(u.size, rng), t, s)
        negative = rng.integers(0, 2, size=u.size) == 1
        accepted = ~(negative & (y == 0))
        result[pending[accepted]] = np.where(negative, -y, y)[accepted]
        pending = np.concatenate([retry, pending[~accepted]])
    return result


def _squares(x: np.ndarray) -> np.ndarray:
    """x² element-wise: int64 when every square is at most _SAFE, else Python ints (object)."""
    magnitude = np.abs(x)
    if np.all(_within(magnitude, np.maximum(magnitude, 1))):
        return magnitude * magnitude
    return magnitude.astype(object) ** 2


def _discrete_gaussian(t: int, m: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws with P(z) ∝ exp(-z²/(2tm)) (CKS Algorithm 3 with Laplace scale t)."""
    result = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        y = _discrete_laplace(t, 1, pending.size, rng)
        accepted = _bernoulli_exp(_squares(np.abs(y) - m), 2 * t * m, rng)
        result[pending[accepted]] = y[accepted]
        pending = pending[~accepted]
    return result


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
    return _bernoulli_exp(flat, shared, _random.generator(rng)).reshape(shape)


def discrete_laplace(t: int, s: int, shape: int | tuple[int, ...],
                     rng: np.random.Generator | None = None) -> np.ndarray:
    """Exact int64 draws with P(z) ∝ exp(-|z|·s/t), i.e. scale t/s (at most 2**40)."""
    t, s, shape = _integer("t", t, 1), _integer("s", s, 1), _shape(shape)
    scale = Fraction(t, s)
    if scale > MAX_SCALE:
        raise ValueError(f"the scale t/s must be at most 2**40 (draws must fit in int64), got {float(scale):.4g}")
    draws = _discrete_laplace(scale.numerator, scale.denominator, math.prod(shape), _random.generator(rng))
    return draws.reshape(shape)


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
