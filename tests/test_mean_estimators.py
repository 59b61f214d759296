"""mean.clipped and mean.localised: plans, utility, refusals, empirical audit."""

import numpy as np
import pytest

import dpledger as dp
from dpledger.algorithms.mean import sparse_gaussian
from dpledger.algorithms.mean.nodes import bin_indices, coordinate_histograms
from dpledger.audit import audit_pairs
from dpledger.audit.runners import RunGraph

NAMES = ["mean.clipped", "mean.localised"]


def run(graph, data, seed=0):
    return graph.execute(graph.validate(data), np.random.default_rng(seed))[0]


@pytest.mark.parametrize("name", NAMES)
def test_plan_is_pure_epsilon_by_basic_composition(name):
    plan = dp.estimator(name, epsilon=0.7, R=5.0, n=2000, d=3).plan()
    assert plan.guarantee == dp.PureDP(0.7) and plan.rule == "basic sequential composition"
    assert str(plan.relation) == "replace-one"
    released = [s for s in plan.steps if s.mechanism in ("Laplace", "DiscreteLaplace")]
    assert sum(s.guarantee.epsilon for s in released) == pytest.approx(0.7)


def test_sensitivities_in_the_plan_are_the_stated_l1_bounds():
    steps = {s.path.split("/")[-1]: s for s in dp.estimator("mean.localised", epsilon=1.0, R=5.0, n=1000, d=3,
                                                            locate_share=0.25).plan().steps}
    assert steps["noisy_mean_histograms"].params["sensitivity"] == 6.0
    assert steps["noisy_mean_offset"].params["sensitivity"] == pytest.approx(2 * 6.0 * 3 / 1000)
    clipped = dp.estimator("mean.clipped", epsilon=1.0, R=5.0, n=1000, d=3).plan().steps[0]
    assert clipped.params["sensitivity"] == pytest.approx(2 * 8.0 * 3 / 1000)


def test_histogram_sensitivity_is_two_per_coordinate():
    rng = np.random.default_rng(3)
    centres = np.linspace(-5, 5, 6)
    for _ in range(200):
        data = rng.normal(0, 4, size=(7, 3))
        other = data.copy()
        other[rng.integers(7)] = rng.normal(0, 40, size=3)
        diff = np.abs(coordinate_histograms(bin_indices(data, centres), 6)
                      - coordinate_histograms(bin_indices(other, centres), 6)).sum()
        assert diff <= 2 * 3


@pytest.mark.parametrize("name", NAMES)
def test_error_is_well_below_R(name):
    data, mean = sparse_gaussian(4000, 5, 5, 20.0, np.random.default_rng(1))
    estimate = run(dp.estimator(name, epsilon=1.0, R=20.0, n=4000, d=5), data)
    assert estimate.shape == (5,) and np.linalg.norm(estimate - mean) < 0.1 * 20.0


def test_localisation_beats_clipping_when_R_is_large():
    errors = {name: [] for name in NAMES}
    for seed in range(5):
        data, mean = sparse_gaussian(4000, 5, 5, 200.0, np.random.default_rng(seed))
        for name in NAMES:
            estimate = run(dp.estimator(name, epsilon=1.0, R=200.0, n=4000, d=5), data, seed)
            errors[name].append(np.linalg.norm(estimate - mean))
    assert np.median(errors["mean.localised"]) < 0.3 * np.median(errors["mean.clipped"])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad, error, match", [
    ({"R": 0.0}, ValueError, "R must be > 0"),
    ({"R": float("nan")}, ValueError, "R must be finite"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"n": 1}, ValueError, "n must be >= 2"),
    ({"d": 2.5}, TypeError, "d must be an integer"),
    ({"n": 20}, ValueError, "too small"),
])
def test_bad_parameters_are_refused_in_the_factory(name, bad, error, match):
    with pytest.raises(error, match=match):
        dp.estimator(name, **({"epsilon": 1.0, "R": 1.0, "n": 1000, "d": 3} | bad))


@pytest.mark.parametrize("name", NAMES)
def test_bad_data_is_refused_before_any_charge(name):
    graph = dp.estimator(name, epsilon=1.0, R=5.0, n=1000, d=3)
    accountant = dp.Accountant(dp.PureDP(10.0))
    data = np.zeros((1000, 3))
    for bad, match in [(np.where(np.eye(1000, 3) > 0, np.nan, data), "NaN or inf"),
                       (np.where(np.eye(1000, 3) > 0, np.inf, data), "NaN or inf"),
                       (np.zeros((999, 3)), "1000 records"), (np.zeros((1000, 4)), "shape \\(3,\\)"),
                       (np.zeros(1000), "shape \\(3,\\)")]:
        with pytest.raises(ValueError, match=match):
            accountant.run(graph, bad)
    assert len(accountant.ledger) == 0
    assert accountant.run(graph, data).output.shape == (3,) and len(accountant.ledger) == 1


@pytest.mark.parametrize("name", NAMES)
def test_empirical_audit_finds_no_violation(name):
    graph = dp.estimator(name, epsilon=1.0, R=5.0, n=10, d=1)
    data = np.linspace(-1, 1, 10)[:, None]
    far, flipped = data.copy(), data.copy()
    far[0], flipped[-1] = 100.0, -5.0
    report = audit_pairs(RunGraph(graph), [(data, far), (data, flipped)], 1.0,  # the whole release, in batches
                         samples=4_000, confidence=0.999999, seed=11)  # gross bugs; the registry audit too
    assert report.ok and not report.violation, str(report)


def test_the_audit_pairs_can_detect_an_understated_epsilon():
    graph = dp.estimator("mean.clipped", epsilon=1.0, R=5.0, n=10, d=1)
    data = np.linspace(-1, 1, 10)[:, None]
    far = data.copy()
    far[0] = 100.0
    report = audit_pairs(RunGraph(graph), [(data, far)], 0.25, samples=10_000, confidence=0.999999, seed=13)
    assert report.violation and report.epsilon_lower_bound > 0.25


@pytest.mark.parametrize("name", NAMES)
def test_extreme_scales_are_refused_with_a_message(name):
    with pytest.raises(ValueError, match="MAX_BINS|overflow"):
        dp.estimator(name, epsilon=1.0, R=1e308, n=1000, d=2)
    if name == "mean.localised":
        with pytest.raises(ValueError, match="MAX_BINS"):
            dp.estimator(name, epsilon=1.0, R=1e5, n=10**9, d=2, sigma=1.0)
