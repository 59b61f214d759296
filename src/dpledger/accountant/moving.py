"""Moving a ledger without forking it: ``copy`` writes a ledger into a new one and seals the
source, ``backup`` writes a consistent copy of an SQLite ledger file that refuses charges, and
``restore`` makes a backup a ledger again once its original is lost (docs/design.md, "Moving and
backing up a ledger"). However a budget is moved, one ledger charges it: every other one names
where it went in its ``sealed`` record, or is a backup (``backup_of``), and refuses charges.

A copy (a restore too) runs under the source's write lock, so no charge slips in between. The
target is committed first, marked as an unfinished copy of the source (``sealed`` naming it,
``done`` false), read back and compared; then the source is sealed naming the target; then the
target's mark is removed. Stopped anywhere, the source still charges and the target refuses, or
both refuse; either way running the same command again finishes the move (or, while the source
is not sealed, writes the target afresh)."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import sqlite3
import tempfile

from .. import guarantees as _g
from ..errors import LedgerCorrupt
from . import storage
from .accountant import Accountant
from . import blocks as _blocks
from . import filters as _filters
from .book import Book
from .sqlstore import DERIVED, SCHEMA_VERSION, closed, now, read_rows, when

UNCHANGED = "Nothing was changed."


def copy(src, dst) -> str:
    """Copy the ledger ``src`` into the new ledger ``dst`` (each an SQLite path or a postgresql://
    URL) and seal ``src``, which from then on refuses charges naming ``dst``; what was copied."""
    copied = _move(src, dst, "copy")
    return (f"copied {storage.name(src)} to {storage.name(dst)}: {_amount(copied)}, read back and checked equal; "
            f"{storage.name(src)} is sealed: charge {storage.name(dst)} from now on")


def backup(src, dst) -> str:
    """Write a consistent copy of the SQLite ledger file ``src`` to the new file ``dst`` (SQLite's
    backup API: one snapshot of the file and its WAL, while other processes go on charging); the
    copy records ``backup_of`` and refuses charges until it is restored."""
    if storage.is_url(src):
        raise ValueError(f"{storage.name(src)} is a PostgreSQL ledger: back it up with PostgreSQL's own tools "
                         "(pg_dump --format=custom URL > FILE; pg_restore it only in place of a lost database: both would "
                         "charge); `dpledger ledger "
                         f"backup` backs up SQLite ledger files. {UNCHANGED}")
    target = _new_file(dst, "a backup")
    storage.read(src)  # an existing ledger file, or refused naming the file
    stamp = now()
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    os.close(handle)
    try:
        with contextlib.closing(sqlite3.connect(f"file:{src}?mode=ro", uri=True)) as source, \
                contextlib.closing(sqlite3.connect(partial, isolation_level=None)) as written:
            source.backup(written)  # in one step: one read snapshot, whatever others commit meanwhile
            _check_source(storage.name(src), dict(written.execute("SELECT key, value FROM meta")), "backup")
            written.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, safe to copy once closed
            written.execute("INSERT INTO meta VALUES ('backup_of', ?)",
                            (json.dumps({"path": storage.name(src), "at": stamp}),))
        os.link(partial, target)  # never over a file made meanwhile
    except FileExistsError:
        raise ValueError(f"{target} exists: a backup is written to a new path. {UNCHANGED}") from None
    finally:
        os.unlink(partial)
    return (f"backed up {storage.name(src)} to {target} at {when(stamp)}: {_amount(Accountant.inspect(target))}; "
            f"the backup refuses charges (restore it with `dpledger ledger restore {target} DST` only if the "
            "original is lost)")


def restore(backup_path, dst) -> str:
    """Make the backup ``backup_path`` a ledger again at the new ledger ``dst``, if its original is
    lost or damaged (refused while it is a readable ledger); the backup is then sealed naming
    ``dst``. Charges made on the original after the backup are not in it."""
    meta, _ = storage.read(backup_path)
    if "backup_of" not in meta:
        raise ValueError(_not_a_backup(storage.name(backup_path)))
    taken = json.loads(meta["backup_of"])
    _refuse_if_original_lives(taken["path"], storage.name(backup_path))
    restored = _move(backup_path, dst, "restore")
    _seal_lost_original(taken["path"], meta, storage.name(dst))
    return (f"restored {storage.name(backup_path)} (a backup of {taken['path']} taken {when(taken['at'])}) to "
            f"{storage.name(dst)}: {_amount(restored)}. A charge made on the original after {when(taken['at'])} is not "
            "in it: the restored ledger may have spent less than the lost original had")


def adopt(path) -> str:
    """Make the SQLite ledger file ``path`` its ledger's home (after a ``mv``), once the home it
    records holds no readable ledger; refused while it does (the file is then a copy: a fork)."""
    if storage.is_url(path):
        raise ValueError(f"{storage.name(path)} is a database: only a ledger file has a home path. {UNCHANGED}")
    meta, _ = storage.read(path)
    here, home = storage.name(path), meta.get("home")
    if home is None or home == here:
        return f"{here} is its ledger's home already"
    try:
        live = os.path.lexists(home) and storage.read(home) is not None
    except LedgerCorrupt:
        live = False  # damaged: this file is what is left of it
    if live:
        raise ValueError(f"{home} still holds the ledger {here} copies: charge {home} (two files charging one "
                         f"budget would spend it twice), or move it with `dpledger ledger copy`. {UNCHANGED}")
    with contextlib.closing(storage.open_store(path, None, None, None)) as store, store.whole():
        store.set_meta("home", here)
    _seal_lost_original(home, meta, here, "adopt")  # another copy of it is never adopted too
    return f"{here} is now its ledger's home ({home}, where it was made, now refuses charges naming it)"


def _move(src, dst, how: str) -> Accountant:
    """Write the ledger ``src`` into the new ledger ``dst`` and seal ``src`` (module doc); ``dst``
    as read back. ``how``: "copy", or "restore" (``src`` is a backup, whose ``backup_of`` is dropped)."""
    source_name, target_name = storage.name(src), storage.name(dst)
    if source_name == target_name:
        raise ValueError(f"{source_name} is both the ledger to {how} and where to write it. {UNCHANGED}")
    held, present = {}, ()
    if storage.is_url(dst) or pathlib.Path(dst).exists():
        held, present = storage.read(dst)
    else:
        _new_file(dst, f"a {how}")
    # refused before any lock is taken: the same database under two URLs would wait on itself for ever
    _decide(source_name, target_name, how, storage.read(src)[0], held, present)
    with contextlib.closing(storage.open_store(src, None, None, None)) as source, \
            contextlib.closing(storage.open_store(dst, None, None, None)) as target:
        with source.whole() as (meta, documents):
            carried = _own(meta, how, "sealed", *DERIVED)
            prices = _prices(meta, documents)
            with target.whole() as (held, present):
                finishing = _decide(source_name, target_name, how, meta, held, present)
                if not finishing:
                    for key in held.keys() - carried.keys():
                        target.set_meta(key, None)  # what an unfinished copy holds beyond these (a new ledger: none)
                    for key, value in {**carried, **target.derived(*_fixed(meta))}.items():
                        target.set_meta(key, value)
                    target.set_meta("sealed", _record(source_name, how, done=False))
                    target.replace_entries(documents, prices)
            written = _verify(src, dst, carried, documents)
            if not finishing:
                source.set_meta("sealed", _record(target_name, how, done=True))
        with target.whole():
            target.set_meta("sealed", None)
    return written


def _decide(source: str, target: str, how: str, meta: dict, held: dict, entries) -> bool:
    """Whether this move finishes an earlier one (the source is sealed naming the target, still
    marked as its unfinished copy); refused unless it does, or the source charges and the target is
    new, of this schema, or an unfinished copy of the source by the same command."""
    sealed, mark = _sealed(meta), _sealed(held)
    finishing = sealed is not None and sealed["done"] and sealed["to"] == target
    unfinished = mark is not None and not mark["done"] and mark["to"] == source and mark["by"] == how
    if finishing and not unfinished:
        raise ValueError(f"{closed(source, meta)}. {UNCHANGED}")
    if not finishing:
        _check_source(source, meta, how)
    if held.get("schema", str(SCHEMA_VERSION)) != str(SCHEMA_VERSION):
        raise ValueError(f"{target} was initialised by another dpledger version (schema {held['schema']}, this one "
                         f"writes {SCHEMA_VERSION}): {how} to a database initialised by this version's `dpledger "
                         f"ledger init URL`. {UNCHANGED}")
    if not unfinished and (held.keys() - {"schema"} or entries):
        raise ValueError(f"{target} already holds a ledger ({len(entries)} charges): a {how} is written to a new "
                         "ledger only, a missing file path or a database that `dpledger ledger init URL` made and "
                         f"nothing charged yet. {UNCHANGED}")
    return finishing


def _check_source(name: str, meta: dict, how: str) -> None:
    """Refuse to copy, back up or restore a ledger of another schema, without a budget, or that
    refuses charges (a restore's source must be a backup, and nothing else)."""
    if meta.get("schema") != str(SCHEMA_VERSION):
        raise ValueError(f"{name} is a ledger of schema {meta.get('schema')}, not {SCHEMA_VERSION}: it was written by "
                         f"another dpledger version, which this one does not {how} (`dpledger ledger show` reads it). "
                         f"{UNCHANGED}")
    if "budget" not in meta:
        raise ValueError(f"{name} has no budget yet (nothing was ever charged in it): open the new ledger instead. "
                         f"{UNCHANGED}")
    if how == "restore" and "backup_of" not in meta:
        raise ValueError(_not_a_backup(name))
    refused = closed(name, _own(meta, how))
    if refused is not None:
        raise ValueError(f"{refused}. {UNCHANGED}")


def _verify(src, dst, carried: dict, documents: list[str]) -> Accountant:
    """``dst`` read back as another process would, refused unless its meta, its entries and its
    filter's exact total are the source's."""
    meta, entries = storage.read(dst)
    meta = _own(meta, "copy", "sealed", *DERIVED)
    written, original = Accountant.inspect(dst), Accountant.inspect(src)
    if (meta != carried or entries != read_rows([(document,) for document in documents])
            or written._total != original._total):
        raise LedgerCorrupt(f"{storage.name(dst)} did not read back as a copy of {storage.name(src)}: it refuses "
                            f"charges; {storage.name(src)} was not sealed and still charges. Nothing was charged.")
    return written


def _fixed(meta: dict) -> tuple:
    """The budget and filter a ledger's meta fixed."""
    return _g.from_dict(json.loads(meta["budget"])), json.loads(meta["filter"])


def _prices(meta: dict, documents: list[str]) -> list:
    """Each entry's price under the ledger's filter, as the book priced it (a prepaid step: nothing)."""
    budget, spec = _fixed(meta)
    book = Book(_filters.make(spec["filter"], budget, spec.get("orders")), None, "the copy", strict=False)
    book.know(_blocks.stored(meta.get("blocks")))
    return book.take(read_rows([(document,) for document in documents]))


def _refuse_if_original_lives(original: str, backup_name: str) -> None:
    """A restore is for a lost or damaged original: refused while ``original`` is a readable
    ledger (unless it is this backup's own unfinished restore), sealed ones included."""
    if not os.path.lexists(original):
        return
    try:
        meta, entries = storage.read(original)
    except LedgerCorrupt:
        return  # damaged: what a restore is for
    mark = _sealed(meta)
    if mark is not None and mark["to"] == backup_name and not mark["done"]:
        return
    if mark is not None:
        how = "moved" if mark["by"] == "copy" else "restored"
        raise ValueError(f"the original {original} was {how} to {mark['to']}, which charges its budget now: a backup "
                         f"taken before the move is never restored. {UNCHANGED}")
    raise ValueError(f"the original {original} is live ({len(entries)} charges): go on charging it. A restore is for a "
                     "lost or damaged original (it forgets every charge made after the backup); to move a ledger, "
                     f"use `dpledger ledger copy`. {UNCHANGED}")


def _seal_lost_original(original: str, meta: dict, restored: str, how: str = "restore") -> None:
    """Where the lost original was, a ledger without entries sealed naming ``restored`` (by ``how``:
    a restore, an adopt): every other backup or copy of that original (an older one, a ``cp`` of
    this one) then finds it moved and is never restored or adopted too, and a script still naming
    the old path is refused rather than started afresh.
    Nothing when a file is there (a damaged original stays as it is) or its folder is gone too."""
    path = pathlib.Path(original)
    if os.path.lexists(path) or not path.parent.is_dir():
        return
    folder = tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        partial = os.path.join(folder, path.name)
        with contextlib.closing(storage.open_store(partial, None, None, None)) as marker, marker.whole():
            for key, value in {**_own(meta, "restore", "sealed", *DERIVED), "sealed": _record(restored, how, True)
                               }.items():
                marker.set_meta(key, value)
        os.link(partial, path)  # never over a file made meanwhile
    except FileExistsError:
        pass
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _new_file(path, what: str) -> pathlib.Path:
    """``path`` as a new SQLite file to write ``what`` to, in an existing folder."""
    path = pathlib.Path(path)
    if path.exists():
        raise ValueError(f"{path} exists: {what} is written to a new path. {UNCHANGED}")
    if not path.absolute().parent.is_dir():
        raise ValueError(f"{path.absolute().parent} is no folder: create it first, or give another path. {UNCHANGED}")
    return path


def _own(meta: dict, how: str, *also: str) -> dict:
    """``meta`` without what a move drops: a restore drops the backup's ``backup_of`` (and ``also``)."""
    dropped = {*also, *(("backup_of",) if how == "restore" else ())}
    return {key: value for key, value in meta.items() if key not in dropped}


def _sealed(meta: dict) -> dict | None:
    return json.loads(meta["sealed"]) if "sealed" in meta else None


def _record(to: str, how: str, done: bool) -> str:
    """A ``sealed`` record: where the ledger that charges is, by which command, whether it finished."""
    return json.dumps({"to": to, "by": how, "done": done, "at": now()})


def _not_a_backup(name: str) -> str:
    return (f"{name} is no backup (it has no backup_of record; `dpledger ledger backup` writes one): to move a "
            f"ledger, use `dpledger ledger copy`. {UNCHANGED}")


def _amount(view: Accountant) -> str:
    count = len(view.ledger)
    return f"{count} charge{'' if count == 1 else 's'}, spent {view.spent}"
