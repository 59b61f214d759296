"""SBM estimators: inputs, parameters, plans (random partition, not 2ε), utility smoke tests."""

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dpledger as dp
from dpledger.algorithms import sbm
from dpledger.algorithms.sbm import graphs, recovery
from dpledger.mechanisms import Gaussian


def rng(seed=0):
    return np.random.default_rng(seed)


def dense_case(n=200, p=0.5, q=0.1, seed=0):
    d, gamma = n * (p + q) / 2, (p - q) / (p + q)
    adjacency, labels = sbm.sample(n, d, gamma, rng(seed))
    return adjacency, labels, d, gamma


def test_sampler_draws_a_balanced_sbm():
    adjacency, labels = sbm.sample(400, 20, 0.5, rng())
    assert adjacency.shape == (400, 400) and np.array_equal(adjacency, adjacency.T)
    assert np.all(np.diag(adjacency) == 0) and labels.sum() == 0
    same = np.outer(labels, labels) > 0
    within = adjacency[same].sum() / (same.sum() - 400)
    across = adjacency[~same].sum() / (~same).sum()
    assert within == pytest.approx(1.5 * 20 / 400, rel=0.1) and across == pytest.approx(0.5 * 20 / 400, rel=0.15)


def test_log_parameterisation_and_error_rate():
    d, gamma = sbm.from_log_parameterisation(100, alpha=6.0, beta=2.0)
    assert d == pytest.approx(4 * math.log(100)) and gamma == pytest.approx(0.5)
    x = np.array([1, 1, -1, -1])
    assert sbm.error_rate(-x, x) == 0 and sbm.error_rate(np.array([1, -1, -1, -1]), x) == 0.25
    with pytest.raises(ValueError, match="alpha > beta"):
        sbm.from_log_parameterisation(100, 1.0, 2.0)


def test_graph_inputs_are_converted_and_validated():
    adjacency, _, _, _ = dense_case(30)
    from_nx = sbm.as_adjacency(nx.from_numpy_array(adjacency))
    assert np.array_equal(from_nx, adjacency)
    assert np.array_equal(sbm.as_adjacency(sp.csr_matrix(adjacency)), adjacency)
    edges = np.argwhere(np.triu(adjacency, 1))
    assert np.array_equal(sbm.from_edge_list(edges, 30), adjacency)
    assert np.array_equal(sbm.from_edge_list([tuple(e) for e in edges], 30), adjacency)
    doubled = np.concatenate([edges, edges[:, ::-1]])  # each edge twice, once reversed: still one edge
    sparse = sbm.from_edge_list(doubled, 30, sparse=True)
    assert sp.issparse(sparse) and np.array_equal(sparse.toarray(), adjacency)
    bad = {
        "symmetric": np.triu(adjacency),
        "unweighted": adjacency * 2,
        "self-loops": adjacency + np.eye(30),
        "NaN": np.where(adjacency > 0, np.nan, 0.0),
        "n >= 2": np.zeros((1, 1)),
    }
    for message, matrix in bad.items():
        with pytest.raises(ValueError, match=message):
            sbm.as_adjacency(matrix)
    weighted = nx.Graph()
    weighted.add_edge(0, 1, weight=3.0)
    with pytest.raises(ValueError, match="unweighted"):
        sbm.as_adjacency(weighted)
    with pytest.raises(ValueError, match="undirected"):
        sbm.as_adjacency(nx.DiGraph([(0, 1)]))
    with pytest.raises(ValueError, match="self-loops"):
        sbm.from_edge_list([(1, 1)], 3)
    with pytest.raises(ValueError, match="0..2"):
        sbm.from_edge_list([(0, 3)], 3)


def test_too_large_graphs_are_refused(monkeypatch):
    monkeypatch.setattr(graphs, "MAX_VERTICES", 10)
    with pytest.raises(ValueError, match="MAX_VERTICES"):
        sbm.as_adjacency(np.zeros((11, 11)))


@pytest.mark.parametrize("kwargs,message", [
    (dict(gamma=0.0), "gamma"), (dict(gamma=1.5), "gamma"), (dict(d=0.0), "d"), (dict(d=-3.0), "d"),
    (dict(d=math.nan), "d"), (dict(epsilon=0.0), "epsilon"), (dict(delta=0.0), "delta"), (dict(n=1), "n"),
    (dict(d=150.0), "probability"), (dict(alpha=3.0, beta=1.0), "not both"), (dict(gamma=None), "gamma"),
    (dict(target=0.0), "target"),
])
def test_bad_parameters_fail_before_any_charge(kwargs, message):
    params = dict(epsilon=1.0, delta=1e-6, n=100, d=10.0, gamma=0.5) | kwargs
    with pytest.raises((ValueError, TypeError), match=message):
        dp.estimator("sbm.exact", **params)


def test_input_must_match_public_n_and_nothing_is_charged():
    acct = dp.Accountant(dp.ApproxDP(2, 1e-5))
    graph = dp.estimator("sbm.exact", epsilon=1.0, delta=1e-6, n=50, d=10.0, gamma=0.5)
    with pytest.raises(ValueError, match="graphs on 50 vertices"):
        acct.run(graph, np.zeros((40, 40)))
    with pytest.raises(ValueError, match="symmetric"):
        acct.run(graph, np.triu(np.ones((50, 50)), 1))
    assert len(acct.ledger) == 0


def test_exact_recovery_plans_to_epsilon_delta_by_random_partition():
    plan = dp.estimator("sbm.exact", epsilon=2.0, delta=1e-6, n=100, d=20.0, gamma=0.5).plan()
    assert plan.guarantee == dp.ApproxDP(2.0, 1e-6)  # not (4, 2e-6)
    assert plan.rule.startswith("random partition")
    assert dp.estimator("sbm.weak", epsilon=2.0, delta=1e-6, n=100, d=20.0, gamma=0.5).plan().guarantee == \
        dp.ApproxDP(2.0, 1e-6)
    assert dp.estimator("sbm.exponential", epsilon=2.0, n=12, d=6.0, gamma=0.5).plan().guarantee == dp.PureDP(2.0)


def test_unknown_degree_is_estimated_and_charged():
    plan = dp.estimator("sbm.exact", epsilon=2.0, delta=1e-6, n=100, gamma=0.5, degree_share=0.25).plan()
    assert plan.guarantee == dp.ApproxDP(2.0, 1e-6)
    assert plan.steps[0].mechanism == "DiscreteLaplace" and plan.steps[0].guarantee == dp.PureDP(0.5)


def test_noise_is_calibrated_to_the_smallest_bound_plus_twice_tau():
    n, d, gamma = 100, 10.0, 0.5
    tau = recovery.projection_target(n, d, gamma, 1e-7)
    assert tau == 1e-7  # above the floor here
    plan = dp.estimator("sbm.weak", epsilon=1.0, delta=1e-6, n=n, d=d, gamma=gamma, target=1e-7).plan()
    sensitivity = (min(math.sqrt(24 / (n * gamma * d)), math.sqrt(2) / (gamma * d)) + 2 * tau) / math.sqrt(2)
    step = plan.steps[0]
    assert step.params["sensitivity"] == pytest.approx(sensitivity, rel=1e-12)
    assert step.params["sigma"] == pytest.approx(Gaussian(1.0, 1e-6, sensitivity=sensitivity).sigma, rel=1e-12)
    assert "Lemma C.5" in step.rule  # γd = 5 < n/12: sqrt(24/500) < sqrt(2)/5
    dense = dp.estimator("sbm.weak", epsilon=1.0, delta=1e-6, n=n, d=60.0, gamma=gamma).plan()
    assert "1-Lipschitz" in dense.steps[0].rule


def test_exact_recovery_recovers_a_dense_sbm():
    # At n=300 the half graph needs a large ε for a good rough estimate; the n=1000, ε=4 setting of
    # the issue is measured in benchmarks/sbm_utility.py (too slow for a unit test).
    adjacency, labels, d, gamma = dense_case(n=300, seed=1)
    acct = dp.Accountant(dp.ApproxDP(16.0, 1e-6))
    result = acct.run(dp.estimator("sbm.exact", epsilon=16.0, delta=1e-6, n=300, d=d, gamma=gamma), adjacency,
                      rng=rng(2))
    assert sbm.error_rate(result.output, labels) == 0.0
    assert (acct.spent.epsilon, acct.spent.delta) == (16.0, 1e-6)


def test_weak_recovery_beats_chance_and_a_missed_certificate_is_a_bug_not_a_halt(monkeypatch):
    adjacency, labels, d, gamma = dense_case(n=300, seed=3)
    graph = dp.estimator("sbm.weak", epsilon=4.0, delta=1e-6, n=300, d=d, gamma=gamma)
    result = dp.Accountant(dp.ApproxDP(4.0, 1e-6)).run(graph, adjacency, rng=rng(4))
    assert sbm.error_rate(result.output, labels) < 0.1

    class Uncertified:  # what docs/proofs.md shows cannot happen at the floor
        meets_target = False
        certified_error, target = 1.0, 1e-7

    monkeypatch.setattr(recovery, "project_onto_elliptope", lambda y, target: Uncertified())
    acct = dp.Accountant(dp.ApproxDP(4.0, 1e-6))
    with pytest.raises(dp.PrivacyError, match="labels_matrix.*SolverError.*bug"):
        acct.run(graph, adjacency, rng=rng(4))
    assert acct.spent.epsilon == 4.0  # charged before the data was touched


def test_exponential_mechanism_enumerates_and_refuses_large_n():
    assert recovery.balanced_labelings(6).shape == (20, 6)
    assert np.all(recovery.balanced_labelings(5).sum(axis=1) == 1)
    with pytest.raises(ValueError, match="MAX_ENUMERATION_VERTICES"):
        dp.estimator("sbm.exponential", epsilon=1.0, n=26, d=10.0, gamma=0.5)
    adjacency, labels, d, gamma = dense_case(n=16, p=0.9, q=0.05, seed=5)
    result = dp.Accountant(dp.PureDP(8.0)).run(
        dp.estimator("sbm.exponential", epsilon=8.0, n=16, d=d, gamma=gamma), adjacency, rng=rng(6))
    assert sbm.error_rate(result.output, labels) <= 0.125


def test_scores_are_the_quadratic_form():
    adjacency, _, d, gamma = dense_case(n=8, seed=7)
    candidates = recovery.balanced_labelings(8)
    y = recovery.centred(adjacency, d, gamma)
    expected = np.array([c @ y @ c for c in candidates.astype(float)])
    assert recovery.labeling_scores(adjacency, d, gamma, candidates) == pytest.approx(expected)
