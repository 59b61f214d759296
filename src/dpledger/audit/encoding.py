"""A documented encoding of rich outputs for ``audit(fn, ...)``: ⊥/⊤, categories, numbers, any
mix of them, of any length up to a fixed maximum, and halts.

``fn(data, rng, size)`` returns one ``encode_answers(run, length)`` per run (or ``halted(reason)``
for a run that stopped). Each run becomes an observation with three released fields:

- ``length``: how many answers the run gave (a variable-length output's length is an outcome);
- ``kinds``: one integer code per position — ``ABSENT`` (−1) past the end, ``BOTTOM_CODE`` (0)
  for ⊥, ``TOP_CODE`` (1) for ⊤, ``NUMBER`` (2) for a number, ``NAN_CODE`` (−2) for NaN, and
  ``FIRST_CATEGORY + j`` (3 + j) for ``categories[j]``. Integer codes keep the label statistics
  on (Hamming distance to the mode, the count of ⊤ = +1 entries);
- ``numbers``: the number at each position where the answer is one, −∞ elsewhere, so thresholds
  on it are events "the i-th answer is a number ≥ t", and the learned score sees "not a number"
  as its −∞ indicator.

An answer is ``BOTTOM``/``TOP`` (or ``False``/``True``), a number (int or float, NaN included),
or one of ``categories``; anything else, or more than ``length`` answers, is refused (a
``ValueError`` naming it: an output the encoding would cut could hide what it reveals).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import _validate
from .outputs import Observation


class _Symbol:
    """⊥ or ⊤: a singleton that prints as itself and unpickles as itself (runs cross processes)."""

    def __init__(self, text: str, name: str):
        self._text, self._name = text, name

    def __repr__(self) -> str:
        return self._text

    def __reduce__(self) -> str:
        return self._name


BOTTOM, TOP = _Symbol("⊥", "BOTTOM"), _Symbol("⊤", "TOP")
NAN_CODE, ABSENT, BOTTOM_CODE, TOP_CODE, NUMBER, FIRST_CATEGORY = -2, -1, 0, 1, 2, 3


def _code(answer: object, categories: Sequence) -> tuple[int, float]:
    if answer is BOTTOM or answer is False or isinstance(answer, np.bool_) and not answer:
        return BOTTOM_CODE, -math.inf
    if answer is TOP or answer is True or isinstance(answer, np.bool_):
        return TOP_CODE, -math.inf
    if isinstance(answer, (int, float, np.integer, np.floating)):
        value = float(answer)
        return (NAN_CODE, -math.inf) if math.isnan(value) else (NUMBER, value)
    for index, category in enumerate(categories):
        if answer == category:
            return FIRST_CATEGORY + index, -math.inf
    raise ValueError(f"answer {answer!r} is not ⊥/⊤, a number or one of categories={tuple(categories)!r}")


def encode_answers(run: Sequence, length: int, categories: Sequence = ()) -> Observation:
    """One run's answers (a sequence of at most ``length``) as an observation of its length,
    per-position kind codes and numbers (module docstring)."""
    length = _validate.integer("length", length, minimum=1)
    run = list(run)
    if len(run) > length:
        raise ValueError(f"a run gave {len(run)} answers, more than length={length}: raise length")
    kinds, numbers = np.full(length, float(ABSENT)), np.full(length, -math.inf)
    for position, answer in enumerate(run):
        kinds[position], numbers[position] = _code(answer, categories)
    return Observation((("length", np.array([float(len(run))])), ("kinds", kinds), ("numbers", numbers)), "")


def halted(reason: str = "halted") -> Observation:
    """A run that released nothing and stopped for ``reason`` (a public outcome, audited as such)."""
    if not isinstance(reason, str) or not reason:
        raise ValueError(f"reason must be a non-empty string, got {reason!r}")
    return Observation((), reason)
