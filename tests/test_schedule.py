"""What is fixed in advance composes tightly: ``repeat`` (self-composition, as dp-accounting's) and
schedules declared up front (charged in full once, then enforced step by step)."""

import time

import dp_accounting
import numpy as np
import pytest

import dpledger as dp
from dpledger.mechanisms import Gaussian, Laplace, PoissonSample, TextbookGaussian, TextbookLaplace


def total(x):
    return float(np.sum(np.clip(x, 0, 1)))


def subsampled(sigma=1.0, q=0.01, name="g"):
    return dp.subsample(PoissonSample(q), dp.release(name, TextbookGaussian.from_sigma(sigma), total))


# -- repeat -----------------------------------------------------------------------------------
def test_a_1000_step_repeat_is_planned_as_dp_accounting_composes_it():
    graph = dp.Graph(dp.repeat(subsampled(), 1000), relation=dp.AddRemoveOne())
    started = time.perf_counter()
    plan = graph.plan()
    ours = plan.epsilon(1e-5)
    ours_time = time.perf_counter() - started
    started = time.perf_counter()
    reference = dp_accounting.pld.PLDAccountant()
    reference.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000)
    expected = reference.get_epsilon(1e-5)
    reference_time = time.perf_counter() - started
    assert expected <= ours <= expected * (1 + 1e-4)  # dp-accounting's, with 1e-12 of δ per step set aside
    assert ours_time < 4 * reference_time + 1.0  # the same computation (benchmarks/accounting.py measures it)
    assert plan.event == dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000)
    assert plan.steps[-1].rule == "1000 runs, tight self-composition (PLD)"


def test_repeat_feeds_each_iteration_the_last_ones_outputs():
    step = dp.sequence(dp.release("noisy", Laplace(1.0, bound=1e6), lambda x, state: state + total(x), uses="state"),
                       dp.postprocess("state", lambda noisy: noisy, uses="noisy"), name="iteration")
    graph = dp.Graph(dp.repeat(step, 3, initial={"state": 0.0}, name="loop"), relation=dp.ReplaceOne())
    plan = graph.plan()
    assert plan.guarantee == dp.PureDP(3.0) and plan.releases[-1] == "loop"
    output, halted, outputs = graph.execute(np.ones(1000), np.random.default_rng(0))
    assert halted is None and len(outputs["loop"]) == 3
    assert outputs["loop"][0] == pytest.approx(1000, abs=30)
    assert outputs["loop"][2] == pytest.approx(3000, abs=60)  # each iteration added to the last one's value
    assert outputs["state"] == outputs["loop"][2]


def test_repeat_with_a_halting_test_inside_is_a_basic_sum():
    test = dp.halt_if("check", Laplace(0.5), total, lambda v: v < -1e9)
    body = dp.sequence(test, dp.conditional("check", dp.release("x", Laplace(0.5), total)), name="body")
    plan = dp.Graph(dp.repeat(body, 4), relation=dp.ReplaceOne()).plan()
    assert plan.guarantee == dp.PureDP(4.0) and "Lemma A.4" in plan.steps[-1].rule


@pytest.mark.parametrize("times, error", [(0, ValueError), (-3, ValueError), (1.5, TypeError), (True, TypeError),
                                          ("3", TypeError)])
def test_repeat_refuses_a_count_that_is_not_a_positive_integer(times, error):
    with pytest.raises(error, match="times"):
        dp.repeat(dp.release("x", Laplace(1.0), total), times)


# -- declared schedules ------------------------------------------------------------------------
def training(accountant, steps=1000, sigma=1.0):
    return accountant.declare("training", [("step", dp.Graph(subsampled(sigma), relation=dp.AddRemoveOne()), steps)])


def test_a_declared_schedule_is_charged_in_full_once_and_tightly():
    acct = dp.Accountant(dp.ApproxDP(10.0, 1e-5), relation=dp.AddRemoveOne())
    schedule = training(acct)
    entry = acct.ledger[0]
    assert entry.mechanism == "schedule" and entry.steps[0].params["times"] == 1000
    reference = dp_accounting.pld.PLDAccountant()
    reference.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000)
    assert entry.guarantee.delta == pytest.approx(1000 * 0.01 * 1e-6)
    expected = reference.get_epsilon(entry.guarantee.delta)
    assert expected <= entry.guarantee.epsilon <= expected * (1 + 1e-4)  # with the PLD allowance
    spent = acct.spent
    graph = dp.Graph(subsampled(), relation=dp.AddRemoveOne())
    for _ in range(5):
        schedule.run(graph, np.zeros(10), name="step")
    assert acct.spent == spent and len(acct.ledger) == 6  # paid in advance: recorded, not charged again
    assert all(e.prepaid == "training" for e in acct.ledger[1:]) and schedule.left == (("step", 995),)
    assert "paid when the schedule was declared" in acct.ledger[1].rule


def test_a_dominated_step_is_accepted():
    acct = dp.Accountant(dp.ApproxDP(10.0, 1e-5), relation=dp.AddRemoveOne())
    schedule = training(acct, steps=2)
    schedule.run(dp.Graph(subsampled(sigma=2.0, q=0.005), relation=dp.AddRemoveOne()), np.zeros(4), name="step")
    schedule.spend("step", _subsampled_plan(sigma=1.5))
    assert schedule.left == ()
    with pytest.raises(dp.PrivacyError, match="has run all its declared steps"):
        schedule.spend("step", _subsampled_plan())


def _subsampled_plan(sigma=1.0, q=0.01):
    return dp.Graph(subsampled(sigma, q), relation=dp.AddRemoveOne()).plan()


@pytest.mark.parametrize("departure, why", [
    (lambda: _subsampled_plan(sigma=0.9), "noise multiplier"),
    (lambda: _subsampled_plan(q=0.02), "sampling rate"),
    (lambda: dp.Graph(dp.subsample(PoissonSample(0.01), dp.release(
        "g", TextbookGaussian.from_sigma(1.0, sensitivity=2.0), total)), relation=dp.AddRemoveOne()).plan(),
     "noise multiplier"),
    (lambda: dp.Graph(dp.subsample(PoissonSample(0.01), dp.release("g", TextbookLaplace(1.0), total)),
                      relation=dp.AddRemoveOne()).plan(), "LaplaceDpEvent"),
])
def test_a_departure_from_the_declared_step_is_refused_before_it_runs(departure, why):
    acct = dp.Accountant(dp.ApproxDP(10.0, 1e-5), relation=dp.AddRemoveOne())
    schedule = training(acct, steps=3)
    with pytest.raises(dp.PrivacyError, match=f"departs from declared step 'step' \\(1 of 3\\).*{why}"):
        schedule.spend("step", departure())
    with pytest.raises(dp.PrivacyError, match="not the next step.*declared step 'step'"):
        schedule.spend("other", _subsampled_plan())
    assert len(acct.ledger) == 1 and schedule.left == (("step", 3),)


def test_declared_guarantees_are_dominated_by_weaker_ones_only():
    acct = dp.Accountant(dp.ApproxDP(5.0, 1e-5), relation=dp.ReplaceOne())
    schedule = acct.declare("queries", [("count", dp.PureDP(0.5), 2), ("mean", Gaussian.from_sigma(5.0))])
    schedule.spend("count", Laplace(0.4))  # any 0.4-DP step is within a declared 0.5-DP one
    with pytest.raises(dp.PrivacyError, match="weaker than the declared"):
        schedule.spend("count", Laplace(0.6))
    schedule.spend("count", dp.PureDP(0.5))
    with pytest.raises(dp.PrivacyError, match="Δ/σ exceeds"):
        schedule.spend("mean", Gaussian.from_sigma(4.0))
    schedule.spend("mean", Gaussian.from_sigma(6.0))
    assert acct.spent.epsilon == acct.ledger[0].guarantee.epsilon


def test_a_schedule_goes_through_the_sessions_filter():
    acct = dp.Accountant(dp.ApproxDP(4.887, 1e-6), "gdp", relation=dp.ReplaceOne())
    acct.declare("gaussians", [("g", TextbookGaussian.from_sigma(10.0), 100)])
    assert acct.spent.amounts == pytest.approx((1.0,), abs=1e-12)
    with pytest.raises(dp.BudgetExceeded):
        acct.spend("one more", TextbookGaussian.from_sigma(10.0))
    with pytest.raises(dp.PrivacyError, match="'gdp' filter"):
        acct.declare("laplace", [("l", Laplace(0.01))])


def test_bad_declarations_are_refused_before_any_charge():
    acct = dp.Accountant(dp.ApproxDP(5.0, 1e-5), relation=dp.ReplaceOne())
    for steps, error in [([], ValueError), ([("x",)], ValueError), ([("", Laplace(1.0))], ValueError),
                         ([("x", Laplace(1.0), 0)], ValueError), ([("x", "laplace")], TypeError),
                         ([("x", dp.ApproxDP(0.1, 0.5), 3)], ValueError), ("steps", TypeError), (7, TypeError)]:
        with pytest.raises(error):
            acct.declare("bad", steps)
    assert len(acct.ledger) == 0


def test_a_durable_schedule_survives_a_restart(tmp_path):
    path = tmp_path / "schedule.sqlite"
    acct = dp.Accountant.open(path, dp.ApproxDP(10.0, 1e-5), relation=dp.AddRemoveOne())
    schedule = training(acct, steps=10)
    schedule.spend("step", _subsampled_plan())
    spent = acct.spent
    acct.close()
    again = dp.Accountant.open(path, dp.ApproxDP(10.0, 1e-5))
    assert again.spent == spent and [e.prepaid for e in again.ledger] == [None, "training"]
