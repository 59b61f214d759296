"""A ledger that never forgets and never forks: a copy (SQLite or PostgreSQL, either way) carries
every entry and meta key with equal totals and seals its source; a backup taken while another
process charges is a consistent prefix and refuses charges; a restore is refused while the
original lives. Every refusal is one line and changes nothing."""

import contextlib
import json
import multiprocessing
import os
import re
import shutil
import time

import pytest

import dpledger as dp
from dpledger.accountant import moving, storage
from dpledger.accountant.postgres import init
from dpledger.accountant.sqlstore import DERIVED
from dpledger.cli import main
from dpledger.errors import LedgerCorrupt, LedgerError
from spending import entries as count_entries, spender

BUDGET = dp.PureDP(1.0)


def _new(kind, tmp_path, request, name):
    """A new ledger's place: a missing file path, or an initialised empty database."""
    if kind == "sqlite":
        return str(tmp_path / f"{name}.sqlite")
    url = request.getfixturevalue("postgres_url")
    init(url)
    return url


def _charged(where, *epsilons):
    acct = dp.Accountant.open(where, BUDGET, relation=dp.ReplaceOne())
    for i, epsilon in enumerate(epsilons):
        acct.spend(f"q{i}", dp.PureDP(epsilon), charge_id=f"id-{i}")
    return acct


def _state(where):
    """The meta (but what each store derives for itself: ``DERIVED``) and the entries of a ledger."""
    meta, entries = storage.read(where)
    return {k: v for k, v in meta.items() if k not in DERIVED}, [entry.to_dict() for entry in entries]


@contextlib.contextmanager
def _held(where):
    """An existing ledger's store under its write lock, to write meta as another module would."""
    with contextlib.closing(storage.open_store(where, None, None, None)) as store, store.whole():
        yield store


@pytest.mark.parametrize("kinds", [("sqlite", "sqlite"), ("sqlite", "postgresql"), ("postgresql", "sqlite")])
def test_a_copy_carries_everything_seals_the_source_and_charges_on(kinds, tmp_path, request):
    src, dst = (_new(kind, tmp_path, request, name) for kind, name in zip(kinds, ("src", "dst")))
    before_copy = _charged(src, 0.25, 0.125)
    with _held(src) as store:
        store.set_meta("a later key", '{"another module": "its own key"}')  # every meta key is carried
    meta, entries = _state(src)
    said = moving.copy(src, dst)
    assert "2 charges" in said and storage.name(dst) in said and "sealed" in said
    assert _state(dst) == (meta, entries)  # the same documents in the same order, every meta key
    assert dp.Accountant.inspect(dst)._total == dp.Accountant.inspect(src)._total
    moved = (f"{re.escape(storage.name(src))} was moved to {re.escape(storage.name(dst))} on .*: "
             f"open {re.escape(storage.name(dst))}. Nothing was charged.")
    with pytest.raises(LedgerError, match=moved):
        before_copy.spend("late", dp.PureDP(0.01))  # an accountant opened before the copy
    with pytest.raises(LedgerError, match=moved):
        dp.Accountant.open(src)
    assert _state(src)[1] == entries
    assert any(line.startswith("CHARGES REFUSED") for line in dp.Accountant.inspect(src).summary())
    after = dp.Accountant.open(dst)
    assert after.remaining.epsilon == 0.625 and after.relation == dp.ReplaceOne()
    with pytest.raises(ValueError, match="id-0"):
        after.spend("other", dp.PureDP(0.1), charge_id="id-0")  # the copy knows the source's charge ids
    after.spend("rest", dp.PureDP(0.625))
    with pytest.raises(dp.BudgetExceeded):
        after.spend("more", dp.PureDP(1e-9))
    with pytest.raises(ValueError, match="was moved to.*Nothing was changed"):
        moving.copy(src, str(tmp_path / "again.sqlite"))  # a sealed ledger is never copied again
    assert not (tmp_path / "again.sqlite").exists()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_copy_into_a_ledger_that_holds_anything_is_refused_changing_nothing(kind, tmp_path, request):
    src, dst = str(tmp_path / "src.sqlite"), _new(kind, tmp_path, request, "dst")
    _charged(src, 0.5).close()
    dp.Accountant.open(dst, BUDGET, relation=dp.ReplaceOne()).close()  # a budget, no charge yet
    before = _state(src), _state(dst)
    with pytest.raises(ValueError, match="already holds a ledger.*new ledger only.*Nothing was changed") as refusal:
        moving.copy(src, dst)
    assert "\n" not in str(refusal.value)
    assert (_state(src), _state(dst)) == before
    dp.Accountant.open(src).spend("still", dp.PureDP(0.5))  # the source still charges


def test_bad_sources_and_targets_are_refused_in_one_line(tmp_path, postgres_url):
    src = str(tmp_path / "src.sqlite")
    _charged(src, 0.5).close()
    with pytest.raises(ValueError, match="no ledger file"):
        moving.copy(tmp_path / "missing.sqlite", tmp_path / "new.sqlite")
    assert not (tmp_path / "missing.sqlite").exists() and not (tmp_path / "new.sqlite").exists()
    with pytest.raises(ValueError, match="both"):
        moving.copy(src, src)
    with pytest.raises(ValueError, match="no folder"):
        moving.copy(src, tmp_path / "no" / "such.sqlite")
    with pytest.raises(LedgerError, match="ledger init URL"):
        moving.copy(src, postgres_url)  # a database is never made a ledger implicitly
    with pytest.raises(LedgerError, match="cannot reach.*check the URL") as refusal:
        moving.copy(src, "postgresql://nobody:secret@127.0.0.1:1/none")
    assert "secret" not in str(refusal.value)
    init(postgres_url)
    with _held(postgres_url) as store:
        store.set_meta("schema", "99")
    with pytest.raises(ValueError, match="schema 99.*ledger init URL"):
        moving.copy(src, postgres_url)
    with _held(src) as store:
        store.set_meta("schema", "2")
    with pytest.raises(ValueError, match="schema 2, not 3.*another dpledger version"):
        moving.copy(src, tmp_path / "new.sqlite")


def _stop_midway(src, dst, sealed_source: bool):
    """The state a copy stopped by a crash leaves: ``dst`` committed and marked unfinished, and
    ``src`` sealed or not (as if the crash came after or before the source's commit)."""
    moving.copy(src, dst)
    with _held(dst) as store:
        store.set_meta("sealed", json.dumps({"to": storage.name(src), "by": "copy", "done": False, "at": "2026-12-02T10:00:00"}))
    if not sealed_source:
        with _held(src) as store:
            store.set_meta("sealed", None)


@pytest.mark.parametrize("sealed_source", [False, True])
def test_a_copy_stopped_midway_forks_nothing_and_running_it_again_finishes_it(sealed_source, tmp_path):
    src, dst = str(tmp_path / "src.sqlite"), str(tmp_path / "dst.sqlite")
    _charged(src, 0.25).close()
    _stop_midway(src, dst, sealed_source)
    unfinished = f"{dst} is an unfinished copy of {src}.*`dpledger ledger copy {src} {dst}` again.*Nothing was charged"
    with pytest.raises(LedgerError, match=unfinished):
        dp.Accountant.open(dst)
    if not sealed_source:
        dp.Accountant.open(src).spend("meanwhile", dp.PureDP(0.25))  # the source still charges: the copy is stale
    meta, entries = _state(src)
    moving.copy(src, dst)
    assert _state(dst) == ({k: v for k, v in meta.items() if k != "sealed"}, entries)
    with pytest.raises(LedgerError, match="was moved to"):
        dp.Accountant.open(src)
    assert dp.Accountant.open(dst).spent.epsilon == len(entries) * 0.25


@contextlib.contextmanager
def _spending(path):
    """Another process charging ``path`` in a loop that ends only when a charge is refused (or it
    is stopped), once it has charged some."""
    context = multiprocessing.get_context("spawn")
    started = context.Event()
    started.set()
    process = context.Process(target=spender, args=(path, dp.PureDP(1e6), dp.PureDP(0.01), 10**7, started))
    process.start()
    try:
        deadline = time.monotonic() + 60
        while count_entries(path) < 20 and time.monotonic() < deadline:
            time.sleep(0.02)
        yield process
    finally:
        process.terminate()
        process.join(60)


def _delete(path):
    """A lost ledger file: gone, with its WAL and shared-memory files."""
    for leftover in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{leftover}"):
            os.remove(f"{path}{leftover}")


def test_a_backup_taken_while_another_process_charges_is_a_consistent_prefix(tmp_path):
    src, copy = str(tmp_path / "src.sqlite"), tmp_path / "backup.sqlite"
    dp.Accountant.open(src, dp.PureDP(1e6), relation=dp.ReplaceOne()).close()
    with _spending(src) as process:
        said = moving.backup(src, copy)
        taken = _state(copy)
        while count_entries(src) <= len(taken[1]) and process.is_alive():  # it charges on after the backup: each charge whole or absent
            time.sleep(0.02)
    final = _state(src)
    assert 20 <= len(taken[1]) < len(final[1]) and taken[1] == final[1][:len(taken[1])]  # taken mid-way: a prefix
    assert json.loads(taken[0].pop("backup_of"))["path"] == storage.name(src) and taken[0] == final[0]
    assert f"{len(taken[1])} charges" in said and not os.path.exists(f"{copy}-wal")  # one self-contained file
    with pytest.raises(LedgerError, match=f"{copy} is a backup of {src} taken .*dpledger ledger restore"):
        dp.Accountant.open(copy)
    with pytest.raises(ValueError, match="exists"):
        moving.backup(src, copy)


def test_no_charge_slips_in_while_a_ledger_is_copied(tmp_path):
    src, dst = str(tmp_path / "src.sqlite"), str(tmp_path / "dst.sqlite")
    dp.Accountant.open(src, dp.PureDP(1e6), relation=dp.ReplaceOne()).close()
    with _spending(src) as process:
        moving.copy(src, dst)
        process.join(60)
        assert process.exitcode == 1  # its next charge was refused: the ledger was moved
    assert len(_state(dst)[1]) >= 20 and _state(dst)[1] == _state(src)[1]


def test_cp_of_a_live_ledger_misses_the_charges_still_in_its_wal(tmp_path):
    """Why `dpledger ledger backup` and never `cp`: the committed charges live in the -wal file
    until a checkpoint, so a copy of the main file alone holds an older ledger, or none."""
    src = tmp_path / "src.sqlite"
    acct = _charged(src, 0.25, 0.25)  # open: its connection keeps the WAL from being checkpointed
    shutil.copy(src, tmp_path / "cp.sqlite")
    try:
        held = len(storage.read(tmp_path / "cp.sqlite")[1])
    except LedgerCorrupt:  # the charges and the tables were all in the WAL: no ledger at all
        held = None
    assert held in (None, 0) and len(acct.ledger) == 2


def test_backup_refuses_a_postgresql_ledger_naming_pg_dump(postgres_url, tmp_path):
    init(postgres_url)
    with pytest.raises(ValueError, match="pg_dump"):
        moving.backup(postgres_url, tmp_path / "b.sqlite")
    assert not (tmp_path / "b.sqlite").exists()


def test_a_restore_is_refused_while_the_original_lives_and_continues_once_it_is_lost(tmp_path):
    src, copy, restored = (str(tmp_path / name) for name in ("src.sqlite", "backup.sqlite", "restored.sqlite"))
    original = _charged(src, 0.25)
    moving.backup(src, copy)
    original.spend("after the backup", dp.PureDP(0.25))
    with pytest.raises(ValueError, match=f"original {src} is live.*lost or damaged.*Nothing was changed"):
        moving.restore(copy, restored)
    with pytest.raises(ValueError, match="no backup"):
        moving.restore(src, restored)
    assert not os.path.exists(restored)
    original.close()
    _delete(src)
    said = moving.restore(copy, restored)
    assert "1 charge," in said and "taken" in said and "may have spent less" in said
    again = dp.Accountant.open(restored)
    assert "backup_of" not in storage.read(restored)[0] and again.spent.epsilon == 0.25  # the later charge is lost
    again.spend("on", dp.PureDP(0.75))
    with pytest.raises(LedgerError, match=f"{copy} was restored to {restored}"):
        dp.Accountant.open(copy)
    with pytest.raises(ValueError, match="restored to"):
        moving.restore(copy, tmp_path / "twice.sqlite")  # one backup is restored once


def test_a_backup_of_a_moved_original_is_never_restored(tmp_path):
    src, copy = str(tmp_path / "src.sqlite"), str(tmp_path / "backup.sqlite")
    _charged(src, 0.25).close()
    moving.backup(src, copy)
    moving.copy(src, tmp_path / "moved.sqlite")
    with pytest.raises(ValueError, match="moved to .*moved.sqlite.*never restored"):
        moving.restore(copy, tmp_path / "restored.sqlite")
    with pytest.raises(ValueError, match="was moved to"):
        moving.backup(src, tmp_path / "another.sqlite")


# --- the command line ------------------------------------------------------------------------------

def test_the_commands_exit_zero_or_two_with_one_line(tmp_path, capsys):
    src, other, moved, copy = (str(tmp_path / name) for name in ("src", "other", "moved", "backup"))
    _charged(src, 0.25).close()
    _charged(other, 0.5).close()
    assert main(["ledger", "backup", src, copy]) == 0
    assert main(["ledger", "copy", other, moved]) == 0
    assert "sealed" in capsys.readouterr().out
    for command in (["copy", other, str(tmp_path / "x")], ["copy", copy, str(tmp_path / "x")], ["backup", src, copy],
                    ["restore", copy, str(tmp_path / "x")], ["copy", src, moved],
                    ["backup", "postgresql://u:p@127.0.0.1:1/d", "y"]):
        assert main(["ledger", *command]) == 2, command
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and error.startswith("dpledger: error: ") and "Nothing was changed" in error
    assert not os.path.exists(tmp_path / "x")
    assert main(["ledger", "show", other]) == 0
    assert "CHARGES REFUSED" in capsys.readouterr().out
    assert main(["ledger", "show", other, "--json"]) == 0
    assert f"open {moved}" in json.loads(capsys.readouterr().out)["charges_refused"]
    _delete(src)
    assert main(["ledger", "restore", copy, src]) == 0  # in the lost original's place
    assert "1 charge," in capsys.readouterr().out
    dp.Accountant.open(src).spend("on", dp.PureDP(0.75))
