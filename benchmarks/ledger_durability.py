"""Durable ledger figures (issue 5): concurrent spenders, SIGKILL, and the cost of a durable charge.

1. 8 processes × 500 spends against one ledger file whose budget allows exactly 1000: how many
   are recorded (must be exactly 1000), and whether the file's spent budget equals the sum.
2. The same with processes SIGKILLed at random moments: file integrity and consistency.
3. Median time per spend: in-memory accountant vs SQLite-backed, side by side in one run.

Run: python benchmarks/ledger_durability.py. Writes results/ledger_durability.{json,md}.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pathlib
import signal
import sqlite3
import statistics
import sys
import tempfile
import time

import numpy as np

import dpledger as dp

from _common import write

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from spending import entries, spender  # noqa: E402

STEP = dp.PureDP(0.001)
BUDGET = dp.PureDP(1.0)  # exactly 1000 steps fit: fsum(1000 × fl(0.001)) rounds to 1.0


def check(path) -> dict:
    acct = dp.Accountant.open(path, BUDGET)
    with sqlite3.connect(path) as db:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    entries = acct.ledger.entries
    total = math.fsum(e.guarantee.epsilon for e in entries)
    return {"recorded": len(entries), "unique_names": len({e.name for e in entries}), "integrity": integrity,
            "spent_epsilon": acct.spent.epsilon, "sum_of_entries": total,
            "consistent": acct.spent.epsilon == total and total <= BUDGET.epsilon}


def run_workers(path, processes, attempts, kill_after_entries=None, seed=0):
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    workers = [context.Process(target=spender, args=(path, BUDGET, STEP, attempts, ready)) for _ in range(processes)]
    for w in workers:
        w.start()
    start = time.perf_counter()
    ready.set()
    killed = 0
    if kill_after_entries is not None:
        rng = np.random.default_rng(seed)
        for w in workers:
            threshold = int(rng.integers(*kill_after_entries))
            while entries(path) < threshold and w.is_alive():
                time.sleep(0.01)
            os.kill(w.pid, signal.SIGKILL)
            killed += 1
    for w in workers:
        w.join()
    return time.perf_counter() - start, killed


def overhead(spends=300) -> dict:
    timings = {}
    with tempfile.TemporaryDirectory() as folder:
        accountants = {"memory": dp.Accountant(dp.PureDP(1e6), relation=dp.ReplaceOne()),
                       "sqlite": dp.Accountant.open(os.path.join(folder, "o.sqlite"), dp.PureDP(1e6),
                                                    relation=dp.ReplaceOne())}
        for name, acct in accountants.items():
            times = []
            for i in range(spends):
                start = time.perf_counter()
                acct.spend(f"s{i}", STEP)
                times.append(time.perf_counter() - start)
            timings[name] = statistics.median(times)
    return {"median_seconds": timings, "ratio_sqlite_over_memory": timings["sqlite"] / timings["memory"]}


def main():
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "concurrent.sqlite")
        dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).close()
        seconds, _ = run_workers(path, 8, 500)
        results["concurrent"] = {"processes": 8, "attempts_each": 500, "seconds": seconds, **check(path)}

        path = os.path.join(folder, "killed.sqlite")
        dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).close()
        seconds, killed = run_workers(path, 8, 500, kill_after_entries=(10, 900))
        results["sigkill"] = {"processes": 8, "killed": killed, "seconds": seconds, **check(path)}
    results["overhead"] = overhead()

    c, k, o = results["concurrent"], results["sigkill"], results["overhead"]
    lines = [
        "| scenario | recorded | unique | integrity | spent ε = Σ entries ≤ 1 |",
        "|---|---|---|---|---|",
        f"| 8 processes × 500 spends, budget for 1000 | {c['recorded']} | {c['unique_names']} | {c['integrity']} | {c['consistent']} |",
        f"| same, {k['killed']} processes SIGKILLed mid-run | {k['recorded']} | {k['unique_names']} | {k['integrity']} | {k['consistent']} |",
        "",
        f"Median time per spend: in-memory {o['median_seconds']['memory'] * 1e6:.0f} µs, SQLite "
        f"{o['median_seconds']['sqlite'] * 1e6:.0f} µs (×{o['ratio_sqlite_over_memory']:.0f}; WAL, synchronous=FULL).",
    ]
    write("ledger_durability", results, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
