"""Embedded PostgreSQL servers (the ``pgserver`` package: its own binaries, run as an unprivileged
user when we are root) for the ledger tests (tests/conftest.py) and benchmarks/ledger_durability.py:
start one in a fresh folder, make a database, stop it and start it again on the same data."""

from __future__ import annotations

import shutil
import tempfile


def start():
    """A server with a fresh data directory (about 1 s); ``discard`` it when done."""
    import pgserver  # the test extra; an ImportError here fails whatever needs it

    return pgserver.get_server(tempfile.mkdtemp(prefix="dpledger-pg-"), cleanup_mode=None)


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
