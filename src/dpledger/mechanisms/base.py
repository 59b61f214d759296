"""What every primitive mechanism offers, so that graphs, the accountant and the auditor can use
any of them the same way."""

from __future__ import annotations

import abc

from typing import Any

import attrs
import numpy as np

from .. import _random, _validate
from ..guarantees import Guarantee
from ..privacy.events import EpsilonDeltaDpEvent


class Mechanism(abc.ABC):
    """A noise or selection mechanism: a small frozen attrs class with

    - ``guarantee()``: what it proves, given its parameters (the sensitivity is a *claim* about
      the query it is applied to, under the graph's relation);
    - ``dp_event()``: the ``dp_accounting`` event that describes its privacy exactly (a Laplace, a
      Gaussian, a zCDP bound, ...), for tight composition and for the filters; by default the
      worst case of its (ε, δ) guarantee (``privacy.events.EpsilonDeltaDpEvent``);
    - ``release(value, rng=None)``: one noisy answer for the exact query answer ``value``;
    - ``sample(value, rng=None, size=1)``: ``size`` independent answers, batched (for audits);
    - ``sample_each(values, rng=None)``: one independent answer for each of several answers, the
      same as ``release`` on each in turn, batched where the mechanism can (for audits of graphs
      whose answers differ from run to run);
    - ``params()``: the numbers the ledger records (scale, sensitivity, ...);
    - ``source``: the lemma or theorem that proves ``guarantee()``.
    """

    source: str = "unspecified"

    @abc.abstractmethod
    def guarantee(self) -> Guarantee:
        """What the mechanism proves for its parameters."""

    def dp_event(self):
        return EpsilonDeltaDpEvent.of(self.guarantee())

    def params(self) -> dict[str, Any]:
        return {k: v for k, v in attrs.asdict(self).items() if not isinstance(v, np.ndarray)}

    @property
    def kind(self) -> str:
        return type(self).__name__

    def release(self, value, rng: np.random.Generator | None = None):
        return self._draw(self._check_value(value), _random.generator(rng), None)

    def sample(self, value, rng: np.random.Generator | None = None, size: int = 1):
        size = _validate.integer("size", size, minimum=1)
        if size > MAX_BATCH:
            raise ValueError(f"size must be <= {MAX_BATCH:,} per call (draw larger samples in batches), got {size:,}")
        return self._draw(self._check_value(value), _random.generator(rng), size)

    def sample_each(self, values, rng: np.random.Generator | None = None):
        """One independent answer for each answer in ``values``: distributed as
        ``[release(v, rng) for v in values]`` (each answer checked as ``release`` checks it), as an
        array with a leading axis over ``values`` when the answers share one shape and the
        mechanism draws them in one batch (``_draw_stacked``), else a list."""
        rng = _random.generator(rng)
        if len(values) > MAX_BATCH:
            raise ValueError(f"at most {MAX_BATCH:,} answers per call (draw larger samples in batches), got {len(values):,}")
        stacks = self._draw_stacked is not None
        scalars = self._finite_scalars(values) if stacks else None
        if scalars is not None:
            return self._draw_stacked(scalars, rng)
        checked = [self._check_value(value) for value in values]
        if stacks and checked and len({value.shape for value in checked}) == 1:
            return self._draw_stacked(np.stack(checked), rng)
        return [self._draw(value, rng, None) for value in checked]

    def _finite_scalars(self, values) -> np.ndarray | None:
        """``values`` as one float array when each is a finite Python or numpy float (or an int)
        and this class checks answers as ``finite_array`` does: row i is then exactly
        ``_check_value(values[i])``. ``None`` otherwise (each answer is checked alone)."""
        if type(self)._check_value is not Mechanism._check_value or not len(values):
            return None
        if not all(type(value) in (float, int, np.float64) for value in values):
            return None
        array = np.asarray(values, dtype=float)
        return array if np.isfinite(array).all() else None

    #: ``_draw_stacked(values, rng)`` in a mechanism that draws stacked checked answers at once: row i
    #: one draw for ``values[i]`` (rows share one shape), all independent; None: one answer at a time.
    _draw_stacked = None

    def _check_value(self, value):
        return _validate.finite_array("value", value, min_size=1)

    @abc.abstractmethod
    def _draw(self, value, rng: np.random.Generator, size: int | None):
        """One draw (``size`` None) or a batch with a leading axis, for a checked ``value``."""


#: Largest batch one ``sample`` call draws (80 MB of doubles per coordinate).
MAX_BATCH = 10_000_000

#: Larger ε promise nothing and break the numerics of calibration; mechanisms refuse them.
MAX_EPSILON = 1e4


def checked_epsilon(value) -> float:
    """``value`` as a mechanism's ε: positive and at most ``MAX_EPSILON``."""
    value = _validate.positive("epsilon", value)
    if value > MAX_EPSILON:
        raise ValueError(f"epsilon must be <= {MAX_EPSILON:g} for a mechanism (it promises nothing beyond), got {value:g}")
    return value


def epsilon_field():
    return attrs.field(converter=checked_epsilon)


def delta_field():
    return attrs.field(converter=lambda v: _validate.probability("delta", v, low_open=True))


def sensitivity_field(default: float = 1.0):
    return attrs.field(default=default, converter=lambda v: _validate.positive("sensitivity", v))


def shaped(noise_shape: tuple[int, ...], size: int | None) -> tuple[int, ...]:
    """Noise shape for one release (``size`` None) or a batch with a leading axis."""
    return noise_shape if size is None else (size, *noise_shape)
