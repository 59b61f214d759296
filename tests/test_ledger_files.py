"""A ledger that never forgets: a missing path is created, but an existing file is charged only if
it already is a ledger; empty, foreign and damaged files are refused with a typed error naming
the file, from Python and as one line from the command line."""

import sqlite3

import pytest

import dpledger as dp
from dpledger.cli import main
from dpledger.errors import LedgerCorrupt

BUDGET = dp.PureDP(1.0)


def test_a_missing_path_is_created(tmp_path):
    path = tmp_path / "new.sqlite"
    dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).spend("a", dp.PureDP(0.5))
    assert dp.Accountant.open(path).spent.epsilon == 0.5


def _empty(path):
    path.write_bytes(b"")


def _garbage(path):
    path.write_bytes(b"not a database at all, " * 100)


def _foreign(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE other (x)")


@pytest.mark.parametrize("make", [_empty, _garbage, _foreign])
def test_an_existing_file_that_is_no_ledger_is_refused_never_initialised(make, tmp_path, capsys):
    path = tmp_path / "l.sqlite"
    make(path)
    before = path.read_bytes()
    for budget, rule in ((BUDGET, "basic"), (None, None)):
        with pytest.raises(LedgerCorrupt, match=f"{path}.*not a dpledger ledger file.*new path"):
            dp.Accountant.open(path, budget, rule, relation=dp.ReplaceOne())
    with pytest.raises(LedgerCorrupt, match=str(path)):
        dp.Accountant.inspect(path)
    assert path.read_bytes() == before  # never written
    assert main(["ledger", "show", str(path)]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and str(path) in error and "refused" in error


def test_a_schema_2_file_is_upgraded_when_opened_for_charging_and_keeps_its_charges(tmp_path):
    # schema 3 only added meta keys and entry fields: a schema-2 file is one as it stands
    path = tmp_path / "old.sqlite"
    dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).spend("a", dp.PureDP(0.25))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    with pytest.raises(ValueError, match="created with the budget"):
        dp.Accountant.open(path, dp.PureDP(2.0))  # a refusal upgrades nothing
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("2",)
    acct = dp.Accountant.open(path)
    acct.spend("b", dp.PureDP(0.25))
    assert [e.name for e in acct.ledger] == ["a", "b"] and acct.spent.epsilon == 0.5
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("3",)
