"""Neighbouring relations: which pairs of inputs a guarantee speaks about.

A relation is an object, not a string, because the auditor needs it to *produce* neighbours of an
input and to *check* that a pair it is given really is a neighbouring pair. Every mechanism graph
is private with respect to exactly one relation, and the accountant refuses to mix them.

- ``EdgeAdjacency``: graphs on the same vertex set whose edge sets differ in exactly one edge
  (Definition C.1 of the SBM/GMM seed). Inputs are symmetric 0/1 adjacency matrices: dense
  arrays stay dense; scipy sparse matrices and networkx graphs become CSR, never dense.
- ``ReplaceOne``: datasets of n points with |Y ∩ Y'| >= n - 1 (Definition D.1): one point swapped.
- ``AddRemoveOne``: one dataset is the other with one point added.
"""

from __future__ import annotations

import abc
import collections
import math
from typing import ClassVar, Iterator

import attrs
import numpy as np
import scipy.sparse as sp

from . import _validate
from .errors import RelationError


def _rows(data, name: str = "data") -> np.ndarray:
    array = _validate.finite_array(name, data, min_size=0)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{name} must be an (n,) or (n, d) array of points, got shape {array.shape}")
    return array


def _row_counter(rows: np.ndarray) -> collections.Counter:
    return collections.Counter(row.tobytes() for row in np.ascontiguousarray(rows))


def _multiset_difference(a: np.ndarray, b: np.ndarray) -> int:
    """How many rows of ``a`` have no partner in ``b`` (datasets are multisets of points)."""
    return sum((_row_counter(a) - _row_counter(b)).values())


MAX_NEIGHBOURS = 1_000_000  # per call: more is a mistake, not an audit


def _count(value) -> int:
    count = _validate.integer("count", value, minimum=1)
    if count > MAX_NEIGHBOURS:
        raise ValueError(f"count must be <= {MAX_NEIGHBOURS:,} neighbours per call, got {count:,}")
    return count


def _candidates(rows: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """Replacement points spread over (and just beyond) the data's bounding box."""
    lo, hi = rows.min(axis=0), rows.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return rng.uniform(lo - span, hi + span, size=(count, rows.shape[1]))


class Relation(abc.ABC):
    """Interface shared by the relations: a distance, a neighbour test, a neighbour generator."""

    name: str = "relation"
    #: False for relations only an audit speaks about (query answers, ``dpledger.answers``)
    for_sessions: ClassVar[bool] = True

    @abc.abstractmethod
    def distance(self, a, b) -> float:
        """How many neighbour-steps apart ``a`` and ``b`` are (inf when incomparable)."""

    def are_neighbours(self, a, b) -> bool:
        """True when ``a`` and ``b`` are at most one unit apart (identical inputs included)."""
        return self.distance(a, b) <= 1

    @abc.abstractmethod
    def neighbours(self, data, rng: np.random.Generator, count: int = 10) -> Iterator:
        """``count`` neighbours of ``data``, drawn with ``rng``."""

    def validate(self, data):
        """The input in the form the relation speaks about, or a ``ValueError`` before any charge."""
        array = _rows(data)
        return array.reshape(np.shape(data)) if np.ndim(data) == 1 else array

    def __str__(self) -> str:
        return self.name


#: Each defect a graph input may have: what is required, and the fix for a dense array, a scipy
#: sparse matrix and a networkx graph.
_DEFECTS = {
    "weighted": ("must be unweighted (entries 0 or 1)", {
        "dense": "drop the weights with (A != 0).astype(float)",
        "sparse": "drop the weights with (A != 0).astype(float)",
        "networkx": "drop the weights (delete the 'weight' edge attributes)"}),
    "asymmetric": ("must be symmetric (an undirected graph)", {
        "dense": "symmetrise with np.maximum(A, A.T)",
        "sparse": "symmetrise with A.maximum(A.T)",
        "networkx": "convert with G.to_undirected()"}),
    "self-loops": ("must have no self-loops (zero diagonal)", {
        "dense": "remove them with np.fill_diagonal(A, 0)",
        "sparse": "remove them with A.setdiag(0); A.eliminate_zeros()",
        "networkx": "remove them with G.remove_edges_from(nx.selfloop_edges(G))"}),
}


def _refusal(name: str, defect: str, kind: str) -> ValueError:
    problem, fixes = _DEFECTS[defect]
    return ValueError(f"{name} {problem}; {fixes[kind]}")


def _check_shape(name: str, shape: tuple) -> None:
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
        raise ValueError(f"{name} must be a square adjacency matrix with n >= 2, got shape {shape}")


def _is_networkx(data) -> bool:
    return hasattr(data, "nodes") and hasattr(data, "edges") and hasattr(data, "is_directed")


def _networkx_graph(graph, name: str) -> sp.csr_matrix:
    """A simple undirected, unweighted networkx graph as a CSR matrix (vertices in ``graph.nodes`` order)."""
    import networkx

    if graph.is_directed():
        raise _refusal(name, "asymmetric", "networkx")
    if graph.is_multigraph():
        raise ValueError(f"{name} must be a simple graph, not a multigraph; convert with nx.Graph(G)")
    _check_shape(name, (len(graph), len(graph)))
    if any(w is not None and w != 1 for _, _, w in graph.edges(data="weight")):
        raise _refusal(name, "weighted", "networkx")
    if networkx.number_of_selfloops(graph):
        raise _refusal(name, "self-loops", "networkx")
    return _sparse_graph(networkx.to_scipy_sparse_array(graph, nodelist=list(graph.nodes), weight=None,
                                                        format="csr"), name)


def _sparse_graph(matrix, name: str) -> sp.csr_matrix:
    """A validated canonical CSR matrix (float64 ones, sorted indices, no explicit zeros or
    duplicates) from any scipy sparse matrix, in O(n + m); the input is never modified."""
    _check_shape(name, matrix.shape)
    if matrix.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be real-valued, got dtype {matrix.dtype}")
    graph = sp.csr_matrix(matrix)  # shares the arrays of a CSR input
    if not np.all(np.isfinite(graph.data)):
        raise ValueError(f"{name} contains NaN or inf; clean or clip the input first")
    if not graph.has_canonical_format or not np.all(graph.data):
        graph = graph.copy()
        graph.sum_duplicates()
        graph.eliminate_zeros()
    if not np.all(graph.data == 1):
        raise _refusal(name, "weighted", "sparse")
    pattern = sp.csr_matrix((np.ones(graph.nnz, dtype=bool), graph.indices, graph.indptr), shape=graph.shape)
    transpose = pattern.T.tocsr()  # sorted indices: equal arrays iff the pattern is symmetric
    if not (np.array_equal(transpose.indptr, graph.indptr) and np.array_equal(transpose.indices, graph.indices)):
        raise _refusal(name, "asymmetric", "sparse")
    if np.any(graph.diagonal()):
        raise _refusal(name, "self-loops", "sparse")
    return graph if graph.dtype == np.float64 else sp.csr_matrix(
        (graph.data.astype(np.float64), graph.indices, graph.indptr), shape=graph.shape)


def _dense_graph(data, name: str) -> np.ndarray:
    array = _validate.finite_array(name, data, ndim=2)
    _check_shape(name, array.shape)
    if not np.all((array == 0) | (array == 1)):
        raise _refusal(name, "weighted", "dense")
    if not np.array_equal(array, array.T):
        raise _refusal(name, "asymmetric", "dense")
    if np.any(np.diag(array)):
        raise _refusal(name, "self-loops", "dense")
    return array


@attrs.frozen
class EdgeAdjacency(Relation):
    """Two graphs on vertex set [n] whose edge sets differ in exactly one edge (Definition C.1)."""

    name = "edge-adjacency"

    @staticmethod
    def validate(data, name: str = "graph") -> np.ndarray | sp.csr_matrix:
        """A symmetric 0/1 adjacency matrix with no self-loops, or a ``ValueError``: a canonical
        ``scipy.sparse.csr_matrix`` for scipy sparse input and networkx graphs (vertices in
        ``graph.nodes`` order), checked in O(n + m); a dense array for array-likes."""
        if _is_networkx(data):
            return _networkx_graph(data, name)
        if sp.issparse(data):
            return _sparse_graph(data, name)
        return _dense_graph(data, name)

    @staticmethod
    def adjacency(data, name: str = "graph") -> np.ndarray:
        """``validate``'s matrix, dense (n² floats: for small graphs and dense consumers)."""
        graph = EdgeAdjacency.validate(data, name)
        return graph.toarray() if sp.issparse(graph) else graph

    def distance(self, a, b) -> float:
        """How many vertex pairs differ, in O(n + m) for sparse inputs."""
        a, b = self.validate(a, "a"), self.validate(b, "b")
        if a.shape != b.shape:
            return math.inf
        return float(sp.triu(sp.csr_matrix(a) != sp.csr_matrix(b), k=1).nnz)

    def neighbours(self, data, rng: np.random.Generator, count: int = 10) -> Iterator[np.ndarray]:
        """Graphs with one vertex pair toggled (an edge added or removed), pairs drawn at random;
        dense, like ``adjacency`` (the auditor's small graphs)."""
        graph = self.adjacency(data)
        n = graph.shape[0]
        for _ in range(_count(count)):
            i, j = rng.choice(n, size=2, replace=False)
            other = graph.copy()
            other[i, j] = other[j, i] = 1 - graph[i, j]
            yield other


@attrs.frozen
class ReplaceOne(Relation):
    """Datasets of n points with |Y ∩ Y'| >= n - 1: one point replaced (Definition D.1)."""

    name = "replace-one"

    def distance(self, a, b) -> float:
        a, b = _rows(a, "a"), _rows(b, "b")
        if a.shape != b.shape:
            return math.inf
        return float(_multiset_difference(a, b))

    def neighbours(self, data, rng: np.random.Generator, count: int = 10) -> Iterator[np.ndarray]:
        """Copies of ``data`` with one random row replaced by a point in or beyond its range."""
        rows = _rows(data)
        if rows.shape[0] == 0:
            raise ValueError("data must have at least one point to have replace-one neighbours")
        count = _count(count)
        for point in _candidates(rows, rng, count):
            other = rows.copy()
            other[rng.integers(rows.shape[0])] = point
            yield other.reshape(np.shape(data))


@attrs.frozen
class AddRemoveOne(Relation):
    """One dataset equals the other with a single point added."""

    name = "add-remove-one"

    def distance(self, a, b) -> float:
        a, b = _rows(a, "a"), _rows(b, "b")
        if a.shape[1:] != b.shape[1:]:
            return math.inf
        return float(_multiset_difference(a, b) + _multiset_difference(b, a))

    def neighbours(self, data, rng: np.random.Generator, count: int = 10) -> Iterator[np.ndarray]:
        """Alternately ``data`` without one random row and with one new point appended."""
        rows = _rows(data)
        count = _count(count)
        extra = _candidates(rows, rng, count) if rows.shape[0] else rng.normal(size=(count, rows.shape[1]))
        for index in range(count):
            if index % 2 == 0 and rows.shape[0] > 0:
                yield np.delete(rows, rng.integers(rows.shape[0]), axis=0)
            else:
                yield np.vstack([rows, extra[index]])


def from_name(name: str) -> Relation:
    """The relation whose ``str`` is ``name`` (how ledgers store relations)."""
    for relation in (EdgeAdjacency(), ReplaceOne(), AddRemoveOne()):
        if relation.name == name:
            return relation
    raise ValueError(f"unknown relation {name!r}; known: edge-adjacency, replace-one, add-remove-one")


def check(name: str, value: object) -> Relation:
    if not isinstance(value, Relation):
        raise TypeError(f"{name} must be a Relation (EdgeAdjacency(), ReplaceOne(), AddRemoveOne()), got {value!r}")
    if not value.for_sessions:
        raise RelationError(f"{name}: {value} relates query answers, which an audit speaks about "
                            "(audit(fn, relation=..., data=answers)); a session charges graphs over records or "
                            "graphs: use ReplaceOne(), AddRemoveOne() or EdgeAdjacency(). Nothing was charged.")
    return value
