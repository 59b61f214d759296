"""Mechanism outputs as arrays: what ``fn`` returned, in a form statistics can be computed on.

``fn`` may return a scalar, a vector (any fixed shape, flattened here), a label vector, or ``None``
/ a string for a run that halted. ``Outputs`` holds a float matrix with one row per run (NaN rows
for halted runs) and, per run, the halt reason: ``""`` for a released output, ``"None"`` for
``None``, the string's ``repr`` for a string (so ``None`` and ``"None"`` stay distinct). A
released output containing NaN is treated as a halt with reason ``"NaN output"``: NaN cannot be
thresholded, and turning it into a distinct outcome keeps whatever it reveals auditable.
"""

from __future__ import annotations

from typing import Sequence

import attrs
import numpy as np

NAN_REASON = "NaN output"


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

    def __len__(self) -> int:
        return len(self.reasons)

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

    @classmethod
    def from_list(cls, outputs: Sequence) -> "Outputs":
        """Normalise a list of single outputs (one per run)."""
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
    def concatenate(cls, parts: Sequence["Outputs"], released_shape: tuple[int, ...] | None = None) -> "Outputs":
        """Join batches of the same mechanism; their released outputs must share one shape.

        ``released_shape`` (the shape released on any side or half of a pair) sizes the rows of
        batches in which every run halted, so that both sides of a pair have the same width.
        """
        shape = common_shape(parts)
        width_shape = shape if released_shape is None else released_shape
        width = int(np.prod(width_shape)) if width_shape is not None else 0
        values = [part.values if part.shape is not None else np.full((len(part), width), np.nan) for part in parts]
        return cls(np.concatenate(values), np.concatenate([part.reasons for part in parts]), shape)


def common_shape(parts: Sequence[Outputs]) -> tuple[int, ...] | None:
    """The shape shared by the released outputs of ``parts`` (None if every run halted)."""
    return _one_shape({part.shape for part in parts if part.shape is not None})
