"""gmm.centres (Algorithm D.5): the certified convex step, every sensitivity claim of the proof
checked on adversarial neighbours, the calibration's arithmetic, the graph and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpledger
from dpledger.algorithms.gmm import Tuning, calibrate, centre_error, sample_mixture, useful_n
from dpledger.algorithms.gmm import bins, membership
from dpledger.algorithms.gmm.calibration import _subsampled_sum, _tail_bound, default_radius
from dpledger.graph import estimator
from dpledger.mechanisms.histogram import Histogram

RADIUS, C = 6.0, 1.0


def _mixture(n, k=3, d=2, separation=10.0, seed=0, weights=None):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [separation, 0.0], [0.0, separation], [separation, separation], [2 * separation, 0]])
    labels = rng.choice(k, size=n, p=weights)
    return centres[labels, :d] + rng.standard_normal((n, d))


def _neighbours(points, seed):
    """Adversarial replacements of one row: far away, into the densest cluster, next to another row."""
    rng = np.random.default_rng(seed)
    i = int(rng.integers(len(points)))
    for target in (np.full(points.shape[1], 1e3), points[0] + 0.01, points[rng.integers(len(points))]):
        other = points.copy()
        other[i] = target
        yield i, other


def _solve(points, cap, target):
    return membership.solve(points, RADIUS, cap, C, target)


def test_dual_solver_is_certified_and_agrees_with_cvxpy():
    points = _mixture(24, weights=[0.6, 0.2, 0.2])  # one oversized cluster: row caps bind
    cap, target = 24 / 3, 0.05
    ours, oracle = _solve(points, cap, target), membership.solve_cvxpy(points, RADIUS, cap, C, 10.0)
    assert ours.meets_target and ours.iterations > 0
    assert ours.certified_error <= target
    w, mask = ours.solution, membership.radius_mask(points, RADIUS)
    assert np.allclose(w, w.T) and w.min() >= 0 and w.max() <= 1
    assert np.all(w[~mask] == 0) and np.all(w.sum(axis=1) <= cap)
    # both are certified: the exact minimiser is within each certificate
    assert np.linalg.norm(ours.solution - oracle.solution) <= ours.certified_error + oracle.certified_error
    assert w.sum(axis=1).max() > cap * 0.99  # the caps really bind: the dual did work


def test_gap_certificate_is_a_true_bound():
    """The certified error bounds the distance to a much more accurate solution."""
    points = _mixture(200, weights=[0.6, 0.2, 0.2], seed=1)
    rough, fine = _solve(points, 200 / 3, 2.0), _solve(points, 200 / 3, 1e-4)
    assert rough.certified_error > fine.certified_error
    assert np.linalg.norm(rough.solution - fine.solution) <= rough.certified_error + fine.certified_error


def test_zeroing_the_changed_row_lands_in_both_feasible_sets():
    points = _mixture(60, seed=2)
    w = _solve(points, 20.0, 0.01).solution
    for i, other in _neighbours(points, 2):
        z = w.copy()
        z[i, :] = z[:, i] = 0
        mask = membership.radius_mask(other, RADIUS)
        assert np.all(z[~mask] == 0) and np.all(z.sum(axis=1) <= 20.0) and np.allclose(z, z.T)


@pytest.mark.parametrize("seed", range(3))
def test_membership_and_representatives_move_within_the_proven_bounds(seed):
    """Lemma B.1's Δ_W and the per-row bound (2r/A0)(L·sqrt(n)·e_i + 2) hold on adversarial neighbours."""
    n, k = 90, 3
    points = _mixture(n, k, seed=seed, weights=[0.5, 0.3, 0.2])
    cal = calibrate(n, 2, k, 10.0, 1e3, 0.5, tuning=Tuning(radius=RADIUS, subsample=n))
    assert cal.delta_w == pytest.approx(math.sqrt(24 * cal.c * cal.cap) + 2 * cal.accuracy)
    solve = lambda y: _solve(y, cal.cap, cal.accuracy)  # noqa: E731
    base = solve(points)
    rows = np.arange(n)
    nu = membership.representatives(points, membership.soft_threshold(base.solution, cal.low, cal.high), rows,
                                    cal.radius, cal.floor)
    worst = 0.0
    for i, other in _neighbours(points, seed):
        moved = solve(other)
        e = np.linalg.norm(base.solution - moved.solution, axis=1)
        assert np.sqrt((e ** 2).sum()) <= cal.delta_w
        nu2 = membership.representatives(other, membership.soft_threshold(moved.solution, cal.low, cal.high), rows,
                                         cal.radius, cal.floor)
        bound = (2 * cal.radius / cal.floor) * (cal.lipschitz * math.sqrt(n) * e + 2)
        change = np.linalg.norm(nu - nu2, axis=1)
        keep = rows != i
        assert np.all(change[keep] <= bound[keep] * (1 + 1e-9))
        worst = max(worst, float((change[keep] / bound[keep]).max()))
    assert worst > 0  # the neighbours really moved some ν(i)


def test_representatives_are_neighbourhood_averages_within_the_radius():
    points = _mixture(30, k=1, seed=3)
    weights = membership.soft_threshold(_solve(points, 30.0, 0.01).solution, 0.5, 1.0)
    nu = membership.representatives(points, weights, np.arange(30), RADIUS, 1.0)
    assert np.all(np.linalg.norm(nu - points, axis=1) <= RADIUS)
    assert np.linalg.norm(nu.mean(axis=0) - points.mean(axis=0)) < 0.5


def test_subsampled_bound_holds_on_a_worst_case_population():
    """Empirical failure rate of the Bernstein/hypergeometric bound stays below its γ (here 5%)."""
    n, s, total, m, gamma = 2000, 200, 500.0, 4, 0.05
    bound = _subsampled_sum(n, s, total, m, gamma, gamma)
    assert s * total / n <= bound <= total
    K = next(K for K in range(n, 1, -1) if _tail_bound(m, n, K, s) <= gamma)
    t = total / (K - 1)
    values = np.zeros(n)
    values[: int(total // t)] = t * (1 - 1e-9)  # as many rows as possible just under the bad threshold
    rng = np.random.default_rng(4)
    sums = np.array([values[rng.choice(n, size=s, replace=False)].sum() for _ in range(4000)])
    assert np.mean(sums > bound) <= gamma


def test_calibration_meets_the_budget_and_reports_weakness_honestly():
    for epsilon, delta in [(1.0, 1e-6), (4.0, 1e-3)]:
        cal = calibrate(20_000, 2, 3, 10.0, epsilon, delta)
        g = estimator("gmm.centres", epsilon=epsilon, delta=delta, k=3, n=20_000, d=2, separation=10.0).plan()
        assert g.guarantee.epsilon <= epsilon * (1 + 1e-12) and g.guarantee.delta <= delta * (1 + 1e-12)
        assert not cal.useful and "WEAK AT THIS n" in cal.verdict()
        assert any("WEAK AT THIS n" in step.rule for step in g.steps)


def test_useful_n_is_where_the_verdict_flips():
    n = useful_n(2, 2, 10.0, 8.0, 1e-3)
    assert n is not None and n > 1e6  # honest: far beyond what the solver can handle
    assert calibrate(n, 2, 2, 10.0, 8.0, 1e-3).useful
    assert not calibrate(n // 2, 2, 2, 10.0, 8.0, 1e-3).useful
    assert useful_n(2, 2, 10.0, 16.0, 1e-3) < n  # more budget, smaller n


def test_default_radius_sits_between_within_and_between_cluster_distances():
    r = default_radius(2, 10.0, 1.0)
    assert 2.0 < r < 10.0


def test_bins_halt_when_fewer_than_k_and_average_inside_cubes():
    histogram = Histogram({(0, 0): 0.5, (3, 3): 0.3}, 1.0, 0.0)
    with pytest.raises(dpledger.graph.nodes.Halt):
        bins.heaviest(histogram, 3)
    kept = bins.heaviest(histogram, 2)
    rows = np.array([[0.2, 0.3], [0.4, 0.5], [3.5, 3.5], [9.0, 9.0]])
    assert bins.smallest_count(rows, kept) == 1.0
    assert np.allclose(bins.averages(rows, kept), [[0.3, 0.4], [3.5, 3.5]])


def test_run_is_charged_and_outputs_k_centres_or_halts():
    info = dpledger.graph.info("gmm.centres")
    params, data = info.example(np.random.default_rng(5))
    graph = estimator("gmm.centres", **params)
    accountant = dpledger.Accountant(dpledger.ApproxDP(100.0, 0.95))
    outcomes = [accountant.run(graph, data, rng=np.random.default_rng(seed)) for seed in range(8)]
    assert accountant.spent.epsilon == pytest.approx(8 * params["epsilon"])
    released = [o.output for o in outcomes if not o.halted]
    assert released and all(np.shape(out) == (params["k"], params["d"]) for out in released)


@pytest.mark.parametrize("change, message", [
    (dict(k=0), "k"), (dict(k=50), "k must be <= n"), (dict(separation=0.0), "separation"),
    (dict(subsample=400), "too small|subsample"), (dict(epsilon=-1.0), "epsilon"), (dict(low=0.9, high=0.8), "low"),
])
def test_bad_parameters_are_refused_before_any_charge(change, message):
    params, _ = dpledger.graph.info("gmm.centres").example(np.random.default_rng(0))
    with pytest.raises((ValueError, TypeError), match=message):
        estimator("gmm.centres", **(params | change))


@pytest.mark.parametrize("bad", ["nan", "inf", "shape"])
def test_bad_data_is_refused_before_any_charge(bad):
    params, data = dpledger.graph.info("gmm.centres").example(np.random.default_rng(0))
    data = data.copy()
    if bad == "shape":
        data = data[:-1]
    else:
        data[3, 1] = float(bad)
    accountant = dpledger.Accountant(dpledger.ApproxDP(100.0, 0.9))
    with pytest.raises(ValueError):
        accountant.run(estimator("gmm.centres", **params), data)
    assert accountant.spent.epsilon == 0


def test_centre_error_uses_the_best_matching():
    truth = np.array([[0.0, 0.0], [10.0, 0.0]])
    assert centre_error(truth[::-1] + [0.0, 1.0], truth) == pytest.approx(1.0)
    _, centres, _ = sample_mixture(10, 4, 3, 5.0, np.random.default_rng(0))
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=-1)[np.triu_indices(4, 1)]
    assert gaps.min() == pytest.approx(5.0)


def test_steps_seven_to_nine_keep_their_claim_for_one_changed_row():
    """Audit the histogram/test/average sub-graph alone on adversarial one-row changes of V̂."""
    from dpledger.algorithms.gmm.estimators import steps_seven_to_nine
    from dpledger.audit import audit

    cal = calibrate(200, 2, 2, 40.0, 3.0, 0.2, tuning=Tuning(subsample=30, min_bin=4, bin_width=20.0,
                                                               noise_share=0.1))
    assert cal.bad_rows == 1  # steps 7–9 get ε2 ≈ 2.7 here, so the audit has power
    graph = dpledger.Graph(steps_seven_to_nine(cal), dpledger.ReplaceOne(), domain=dpledger.Records(shape=(2,)))
    g = graph.plan().guarantee
    assert g.epsilon == pytest.approx(cal.epsilon_histogram + cal.epsilon_test + cal.epsilon_average)
    rng = np.random.default_rng(6)
    rows = np.vstack([rng.normal(0, 0.5, (15, 2)), rng.normal(0, 0.5, (15, 2)) + [100.0, 0.0]])
    pairs = []
    for target in ([100.0, 0.0], [1000.0, 1000.0]):  # into the other cluster; into a bin of its own
        other = rows.copy()
        other[0] = target
        pairs.append((rows, other))
    report = audit(graph, pairs=pairs, samples=10_000, confidence=1 - 1e-8, seed=6)
    assert report.ok and not report.violation, str(report)


def test_neighbourhood_rows_move_by_at_most_two_radii_over_the_floor():
    """The neighbourhood method's claim: every ν(i) but the changed row's moves by <= 2r/A0."""
    n, floor = 120, 20.0
    points = _mixture(n, seed=7)
    rows = np.arange(n)
    nu = membership.representatives(points, membership.neighbourhoods(points, rows, RADIUS), rows, RADIUS, floor)
    worst = 0.0
    for i, other in _neighbours(points, 7):
        nu2 = membership.representatives(other, membership.neighbourhoods(other, rows, RADIUS), rows, RADIUS, floor)
        change = np.delete(np.linalg.norm(nu - nu2, axis=1), i)
        assert change.max() <= 2 * RADIUS / floor * (1 + 1e-12)
        worst = max(worst, change.max() / (2 * RADIUS / floor))
    assert worst > 0.02  # rows really moved, within a small factor of the bound


def test_neighbourhood_calibration_is_usable_at_moderate_n():
    cal = calibrate(20_000, 2, 3, 10.0, 4.0, 1e-6, method="neighbourhood")
    assert cal.bad_rows == 1 and cal.gamma == 0
    # 2r/A0 per row, with the rounding allowances (docs/proofs.md): a relative 3·10^-4 more
    assert cal.delta_v == pytest.approx(2 * cal.radius * math.sqrt(cal.subsample) / cal.floor, rel=3e-4)
    assert cal.delta_v > 2 * cal.radius * math.sqrt(cal.subsample) / cal.floor
    assert cal.useful
    assert useful_n(2, 3, 10.0, 4.0, 1e-6, method="neighbourhood") < 1e5
    assert useful_n(2, 3, 10.0, 4.0, 1e-6) is None  # the membership bound: never, up to 10^15
    with pytest.raises(ValueError, match="method"):
        calibrate(20_000, 2, 3, 10.0, 4.0, 1e-6, method="kmeans")


def test_neighbourhood_estimator_locates_separated_centres():
    data, centres, _ = sample_mixture(8000, 2, 2, 12.0, np.random.default_rng(8))
    graph = estimator("gmm.neighbourhood", epsilon=4.0, delta=1e-6, k=2, n=8000, d=2, separation=12.0)
    errors = []
    for seed in range(3):
        output, halted, _ = graph.execute(graph.validate(data), np.random.default_rng(seed))
        if halted is None:
            errors.append(centre_error(output, centres))
    assert errors and np.median(errors) < 3.0  # a quarter of the separation; chance level is about 12


@pytest.mark.parametrize("m, n, bad, s", [(4, 2000, 30, 200), (4, 10**12, 2**20, 50_000), (16, 10**6, 5000, 3000),
                                          (0, 100, 1, 10), (2, 50, 49, 40)])
def test_tail_bound_is_above_the_exact_hypergeometric_tail(m, n, bad, s):
    assert _tail_bound(m, n, bad, s) >= stats.hypergeom.sf(m, n, bad, s) * (1 - 1e-9)


def test_a_larger_budget_is_never_refused():
    small = calibrate(5000, 2, 3, 10.0, 50.0, 1e-6)
    huge = calibrate(5000, 2, 3, 10.0, 1e4, 1e-6)
    assert huge.noise_sigma <= small.noise_sigma


def test_bin_averages_move_within_the_claimed_sensitivity():
    """Step 9's claim: with every kept bin holding >= min_bin rows, one changed row moves the k
    averages jointly by at most sqrt(2)·b·sqrt(d)/(min_bin − 1); checked on adversarial moves."""
    rng = np.random.default_rng(9)
    width, min_bin = 4.0, 5
    kept = bins.Bins(np.array([[0, 0], [2, 0]]), width, 0.0)
    rows = np.vstack([rng.uniform(0, width, (min_bin, 2)), rng.uniform(0, width, (min_bin, 2)) + [2 * width, 0]])
    bound = math.sqrt(2) * width * math.sqrt(2) / (min_bin - 1)
    base = bins.averages(rows, kept)
    worst = 0.0
    for i in range(len(rows)):
        for target in ([0.0, 0.0], [width, width], [2 * width, 0.0], [3 * width, width], [50.0, 50.0]):
            other = rows.copy()
            other[i] = target
            if min(len(m) for m in kept.members(other)) < min_bin - 1:
                continue  # the light-bin test covers at most one row fewer than min_bin
            moved = np.linalg.norm(bins.averages(other, kept) - base)
            assert moved <= bound * (1 + 1e-12)
            worst = max(worst, moved / bound)
    assert worst > 0.3  # the adversarial moves come within a small factor of the bound


def test_step_six_noise_is_calibrated_to_the_proven_row_bound():
    """Δ_V of the deterministic regime aggregates the per-row bound over S (Minkowski), and the
    Gaussian step of the plan uses exactly that sensitivity."""
    cal = calibrate(3000, 2, 3, 10.0, 4.0, 1e-3, tuning=Tuning(subsample=300))
    if cal.regime.startswith("deterministic"):
        expected = (2 * cal.radius / cal.floor) * (cal.lipschitz * math.sqrt(cal.n) * cal.delta_w
                                                   + 2 * math.sqrt(cal.subsample))
        assert expected < cal.delta_v == pytest.approx(expected, rel=3e-4)  # plus the rounding allowances
    else:
        assert cal.sum_bound <= cal.delta_w ** 2
    plan = estimator("gmm.centres", epsilon=4.0, delta=1e-3, k=3, n=3000, d=2, separation=10.0,
                     subsample=300).plan()
    noise = next(step for step in plan.steps if step.path.endswith("/noise"))
    assert noise.params["sensitivity"] == pytest.approx(cal.delta_v)


@pytest.mark.parametrize("change, message", [
    (dict(d=-1), "d"), (dict(k=0), "k"), (dict(separation=float("nan")), "separation"), (dict(delta=2.0), "delta"),
    (dict(epsilon=float("inf")), "epsilon"), (dict(method="kmeans"), "method"),
])
def test_useful_n_refuses_bad_parameters_instead_of_returning_none(change, message):
    arguments = dict(d=2, k=3, separation=10.0, epsilon=4.0, delta=1e-6) | change
    with pytest.raises((ValueError, TypeError), match=message):
        useful_n(**arguments)
