"""Hypothesis strategies of the auditor: inputs have the promised form, pairs are neighbours."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given, settings

import dpledger as dp
from dpledger.audit import strategies
from dpledger.answers import EveryAnswer
from dpledger.relations import AddRemoveOne, EdgeAdjacency, ReplaceOne


@given(strategies.graphs(min_n=3, max_n=7, density=0.4))
def test_graphs_are_simple_undirected_adjacency_matrices(graph):
    assert 3 <= graph.shape[0] <= 7 and graph.shape[0] == graph.shape[1]
    assert np.array_equal(graph, EdgeAdjacency.adjacency(graph))


def test_graph_density_is_about_the_requested_one():
    densities = []

    @settings(max_examples=200)
    @given(strategies.graphs(min_n=10, max_n=10, density=0.25))
    def collect(graph):
        densities.append(graph.sum() / 90)

    collect()
    assert 0.15 < np.mean(densities) < 0.35  # (hypothesis also tries the simplest: empty graphs)


@given(strategies.graph_pairs(min_n=2, max_n=6, density=0.5))
def test_graph_pairs_are_edge_adjacent(pair):
    assert EdgeAdjacency().distance(*pair) == 1


@given(strategies.datasets(min_n=0, max_n=5, d=3, low=-2.0, high=5.0))
def test_datasets_have_the_requested_shape_and_range(data):
    assert data.shape[1] == 3 and 0 <= data.shape[0] <= 5
    assert np.all((data >= -2.0) & (data <= 5.0))


@given(strategies.replace_one_pairs(min_n=1, max_n=5, d=2, low=-1.0, high=1.0))
def test_replace_one_pairs_are_neighbours(pair):
    assert ReplaceOne().distance(*pair) == 1


@given(strategies.add_remove_pairs(min_n=0, max_n=5, d=2, low=-1.0, high=1.0))
def test_add_remove_pairs_are_neighbours(pair):
    assert AddRemoveOne().distance(*pair) == 1 and len(pair[1]) == len(pair[0]) + 1


@pytest.mark.parametrize("monotone", [False, True])
def test_score_pairs_are_within_the_sensitivity(monotone):
    @given(strategies.score_pairs(min_k=2, max_k=6, sensitivity=0.5, monotone=monotone))
    def check(pair):
        assert EveryAnswer(0.5, monotone).are_neighbours(*pair)

    check()


@pytest.mark.parametrize("monotone", [False, True])
def test_score_pairs_differ_and_shrink_to_every_score_moving_up(monotone):
    # the corner where a threshold test loses most: independent moves reach it with chance 2^-k
    @given(strategies.score_pairs(min_k=2, max_k=6, monotone=monotone))
    def differ(pair):
        assert not np.array_equal(*pair)

    differ()
    scores, moved = find(strategies.score_pairs(min_k=3, max_k=6, monotone=monotone), lambda pair: True)
    assert scores.tolist() == [0.0] * 3 and moved.tolist() == [1.0] * 3


@pytest.mark.parametrize("relation, data", [
    (EdgeAdjacency(), np.ones((5, 5)) - np.eye(5)),
    (ReplaceOne(), np.linspace(0, 1, 6)),
    (ReplaceOne(), np.zeros((4, 2))),
    (AddRemoveOne(), np.arange(6.0).reshape(3, 2)),
])
def test_pairs_like_an_input_keep_its_shape_and_are_neighbours(relation, data):
    @given(strategies.pairs_like(relation, data))
    def check(pair):
        assert relation.are_neighbours(*pair)
        assert pair[0].shape[1:] == data.shape[1:] and pair[0].ndim == data.ndim

    check()


@pytest.mark.parametrize("make, name", [
    (lambda: strategies.graphs(min_n=5, max_n=3), "max_n"),
    (lambda: strategies.graphs(min_n=1), "min_n"),
    (lambda: strategies.graphs(density=1.5), "density"),
    (lambda: strategies.datasets(low=1.0, high=1.0), "high"),
    (lambda: strategies.datasets(d=0), "d"),
    (lambda: strategies.replace_one_pairs(min_n=0), "min_n"),
    (lambda: strategies.score_pairs(sensitivity=0.0), "sensitivity"),
])
def test_bad_arguments_are_refused_naming_them(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_pairs_like_refuses_a_relation_it_does_not_know():
    class Other(dp.Relation):
        def distance(self, a, b):
            return 0.0

        def neighbours(self, data, rng, count=10):
            yield data

    with pytest.raises(TypeError, match="pass pairs="):
        strategies.pairs_like(Other(), 0.0)
