"""Privacy guarantees: small frozen values, validated on construction.

``PureDP(ε)`` and ``ApproxDP(ε, δ)`` both expose ``.epsilon`` and ``.delta``. A guarantee says
nothing about *which* inputs are neighbours; that is the relation's job (``dpledger.relations``),
and the accountant and the graph planner refuse to mix relations.
"""

from __future__ import annotations

import attrs

from . import _validate


def _epsilon(value) -> float:
    return _validate.nonnegative("epsilon", value)


def _delta(value) -> float:
    return _validate.probability("delta", value)


@attrs.frozen
class PureDP:
    """ε-differential privacy (δ = 0)."""

    epsilon: float = attrs.field(converter=_epsilon)

    @property
    def delta(self) -> float:
        return 0.0

    def to_approx(self) -> "ApproxDP":
        return ApproxDP(self.epsilon, 0.0)

    def __str__(self) -> str:
        return f"{self.epsilon:.6g}-DP"


@attrs.frozen
class ApproxDP:
    """(ε, δ)-differential privacy, 0 <= δ < 1."""

    epsilon: float = attrs.field(converter=_epsilon)
    delta: float = attrs.field(converter=_delta)

    def to_approx(self) -> "ApproxDP":
        return self

    def __str__(self) -> str:
        return f"({self.epsilon:.6g}, {self.delta:.3g})-DP"


Guarantee = PureDP | ApproxDP


def make(epsilon: float, delta: float = 0.0) -> Guarantee:
    """``PureDP`` when δ = 0, else ``ApproxDP``: the normal form every rule returns."""
    return PureDP(epsilon) if delta == 0 else ApproxDP(epsilon, delta)


def check(name: str, value: object) -> Guarantee:
    """Refuse anything that is not a guarantee object, naming the argument."""
    if not isinstance(value, (PureDP, ApproxDP)):
        raise TypeError(f"{name} must be PureDP or ApproxDP, got {type(value).__name__}: {value!r}")
    return value


def to_dict(g: Guarantee) -> dict:
    return {"type": type(g).__name__, "epsilon": g.epsilon, "delta": g.delta}


def from_dict(data: dict) -> Guarantee:
    return make(float(data["epsilon"]), float(data["delta"]))
