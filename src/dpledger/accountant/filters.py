"""Privacy filters: how a session's adaptively chosen steps are charged against its budget.

A session lets the user choose every ``spend`` and ``run`` after seeing earlier outputs (full
adaptivity). Its budget is then a *filter*: a rule, fixed when the accountant is created, that
admits a step only if the total stays within the budget, and that is proven to make the whole
session (ε, δ)-DP however the steps were chosen and whenever the session stops. PLD composition is
not such a rule (its theorems assume the parameters fixed in advance), and neither is "the best of
several rules". Three filters, each with its theorem:

- ``"basic"``: Σε_i <= ε and Σδ_i <= δ (Rogers, Roth, Ullman & Vadhan 2016, Theorem 3.6). Any step.
- ``"gdp"``: Σμ_i² <= μ², with μ the largest whose μ-GDP implies the budget (Smith & Thakurta 2022,
  Theorem 3.1; Koskela, Tobaben & Honkela 2022). Continuous Gaussian steps only.
- ``"zcdp"``: Σρ_i <= ρ, with ρ the largest whose ρ-zCDP implies the budget: at every order α the
  stopping rule is a Rényi filter with budget αρ (Feldman & Zrnic 2021, Theorem 3.1; Whitehouse,
  Ramdas, Rogers & Wu 2023), so the session is ρ-zCDP and the best order converts it. zCDP steps
  (the float-safe Gaussian, continuous Gaussians, pure ε-DP as ε²/2).
- ``"rdp"``: Rényi orders α_1..α_K fixed in advance and δ split evenly over them; a step is admitted
  while at least one order j keeps Σ_i ε_i(α_j) <= B_j = ε - log(K/δ)/(α_j - 1); with one order,
  B = ε − log(1 − 1/α) + log(δα)/(α − 1), the sharper conversion (``RenyiFilter._conversion``). Each order's
  exp((α_j - 1)(L_t - Σ_{i<=t} ε_i(α_j))) is a nonnegative supermartingale (Feldman & Zrnic 2021,
  Lemma 3.2), so by Ville's inequality and a union bound over the orders P[L > ε] <= δ
  (docs/proofs.md, "Rényi filter"). Steps with an RDP curve (Gaussian, subsampled Gaussian,
  Laplace, zCDP, pure ε-DP).

Prices are kept exactly (``fractions.Fraction`` of upward-rounded doubles), so the running totals
are exact and cost O(1) per step. A total is compared with its limit after rounding it to the
nearest double, the convention of every total in dpledger (``rules.compose`` sums with
``math.fsum``): a stated guarantee may understate the exact sum of its parts' doubles by half an
ulp (ten charges of fl(0.1) = 0.1 + 5.6e-18 fit a budget of 1; docs/design.md, "Floating point"). A step a filter cannot price is refused, naming the filter.
"""

from __future__ import annotations

import abc
import math
from fractions import Fraction
from typing import ClassVar

import attrs
import numpy as np

from .. import guarantees as _g
from ..errors import PrivacyError
from ..privacy import gdp as _gdp, rdp as _rdp

Price = tuple[Fraction, ...]

#: The price at an order where a step's Rényi curve is infinite: that order is exhausted for good.
_EXHAUSTED = Fraction(10) ** 400


def _within(total: Fraction, limit: Fraction) -> bool:
    """``total`` correctly rounded to a double is within ``limit``'s; past the largest double, never."""
    try:
        return float(total) <= float(limit)
    except OverflowError:
        return False


@attrs.frozen
class Usage:
    """A filter's bookkeeping: ``amounts`` in its own currency against its ``limits``, and, for
    reading only, ``epsilon`` (with ``delta``) that the amounts correspond to. It is not the
    guarantee of a session: that is the budget, under the filter, whenever the session stops."""

    filter: str
    currency: str
    amounts: tuple[float, ...]
    limits: tuple[float, ...]
    epsilon: float
    delta: float
    left: bool = False  # True for what remains, False for what was spent

    def to_dict(self) -> dict:
        return {"filter": self.filter, "currency": self.currency, "amounts": list(self.amounts),
                "limits": list(self.limits), "epsilon": self.epsilon, "delta": self.delta}

    def table(self):
        """A ``rich`` table: each amount against its limit in the filter's currency, and ε at δ."""
        from rich.table import Table

        table = Table(title=f"{'remaining' if self.left else 'spent'} under the {self.filter!r} filter")
        for column in ("", "amount", "of"):
            table.add_column(column, justify="left" if not column else "right")
        names = ("Σε", "Σδ") if self.filter == "basic" else tuple(
            self.currency if len(self.amounts) == 1 else f"{self.currency}[{i}]" for i in range(len(self.amounts)))
        for name, amount, limit in zip(names, self.amounts, self.limits):
            table.add_row(name, f"{amount:.6g}", f"{limit:.6g}")
        if self.filter != "basic":
            table.add_row("ε at δ (for reading)", f"{self.epsilon:.4g}", f"δ = {self.delta:.3g}")
        return table

    def _repr_html_(self) -> str:
        """The table as an HTML fragment (Jupyter)."""
        from .._render import html_table

        return html_table(self.table())

    def __str__(self) -> str:
        if self.filter == "basic":
            return f"Σε = {self.epsilon:.6g} of {self.limits[0]:.6g}, Σδ = {self.delta:.3g} of {self.limits[1]:.3g}"
        return (f"{self.currency} = {self.amounts[0]:.6g} of {self.limits[0]:.6g} "
                f"(ε = {self.epsilon:.4g} at δ = {self.delta:.3g}, for reading)")


class Filter(abc.ABC):
    """One rule for a session's adaptive steps (module doc). ``price`` gives a step's cost in the
    filter's currency (or refuses it); ``fits`` says whether a total stays within the budget."""

    name: ClassVar[str]
    currency: ClassVar[str]
    source: ClassVar[str]

    def __init__(self, budget: _g.Guarantee):
        self.budget = _g.check("budget", budget)

    def zero(self) -> Price:
        return tuple(Fraction(0) for _ in self.limits)

    @property
    @abc.abstractmethod
    def limits(self) -> Price:
        """The budget in the filter's currency."""

    @abc.abstractmethod
    def price(self, guarantee: _g.Guarantee, event) -> Price:
        """The step's cost; a ``PrivacyError`` naming the filter if it cannot account for the step."""

    #: which limits a total must keep: "every" one, or "some" one (the Rényi filter's union over
    #: orders); a PostgreSQL ledger's own check (``pg_functions``) applies the same rule
    fits_when: ClassVar[str] = "every"

    def fits(self, total: Price) -> bool:
        """Whether every total (or some, by ``fits_when``), correctly rounded to a double
        (``math.fsum``'s rounding of the exact sum: ten charges of 0.1 fit a budget of 1), is within
        its limit; a total past the largest double (an exhausted Rényi order) fits none."""
        within = (_within(t, limit) for t, limit in zip(total, self.limits))
        return all(within) if self.fits_when == "every" else any(within)

    @abc.abstractmethod
    def epsilon(self, total: Price) -> float:
        """ε at the budget's δ that ``total`` corresponds to, for reading."""

    def usage(self, total: Price) -> Usage:
        return Usage(self.name, self.currency, tuple(float(t) for t in total), tuple(float(x) for x in self.limits),
                     self.epsilon(total), self.budget.delta)

    def remaining(self, total: Price) -> Usage:
        left = tuple(max(limit - t, Fraction(0)) for t, limit in zip(total, self.limits))
        return Usage(self.name, self.currency, tuple(float(x) for x in left), tuple(float(x) for x in self.limits),
                     max(self.budget.epsilon - self.epsilon(total), 0.0), self.budget.delta, left=True)

    def describe(self) -> dict:
        """What the ledger file records about the filter (its name and fixed parameters)."""
        return {"filter": self.name}

    def price_text(self, price: Price) -> str:
        """A step's price for the ledger's "charged" column."""
        return ", ".join(f"{float(p):.4g}" for p in price)

    def _refuse(self, guarantee, why: str):
        raise PrivacyError(f"the {self.name!r} filter cannot account for a step {guarantee} ({why}); "
                           f"{self.hint}. Nothing was charged.")

    hint: ClassVar[str] = ""


class BasicFilter(Filter):
    """Σε_i <= ε and Σδ_i <= δ: valid for any adaptively chosen steps (Rogers et al. 2016, Theorem 3.6)."""

    name, currency = "basic", "(Σε, Σδ)"
    source = "basic composition filter (Rogers, Roth, Ullman & Vadhan 2016, Theorem 3.6)"

    def __init__(self, budget):
        super().__init__(budget)
        self._limits = Fraction(self.budget.epsilon), Fraction(self.budget.delta)

    @property
    def limits(self) -> Price:
        return self._limits

    def price(self, guarantee, event) -> Price:
        return Fraction(guarantee.epsilon), Fraction(guarantee.delta)

    def epsilon(self, total: Price) -> float:
        return float(total[0])

    def price_text(self, price: Price) -> str:
        return f"ε={float(price[0]):.4g}, δ={float(price[1]):.3g}"

    def usage(self, total: Price) -> Usage:
        return attrs.evolve(super().usage(total), delta=float(total[1]))

    def remaining(self, total: Price) -> Usage:
        left = super().remaining(total)
        return attrs.evolve(left, epsilon=left.amounts[0], delta=left.amounts[1])


class _SummedFilter(Filter):
    """A filter whose currency is one number summed over the steps (Σμ², Σρ)."""

    symbol: ClassVar[str]
    refusal: ClassVar[str]

    def __init__(self, budget):
        super().__init__(budget)
        self._limit = self._budget_limit()

    @abc.abstractmethod
    def _budget_limit(self) -> Fraction:
        """The budget in the filter's currency, rounded down."""

    @abc.abstractmethod
    def _amount(self, event):
        """The step's amount (rounded up), or ``None`` when the filter cannot price it."""

    @property
    def limits(self) -> Price:
        return (self._limit,)

    def price(self, guarantee, event) -> Price:
        amount = None if event is None else self._amount(event)
        if amount is None:
            self._refuse(guarantee, self.refusal)
        return (Fraction(amount),)

    def price_text(self, price: Price) -> str:
        return f"{self.symbol}={float(price[0]):.4g}"


class GaussianFilter(_SummedFilter):
    """Σμ_i² <= μ² for continuous Gaussian steps: μ-GDP under full adaptivity (Smith & Thakurta
    2022, Theorem 3.1), hence the budget's (ε, δ) for μ = ``gdp.budget_mu(ε, δ)``."""

    name, currency, symbol = "gdp", "Σμ²", "μ²"
    source = "Gaussian DP filter (Smith & Thakurta 2022, Theorem 3.1)"
    refusal = "it is not a continuous Gaussian"
    hint = ("it admits continuous Gaussian steps only (TextbookGaussian, or subsampling-free compositions of "
            "them); create the accountant with filter='zcdp' for the float-safe Gaussian, 'rdp' for subsampled "
            "or Laplace steps, or 'basic'")

    def _budget_limit(self) -> Fraction:
        if not self.budget.delta > 0:
            raise ValueError("the GDP filter needs a budget with δ > 0 (μ-GDP is never pure ε-DP); "
                             "use filter='basic' for a pure ε budget")
        self.mu = _gdp.budget_mu(self.budget.epsilon, self.budget.delta)
        return Fraction(self.mu) ** 2

    def _amount(self, event):
        return _gdp.mu_squared(event)

    def epsilon(self, total: Price) -> float:
        return _gdp.epsilon(math.sqrt(float(total[0])), self.budget.delta) if total[0] else 0.0


class ZCDPFilter(_SummedFilter):
    """Σρ_i <= ρ for zCDP steps: ρ-zCDP under full adaptivity (module doc), hence the budget's
    (ε, δ) for ρ = ``rdp.budget_rho(ε, δ)``."""

    name, currency, symbol = "zcdp", "Σρ", "ρ"
    source = "zCDP filter (Feldman & Zrnic 2021, Theorem 3.1, at every order; Whitehouse et al. 2023)"
    refusal = "it is not a zCDP step"
    hint = ("it admits zCDP steps only (Gaussian, TextbookGaussian, pure ε-DP as ε²/2-zCDP); create the "
            "accountant with filter='rdp' for subsampled steps, or 'basic' for (ε, δ) steps")

    def _budget_limit(self) -> Fraction:
        if not self.budget.delta > 0:
            raise ValueError("the zCDP filter needs a budget with δ > 0; use filter='basic' for a pure ε budget")
        self.rho = _rdp.budget_rho(self.budget.epsilon, self.budget.delta)
        return Fraction(self.rho)

    def _amount(self, event):
        return _rdp.rho(event)

    def epsilon(self, total: Price) -> float:
        return _rdp.zcdp_epsilon(float(total[0]), self.budget.delta)


class RenyiFilter(Filter):
    """Rényi filter over orders fixed in advance, δ split evenly (module doc; docs/proofs.md)."""

    name, currency, fits_when = "rdp", "Σε_i(α) per order", "some"
    source = "Rényi filter, orders fixed in advance, δ split over them (Feldman & Zrnic 2021; docs/proofs.md)"
    hint = ("it admits steps with a Rényi curve (Gaussian, subsampled Gaussian, Laplace, zCDP, pure ε-DP), "
            "not an (ε, δ) step with δ > 0; create the accountant with filter='basic' for such steps")

    def __init__(self, budget, orders=None):
        super().__init__(budget)
        orders = _rdp.FILTER_ORDERS if orders is None else orders
        try:
            if isinstance(orders, (str, bytes)):
                raise TypeError
            given = [float(a) for a in orders]
        except (TypeError, ValueError):
            raise ValueError(f"Rényi orders must be a sequence of numbers > 1, got {orders!r}") from None
        if not given or any(not (math.isfinite(a) and a > 1) for a in given):
            raise ValueError(f"Rényi orders must be finite and > 1, got {orders!r}")
        if len(set(given)) < len(given):
            raise ValueError(f"Rényi orders must be distinct (each one splits δ), got {orders!r}")
        self.orders = tuple(sorted(given))
        if len(self.orders) == 1:
            self.source = ("Rényi filter, one order fixed in advance (Feldman & Zrnic 2021, Theorem 3.1), "
                           "converted as a mechanism fixed in advance (Canonne, Kamath & Steinke 2020, Prop. 12)")
        if not self.budget.delta > 0:
            raise ValueError("the Rényi filter needs a budget with δ > 0 (its conversion to (ε, δ) spends δ); "
                             "use filter='basic' for a pure ε budget")
        self._limits = tuple(self._limit(a) for a in self.orders)
        if all(limit <= 0 for limit in self._limits):
            raise ValueError(f"no Rényi order in {self.orders} leaves a positive budget at {self.budget}; "
                             "give larger orders")

    def _conversion(self, alpha: float) -> float:
        """What converting Σε_i(α) to ε at the budget's δ adds. Several orders: Markov's
        log(K/δ)/(α − 1), δ split over the K orders (module doc). One order (> 1.01): the whole
        stopped session is then (α, B)-RDP (Feldman & Zrnic 2021, Theorem 3.1), so the conversion
        of any (α, B)-RDP algorithm applies, log(1 − 1/α) − log(δα)/(α − 1) (Canonne, Kamath &
        Steinke 2020, Proposition 12; Balle et al. 2020, Theorem 21; dp-accounting's; docs/proofs.md).
        Below 1.01 its terms cancel in floats, and Markov's is kept (also valid, and larger)."""
        return one_order_conversion(alpha, self.budget.delta) if len(self.orders) == 1 else (
            math.log(len(self.orders) / self.budget.delta) / (alpha - 1.0))

    def _limit(self, alpha: float) -> Fraction:
        """B = ε − (the conversion at α), rounded down past its float error."""
        conversion = self._conversion(alpha)
        value = self.budget.epsilon - conversion
        return Fraction(value - 1e-12 * (abs(self.budget.epsilon) + abs(conversion) + 1.0))

    @property
    def limits(self) -> Price:
        return self._limits

    def price(self, guarantee, event) -> Price:
        values = None if event is None else _rdp.curve(event, self.orders)
        if values is None:
            self._refuse(guarantee, "it has no Rényi curve")
        if not np.any(np.isfinite(values)):
            self._refuse(guarantee, "its Rényi curve is infinite at every order")
        return tuple(Fraction(float(v)) if np.isfinite(v) else _EXHAUSTED for v in values)

    def epsilon(self, total: Price) -> float:
        return min(float(t) + self._conversion(a) for t, a in zip(total, self.orders))

    def usage(self, total: Price) -> Usage:
        return _RenyiUsage(**attrs.asdict(super().usage(total), recurse=False), orders=self.orders)

    def remaining(self, total: Price) -> Usage:
        return _RenyiUsage(**attrs.asdict(super().remaining(total), recurse=False), orders=self.orders)

    def describe(self) -> dict:
        return {"filter": self.name, "orders": list(self.orders)}

    def price_text(self, price: Price) -> str:
        middle = len(self.orders) // 2
        return f"ε(α={self.orders[middle]:g})={float(price[middle]):.4g}, {len(self.orders)} orders"


@attrs.frozen
class _RenyiUsage(Usage):
    orders: tuple[float, ...] = ()

    def best_order(self) -> int:
        """The order with the most headroom left (the one that keeps the session going longest)."""
        headroom = np.asarray(self.amounts) if self.left else np.asarray(self.limits) - np.asarray(self.amounts)
        return int(np.argmax(headroom))

    def to_dict(self) -> dict:
        return {**super().to_dict(), "orders": list(self.orders)}

    def __str__(self) -> str:
        best = self.best_order()
        return (f"RDP at α = {self.orders[best]:g}: {self.amounts[best]:.4g} of {self.limits[best]:.4g} "
                f"(ε = {self.epsilon:.4g} at δ = {self.delta:.3g}, for reading)")


FILTERS = {f.name: f for f in (BasicFilter, GaussianFilter, ZCDPFilter, RenyiFilter)}


def make(spec, budget: _g.Guarantee, orders=None) -> Filter:
    """A filter from its name (``"basic"``, ``"gdp"``, ``"zcdp"``, ``"rdp"``) or a ``Filter`` instance."""
    if isinstance(spec, Filter):
        if orders is not None:
            raise ValueError("give orders to RenyiFilter itself, not beside a Filter instance")
        return spec
    if spec not in FILTERS:
        raise ValueError(f"filter must be one of {tuple(FILTERS)} or a Filter, got {spec!r}")
    if spec == "rdp":
        return RenyiFilter(budget, orders)
    if orders is not None:
        raise ValueError(f"orders are for the 'rdp' filter, not {spec!r}")
    return FILTERS[spec](budget)


def one_order_conversion(alpha: float, delta: float) -> float:
    """What converting an (α, B)-RDP guarantee to ε at δ adds to B: log(1 − 1/α) − log(δα)/(α − 1)
    above α = 1.01 (CKS 2020, Prop. 12), Markov's log(1/δ)/(α − 1) below, where the other's terms
    cancel in floats (also valid, and larger)."""
    if alpha > 1.01:
        return math.log1p(-1.0 / alpha) - math.log(delta * alpha) / (alpha - 1.0)
    return math.log(1.0 / delta) / (alpha - 1.0)
