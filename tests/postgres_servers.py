"""Embedded PostgreSQL servers (the ``pgserver`` package: its own binaries, run as an unprivileged
user when we are root) for the ledger tests (tests/conftest.py) and benchmarks/ledger_durability.py:
start one in a fresh folder, make a database, stop it and start it again on the same data.

pgserver trusts every connection; ours trusts only the superuser ``postgres`` (whose URL carries no
password) and asks every other role for its SCRAM password, as a shared ledger's server does, so a
wrong password is refused (tests/test_stores.py)."""

from __future__ import annotations

import pathlib
import shutil
import tempfile
import time


def start():
    """A server with a fresh data directory (about 1 s); ``discard`` it when done."""
    import pgserver  # the test extra; an ImportError here fails whatever needs it

    server = pgserver.get_server(tempfile.mkdtemp(prefix="dpledger-pg-"), cleanup_mode=None)
    _check_passwords(server)
    return server


#: who may connect how: the superuser without a password (the first matching line wins), everyone
#: else with their SCRAM password; on a socket (Linux, macOS) or on the loopback address (Windows)
_ACCESS = """\
local all postgres trust
local all all scram-sha-256
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
"""


def _check_passwords(server) -> None:
    """Replace pgserver's trust-everyone access rules by ``_ACCESS`` and make the server read them."""
    pgdata = pathlib.Path(server.pgdata)
    (pgdata / "pg_hba.conf").write_text(_ACCESS)  # rewritten in place: it keeps the server's owner
    with (pgdata / "postgresql.conf").open("a") as settings:  # the marker says the server has read both files
        settings.write("password_encryption = 'scram-sha-256'\ndpledger.access = 'passwords'\n")
    server.psql("SELECT pg_reload_conf();")
    for _ in range(100):  # the server reloads on its own time: wait until a new connection sees it (ms)
        if "passwords" in server.psql("SHOW dpledger.access;"):
            return
        time.sleep(0.05)
    raise RuntimeError(f"the test PostgreSQL server in {pgdata} did not reload its access rules")


def database(server, name: str) -> str:
    """The URL of a new, empty database ``name`` on ``server`` (no ledger tables yet)."""
    server.psql(f"CREATE DATABASE {name};")
    return server.get_uri(name)


def stop(server, mode: str = "immediate") -> None:
    """Stop the server: ``immediate`` skips the shutdown checkpoint (a smart stop spent 15 s writing
    out the test databases), ``fast`` is an administrator's clean stop; clients are disconnected."""
    from pgserver._commands import pg_ctl

    pg_ctl(["-w", "-m", mode, "stop"], pgdata=server.pgdata, user=server.system_user)


def restart(server) -> None:
    """Start a stopped server again on its data directory, listening where it did (same URLs)."""
    with server._lock:  # pgserver's own start, under the lock it takes for it
        server.ensure_postgres_running()


def discard(server) -> None:
    """Stop the server, running or stopped, and delete its data directory."""
    restart(server)  # nothing when it runs: a stopped one is started, so that one stop fits both
    server.cleanup()  # forgets pgserver's handle (started with cleanup_mode=None: stops nothing)
    stop(server)
    shutil.rmtree(server.pgdata, ignore_errors=True)
