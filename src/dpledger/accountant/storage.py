"""Where the ledger lives: in memory, or in an SQLite file shared by processes.

Both offer the same operations to the accountant: ``transaction()`` (a context in which the
budget check and the append are atomic, yielding the entries other writers added since this
store last looked, with ``relation`` read afresh), ``append(entry, relation)`` and ``entries()``.
A store never holds charges under two relations: ``append`` and ``set_relation`` refuse another
relation than the one stored (``RelationError``). The SQLite store makes the check-and-append one
``BEGIN IMMEDIATE`` transaction, so several processes sharing a file can never overspend together,
and commits the charge before the step runs, so a crash after it never loses it.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import sqlite3
import threading
from typing import Iterator

from .. import guarantees as _g
from ..errors import RelationError
from ..relations import Relation, from_name
from .entries import LedgerEntry

#: 2: the session's filter replaced the composition mode (``filter``, a JSON object: name and
#: fixed parameters); entries gained ``charged`` and ``prepaid``.
SCHEMA_VERSION = 2


class MemoryStore:
    """Entries in a list; the accountant's lock makes check-and-append atomic (the accountant
    keeps the relation: nobody else writes here)."""

    relation = None

    def __init__(self):
        self._entries: list[LedgerEntry] = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[list[LedgerEntry]]:
        yield []  # nobody else writes here

    def append(self, entry: LedgerEntry, relation: Relation | None = None) -> None:
        with self._lock:
            self._entries.append(entry)

    def entries(self) -> tuple[LedgerEntry, ...]:
        with self._lock:
            return tuple(self._entries)


class SQLStore:
    """A ledger in a database: a ``meta`` table (budget, filter, relation, schema version) and an
    append-only ``entries`` table with one JSON document per charge. Subclasses say how to connect,
    how to begin a transaction that serialises against every other writer (``_begin``), how to
    insert a row and which placeholder they use; every rule of the ledger lives here, once."""

    placeholder = "?"

    def __init__(self, where: str, connection, budget: _g.Guarantee, filter_: dict, relation: Relation | None):
        self.where = where
        self._connection = connection
        self._lock = threading.RLock()
        self._seen = 0
        self.relation = self._initialise(budget, filter_, relation)

    @property
    def path(self) -> str:
        return self.where  # what messages and the book name the ledger by

    def _sql(self, statement: str, params=()):
        return self._connection.execute(statement.replace("?", self.placeholder), params)

    def _create(self) -> None:
        """Make the tables if the ledger may be created here (an SQLite file); a database must be
        initialised with ``dpledger ledger init`` first."""

    def _insert(self, document: str) -> int:
        raise NotImplementedError

    def _initialise(self, budget, filter_, relation) -> Relation | None:
        wanted = {"budget": json.dumps(_g.to_dict(budget)), "filter": json.dumps(filter_, sort_keys=True),
                  "schema": str(SCHEMA_VERSION)}
        with self._write():
            stored = dict(self._sql("SELECT key, value FROM meta").fetchall())
            if set(stored) <= {"schema"} and stored.get("schema", wanted["schema"]) == wanted["schema"]:
                for key, value in wanted.items():
                    if key not in stored:
                        self._sql("INSERT INTO meta VALUES (?, ?)", (key, value))
                if relation is not None:
                    self._sql("INSERT INTO meta VALUES ('relation', ?)", (str(relation),))
                return relation
            if stored.get("schema") != wanted["schema"]:
                raise ValueError(
                    f"{self.where} is a ledger of schema {stored.get('schema')}, not {SCHEMA_VERSION}: it was "
                    "written by another dpledger version. Keep it for the record (dpledger ledger show reads "
                    "it) and open a new ledger for a new budget"
                )
            for key, text in (("budget", lambda v: f"the budget {_g.from_dict(json.loads(v))}"), ("filter", filter_text)):
                if stored.get(key) != wanted[key]:
                    raise ValueError(
                        f"{self.where} was created with {text(stored[key])}, not {text(wanted[key])}: a ledger "
                        "keeps its budget and filter for life (open a new ledger for a new budget)"
                    )
            saved = from_name(stored["relation"]) if "relation" in stored else None
            if relation is not None and saved is not None and relation != saved:
                raise RelationError(f"{self.where} charges under {saved}, not {relation}")
            if saved is None and relation is not None:
                self._sql("INSERT INTO meta VALUES ('relation', ?)", (str(relation),))
            return saved or relation

    def _begin(self) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction; a rollback also rolls back what this store has seen (a row read
        or inserted in it is read again next time: another writer may reuse a rolled-back id)."""
        with self._lock:
            seen, relation = self._seen, getattr(self, "relation", None)
            self._begin()
            try:
                yield
            except BaseException:
                self._connection.execute("ROLLBACK")
                self._seen, self.relation = seen, relation
                raise
            self._connection.execute("COMMIT")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[list[LedgerEntry]]:
        """Holds the ledger's write lock: yields entries written since we last looked, with
        ``relation`` read again from the ledger (another process may have fixed it since)."""
        with self._write():
            self.relation = self._stored_relation()
            rows = self._sql("SELECT id, document FROM entries WHERE id > ? ORDER BY id", (self._seen,)).fetchall()
            if rows:
                self._seen = rows[-1][0]
            yield [LedgerEntry.from_dict(json.loads(document)) for _, document in rows]

    def _stored_relation(self) -> Relation | None:
        row = self._sql("SELECT value FROM meta WHERE key = 'relation'").fetchone()
        return None if row is None else from_name(row[0])

    def append(self, entry: LedgerEntry, relation: Relation) -> None:
        """Inside ``transaction()``: the charge under ``relation`` (fixing the ledger's relation if it is
        still open); the row is committed when the transaction ends."""
        self.set_relation(relation)
        self._seen = self._insert(json.dumps(entry.to_dict()))

    def set_relation(self, relation: Relation) -> None:
        """Inside ``transaction()``: fix the ledger's relation, or check it is the one already fixed."""
        stored = self._stored_relation()
        if stored is None:
            self._sql("INSERT INTO meta VALUES ('relation', ?)", (str(relation),))
        elif stored != relation:
            raise RelationError(f"{self.where} charges under {stored}, not {relation}: guarantees under different "
                                "relations do not compose. Nothing was charged.")
        self.relation = relation

    def entries(self) -> tuple[LedgerEntry, ...]:
        with self._lock:
            rows = self._sql("SELECT document FROM entries ORDER BY id").fetchall()
        return read_rows(rows)

    def close(self) -> None:
        with self._lock:
            self._connection.close()


class SQLiteStore(SQLStore):
    """An SQLite ledger file; ``BEGIN IMMEDIATE`` takes the file's one write lock."""

    def __init__(self, path: str | pathlib.Path, budget: _g.Guarantee, filter_: dict,
                 relation: Relation | None):
        connection = sqlite3.connect(path, timeout=120.0, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.execute("CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                           "document TEXT NOT NULL)")
        super().__init__(str(path), connection, budget, filter_, relation)

    def _begin(self) -> None:
        self._connection.execute("BEGIN IMMEDIATE")

    def _insert(self, document: str) -> int:
        return self._sql("INSERT INTO entries (document) VALUES (?)", (document,)).lastrowid


def is_url(where) -> bool:
    """Whether a ledger is named by a PostgreSQL URL rather than a file path."""
    return isinstance(where, str) and where.startswith(("postgresql://", "postgres://"))


def open_store(where, budget, filter_, relation) -> SQLStore:
    """The store a ledger's name selects: a ``postgresql://`` URL or an SQLite file path."""
    if is_url(where):
        from .postgres import PostgresStore

        return PostgresStore(where, budget, filter_, relation)
    return SQLiteStore(where, budget, filter_, relation)


def filter_text(spec: str | dict) -> str:
    """A stored filter in words: "the 'rdp' filter (orders 1.5, 2, ...)"."""
    spec = json.loads(spec) if isinstance(spec, str) else spec
    rest = ", ".join(f"{key} {', '.join(f'{v:g}' for v in value) if isinstance(value, list) else value}"
                     for key, value in spec.items() if key != "filter")
    return f"the {spec['filter']!r} filter" + (f" ({rest})" if rest else "")


def settings(path: str | pathlib.Path) -> dict | None:
    """What an existing ledger file fixed at creation (``budget``, ``filter``, ``orders``, ``relation``),
    or None when there is no file at ``path``."""
    if is_url(path):
        from .postgres import read as read_database

        meta, _ = read_database(path)
        return None if "budget" not in meta else _settings(meta)
    if not pathlib.Path(path).exists():
        return None
    meta, _ = read(path)
    return _settings(meta)


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
        raise ValueError(f"no ledger file at {path}")
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            rows = db.execute("SELECT document FROM entries ORDER BY id").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path} is not a dpledger ledger file: {exc}") from None
    return meta, read_rows(rows)


def read_rows(rows) -> tuple[LedgerEntry, ...]:
    """Entries from their stored JSON documents, in order."""
    return tuple(LedgerEntry.from_dict(json.loads(document)) for (document,) in rows)
