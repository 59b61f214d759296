"""The values of one output over the runs of a batch (``graph.batch``), and which runs share them.

A ``Column`` holds blocks ``(runs, values)``: ``values`` has one row per run of ``runs`` (an array
with a leading run axis, as ``Mechanism.sample`` draws it, a list, or one ``Constant`` for all);
a later write to a run replaces the earlier one (a ``repeat`` rewrites its outputs each time).

``Column.codes`` numbers the runs so that two runs get the same code exactly when their values are
the same bits of the same type (``key``): a query, a per-record map or a transform is a function
of its arguments, so runs with the same arguments may share one evaluation of it. Values that have
no such key (other objects) are shared only by runs that hold the very same object.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

#: dtypes whose bytes are their value (no pointers): arrays of these are keyed by their bits
_PLAIN = "biufc"


class Constant:
    """One value held by every run of a block (``repeat``'s public initial values)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __getitem__(self, index):
        return self.value


def key(value: Any) -> tuple:
    """A hashable key equal for two values exactly when they are the same bits of the same type
    (an array: dtype, shape and bytes; a number: its type and bits), else the object's identity."""
    if isinstance(value, np.ndarray) and value.dtype.kind in _PLAIN:
        return ("a", value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, np.generic) and value.dtype.kind in _PLAIN:
        return ("g", value.dtype.str, value.tobytes())
    kind = type(value)
    if kind is float:
        return (float, struct.pack("<d", value))
    if kind in (int, bool, str, bytes) or value is None:
        return (kind, value)
    if kind is tuple:
        return (tuple, tuple(key(item) for item in value))
    return ("id", id(value))


def segments(labels: np.ndarray) -> list[np.ndarray]:
    """Positions of ``labels`` grouped by label (each group in increasing order)."""
    if len(labels) < 2:
        return [np.arange(len(labels))] if len(labels) else []
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    return np.split(order, cuts)


class Column:
    """One output's values over ``size`` runs (see the module docstring)."""

    __slots__ = ("owner", "position", "blocks")

    def __init__(self, size: int):
        self.owner = np.full(size, -1, dtype=np.int64)
        self.position = np.zeros(size, dtype=np.int64)
        self.blocks: list[tuple[np.ndarray, Any]] = []

    def set(self, runs: np.ndarray, values) -> None:
        """Row i of ``values`` becomes the value of run ``runs[i]``."""
        if not len(runs):
            return
        self.owner[runs] = len(self.blocks)
        self.position[runs] = np.arange(len(runs))
        self.blocks.append((runs, values))

    def present(self, runs: np.ndarray) -> np.ndarray:
        return self.owner[runs] >= 0

    def get(self, run: int):
        return self.blocks[self.owner[run]][1][self.position[run]]

    def parts(self, runs: np.ndarray):
        """(positions in ``runs``, the block's values, rows in it) for each block holding some of ``runs``."""
        owners = self.owner[runs]
        for where in segments(owners):
            yield where, self.blocks[owners[where[0]]][1], self.position[runs[where]]

    def values(self, runs: np.ndarray) -> list:
        """The values of ``runs``, one by one."""
        out = [None] * len(runs)
        for where, values, rows in self.parts(runs):
            for i, row in zip(where.tolist(), rows.tolist()):
                out[i] = values[row]
        return out

    def stacked(self, runs: np.ndarray) -> np.ndarray:
        """The values of ``runs`` stacked along a new leading axis, each as ``np.asarray`` of it,
        when they share one dtype and shape (nothing is converted); else a ValueError."""
        blocks = list(self.parts(runs))
        if all(isinstance(values, np.ndarray) and values.ndim >= 1 for _, values, _ in blocks):
            if len(blocks) == 1:
                return blocks[0][1][blocks[0][2]]
            if len({(values.dtype, values.shape[1:]) for _, values, _ in blocks}) == 1:
                first = blocks[0][1]
                out = np.empty((len(runs), *first.shape[1:]), dtype=first.dtype)
                for where, values, rows in blocks:
                    out[where] = values[rows]
                return out
        arrays = [np.asarray(value) for value in self.values(runs)]
        if len({(array.dtype, array.shape) for array in arrays}) != 1:
            raise ValueError("the values of these runs differ in dtype or shape: they are not stacked")
        return np.stack(arrays)

    def codes(self, runs: np.ndarray) -> np.ndarray:
        """Equal codes for runs whose values have equal ``key``s."""
        keys: dict[tuple, int] = {}
        out = np.empty(len(runs), dtype=np.int64)
        for where, values, rows in self.parts(runs):
            if isinstance(values, Constant):
                out[where] = keys.setdefault(key(values.value), len(keys))
            elif isinstance(values, np.ndarray) and values.dtype.kind in _PLAIN and values.ndim >= 1:
                prefix = ("g", values.dtype.str) if values.ndim == 1 else ("a", values.dtype.str, values.shape[1:])
                flat = np.ascontiguousarray(values[rows]).reshape(len(rows), -1)
                if flat.shape[1] == 0:
                    out[where] = keys.setdefault(prefix + (b"",), len(keys))
                    continue
                rowbytes = flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()
                unique, inverse = np.unique(rowbytes, return_inverse=True)
                local = np.array([keys.setdefault(prefix + (u.tobytes(),), len(keys)) for u in unique])
                out[where] = local[inverse.ravel()]
            else:
                out[where] = [keys.setdefault(key(values[row]), len(keys)) for row in rows.tolist()]
        return out
