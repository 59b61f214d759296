"""The exact samplers with Python integers (``exact``'s module doc): the algorithms as stated, one
uniform per Bernoulli trial (``reference_*``, the tests' oracle), and the lean path for calls of a
few draws and for values beyond int64 (``_python_*``, any size of integer, 2-4 µs a draw).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


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
                w = next(self._words, None)  # self._word(), inlined: this is the hot path
                if w is None:
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
    """A word source for ``draws`` draws (a Laplace draw takes about six uniforms, a Gaussian ten;
    another block is drawn when one runs out)."""
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
    """One draw with P(z) ∝ exp(-|z|·s/t) (Algorithm 2) with Python ints of any size; U and the
    sign from one uniform on [0, 2t), as in _laplace_candidates."""
    while True:
        u, negative = divmod(below(2 * t), 2)
        if not _python_bernoulli_exp(u, t, below):
            continue
        v = 0
        while _python_exp_one(below):
            v += 1
        y = (u + t * v) // s
        if not negative:
            return y
        if y:
            return -y


def _python_gaussian(t: int, m: int, below) -> int:
    """One draw with P(z) ∝ exp(-z²/(2tm)) (Algorithm 3) with Python ints of any size."""
    while True:
        y = _python_laplace(t, 1, below)
        if _python_bernoulli_exp((abs(y) - m) ** 2, 2 * t * m, below):
            return y
