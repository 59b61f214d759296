"""Test configuration: hypothesis is derandomised everywhere, so every run checks the same cases."""

import os
import tempfile

from hypothesis import HealthCheck, settings

# the estimators listing's cache (dpledger.catalogue) in a folder of the test run's own
os.environ.setdefault("DPLEDGER_CACHE", tempfile.mkdtemp(prefix="dpledger-cache-"))

settings.register_profile(
    "dpledger", derandomize=True, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("dpledger")

pytest_plugins = ["pytester"]  # tests/test_testing.py runs the plugin in a fresh pytest


# --- a real PostgreSQL server for the ledger tests -------------------------------------------------
# One embedded server (pgserver: its own binaries, started as an unprivileged user when run as root)
# per pytest process, so each xdist worker has its own data directory and nothing is shared between
# workers; each test gets a fresh database. A failed start is an error, never a skip.

import itertools  # noqa: E402

import pytest  # noqa: E402

import postgres_servers  # noqa: E402

_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server of this test process (about 1 s to start), stopped at the end."""
    server = postgres_servers.start()
    yield server
    postgres_servers.discard(server)


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of a fresh, empty database on the test process's server (no ledger tables yet)."""
    return postgres_servers.database(postgres_server, f"t{os.getpid()}_{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger(request, tmp_path):
    """Where a new ledger lives: a file path, or the URL of an initialised empty database."""
    if request.param == "sqlite":
        return str(tmp_path / "l.sqlite")
    from dpledger.accountant.postgres import init

    url = request.getfixturevalue("postgres_url")
    init(url)
    return url


@pytest.fixture
def postgres_role(postgres_server, postgres_url):
    """``as_role(name)``: the URL of ``postgres_url``'s database for the login role ``name``, made on
    the server the first time (roles belong to the server; what they may do, to each database)."""
    def as_role(name: str) -> str:
        postgres_server.psql(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{name}') THEN "
                             f"CREATE ROLE {name} LOGIN PASSWORD 'pw-{name}'; END IF; END $$;")
        return postgres_url.replace("postgres:@", f"{name}:pw-{name}@", 1)

    return as_role


@pytest.fixture(autouse=True)
def _close_accountants(monkeypatch):
    """Every durable accountant a test opens (itself, through a doc's code or ``cli.main``) is closed when
    the test ends. An accountant left open keeps its ledger connection until a later garbage collection
    finalises it (an Accountant is a reference cycle), and a psycopg connection's ResourceWarning then
    lands in whatever test runs at that moment (tests/test_cli_inputs.py records every warning)."""
    from dpledger.accountant.accountant import Accountant

    opened = []
    open_ = Accountant.open.__func__

    def tracked(cls, *args, **kwargs):
        accountant = open_(cls, *args, **kwargs)
        opened.append(accountant)
        return accountant

    monkeypatch.setattr(Accountant, "open", classmethod(tracked))
    yield
    for accountant in opened:
        accountant.close()
