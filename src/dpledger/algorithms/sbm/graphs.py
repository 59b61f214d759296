"""Graph inputs: networkx graphs, scipy sparse or dense adjacency matrices, and edge lists.

Everything becomes a dense symmetric 0/1 numpy adjacency matrix (the SDP is dense anyway),
validated by ``EdgeAdjacency.adjacency`` (square, symmetric, 0/1, no self-loops, n >= 2).
"""

from __future__ import annotations

import numpy as np

from ... import _validate
from ...relations import EdgeAdjacency

#: Largest n for which the dense SDP is attempted: 8n² bytes per matrix and O(n³) per
#: eigendecomposition; above this the estimators refuse rather than exhaust memory or time.
MAX_VERTICES = 10_000


def from_edge_list(edges, n: int) -> np.ndarray:
    """Adjacency matrix of an undirected graph on vertices 0..n-1 from (i, j) pairs."""
    n = _validate.integer("n", n, minimum=2)
    pairs = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges)
    if pairs.size == 0:
        return np.zeros((n, n))
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
        raise ValueError(f"edges must be integer (i, j) pairs, got an array of shape {pairs.shape} ({pairs.dtype})")
    if pairs.min() < 0 or pairs.max() >= n:
        raise ValueError(f"edge endpoints must lie in 0..{n - 1}")
    if np.any(pairs[:, 0] == pairs[:, 1]):
        raise ValueError("edges must not be self-loops (i == j)")
    adjacency = np.zeros((n, n))
    adjacency[pairs[:, 0], pairs[:, 1]] = adjacency[pairs[:, 1], pairs[:, 0]] = 1.0
    return adjacency


def as_adjacency(graph) -> np.ndarray:
    """Dense validated adjacency matrix of a networkx graph, scipy sparse or array-like matrix,
    refused above ``MAX_VERTICES``."""
    return check_size(EdgeAdjacency.adjacency(graph))


def check_size(adjacency: np.ndarray) -> np.ndarray:
    n = adjacency.shape[0]
    if n > MAX_VERTICES:
        raise ValueError(
            f"n={n} vertices exceeds MAX_VERTICES={MAX_VERTICES}: the dense SDP needs "
            f"{8 * n ** 2 / 2**30:.1f} GiB per matrix and O(n³) time per eigendecomposition"
        )
    return adjacency
