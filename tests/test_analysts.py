"""Who spent what: each charge records its analyst (SQLite: a declared name, default the OS user;
PostgreSQL: the database role, tests/test_privileges.py), `ledger show --by` sums per analyst, and
a quota inside the budget refuses an analyst's charge in the same transaction, recording nothing."""

import getpass
import json
from fractions import Fraction

import pytest

import dpledger as dp
from dpledger.accountant.book import add
from dpledger.accountant.filters import RenyiFilter
from dpledger.cli import main

BUDGET = dp.PureDP(1.0)


def _open(ledger, analyst=None):
    return dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne(), analyst=analyst)


def test_a_file_records_the_declared_analyst_or_the_os_user(tmp_path):
    path = tmp_path / "l.sqlite"
    _open(path, "alice").spend("a", dp.PureDP(0.25))
    _open(path).spend("b", dp.PureDP(0.5))
    assert [(e.name, e.analyst) for e in dp.Accountant.inspect(path).ledger] == [("a", "alice"),
                                                                                   ("b", getpass.getuser())]
    with pytest.raises(ValueError, match="analyst must be a non-empty"):
        _open(path, " ")


def test_no_os_user_name_is_refused_naming_the_fix(tmp_path, monkeypatch):
    def nobody():
        raise OSError("no user name")

    monkeypatch.setattr(getpass, "getuser", nobody)
    with pytest.raises(ValueError, match="analyst=NAME"):
        _open(tmp_path / "l.sqlite")
    _open(tmp_path / "l.sqlite", "alice").spend("a", dp.PureDP(0.25))


def test_ledger_show_by_analyst_sums_in_the_filters_currency(tmp_path, capsys):
    path = str(tmp_path / "l.sqlite")
    for analyst, epsilon in (("alice", 0.25), ("bob", 0.125), ("alice", 0.5)):
        _open(path, analyst).spend(f"{analyst}-{epsilon}", dp.PureDP(epsilon))
    by = dp.Accountant.inspect(path).spent_by("analyst")
    assert {name: usage.epsilon for name, usage in by.items()} == {"alice": 0.75, "bob": 0.125}
    assert main(["ledger", "show", path, "--by", "analyst", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(g["analyst"], g["spent"]["amounts"]) for g in shown["groups"]] == [("alice", [0.75, 0.0]),
                                                                                ("bob", [0.125, 0.0])]
    assert main(["ledger", "show", path, "--by", "analyst"]) == 0
    assert "alice" in capsys.readouterr().out
    assert main(["ledger", "show", path, "--by", "block"]) == 0  # no entry names a block
    assert "names a block" in capsys.readouterr().out


def test_an_entry_counts_in_each_block_it_names(tmp_path):
    acct = dp.Accountant.open(tmp_path / "blocks.sqlite", dp.PureDP(1.0), blocks=("north", "south"), analyst="alice")
    acct.spend("both", dp.PureDP(0.25), blocks=["north", "south"])
    acct.spend("one", dp.PureDP(0.5), blocks=["north"])
    assert {b: u.epsilon for b, u in acct.spent_by("block").items()} == {"north": 0.75, "south": 0.25}
    assert {a: u.epsilon for a, u in acct.spent_by("analyst").items()} == {"alice": 0.75}


def test_a_charge_past_the_analysts_quota_is_refused_and_records_nothing(ledger):
    owner = _open(ledger)
    owner.spend("first", dp.PureDP(0.25))
    analyst = owner.analyst
    assert owner.ledger[0].analyst == analyst
    owner.set_quota(analyst, dp.PureDP(0.5))
    owner.spend("second", dp.PureDP(0.25))  # exactly the quota
    with pytest.raises(dp.BudgetExceeded, match=f"quota 0.5-DP of {analyst}.*Nothing was charged") as refusal:
        _open(ledger).spend("third", dp.PureDP(0.125))
    assert "\n" not in str(refusal.value)
    read = dp.Accountant.inspect(ledger)
    assert [e.name for e in read.ledger] == ["first", "second"] and read.quotas == {analyst: dp.PureDP(0.5)}


def test_a_schedule_counts_against_its_analysts_quota_once(ledger):
    owner = _open(ledger)
    analyst = owner.analyst  # the database role on PostgreSQL
    owner.set_quota(analyst, dp.PureDP(0.5))
    schedule = owner.declare("two", [("step", dp.PureDP(0.2), 2)])
    schedule.spend("step", dp.PureDP(0.2))
    schedule.spend("step", dp.PureDP(0.2))  # prepaid: nothing more against the quota
    with pytest.raises(dp.BudgetExceeded, match="quota"):
        owner.spend("more", dp.PureDP(0.2))
    read = dp.Accountant.inspect(ledger)
    assert len(read.ledger) == 3 and read.spent_by("analyst")[analyst].epsilon == pytest.approx(0.4)


def test_a_quota_stays_within_the_budget_and_may_be_lowered_below_what_was_spent(tmp_path, capsys):
    path = str(tmp_path / "l.sqlite")
    alice = _open(path, "alice")
    alice.spend("a", dp.PureDP(0.5))
    assert main(["ledger", "quota", path, "alice", "--epsilon", "2"]) == 2
    assert "exceeds the ledger's budget" in capsys.readouterr().err
    assert main(["ledger", "quota", path, "alice", "--epsilon", "0.25"]) == 0  # below what she spent
    with pytest.raises(dp.BudgetExceeded, match="quota 0.25-DP of alice"):
        alice.spend("b", dp.PureDP(1e-9))
    _open(path, "bob").spend("c", dp.PureDP(0.25))  # others are held by the budget alone
    assert {g: u.epsilon for g, u in dp.Accountant.inspect(path).spent_by("analyst").items()} == {"alice": 0.5,
                                                                                                   "bob": 0.25}
    with pytest.raises(ValueError, match="durable ledger"):
        dp.Accountant(BUDGET).set_quota("alice", dp.PureDP(0.1))


def test_a_quota_under_the_renyi_filter_is_a_renyi_budget(tmp_path):
    from dpledger.mechanisms import Gaussian

    step, quota = Gaussian.from_sigma(10.0), dp.ApproxDP(2.0, 1e-6)
    acct = dp.Accountant.open(tmp_path / "l.sqlite", dp.ApproxDP(4.0, 1e-6), "rdp", relation=dp.ReplaceOne(),
                              analyst="alice")
    acct.set_quota("alice", quota)
    share, price = RenyiFilter(quota, acct.filter.orders), acct.filter.price(step.guarantee(), step.dp_event())
    admitted, total = 0, share.zero()
    while share.fits(total := add(total, price)):
        admitted += 1
    for i in range(admitted):
        acct.spend(f"q{i}", step)
    with pytest.raises(dp.BudgetExceeded, match="quota"):
        acct.spend("over", step)
    assert admitted > 1 and acct.filter.fits(add(acct._total, price))  # the quota, not the budget, refused it


def test_a_total_past_the_largest_double_fits_no_order_and_does_not_overflow():
    rule = RenyiFilter(dp.ApproxDP(1.0, 1e-6), [2.0, 32.0])
    huge = Fraction(10) ** 400
    assert rule.fits((huge, Fraction(0))) and not rule.fits((huge, huge))
