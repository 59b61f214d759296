"""JSON form of the dp-accounting events the ledger keeps, so a durable ledger can recompose
charges tightly (PLD) after a restart or in another process."""

from __future__ import annotations

import attrs
import dp_accounting

_KINDS = {cls.__name__: cls for cls in (
    dp_accounting.NoOpDpEvent, dp_accounting.LaplaceDpEvent, dp_accounting.GaussianDpEvent,
    dp_accounting.dp_event.DiscreteLaplaceDpEvent,
    dp_accounting.PoissonSampledDpEvent, dp_accounting.SelfComposedDpEvent, dp_accounting.ComposedDpEvent,
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
