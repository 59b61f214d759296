"""Processes that spend against one durable ledger file (shared by tests/test_durable.py and
benchmarks/ledger_durability.py, which run them under ``multiprocessing``)."""

from __future__ import annotations

import os
import sqlite3

import dpledger as dp


def spender(path, budget, step, attempts, ready, blocks=None) -> None:
    """Open the ledger at ``path``, wait for ``ready``, then try ``attempts`` spends of ``step`` (on
    ``blocks`` of a block ledger, which charges under its own relation)."""
    acct = dp.Accountant.open(path, budget, relation=dp.ReplaceOne() if blocks is None else None)
    ready.wait()
    for i in range(attempts):
        try:
            acct.spend(f"{os.getpid()}-{i}", step, blocks=blocks)
        except dp.BudgetExceeded:
            pass


def spend_together(path, budget, step, attempts, processes, timeout=120.0, start="spawn", blocks=None) -> None:
    """``processes`` spenders (``spender``, started by ``start``: "fork" is faster, "spawn" proves
    nothing is inherited) released at once against the ledger at ``path``; each must exit cleanly."""
    import multiprocessing

    context = multiprocessing.get_context(start)
    ready = context.Event()
    workers = [context.Process(target=spender, args=(path, budget, step, attempts, ready, blocks)) for _ in range(processes)]
    for w in workers:
        w.start()
    ready.set()
    for w in workers:
        w.join(timeout)
        assert w.exitcode == 0


def entries(path) -> int:
    """How many charges the ledger file holds (read directly, as a second process would)."""
    with sqlite3.connect(path, timeout=60) as db:
        return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
