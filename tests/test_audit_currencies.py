"""Claims audited in their own currency: μ-GDP and ρ-zCDP lower bounds read from the same tests
as the ε bound (audit/bounds.py), and reported whenever the target's plan claims them."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from scipy import stats

import dpledger as dp
from dpledger.audit import audit
from dpledger.audit.bounds import mu_lower_bound, rho_lower_bound
from dpledger.mechanisms import Gaussian, TextbookGaussian


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
def test_mu_bound_is_exact_on_gaussian_threshold_tests_and_never_above(mu):
    """For N(0, 1) against N(μ, 1), every threshold test's exact probabilities give back μ (the
    Gaussian tradeoff curve is made of them), never more; a larger shift is caught."""
    for threshold in np.linspace(-3, 3 + mu, 13):
        p_alternative, p_null = stats.norm.sf(threshold - mu), stats.norm.sf(threshold)
        bound = mu_lower_bound(p_alternative, p_null)
        assert bound <= mu and bound == pytest.approx(mu, rel=1e-6)
        assert mu_lower_bound(stats.norm.sf(threshold - 1.1 * mu), p_null) > mu


@pytest.mark.parametrize("mu", [0.2, 1.0, 2.0])
def test_rho_bound_never_exceeds_the_gaussian_rho(mu):
    """N(μ, 1) against N(0, 1) is μ²/2-zCDP: no event's exact probabilities may certify more."""
    rho = mu * mu / 2
    bounds = [rho_lower_bound(stats.norm.sf(t - mu), stats.norm.sf(t)) for t in np.linspace(-4, 4 + mu, 41)]
    assert max(bounds) <= rho and max(bounds) > 0.3 * rho
    assert rho_lower_bound(0.3, 0.6) == 0.0 and rho_lower_bound(0.0, 0.0) == 0.0


def test_a_gaussian_is_audited_in_mu_and_a_float_safe_one_in_rho():
    textbook = audit(TextbookGaussian(1.0, 1e-5), samples=400_000, confidence=0.9, seed=1, ideal_reals=True)
    mu = textbook.claims["mu"]
    assert mu == pytest.approx(1 / TextbookGaussian(1.0, 1e-5).sigma)
    assert 0.85 * mu < textbook.mu_lower_bound <= mu and not textbook.violation and textbook.rho_lower_bound is None
    assert "μ-GDP with μ = " in str(textbook) and textbook.to_dict()["mu_lower_bound"] == textbook.mu_lower_bound
    lattice = audit(Gaussian.from_sigma(2.0), samples=200_000, confidence=0.9, seed=2)
    assert "rho" in lattice.claims and "mu" not in lattice.claims
    assert 0 < lattice.rho_lower_bound <= lattice.claims["rho"] and not lattice.violation


def test_a_gaussian_with_half_its_noise_is_caught_in_mu():
    """The query's sensitivity is 2, stated as 1: μ doubles. The report names the route."""
    careless = dp.Graph(dp.release("sum", TextbookGaussian.from_sigma(4.0),
                                   lambda x: 2.0 * float(np.clip(x, 0, 1).sum())), relation=dp.ReplaceOne(),
                        domain=dp.Records(n=1))
    report = audit(careless, samples=400_000, confidence=0.99, seed=3, pairs=[(np.zeros(1), np.ones(1))])
    assert "μ" in report.violations and report.violation and report.mu_lower_bound > report.claims["mu"]
    assert "VIOLATED, from pair 0's trade-off test E = {" in str(report)


def test_a_violation_in_mu_alone_is_shown_as_such_on_the_page_and_the_command_line():
    """μ 30% above its claim: the μ route (trade-off tests, ~0.96 μ) catches it, the ε route (~0.7 of
    the true ε at δ = 1e-6) does not, and no view may read as a verdict on ε alone."""
    from rich.console import Console

    from dpledger.audit.command import _print

    careless = dp.Graph(dp.release("sum", TextbookGaussian.from_sigma(4.0),
                                   lambda x: 1.3 * float(np.clip(x, 0, 1).sum())), relation=dp.ReplaceOne(),
                        domain=dp.Records(n=1))
    report = audit(careless, samples=400_000, confidence=0.99, seed=3, pairs=[(np.zeros(1), np.ones(1))],
                   ideal_reals=True)
    assert report.violations == ("μ",), str(report)
    assert str(report).startswith("Privacy audit of graph 'sum' of a claimed (ε=1.061, δ=1e-06) at confidence 0.99: "
                                  "VIOLATION in its own currency (μ: below); in ε, no violation: ε ≥ ")
    assert "μ-GDP with μ = 0.25: certified μ &gt;= " in report.html(with_figure=False)
    console = Console(record=True, width=400)
    _print(attrs.evolve(report, target="careless"), console)
    printed = console.export_text()
    assert "VIOLATION in its own currency (μ)" in printed and "(VIOLATED, from pair 0's trade-off test" in printed


def test_assert_private_takes_statistics_as_audit_does():
    from dpledger.audit import strategies
    from dpledger.mechanisms import Laplace
    from dpledger.testing import assert_private

    pairs = strategies.replace_one_pairs(min_n=2, max_n=2, low=-1.0, high=1.0)
    graph = dp.Graph(dp.release("sum", Laplace(1.0, sensitivity=2.0), lambda x: float(np.clip(x, -1, 1).sum())),
                     relation=dp.ReplaceOne(), domain=dp.Records(n=2))

    def doubled(outputs):
        return 2.0 * np.asarray(outputs, dtype=float).reshape(len(outputs), -1)[:, 0]

    def noticed(outputs):
        raise RuntimeError("the caller's statistic ran")

    assert_private(graph, pairs, statistics=[doubled], samples=10_000, max_examples=5)  # a correct graph passes
    with pytest.raises(RuntimeError, match="the caller.s statistic ran"):  # and the statistics are searched
        assert_private(graph, pairs, statistics=[noticed], samples=10_000, max_examples=5)
    with pytest.raises(TypeError, match="statistics"):
        assert_private(graph, pairs, statistics=[1.0])
