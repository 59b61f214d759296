"""The durable (SQLite) accountant: restarts, several processes, SIGKILL mid-run."""

import multiprocessing
import os
import signal
import sqlite3
import time

import pytest

import dpledger as dp
from dpledger.mechanisms import Gaussian, Laplace
from spending import entries, spend_together, spender

BUDGET = dp.PureDP(1.0)
STEP = dp.PureDP(0.005)  # exactly 200 steps fit: fsum of 200 × fl(0.005) rounds to 1.0


def test_reopening_restores_budget_and_ledger(tmp_path):
    path = tmp_path / "budget.sqlite"
    first = dp.Accountant.open(path, dp.ApproxDP(1.0, 1e-5), relation=dp.ReplaceOne())
    first.spend("count", Laplace(0.25))
    first.spend("declared", dp.ApproxDP(0.25, 1e-6))
    first.close()
    again = dp.Accountant.open(path, dp.ApproxDP(1.0, 1e-5))
    assert (again.spent.epsilon, again.spent.delta) == (0.5, 1e-6) and again.relation == dp.ReplaceOne()
    assert [e.name for e in again.ledger] == ["count", "declared"]
    assert again.ledger[0].params["scale"] == Laplace(0.25).scale
    with pytest.raises(dp.BudgetExceeded):
        again.spend("too much", Laplace(0.75))
    assert len(again.ledger) == 2


def test_renyi_filter_reprices_events_after_restart(tmp_path):
    path = tmp_path / "rdp.sqlite"
    acct = dp.Accountant.open(path, dp.ApproxDP(5.0, 1e-6), "rdp", relation=dp.ReplaceOne())
    for i in range(5):
        acct.spend(f"g{i}", Gaussian.from_sigma(4.0))
    spent = acct.spent
    acct.close()
    again = dp.Accountant.open(path, dp.ApproxDP(5.0, 1e-6), "rdp")
    assert again.spent == spent and again.filter.orders == acct.filter.orders
    assert spent.amounts[0] > 0  # priced from the stored zCDP events, not from (ε, δ)


def test_changed_budget_mode_or_relation_is_refused(tmp_path):
    path = tmp_path / "b.sqlite"
    dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).spend("a", STEP)
    with pytest.raises(ValueError, match="budget"):
        dp.Accountant.open(path, dp.PureDP(2.0))
    with pytest.raises(ValueError, match="filter"):
        dp.Accountant.open(path, BUDGET, "gdp")
    with pytest.raises(ValueError, match="replace-one"):
        dp.Accountant.open(path, BUDGET, relation=dp.EdgeAdjacency())


def test_relation_fixed_by_one_process_binds_the_others(tmp_path):
    path = tmp_path / "r.sqlite"
    a = dp.Accountant.open(path, BUDGET)
    b = dp.Accountant.open(path, BUDGET)
    a.spend("first", STEP, relation=dp.EdgeAdjacency())
    with pytest.raises(dp.PrivacyError, match="edge-adjacency"):
        b.spend("other", STEP, relation=dp.ReplaceOne())
    b.refresh()  # a refused charge changes nothing; reading the file does
    assert (b.spent.epsilon, b.spent.delta) == (0.005, 0.0) and b.relation == dp.EdgeAdjacency()


def _consistent(path):
    acct = dp.Accountant.open(path, BUDGET)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    entries = acct.ledger.entries
    assert acct.spent.epsilon == pytest.approx(0.005 * len(entries), abs=1e-12) and acct.spent.epsilon <= 1.0
    return entries


def test_processes_sharing_a_file_never_overspend(tmp_path):
    path = tmp_path / "shared.sqlite"
    dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).close()
    spend_together(path, BUDGET, STEP, 60, 6)
    recorded = _consistent(path)
    assert len(recorded) == 200 and len({e.name for e in recorded}) == 200


def test_sigkill_mid_run_loses_nothing_and_corrupts_nothing(tmp_path):
    path = tmp_path / "killed.sqlite"
    dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).close()
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    workers = [context.Process(target=spender, args=(path, BUDGET, STEP, 10**9, ready))
               for _ in range(4)]  # until killed
    for w in workers:
        w.start()
    ready.set()
    deadline = time.monotonic() + 60
    while entries(path) < 50 and time.monotonic() < deadline:
        time.sleep(0.05)  # kill them mid-run, once they are all charging
    for w in workers:
        os.kill(w.pid, signal.SIGKILL)
        w.join(120)
    assert [w.exitcode for w in workers] == [-signal.SIGKILL] * 4
    recorded = _consistent(path)
    assert 0 < len(recorded) <= 200


def test_a_schema_1_file_is_read_under_the_basic_filter_and_never_charged(tmp_path):
    """Files from before filters (composition modes) stay readable; charging them is refused."""
    import json

    path = tmp_path / "old.sqlite"
    entry = dp.LedgerEntry("count", "Laplace", "replace-one", dp.PureDP(0.25), "Laplace mechanism").to_dict()
    del entry["charged"], entry["prepaid"]  # schema 1 had neither
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, document TEXT NOT NULL)")
        db.executemany("INSERT INTO meta VALUES (?, ?)", [
            ("schema", "1"), ("composition", "pld"), ("relation", "replace-one"),
            ("budget", json.dumps({"type": "PureDP", "epsilon": 1.0, "delta": 0.0}))])
        db.execute("INSERT INTO entries (document) VALUES (?)", (json.dumps(entry),))
    old = dp.Accountant.inspect(path)
    assert old.filter.name == "basic" and old.spent.epsilon == 0.25 and len(old.ledger) == 1
    with pytest.raises(ValueError, match="schema 1"):
        dp.Accountant.open(path, dp.PureDP(1.0))
