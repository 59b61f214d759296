"""The three privacy filters of an interactive session: each admits exactly what its theorem
allows, refuses what it cannot price (naming itself), and reports spent and remaining in its own
currency, never as the session's guarantee."""

import math

import dp_accounting
import numpy as np
import pytest

import dpledger as dp
from dpledger.privacy import gdp, rdp
from dpledger.mechanisms import Gaussian, Laplace, PoissonSample, TextbookGaussian, TextbookLaplace


def session(budget, rule, **kwargs):
    return dp.Accountant(budget, rule, relation=dp.AddRemoveOne(), **kwargs)


def subsampled_gaussian(q=0.01, sigma=1.0):
    """One Poisson-subsampled Gaussian step (DP-SGD's), as a graph."""
    step = dp.subsample(PoissonSample(q), dp.release("g", TextbookGaussian.from_sigma(sigma), lambda x: 0.0))
    return dp.Graph(step, relation=dp.AddRemoveOne())


# -- the Gaussian DP filter ---------------------------------------------------------------------
def test_a_gdp_session_admits_exactly_the_gaussian_steps_its_mu_allows():
    """Σμ_i² <= μ²: (4.887, 1e-6) is μ = 1.00008-GDP, so 100 steps of σ = 10 (μ_i = 0.1) fit and the
    101st does not (Smith & Thakurta 2022)."""
    acct = session(dp.ApproxDP(4.887, 1e-6), "gdp")
    assert 1.0 < acct.filter.mu < 1.0001
    for i in range(100):
        acct.spend(f"s{i}", TextbookGaussian.from_sigma(10.0))
    with pytest.raises(dp.BudgetExceeded, match="'gdp' filter"):
        acct.spend("s100", TextbookGaussian.from_sigma(10.0))
    assert len(acct.ledger) == 100 and acct.spent.amounts == pytest.approx((1.0,), abs=1e-12)
    assert acct.spent.epsilon == pytest.approx(4.887, abs=1e-3)  # 1-GDP at δ = 1e-6, for reading


def test_gdp_reading_matches_dp_accounting_for_gaussians():
    """For continuous Gaussians GDP is exact: the ε shown equals dp-accounting's PLD of the same steps."""
    acct = session(dp.ApproxDP(10.0, 1e-6), "gdp")
    for i in range(50):
        acct.spend(f"s{i}", TextbookGaussian.from_sigma(7.0))
    reference = dp_accounting.pld.PLDAccountant()
    reference.compose(dp_accounting.GaussianDpEvent(7.0), 50)
    assert acct.spent.epsilon == pytest.approx(reference.get_epsilon(1e-6), rel=1e-3)


@pytest.mark.parametrize("step", [Laplace(0.1), TextbookLaplace(0.1), Gaussian.from_sigma(10.0), dp.ApproxDP(0.1, 1e-9)],
                         ids=["lattice Laplace", "Laplace", "discrete Gaussian (zCDP)", "(ε, δ)"])
def test_the_gdp_filter_refuses_what_is_not_a_continuous_gaussian(step):
    acct = session(dp.ApproxDP(4.887, 1e-6), "gdp")
    with pytest.raises(dp.PrivacyError, match="'gdp' filter cannot account.*Nothing was charged"):
        acct.spend("x", step)
    with pytest.raises(dp.PrivacyError, match="'gdp' filter"):
        acct.run(subsampled_gaussian(), np.zeros(10))  # subsampled: not exactly GDP
    assert len(acct.ledger) == 0 and acct.spent.amounts == (0.0,)


def test_budget_mu_is_the_largest_mu_within_the_budget():
    mu = gdp.budget_mu(4.887, 1e-6)
    assert gdp.delta(mu, 4.887) <= 1e-6 < gdp.delta(mu * (1 + 1e-6), 4.887)
    assert gdp.epsilon(mu, 1e-6) <= 4.887 * (1 + 1e-8)


# -- the Rényi filter -------------------------------------------------------------------------
def test_renyi_filter_limits_split_delta_over_orders_fixed_in_advance():
    orders = (2.0, 8.0, 32.0)
    acct = session(dp.ApproxDP(3.0, 1e-5), "rdp", orders=orders)
    assert acct.filter.orders == orders
    for alpha, limit in zip(orders, acct.filter.limits):
        assert float(limit) == pytest.approx(3.0 - math.log(3 / 1e-5) / (alpha - 1), rel=1e-9)
        assert float(limit) <= 3.0 - math.log(3 / 1e-5) / (alpha - 1)  # rounded down


def test_renyi_filter_admits_while_some_order_is_within_its_budget():
    """Each step's curve adds to every order; a step is admitted iff at least one order stays within
    B_j. The count admitted is what that rule gives by hand."""
    orders = rdp.FILTER_ORDERS
    acct = session(dp.ApproxDP(4.0, 1e-5), "rdp")
    step = subsampled_gaussian()
    admitted = 0
    with pytest.raises(dp.BudgetExceeded, match="'rdp' filter"):
        for _ in range(100_000):
            acct.run(step, np.zeros(20))
            admitted += 1
    curve = rdp.curve(step.plan().event, orders)
    limits = [float(b) for b in acct.filter.limits]

    def fits(k):
        return any(k * c <= b for c, b in zip(curve, limits))

    assert fits(admitted) and not fits(admitted + 1) and admitted > 1000


def test_renyi_filter_is_never_tighter_than_fixed_rdp_accounting():
    """The filter's conversion (Ville, δ split over orders) can only be more conservative than
    dp-accounting's for the same steps fixed in advance."""
    acct = session(dp.ApproxDP(8.0, 1e-5), "rdp")
    for i in range(200):
        acct.run(subsampled_gaussian(), np.zeros(20), name=f"step{i}")
    fixed = dp_accounting.rdp.RdpAccountant(orders=list(rdp.FILTER_ORDERS))
    fixed.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 200)
    assert acct.spent.epsilon >= fixed.get_epsilon(1e-5)


def test_renyi_filter_prices_pure_and_zcdp_steps_and_refuses_approximate_ones():
    acct = session(dp.ApproxDP(5.0, 1e-6), "rdp")
    acct.spend("pure", Laplace(0.5))  # ε-DP ⇒ ε(α) = min(ε, αε²/2)
    acct.spend("zcdp", Gaussian.from_sigma(10.0))  # ρ-zCDP ⇒ ε(α) = αρ
    alpha = np.asarray(acct.filter.orders)
    rho = (1 + 1 / 1024) ** 2 / 200
    assert acct.spent.amounts == pytest.approx(tuple(np.minimum(0.5, alpha * 0.125) + alpha * rho), rel=1e-8)
    with pytest.raises(dp.PrivacyError, match="'rdp' filter cannot account.*no Rényi curve"):
        acct.spend("approx", dp.ApproxDP(0.1, 1e-9))
    with pytest.raises(dp.PrivacyError, match="'rdp' filter"):
        acct.spend("truncated", dp.mechanisms.TruncatedLaplace(0.5, 1e-9))
    assert len(acct.ledger) == 2


def test_renyi_filter_needs_approximate_budget_and_sane_orders():
    for rule in ("rdp", "zcdp", "gdp"):
        with pytest.raises(ValueError, match="δ > 0"):
            session(dp.PureDP(1.0), rule)
    for bad in ([1.0], [float("nan")], [], "abc", [2.0, "x"], 3.0):
        with pytest.raises(ValueError, match="orders"):
            session(dp.ApproxDP(1.0, 1e-6), "rdp", orders=bad)
    with pytest.raises(ValueError, match="positive budget"):
        session(dp.ApproxDP(0.01, 1e-12), "rdp", orders=[1.5])


def test_ten_thousand_interactive_subsampled_steps_under_the_renyi_filter():
    acct = session(dp.ApproxDP(50.0, 1e-5), "rdp")
    step = subsampled_gaussian(sigma=2.0)
    for i in range(10_000):
        acct.run(step, np.zeros(4), name=f"s{i}")
    assert len(acct.ledger) == 10_000 and acct.spent.epsilon < 50.0


# -- every filter ----------------------------------------------------------------------------
@pytest.mark.parametrize("rule", ["basic", "gdp", "zcdp", "rdp"])
def test_spent_is_bookkeeping_not_a_guarantee(rule):
    acct = session(dp.ApproxDP(4.887, 1e-6), rule)
    acct.spend("g", TextbookGaussian.from_sigma(10.0))
    spent, left = acct.spent, acct.remaining
    assert not isinstance(spent, (dp.PureDP, dp.ApproxDP)) and spent.filter == rule
    assert acct.guarantee == dp.ApproxDP(4.887, 1e-6)  # what the session promises, stopped now or later
    assert all(a >= 0 for a in left.amounts)
    assert ("for reading" in str(spent)) == (rule != "basic")  # ε beside another currency is only a reading
    assert acct.to_dict()["spent"] == spent.to_dict()


def test_from_sigma_keeps_sigma_and_states_a_valid_epsilon():
    lattice, textbook = Gaussian.from_sigma(10.0, sensitivity=2.0), TextbookGaussian.from_sigma(10.0, sensitivity=2.0)
    assert lattice.sigma == textbook.sigma == 10.0
    assert Gaussian(lattice.epsilon, 1e-6, 2.0).sigma <= 10.0  # its ε needs no more noise than σ
    assert dp.mechanisms.analytic_delta(10.0, textbook.epsilon, 2.0) <= 1e-6
    assert textbook.dp_event() == dp_accounting.GaussianDpEvent(5.0)
    assert dp.privacy.rdp.rho(lattice.dp_event()) <= (2.0 * (1 + 1 / 1024) / 10.0) ** 2 / 2 * (1 + 2e-9)
    for bad in (-1.0, 0.0, float("nan"), float("inf")):
        for cls in (Gaussian, TextbookGaussian):
            with pytest.raises(ValueError, match="sigma"):
                cls.from_sigma(bad)
    for bad in (0.0, 1.0, -1e-6, float("nan")):
        for cls in (Gaussian, TextbookGaussian):
            with pytest.raises(ValueError, match="delta"):
                cls.from_sigma(10.0, delta=bad)


# -- the zCDP filter --------------------------------------------------------------------------
def test_a_zcdp_session_admits_the_float_safe_gaussians_its_rho_allows():
    """Σρ_i <= ρ: the float-safe Gaussian is ρ-zCDP with ρ = (1 + 1/1024)²/(2σ²) for Δ = 1."""
    acct = session(dp.ApproxDP(4.887, 1e-6), "zcdp")
    rho = (1 + 1 / 1024) ** 2 / 200
    expected = math.floor(acct.filter.rho / (rho * (1 + 1e-9)))
    for i in range(expected):
        acct.spend(f"s{i}", Gaussian.from_sigma(10.0))
    with pytest.raises(dp.BudgetExceeded, match="'zcdp' filter"):
        acct.spend("one more", Gaussian.from_sigma(10.0))
    assert expected == 88 and rdp.zcdp_epsilon(acct.filter.rho, 1e-6) <= 4.887
    assert rdp.zcdp_epsilon(acct.filter.rho * (1 + 1e-6), 1e-6) > 4.887  # the largest ρ that fits
    acct.spend("pure", Laplace(1e-3))  # ε-DP is ε²/2-zCDP
    with pytest.raises(dp.PrivacyError, match="'zcdp' filter cannot price graph 'subsample'.*would: 'basic', 'rdp'"):
        acct.run(subsampled_gaussian(), np.zeros(10))


def test_a_one_order_renyi_filter_converts_like_a_mechanism_fixed_in_advance():
    """One order frozen at creation makes the stopped session (α, B)-RDP (Feldman & Zrnic 2021,
    Thm 3.1), so the sharper conversion applies: the session's ε is dp-accounting's own figure
    for the same curve (2.101 on 1000 Poisson-subsampled Gaussian steps, not Markov's 2.541)."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_accountant

    step = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))
    reference = rdp_accountant.RdpAccountant(orders=[7.8])
    reference.compose(dp_accounting.SelfComposedDpEvent(step, 1000))
    expected = reference.get_epsilon(1e-5)
    one = dp.Accountant(dp.ApproxDP(10.0, 1e-5), filter="rdp", orders=[7.8]).filter
    total = tuple(1000 * p for p in one.price(dp.PureDP(1.0), step))
    assert expected <= one.epsilon(total) <= expected * (1 + 1e-6) and abs(expected - 2.1014) < 1e-4
    markov = dp.Accountant(dp.ApproxDP(10.0, 1e-5), filter="rdp", orders=[7.8, 8.0]).filter
    assert markov.epsilon(tuple(1000 * p for p in markov.price(dp.PureDP(1.0), step))) > 2.5  # δ split, Markov
    for alpha, budget in ((1.5, (30.0, 1e-6)), (7.8, (2.0, 1e-5)), (64.0, (8.0, 1e-9)), (1.01, (1500.0, 1e-5))):
        limit = float(dp.Accountant(dp.ApproxDP(*budget), filter="rdp", orders=[alpha]).filter.limits[0])
        converted = (rdp_accountant.compute_epsilon([alpha], [limit], budget[1])[0] if alpha > 1.01
                     else limit + math.log(1 / budget[1]) / (alpha - 1))  # Markov's, where dp-accounting's is ∞
        assert converted <= budget[0], (alpha, budget, limit, converted)  # a session at its limit keeps the budget


def test_the_order_for_a_planned_workload_is_suggested_and_orders_are_refused_unless_distinct():
    """Choosing the one order is easy: from the planned steps, before any data."""
    from dpledger.accountant import suggest_order
    from dpledger.mechanisms import PoissonSample, TextbookGaussian

    step = dp.Graph(dp.subsample(PoissonSample(0.01), dp.release("s", TextbookGaussian.from_sigma(1.0),
                                                                  lambda x: float(len(x)))), relation=dp.AddRemoveOne())
    order = suggest_order(step, 1e-5, times=1000)
    assert 5 < order < 12
    with pytest.raises(ValueError, match="distinct"):
        dp.Accountant(dp.ApproxDP(2.0, 1e-5), filter="rdp", orders=[8.0, 8.0])
    with pytest.raises(ValueError, match="finite and > 1"):
        dp.Accountant(dp.ApproxDP(2.0, 1e-5), filter="rdp", orders=[1.0, 8.0])
    with pytest.raises(dp.PrivacyError, match="no Rényi curve"):
        suggest_order(dp.ApproxDP(1.0, 1e-6), 1e-5)
    tiny = suggest_order(dp.PureDP(1e-9), 1e-5)  # a curve of ~0 at every order: the cheapest conversion
    assert dp.Accountant(dp.ApproxDP(1.0, 1e-5), filter="rdp", orders=[tiny]).filter.limits[0] > 0


@pytest.mark.parametrize("rule", ["zcdp", "rdp", "gdp"])
def test_a_halting_graph_under_a_tight_filter_is_refused_at_plan_time_naming_its_test(rule):
    """The refusal used to call the whole graph "a step", never name the halting test, and come
    only at run time."""
    from dpledger.mechanisms import Gaussian, TruncatedLaplace

    graph = dp.Graph(dp.sequence(
        dp.halt_if("enough", TruncatedLaplace(0.25, 1e-6), lambda c: float(np.sum(c >= 5)), lambda v: v < 100),
        dp.conditional("enough", dp.release("sum", Gaussian(0.5, 1e-6), np.sum)), name="mean"), relation=dp.ReplaceOne())
    acct = dp.Accountant(dp.ApproxDP(2.0, 1e-5), filter=rule, relation=dp.ReplaceOne())
    with pytest.raises(dp.PrivacyError, match=r"cannot price graph 'mean': its halting test 'mean/enough' "
                                              r"\(TruncatedLaplace, \(0.25, 1e-06\)-DP\).*would: 'basic'"):
        acct.plan(graph)
    assert len(acct.ledger) == 0
    assert dp.Accountant(dp.ApproxDP(2.0, 1e-5), relation=dp.ReplaceOne()).plan(graph).guarantee == dp.ApproxDP(0.75, 2e-6)


@pytest.mark.parametrize("rule", ["zcdp", "rdp", "gdp"])
def test_a_subsampled_step_without_a_priced_loss_is_refused_at_plan_time_naming_it(rule):
    from dpledger.mechanisms import PoissonSample, TruncatedLaplace

    graph = dp.Graph(dp.subsample(PoissonSample(0.01), dp.release("s", TruncatedLaplace(1.0, 1e-6),
                                                                  lambda x: float(np.clip(x, 0, 1).sum()))),
                     relation=dp.AddRemoveOne())
    acct = dp.Accountant(dp.ApproxDP(2.0, 1e-5), filter=rule, relation=dp.AddRemoveOne())
    with pytest.raises(dp.PrivacyError, match=r"its subsampled step 'subsample' \(PoissonSample of TruncatedLaplace\) enters "
                                              r"as the amplified .*would: 'basic'"):
        acct.plan(graph)
    basic = dp.Accountant(dp.ApproxDP(2.0, 1e-5), relation=dp.AddRemoveOne())
    assert basic.plan(graph).guarantee.epsilon < 0.02  # under basic it keeps its amplified (ε, δ)
