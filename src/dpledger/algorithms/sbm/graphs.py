"""Graph inputs of the dense SDP estimators: networkx graphs, scipy sparse or dense adjacency
matrices, and edge lists.

``EdgeAdjacency.validate`` checks them (square, symmetric, 0/1, no self-loops, n >= 2) and keeps
sparse input sparse; ``check_size`` refuses n above ``MAX_VERTICES`` on the shape, before the
dense matrix the SDP needs is allocated.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ... import _validate
from ...relations import EdgeAdjacency

#: Largest n for which the dense SDP is attempted: 8n² bytes per matrix and O(n³) per
#: eigendecomposition; above this the estimators refuse rather than exhaust memory or time.
MAX_VERTICES = 10_000


def from_edge_list(edges, n: int, sparse: bool = False):
    """Adjacency matrix of an undirected graph on vertices 0..n-1 from (i, j) pairs (a repeated
    pair is one edge): dense, or with ``sparse`` a CSR matrix in O(n + m) memory."""
    n = _validate.integer("n", n, minimum=2)
    pairs = np.asarray(list(edges) if not isinstance(edges, np.ndarray) else edges)
    if pairs.size == 0:
        return sp.csr_matrix((n, n)) if sparse else np.zeros((n, n))
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
        raise ValueError(f"edges must be integer (i, j) pairs, got an array of shape {pairs.shape} ({pairs.dtype})")
    if pairs.min() < 0 or pairs.max() >= n:
        raise ValueError(f"edge endpoints must lie in 0..{n - 1}")
    if np.any(pairs[:, 0] == pairs[:, 1]):
        raise ValueError("edges must not be self-loops (i == j)")
    if sparse:
        low, high = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
        keys = np.unique(low.astype(np.int64) * n + high)
        rows, cols = keys // n, keys % n
        upper = sp.csr_matrix((np.ones(len(keys)), (rows, cols)), shape=(n, n))
        return (upper + upper.T).tocsr()
    adjacency = np.zeros((n, n))
    adjacency[pairs[:, 0], pairs[:, 1]] = adjacency[pairs[:, 1], pairs[:, 0]] = 1.0
    return adjacency


def as_adjacency(graph) -> np.ndarray:
    """Dense validated adjacency matrix of a networkx graph, scipy sparse or array-like matrix,
    refused above ``MAX_VERTICES``."""
    return check_size(EdgeAdjacency.validate(graph))


def check_size(graph) -> np.ndarray:
    """The validated ``graph`` as a dense matrix, refused (before densifying) above ``MAX_VERTICES``."""
    n = graph.shape[0]
    if n > MAX_VERTICES:
        raise ValueError(
            f"n={n} vertices exceeds MAX_VERTICES={MAX_VERTICES} for the dense SDP ({8 * n ** 2 / 2**30:.1f} GiB "
            "per matrix, O(n³) per eigendecomposition); use sbm.spectral (weak recovery) or sbm.spectral_exact "
            "(exact recovery), which take sparse graphs at any n"
        )
    return graph.toarray() if sp.issparse(graph) else graph
