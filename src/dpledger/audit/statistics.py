"""Reductions of mechanism outputs to scalar statistics, fitted on the training half.

An event on a scalar statistic is an event on the output, so any statistic is a valid test; good
ones make the two output distributions easy to tell apart. ``fit_statistics`` looks at the
training outputs of both sides of a pair and proposes:

- scalar outputs: the output itself;
- vectors: each coordinate (the ``MAX_COORDINATES`` with the largest standardised training-mean
  difference when there are more), the projection on the difference of the training means, the
  count of coordinates on M(D)'s side of their medians, and the ℓ2 norm;
- integer (label) vectors, additionally: Hamming distance to the training mode of M(D) and the
  count of +1 entries;
- whenever a training run halted: the halting indicator, and the halt reason when several occur.

Observations of graph runs (``outputs.Observation``) get these statistics for every released
field separately (``FieldStatistic``: a run that halted later still counts for the fields it
released), plus the halting ones; the runner adds low-order-bit statistics for each textbook
floating-point release (``floating_point``). A caller may add its own reductions (``Custom``),
fixed before sampling.

Every statistic is NaN on runs that did not release what it reads, so threshold events never
contain them; the halting statistics cover those runs.
"""

from __future__ import annotations

import abc
import functools
from typing import Callable, ClassVar

import attrs
import numpy as np

from .outputs import Outputs

MAX_COORDINATES = 16


@attrs.frozen
class Statistic(abc.ABC):
    """A map from outputs to one real number per run; ``name`` says what it is in words."""

    name: ClassVar[str]
    #: comparison operators searched for events; "==" is added for statistics seen to be discrete
    ops: ClassVar[tuple[str, ...]] = (">=", "<=")

    @abc.abstractmethod
    def __call__(self, outputs: Outputs) -> np.ndarray:
        """One number per run (NaN where the statistic says nothing)."""

    def describe(self, op: str, threshold: float) -> str:
        return f"{self.name} {op} {threshold:.6g}"


@attrs.frozen
class ValueStatistic(Statistic):
    """A statistic of the released values only: NaN for halted runs."""

    def __call__(self, outputs: Outputs) -> np.ndarray:
        if outputs.shape is None:  # every run halted
            return np.full(len(outputs), np.nan)
        if outputs.fields:  # an observation's halted run may have released the values read
            return np.array(self._reduce(outputs.values), dtype=float)
        return self.on_rows(outputs.values, ~outputs.halted)

    def on_rows(self, values: np.ndarray, released: np.ndarray) -> np.ndarray:
        """The statistic of rows ``values``, NaN where not ``released``."""
        result = np.array(self._reduce(values), dtype=float)
        result[~released] = np.nan
        return result

    @abc.abstractmethod
    def _reduce(self, values: np.ndarray) -> np.ndarray:
        """One number per row of ``values`` (the runs' outputs, halted rows included)."""


@attrs.frozen
class Output(ValueStatistic):
    """A scalar output itself."""

    name = "output"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return values[:, 0]


@attrs.frozen
class Coordinate(ValueStatistic):
    index: int
    shape: tuple[int, ...]

    @property
    def name(self) -> str:
        position = np.unravel_index(self.index, self.shape)
        return f"coordinate {position[0] if len(position) == 1 else tuple(int(i) for i in position)}"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return values[:, self.index]


@attrs.frozen
class MeanDifferenceProjection(ValueStatistic):
    """⟨x, u⟩ with u the unit vector along mean(M(D)) − mean(M(D')) on the training half."""

    direction: np.ndarray = attrs.field(eq=False)
    name = "projection on mean difference"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return values @ self.direction


@attrs.frozen
class SideCount(ValueStatistic):
    """How many coordinates lie on M(D)'s side of their pooled training median (the side of its
    training mean): the likelihood ratio of parallel Laplace noise far from the answers."""

    median: np.ndarray = attrs.field(eq=False)
    sign: np.ndarray = attrs.field(eq=False)
    name = "coordinates on the side of M(D)"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return np.count_nonzero((values - self.median) * self.sign > 0, axis=1)


@attrs.frozen
class Norm(ValueStatistic):
    name = "ℓ2 norm"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return np.linalg.norm(values, axis=1)


@attrs.frozen
class HammingToMode(ValueStatistic):
    """Number of entries that differ from the coordinate-wise training mode of M(D)."""

    mode: np.ndarray = attrs.field(eq=False)
    name = "Hamming distance to the mode of M(D)"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return np.count_nonzero(values != self.mode, axis=1)


@attrs.frozen
class PlusOnes(ValueStatistic):
    name = "count of +1"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        return np.count_nonzero(values == 1, axis=1)


@attrs.frozen
class Roundness(ValueStatistic):
    """The fewest significant bits of a coordinate plus its binary exponent, over the finite
    ``columns`` (those real-valued in training: labels beside them would always be the roundest;
    zeros count as the roundest, −1100; NaN where none is finite).

    Float noise added to a centre c releases fl(c + X): far from c, fl rounds every output to the
    grid of c's own magnitude, so an output near another centre c′ has fewer significant bits
    than a float of its size drawn there (Mironov, CCS 2012). Low values mark such outputs; a
    float-safe mechanism's lattice points look the same from every centre."""

    columns: tuple[int, ...]
    name = "float roundness (significant bits + exponent)"

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        values = values[:, list(self.columns)]
        least = np.min(roundness(values), axis=1, initial=np.inf, where=np.isfinite(values))
        return np.where(np.isinf(least), np.nan, least)


def roundness(values: np.ndarray) -> np.ndarray:
    """Elementwise significant bits + ⌊log₂|x|⌋ of finite nonzero doubles; −1100 at zero."""
    with np.errstate(invalid="ignore"):
        mantissa, exponent = np.frexp(np.where(np.isfinite(values), values, 1.0))
        digits = np.abs(mantissa * 2.0**53).astype(np.int64)  # the 53-bit significand, an integer
    lowest = np.frexp((digits & -digits).astype(float))[1] - 1  # its trailing zero bits
    return np.where(values == 0, -1100.0, (53 - lowest) + (exponent - 1.0))


@attrs.frozen
class Halted(Statistic):
    """1 for a halted run, 0 for a released output."""

    name = "halted"
    ops = ("==",)

    def __call__(self, outputs: Outputs) -> np.ndarray:
        return outputs.halted.astype(float)

    def describe(self, op: str, threshold: float) -> str:
        return "run halted" if threshold == 1 else "run released an output"


@attrs.frozen
class HaltReason(Statistic):
    """Index of the run's halt reason in ``reasons`` (0 = released, reasons unseen in training: −1)."""

    reasons: tuple[str, ...]
    name = "halt reason"
    ops = ("==",)

    def __call__(self, outputs: Outputs) -> np.ndarray:
        table = {reason: index for index, reason in enumerate(self.reasons)}
        return np.array([table.get(reason, -1) for reason in outputs.reasons], dtype=float)

    def describe(self, op: str, threshold: float) -> str:
        index = int(threshold)
        if index <= 0:
            return "run released an output" if index == 0 else "run halted for a reason unseen in training"
        return f"run halted with {self.reasons[index]}"


@attrs.frozen
class Custom(ValueStatistic):
    """A caller's reduction ``function(outputs)``: one number per run, for outputs of shape (runs, *shape).

    Rows of halted runs are NaN when passed in and ignored in the result.
    """

    function: Callable = attrs.field(eq=False)
    label: str
    shape: tuple[int, ...]

    @property
    def name(self) -> str:
        return self.label

    def _reduce(self, values: np.ndarray) -> np.ndarray:
        result = np.asarray(self.function(values.reshape(len(values), *self.shape)), dtype=float)
        if result.shape != (len(values),):
            raise ValueError(f"statistic {self.label!r} must return one number per run, shape ({len(values)},), "
                             f"got shape {result.shape}")
        return result


@attrs.frozen
class FieldStatistic(Statistic):
    """``inner`` on the columns of one released field of an observation, NaN on runs that did not
    release it (whether or not they halted later). A field is released where its first column is
    a number (``runners.encode`` pads variable-length values with NaN after it)."""

    inner: ValueStatistic
    field: str

    @property
    def name(self) -> str:
        return f"{self.inner.name} of {self.field!r}"

    @property
    def ops(self) -> tuple[str, ...]:
        return self.inner.ops

    def __call__(self, outputs: Outputs) -> np.ndarray:
        return self.inner.on_rows(*field_values(outputs, self.field))


def field_values(outputs: Outputs, field: str) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``field`` and where the field is present (released)."""
    values = outputs.values[:, outputs.columns(field)]
    return values, ~np.isnan(values[:, 0]) if values.shape[1] else np.zeros(len(values), dtype=bool)


def nan_moments(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the mean and variance of the values that are not NaN (NaN for a column with
    none), as ``np.nanmean``/``np.nanvar`` but silent: the fits run one thread per pair, and the
    process's warning filters cannot be changed safely from a thread (``warnings.catch_warnings``)."""
    defined = ~np.isnan(values)
    count = defined.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(defined, values, 0.0).sum(axis=0) / count
        return mean, np.square(np.where(defined, values - mean, 0.0)).sum(axis=0) / count


def standardised_gaps(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per column, |mean difference| / pooled standard deviation of the two sides' values, NaN
    values left out (NaN where a side has none); silent."""
    if np.isfinite(first).all() and np.isfinite(second).all():  # the nan-free path: no copies
        (mean_a, var_a), (mean_b, var_b) = [(side.mean(axis=0), side.var(axis=0)) for side in (first, second)]
    else:
        (mean_a, var_a), (mean_b, var_b) = nan_moments(first), nan_moments(second)
    with np.errstate(invalid="ignore"):
        return np.abs(mean_a - mean_b) / (np.sqrt((var_a + var_b) / 2) + 1e-12)


def _column_modes(values: np.ndarray) -> np.ndarray:
    """The most frequent value of each column, the smallest on a tie (as ``scipy.stats.mode``)."""
    modes = []
    for column in values.T:
        distinct, counts = np.unique(column, return_counts=True)
        modes.append(distinct[np.argmax(counts)])
    return np.array(modes)


def _vector_statistics(first: np.ndarray, second: np.ndarray, shape: tuple[int, ...]) -> list[Statistic]:
    """Coordinates, mean-difference projection and norm (plus label statistics for integers)."""
    width = first.shape[1]
    if len(first) == 0 or len(second) == 0:
        order = np.arange(width)
    else:
        order = np.argsort(-np.nan_to_num(standardised_gaps(first, second), nan=-1.0), kind="stable")  # all-NaN last
    found: list[Statistic] = [Coordinate(int(i), shape) for i in np.sort(order[:MAX_COORDINATES])]
    if len(first) and len(second) and np.isfinite(first).all() and np.isfinite(second).all():
        difference = first.mean(axis=0) - second.mean(axis=0)
        length = np.linalg.norm(difference)
        if length > 0:
            found.append(MeanDifferenceProjection(difference / length))
            # the median of each column from a column-major copy (partitioning strided columns is slow)
            both = np.concatenate([first, second]).T.copy()
            found.append(SideCount(np.median(both, axis=1), np.sign(difference)))
    found.append(Norm())
    both = np.concatenate([first, second])
    if np.array_equal(both, np.round(both)):
        if len(first):
            found.append(HammingToMode(_column_modes(first)))
        if np.any(both == 1):
            found.append(PlusOnes())
    return found


def _real_statistics(first: np.ndarray, second: np.ndarray, ideal_reals: bool) -> list[Statistic]:
    """``Roundness`` of the columns holding a finite non-integer in training, if any, unless the
    caller audits an ideal mechanism on the reals (``ideal_reals``)."""
    width = max(first[0].size if len(first) else 0, second[0].size if len(second) else 0)
    both = np.concatenate([side.reshape(len(side), width) for side in (first, second)])
    real = np.flatnonzero((np.isfinite(both) & (both != np.round(both))).any(axis=0))
    return [] if ideal_reals or not real.size else [Roundness(tuple(int(c) for c in real))]


def fit_statistics(first: Outputs, second: Outputs, ideal_reals: bool = False) -> list[Statistic]:
    """Statistics to search for events, chosen from the training outputs of M(D) and M(D').

    The released outputs of both sides must share one shape (``sampling`` checks this); for
    observations, the statistics of each field are fitted on the runs that released it.
    ``ideal_reals``: the claim is about the mechanism on the reals, so its float rounding is not
    tested (no ``Roundness``).
    """
    return [statistic for part in fitting_parts(first, second, ideal_reals) for statistic in part()]


def fitting_parts(first: Outputs, second: Outputs, ideal_reals: bool = False) -> list[Callable[[], list[Statistic]]]:
    """``fit_statistics`` in parts that fit independently (one per released field, or the whole
    output, then the halting statistics), in its order: ``audit_pairs`` fits and searches them in
    threads at once."""
    def field_part(field: str, width: int) -> list[Statistic]:
        parts = [values[present] for values, present in (field_values(side, field) for side in (first, second))]
        inner = [Output()] if width == 1 else _vector_statistics(*parts, (width,))
        inner += _real_statistics(*parts, ideal_reals)
        return [FieldStatistic(statistic, field) for statistic in inner]

    def output_part() -> list[Statistic]:
        shape = first.shape if first.shape is not None else second.shape
        if shape is None:
            return []
        found = [Output()] if shape == () else _vector_statistics(first.released, second.released, shape)
        return found + _real_statistics(first.released, second.released, ideal_reals)

    def halting_part() -> list[Statistic]:
        reasons = sorted(set(first.reasons[first.halted]) | set(second.reasons[second.halted]))
        return ([Halted()] if reasons else []) + ([HaltReason(("",) + tuple(reasons))] if len(reasons) > 1 else [])

    parts = ([functools.partial(field_part, field, width) for field, width in first.fields] if first.fields
             else [output_part])
    return parts + [halting_part]
