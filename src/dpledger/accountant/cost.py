"""What a step costs, as the accountant prices it: ``Cost`` and ``cost_of``."""

from __future__ import annotations

from typing import Any

import attrs

from .. import guarantees as _g
from ..privacy import events as _events


@attrs.frozen
class Cost:
    """A step as the accountant prices it: its (ε, δ) guarantee (what the basic filter charges), its
    dp-accounting event (what the other filters charge), what the ledger shows about it, and the
    neighbouring relation it is private under when the step states one (a graph or a plan does)."""

    guarantee: _g.Guarantee
    event: Any
    kind: str
    params: dict = attrs.field(factory=dict)
    rule: str = ""
    steps: tuple = ()
    relation: Any = None


def cost_of(what) -> Cost:
    """The cost of a mechanism, a guarantee, a graph or a plan."""
    from ..graph.graph import Graph, Plan
    from ..mechanisms.base import Mechanism

    if isinstance(what, Graph):
        what = what.plan()
    if isinstance(what, Plan):
        params = {} if what.domain is None else {"domain": str(what.domain)}
        return Cost(what.guarantee, what.event, "graph", params, what.rule, what.steps, what.relation)
    if isinstance(what, Mechanism):
        return Cost(what.guarantee(), what.dp_event(), what.kind, what.params(), what.source)
    g = _g.check("what", what)
    return Cost(g, _events.EpsilonDeltaDpEvent.of(g), "declared", {}, "declared guarantee")
