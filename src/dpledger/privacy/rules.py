"""Composition rules as pure functions on guarantees, each with its source.

They serve twice: to *plan* a mechanism graph before any data is touched, and to *explain* the
ledger. Every function validates its arguments and returns a normal-form guarantee (``PureDP``
when δ = 0). Tight (PLD) composition of Laplace/Gaussian events lives in ``privacy.pld``.

Rounding: a sum of ε's or δ's is the exact sum rounded to the nearest double (``math.fsum``, the
convention of every total in dpledger: docs/design.md, "Floating point"); everything else (a
product, an exponential, a logarithm) is evaluated to 50 digits and rounded *up* (``_up``), so a
stated guarantee is never below the exact value of its formula.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

from .. import _validate
from ..errors import PrivacyError
from ..guarantees import Guarantee, check, make
from ..relations import AddRemoveOne, Relation, ReplaceOne


@functools.cache
def _context():
    """A private mpmath context at 50 digits (never changed after creation, so threads share it)."""
    import mpmath

    context = mpmath.MPContext()
    context.dps = 50
    return context


def _up(value) -> float:
    """The smallest double at or above ``value``: an exact ``Fraction``, or an mpmath number computed
    to 50 digits (whose error a relative 1e-40 covers); inf beyond the largest double."""
    if isinstance(value, Fraction):
        exact = value
    else:
        context = _context()
        mantissa, exponent = context.mpf(value * (1 + context.mpf("1e-40"))).man_exp
        exact = Fraction(mantissa) * (Fraction(2) ** exponent)
    try:
        result = float(exact)
    except OverflowError:
        return math.inf
    return math.nextafter(result, math.inf) if Fraction(result) < exact else result


def remainder(total: float, *parts: float) -> float:
    """The largest double r >= 0 with fsum(parts + (r,)) <= total: what is left of a budget once
    ``parts`` are given out, such that the plan's sum (``compose``) never lands an ulp above it."""
    left = max(total - math.fsum(parts), 0.0)
    while left > 0 and math.fsum([*parts, left]) > total:
        left = math.nextafter(left, 0.0)
    return left


def _all(gs) -> tuple[Guarantee, ...]:
    return tuple(check(f"guarantees[{i}]", g) for i, g in enumerate(gs))


def post_process(g: Guarantee) -> Guarantee:
    """f(M(Y)) keeps M's guarantee for any (randomised) f that does not read Y (Lemma A.2)."""
    return check("g", g)


def compose(*gs: Guarantee) -> Guarantee:
    """Basic adaptive sequential composition: (Σε_i, Σδ_i) (standard; Dwork & Roth Thm 3.16)."""
    gs = _all(gs)
    delta = math.fsum(g.delta for g in gs)
    if delta >= 1:
        raise ValueError(f"composed delta {delta} >= 1: the composition gives no guarantee")
    return make(math.fsum(g.epsilon for g in gs), delta)


def compose_repeated(g: Guarantee, times: int) -> Guarantee:
    """``times`` runs of one step: basic composition, (times·ε, times·δ), summed exactly."""
    g = check("g", g)
    times = _validate.integer("times", times, minimum=1)
    delta = float(Fraction(g.delta) * times)
    if delta >= 1:
        raise ValueError(f"{times} runs of a {g} step give delta {delta:.3g} >= 1: no guarantee")
    return make(float(Fraction(g.epsilon) * times), delta)


def per_run(total: float, times: int) -> float:
    """The largest δ (or ε) per run whose ``times`` runs, summed as ``compose_repeated`` sums them,
    are at most ``total``: ``total / times`` can round so that the sum lands an ulp above."""
    times = _validate.integer("times", times, minimum=1)
    share = total / times
    while float(Fraction(share) * times) > total:
        share = math.nextafter(share, 0.0)
    return share


def compose_halting(first: Guarantee, *conditional: Guarantee) -> Guarantee:
    """Composition with halting (Lemma A.4): (Σε_i, Σδ_i).

    ``first`` is (ε1, δ1)-DP; each later step is (ε_i, δ_i)-DP *under the condition* that no
    earlier step halted (output ⊥). The pipeline that stops at the first ⊥ is (Σε_i, Σδ_i)-DP.
    """
    return compose(first, *conditional)


def absorb_failure(g: Guarantee, gamma: float) -> Guarantee:
    """Fact I.3: (ε, δ)-DP with probability >= 1 - γ >= 1/2 over M's coins ⇒ (ε + 2γ, δ + γ)-DP."""
    g = check("g", g)
    gamma = _validate.probability("gamma", gamma)
    if gamma > 0.5:
        raise ValueError(f"gamma must be <= 1/2 for Fact I.3 (it uses log(1-γ) >= -2γ), got {gamma}")
    delta = g.delta + gamma
    if delta >= 1:
        raise ValueError(f"absorbing gamma={gamma} gives delta {delta} >= 1: no guarantee")
    return make(g.epsilon + 2.0 * gamma, delta)


def _group_delta(k: int, epsilon: float, delta: float):
    """k·e^{(k-1)ε}·δ to 50 digits (an mpmath number; huge for a huge k or ε, never an overflow)."""
    context = _context()
    if delta == 0:
        return context.zero
    return context.mpf(k) * context.exp(context.mpf(k - 1) * context.mpf(epsilon)) * context.mpf(delta)


def group_privacy(g: Guarantee, k: int) -> Guarantee:
    """Inputs k neighbour-steps apart: (kε, k·e^{(k-1)ε}·δ) (standard; Dwork & Roth Thm 2.2, δ form)."""
    g = check("g", g)
    k = _validate.integer("k", k, minimum=1)
    if k == 1:
        return g
    delta = _up(_group_delta(k, g.epsilon, g.delta))
    if delta >= 1:
        raise ValueError(f"group privacy for k={k} gives delta {delta:.3g} >= 1: no guarantee")
    return make(_up(k * Fraction(g.epsilon)), delta)


def random_partition(*gs: Guarantee) -> Guarantee:
    """Random partition (the argument of Lemma C.15): (max ε_i, max δ_i).

    Each unit (edge, row) goes to exactly one part, independently of the data; A_1 runs on part
    1, A_i (which may see earlier outputs) on part i. A neighbouring change lands in one part, so
    only one A_i sees neighbouring inputs and the others see identical ones.
    """
    gs = _all(gs)
    if not gs:
        raise ValueError("random_partition needs at least one part's guarantee")
    return make(max(g.epsilon for g in gs), max(g.delta for g in gs))


def privatised_input(gaussian: Guarantee, rest: Guarantee, m: int) -> Guarantee:
    """Privatised input (Lemma I.4), with the hybrid argument's constants checked in docs/proofs.md.

    Rows of V, V' are jointly Δ-close outside a set of ``m`` rows; A1 is the Gaussian mechanism
    on V calibrated to Δ with guarantee ``gaussian`` = (ε1, δ1); A2 is (ε2, δ2)-DP for inputs
    differing in one row (``rest``). Then A2∘A1 is (ε1 + mε2, δ')-DP for V vs V', where the two
    orders of the hybrid argument give δ' = δ1 + e^{ε1}·m·e^{(m-1)ε2}·δ2 (Gaussian step first) or
    δ' = e^{mε2}·δ1 + m·e^{(m-1)ε2}·δ2 (group step first); both are valid, we return the smaller.
    """
    g1, g2 = check("gaussian", gaussian), check("rest", rest)
    m = _validate.integer("m", m, minimum=0)
    if m == 0:
        return g1
    context = _context()
    e1, d1, e2 = context.mpf(g1.epsilon), context.mpf(g1.delta), context.mpf(g2.epsilon)
    group_delta = _group_delta(m, g2.epsilon, g2.delta)
    delta = _up(min(d1 + context.exp(e1) * group_delta, context.exp(m * e2) * d1 + group_delta))
    if delta >= 1:
        raise ValueError(f"privatised input with m={m} gives delta {delta:.3g} >= 1: no guarantee")
    return make(_up(Fraction(g1.epsilon) + m * Fraction(g2.epsilon)), delta)


def amplify_by_subsampling(g: Guarantee, rate: float, relation: Relation) -> Guarantee:
    """Privacy amplification by subsampling for a generic (ε, δ) guarantee.

    Under ``AddRemoveOne``, Poisson sampling with probability q; under ``ReplaceOne``, sampling
    m of n points without replacement (q = m/n). Both give (ln(1 + q(e^ε - 1)), q·δ) (Balle,
    Barthe & Gaboardi 2018, Theorems 8 and 9). Other relations are refused: the theorems say
    nothing about them. Laplace and Gaussian mechanisms get the tighter PLD of
    ``dp_accounting.PoissonSampledDpEvent`` in the accountant's PLD mode.
    """
    g = check("g", g)
    q = _validate.probability("rate", rate, low_open=True, high_open=False)
    if not isinstance(relation, (AddRemoveOne, ReplaceOne)):
        raise PrivacyError(
            f"amplification by subsampling is proven for AddRemoveOne (Poisson) and ReplaceOne "
            f"(without replacement), not for {relation!r}"
        )
    if q == 1:
        return g  # no subsampling
    context = _context()
    q_exact = context.mpf(q)
    return make(_up(context.log1p(q_exact * context.expm1(context.mpf(g.epsilon)))),
                _up(Fraction(q) * Fraction(g.delta)))
