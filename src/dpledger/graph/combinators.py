"""The words a mechanism graph is written in. Each returns a node; ``Graph(root, relation)``
wraps the root. See docs/design.md for the graph format and docs/tutorial.md for an example."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _validate
from ..guarantees import Guarantee
from ..mechanisms.base import Mechanism
from .nodes import Conditional, HaltIf, Release, Repeat, Sequence, Split
from .wrappers import Absorb, PostProcess, Private, Privatise, Subsample, Transform
from .records import PerRecord


def release(name: str, mechanism: Mechanism, query: Callable, uses=(), note: str = "") -> Release:
    """Release ``mechanism`` applied to ``query(data, **{u: output of u for u in uses})``;
    ``note`` tells the ledger where the query's claimed sensitivity comes from."""
    return Release(name, mechanism, query, uses, note)


def halt_if(name: str, mechanism: Mechanism, query: Callable, halt_when: Callable[[Any], bool], uses=()) -> HaltIf:
    """A halting test: release the noisy statistic and halt the run when ``halt_when(noisy)``."""
    return HaltIf(Release(name, mechanism, query, uses), halt_when)


def conditional(given: str, node) -> Conditional:
    """``node`` is private only if the halting test named ``given`` did not halt (Lemma A.4)."""
    return Conditional(node, given)


def sequence(*nodes, name: str = "main") -> Sequence:
    """Run ``nodes`` in order (adaptive sequential composition; Lemma A.4 when halting inside)."""
    return Sequence(name, nodes)


def repeat(node, times: int, initial: dict | None = None, name: str | None = None) -> Repeat:
    """Run ``node`` ``times`` times, each iteration seeing the last one's outputs (the first sees
    ``initial``, public values): tight self-composition of a step fixed in advance."""
    if isinstance(times, bool) or not isinstance(times, (int, np.integer)):
        raise TypeError(f"times must be an integer, got {times!r}")
    if times < 1:
        raise ValueError(f"times must be >= 1, got {times}")
    if initial is not None and not isinstance(initial, dict):
        raise TypeError(f"initial must be a dict of public starting values, got {type(initial).__name__}")
    return Repeat(name or f"{node.name}_repeat", node, int(times), dict(initial or {}))


def split(partition, *branches, name: str = "split") -> Split:
    """Random partition: branch i runs on part i; total (max ε, max δ) (Lemma C.15 argument)."""
    return Split(name, partition, branches)


def absorb(node, gamma: float) -> Absorb:
    """``node`` is private except with probability ``gamma`` over its coins (Fact I.3)."""
    if _validate.probability("gamma", gamma) > 0.5:
        raise ValueError(f"gamma must be <= 1/2 for Fact I.3, got {gamma}")
    return Absorb(node, float(gamma))


def transform(name: str, fn: Callable, node, stability: int = 1) -> Transform:
    """Run ``node`` on ``fn(data)``; ``stability`` k > 1 charges group privacy for k steps."""
    return Transform(name, fn, node, _validate.integer("stability", stability, minimum=1))


def group(node, k: int, name: str | None = None) -> Transform:
    """``node`` sees inputs up to ``k`` neighbour-steps apart: group privacy (kε, k e^{(k-1)ε} δ)."""
    return transform(name or f"{node.name}_group", _identity, node, k)


def per_record(name: str, fn: Callable, node, uses=()) -> PerRecord:
    """Run ``node`` on ``fn(records, **{u: output of u for u in uses})``, a position-free map of each
    record alone (build it from ``dpledger.rowwise`` and elementwise numpy: no matrix products).
    Under ReplaceOne or AddRemoveOne; the node's guarantee is unchanged."""
    return PerRecord(name, fn, node, uses)


def subsample(sampler, node, name: str = "subsample") -> Subsample:
    """Run ``node`` on a ``PoissonSample`` or ``SampleWithoutReplacement`` of the rows."""
    return Subsample(name, sampler, node)


def postprocess(name: str, fn: Callable, uses=(), *, vectorised: bool = False) -> PostProcess:
    """``fn(**outputs named in uses)``: never sees data, costs nothing (Lemma A.2). ``vectorised=True``
    declares that ``fn`` takes the outputs stacked along a new leading axis of runs and returns one
    row per run, row i from row i alone (a run calls it on a stack of one); the auditor then calls
    it once per batch of runs instead of once per run."""
    return PostProcess(name, fn, uses, vectorised=vectorised)


def private(name: str, fn: Callable, guarantee: Guarantee, source: str, uses=(), params=None) -> Private:
    """A step proven private elsewhere: ``fn(data, rng, **uses)`` with ``guarantee`` by ``source``."""
    return Private(name, fn, guarantee, source, uses, dict(params or {}))


def privatise(name: str, mechanism: Mechanism, query: Callable, node, m: int, uses=(), note: str = "") -> Privatise:
    """Lemma I.4: run ``node`` on ``mechanism`` (Gaussian) applied to ``query(data, rng, **uses)``, whose
    rows are jointly within the mechanism's sensitivity outside ``m`` rows on neighbouring inputs."""
    return Privatise(name, mechanism, query, node, _validate.integer("m", m, minimum=0), uses, note)


def _identity(data):
    return data
