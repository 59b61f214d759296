"""Mechanism outputs as arrays: what ``fn`` returned, in a form statistics can be computed on.

``fn`` may return a scalar, a vector (any fixed shape, flattened here), a label vector, or ``None``
/ a string for a run that halted. ``Outputs`` holds a float matrix with one row per run (NaN rows
for halted runs) and, per run, the halt reason: ``""`` for a released output, ``"None"`` for
``None``, the string's ``repr`` for a string (so ``None`` and ``"None"`` stay distinct). A
released output containing NaN is treated as a halt with reason ``"NaN output"``: NaN cannot be
thresholded, and turning it into a distinct outcome keeps whatever it reveals auditable.

A graph run is an ``Observation``: every value the run released, by step name, and how it ended
(released everything, halted at a step, or raised). Its row holds each release in ``fields``
(name, width) order, NaN where a run ended before that step, so a halted run still shows what it
released before the halt, and its reason is the halting step or the error.
"""

from __future__ import annotations

from typing import Sequence

import attrs
import numpy as np

NAN_REASON = "NaN output"


@attrs.frozen(eq=False)
class Observation:
    """Everything one graph run shows: ``values`` (step name, flattened released value) in plan
    order, and ``ending``: "" when the run went to the end, else the halting step or the error."""

    values: tuple[tuple[str, np.ndarray], ...]
    ending: str


def _reason(output: object) -> str:
    """Halt reason of one output, or "" when it is a released value."""
    if output is None:
        return "None"
    if isinstance(output, str):
        return repr(output)
    return ""


def _one_shape(shapes: set[tuple[int, ...]]) -> tuple[int, ...] | None:
    if len(shapes) > 1:
        raise ValueError(f"fn returned outputs of different shapes {sorted(shapes)}; outputs must have one fixed shape")
    return shapes.pop() if shapes else None


@attrs.frozen(eq=False)
class Outputs:
    """Outputs of one mechanism run ``len(self)`` times: ``values`` (n, d), ``reasons`` (n,).

    ``shape`` is the shape of one released output (``()`` for a scalar), ``None`` when every run
    halted.
    """

    values: np.ndarray
    reasons: np.ndarray
    shape: tuple[int, ...] | None
    fields: tuple[tuple[str, int], ...] = ()

    def __len__(self) -> int:
        return len(self.reasons)

    def rows(self, start: int, stop: int | None = None) -> "Outputs":
        """The runs ``start:stop``, as outputs of the same shape."""
        return Outputs(self.values[start:stop], self.reasons[start:stop], self.shape, self.fields)

    def widened(self, fields: tuple[tuple[str, int], ...]) -> np.ndarray:
        """``values`` laid out in ``fields``: NaN where absent, each field cut to its width there,
        fields not in ``fields`` left out."""
        out = np.full((len(self), sum(width for _, width in fields)), np.nan)
        start = 0
        for name, width in fields:
            if any(name == own for own, _ in self.fields):
                columns = self.columns(name)
                kept = min(width, columns.stop - columns.start)
                out[:, start:start + kept] = self.values[:, columns.start:columns.start + kept]
            start += width
        return out

    @property
    def halted(self) -> np.ndarray:
        return self.reasons != ""

    @property
    def released(self) -> np.ndarray:
        """The rows of released outputs, shape (r, d)."""
        return self.values[~self.halted]

    @classmethod
    def _from_values(cls, values: np.ndarray, reasons: np.ndarray, shape: tuple[int, ...] | None) -> "Outputs":
        """Mark rows containing NaN as halted and wrap."""
        nan_rows = np.isnan(values).any(axis=1) & (reasons == "")
        if nan_rows.any():
            reasons = np.where(nan_rows, NAN_REASON, reasons)  # (widens the string dtype as needed)
            values = np.where(nan_rows[:, None], np.nan, values)
        if not (reasons == "").any():
            shape = None
        return cls(values, reasons, shape)

    def columns(self, name: str) -> slice:
        """The columns of field ``name``."""
        start = 0
        for field, width in self.fields:
            if field == name:
                return slice(start, start + width)
            start += width
        raise KeyError(name)

    @classmethod
    def from_observations(cls, observations: Sequence[Observation],
                          fields: tuple[tuple[str, int], ...] | None = None) -> "Outputs":
        """Rows of every release in ``fields`` order (by default: the names in order of first
        appearance, each as wide as its widest value), NaN where a run did not release it."""
        if fields is None:
            widths: dict[str, int] = {}
            for observation in observations:
                for name, value in observation.values:
                    widths[name] = max(widths.get(name, 0), value.size)
            fields = tuple(widths.items())
        layout = {name: (start, width) for (name, width), start in
                  zip(fields, np.cumsum([0] + [width for _, width in fields])[:-1])}
        values = np.full((len(observations), sum(width for _, width in fields)), np.nan)
        for row, observation in enumerate(observations):
            for name, value in observation.values:
                start, _ = layout[name]
                values[row, start:start + value.size] = value
        reasons = np.array([o.ending for o in observations], dtype=str).reshape(len(observations))
        return cls(values, reasons, (values.shape[1],) if fields else None, tuple(fields))

    @classmethod
    def from_list(cls, outputs: Sequence) -> "Outputs":
        """Normalise a list of single outputs (one per run)."""
        if outputs and all(isinstance(output, Observation) for output in outputs):
            return cls.from_observations(outputs)
        reasons = np.array([_reason(output) for output in outputs], dtype=str).reshape(len(outputs))
        released = [np.asarray(output, dtype=float) for output, reason in zip(outputs, reasons) if not reason]
        shape = _one_shape({value.shape for value in released})
        width = int(np.prod(shape)) if shape is not None else 0
        values = np.full((len(outputs), width), np.nan)
        if released:
            values[reasons == ""] = np.reshape(released, (len(released), width))
        return cls._from_values(values, reasons, shape)

    @classmethod
    def from_batch(cls, result: object, size: int) -> "Outputs":
        """Normalise what ``fn(data, rng, size=size)`` returned: first axis is the run."""
        if isinstance(result, Outputs):  # a graph runner lays out its observations itself
            if len(result) != size:
                raise ValueError(f"fn(data, rng, size={size}) must return {size} outputs, got {len(result)}")
            return result
        if isinstance(result, np.ndarray) and result.dtype.kind in "biuf":
            if result.ndim == 0 or result.shape[0] != size:
                raise ValueError(f"fn(data, rng, size={size}) must return {size} outputs along the first axis, got shape {result.shape}")
            values = result.reshape(size, -1).astype(float, copy=False)
            return cls._from_values(values, np.full(size, "", dtype=str), result.shape[1:])
        outputs = list(result)
        if len(outputs) != size:
            raise ValueError(f"fn(data, rng, size={size}) must return {size} outputs, got {len(outputs)}")
        return cls.from_list(outputs)

    @classmethod
    def concatenate(cls, parts: Sequence["Outputs"], released_shape: tuple[int, ...] | None = None,
                    fields: tuple[tuple[str, int], ...] = ()) -> "Outputs":
        """Join batches of the same mechanism; their released outputs must share one shape.

        ``released_shape`` (the shape released on any side or half of a pair) sizes the rows of
        batches in which every run halted, so that both sides of a pair have the same width.
        Observations are laid out in ``fields`` (``common_fields`` of all the pair's batches).
        """
        if fields:
            return cls(np.concatenate([part.widened(fields) for part in parts]),
                       np.concatenate([part.reasons for part in parts]), (sum(w for _, w in fields),), fields)
        shape = common_shape(parts)
        width_shape = shape if released_shape is None else released_shape
        width = int(np.prod(width_shape)) if width_shape is not None else 0
        values = [part.values if part.shape is not None else np.full((len(part), width), np.nan) for part in parts]
        return cls(np.concatenate(values), np.concatenate([part.reasons for part in parts]), shape)


def common_fields(parts: Sequence[Outputs]) -> tuple[tuple[str, int], ...]:
    """The union of the parts' fields, in order of first appearance, each at its widest."""
    widths: dict[str, int] = {}
    for part in parts:
        for name, width in part.fields:
            widths[name] = max(widths.get(name, 0), width)
    return tuple(widths.items())


def common_shape(parts: Sequence[Outputs]) -> tuple[int, ...] | None:
    """The shape shared by the released outputs of ``parts`` (None if every run halted)."""
    return _one_shape({part.shape for part in parts if part.shape is not None})
