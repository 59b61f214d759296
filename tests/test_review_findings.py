"""An independent review's attempts to spend a budget twice (docs/design.md, "The accountant and the
ledger schema"): each test is one way that worked before its fix. SQLite files and a real
PostgreSQL server (tests/conftest.py)."""

import json
import os
import shutil
from fractions import Fraction

import psycopg
import pytest

import dpledger as dp
from dpledger.accountant.pg_functions import decimal_text
from dpledger.accountant.postgres import init
from dpledger.cli import main

BUDGET = dp.PureDP(1.0)
ENTRY = {"name": "direct", "mechanism": "declared", "relation": "replace-one", "rule": "declared guarantee",
         "guarantee": {"type": "PureDP", "epsilon": 0.75, "delta": 0.0}, "params": {}, "steps": [], "event": None,
         "time": "2026-01-01T00:00:00+00:00", "charged": ""}
PRICE = [decimal_text(Fraction(0.75), up=True), "0"]


def _append(db, entry=ENTRY, price=PRICE):
    return db.execute("SELECT dpledger_append(%s, 'replace-one', %s::text[])", (json.dumps(entry), price)).fetchone()


@pytest.fixture
def owned(postgres_url):
    """An initialised PostgreSQL ledger with a budget of ε = 1 (its owner's URL)."""
    init(postgres_url)
    dp.Accountant.open(postgres_url, BUDGET, relation=dp.ReplaceOne()).close()
    return postgres_url


@pytest.mark.parametrize("isolation", ["REPEATABLE READ", "SERIALIZABLE"])
def test_a_snapshot_older_than_the_lock_charges_nothing(owned, isolation):
    # a client that skips Accountant takes its snapshot first, lets another charge commit, then
    # appends: the lock is free by then, and the database summed the entries of its old snapshot
    with psycopg.connect(owned, autocommit=True) as stale:
        stale.execute(f"BEGIN ISOLATION LEVEL {isolation}")
        stale.execute("SELECT count(*) FROM entries").fetchone()  # the snapshot
        dp.Accountant.open(owned).spend("honest", dp.PureDP(0.75))
        with pytest.raises(psycopg.Error, match="READ COMMITTED.*Nothing was charged") as refusal:
            _append(stale)
        assert refusal.value.sqlstate == "DPL02"
        stale.execute("ROLLBACK")
    assert dp.Accountant.inspect(owned).spent.epsilon == 0.75


def test_a_role_that_may_create_in_the_schema_runs_nothing_as_the_owner(owned, postgres_role):
    # every role may CREATE in `public` before PostgreSQL 15 (and after pg_upgrade from one): an
    # operator or function it makes there must never be what the owner's functions or reads call
    alice = postgres_role("alice")
    assert main(["ledger", "grant", owned, "alice", "--analyst"]) == 0
    dp.Accountant.open(owned).spend("owner", dp.PureDP(0.5))
    with psycopg.connect(owned, autocommit=True) as db:
        db.execute("GRANT CREATE ON SCHEMA public TO alice")
    with psycopg.connect(alice, autocommit=True) as db:
        db.execute("CREATE FUNCTION public.erase(integer, numeric) RETURNS boolean LANGUAGE sql AS "
                   "$$ DELETE FROM public.entries; SELECT true $$")  # run as the owner, it erases history
        db.execute("CREATE OPERATOR public.<= (LEFTARG = integer, RIGHTARG = numeric, FUNCTION = public.erase)")
        db.execute("CREATE FUNCTION public.to_jsonb(public.entries) RETURNS jsonb LANGUAGE sql AS "
                   "$$ SELECT pg_catalog.jsonb_build_object('analyst', 'nobody') $$")  # forges who charged
        _append(db, {**ENTRY, "guarantee": {**ENTRY["guarantee"], "epsilon": 0.125}},
                [decimal_text(Fraction(0.125), up=True), "0"])
        with pytest.raises(psycopg.Error) as refusal:  # a negative price, which the operator would admit
            _append(db, {**ENTRY, "guarantee": {**ENTRY["guarantee"], "epsilon": -0.5}}, ["-0.5", "0"])
        assert refusal.value.sqlstate == "DPL02"
    read = dp.Accountant.inspect(owned)
    assert [(e.name, e.analyst) for e in read.ledger] == [("owner", "postgres"), ("direct", "alice")]
    assert read.spent.epsilon == 0.625


def _charged(path, epsilon):
    accountant = dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne())
    accountant.spend("a step", dp.PureDP(epsilon))
    accountant.close()


def test_two_backups_of_a_lost_ledger_restore_once(tmp_path):
    original = tmp_path / "l.sqlite"
    _charged(original, 0.25)
    assert main(["ledger", "backup", str(original), str(tmp_path / "monday.sqlite")]) == 0
    _charged(original, 0.25)
    assert main(["ledger", "backup", str(original), str(tmp_path / "tuesday.sqlite")]) == 0
    os.unlink(original)  # the disk is lost
    assert main(["ledger", "restore", str(tmp_path / "tuesday.sqlite"), str(tmp_path / "restored.sqlite")]) == 0
    assert main(["ledger", "restore", str(tmp_path / "monday.sqlite"), str(tmp_path / "again.sqlite")]) == 2
    assert not (tmp_path / "again.sqlite").exists()
    with pytest.raises(dp.LedgerError, match="restored to .*restored.sqlite"):
        _charged(original, 0.25)  # the nightly script still naming the lost path is refused, not started afresh
    assert main(["ledger", "show", str(original)]) == 0


def test_a_cp_of_a_closed_ledger_does_not_charge_the_budget_again(tmp_path, capsys):
    # a closed ledger's WAL is checkpointed, so a cp holds every charge: it charges only at its home
    original, copied = tmp_path / "l.sqlite", tmp_path / "copy.sqlite"
    _charged(original, 0.75)
    shutil.copyfile(original, copied)
    with pytest.raises(dp.LedgerError, match="is a copy of the ledger at .*Nothing was charged") as refusal:
        _charged(copied, 0.75)
    assert "\n" not in str(refusal.value)
    assert main(["ledger", "adopt", str(copied)]) == 2  # refused while the original holds the ledger
    assert "still holds the ledger" in capsys.readouterr().err
    moved = tmp_path / "moved.sqlite"
    os.rename(original, moved)  # a mv: the file refuses at its new path until adopted, then charges there
    with pytest.raises(dp.LedgerError, match="is a copy"):
        _charged(moved, 0.125)
    assert main(["ledger", "adopt", str(moved)]) == 0
    _charged(moved, 0.125)
    assert dp.Accountant.inspect(moved).spent.epsilon == 0.875
    with pytest.raises(dp.LedgerError, match="is a copy"):
        _charged(copied, 0.125)  # the copy names the first home still: never charged
    assert main(["ledger", "adopt", str(copied)]) == 2  # nor adopted: the old home now names the new one
    with pytest.raises(dp.LedgerError, match="moved.sqlite"):
        _charged(original, 0.125)  # and a script still naming the old path is refused, not started afresh


def test_nan_is_no_price(postgres_url, postgres_role):
    # numeric's NaN passes `0 <= ALL (cost)`; under the Renyi filter another order still fitting let it in,
    # and that order's total was NaN from then on for every client: refused as the malformed price it is
    init(postgres_url)
    dp.Accountant.open(postgres_url, dp.ApproxDP(1.0, 1e-6), "rdp", relation=dp.ReplaceOne(), orders=[2.0, 32.0])
    assert main(["ledger", "grant", postgres_url, "alice", "--analyst"]) == 0
    with psycopg.connect(postgres_role("alice"), autocommit=True) as db:
        with pytest.raises(psycopg.Error) as refusal:
            _append(db, price=["NaN", "0"])
        assert refusal.value.sqlstate == "DPL02"
        _append(db, price=["0.5", "0"])


def test_a_backup_taken_through_a_symlink_names_the_file_itself(tmp_path):
    # the backup recorded the link's path; once the link was gone the live original looked lost
    real, link = tmp_path / "real.sqlite", tmp_path / "link.sqlite"
    _charged(real, 0.25)
    link.symlink_to(real)
    assert main(["ledger", "backup", str(link), str(tmp_path / "b.sqlite")]) == 0
    link.unlink()
    assert main(["ledger", "restore", str(tmp_path / "b.sqlite"), str(tmp_path / "fork.sqlite")]) == 2
    assert not (tmp_path / "fork.sqlite").exists()


def test_a_quota_for_no_role_is_refused_rather_than_binding_nobody(owned, postgres_role, capsys):
    # `CREATE ROLE Alice` makes the role alice: a quota for "Alice" was stored and bound no charge
    postgres_role("alice")
    assert main(["ledger", "quota", owned, "Alice", "--epsilon", "0.25"]) == 2
    assert "no role 'Alice'" in capsys.readouterr().err
    assert dp.Accountant.inspect(owned).quotas == {}
    assert main(["ledger", "quota", owned, "alice", "--epsilon", "0.25"]) == 0
