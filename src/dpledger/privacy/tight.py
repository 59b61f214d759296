"""The guarantee of a composition fixed before any data is seen: the steps of one plan, a
``repeat``, a declared schedule.

Every route below is a theorem about the same fixed mechanism, so the smallest ε any of them
gives at the plan's δ is valid: basic composition, and the PLD composition of dp-accounting (tight)
or, for compositions with zCDP steps (which have no PLD here), the Rényi curve converted at the
best order.
Each step's query may read earlier outputs (a ``repeat``'s iterations do), but every step's
mechanism and privacy parameters must be fixed in advance; steps whose parameters are chosen from
earlier outputs go through a filter (``filters``).
"""

from __future__ import annotations

import functools
import json
import math

import dp_accounting

from .. import guarantees as _g
from . import events as _events, pld as _pld, rdp as _rdp
from .rdp import ORDERS


def _nontrivial(event) -> list:
    return [(leaf, count) for leaf, count in _events.leaves(event)
            if not isinstance(leaf, dp_accounting.NoOpDpEvent)]


@functools.lru_cache(maxsize=1024)
def _pld_of(key: str):
    return _pld.from_event(_events.from_dict(json.loads(key)))


@functools.lru_cache(maxsize=4096)
def _epsilon(key: str, delta: float) -> float:
    distribution = _pld_of(key)
    if distribution is not None:
        return _pld.epsilon(distribution, delta, _pld.tail_mass(_events.from_dict(json.loads(key))))
    renyi = _rdp.epsilon(_events.from_dict(json.loads(key)), delta, ORDERS)  # zCDP steps have no PLD here
    return math.inf if renyi is None else renyi


def route(event) -> str:
    """Which tight route ``epsilon`` takes for ``event``: "PLD", or "Rényi curve" (zCDP steps)."""
    return "PLD" if _pld_of(_events.key(event)) is not None else "Rényi curve"


def epsilon(event, delta: float) -> float:
    """ε at ``delta`` of this fixed composition by PLD, or by its Rényi curve when it has no PLD."""
    return _epsilon(_events.key(event), float(delta))


def guarantee(event, basic: _g.Guarantee) -> _g.Guarantee:
    """``basic`` (the sum), or a smaller ε at the same δ when a tight route gives one. A single step
    keeps its own guarantee; a composition of pure steps keeps the sum (exact at δ = 0)."""
    parts = _nontrivial(event)
    if basic.delta == 0 or not parts or (len(parts) == 1 and parts[0][1] == 1):
        return basic
    return _g.make(min(basic.epsilon, epsilon(event, basic.delta)), basic.delta)
