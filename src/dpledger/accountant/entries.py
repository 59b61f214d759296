"""A ledger's entries: one charge each, with the plan it paid for, in JSON form for the stores."""

from __future__ import annotations

import datetime as _dt

import attrs

from .. import guarantees as _g
from ..privacy.steps import PlanStep, plain_params


@attrs.frozen
class LedgerEntry:
    """A charge: recorded *before* the step ran, so a crash after it never loses the charge."""

    name: str
    mechanism: str
    relation: str
    guarantee: _g.Guarantee
    rule: str
    params: dict = attrs.field(factory=dict, converter=plain_params)
    steps: tuple[PlanStep, ...] = attrs.field(default=(), converter=tuple)
    event: dict | None = None  # the dp-accounting event in JSON form (privacy.events), for the filter
    time: str = attrs.field(factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds"))
    charged: str = ""  # what the session's filter charged, in its currency
    prepaid: str | None = None  # the declared schedule that paid for this step in advance
    label: str | None = None  # the input's public label (a file name as given), never computed from the data
    charge_id: str | None = None  # the client's id for this charge: recorded once, a retry returns this entry
    blocks: tuple[str, ...] | None = attrs.field(default=None, converter=lambda v: None if v is None else tuple(v))
    # the blocks of a block ledger this charge was made against (each one's budget paid it); None elsewhere
    analyst: str | None = None  # who charged: a declared name (SQLite), the database role (PostgreSQL)

    def to_dict(self) -> dict:
        return {"name": self.name, "mechanism": self.mechanism, "relation": self.relation,
                "guarantee": _g.to_dict(self.guarantee), "rule": self.rule, "params": self.params,
                "steps": [s.to_dict() for s in self.steps], "event": self.event, "time": self.time,
                "charged": self.charged, "prepaid": self.prepaid,
                **({} if self.label is None else {"label": self.label}),
                **({} if self.charge_id is None else {"charge_id": self.charge_id}),
                **({} if self.blocks is None else {"blocks": list(self.blocks)}),
                **({} if self.analyst is None else {"analyst": self.analyst})}

    @classmethod
    def from_dict(cls, data: dict) -> "LedgerEntry":
        return cls(data["name"], data["mechanism"], data["relation"], _g.from_dict(data["guarantee"]),
                   data["rule"], data["params"], tuple(PlanStep.from_dict(s) for s in data["steps"]),
                   data.get("event"), data["time"], data.get("charged", ""), data.get("prepaid"), data.get("label"),
                   data.get("charge_id"), data.get("blocks"), data.get("analyst"))
