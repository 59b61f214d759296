"""The accountant: charges before running, refuses overspending with the ledger unchanged, PLD
totals equal dp-accounting's own, relations never mixed, thread-safe. (The textbook mechanisms
stand in for any mechanism with a dp-accounting event: composition does not care how noise is
sampled.)"""

import json
import threading

import dp_accounting
import pytest

import dpledger as dp
from dpledger.mechanisms import TextbookGaussian as Gaussian, TextbookLaplace as Laplace


def accountant(eps=1.0, delta=1e-5, mode="basic"):
    return dp.Accountant(dp.ApproxDP(eps, delta), composition=mode, relation=dp.ReplaceOne())


def test_spend_records_and_totals():
    acct = accountant()
    entry = acct.spend("count", Laplace(0.25))
    assert (entry.name, entry.mechanism) == ("count", "TextbookLaplace")
    assert entry.rule.startswith("Laplace mechanism (Lemma A.8)")
    assert entry.params["scale"] == 4.0 and entry.relation == "replace-one"
    acct.spend("declared", dp.ApproxDP(0.5, 1e-6))
    assert acct.spent == dp.ApproxDP(0.75, 1e-6)
    assert acct.remaining == dp.ApproxDP(0.25, 9e-6)
    assert [e.name for e in acct.ledger] == ["count", "declared"]


def test_overspend_is_refused_and_nothing_is_recorded():
    acct = accountant()
    acct.spend("a", Laplace(0.75))
    before = acct.ledger.entries
    with pytest.raises(dp.BudgetExceeded, match="Nothing was charged"):
        acct.spend("b", Laplace(0.5))
    with pytest.raises(dp.BudgetExceeded):
        acct.spend("c", dp.ApproxDP(0.1, 2e-5))  # fits in ε, not in δ
    assert acct.ledger.entries == before and acct.spent == dp.ApproxDP(0.75, 0)
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
    with pytest.raises(ValueError, match="composition"):
        dp.Accountant(dp.PureDP(1), composition="rdp-ish")
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


def _dp_accounting_epsilon(events, delta):
    acc = dp_accounting.pld.PLDAccountant()
    for event in events:
        acc.compose(event)
    return acc.get_epsilon(delta)


def test_pld_total_equals_dp_accounting_and_beats_basic():
    acct = accountant(eps=10.0, delta=1e-6, mode="pld")
    mechs = [Gaussian(0.5, 1e-7, sensitivity=2.0) for _ in range(8)] + [Laplace(0.3, sensitivity=5.0)] * 4
    for i, m in enumerate(mechs):
        acct.spend(f"step{i}", m)
    expected = _dp_accounting_epsilon([m.dp_event() for m in mechs], 1e-6)
    assert acct.spent.epsilon == pytest.approx(expected, rel=1e-9)  # FFT round-off only
    basic = dp.compose(*(m.guarantee() for m in mechs))
    assert acct.spent.epsilon < basic.epsilon and acct.spent.delta == 1e-6


def test_pld_is_never_worse_than_basic():
    acct = accountant(eps=1.0, delta=1e-5, mode="pld")
    acct.spend("pure", Laplace(0.5))  # a single Laplace: PLD discretisation would round up
    assert acct.spent.epsilon <= 0.5
    acct.spend("declared", dp.ApproxDP(0.5, 1e-6))
    assert acct.spent.epsilon <= 1.0


def test_pld_refuses_when_the_tight_total_exceeds():
    acct = accountant(eps=1.0, delta=1e-6, mode="pld")
    with pytest.raises(dp.BudgetExceeded):
        for i in range(100):
            acct.spend(f"g{i}", Gaussian(0.5, 1e-7))
    assert acct.spent.epsilon <= 1.0
    assert _dp_accounting_epsilon([e_m.dp_event() for e_m in [Gaussian(0.5, 1e-7)] * len(acct.ledger)],
                                  1e-6) <= 1.0 + 1e-12


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
    assert data["budget"] == {"type": "ApproxDP", "epsilon": 1.0, "delta": 1e-5}
    assert data["entries"][0]["params"]["scale"] == 4.0
    restored = dp.LedgerEntry.from_dict(data["entries"][0])
    assert restored == acct.ledger[0]
    assert "Laplace mechanism (Lemma A.8)" in acct.ledger.render()
    html = acct.ledger._repr_html_()  # Jupyter rendering
    assert html.lstrip().startswith("<!DOCTYPE html>") and "Lemma A.8" in html
