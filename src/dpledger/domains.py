"""Input domains: the inputs a graph's guarantee speaks about, checked before any charge.

A sensitivity is a claim about the query on a stated set of inputs: a sum of scalar records in
[0, 1] moves by at most 1 when one record is replaced, but the same query on (n, 2) records, or
on records in [0, 10], moves by more. So every graph states its domain (``Graph(..., domain=)``)
and the runtime refuses input outside it before the charge (docs/design.md, "Input domains"):

- ``Records(shape=(), n=None, low=-inf, high=inf, integer=False)``: a dataset of records, each an
  array of ``shape`` (``()``: one number) of finite doubles within [low, high] (integers when
  ``integer``), ``n`` of them when n is public. For ``ReplaceOne`` and ``AddRemoveOne`` (the latter
  changes n, so it takes no fixed n). The default for those relations is ``Records()``: one finite
  double per record, an array of shape (n,).
- ``Graphs(n=None)``: an undirected simple graph on n vertices (``EdgeAdjacency.validate``: a
  symmetric 0/1 adjacency matrix, dense, scipy sparse or networkx). The default for
  ``EdgeAdjacency``.
"""

from __future__ import annotations

import abc
import math

import attrs
import numpy as np

from . import _validate
from .relations import AddRemoveOne, EdgeAdjacency, Relation, ReplaceOne


class Domain(abc.ABC):
    """What a graph accepts: ``validate`` (the input in canonical form, or a ``ValueError`` naming
    ``domain=`` before any charge), ``project`` (records moved into the domain, for auditors and
    stress inputs) and the relations it goes with."""

    relations: tuple[type, ...] = ()

    @abc.abstractmethod
    def validate(self, data):
        """The input in canonical form, or a ``ValueError`` (or ``TypeError``) naming ``domain=``."""

    def project(self, records):
        """``records`` moved into the domain (the identity where nothing needs moving)."""
        return records

    def check_relation(self, relation: Relation) -> None:
        if not isinstance(relation, self.relations):
            raise TypeError(f"domain {self} is for {' or '.join(r.__name__ for r in self.relations)} neighbours, "
                            f"not {relation!r}")


def _shape(value) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (value,)
    try:
        shape = tuple(_validate.integer("shape", v, minimum=1) for v in value)
    except TypeError:
        raise TypeError(f"shape must be a tuple of positive integers (the shape of one record), got {value!r}") from None
    return shape


def _bound(name: str):
    def convert(value) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number, got {value!r}")
        value = float(value)
        if math.isnan(value):
            raise ValueError(f"{name} must not be NaN")
        return value
    return convert


@attrs.frozen
class Records(Domain):
    """A dataset of records of ``shape``, finite doubles in [``low``, ``high``] (integers when
    ``integer``), ``n`` of them when n is public, at most ``max_n`` when that bound is public (a
    float sum's rounding allowance under AddRemoveOne needs one: ``rounding.sum_sensitivity``)."""

    shape: tuple[int, ...] = attrs.field(default=(), converter=_shape)
    n: int | None = attrs.field(default=None, converter=lambda v: None if v is None else _validate.integer(
        "n", v, minimum=1))
    low: float = attrs.field(default=-math.inf, converter=_bound("low"))
    high: float = attrs.field(default=math.inf, converter=_bound("high"))
    integer: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    max_n: int | None = attrs.field(default=None, converter=lambda v: None if v is None else _validate.integer(
        "max_n", v, minimum=1))

    relations = (ReplaceOne, AddRemoveOne)

    def __attrs_post_init__(self):
        if not self.low <= self.high:
            raise ValueError(f"Records: low={self.low} must be <= high={self.high}")
        if self.n is not None and self.max_n is not None:
            raise ValueError(f"Records: give n (the public size) or max_n (a public bound on it), not both")

    def check_relation(self, relation: Relation) -> None:
        super().check_relation(relation)
        if self.n is not None and isinstance(relation, AddRemoveOne):
            raise ValueError(f"domain {self} fixes n, but AddRemoveOne neighbours differ in n; leave n unset")

    def validate(self, data) -> np.ndarray:
        try:
            array = _validate.finite_array("data", data, min_size=0)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{exc}; this graph takes {self} (domain=)") from None
        if array.shape[1:] != self.shape or array.ndim != 1 + len(self.shape):
            raise ValueError(
                f"this graph takes {self}, got an array of shape {array.shape}: a sensitivity holds for the records "
                f"it was stated for. A graph states its records with domain= (e.g. dpledger.Records(shape="
                f"{array.shape[1:]}) for records of shape {array.shape[1:]}); nothing was charged")
        if self.n is not None and array.shape[0] != self.n:
            raise ValueError(f"this graph takes {self} (n is public: its domain= {self!r}), got {array.shape[0]} "
                             "records; nothing was charged")
        if self.max_n is not None and array.shape[0] > self.max_n:
            raise ValueError(f"this graph takes {self} (its domain= {self!r}), got {array.shape[0]} records: its "
                             "sensitivities hold for at most that many; nothing was charged")
        if array.size and (array.min() < self.low or array.max() > self.high):
            raise ValueError(f"this graph takes {self} (its domain= {self!r}), got values in [{array.min():g}, "
                             f"{array.max():g}]: clip or rescale the data first; nothing was charged")
        if self.integer and not np.all(array == np.round(array)):
            raise ValueError(f"this graph takes {self} (its domain= {self!r}), got values that are not integers; "
                             "nothing was charged")
        return array

    def project(self, records) -> np.ndarray:
        """Records clipped to [low, high] (and rounded, for integer records)."""
        array = np.clip(np.asarray(records, dtype=float), self.low, self.high)
        return np.round(array) if self.integer else array

    def extremes(self) -> np.ndarray:
        """Records at the domain's extremes, one per row: the largest doubles of either sign, the
        smallest subnormal, the smallest normal, 0 and mixed signs (projected into the bounds)."""
        values = np.array([1.7e308, -1.7e308, 5e-324, -2.2e-308, 0.0])
        rows = np.broadcast_to(values.reshape((-1,) + (1,) * len(self.shape)), (len(values), *self.shape))
        alternating = np.where(np.arange(max(int(np.prod(self.shape)), 1)) % 2 == 0, 1.7e308, -5e-324)
        return self.project(np.concatenate([rows, alternating.reshape((1, *self.shape))]))

    def stress_pairs(self, example) -> list[tuple[np.ndarray, np.ndarray]]:
        """Neighbouring pairs (one record replaced) at the domain's extremes, around ``example``: the
        example with one record moved to each extreme, and datasets of one extreme throughout with
        one record at another (for an estimator's ``stress`` hook: ±1.7e308, subnormals, 0)."""
        base = self.validate(example)
        extremes = self.extremes()
        pairs = []
        for i, record in enumerate(extremes):
            other = base.copy()
            other[0] = record
            pairs.append((base, other))
            filled = np.broadcast_to(record, base.shape).copy()
            moved = filled.copy()
            moved[-1] = extremes[(i + 1) % len(extremes)]
            pairs.append((filled, moved))
        return pairs

    def __str__(self) -> str:
        count = (f"{self.n} records" if self.n is not None else
                 f"at most {self.max_n} records" if self.max_n is not None else "records")
        values = "integers" if self.integer else "finite doubles"
        each = (f", one {values[:-1]} each" if not self.shape else f" of shape {self.shape}, {values}")
        bounds = "" if (self.low, self.high) == (-math.inf, math.inf) else f" in [{self.low:g}, {self.high:g}]"
        return f"{count}{each}{bounds}"


def extremes_of(example):
    """A ``stress`` hook for an estimator of unbounded records (``register(..., stress=)``): its
    ``example(rng)``'s parameters, and pairs of its records moved to the extremes of the domain of
    finite doubles (``Records.stress_pairs``)."""
    def stress(rng):
        params, data = example(rng)
        data = np.asarray(data, dtype=float)
        return params, Records(shape=data.shape[1:], n=len(data)).stress_pairs(data)
    return stress


@attrs.frozen
class Graphs(Domain):
    """An undirected simple graph on ``n`` vertices (any n when None), in any of the forms
    ``EdgeAdjacency.validate`` takes."""

    n: int | None = attrs.field(default=None, converter=lambda v: None if v is None else _validate.integer(
        "n", v, minimum=2))

    relations = (EdgeAdjacency,)

    def validate(self, data):
        graph = EdgeAdjacency.validate(data)
        if self.n is not None and graph.shape[0] != self.n:
            raise ValueError(f"the graph has {graph.shape[0]} vertices but this graph takes {self} (n is public); "
                             "nothing was charged")
        return graph

    def __str__(self) -> str:
        return "graphs" if self.n is None else f"graphs on {self.n} vertices"


@attrs.frozen
class _ByRelation(Domain):
    """The inputs a relation of its own kind validates (a user's ``Relation`` subclass)."""

    relation: Relation

    def validate(self, data):
        return self.relation.validate(data)

    def check_relation(self, relation: Relation) -> None:
        if relation != self.relation:
            raise TypeError(f"domain {self} is for {self.relation!r}, not {relation!r}")

    def __str__(self) -> str:
        return f"inputs {self.relation} validates"


def default(relation: Relation) -> Domain:
    """The domain a graph gets when it states none: ``Graphs()`` under ``EdgeAdjacency``,
    ``Records()`` (one finite double per record, an array of shape (n,)) under ``ReplaceOne`` and
    ``AddRemoveOne``, and what the relation itself validates for any other relation."""
    if isinstance(relation, EdgeAdjacency):
        return Graphs()
    if isinstance(relation, (ReplaceOne, AddRemoveOne)):
        return Records()
    return _ByRelation(relation)
