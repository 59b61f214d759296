"""Per-record maps are position-free (second review, finding 1): every built-in maps its records only
through ``per_record`` nodes, and each map gives a record the same bits at every row of inputs of
7, 8 and 1001 rows, with 1 and 2 BLAS threads, as the record mapped alone."""

import numpy as np
import pytest

import dpledger as dp
from dpledger import rowwise
from dpledger.graph.records import PerRecord
from dpledger.testing import position

RECORD_ESTIMATORS = [n for n in dp.estimators() if not isinstance(dp.estimator(
    n, **dp.graph.registry.info(n).example(np.random.default_rng(0))[0]).relation, dp.EdgeAdjacency)]


def _nodes(node):
    yield node
    for child in (getattr(node, "nodes", None) or getattr(node, "branches", None) or ()):
        yield from _nodes(child)
    inner = getattr(node, "node", None) or getattr(getattr(node, "release", None), "node", None)
    if inner is not None:
        yield from _nodes(inner)


@pytest.mark.parametrize("name", RECORD_ESTIMATORS)
def test_every_per_record_map_of_a_built_in_is_position_free(name):
    params, example = dp.graph.registry.info(name).example(np.random.default_rng(0))
    graph = dp.estimator(name, **params)
    assert any(isinstance(node, PerRecord) for node in _nodes(graph.root)), f"{name} maps no records"
    assert position.check(graph, example) > 0


def test_the_check_catches_a_matrix_product():
    """A map through BLAS (a row alone takes another routine than a block of rows) is caught."""
    matrix = np.random.default_rng(1).standard_normal((50, 8))
    blas = dp.Graph(dp.per_record("projected", lambda records: records @ matrix,
                                  dp.release("s", dp.mechanisms.Laplace(1.0), lambda p: float(np.clip(p, 0, 1).sum()))),
                    dp.ReplaceOne(), domain=dp.Records(shape=(50,)))
    data = np.random.default_rng(2).standard_normal((20, 50)) * 1e17
    with pytest.raises(position.PositionDependent, match="projected"):
        position.check(blas, data)
    fixed = dp.Graph(dp.per_record("projected", lambda records: rowwise.dot(records, matrix), blas.root.node),
                     dp.ReplaceOne(), domain=dp.Records(shape=(50,)))
    assert position.check(fixed, data) > 0


def test_rowwise_reductions_match_exact_arithmetic_closely():
    rng = np.random.default_rng(3)
    rows, matrix = rng.standard_normal((40, 33)), rng.standard_normal((33, 5))
    assert np.allclose(rowwise.dot(rows, matrix), rows @ matrix, rtol=1e-13, atol=1e-13)
    assert np.allclose(rowwise.squared_distances(rows, rows[:4]), ((rows[:, None] - rows[None, :4]) ** 2).sum(-1))
    assert np.array_equal(np.diag(rowwise.squared_distances(rows, rows)), np.zeros(40))
    assert np.array_equal(rowwise.squared_distances(rows, rows), rowwise.squared_distances(rows, rows).T)
    short = rowwise.shortened(rows, 1.0)
    assert np.all(np.sqrt(rowwise.squared_norms(short)) <= 1.0 + 1e-15)


def test_per_record_maps_only_the_records_of_a_dataset():
    edge = dp.Graph(dp.per_record("m", lambda records: records, dp.release("s", dp.mechanisms.Laplace(1.0),
                                                                        lambda g: 0.0)), dp.EdgeAdjacency())
    with pytest.raises(dp.PrivacyError, match="per-record"):
        edge.plan()
