"""A ledger in a PostgreSQL database, shared by clients on any machine (psycopg 3).

The same tables and rules as an SQLite file (``sqlstore.SQLStore``). Every charge is one
transaction that first takes ``SELECT ... FOR UPDATE`` on the meta row ``schema``: one row lock
that every writer takes before reading the entries, so charges are decided one after another
against everything committed before (docs/design.md, "The accountant and the ledger schema").
Entry ids are drawn while that lock is held, so they commit in increasing order and a reader that
remembers the last id it saw never skips a row. A database without the tables is refused until
``dpledger ledger init URL`` made them: a typo in a URL never starts a budget afresh.

Every charge, the owner's too, goes through the database functions ``pg_functions`` creates: the
database records the role connected as each entry's analyst and re-checks the budget, and roles
granted ``--analyst`` can write nothing else (``grant``).
"""

from __future__ import annotations

import contextlib
import json

from .. import guarantees as _g
from ..errors import BudgetExceeded, LedgerError, RelationError
from ..relations import Relation
from . import pg_functions as _functions
from .filters import make as make_filter
from .sqlstore import SCHEMA_VERSION, SQLStore, first_line, read_rows

#: what each refusal of the database's functions is, to a client
_REFUSALS = {_functions.SEALED: LedgerError, _functions.MALFORMED: LedgerError, _functions.OVER_BUDGET: BudgetExceeded,
             _functions.OVER_QUOTA: BudgetExceeded, _functions.OTHER_RELATION: RelationError}


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
            schema = connection.execute("SELECT quote_ident(current_schema())").fetchone()[0]
            for statement in (*_functions.TABLES, *_functions.statements(schema)):
                connection.execute(statement)
            connection.execute("INSERT INTO meta VALUES ('schema', %s)", (str(SCHEMA_VERSION),))
    return f"initialised a dpledger ledger (schema {SCHEMA_VERSION}) in {_safe(url)}"


def grant(url: str, role: str, analyst: bool) -> str:
    """Let ``role`` read the ledger at ``url`` (SELECT on its tables) and, for an analyst, charge it
    through its functions (EXECUTE on them, nothing else); a reader loses EXECUTE. Run as its owner."""
    psycopg = _psycopg()
    sql = psycopg.sql
    who = sql.Identifier(role)
    with contextlib.closing(connect(url)) as connection:
        if not _has_schema(connection):
            raise LedgerError(f"{_safe(url)} holds no dpledger ledger: create one with `dpledger ledger init URL`")
        owner = connection.execute("SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class "
                                   "WHERE oid = to_regclass('entries')").fetchone()[0]
        if not owner:  # PostgreSQL would only warn, granting nothing
            raise LedgerError(f"only the owner of the ledger {_safe(url)} grants roles: run `dpledger ledger grant` "
                              "as the role that ran `dpledger ledger init`")
        try:
            with connection.transaction():
                connection.execute(sql.SQL("GRANT SELECT ON meta, entries TO {}").format(who))
                verb = "GRANT EXECUTE ON FUNCTION {} TO {}" if analyst else "REVOKE EXECUTE ON FUNCTION {} FROM {}"
                connection.execute(sql.SQL(verb).format(sql.SQL(_functions.CHARGING), who))
        except psycopg.errors.UndefinedObject:
            raise ValueError(f"there is no role {role!r} on {_safe(url)}: create it first (CREATE ROLE {role} LOGIN "
                             "PASSWORD '...'), then grant it") from None
    what = "charge (through dpledger_append) and read" if analyst else "read (and not charge)"
    return f"role {role} may {what} the ledger {_safe(url)}"


class PostgresStore(SQLStore):
    """A ledger in a PostgreSQL database (module doc). Its analyst is the role connected: the
    database records it with each entry, so a client cannot forge it; a name given must be that role."""

    placeholder = "%s"
    columns = "document, analyst"

    def __init__(self, url: str, budget: _g.Guarantee, filter_: dict, relation: Relation | None,
                 blocks: tuple[str, ...] | None = None, analyst: str | None = None):
        connection = connect(url)
        if not _has_schema(connection):
            connection.close()
            raise LedgerError(f"{_safe(url)} holds no dpledger ledger: create one with `dpledger ledger init URL` "
                              "(a database is never initialised implicitly). Nothing was charged.")
        self.analyst = connection.execute("SELECT session_user").fetchone()[0]
        if analyst is not None and analyst != self.analyst:
            connection.close()
            raise LedgerError(f"{_safe(url)} records the database role as the analyst, and this connection is "
                              f"{self.analyst!r}, not {analyst!r}: connect as that role (its own URL), or give no "
                              "analyst. Nothing was charged.")
        self._url = url
        self.lost_connection = (_psycopg().OperationalError,)
        try:
            super().__init__(_safe(url), connection, budget, filter_, relation, blocks)
        except BaseException:
            connection.close()  # refused at opening: nothing keeps the connection
            raise

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

    def _sql(self, statement: str, params=()):
        psycopg = _psycopg()
        try:
            return super()._sql(statement, params)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise LedgerError(
                f"{self.where}: the role {self.analyst!r} lacks the privilege for this ({first_line(exc)}): a role "
                f"charges once the ledger's owner ran `dpledger ledger grant URL {self.analyst} --analyst`, only the "
                "owner fixes the budget and the relation at first and sets quotas, and reading needs no more than "
                "`dpledger ledger show URL`. Nothing was charged.") from None
        except psycopg.Error as exc:
            refusal = _REFUSALS.get(exc.sqlstate)
            if refusal is None:
                raise
            raise refusal(exc.diag.message_primary) from None

    def set_quota(self, analyst: str, quota: dict) -> None:
        """A quota binds a database role (``session_user``): refused for a name that is no role here, which
        would bind nobody (``CREATE ROLE Alice`` makes the role ``alice``)."""
        if self._sql("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ?", (analyst,)).fetchone() is None:
            raise ValueError(f"there is no role {analyst!r} on {self.where}, and a quota binds the database role that "
                             "charges: give the role's name as session_user shows it (unquoted names are lower "
                             "case). Nothing was changed.")
        super().set_quota(analyst, quota)

    def derived(self, budget: _g.Guarantee, filter_: dict) -> dict:
        """The budget in the filter's currency and its rule, for ``dpledger_append``'s own check."""
        rule = make_filter(filter_["filter"], budget, filter_.get("orders"))
        return {"limits": json.dumps([_functions.decimal_text(x, up=False) for x in rule.limits]),
                "fits": rule.fits_when}

    def _begin(self) -> None:
        self._again(self._lock_ledger)  # repeatable: a transaction dies with its connection

    def _lock_ledger(self) -> None:
        self._connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        try:
            self._sql("SELECT dpledger_lock()")
        except BaseException as exc:
            self._connection.execute("ROLLBACK")  # the transaction ``_write`` never saw begin
            if not isinstance(exc, _psycopg().errors.UndefinedFunction):
                raise
            raise ValueError(f"{self.where} is a ledger of an older schema (it has no dpledger_lock function), not "
                             f"{SCHEMA_VERSION}: keep it for the record (dpledger ledger show reads it) and open a new "
                             "ledger for a new budget") from None

    def _copy_row(self, document: str, price) -> None:
        # a copy keeps who charged (none recorded: empty) and the price; only the owner may write it
        self._sql("INSERT INTO entries (document, analyst, price) VALUES (?, ?, ?::numeric[])",
                  (document, json.loads(document).get("analyst") or "", [_functions.decimal_text(p, up=True) for p in price]))

    def _insert(self, document: str, relation: Relation, price) -> int:
        cost = [_functions.decimal_text(p, up=True) for p in price]
        return self._sql("SELECT dpledger_append(?, ?, ?::text[])", (document, str(relation), cost)).fetchone()[0]


def read(url: str) -> tuple[dict, tuple]:
    """The meta table and the entries of the ledger at ``url``, in one read-only snapshot."""
    with contextlib.closing(connect(url)) as connection:
        if not _has_schema(connection):
            raise LedgerError(f"{_safe(url)} holds no dpledger ledger: create one with `dpledger ledger init URL`")
        try:
            with connection.transaction():
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
                # the analyst column by name through the row's JSON: a schema-2 ledger has none (None);
                # pg_catalog's own to_jsonb, never an overload a role made in a schema it may write to
                rows = connection.execute("SELECT document, pg_catalog.to_jsonb(e) ->> 'analyst' FROM entries e ORDER BY id"
                                          ).fetchall()
        except _psycopg().errors.InsufficientPrivilege as exc:
            raise LedgerError(f"{_safe(url)}: this role may not read the ledger ({first_line(exc)}): its owner grants "
                              "it with `dpledger ledger grant URL ROLE --reader` (or --analyst)") from None
    return meta, read_rows(rows)
