"""The rules every database ledger keeps, written once: an SQLite file (``storage.SQLiteStore``)
and a PostgreSQL database (``postgres.PostgresStore``) differ only in how they connect, begin a
transaction that serialises against every other writer, and insert a row."""

from __future__ import annotations

import abc
import contextlib
import datetime as _dt
import json
import threading
from typing import Iterator

from .. import guarantees as _g
from ..errors import LedgerError, RelationError
from ..relations import Relation, from_name
from . import blocks as _blocks
from .entries import LedgerEntry

#: 2: the session's filter replaced the composition mode (``filter``, a JSON object: name and
#: fixed parameters); entries gained ``charged`` and ``prepaid``.
#: 3: meta keys ``sealed`` (moved, restored or being copied: where the ledger that charges is) and
#: ``backup_of`` (a backup: its original and when), each refusing charges (``moving``); a block
#: ledger's meta key ``blocks`` (a JSON list of its block names, in order of addition) and its
#: entries' ``blocks`` (the blocks each charge paid from); entries' ``analyst``, meta ``quotas``;
#: PostgreSQL: the columns entries.analyst and entries.price, meta ``limits`` and ``fits``, and the
#: functions dpledger_lock/_append (``pg_functions``).
SCHEMA_VERSION = 3
#: meta keys a store derives from the budget for itself (PostgreSQL's for its own check); a copy
#: writes the target's own
DERIVED = ("limits", "fits", "home")


class SQLStore(abc.ABC):
    """A ledger in a database: a ``meta`` table (budget, filter, relation, schema version; a block
    ledger's blocks, ``blocks``: None for a ledger-wide budget; once moved or backed up, the record
    that refuses charges: ``closed``) and an append-only ``entries`` table with one JSON document
    per charge. Subclasses say how to connect, how to begin a transaction that serialises against
    every other writer (``_begin``), how to insert a row and which placeholder they use; every rule
    of the ledger lives here, once."""

    placeholder = "?"
    #: older schema versions this store upgrades in place when a ledger is opened for charging
    upgradable: tuple[str, ...] = ()
    #: the errors of a connection to a database server that went away (none for a file)
    lost_connection: tuple[type[Exception], ...] = ()
    columns = "document"  # what a row of entries is read as (``read_rows``)
    analyst: str | None = None  # who charges through this store (recorded with each entry)

    def __init__(self, where: str, connection, budget: _g.Guarantee | None, filter_: dict | None,
                 relation: Relation | None, blocks: tuple[str, ...] | None = None):
        """``budget`` None: the ledger as it is, nothing checked or fixed (``moving`` reads and writes
        its meta itself, in ``whole()``)."""
        self.where = where
        self._connection = connection
        self._lock = threading.RLock()
        self._seen = 0
        self.quotas: dict = {}  # analyst -> their quota's document, as read in the last transaction
        self.relation = None if budget is None else self._initialise(budget, filter_, relation, blocks)

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

    def derived(self, budget: _g.Guarantee, filter_: dict) -> dict:
        """Meta rows the store keeps beside the budget when it is fixed (keys among ``DERIVED``; none here)."""
        return {}

    def _check_home(self, stored: dict) -> None:
        """Refuse to charge a copy of a ledger made around the ledger commands (none for a database)."""

    def _initialise(self, budget, filter_, relation, blocks) -> Relation | None:
        wanted = {"budget": json.dumps(_g.to_dict(budget)), "filter": json.dumps(filter_, sort_keys=True),
                  "schema": str(SCHEMA_VERSION), **self.derived(budget, filter_),
                  **({} if blocks is None else {"blocks": json.dumps(list(blocks))})}
        with self._write():
            stored = dict(self._sql("SELECT key, value FROM meta").fetchall())
            if set(stored) <= {"schema"} and stored.get("schema", wanted["schema"]) == wanted["schema"]:
                self.blocks = blocks
                for key, value in wanted.items():
                    if key not in stored:
                        self._sql("INSERT INTO meta VALUES (?, ?)", (key, value))
                if relation is not None:
                    self._sql("INSERT INTO meta VALUES ('relation', ?)", (str(relation),))
                return relation
            _refuse_charges_if_closed(self.where, stored)
            self._check_home(stored)
            if stored.get("schema") in self.upgradable:  # an additive change: the ledger as it was is one of now
                self._sql("UPDATE meta SET value = ? WHERE key = 'schema'", (wanted["schema"],))
                stored["schema"] = wanted["schema"]
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
            self.blocks = _blocks.reopened(self.where, _blocks.stored(stored.get("blocks")), blocks)
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
        or inserted in it is read again next time: another writer may reuse a rolled-back id).
        A connection lost on the way (``lost_connection``) is a one-line ``LedgerError``: before
        the commit nothing was charged; during it the charge may have committed, so its row is
        read again next time, and a retry with its charge id finds it."""
        with self._lock:
            seen, relation, blocks = self._seen, getattr(self, "relation", None), getattr(self, "blocks", None)
            try:
                self._begin()
            except self.lost_connection as exc:
                self._rollback()
                raise self._lost(exc, "Nothing was charged.") from None
            try:
                yield
            except BaseException as exc:
                self._rollback()
                self._seen, self.relation, self.blocks = seen, relation, blocks
                if isinstance(exc, self.lost_connection):
                    raise self._lost(exc, "Nothing was charged.") from None
                raise
            try:
                self._connection.execute("COMMIT")
            except self.lost_connection as exc:
                self._seen, self.relation = seen, relation
                raise self._lost(exc, "The charge may have been recorded: retry it with the same charge_id "
                                 "(dpledger run --charge-id; a recorded id charges nothing).") from None

    def _rollback(self) -> None:
        try:
            self._connection.execute("ROLLBACK")
        except self.lost_connection:
            pass  # the server rolls back the transaction of a connection it lost

    def _lost(self, exc: BaseException, consequence: str = "") -> LedgerError:
        return LedgerError(f"lost the connection to the ledger database {self.where}: {first_line(exc)} (check "
                           f"the server; the next call connects again). {consequence}".rstrip())

    @contextlib.contextmanager
    def transaction(self) -> Iterator[list[LedgerEntry]]:
        """Holds the ledger's write lock: yields entries written since we last looked, with
        ``relation`` and ``blocks`` read again from the ledger (another process may have fixed the
        relation or added blocks since)."""
        with self._write():
            meta = dict(self._sql("SELECT key, value FROM meta").fetchall())
            _refuse_charges_if_closed(self.where, meta)
            self.relation = from_name(meta["relation"]) if "relation" in meta else None
            self.blocks = _blocks.stored(meta.get("blocks"))
            self.quotas = json.loads(meta.get("quotas", "{}"))
            rows = self._sql(f"SELECT id, {self.columns} FROM entries WHERE id > ? ORDER BY id", (self._seen,)).fetchall()
            if rows:
                self._seen = rows[-1][0]
            yield list(read_rows(row[1:] for row in rows))

    def _stored_relation(self) -> Relation | None:
        row = self._sql("SELECT value FROM meta WHERE key = 'relation'").fetchone()
        return None if row is None else from_name(row[0])

    def _stored_blocks(self) -> tuple[str, ...] | None:
        row = self._sql("SELECT value FROM meta WHERE key = 'blocks'").fetchone()
        return _blocks.stored(None if row is None else row[0])

    def _stored_quotas(self) -> dict:
        row = self._sql("SELECT value FROM meta WHERE key = 'quotas'").fetchone()
        return {} if row is None else json.loads(row[0])

    def add_blocks(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """Add blocks to a block ledger, in one transaction (refused for a ledger-wide budget or a
        name it already holds: a block is never reset); all its blocks now."""
        with self._write():
            self.blocks = _blocks.added(self.where, self._stored_blocks(), names)
            self._sql("UPDATE meta SET value = ? WHERE key = 'blocks'", (json.dumps(list(self.blocks)),))
        return self.blocks

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

    @contextlib.contextmanager
    def whole(self) -> Iterator[tuple[dict, list[str]]]:
        """The whole ledger under its write lock, as a charge holds it: the meta table and every
        entry's JSON document in order (``moving`` copies and seals a ledger in it, so no charge
        slips in between); committed when the context ends, rolled back if it raises."""
        with self._write():
            meta = dict(self._sql("SELECT key, value FROM meta").fetchall())
            rows = self._sql(f"SELECT {self.columns} FROM entries ORDER BY id").fetchall()
            yield meta, [json.dumps(_entry(*row).to_dict()) if row[1:] else row[0] for row in rows]

    def set_meta(self, key: str, value: str | None) -> None:
        """Inside ``whole()``: set a meta key's value, or remove the key (None)."""
        self._sql("DELETE FROM meta WHERE key = ?", (key,))
        if value is not None:
            self._sql("INSERT INTO meta VALUES (?, ?)", (key, value))

    def replace_entries(self, documents, prices) -> None:
        """Inside ``whole()``: the entries become ``documents``, in order, as they are (a copy's), each
        at its filter's price (``Book.take``'s)."""
        self._sql("DELETE FROM entries")
        for document, price in zip(documents, prices, strict=True):
            self._copy_row(document, price)

    def _copy_row(self, document: str, price) -> None:
        """Inside ``whole()``: one copied entry, written as it is."""
        self._sql("INSERT INTO entries (document) VALUES (?)", (document,))

    def entries(self) -> tuple[LedgerEntry, ...]:
        with self._lock:
            try:
                rows = self._again(lambda: self._sql(f"SELECT {self.columns} FROM entries ORDER BY id").fetchall())
            except self.lost_connection as exc:
                raise self._lost(exc) from None
        return read_rows(rows)

    def _again(self, step):
        """``step()``, something that may be repeated (nothing sent yet, or a read); a store whose
        server may drop its connection connects again and repeats it."""
        return step()

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def closed(where: str, meta: dict) -> str | None:
    """Why a ledger refuses charges, in words naming the fix (meta ``sealed``: it was moved, or is an
    unfinished copy; ``backup_of``: it is a backup), or None when it charges."""
    if "sealed" in meta:
        sealed = json.loads(meta["sealed"])
        to, how = sealed["to"], sealed["by"]
        if sealed["done"]:
            return f"{where} was {'moved' if how == 'copy' else 'restored'} to {to} on {when(sealed['at'])}: open {to}"
        return (f"{where} is an unfinished {how} of {to} (begun {when(sealed['at'])}): {to} is still the ledger unless "
                f"it says it was moved here; run `dpledger ledger {how} {to} {where}` again to finish it")
    if "backup_of" in meta:
        backup = json.loads(meta["backup_of"])
        return (f"{where} is a backup of {backup['path']} taken {when(backup['at'])}: restore it with "
                f"`dpledger ledger restore {where} DST` (only if the original is lost)")
    return None


def _refuse_charges_if_closed(where: str, meta: dict) -> None:
    why = closed(where, meta)
    if why is not None:
        raise LedgerError(f"{why}. Nothing was charged.")


def now() -> str:
    """The time for a ``sealed`` or ``backup_of`` record: UTC, ISO 8601."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def when(stamp: str) -> str:
    """A recorded time for messages: "2026-12-02 14:30:05 UTC"."""
    return stamp[:19].replace("T", " ") + " UTC"


def filter_text(spec: str | dict) -> str:
    """A stored filter in words: "the 'rdp' filter (orders 1.5, 2, ...)"."""
    spec = json.loads(spec) if isinstance(spec, str) else spec
    rest = ", ".join(f"{key} {', '.join(f'{v:g}' for v in value) if isinstance(value, list) else value}"
                     for key, value in spec.items() if key != "filter")
    return f"the {spec['filter']!r} filter" + (f" ({rest})" if rest else "")


def first_line(exc: BaseException) -> str:
    """An error's first line, for one-line messages."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_rows(rows) -> tuple[LedgerEntry, ...]:
    """Entries from their stored rows, in order: a JSON document, and on PostgreSQL the analyst the
    database recorded beside it, which is the entry's analyst whatever the document says."""
    return tuple(_entry(*row) for row in rows)


def _entry(document: str, analyst: str | None = None) -> LedgerEntry:
    data = json.loads(document)
    return LedgerEntry.from_dict({**data, "analyst": analyst} if analyst else data)
