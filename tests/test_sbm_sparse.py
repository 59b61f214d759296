"""Sparse graphs end to end: validation that keeps them sparse, the edge split, the sparse SBM
sampler, and the dense SDP's refusal of large n before it densifies."""

import contextlib
import math
import re
import tracemalloc

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dpledger as dp
from dpledger.algorithms import sbm
from dpledger.algorithms.sbm import model
from dpledger.mechanisms import EdgeSplit

MiB = 2**20


def rng(seed=0):
    return np.random.default_rng(seed)


@contextlib.contextmanager
def peak_memory():
    """Peak bytes traced (numpy buffers included) inside the block, in ``peak["bytes"]``."""
    peak = {}
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak["bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def small_graph(n=30, seed=0):
    return sbm.sample_sparse(n, 8.0, 0.5, rng(seed))[0]


def test_spectral_exact_keeps_a_sparse_graph_sparse_and_recovers_the_communities():
    n = 20_000
    graph, labels = sbm.sample_sparse(n, 120.0, 0.9, rng(1))  # 1.2·10^6 edges; dense: 3.2 GB
    acct = dp.Accountant(dp.ApproxDP(2.0, 1e-9))
    estimator = dp.estimator("sbm.spectral_exact", epsilon=2.0, delta=1e-9, n=n)
    with peak_memory() as peak:
        result = acct.run(estimator, graph, rng=rng(2))
    assert peak["bytes"] < 200 * MiB
    assert sbm.error_rate(result.output, labels) == 0.0


@pytest.mark.parametrize("name", ["sbm.weak", "sbm.exact"])
def test_the_dense_sdp_refuses_a_large_sparse_graph_before_densifying(name):
    n = 12_000
    graph, _ = sbm.sample_sparse(n, 10.0, 0.5, rng(3))
    acct = dp.Accountant(dp.ApproxDP(2.0, 1e-5))
    estimator = dp.estimator(name, epsilon=1.0, delta=1e-6, n=n, d=10.0, gamma=0.5)
    with peak_memory() as peak, pytest.raises(ValueError, match="MAX_VERTICES.*sbm.spectral_exact"):
        acct.run(estimator, graph)
    assert peak["bytes"] < 100 * MiB
    assert len(acct.ledger) == 0 and (acct.spent.epsilon, acct.spent.delta) == (0.0, 0.0)


def test_a_small_sparse_graph_runs_the_dense_sdp_exactly_like_its_dense_form():
    graph, _ = sbm.sample_sparse(40, 12.0, 0.8, rng(4))
    estimator = dp.estimator("sbm.exact", epsilon=4.0, delta=1e-6, n=40, d=12.0, gamma=0.8)
    outputs = [dp.Accountant(dp.ApproxDP(4.0, 1e-6)).run(estimator, form, rng=rng(5)).output
               for form in (graph, graph.toarray())]
    assert np.array_equal(*outputs)


def _bad_inputs():
    good = small_graph()
    looped = good.tolil()
    looped[0, 0] = 1
    not_finite = good.copy()
    not_finite.data[:] = np.nan
    directed = nx.DiGraph([(0, 1), (1, 0)])
    directed.add_nodes_from(range(30))
    weighted = nx.Graph()
    weighted.add_nodes_from(range(30))
    weighted.add_edge(0, 1, weight=2.5)
    return {
        "directed networkx": (directed, "convert with G.to_undirected()"),
        "weighted networkx": (weighted, "drop the weights"),
        "weighted sparse": (good * 2, "drop the weights with (A != 0).astype(float)"),
        "duplicate entries sum": (sp.coo_matrix((np.ones(4), ([0, 0, 1, 1], [1, 1, 0, 0])), shape=(30, 30)),
                                  "drop the weights"),
        "non-symmetric": (sp.triu(good, k=1), "symmetrise with A.maximum(A.T)"),
        "self-loop": (looped, "remove them with A.setdiag(0); A.eliminate_zeros()"),
        "non-square": (sp.csr_matrix((30, 31)), "must be a square adjacency matrix with n >= 2"),
        "one vertex": (sp.csr_matrix((1, 1)), "must be a square adjacency matrix with n >= 2"),
        "n mismatch": (small_graph(31), "the graph has 31 vertices but this graph takes graphs on 30 vertices"),
        "non-finite": (not_finite, "NaN or inf; clean or clip the input first"),
    }


BAD_INPUTS = _bad_inputs()


@pytest.mark.parametrize("estimator", [
    dict(name="sbm.spectral_exact", epsilon=1.0, delta=1e-6, n=30),
    dict(name="sbm.spectral", epsilon=1.0, delta=1e-6, n=30),
    dict(name="sbm.exact", epsilon=1.0, delta=1e-6, n=30, d=8.0, gamma=0.5),
], ids=lambda e: e["name"])
@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_each_bad_graph_is_refused_with_its_fix_before_any_charge(estimator, case):
    data, fix = BAD_INPUTS[case]
    acct = dp.Accountant(dp.ApproxDP(2.0, 1e-5))
    with pytest.raises(ValueError, match=re.escape(fix)):
        acct.run(dp.estimator(**estimator), data)
    assert len(acct.ledger) == 0 and (acct.spent.epsilon, acct.spent.delta) == (0.0, 0.0)


def test_sparse_inputs_become_canonical_csr_and_the_input_is_left_alone():
    graph = small_graph(50)
    dense = graph.toarray()
    coo = graph.tocoo()
    padded = sp.coo_matrix((np.r_[coo.data, 0.0], (np.r_[coo.row, 0], np.r_[coo.col, 0])), shape=coo.shape).tocsr()
    shuffled = graph.copy()  # each row's indices reversed: the same matrix, unsorted
    for row in range(50):
        lo, hi = graph.indptr[row], graph.indptr[row + 1]
        shuffled.indices[lo:hi] = graph.indices[lo:hi][::-1]
    shuffled.has_sorted_indices = False
    stored = padded.nnz
    forms = [graph, coo, graph.tocsc(), graph.tolil(), sp.csr_array(graph), graph.astype(np.int8),
             graph.astype(bool), padded, shuffled, nx.from_scipy_sparse_array(graph)]
    for form in forms:
        out = dp.EdgeAdjacency.validate(form)
        assert isinstance(out, sp.csr_matrix) and out.dtype == np.float64 and np.all(out.data == 1)
        assert out.has_canonical_format and out.indices.dtype in (np.int32, np.int64)
        assert np.array_equal(out.toarray(), dense)
    assert padded.nnz == stored and not shuffled.has_sorted_indices  # inputs unchanged
    assert isinstance(dp.EdgeAdjacency.validate(dense), np.ndarray)  # dense input stays dense


def test_distance_and_neighbours_accept_sparse_graphs():
    relation = dp.EdgeAdjacency()
    graph = small_graph()
    toggled = graph.tolil()
    toggled[3, 7] = toggled[7, 3] = 1 - graph[3, 7]
    assert relation.distance(graph, toggled.tocsr()) == 1 and relation.distance(graph, toggled.toarray()) == 1
    assert relation.distance(graph, graph.toarray()) == 0 and relation.distance(graph, small_graph(31)) == math.inf
    for other in relation.neighbours(graph, rng(), 5):
        assert isinstance(other, np.ndarray) and relation.are_neighbours(graph, other)


def test_edge_split_of_a_sparse_graph_is_a_partition_with_the_right_share():
    graph, _ = sbm.sample_sparse(4000, 20.0, 0.5, rng(6))
    probability = 0.3
    first, second = EdgeSplit(probability).parts(graph, rng(7))
    for part in (first, second):
        assert isinstance(part, sp.csr_matrix) and (part != part.T).nnz == 0 and part.has_canonical_format
    assert first.multiply(second).nnz == 0 and (first + second != graph).nnz == 0
    edges = graph.nnz // 2
    share = first.nnz / 2 / edges
    assert abs(share - probability) <= 6 * math.sqrt(probability * (1 - probability) / edges)


def test_edge_split_of_a_dense_graph_keeps_its_coins():
    graph, _ = sbm.sample(40, 10.0, 0.5, rng(8))
    coins = np.triu(rng(9).random(graph.shape) < 0.5, k=1)
    coins = coins | coins.T
    first, second = EdgeSplit(0.5).parts(graph, rng(9))
    assert isinstance(first, np.ndarray) and np.array_equal(first, np.where(coins, graph, 0.0))
    assert np.array_equal(second, graph - first)


def test_the_sparse_sampler_draws_the_model():
    n, d, gamma = 4000, 30.0, 0.5
    graph, labels = sbm.sample_sparse(n, d, gamma, rng(10))
    assert isinstance(graph, sp.csr_matrix) and graph.shape == (n, n) and graph.indices.dtype == np.int32
    assert (graph != graph.T).nnz == 0 and not graph.diagonal().any()
    assert np.all(graph.data == 1) and graph.has_canonical_format
    assert labels.sum() == 0 and set(labels) == {-1, 1}
    upper = sp.triu(graph, k=1).tocoo()
    same = labels[upper.row] == labels[upper.col]
    half = n // 2
    for count, pairs, p in ((same.sum(), half * (half - 1), (1 + gamma) * d / n),
                            ((~same).sum(), half * half, (1 - gamma) * d / n)):
        assert abs(count - pairs * p) <= 6 * math.sqrt(pairs * p * (1 - p))
    given = np.where(np.arange(n) % 2 == 0, 1, -1)
    assert np.array_equal(sbm.sample_sparse(n, d, gamma, rng(11), labels=given)[1], given)


def test_the_log_parameterisation_is_the_same_draw():
    d, gamma = sbm.from_log_parameterisation(3000, 40.0, 5.0)
    a, _ = sbm.sample_sparse_log(3000, 40.0, 5.0, rng(12))
    b, _ = sbm.sample_sparse(3000, d, gamma, rng(12))
    assert (a != b).nnz == 0


def test_subsets_are_exact_distinct_and_uniform():
    total, size, draws = 1000, 100, 2000
    counts = np.zeros(total)
    generator = rng(13)
    for _ in range(draws):
        subset = model._subset(total, size, generator)
        assert subset.size == size and np.all(np.diff(subset) > 0) and 0 <= subset[0] and subset[-1] < total
        counts[subset] += 1
    p = size / total
    assert np.all(np.abs(counts - draws * p) <= 6 * math.sqrt(draws * p * (1 - p)))
    dense = model._subset(10, 6, generator)  # above a quarter of the pairs: sampled directly
    assert dense.size == 6 and np.all(np.diff(dense) > 0)


def test_triangular_decoding_is_exact_at_ten_to_the_eleven():
    j = np.array([2, 3, 1000, 500_000, 1_500_000, 2**24 + 1], dtype=np.int64)
    first = j * (j - 1) // 2  # pair (0, j); the pair before it is (j - 2, j - 1)
    keys = np.concatenate([first, first - 1, first + j - 1])
    i, jj = model._triangular(keys)
    assert np.array_equal(jj, np.concatenate([j, j - 1, j])) and np.array_equal(i, np.concatenate([0 * j, j - 2, j - 1]))


@pytest.mark.parametrize("args,kwargs", [
    ((1, 1.0, 0.5), {}), ((10, 0.0, 0.5), {}), ((10, 1.0, 0.0), {}), ((10, 1.0, 1.5), {}),
    ((10, 8.0, 0.5), {}), ((10, 1.0, 0.5), {"labels": np.ones(9)}), ((10, 1.0, 0.5), {"labels": np.zeros(10)}),
])
def test_both_samplers_refuse_the_same_parameters(args, kwargs):
    errors = []
    for sampler in (sbm.sample, sbm.sample_sparse):
        with pytest.raises(ValueError) as info:
            sampler(*args, rng=rng(), **kwargs)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
