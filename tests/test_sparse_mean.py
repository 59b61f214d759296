"""sparse_mean.exponential and sparse_mean.peeling: plans, score sensitivity, utility, refusals, audit."""

import itertools

import numpy as np
import pytest

import dpledger as dp
from dpledger.algorithms import sparse_mean
from dpledger.algorithms.mean import sparse_gaussian
from dpledger.algorithms.sparse_mean.scores import thresholds
from dpledger.audit import audit_pairs
from dpledger.audit.runners import RunGraph

NAMES = ["sparse_mean.exponential", "sparse_mean.peeling"]


def run(graph, data, seed=0):
    return graph.execute(graph.validate(data), np.random.default_rng(seed))[0]


@pytest.mark.parametrize("name", NAMES)
def test_plan_is_pure_epsilon_by_basic_composition(name):
    plan = dp.estimator(name, epsilon=0.8, k=2, R=5.0, n=3000, d=8, selection_share=0.25).plan()
    assert plan.guarantee == dp.PureDP(0.8) and plan.rule == "basic sequential composition"
    selection = plan.steps[0]
    assert selection.mechanism in {"Exponential", "TopKPeeling"} and selection.guarantee.epsilon == pytest.approx(0.2)
    assert sum(s.guarantee.epsilon for s in plan.steps) == pytest.approx(0.8)


def test_score_sensitivity_is_at_most_one_exhaustively():
    """Every sample of small datasets replaced by every point of a grid: |ΔS(T)| <= 1 for all T."""
    rng = np.random.default_rng(0)
    supports = sparse_mean.support_candidates(3, 2)
    levels = thresholds(2.0, 1.0)
    grid = np.array(list(itertools.product((-6.0, -1.0, 0.0, 2.5, 9.0), repeat=3)))
    for _ in range(4):
        data = rng.normal(1.5, 2.0, size=(5, 3))
        def score(x):
            return sparse_mean.subset_scores(sparse_mean.levels(x, supports, levels), len(supports))

        base = score(data)
        for i, point in itertools.product(range(5), grid):
            other = data.copy()
            other[i] = point
            assert np.max(np.abs(score(other) - base)) <= 1.0


def test_score_prefers_the_true_support():
    data, mean = sparse_gaussian(500, 8, 2, 4.0, np.random.default_rng(2))
    supports = sparse_mean.support_candidates(8, 2)
    scores = sparse_mean.subset_scores(sparse_mean.levels(data, supports, thresholds(4.0, 1.0)), len(supports))
    assert set(supports[np.argmax(scores)]) == set(np.flatnonzero(mean))


def test_directions_are_unit_and_data_independent():
    directions = sparse_mean.unit_directions(3)
    assert directions.shape == (26, 3) and np.allclose(np.linalg.norm(directions, axis=1), 1.0)
    assert sparse_mean.direction_count(20, 2) == 190 * 8


@pytest.mark.parametrize("name, d, k, n", [("sparse_mean.exponential", 20, 2, 3000),
                                           ("sparse_mean.peeling", 20, 2, 3000),
                                           ("sparse_mean.peeling", 1000, 10, 20000)])
def test_error_is_well_below_R_and_below_the_empirical_mean(name, d, k, n):
    data, mean = sparse_gaussian(n, d, k, 5.0, np.random.default_rng(4))
    estimate = run(dp.estimator(name, epsilon=1.0, k=k, R=10.0, n=n, d=d), data)
    assert estimate.shape == (d,) and np.count_nonzero(estimate) <= k
    assert np.linalg.norm(estimate - mean) < 0.05 * 10.0
    if d == 1000:
        assert np.linalg.norm(estimate - mean) < np.linalg.norm(data.mean(axis=0) - mean)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad, error, match", [
    ({"k": 9}, ValueError, "exceeds the dimension"),
    ({"k": 0}, ValueError, "k must be >= 1"),
    ({"k": 1.5}, TypeError, "k must be an integer"),
    ({"R": -1.0}, ValueError, "R must be > 0"),
    ({"R": float("inf")}, ValueError, "R must be finite"),
    ({"n": 30}, ValueError, "too small"),
    ({"selection_share": 1.0}, ValueError, "selection_share"),
])
def test_bad_parameters_are_refused_in_the_factory(name, bad, error, match):
    with pytest.raises(error, match=match):
        dp.estimator(name, **({"epsilon": 1.0, "k": 2, "R": 2.0, "n": 3000, "d": 8} | bad))


def test_exponential_refuses_an_enumeration_above_the_limit():
    with pytest.raises(ValueError, match="MAX_DIRECTIONS.*sparse_mean.peeling"):
        dp.estimator("sparse_mean.exponential", epsilon=1.0, k=10, R=10.0, n=10**6, d=1000)
    assert dp.estimator("sparse_mean.peeling", epsilon=1.0, k=10, R=10.0, n=10**6, d=1000).plan()


@pytest.mark.parametrize("name", NAMES)
def test_bad_data_is_refused_before_any_charge(name):
    graph = dp.estimator(name, epsilon=1.0, k=2, R=5.0, n=3000, d=8)
    accountant = dp.Accountant(dp.PureDP(10.0))
    for bad in [np.full((3000, 8), np.nan), np.zeros((3000, 7)), np.zeros((10, 8))]:
        with pytest.raises(ValueError):
            accountant.run(graph, bad)
    assert len(accountant.ledger) == 0


@pytest.mark.parametrize("name", NAMES)
def test_empirical_audit_finds_no_violation(name):
    graph = dp.estimator(name, epsilon=1.0, k=1, R=5.0, n=16, d=3)
    data = np.tile([[3.0, 0.0, 0.0]], (16, 1)) + np.linspace(-1, 1, 16)[:, None]
    moved, fake = data.copy(), data.copy()
    moved[0], fake[0] = [-3.0, 0.0, 0.0], [0.0, 50.0, 0.0]
    report = audit_pairs(RunGraph(graph), [(data, moved), (data, fake)], 1.0,  # the whole release, in batches
                         samples=4_000, confidence=0.999999, seed=12)  # gross bugs; the registry audit too
    assert report.ok and not report.violation, str(report)


@pytest.mark.parametrize("name", ["mean.clipped", "mean.localised", *NAMES])
def test_registered_example_runs_fast_and_outputs_a_mean_vector(name):
    import time

    from dpledger.graph import registry

    params, data = registry.info(name).example(np.random.default_rng(0))
    graph = dp.estimator(name, **params)
    rng, validated = np.random.default_rng(0), graph.validate(data)
    start = time.perf_counter()
    outputs = [graph.execute(validated, rng)[0] for _ in range(50)]
    assert (time.perf_counter() - start) / 50 < 0.005  # the auditor runs each example thousands of times
    assert all(out.shape == (params["d"],) and np.linalg.norm(out) <= params["R"] + 1e-12 for out in outputs)
