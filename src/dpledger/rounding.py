"""Rounding-error bounds of floating-point sums, for sensitivities that hold for the computed values.

A query's sensitivity is a claim about the doubles the code computes, not about exact arithmetic.
A sum of m terms in any order errs by at most γ_{m−1}·Σ|terms| (Higham, *Accuracy and Stability
of Numerical Algorithms*, §4.2), with γ_m = m·u/(1 − m·u) and u = 2^-53; so a bound that covers
every order also covers neighbours that list their records in another order.
"""

from __future__ import annotations

#: unit roundoff of a double
UNIT_ROUNDOFF = 2.0**-53
#: covers the rounding of evaluating a bound itself in doubles (a few ulps)
EVALUATION = 1 + 2.0**-40
#: Largest n·bound a sum of n terms of size at most ``bound`` may reach: every partial sum then
#: stays far below the largest double (about 2^1024), so none overflows to inf.
MAX_SUM = 2.0**1000


def check_sum(n: int, bound: float, what: str = "a sum") -> None:
    """Refuse (a ValueError, before any charge) public parameters with which ``what`` of n terms of
    size up to ``bound`` could overflow: the bounds below assume it never does."""
    if not n * bound <= MAX_SUM:
        raise ValueError(f"{what} of {n:,} terms of size up to {bound:.3g} could overflow a double "
                         "(n·bound > 2^1000); rescale the data and the public bounds")


def gamma(m: int) -> float:
    """γ_m = m·u/(1 − m·u): the relative error bound of m floating-point operations (Higham §3.1)."""
    if m * UNIT_ROUNDOFF >= 0.5:
        raise ValueError(f"{m:.3g} operations are beyond any useful rounding bound")
    return m * UNIT_ROUNDOFF / (1 - m * UNIT_ROUNDOFF)


def mean_sensitivity(bound: float, n: int, coordinates: int = 1) -> float:
    """ℓ1-sensitivity of the computed mean of n records whose values lie in [−bound, bound], over
    ``coordinates`` coordinates, when one record is replaced: exactly 2·bound/n per coordinate, and
    the computed mean fl(fl(Σx)/n) of each input is within γ_n·bound of its exact mean whatever the
    summation order (γ_{n−1}·n·bound/n for the sum, a relative u for the division), so
    2·bound·(1/n + γ_n) per coordinate (evaluated with ``EVALUATION``'s margin). Refuses a bound
    whose sum could overflow (``check_sum``)."""
    check_sum(n, bound, "the mean's sum")
    return 2.0 * bound * coordinates * (1.0 / n + gamma(n)) * EVALUATION


def sum_sensitivity(bound: float, n: int) -> float:
    """Sensitivity of the computed sum of n records whose values lie in an interval of width
    ``bound`` containing 0 (e.g. [0, bound]), when one record is replaced: exactly ``bound``, and
    each computed sum is within γ_{n−1}·n·bound of its exact value whatever the order, so
    bound·(1 + 2n·γ_{n−1}) (evaluated with ``EVALUATION``'s margin). Refuses a bound whose sum
    could overflow (``check_sum``)."""
    check_sum(n, bound)
    return bound * (1.0 + 2.0 * n * gamma(max(n - 1, 0))) * EVALUATION
