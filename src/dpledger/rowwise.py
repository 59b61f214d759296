"""Position-free maps of records: each row's result from that row alone, the same bits at any row,
any number of rows and any BLAS thread count.

Multiset relations (``ReplaceOne``, ``AddRemoveOne``) let a neighbour list the same records in
another order, so a map of each record must not depend on where the record sits. A matrix
product does not promise that: BLAS computes the rows of an (n, d) @ (d, m) product with kernels
chosen by the shapes and by the row's place in a block (OpenBLAS's Haswell kernels give the last
row of an odd n other low-order bits; a row alone takes another routine than a block), and near a
histogram cell's edge one bit moves a record to another cell. So the reductions here use
elementwise operations only, each an IEEE operation correctly rounded whatever the position or the
SIMD width: products, then sums over the coordinates in index order (``ordered_sum``: t_0 + t_1,
then + t_2, ...). Rows are processed in blocks that bound the memory; a block never changes a row's
bits, since no operation mixes rows. (docs/design.md, "Per-record maps".)
"""

from __future__ import annotations

import numpy as np

#: Rows per block: the temporaries of a block stay in cache (4096 was the fastest here).
ROWS = 4096
#: Smallest length ``shortened`` accepts: below about 1e-154 the squares of a row longer than the
#: length can underflow to 0, its length compute as 0 and the row stay unshortened; from 1e-100
#: up, a row longer than the length has squares summing to at least 1e-200, a normal double.
MIN_LENGTH = 1e-100


def ordered_sum(terms: np.ndarray) -> np.ndarray:
    """Sum over the last axis in index order (t_0 + t_1, then + t_2, ...), elementwise."""
    terms = np.asarray(terms, dtype=float)
    if terms.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    total = terms[..., 0].copy()
    for j in range(1, terms.shape[-1]):
        total += terms[..., j]
    return total


def _blocks(rows: np.ndarray):
    """(start, the block's columns as a contiguous (d, b) array) for blocks of ``ROWS`` rows."""
    for start in range(0, rows.shape[0], ROWS):
        yield start, np.ascontiguousarray(rows[start:start + ROWS].T)


def squared_norms(rows: np.ndarray) -> np.ndarray:
    """||x||² of every row of an (n, d) array: x_0² + x_1² + ... in index order."""
    rows = np.asarray(rows, dtype=float)
    out = np.zeros(rows.shape[0])
    for start, columns in _blocks(rows):
        if len(columns):
            total = columns[0] * columns[0]
            for column in columns[1:]:
                total += column * column
            out[start:start + columns.shape[1]] = total
    return out


def dot(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """(n, m) array of x·M for every row x of an (n, d) array and a public (d, m) matrix M:
    x_0·M_0 + x_1·M_1 + ... in index order."""
    rows, matrix = np.asarray(rows, dtype=float), np.asarray(matrix, dtype=float)
    out = np.zeros((rows.shape[0], matrix.shape[1]))
    for start, columns in _blocks(rows):
        if len(columns):
            total = columns[0][:, None] * matrix[0]
            for column, weights in zip(columns[1:], matrix[1:]):
                total += column[:, None] * weights
            out[start:start + columns.shape[1]] = total
    return out


def squared_distances(rows: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(n, k) array of ||x − p||² for every row x and every point p of a (k, d) array, in index
    order (symmetric bit for bit: (x − p)² = (p − x)², and exactly 0 for x = p)."""
    rows, points = np.asarray(rows, dtype=float), np.asarray(points, dtype=float)
    out = np.zeros((rows.shape[0], points.shape[0]))
    coordinates = np.ascontiguousarray(points.T)
    for start, columns in _blocks(rows):
        if len(columns):
            total = np.subtract.outer(columns[0], coordinates[0])
            total *= total
            for column, coordinate in zip(columns[1:], coordinates[1:]):
                difference = np.subtract.outer(column, coordinate)
                difference *= difference
                total += difference
            out[start:start + columns.shape[1]] = total
    return out


def nearest(rows: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Index of the nearest point for every row (ties to the lower index)."""
    return np.argmin(squared_distances(rows, points), axis=1)


def shortened(rows: np.ndarray, length: float) -> np.ndarray:
    """Each row shortened to at most ``length`` in ℓ2, its direction kept: x·length/max(||x||, length).
    ``length`` (public) must be at least ``MIN_LENGTH``."""
    if not length >= MIN_LENGTH:
        raise ValueError(f"length {length:g} is below {MIN_LENGTH:g}, where a row's squares can underflow and "
                         "leave it unshortened; rescale the data")
    rows = np.asarray(rows, dtype=float)
    norms = np.sqrt(squared_norms(rows))
    return rows * (length / np.maximum(norms, length))[:, None]
