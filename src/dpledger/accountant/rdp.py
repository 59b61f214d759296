"""Rényi DP curves of events at fixed orders, for the Rényi filter and for fixed compositions.

Curves come from dp-accounting's ``RdpAccountant`` (Gaussian, Poisson-subsampled Gaussian,
Laplace, zCDP), inflated by a relative ``MARGIN`` for the floating-point evaluation of its closed
forms. A pure ε-DP step without a curve of its own (``EpsilonDeltaDpEvent`` with δ = 0, a discrete
Laplace) has ε(α) = min(ε, αε²/2) (ε-DP implies ε²/2-zCDP: Bun & Steinke 2016, Proposition 3.3;
and D_α <= D_∞ = ε). A step with δ > 0 and no curve has none: ``curve`` returns ``None``.
"""

from __future__ import annotations

import functools
import json

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as _rdp

from ..mechanisms.gaussian import ORDERS
from . import events as _events

#: Inflation of dp-accounting's RDP values for their float evaluation: relative, and absolute (its
#: Poisson-subsampled Gaussian values at q = 1e-7 are up to 6e-8 relative, ~1e-22 absolute, below
#: the exact ones).
MARGIN, ABSOLUTE_MARGIN = 1e-9, 1e-18

#: The Rényi filter's default orders, fixed before any data: wide enough for ε from about 0.1 to
#: 20 at δ from 1e-12 to 1e-3, few enough that splitting δ over them costs little (log 20 / (α - 1)).
FILTER_ORDERS = (1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0,
                 64.0, 128.0, 256.0)


def _pure(epsilon: float, orders: np.ndarray) -> np.ndarray:
    return np.minimum(epsilon, orders * epsilon**2 / 2.0)


@functools.lru_cache(maxsize=4096)
def _leaf(key: str, orders: tuple[float, ...]) -> np.ndarray | None:
    event = _events.from_dict(json.loads(key))
    grid = np.asarray(orders, dtype=float)
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return np.zeros_like(grid)
    if isinstance(event, _events.EpsilonDeltaDpEvent):
        return _pure(event.epsilon, grid) if event.delta == 0 else None
    if isinstance(event, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        return _pure(event.noise_parameter * event.sensitivity, grid)
    accountant = _rdp.RdpAccountant(orders=list(orders))
    if not accountant.supports(event):
        return None
    accountant.compose(event)
    values = np.asarray(accountant._rdp, dtype=float)  # noqa: SLF001 - the curve itself is what we need
    return values * (1.0 + MARGIN) + ABSOLUTE_MARGIN


def curve(event, orders: tuple[float, ...]) -> np.ndarray | None:
    """ε(α) at each order (an upper bound), or ``None`` when some part of the event has no curve."""
    total = np.zeros(len(orders))
    for leaf, count in _events.leaves(event):
        values = _leaf(_events.key(leaf), tuple(orders))
        if values is None:
            return None
        total = total + count * values
    return total


def epsilon(event, delta: float, orders: tuple[float, ...]) -> float | None:
    """ε at δ of a *fixed* composition with this curve (dp-accounting's conversion, optimised over the
    orders: valid because the curve holds at every order at once). ``None`` without a curve."""
    values = curve(event, orders)
    if values is None:
        return None
    return float(_rdp.compute_epsilon(list(orders), list(values), delta)[0])


def rho(event) -> float | None:
    """An upper bound on the zCDP ρ of the event (ξ = 0), or ``None`` when it is not zCDP here: a
    zCDP event's ρ, a Gaussian's 1/(2z²), a pure ε-DP step's ε²/2 (Bun & Steinke 2016, Prop. 3.3)."""
    total = 0.0
    for leaf, count in _events.leaves(event):
        if isinstance(leaf, dp_accounting.NoOpDpEvent):
            continue
        if isinstance(leaf, dp_accounting.ZCDpEvent) and leaf.xi == 0:
            value = leaf.rho
        elif isinstance(leaf, dp_accounting.GaussianDpEvent):
            value = 0.5 / leaf.noise_multiplier**2
        elif isinstance(leaf, dp_accounting.LaplaceDpEvent):  # pure ε = 1/b
            value = 0.5 * (1.0 / leaf.noise_multiplier) ** 2
        elif isinstance(leaf, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
            value = 0.5 * (leaf.noise_parameter * leaf.sensitivity) ** 2
        elif isinstance(leaf, _events.EpsilonDeltaDpEvent) and leaf.delta == 0:
            value = 0.5 * leaf.epsilon**2
        else:
            return None
        total += count * value * (1.0 + MARGIN)
    return total


def zcdp_epsilon(rho_: float, delta: float) -> float:
    """ε at δ of ρ-zCDP: dp-accounting's conversion over the fine grid ``ORDERS`` (valid at any order,
    since ρ-zCDP holds at all of them)."""
    if rho_ == 0:
        return 0.0
    return float(_rdp.compute_epsilon(list(ORDERS), [rho_ * a for a in ORDERS], delta)[0])


def budget_rho(epsilon_: float, delta: float) -> float:
    """The largest ρ (to a relative 1e-9, from below) with ``zcdp_epsilon(ρ, δ) <= ε``."""
    low, high = 0.0, 1.0
    while zcdp_epsilon(high, delta) <= epsilon_:
        low, high = high, 2.0 * high
    while high - low > 1e-9 * high:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if zcdp_epsilon(middle, delta) <= epsilon_ else (low, middle)
    return low
