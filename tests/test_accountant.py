"""The accountant under the basic filter: charges before running, refuses overspending with the
ledger unchanged, keeps running totals, never mixes relations, thread-safe. (The filters and their
theorems: tests/test_filters.py; declared schedules: tests/test_schedule.py.)"""

import json
import threading

import pytest

import dpledger as dp
from dpledger.mechanisms import TextbookLaplace as Laplace


def accountant(eps=1.0, delta=1e-5, rule="basic"):
    return dp.Accountant(dp.ApproxDP(eps, delta), rule, relation=dp.ReplaceOne())


def test_spend_records_and_totals():
    acct = accountant()
    entry = acct.spend("count", Laplace(0.25))
    assert (entry.name, entry.mechanism) == ("count", "TextbookLaplace")
    assert entry.rule.startswith("Laplace mechanism (Lemma A.8)")
    assert entry.params["scale"] == 4.0 and entry.relation == "replace-one"
    acct.spend("declared", dp.ApproxDP(0.5, 1e-6))
    assert (acct.spent.filter, acct.spent.epsilon, acct.spent.delta) == ("basic", 0.75, 1e-6)
    assert (acct.remaining.epsilon, acct.remaining.delta) == (0.25, 9e-6)
    assert acct.guarantee == dp.ApproxDP(1.0, 1e-5)  # the session's guarantee is its budget
    assert [e.name for e in acct.ledger] == ["count", "declared"]
    assert [e.charged for e in acct.ledger] == ["ε=0.25, δ=0", "ε=0.5, δ=1e-06"]


def test_overspend_is_refused_and_nothing_is_recorded():
    acct = accountant()
    acct.spend("a", Laplace(0.75))
    before = acct.ledger.entries
    with pytest.raises(dp.BudgetExceeded, match="Nothing was charged"):
        acct.spend("b", Laplace(0.5))
    with pytest.raises(dp.BudgetExceeded):
        acct.spend("c", dp.ApproxDP(0.1, 2e-5))  # fits in ε, not in δ
    assert acct.ledger.entries == before and (acct.spent.epsilon, acct.spent.delta) == (0.75, 0)
    acct.spend("d", Laplace(0.25))  # exactly the rest still fits
    assert acct.spent.epsilon == 1.0


def test_ten_tenths_fit_a_budget_of_one_exactly():
    acct = accountant()
    for i in range(10):
        acct.spend(f"q{i}", Laplace(0.1))
    with pytest.raises(dp.BudgetExceeded):
        acct.spend("one more", Laplace(1e-9))


def test_bad_input_never_charges():
    acct = accountant()
    for bad in [(None,), (1.0,), ("x", object())]:
        with pytest.raises((TypeError, ValueError)):
            acct.spend(*bad) if len(bad) == 2 else acct.spend("x", *bad)
    with pytest.raises(ValueError, match="name"):
        acct.spend("", Laplace(0.1))
    assert len(acct.ledger) == 0
    with pytest.raises(ValueError, match="filter must be one of"):
        dp.Accountant(dp.PureDP(1), "pld")  # PLD composition is not a filter
    with pytest.raises(ValueError, match="orders"):
        dp.Accountant(dp.PureDP(1), "basic", orders=[2.0])
    with pytest.raises(TypeError, match="budget"):
        dp.Accountant((1.0, 0.0))


def test_relations_are_not_mixed():
    acct = dp.Accountant(dp.PureDP(2))
    with pytest.raises(dp.PrivacyError, match="relation"):
        acct.spend("unspecified", Laplace(0.1))
    acct.spend("first", Laplace(0.1), relation=dp.EdgeAdjacency())
    acct.spend("inherits", Laplace(0.1))
    with pytest.raises(dp.PrivacyError, match="edge-adjacency"):
        acct.spend("other", Laplace(0.1), relation=dp.ReplaceOne())
    assert [e.relation for e in acct.ledger] == ["edge-adjacency"] * 2


def test_concurrent_spends_never_overspend():
    acct = dp.Accountant(dp.PureDP(100 * 0.01), relation=dp.ReplaceOne())
    refused = []

    def worker(t):
        for i in range(40):
            try:
                acct.spend(f"t{t}-{i}", Laplace(0.01))
            except dp.BudgetExceeded:
                refused.append(1)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(acct.ledger) == 100 and len(refused) == 8 * 40 - 100
    assert acct.spent.epsilon <= 1.0


def test_json_export_round_trips():
    acct = accountant()
    acct.spend("count", Laplace(0.25))
    data = json.loads(acct.to_json())
    assert data["budget"] == {"type": "ApproxDP", "epsilon": 1.0, "delta": 1e-5} and data["filter"] == "basic"
    assert data["spent"]["epsilon"] == 0.25 and data["remaining"]["epsilon"] == 0.75
    assert data["entries"][0]["params"]["scale"] == 4.0
    restored = dp.LedgerEntry.from_dict(data["entries"][0])
    assert restored == acct.ledger[0]
    assert "Laplace mechanism (Lemma A.8)" in acct.ledger.render(width=400)  # one line when there is room
    html = acct.ledger._repr_html_()  # Jupyter rendering
    assert html.lstrip().startswith("<table") and "Lemma A.8" in html


def test_an_interactive_session_of_laplace_steps_is_charged_the_basic_sum():
    """Review finding: the old "pld" mode charged ten interactive Laplace(0.1) spends 0.99898, a
    PLD composition of adaptively chosen steps, which no filter theorem covers. Every session is
    now a filter; for Laplace steps under the basic filter the charge is the sum."""
    acct = accountant(eps=0.999, delta=1e-6)
    for i in range(9):
        acct.spend(f"q{i}", Laplace(0.1))
    with pytest.raises(dp.BudgetExceeded, match="'basic' filter"):
        acct.spend("q9", Laplace(0.1))
    assert len(acct.ledger) == 9 and acct.spent.epsilon == pytest.approx(0.9)


def test_charges_keep_running_totals_and_never_reread_the_ledger():
    """O(1) per charge: the totals are kept, not re-summed from the entries."""
    acct = dp.Accountant(dp.PureDP(1e4), relation=dp.ReplaceOne())

    def no_rereading():
        raise AssertionError("a charge re-read the ledger")

    acct._store.entries = no_rereading
    for i in range(2000):
        acct.spend(f"q{i}", Laplace(0.1))
    assert acct.spent.epsilon == pytest.approx(200.0, rel=1e-12)


def test_the_ledger_view_states_filter_spent_and_remaining():
    acct = accountant()
    acct.spend("count", Laplace(0.25))
    text = acct.ledger.render()
    assert "'basic' filter" in text and "spent: Σε = 0.25 of 1" in text and "remaining: Σε = 0.75" in text
    assert "Rogers" in text  # the filter's theorem
