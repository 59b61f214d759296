"""Hypothesis strategies for inputs and neighbouring pairs: graphs, datasets and score vectors.

Every pair strategy draws pairs its relation calls neighbours (``graph_pairs``: ``EdgeAdjacency``,
``replace_one_pairs``: ``ReplaceOne``, ``add_remove_pairs``: ``AddRemoveOne``; ``answer_pairs``:
the query-answer relations of ``dpledger.answers``, ``score_pairs`` the ℓ∞ one on scores), so they
feed ``audit_pairs``, the pair search of ``audit``, or a property-based test of a mechanism.
Examples shrink towards empty graphs, small values and the first positions (answer pairs: every
answer moved up).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .. import _validate
from ..answers import ORDERED, Answers, EveryAnswer, signs
from ..relations import AddRemoveOne, EdgeAdjacency, ReplaceOne

#: an edge is present when its level in [0, LEVELS) reaches LEVELS·(1 − density)
LEVELS = 256


def _sizes(name: str, low: int, high: int, minimum: int) -> tuple[int, int]:
    low = _validate.integer(f"min_{name}", low, minimum=minimum)
    high = _validate.integer(f"max_{name}", high, minimum=minimum)
    if high < low:
        raise ValueError(f"max_{name} must be >= min_{name}, got min_{name}={low}, max_{name}={high}")
    return low, high


def _range(low: float, high: float) -> tuple[float, float]:
    low, high = _validate.real("low", low), _validate.real("high", high)
    if high <= low:
        raise ValueError(f"high must be > low, got low={low}, high={high}")
    return low, high


@st.composite
def _adjacency(draw, n: int, density: float) -> np.ndarray:
    pairs = n * (n - 1) // 2
    levels = draw(st.lists(st.integers(0, LEVELS - 1), min_size=pairs, max_size=pairs))
    upper = np.zeros((n, n))
    upper[np.triu_indices(n, k=1)] = np.asarray(levels) >= LEVELS - round(LEVELS * density)
    return upper + upper.T


def graphs(min_n: int = 2, max_n: int = 10, density: float = 0.5) -> st.SearchStrategy[np.ndarray]:
    """Symmetric 0/1 adjacency matrices with no self-loops, n in [min_n, max_n], each edge present
    with probability about ``density`` (exactly so for uniform draws)."""
    min_n, max_n = _sizes("n", min_n, max_n, 2)
    density = _validate.probability("density", density, high_open=False)
    return st.integers(min_n, max_n).flatmap(lambda n: _adjacency(n, density))


@st.composite
def _toggled(draw, graph: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = graph.shape[0]
    rows, columns = np.triu_indices(n, k=1)
    index = draw(st.integers(0, len(rows) - 1))
    other = graph.copy()
    i, j = rows[index], columns[index]
    other[i, j] = other[j, i] = 1 - graph[i, j]
    return graph, other


def graph_pairs(min_n: int = 2, max_n: int = 10, density: float = 0.5) -> st.SearchStrategy:
    """(G, G') edge-adjacent: G from ``graphs`` and one vertex pair of it toggled."""
    return graphs(min_n, max_n, density).flatmap(_toggled)


def _values(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def datasets(min_n: int = 1, max_n: int = 10, d: int | None = None, low: float = -1.0,
             high: float = 1.0) -> st.SearchStrategy[np.ndarray]:
    """Float arrays of shape (n,) (one number per record: a graph's default domain) or, with ``d``,
    (n, d); n in [min_n, max_n], entries in [low, high]."""
    min_n, max_n = _sizes("n", min_n, max_n, 0)
    width = 1 if d is None else _validate.integer("d", d, minimum=1)
    low, high = _range(low, high)
    arrays = st.integers(min_n, max_n).flatmap(lambda n: hnp.arrays(float, (n, width), elements=_values(low, high)))
    return arrays if d is not None else arrays.map(lambda rows: rows[:, 0])


def _scalar_records(pairs: st.SearchStrategy, d: int | None) -> st.SearchStrategy:
    """Pairs of (n, 1) arrays as (n,) arrays when ``d`` is None (scalar records)."""
    return pairs if d is not None else pairs.map(lambda pair: (pair[0][:, 0], pair[1][:, 0]))


def _rows(d: int, low: float, high: float) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(float, (d,), elements=_values(low, high))


@st.composite
def _replaced(draw, data: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    index = draw(st.integers(0, len(data) - 1))
    row = draw(_rows(data.shape[1], low, high).filter(lambda r: not np.array_equal(r, data[index])))
    other = data.copy()
    other[index] = row
    return data, other


def replace_one_pairs(min_n: int = 1, max_n: int = 10, d: int | None = None, low: float = -1.0,
                      high: float = 1.0) -> st.SearchStrategy:
    """(D, D') with one record of D replaced by a different one (``ReplaceOne`` neighbours): arrays
    of shape (n,) (scalar records) or, with ``d``, (n, d)."""
    min_n, _ = _sizes("n", min_n, max_n, 1)
    low, high = _range(low, high)
    rows = datasets(min_n, max_n, 1 if d is None else d, low, high)
    return _scalar_records(rows.flatmap(lambda data: _replaced(data, low, high)), d)


@st.composite
def _extended(draw, data: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    position = draw(st.integers(0, len(data)))
    row = draw(_rows(data.shape[1], low, high))
    return data, np.insert(data, position, row, axis=0)


def add_remove_pairs(min_n: int = 0, max_n: int = 10, d: int | None = None, low: float = -1.0,
                     high: float = 1.0) -> st.SearchStrategy:
    """(D, D') with D' = D plus one record inserted anywhere (``AddRemoveOne`` neighbours); D has
    min_n..max_n records, arrays of shape (n,) or, with ``d``, (n, d)."""
    low, high = _range(low, high)
    rows = datasets(min_n, max_n, 1 if d is None else d, low, high)
    return _scalar_records(rows.flatmap(lambda data: _extended(data, low, high)), d)


@st.composite
def _moved(draw, relation: Answers, k: int, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    answers = draw(hnp.arrays(float, (k,), elements=_values(low, high)))
    pattern = draw(st.sampled_from(relation.patterns))
    free, order = None, np.arange(k)
    if pattern == "free":
        steps = st.sampled_from((1, 0) if getattr(relation, "monotone", False) else (1, -1, 0))
        free = draw(hnp.arrays(float, (k,), elements=steps).filter(np.any))
    elif pattern in ORDERED:
        order = np.array(draw(st.permutations(range(k))))
    move = relation.move(signs(pattern, k, order, free))
    return answers, answers + (-move if draw(st.booleans()) else move)


def answer_pairs(relation: Answers, min_k: int = 1, max_k: int = 8, low: float = -1.0,
                 high: float = 1.0) -> st.SearchStrategy:
    """(a, a') answer vectors of length k in [min_k, max_k], a in [low, high], a' = a moved to the
    edge of the relation's ball along one of its sign patterns (``dpledger.answers.PATTERNS``):
    every answer up, half up and half down, one up and the rest down, one alone, or any
    {−1, 0, 1} vector. Never equal. Examples shrink towards every answer moving up: the corner
    where a threshold test (the sparse vector technique) loses most, which independent moves
    reach with probability 2^-k."""
    if not isinstance(relation, Answers):
        raise TypeError(f"relation must be one of dpledger.answers' relations (OneAnswer, EveryAnswer, "
                        f"AnswerDistance), got {relation!r}")
    min_k, max_k = _sizes("k", min_k, max_k, 1)
    low, high = _range(low, high)
    return st.integers(min_k, max_k).flatmap(lambda k: _moved(relation, k, low, high))


def score_pairs(min_k: int = 2, max_k: int = 8, sensitivity: float = 1.0,
                monotone: bool = False) -> st.SearchStrategy:
    """(u, u') score vectors in [0, 4·sensitivity], every score moved by at most ``sensitivity``
    (``monotone``: all one way, as monotone report-noisy-max assumes): ``answer_pairs`` under
    ``EveryAnswer``."""
    relation = EveryAnswer(sensitivity, monotone)
    return answer_pairs(relation, min_k, max_k, 0.0, 4 * relation.sensitivity)


def _density(graph: np.ndarray) -> float:
    n = graph.shape[0]
    return float(graph.sum() / (n * (n - 1)))


def pairs_like(relation: object, data, domain: object = None) -> st.SearchStrategy:
    """Neighbouring pairs of the relation shaped like ``data``: graphs with its n and density;
    datasets with its n, d and a value range that extends its own by its width on each side, cut
    to the bounds of ``domain`` (a graph's ``Records`` domain: values it would refuse are no pair);
    query answers of its shape, in a range that extends its own the same way."""
    if isinstance(relation, EdgeAdjacency):
        graph = relation.validate(data)
        return graph_pairs(graph.shape[0], graph.shape[0], _density(graph))
    if isinstance(relation, Answers):
        answers = relation.validate(data)
        lo, hi = float(answers.min()), float(answers.max())
        span = hi - lo if hi > lo else 1.0
        return answer_pairs(relation, answers.size, answers.size, lo - span, hi + span).map(
            lambda pair: (pair[0].reshape(answers.shape), pair[1].reshape(answers.shape)))
    if not isinstance(relation, (ReplaceOne, AddRemoveOne)):
        raise TypeError(f"no pair strategy for relation {relation!r}; pass pairs=[(D, D'), ...] instead")
    rows = relation.validate(data)
    rows = rows[:, None] if rows.ndim == 1 else rows
    n, d = rows.shape
    lo, hi = (float(rows.min()), float(rows.max())) if n else (-1.0, 1.0)
    span = hi - lo if hi > lo else 1.0
    low, high = max(lo - span, getattr(domain, "low", -np.inf)), min(hi + span, getattr(domain, "high", np.inf))
    shape = None if np.ndim(data) == 1 else d
    if isinstance(relation, ReplaceOne):
        return replace_one_pairs(max(n, 1), max(n, 1), shape, low, high)
    return add_remove_pairs(max(n - 1, 0), n, shape, low, high)
