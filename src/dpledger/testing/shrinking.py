"""How ``assert_private`` shrinks a violating pair: a budget in steps, a safety clock, readable values.

Hypothesis shrinks the first pair whose search score exceeds the claim. Every call of the search
after that is one *shrink step*; once ``steps`` are spent, a pair not yet known to exceed is
passed over (returned as "no violation"), so hypothesis keeps the smallest exceeding pair found so
far: the same seed gives the same steps and the same pair on any machine. The clock is only a
safety stop (``seconds`` from the first exceeding pair); when it fires the result may depend on
the machine's speed, and the violation says so. A pair already known to exceed still raises, so
hypothesis's final replay of its minimal example is consistent.

``readable`` then rounds the shrunk pair to integers, or 1, 2, 3 decimals, keeping the first
rounding that is still a neighbouring pair inside a box (its ends rounded inwards) and still
exceeds; the box is the target's declared domain where it bounds the values (``Records(low=,
high=)``), else the pair's own value range:
hypothesis shrinks towards simple floats but stops wherever the budget ends (3.9e-263 is as
"simple" to it as 0). The range keeps a rounded pair inside any box-shaped domain the original
was in; a pair the target refuses is simply not taken.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import attrs
import numpy as np

from .. import _validate

#: default budget: shrink steps (each one search estimate, plus a recheck when it exceeds)
SHRINK_STEPS = 100
#: default safety clock, in seconds from the first exceeding pair
SHRINK_SECONDS = 120.0
#: decimals tried for a readable pair, fewest first
DIGITS = (0, 1, 2, 3)


@attrs.define
class Budget:
    """Shrink steps left, and why shrinking stopped ("" while it has not)."""

    steps: int = attrs.field(converter=lambda v: _validate.integer("shrink_steps", v, minimum=0))
    seconds: float = attrs.field(converter=lambda v: _validate.positive("shrink_seconds", v))
    used: int = 0
    stopped: str = ""
    _started: float | None = None

    def take(self) -> bool:
        """Spend one step; False (and ``stopped`` set) once the budget or the clock is out."""
        if self._started is None:
            self._started = time.monotonic()
        if self.used >= self.steps:
            self.stopped = f"stopped at its budget of {self.steps} shrink steps"
        elif time.monotonic() - self._started > self.seconds:
            self.stopped = (f"stopped by its safety clock after {self.seconds:g} s, at {self.used} steps "
                            "(the pair may differ on a faster machine: raise shrink_seconds)")
        else:
            self.used += 1
            return True
        return False

    def describe(self) -> str:
        return f"shrunk in {self.used} step(s)" + (f", {self.stopped}" if self.stopped else "")


def _rounded(pair, digits: int, box: tuple[float, float] = (-math.inf, math.inf)):
    """``pair`` rounded to ``digits`` decimals (D' as the rounded D plus the rounded move when the
    shapes agree, so a move of exactly Δ stays exactly Δ), clipped into ``box`` (where finite; else
    the pair's own value range) rounded inwards, so it stays inside any box the pair was in; None if
    that range is empty."""
    a, b = (np.asarray(x, dtype=float) for x in pair)
    both = np.concatenate([a.ravel(), b.ravel()])
    scale = 10.0 ** digits
    ends = (box[0] if math.isfinite(box[0]) else both.min(), box[1] if math.isfinite(box[1]) else both.max())
    low, high = math.ceil(ends[0] * scale) / scale, math.floor(ends[1] * scale) / scale
    if low > high:
        return None
    first = np.round(a, digits)
    second = first + np.round(b - a, digits) if a.shape == b.shape else np.round(b, digits)
    return tuple(np.clip(x, low, high) for x in (first, second))


def readable(pair, accept: Callable[[tuple], bool], box: tuple[float, float] = (-math.inf, math.inf)):
    """The first rounding of ``pair`` (fewest decimals first, inside ``box``: ``_rounded``) that
    ``accept`` takes, else ``pair``."""
    a, b = (np.asarray(x) for x in pair)
    if a.dtype.kind not in "f" and b.dtype.kind not in "f":
        return pair
    for digits in DIGITS:
        candidate = _rounded(pair, digits, box)
        if candidate is None:
            continue
        if all(np.array_equal(x, np.asarray(y, dtype=float)) for x, y in zip(candidate, pair)):
            return pair  # already as short as this
        if accept(candidate):
            return candidate
    return pair
