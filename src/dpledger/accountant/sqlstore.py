"""The rules every database ledger keeps, written once: an SQLite file (``storage.SQLiteStore``)
and a PostgreSQL database (``postgres.PostgresStore``) differ only in how they connect, begin a
transaction that serialises against every other writer, and insert a row."""

from __future__ import annotations

import abc
import contextlib
import json
import threading
from typing import Iterator

from .. import guarantees as _g
from ..errors import RelationError
from ..relations import Relation, from_name
from .entries import LedgerEntry

#: 2: the session's filter replaced the composition mode (``filter``, a JSON object: name and
#: fixed parameters); entries gained ``charged`` and ``prepaid``.
#: 3 (analysts): entries gained ``analyst``; meta gained ``quotas``; PostgreSQL gained the columns
#: entries.analyst and entries.price, meta ``limits`` and ``fits``, and the functions dpledger_lock/_append.
SCHEMA_VERSION = 3


class SQLStore(abc.ABC):
    """A ledger in a database: a ``meta`` table (budget, filter, relation, schema version) and an
    append-only ``entries`` table with one JSON document per charge. Subclasses say how to connect,
    how to begin a transaction that serialises against every other writer (``_begin``), how to
    insert a row and which placeholder they use; every rule of the ledger lives here, once."""

    placeholder = "?"
    columns = "document"  # what a row of entries is read as (``read_rows``)
    analyst: str | None = None  # who charges through this store (recorded with each entry)

    def __init__(self, where: str, connection, budget: _g.Guarantee, filter_: dict, relation: Relation | None):
        self.where = where
        self._connection = connection
        self._lock = threading.RLock()
        self._seen = 0
        self.quotas: dict = {}  # analyst -> their quota's document, as read in the last transaction
        self.relation = self._initialise(budget, filter_, relation)

    @property
    def path(self) -> str:
        return self.where  # what messages and the book name the ledger by

    def _sql(self, statement: str, params=()):
        return self._connection.execute(statement.replace("?", self.placeholder), params)

    def _create(self) -> None:
        """Make the tables if the ledger may be created here (an SQLite file); a database must be
        initialised with ``dpledger ledger init`` first."""

    @abc.abstractmethod
    def _insert(self, document: str, relation: Relation, price) -> int:
        """Append one entry's JSON document, charged under ``relation`` (fixing the ledger's if it is
        still open) at ``price`` (the filter's, exact), inside the open transaction; its new id."""

    def _derived(self, budget: _g.Guarantee, filter_: dict) -> dict:
        """Meta rows the store keeps beside the budget when it is fixed (none here)."""
        return {}

    def _initialise(self, budget, filter_, relation) -> Relation | None:
        wanted = {"budget": json.dumps(_g.to_dict(budget)), "filter": json.dumps(filter_, sort_keys=True),
                  "schema": str(SCHEMA_VERSION), **self._derived(budget, filter_)}
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

    @abc.abstractmethod
    def _begin(self) -> None:
        """Begin a transaction that serialises against every other writer of this ledger."""

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
            self.quotas = self._stored_quotas()
            rows = self._sql(f"SELECT id, {self.columns} FROM entries WHERE id > ? ORDER BY id", (self._seen,)).fetchall()
            if rows:
                self._seen = rows[-1][0]
            yield list(read_rows(row[1:] for row in rows))

    def _stored_relation(self) -> Relation | None:
        row = self._sql("SELECT value FROM meta WHERE key = 'relation'").fetchone()
        return None if row is None else from_name(row[0])

    def _stored_quotas(self) -> dict:
        row = self._sql("SELECT value FROM meta WHERE key = 'quotas'").fetchone()
        return {} if row is None else json.loads(row[0])

    def append(self, entry: LedgerEntry, relation: Relation, price) -> None:
        """Inside ``transaction()``: the charge under ``relation`` (fixing the ledger's relation if it is
        still open) at the filter's ``price``; the row is committed when the transaction ends."""
        self._seen = self._insert(json.dumps(entry.to_dict()), relation, price)
        self.relation = relation

    def set_quota(self, analyst: str, quota: dict) -> None:
        """Record ``analyst``'s quota (``quotas.document``) in the ledger's meta, in one write transaction."""
        with self._write():
            quotas = {**self._stored_quotas(), analyst: quota}
            self._sql("INSERT INTO meta VALUES ('quotas', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                      (json.dumps(quotas, sort_keys=True),))
            self.quotas = quotas

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
            rows = self._sql(f"SELECT {self.columns} FROM entries ORDER BY id").fetchall()
        return read_rows(rows)

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def filter_text(spec: str | dict) -> str:
    """A stored filter in words: "the 'rdp' filter (orders 1.5, 2, ...)"."""
    spec = json.loads(spec) if isinstance(spec, str) else spec
    rest = ", ".join(f"{key} {', '.join(f'{v:g}' for v in value) if isinstance(value, list) else value}"
                     for key, value in spec.items() if key != "filter")
    return f"the {spec['filter']!r} filter" + (f" ({rest})" if rest else "")


def read_rows(rows) -> tuple[LedgerEntry, ...]:
    """Entries from their stored rows, in order: a JSON document, and on PostgreSQL the analyst the
    database recorded beside it, which is the entry's analyst whatever the document says."""
    return tuple(_entry(*row) for row in rows)


def _entry(document: str, analyst: str | None = None) -> LedgerEntry:
    data = json.loads(document)
    return LedgerEntry.from_dict(data if analyst is None else {**data, "analyst": analyst})
