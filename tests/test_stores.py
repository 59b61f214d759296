"""One suite for every durable store: an SQLite file and a PostgreSQL database (a real server,
tests/conftest.py) keep the same budget, filter and relation rules, and several processes
charging one budget never overspend it."""

import json
import pytest

import dpledger as dp
from dpledger.accountant.postgres import init
from dpledger.cli import main
from spending import spend_together

BUDGET = dp.PureDP(1.0)
STEP = dp.PureDP(0.5)


def test_reopening_restores_budget_filter_relation_and_ledger(ledger):
    acct = dp.Accountant.open(ledger, BUDGET, "basic", relation=dp.ReplaceOne())
    acct.spend("a", STEP)
    acct.close()
    again = dp.Accountant.open(ledger)
    assert again.budget == BUDGET and again.filter.name == "basic" and again.relation == dp.ReplaceOne()
    assert [e.name for e in again.ledger] == ["a"] and again.spent.epsilon == 0.5
    again.spend("b", STEP)
    with pytest.raises(dp.BudgetExceeded, match="Nothing was charged"):
        again.spend("c", dp.PureDP(1e-9))
    assert len(dp.Accountant.inspect(ledger).ledger) == 2


def test_exact_totals_ten_tenths_fit_one(ledger):
    acct = dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne())
    for i in range(10):
        acct.spend(f"q{i}", dp.PureDP(0.1))
    assert dp.Accountant.open(ledger).spent.epsilon == pytest.approx(1.0)


def test_another_budget_or_filter_is_refused(ledger):
    budget = dp.ApproxDP(1.0, 1e-6)
    dp.Accountant.open(ledger, budget, relation=dp.ReplaceOne()).close()
    with pytest.raises(ValueError, match="for life"):
        dp.Accountant.open(ledger, dp.ApproxDP(2.0, 1e-6))
    with pytest.raises(ValueError, match="for life"):
        dp.Accountant.open(ledger, budget, "zcdp")


def test_the_first_recorded_charge_fixes_the_relation_for_every_client(ledger):
    early = dp.Accountant.open(ledger, BUDGET)
    other = dp.Accountant.open(ledger, BUDGET)
    with pytest.raises(dp.PrivacyError, match="relation"):
        early.spend("unnamed", STEP)  # no relation anywhere: refused, nothing fixed
    early.spend("x", dp.PureDP(0.1), relation=dp.EdgeAdjacency())
    with pytest.raises(dp.RelationError, match="edge-adjacency"):
        other.spend("y", dp.PureDP(0.1), relation=dp.ReplaceOne())
    with pytest.raises(dp.RelationError, match="edge-adjacency"):
        dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne())
    other.spend("z", dp.PureDP(0.1))
    assert [e.relation for e in dp.Accountant.inspect(ledger).ledger] == ["edge-adjacency"] * 2


def test_a_refused_charge_fixes_no_relation(ledger):
    acct = dp.Accountant.open(ledger, BUDGET)
    with pytest.raises(dp.BudgetExceeded):
        acct.spend("big", dp.PureDP(2.0), relation=dp.EdgeAdjacency())
    assert dp.Accountant.open(ledger).relation is None
    acct.spend("small", STEP, relation=dp.ReplaceOne())
    assert dp.Accountant.inspect(ledger).relation == dp.ReplaceOne()


def test_ledger_show_and_json_read_it_alike(ledger, capsys):
    dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne()).spend("a", STEP)
    assert main(["ledger", "show", ledger, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["relation"] == "replace-one" and [e["name"] for e in shown["entries"]] == ["a"]
    assert main(["ledger", "show", ledger]) == 0
    assert "replace-one" in capsys.readouterr().out


def test_processes_charging_one_budget_record_exactly_what_it_admits(ledger):
    dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne()).close()
    spend_together(ledger, dp.PureDP(1.0), dp.PureDP(1 / 64), 24, 4)  # 96 tries; exactly 64 fit
    read = dp.Accountant.inspect(ledger)
    assert len(read.ledger) == 64 and len({e.name for e in read.ledger}) == 64
    assert read.spent.epsilon == 1.0


# --- PostgreSQL only: no database is made a ledger implicitly ----------------------------------------

def test_an_empty_database_is_refused_until_ledger_init(postgres_url, capsys):
    with pytest.raises(dp.PrivacyError, match="dpledger ledger init"):
        dp.Accountant.open(postgres_url, BUDGET)
    assert main(["ledger", "init", postgres_url]) == 0
    assert main(["ledger", "init", postgres_url]) == 2  # never twice
    assert "already holds" in capsys.readouterr().err
    dp.Accountant.open(postgres_url, BUDGET, relation=dp.ReplaceOne()).spend("a", STEP)


def test_another_schema_version_is_refused_naming_the_fix(postgres_url):
    import psycopg

    init(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(ValueError, match="schema 99.*new ledger"):
        dp.Accountant.open(postgres_url, BUDGET)


def test_an_unreachable_server_is_one_line_naming_the_fix(capsys):
    url = "postgresql://nobody:secret@127.0.0.1:1/none"
    assert main(["run", "mean.clipped", "--input", "x.csv", "--ledger", url]) == 2  # input refused first
    capsys.readouterr()
    with pytest.raises(dp.PrivacyError, match="cannot reach.*check the URL") as refusal:
        dp.Accountant.open(url, BUDGET)
    assert "secret" not in str(refusal.value) and "\n" not in str(refusal.value)


def test_a_wrong_password_is_one_line_naming_the_fix_and_charges_nothing(postgres_url, postgres_role):
    init(postgres_url)
    dp.Accountant.open(postgres_url, BUDGET, relation=dp.ReplaceOne()).close()
    alice = postgres_role("alice")
    assert main(["ledger", "grant", postgres_url, "alice", "--analyst"]) == 0
    wrong = alice.replace(":pw-alice@", ":not-her-secret@", 1)
    with pytest.raises(dp.LedgerError, match="password authentication failed.*check the URL.*credentials.*"
                                             "Nothing was charged") as refusal:
        dp.Accountant.open(wrong, BUDGET).spend("q", STEP)
    assert "not-her-secret" not in str(refusal.value) and "\n" not in str(refusal.value)
    assert len(dp.Accountant.inspect(postgres_url).ledger) == 0
    dp.Accountant.open(alice).spend("q", STEP)  # her own password: the same role charges
    assert [e.analyst for e in dp.Accountant.inspect(postgres_url).ledger] == ["alice"]


def test_a_restarted_server_refuses_charges_while_down_and_the_same_client_charges_after():
    import postgres_servers

    server = postgres_servers.start()  # its own server: the session's keeps serving the other tests
    try:
        url = postgres_servers.database(server, "restarted")
        init(url)
        acct = dp.Accountant.open(url, BUDGET, relation=dp.ReplaceOne())
        idle = dp.Accountant.open(url)  # unused while the server is down
        acct.spend("before", STEP, charge_id="b")
        postgres_servers.stop(server, "fast")  # every client's connection is dropped
        for _ in range(2):
            with pytest.raises(dp.LedgerError, match="Nothing was charged") as refusal:
                acct.spend("down", STEP)
            assert "\n" not in str(refusal.value)
        with pytest.raises(dp.LedgerError, match="ledger database"):
            len(acct.ledger)
        postgres_servers.restart(server)
        assert [e.name for e in idle.ledger] == ["before"]  # the same accountants: their stores connect again
        acct.spend("after", STEP)
        assert acct.spend("before", STEP, charge_id="b").name == "before"  # still known: nothing charged
        assert [e.name for e in dp.Accountant.inspect(url).ledger] == ["before", "after"]
        assert acct.spent.epsilon == 1.0
        with pytest.raises(dp.BudgetExceeded):
            idle.spend("over", STEP)
    finally:
        postgres_servers.discard(server)
