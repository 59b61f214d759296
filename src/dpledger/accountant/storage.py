"""Where the ledger lives: in memory, in an SQLite file shared by processes, or in a PostgreSQL
database shared by machines (``postgres``; the rules both keep are in ``sqlstore``).

Both offer the same operations to the accountant: ``transaction()`` (a context in which the
budget check and the append are atomic, yielding the entries other writers added since this
store last looked, with ``relation`` and ``quotas`` read afresh), ``append(entry, relation, price)``
and ``entries()``; each records who charges (``analyst``).
A store never holds charges under two relations: ``append`` and ``set_relation`` refuse another
relation than the one stored (``RelationError``). The SQLite store makes the check-and-append one
``BEGIN IMMEDIATE`` transaction, so several processes sharing a file can never overspend together,
and commits the charge before the step runs, so a crash after it never loses it.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import pathlib
import sqlite3
import threading
from typing import Iterator

from .. import guarantees as _g
from ..relations import Relation, from_name
from ..errors import LedgerCorrupt, LedgerError
from .entries import LedgerEntry
from .sqlstore import SCHEMA_VERSION, SQLStore, filter_text, read_rows  # noqa: F401 - their documented home


class MemoryStore:
    """Entries in a list; the accountant's lock makes check-and-append atomic (the accountant
    keeps the relation: nobody else writes here)."""

    relation = None
    blocks = None  # an accountant in memory has one ledger-wide budget
    analyst = None  # nobody else charges here
    quotas: dict = {}

    def __init__(self):
        self._entries: list[LedgerEntry] = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[list[LedgerEntry]]:
        yield []  # nobody else writes here

    def append(self, entry: LedgerEntry, relation: Relation | None = None, price=()) -> None:
        with self._lock:
            self._entries.append(entry)

    def entries(self) -> tuple[LedgerEntry, ...]:
        with self._lock:
            return tuple(self._entries)


class SQLiteStore(SQLStore):
    """An SQLite ledger file; ``BEGIN IMMEDIATE`` takes the file's one write lock. Its analyst is a
    declared name (default: the OS user): whoever can write the file can write anything in it. A
    schema-2 file is upgraded when opened for charging: schema 3 added only meta keys and entry fields."""

    upgradable = ("2",)

    def __init__(self, path: str | pathlib.Path, budget: _g.Guarantee, filter_: dict,
                 relation: Relation | None, blocks: tuple[str, ...] | None = None, analyst: str | None = None):
        self.analyst = declared_analyst(analyst)
        if pathlib.Path(path).exists():
            read(path)  # an existing file must already be a ledger (LedgerCorrupt otherwise): never initialised
        connection = sqlite3.connect(path, timeout=120.0, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.execute("CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                           "document TEXT NOT NULL)")
        super().__init__(str(path), connection, budget, filter_, relation, blocks)

    def derived(self, budget: _g.Guarantee, filter_: dict) -> dict:
        """The file's home: the path it was made at (a copy elsewhere refuses to charge: ``_check_home``)."""
        return {"home": name(self.where)}

    def _check_home(self, stored: dict) -> None:
        """A ledger charges only at its home: a ``cp`` of a closed ledger holds every charge, and two files
        charging one budget would spend it twice. A file of an earlier version takes its path as its home."""
        here, home = name(self.where), stored.get("home")
        if home is None:
            self._sql("INSERT INTO meta VALUES ('home', ?)", (here,))
        elif home != here:
            raise LedgerError(f"{here} is a copy of the ledger at {home}: two files charging one budget would spend "
                              f"it twice. Charge {home}; move a ledger with `dpledger ledger copy` (it seals the old "
                              f"one), and after a mv, take the file on with `dpledger ledger adopt {here}` once {home} "
                              "holds no ledger. Nothing was charged.")

    def _begin(self) -> None:
        self._connection.execute("BEGIN IMMEDIATE")

    def _insert(self, document: str, relation: Relation, price) -> int:
        self.set_relation(relation)
        return self._sql("INSERT INTO entries (document) VALUES (?)", (document,)).lastrowid


def declared_analyst(name: str | None) -> str:
    """The name an SQLite ledger records its charges under: the one given, else the OS user's."""
    if name is None:
        try:
            name = getpass.getuser()
        except (OSError, KeyError):  # no login name in the environment or the password database
            raise ValueError("cannot tell who is charging (no OS user name): give Accountant.open(..., "
                             "analyst=NAME) or --analyst NAME. Nothing was charged.") from None
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise ValueError(f"analyst must be a non-empty printable name, got {name!r}. Nothing was charged.")
    return name


def is_url(where) -> bool:
    """Whether a ledger is named by a PostgreSQL URL rather than a file path."""
    return isinstance(where, str) and where.startswith(("postgresql://", "postgres://"))


def name(where) -> str:
    """How a record names a ledger for good: a file by its resolved absolute path, a database by its URL
    without the password."""
    if is_url(where):
        from .postgres import _safe

        return _safe(where)
    return str(pathlib.Path(where).resolve())  # symlinks followed: one file, one name


def open_store(where, budget, filter_, relation, blocks=None, analyst: str | None = None) -> SQLStore:
    """The store a ledger's name selects: a ``postgresql://`` URL or an SQLite file path; ``analyst``
    is who charges (on PostgreSQL, the role connected, which a name given must match)."""
    if is_url(where):
        from .postgres import PostgresStore

        return PostgresStore(where, budget, filter_, relation, blocks, analyst)
    return SQLiteStore(where, budget, filter_, relation, blocks, analyst)


def settings(path: str | pathlib.Path) -> dict | None:
    """What an existing ledger file fixed at creation (``budget``, ``filter``, ``orders``, ``relation``),
    or None when there is no file at ``path`` or the ledger has no budget yet."""
    if not is_url(path) and not pathlib.Path(path).exists():
        return None
    meta, _ = read(path)
    return None if "budget" not in meta else _settings(meta)


def _settings(meta: dict) -> dict:
    spec = json.loads(meta["filter"]) if "filter" in meta else {"filter": "basic"}
    return {"budget": _g.from_dict(json.loads(meta["budget"])), "filter": spec["filter"], "orders": spec.get("orders"),
            "relation": from_name(meta["relation"]) if "relation" in meta else None}


def read(path: str | pathlib.Path) -> tuple[dict, tuple[LedgerEntry, ...]]:
    """The meta table and the entries of a ledger (file or URL), read-only (for ``dpledger ledger show``)."""
    if is_url(path):
        from .postgres import read as read_database

        return read_database(path)
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"no ledger file at {path}" if not path.exists() else
                         f"{path} is not a file: a ledger is a file (or a postgresql:// URL)")
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            rows = db.execute("SELECT document FROM entries ORDER BY id").fetchall()
    except sqlite3.DatabaseError as exc:
        what = "an empty file" if path.stat().st_size == 0 else f"unreadable as a ledger ({exc})"
        raise LedgerCorrupt(f"{path} is not a dpledger ledger file: {what}. An existing file is never made a "
                            "ledger: restore the ledger from its backup, or give a new path for a new "
                            "budget. Nothing was charged.") from None
    return meta, read_rows(rows)
