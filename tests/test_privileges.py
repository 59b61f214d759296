"""No one writes around the accountant (PostgreSQL): an analyst role charges only through
dpledger_append, which records the role and re-checks the budget and the quota from the stated
prices; it cannot change or remove a charge or write a table; a reader only reads. Each statement is
tried as such a role against the real server (tests/conftest.py)."""

import json
from fractions import Fraction

import psycopg
import pytest

import dpledger as dp
from dpledger.accountant.pg_functions import decimal_text
from dpledger.accountant.postgres import init
from dpledger.cli import main

BUDGET = dp.PureDP(1.0)
ENTRY = {"name": "direct", "mechanism": "declared", "relation": "replace-one", "rule": "declared guarantee",
         "guarantee": {"type": "PureDP", "epsilon": 0.125, "delta": 0.0}, "params": {}, "steps": [], "event": None,
         "time": "2026-01-01T00:00:00+00:00", "charged": ""}


@pytest.fixture
def roles(postgres_url, postgres_role):
    """An initialised ledger with a budget, and URLs for alice and bob (analysts) and reader."""
    init(postgres_url)
    dp.Accountant.open(postgres_url, BUDGET, relation=dp.ReplaceOne()).close()
    urls = {"owner": postgres_url}
    for role, kind in (("alice", "--analyst"), ("bob", "--analyst"), ("reader", "--reader")):
        urls[role] = postgres_role(role)
        assert main(["ledger", "grant", postgres_url, role, kind]) == 0
    return urls


def _documents(url):
    with psycopg.connect(url) as db:
        return db.execute("SELECT document, analyst, price::text FROM entries ORDER BY id").fetchall()


def _append(url, epsilon, price=None, entry=ENTRY, relation="replace-one"):
    """A charge of ``epsilon`` written straight through the database function, as a client that skips
    every check would; ``price``: the one it states instead of the basic filter's (epsilon, 0)."""
    entry = {**entry, "guarantee": {**entry["guarantee"], "epsilon": epsilon}}
    price = [decimal_text(Fraction(epsilon), up=True), "0"] if price is None else price
    with psycopg.connect(url, autocommit=True) as db:
        return db.execute("SELECT dpledger_append(%s, %s, %s::text[])", (json.dumps(entry), relation, price)).fetchone()


WRITES = ["INSERT INTO entries (document, analyst, price) VALUES ('{}', 'bob', '{0,0}')",
          "UPDATE entries SET price = '{0,0}'", "DELETE FROM entries", "INSERT INTO meta VALUES ('sealed', 'no')",
          "UPDATE meta SET value = '99' WHERE key = 'schema'", "DELETE FROM meta WHERE key = 'quotas'",
          "TRUNCATE entries", "TRUNCATE meta", "DROP TABLE entries", "DROP FUNCTION dpledger_append(text, text, text[])",
          "CREATE OR REPLACE FUNCTION dpledger_lock() RETURNS void LANGUAGE sql AS 'SELECT NULL::void'"]


@pytest.mark.parametrize("role", ["alice", "reader"])
def test_a_role_writes_no_table_directly(roles, role):
    dp.Accountant.open(roles["alice"]).spend("a", dp.PureDP(0.25))
    before = _documents(roles["owner"])
    with psycopg.connect(roles[role], autocommit=True) as db:
        for statement in WRITES:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                db.execute(statement)
    assert _documents(roles["owner"]) == before
    assert [e.analyst for e in dp.Accountant.inspect(roles[role]).ledger] == ["alice"]


def test_the_database_records_the_role_whatever_the_client_claims(roles):
    alice = dp.Accountant.open(roles["alice"])
    assert alice.spend("a", dp.PureDP(0.25)).analyst == "alice"
    _append(roles["bob"], 0.125, entry={**ENTRY, "analyst": "alice"})  # bob claims to be alice
    with pytest.raises(dp.LedgerError, match="database role.*'alice', not 'bob'"):
        dp.Accountant.open(roles["alice"], analyst="bob")
    read = dp.Accountant.inspect(roles["reader"])
    assert [e.analyst for e in read.ledger] == ["alice", "bob"]
    assert {g: u.epsilon for g, u in read.spent_by("analyst").items()} == {"alice": 0.25, "bob": 0.125}
    alice.refresh()
    assert alice.ledger[-1].analyst == "bob" and alice.spent.epsilon == 0.375


def test_the_database_admits_exactly_what_the_filter_admits(roles):
    for _ in range(10):  # ten fl(0.1) sum to just above 1 exactly, and fit as the client's rule says
        _append(roles["alice"], 0.1)
    stated = [decimal_text(Fraction(0.1), up=True), "0"]
    for epsilon, price, code in ((0.1, None, "DPL03"), (0.0, ["-0.1", "0"], "DPL02"), (0.1, ["0.1"], "DPL02"),
                                 (0.1, [None, "0"], "DPL02"), (0.1, ["0", "0"], "DPL02"), (0.2, stated, "DPL02")):
        with pytest.raises(psycopg.Error) as refusal:
            _append(roles["bob"], epsilon, price)
        assert refusal.value.sqlstate == code
    with pytest.raises(psycopg.Error, match="edge-adjacency"):
        _append(roles["bob"], 0.0, entry={**ENTRY, "relation": "edge-adjacency"}, relation="edge-adjacency")
    assert len(_documents(roles["owner"])) == 10
    with pytest.raises(dp.BudgetExceeded):
        dp.Accountant.open(roles["alice"]).spend("more", dp.PureDP(1e-9))


def test_the_database_checks_some_order_of_a_renyi_budget(postgres_url, postgres_role):
    init(postgres_url)
    acct = dp.Accountant.open(postgres_url, dp.ApproxDP(1.0, 1e-6), "rdp", relation=dp.ReplaceOne(),
                              orders=[2.0, 32.0])
    exhausted = "1" + "0" * 400  # a step whose Rényi curve is infinite at that order
    assert main(["ledger", "grant", postgres_url, "alice", "--analyst"]) == 0
    alice = postgres_role("alice")
    _append(alice, 1.0, [exhausted, "0"])  # the first order is spent for good; the second still fits
    with pytest.raises(psycopg.Error) as refusal:
        _append(alice, 1.0, ["0", exhausted])
    assert refusal.value.sqlstate == "DPL03" and len(_documents(postgres_url)) == 1


def test_the_database_holds_an_analyst_to_their_quota(roles):
    owner = dp.Accountant.open(roles["owner"])
    owner.set_quota("alice", dp.PureDP(0.25))
    _append(roles["alice"], 0.25)
    with pytest.raises(psycopg.Error, match="alice would exceed their quota") as refusal:
        _append(roles["alice"], 0.0001)
    assert refusal.value.sqlstate == "DPL04"
    _append(roles["bob"], 0.5)  # bob has no quota
    with pytest.raises(dp.LedgerError, match="lacks the privilege.*only the owner.*sets quotas"):
        dp.Accountant.open(roles["alice"]).set_quota("alice", dp.PureDP(1.0))
    assert [row[1] for row in _documents(roles["owner"])] == ["alice", "bob"]


@pytest.mark.parametrize("key", ["sealed", "backup_of"])
def test_a_sealed_ledger_or_a_backup_takes_no_charge(roles, key):
    alice = dp.Accountant.open(roles["alice"])
    record = {"to": "elsewhere.sqlite", "by": "copy", "done": True} if key == "sealed" else {"path": "original.sqlite"}
    with psycopg.connect(roles["owner"], autocommit=True) as db:
        db.execute("INSERT INTO meta VALUES (%s, %s)", (key, json.dumps({**record, "at": "2026-12-02T15:00:00+00:00"})))
    with pytest.raises(dp.LedgerError, match="Nothing was charged"):
        alice.spend("a", dp.PureDP(0.25))  # the client refuses first
    with pytest.raises(psycopg.Error, match="sealed.*Nothing was charged") as refusal:
        _append(roles["alice"], 0.25)  # and the database, to a client that would not
    assert refusal.value.sqlstate == "DPL01"
    assert _documents(roles["owner"]) == [] and alice.spent.epsilon == 0


def test_a_reader_reads_and_any_charge_is_one_line_naming_the_fix(roles, capsys):
    dp.Accountant.open(roles["alice"]).spend("a", dp.PureDP(0.25))
    assert dp.Accountant.inspect(roles["reader"]).spent.epsilon == 0.25
    assert main(["ledger", "show", roles["reader"], "--by", "analyst"]) == 0
    assert "alice" in capsys.readouterr().out
    with pytest.raises(dp.LedgerError, match="ledger grant URL reader --analyst.*Nothing was charged") as refusal:
        dp.Accountant.open(roles["reader"])
    assert "\n" not in str(refusal.value) and "pw-reader" not in str(refusal.value)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _append(roles["reader"], 0.0)
    assert main(["ledger", "grant", roles["owner"], "alice", "--reader"]) == 0  # an analyst made a reader
    with pytest.raises(dp.LedgerError, match="lacks the privilege"):
        dp.Accountant.open(roles["alice"])


def test_a_role_granted_nothing_neither_reads_nor_charges(roles, postgres_role):
    stranger = postgres_role("stranger")
    with pytest.raises(dp.LedgerError, match="may not read.*ledger grant URL ROLE --reader"):
        dp.Accountant.inspect(stranger)
    with pytest.raises(dp.LedgerError, match="may not read"):
        dp.Accountant.open(stranger)  # reading the ledger's settings first
    with pytest.raises(dp.LedgerError, match="lacks the privilege.*grant URL stranger --analyst"):
        dp.Accountant.open(stranger, BUDGET, "basic")


def test_only_the_owner_fixes_a_budget(postgres_url, postgres_role):
    init(postgres_url)
    assert main(["ledger", "grant", postgres_url, "alice", "--analyst"]) == 0
    with pytest.raises(dp.LedgerError, match="only the owner fixes the budget"):
        dp.Accountant.open(postgres_role("alice"), BUDGET)
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT key FROM meta").fetchall() == [("schema",)]


def test_only_the_owner_grants_and_only_roles_that_exist(roles, capsys):
    assert main(["ledger", "grant", roles["alice"], "bob", "--reader"]) == 1
    assert "only the owner" in capsys.readouterr().err
    assert main(["ledger", "grant", roles["owner"], "nobody_here", "--analyst"]) == 2
    assert "CREATE ROLE nobody_here" in capsys.readouterr().err


def test_the_database_holds_each_block_to_its_own_budget(postgres_url, postgres_role):
    # parallel composition in the database's own check: 0.75 + 0.75 across two blocks fits (each
    # record is in one block); 0.5 more in "north" does not, from a client that skips every check
    init(postgres_url)
    dp.Accountant.open(postgres_url, BUDGET, blocks=("north", "south")).close()
    alice = postgres_role("alice")
    assert main(["ledger", "grant", postgres_url, "alice", "--analyst"]) == 0
    entry = {**ENTRY, "relation": "add-remove-one"}
    for block in ("north", "south"):
        _append(alice, 0.75, entry={**entry, "blocks": [block]}, relation="add-remove-one")
    with pytest.raises(psycopg.Error, match="block north would exceed") as refusal:
        _append(alice, 0.5, entry={**entry, "blocks": ["north"]}, relation="add-remove-one")
    assert refusal.value.sqlstate == "DPL03"
    for blocks in ([], ["west"], None):  # no block, an unknown one, none named on a block ledger
        with pytest.raises(psycopg.Error) as refusal:
            _append(alice, 0.125, entry={**entry, **({} if blocks is None else {"blocks": blocks})},
                    relation="add-remove-one")
        assert refusal.value.sqlstate == "DPL02"
    assert [d[1] for d in _documents(postgres_url)] == ["alice", "alice"]


def test_no_command_prints_a_password(roles, capsys):
    dp.Accountant.open(roles["alice"]).spend("a", dp.PureDP(0.25))
    for command in (["ledger", "show", roles["reader"]], ["ledger", "show", roles["reader"], "--by", "analyst"],
                    ["ledger", "show", roles["reader"], "--json"], ["ledger", "quota", roles["owner"], "bob", "--epsilon", "0.5"]):
        assert main(command) == 0
        out = capsys.readouterr()
        assert "pw-" not in out.out + out.err, command
