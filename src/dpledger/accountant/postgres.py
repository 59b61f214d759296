"""A ledger in a PostgreSQL database, shared by clients on any machine (psycopg 3).

The same tables and rules as an SQLite file (``sqlstore.SQLStore``). Every charge is one
transaction that first takes ``SELECT ... FOR UPDATE`` on the meta row ``schema``: one row lock
that every writer takes before reading the entries, so charges are decided one after another
against everything committed before (docs/design.md, "The accountant and the ledger schema").
Entry ids are drawn while that lock is held, so they commit in increasing order and a reader that
remembers the last id it saw never skips a row. A database without the tables is refused until
``dpledger ledger init URL`` made them: a typo in a URL never starts a budget afresh.
"""

from __future__ import annotations

import contextlib

from .. import guarantees as _g
from ..errors import LedgerError
from ..relations import Relation
from .sqlstore import SCHEMA_VERSION, SQLStore, first_line, read_rows

_TABLES = ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
           "CREATE TABLE entries (id BIGSERIAL PRIMARY KEY, document TEXT NOT NULL)")


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise ImportError("a postgresql:// ledger needs psycopg 3: pip install 'psycopg[binary]'") from None
    return psycopg


def connect(url: str):
    """An autocommit connection (transactions are begun explicitly), or a one-line error naming the fix."""
    psycopg = _psycopg()
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise LedgerError(f"cannot reach the ledger database {_safe(url)}: {first_line(exc)} (check the URL, the "
                          "server and the credentials). Nothing was charged.") from None


def _safe(url: str) -> str:
    """The URL without its password, for messages."""
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, user = head.partition("//")
    return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"


def _has_schema(connection) -> bool:
    return connection.execute("SELECT to_regclass('meta') IS NOT NULL AND to_regclass('entries') IS NOT NULL"
                              ).fetchone()[0]


def init(url: str) -> str:
    """Make the ledger tables in an empty database (``dpledger ledger init``); the first
    ``Accountant.open`` with a budget then fixes its budget and filter. Refused if they exist."""
    with contextlib.closing(connect(url)) as connection:
        with connection.transaction():
            if _has_schema(connection):
                raise ValueError(f"{_safe(url)} already holds a dpledger ledger: dpledger ledger show reads it")
            for statement in _TABLES:
                connection.execute(statement)
            connection.execute("INSERT INTO meta VALUES ('schema', %s)", (str(SCHEMA_VERSION),))
    return f"initialised a dpledger ledger (schema {SCHEMA_VERSION}) in {_safe(url)}"


class PostgresStore(SQLStore):
    """A ledger in a PostgreSQL database (module doc)."""

    placeholder = "%s"

    def __init__(self, url: str, budget: _g.Guarantee, filter_: dict, relation: Relation | None,
                 blocks: tuple[str, ...] | None = None):
        connection = connect(url)
        if not _has_schema(connection):
            connection.close()
            raise LedgerError(f"{_safe(url)} holds no dpledger ledger: create one with `dpledger ledger init URL` "
                              "(a database is never initialised implicitly). Nothing was charged.")
        self._url = url
        self.lost_connection = (_psycopg().OperationalError,)
        super().__init__(_safe(url), connection, budget, filter_, relation, blocks)

    def _again(self, step):
        """``step()``; if the server dropped the connection since we last used it (a restart), a new
        connection and ``step()`` once more (``connect``'s LedgerError while the server is down)."""
        try:
            return step()
        except self.lost_connection:
            if not self._connection.closed:
                raise
            self._connection = connect(self._url)
            return step()

    def _begin(self) -> None:
        self._again(self._lock_ledger)  # repeatable: a transaction dies with its connection

    def _lock_ledger(self) -> None:
        self._connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        self._connection.execute("SELECT value FROM meta WHERE key = 'schema' FOR UPDATE")

    def _insert(self, document: str) -> int:
        return self._sql("INSERT INTO entries (document) VALUES (?) RETURNING id", (document,)).fetchone()[0]


def read(url: str) -> tuple[dict, tuple]:
    """The meta table and the entries of the ledger at ``url``, in one read-only snapshot."""
    with contextlib.closing(connect(url)) as connection:
        if not _has_schema(connection):
            raise LedgerError(f"{_safe(url)} holds no dpledger ledger: create one with `dpledger ledger init URL`")
        with connection.transaction():
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            rows = connection.execute("SELECT document FROM entries ORDER BY id").fetchall()
    return meta, read_rows(rows)
