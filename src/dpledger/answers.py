"""Neighbouring relations for vectors of query answers: what a mechanism's claim speaks about.

A mechanism (noise added to answers, report-noisy-max over scores, a sparse vector over query
answers) is private for answers that its queries' sensitivity lets move between neighbouring
datasets. These relations state that movement, for auditing (``audit(fn, relation=...,
data=answers)``, ``strategies.answer_pairs``); a session charges graphs over records, so the
accountant refuses them (``for_sessions = False``).

- ``OneAnswer(Δ)``: one answer moved by at most Δ, the rest equal (a histogram's counts under
  add/remove one, a single query).
- ``EveryAnswer(Δ)``: every answer moved by at most Δ, the ℓ∞ ("component-wise") neighbourhood of
  the sparse vector technique and report-noisy-max; ``monotone=True``: all moves one way
  (counting queries).
- ``AnswerDistance(norm, Δ)``: answers at most Δ apart in the ℓ1 or ℓ2 norm (the Laplace and the
  Gaussian mechanism's sensitivities).

A move is drawn as a *sign pattern* s ∈ {−1, 0, 1}^k (``PATTERNS``) scaled to the relation's
ball: the classic worst cases are patterns — every answer up; half up and half down; one up and
the rest down — and the search and the hypothesis strategies try them by name.
"""

from __future__ import annotations

import math
from typing import ClassVar, Iterator

import attrs
import numpy as np

from . import _validate
from .relations import Relation

#: Sign patterns of a move over k answers; hypothesis shrinks towards the first (``strategies``).
PATTERNS = ("all up", "half up, half down", "one up, the rest down", "one", "free")
#: The patterns whose moves all go one way.
MONOTONE = ("all up", "one", "free")
#: The patterns that depend on which answers come first.
ORDERED = ("half up, half down", "one up, the rest down", "one")


def signs(pattern: str, k: int, order: np.ndarray, free: np.ndarray | None = None) -> np.ndarray:
    """The sign vector of ``pattern`` on ``k`` answers; ``order`` (a permutation) says which
    answers come first, ``free`` is the {−1, 0, 1} vector of the "free" pattern (not all zero)."""
    s = np.zeros(k)
    if pattern == "free":
        s[:] = free
    elif pattern == "all up":
        s[:] = 1.0
    elif pattern == "half up, half down":
        s[order[: (k + 1) // 2]], s[order[(k + 1) // 2:]] = 1.0, -1.0
    elif pattern == "one up, the rest down":
        s[:], s[order[0]] = -1.0, 1.0
    elif pattern == "one":
        s[order[0]] = 1.0
    else:
        raise ValueError(f"unknown pattern {pattern!r}; known: {', '.join(PATTERNS)}")
    return s


class Answers(Relation):
    """Vectors of query answers of one fixed shape, moved within a ball of radius ``sensitivity``."""

    for_sessions: ClassVar[bool] = False
    sensitivity: float
    #: the sign patterns whose scaled moves are neighbours (hypothesis shrinks to the first)
    patterns: ClassVar[tuple[str, ...]] = PATTERNS

    def validate(self, data) -> np.ndarray:
        return _validate.finite_array("answers", data, min_size=1)

    def move(self, s: np.ndarray) -> np.ndarray:
        """The sign pattern ``s`` scaled to the boundary of the ball (the farthest neighbour that way)."""
        return self.sensitivity * s / self._norm(s)

    def distance(self, a, b) -> float:
        """Neighbour-steps from ``a`` to ``b``: a move k·Δ long takes ⌈k⌉ steps (a path of
        neighbours; relative slack 1e-12 for rounding in a + move)."""
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if a.shape != b.shape:
            return math.inf
        return self._steps((b - a).ravel() / self.sensitivity)

    def _steps(self, scaled: np.ndarray) -> float:
        return float(math.ceil(self._norm(scaled) * (1 - 1e-12))) if scaled.any() else 0.0

    def _norm(self, s: np.ndarray) -> float:
        return float(np.abs(s).max())

    def neighbours(self, data, rng: np.random.Generator, count: int = 10) -> Iterator[np.ndarray]:
        """``count`` neighbours at the full distance, cycling through the relation's patterns: the
        first cycle with the answers in their given order (the classic worst cases are written that
        way: the first half up and the rest down, the first up and the rest down), later cycles in a
        random order; "free" is a random nonzero {−1, 0, 1} vector; then a random sign."""
        answers = self.validate(data).astype(float)
        k = answers.size
        for index in range(_validate.integer("count", count, minimum=1)):
            order = np.arange(k) if index < len(self.patterns) else rng.permutation(k)
            free = rng.integers(-1, 2, k).astype(float)
            if getattr(self, "monotone", False):
                free = np.abs(free)
            if not free.any():
                free[rng.integers(k)] = 1.0
            s = signs(self.patterns[index % len(self.patterns)], k, order, free)
            yield answers + (rng.choice((-1.0, 1.0)) * self.move(s)).reshape(answers.shape)


def _sensitivity(value) -> float:
    return _validate.positive("sensitivity", value)


@attrs.frozen
class OneAnswer(Answers):
    """One answer moved by at most ``sensitivity``, the others equal."""

    sensitivity: float = attrs.field(converter=_sensitivity)
    patterns = ("one",)

    def _steps(self, scaled: np.ndarray) -> float:
        return float(np.ceil(np.abs(scaled) * (1 - 1e-12)).sum())

    def __str__(self) -> str:
        return f"one answer moved by at most {self.sensitivity:g}"


@attrs.frozen
class EveryAnswer(Answers):
    """Every answer moved by at most ``sensitivity`` (ℓ∞); ``monotone``: all in one direction."""

    sensitivity: float = attrs.field(converter=_sensitivity)
    monotone: bool = attrs.field(default=False, converter=bool)

    @property
    def patterns(self) -> tuple[str, ...]:
        return MONOTONE if self.monotone else PATTERNS

    def _steps(self, scaled: np.ndarray) -> float:
        if self.monotone:  # one-way steps: the moves up, then the moves down
            return super()._steps(np.maximum(scaled, 0)) + super()._steps(np.minimum(scaled, 0))
        return super()._steps(scaled)

    def __str__(self) -> str:
        return (f"every answer moved by at most {self.sensitivity:g}"
                + (", all one way" if self.monotone else ""))


@attrs.frozen
class AnswerDistance(Answers):
    """Answers at most ``sensitivity`` apart in the ℓ``norm`` distance (1 or 2)."""

    norm: int = attrs.field(validator=attrs.validators.in_((1, 2)))
    sensitivity: float = attrs.field(converter=_sensitivity)

    def _norm(self, s: np.ndarray) -> float:
        return float(np.linalg.norm(s, self.norm))

    def __str__(self) -> str:
        return f"answers within ℓ{self.norm} distance {self.sensitivity:g}"
