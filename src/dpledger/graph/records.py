"""The one node that maps records: ``per_record`` (docs/design.md, "Per-record maps").

Under a multiset relation (``ReplaceOne``, ``AddRemoveOne``) a neighbour may list the same records
in another order, drop one (shifting every later row) or add one. A map of each record alone —
clipping, a projection, the nearest centre, an offset — keeps neighbours neighbours (one changed
record changes one mapped record), so the steps after it keep their guarantee. That holds only if
the map is *position-free*: the same bits for the same record at any row, any n, any BLAS thread
count. ``dpledger.rowwise`` has such maps (elementwise operations, sums in index order); a matrix
product does not (its kernels depend on the row's place), and ``testing.position.check`` verifies a
graph's maps on given records.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from ..errors import PrivacyError
from ..relations import AddRemoveOne, ReplaceOne
from .runtime import NodePlan, PlanContext, RunState, _check_uses, _name, _uses, child_path


@attrs.frozen
class PerRecord:
    """Run ``node`` on ``fn(records, **uses)``, a position-free map of each record alone (its row i
    from row i of the records only): neighbours stay neighbours, so the node's guarantee is
    unchanged. ``uses`` names earlier releases the map reads (e.g. the current centres)."""

    name: str = attrs.field(converter=_name)
    fn: Callable
    node: Any
    uses: tuple[str, ...] = attrs.field(default=(), converter=_uses)

    def plan(self, ctx: PlanContext) -> NodePlan:
        if not isinstance(ctx.relation, (ReplaceOne, AddRemoveOne)):
            raise PrivacyError(f"per-record map {ctx.path!r}: records are the rows of a dataset under ReplaceOne or "
                               f"AddRemoveOne, not the units of {ctx.relation!r}")
        _check_uses(self, ctx, self.fn, ("records",))
        inner = self.node.plan(ctx.scope(self.node.name))
        return attrs.evolve(inner, produces=inner.produces | {self.name}, establishes=frozenset())

    def execute(self, data, state: RunState, path: str):
        mapped = checked_rows(path, state.map_records(path, self.fn, data, state.inputs(self.uses)), data)
        state.outputs[self.name] = out = self.node.execute(mapped, state, child_path(path, self.node.name))
        return out


def checked_rows(path: str, mapped, data):
    """``mapped``, if it has one row per record of ``data``; else the ``PrivacyError`` of a bug."""
    if np.shape(mapped)[:1] != np.shape(data)[:1]:
        raise PrivacyError(f"per-record map {path!r} returned {np.shape(mapped)[:1]} rows for {len(data)} records: "
                           "it must map each record to one row. This is a bug in the estimator (the charge stands)")
    return mapped
