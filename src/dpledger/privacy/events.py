"""The dp-accounting events a charge is made of, and their JSON form for the ledger.

Every step the accountant sees has an event: a mechanism's own (Laplace, Gaussian, discrete
Laplace, zCDP, Poisson-subsampled, composed) or, for a step known only by its (ε, δ) guarantee (a
halting segment, a random partition, a histogram), an ``EpsilonDeltaDpEvent``, which stands for
the worst case of all (ε, δ)-DP mechanisms (dp-accounting 0.6.0 has no such event). The ledger
keeps events so that a filter can price a durable ledger's charges again after a restart.
"""

from __future__ import annotations

import json

import attrs
import dp_accounting

from .. import guarantees as _g


@attrs.frozen
class EpsilonDeltaDpEvent(dp_accounting.DpEvent):
    """A step known only to be (ε, δ)-DP: priced as the worst (ε, δ)-DP mechanism."""

    epsilon: float
    delta: float = 0.0

    @classmethod
    def of(cls, g: _g.Guarantee) -> "EpsilonDeltaDpEvent":
        return cls(float(g.epsilon), float(g.delta))


@attrs.frozen
class DiscreteGaussianDpEvent(dp_accounting.DpEvent):
    """Integer answers at ℓ2 distance at most ``sensitivity`` plus N_Z(0, ``sigma``²) noise on every
    coordinate (Canonne, Kamath & Steinke 2020): the lattice ``Gaussian`` in lattice units.

    With ``coordinates=1`` the answer is one integer and ``sensitivity`` an integer shift bound: the
    step then has a privacy loss distribution of its own (``pld``). Otherwise (``None``: any size) only
    the ratio ``sensitivity``/``sigma`` matters, through the Rényi curve α·(Δ/σ)²/2 (``rdp``)."""

    sigma: float
    sensitivity: float
    coordinates: int | None = None

    def __attrs_post_init__(self):
        if not (self.sigma > 0 and self.sensitivity > 0):
            raise ValueError(f"a discrete Gaussian needs σ > 0 and a sensitivity > 0, got {self.sigma}, "
                             f"{self.sensitivity}")
        if self.scalar and self.sensitivity != int(self.sensitivity):
            raise ValueError(f"a scalar discrete Gaussian's shift bound is an integer, got {self.sensitivity}")

    @property
    def scalar(self) -> bool:
        return self.coordinates == 1


_KINDS = {cls.__name__: cls for cls in (
    dp_accounting.NoOpDpEvent, DiscreteGaussianDpEvent, dp_accounting.LaplaceDpEvent, dp_accounting.GaussianDpEvent,
    dp_accounting.dp_event.DiscreteLaplaceDpEvent, dp_accounting.ZCDpEvent, EpsilonDeltaDpEvent,
    dp_accounting.PoissonSampledDpEvent, dp_accounting.SampledWithoutReplacementDpEvent,
    dp_accounting.SelfComposedDpEvent, dp_accounting.ComposedDpEvent,
)}


def _encode(value):
    if isinstance(value, dp_accounting.DpEvent):
        return to_dict(value)
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _decode(value):
    if isinstance(value, dict) and "dp_event" in value:
        return from_dict(value)
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def to_dict(event) -> dict | None:
    """``{"dp_event": kind, **fields}`` for the supported kinds; ``None`` for anything else."""
    if event is None or type(event).__name__ not in _KINDS:
        return None
    fields = {f.name: _encode(getattr(event, f.name)) for f in attrs.fields(type(event))}
    if any(isinstance(v, dp_accounting.DpEvent) for v in fields.values()):  # an unsupported nested kind
        return None
    return {"dp_event": type(event).__name__, **fields}


def from_dict(data: dict | None):
    if data is None:
        return None
    fields = {k: _decode(v) for k, v in data.items() if k != "dp_event"}
    return _KINDS[data["dp_event"]](**fields)


def key(event) -> str:
    """A hashable key for an event (composed events hold lists), for caches."""
    data = to_dict(event)
    if data is None:
        raise ValueError(f"no JSON form for the event {event!r}")
    return json.dumps(data, sort_keys=True)


def leaves(event):
    """The leaf events of a composition, with their multiplicities: [(event, count), ...]."""
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return [(leaf, count * event.count) for leaf, count in leaves(event.event)]
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [pair for part in event.events for pair in leaves(part)]
    return [(event, 1)]
