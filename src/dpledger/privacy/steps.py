"""A plan's steps: where in a graph, which mechanism or rule, at what cost.

The graph states its plan in these steps and the ledger records them with each charge, so they
live below both.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from .. import guarantees as _g


def plain_params(value: Any) -> Any:
    """JSON-friendly copy of ledger parameters (numpy scalars, tuples, nested dicts)."""
    if isinstance(value, dict):
        return {str(k): plain_params(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_params(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


@attrs.frozen
class PlanStep:
    """One line of a plan: where in the graph, which mechanism or rule, at what cost. ``event`` (the
    step's dp-accounting event in JSON form) is kept for a declared schedule's steps, which its
    prepaid steps are checked against whenever the ledger is read."""

    path: str
    mechanism: str
    guarantee: _g.Guarantee
    rule: str
    params: dict = attrs.field(factory=dict, converter=plain_params)
    event: dict | None = None

    def to_dict(self) -> dict:
        out = {"path": self.path, "mechanism": self.mechanism, "guarantee": _g.to_dict(self.guarantee),
               "rule": self.rule, "params": self.params}
        return out if self.event is None else {**out, "event": self.event}

    @classmethod
    def from_dict(cls, data: dict) -> "PlanStep":
        return cls(data["path"], data["mechanism"], _g.from_dict(data["guarantee"]), data["rule"], data["params"],
                   data.get("event"))


def params_text(params: dict) -> str:
    """Parameters as "key=value, ..." (floats to 4 significant digits), for tables."""
    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{k}={fmt(v)}" for k, v in params.items())
