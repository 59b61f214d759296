"""Position-free maps of records: each row's result from that row alone, the same bits at any row,
any number of rows and any BLAS thread count.

Multiset relations (``ReplaceOne``, ``AddRemoveOne``) let a neighbour list the same records in
another order, so a map of each record must not depend on where the record sits. A matrix
product does not promise that: BLAS computes the rows of an (n, d) @ (d, m) product with kernels
chosen by the shapes and by the row's place in a block (OpenBLAS gives the last row of an odd n
other low-order bits), and near a histogram cell's edge one bit moves a record to another cell.
So the reductions here use elementwise operations only (each an IEEE operation, correctly
rounded, whatever the position or the SIMD width): products, then sums over a fixed pairwise tree
whose shape depends on the reduced length alone (``tree_sum``). Rows are processed in blocks that
bound the memory; a block's size never changes a row's bits, since no operation mixes rows.
(docs/design.md, "Per-record maps".)
"""

from __future__ import annotations

import numpy as np

#: Elements of a temporary (rows × outputs × terms) held at once.
BLOCK = 1 << 18  # 2 MiB of doubles: fastest here (2^22 was 1.7× slower for dot)
#: Smallest length ``shortened`` accepts: below about 1e-154 the squares of a row longer than the
#: length can underflow to 0, its length compute as 0 and the row stay unshortened; from 1e-100
#: up, a row longer than the length has squares summing to at least 1e-200, a normal double.
MIN_LENGTH = 1e-100


def tree_sum(terms: np.ndarray) -> np.ndarray:
    """Sum over the last axis by a pairwise tree fixed by its length: element i of the first half
    plus element i of the second, repeated (an odd last element carried up)."""
    while terms.shape[-1] > 1:
        length = terms.shape[-1]
        half = length // 2
        paired = terms[..., :half] + terms[..., half:2 * half]
        terms = paired if length % 2 == 0 else np.concatenate([paired, terms[..., 2 * half:]], axis=-1)
    return terms[..., 0]


def _rows_per_block(*widths: int) -> int:
    return max(1, BLOCK // max(int(np.prod(widths)), 1))


def squared_norms(rows: np.ndarray) -> np.ndarray:
    """||x||² of every row of an (n, d) array."""
    rows = np.asarray(rows, dtype=float)
    return tree_sum(rows * rows) if rows.shape[1] else np.zeros(rows.shape[0])


def dot(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """(n, m) array of x·M for every row x of an (n, d) array and a public (d, m) matrix M."""
    rows, matrix = np.asarray(rows, dtype=float), np.asarray(matrix, dtype=float)
    n, d = rows.shape
    m = matrix.shape[1]
    out = np.empty((n, m))
    columns = np.ascontiguousarray(matrix.T)  # (m, d): the terms of output j are rows · columns[j]
    step = _rows_per_block(m, d)
    for start in range(0, n, step):
        block = rows[start:start + step]
        out[start:start + step] = tree_sum(block[:, None, :] * columns[None, :, :]) if d else 0.0
    return out


def squared_distances(rows: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(n, k) array of ||x − p||² for every row x and every point p of a (k, d) array (symmetric
    bit for bit: (x − p)² = (p − x)², and exactly 0 for x = p)."""
    rows, points = np.asarray(rows, dtype=float), np.asarray(points, dtype=float)
    n, d = rows.shape
    k = points.shape[0]
    out = np.empty((n, k))
    step = _rows_per_block(k, d)
    for start in range(0, n, step):
        differences = rows[start:start + step, None, :] - points[None, :, :]
        out[start:start + step] = tree_sum(differences * differences) if d else 0.0
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
