"""What every node shares when it plans and runs: its plan, the planning context, the run's state,
and the rule for code that touches data.

Observables (docs/design.md, "What a run reveals"): a run reveals its released values, whether it
halted and which step halted it, and any error. Only a halting test (``halt_if``) or
post-processing of released values may halt a run. Code that touches data must be total on the
estimator's domain; if it raises anyway (a ``Halt`` or any other exception) the runtime reports a
``PrivacyError`` naming the step, because such an error depends on the data and no plan covers it.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import attrs
import numpy as np

from .. import guarantees as _g
from ..errors import PrivacyError
from ..privacy.events import EpsilonDeltaDpEvent
from ..privacy.steps import PlanStep
from ..relations import Relation


class Halt(Exception):
    """Raised inside a run when a halting test fires; the run then outputs ⊥ (``None``)."""

    def __init__(self, test: str):
        super().__init__(test)
        self.test = test


@attrs.frozen
class NodePlan:
    """A node's planned cost. ``establishes``: halting tests later siblings may condition on;
    ``halting``: it contains a halting test or conditional step (so Lemma A.4 governs it);
    ``event``: the dp-accounting event of the whole node, for tight composition and the filters
    (when none is given, the worst case of its guarantee: a halting segment is one such step);
    ``releases``: the names of the values it releases (mechanism outputs and post-processing),
    in order: exactly what a run may show."""

    guarantee: _g.Guarantee
    rule: str
    steps: tuple[PlanStep, ...]
    produces: frozenset[str] = frozenset()
    establishes: frozenset[str] = frozenset()
    halting: bool = False
    event: Any = None
    releases: tuple[str, ...] = ()

    def __attrs_post_init__(self):
        if self.event is None:
            object.__setattr__(self, "event", EpsilonDeltaDpEvent.of(self.guarantee))


@attrs.frozen
class PlanContext:
    """What planning knows at a node: the relation, the path, earlier outputs and halting tests."""

    relation: Relation
    path: str = ""
    available: frozenset[str] = frozenset()
    established: frozenset[str] = frozenset()

    def child(self, name: str, **changes) -> "PlanContext":
        path = f"{self.path}/{name}" if self.path else name
        return attrs.evolve(self, path=path, **changes)

    def scope(self, name: str, **changes) -> "PlanContext":
        """The context inside a boundary that conditions do not cross (no condition holds inside)."""
        return self.child(name, established=frozenset(), **changes)


class RunState:
    """Mutable state of one execution: the generator and the outputs released so far."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.outputs: dict[str, Any] = {}

    def inputs(self, uses: tuple[str, ...]) -> dict[str, Any]:
        return {name: self.outputs[name] for name in uses}

    def map_records(self, path: str, fn: Callable, records, inputs: dict):
        """``fn(records, **inputs)`` for a ``per_record`` step (a hook: ``testing.position`` checks the
        maps a run makes by overriding it)."""
        return touching(path, fn, records, **inputs)


def child_path(path: str, name: str) -> str:
    return f"{path}/{name}"


#: numpy's floating-point error handling inside data-touching code, whatever the caller set: every
#: event ignored. "raise" (a caller's ``np.seterr``) would turn a subnormal or an overflow on one
#: input into an error where its neighbour runs; "warn" hands the event to Python's ``warnings``,
#: which the caller controls (``-W error`` makes it an exception), so a warning on D and none on D'
#: is an observable no plan covers. Ignoring an event is not hiding a result: code that touches
#: data clamps to public ranges before arithmetic, so what it computes is what its proof states
#: (the built-ins' stress pairs run under ``-W error`` and ``np.seterr(all="raise")`` in the suite).
ERROR_STATE = {"divide": "ignore", "over": "ignore", "invalid": "ignore", "under": "ignore"}


def touching(path: str, fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` for code that touches data, under ``ERROR_STATE`` (numpy's
    floating-point events all ignored, whatever the caller set; numpy keeps it per thread): any
    exception it raises (``Halt`` included) becomes a ``PrivacyError`` naming the step, because it
    depends on the data."""
    try:
        with np.errstate(**ERROR_STATE):
            return fn(*args, **kwargs)
    except PrivacyError:
        raise
    except Halt as halt:
        raise PrivacyError(
            f"step {path!r} halted ({halt.test}) while touching the data: only halting tests (halt_if) and "
            "post-processing of released values may halt a run. This is a bug in the estimator; the run's "
            "observables are not covered by its plan (the charge stands)") from None
    except Exception as exc:
        raise PrivacyError(
            f"step {path!r} raised {type(exc).__name__} while touching the data: {exc}. Code that touches data "
            "must be total on the estimator's domain; this is a bug in the estimator, and the run's observables "
            "are not covered by its plan (the charge stands)") from exc


def _check_uses(node, ctx: PlanContext, fn: Callable | None = None, leading: tuple[str, ...] = ()) -> None:
    """``uses`` names earlier outputs, and ``fn`` accepts them (after ``leading`` positional
    arguments, e.g. the data): checked when planning, so a typo never costs a charge."""
    missing = [u for u in node.uses if u not in ctx.available]
    if missing:
        raise PrivacyError(
            f"step {ctx.path!r} uses {missing} which no earlier step releases; "
            f"earlier outputs: {sorted(ctx.available) or 'none'}"
        )
    if fn is None:
        return
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return
    try:
        signature.bind(*leading, **{u: None for u in node.uses})
    except TypeError as exc:
        call = ", ".join([*leading, *(f"{u}=..." for u in node.uses)])
        raise TypeError(f"step {ctx.path!r}: its function cannot be called as fn({call}) ({exc}); the keyword "
                        f"names must match uses={list(node.uses)}. Nothing was charged.") from None


def _uses(value) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _name(value) -> str:
    if not isinstance(value, str) or not value or "/" in value:
        raise ValueError(f"a step name must be a non-empty string without '/', got {value!r}")
    return value
