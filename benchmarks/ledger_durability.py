"""Reliability figures of the durable ledgers, an SQLite file beside a PostgreSQL database (a real
embedded server from ``pgserver``, started as the tests start theirs), in one run:

1. 8 client processes × 500 charges against one budget that admits exactly 1,000: how many are
   recorded (must be 1,000, each once) and whether the spent ε equals the sum of the entries.
2. A client SIGKILLed at a random point inside its charge, 100 times per store: it charges with a
   client-chosen ``charge_id`` and is killed after a delay uniform in [0, 2 × the median charge
   latency]; a fresh client then retries the same id. The ledger must hold each id exactly once:
   recorded before the kill (the retry replays it) or by the retry, never twice.
3. The PostgreSQL server stopped (``pg_ctl stop -m fast``) for 3 s while 4 clients charge in a
   loop, then started again on the same data: charges while it is down must be refused with a
   one-line ``LedgerError`` and charge nothing, the same clients go on after the restart, and
   every charge a client saw succeed is in the ledger exactly once.
4. Charges per second and per-charge latency (p50, p99) with 1, 8 and 32 client processes, each
   making a fixed number of small charges against a big budget; beside them, a bare durable
   INSERT + COMMIT on each store without dpledger, timed in the same run.

Clients are forked processes, each with its own ``Accountant.open``.
Run: python benchmarks/ledger_durability.py [--quick] [--render] (about 3 minutes; --render only
rewrites the md from the json). Writes results/ledger_durability.{json,md}.
"""

from __future__ import annotations

import collections
import contextlib
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
from dpledger.accountant.postgres import connect, init

from _common import options, write

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
import postgres_servers  # noqa: E402
from spending import spend_together  # noqa: E402

QUICK, SAVED = options("ledger_durability", "20 kills instead of 100, 30 charges per throughput client instead "
                       "of 100, a 1 s outage")
STEP = dp.PureDP(0.001)
BUDGET = dp.PureDP(1.0)  # exactly 1000 steps fit: fsum(1000 × fl(0.001)) rounds to 1.0
BIG = dp.PureDP(1e6)  # never reached: the throughput and restart runs measure charging, not refusals
STORES = ("sqlite", "postgresql")
FORK = multiprocessing.get_context("fork")  # a client starts in milliseconds, with dpledger imported


class Ledgers:
    """New, empty ledgers of either store: files in a temporary folder, databases on one server."""

    def __init__(self, folder: str, server):
        self.folder, self.server, self.made = folder, server, 0

    def new(self, store: str, budget: dp.Guarantee) -> str:
        self.made += 1
        if store == "sqlite":
            where = os.path.join(self.folder, f"l{self.made}.sqlite")
        else:
            where = postgres_servers.database(self.server, f"l{self.made}")
            init(where)
        dp.Accountant.open(where, budget, relation=dp.ReplaceOne()).close()
        return where


def totals(where) -> dict:
    """What the ledger holds, read by a new reader: entries, distinct names and ids, spent = Σ entries."""
    read = dp.Accountant.inspect(where)
    entries = list(read.ledger)
    total = math.fsum(e.guarantee.epsilon for e in entries)
    ids = collections.Counter(e.charge_id for e in entries if e.charge_id is not None)
    return {"recorded": len(entries), "unique_names": len({e.name for e in entries}), "ids": ids,
            "spent_epsilon": read.spent.epsilon, "sum_of_entries": total,
            "exact": math.isclose(read.spent.epsilon, total, rel_tol=1e-12, abs_tol=1e-12)
            and total <= read.budget.epsilon}


# -- 1. concurrent clients against a budget for exactly 1000 ----------------------------------------

def concurrent(ledgers: Ledgers, store: str) -> dict:
    where = ledgers.new(store, BUDGET)
    start = time.perf_counter()
    spend_together(where, BUDGET, STEP, 500, 8, timeout=300, start="fork")
    seconds = time.perf_counter() - start
    found = totals(where)
    found.pop("ids")
    return {"processes": 8, "attempts_each": 500, "seconds": seconds, **found,
            "exactly_1000": found["recorded"] == found["unique_names"] == 1000 and found["exact"]}


# -- 2. SIGKILL inside a charge, then a retry of the same charge id ----------------------------------

def killable(where: str, charge_id: str, pipe, linger: bool) -> None:
    """A client: open the ledger, say so, charge ``charge_id`` and report its latency; then wait to
    be killed (``linger``) or exit."""
    acct = dp.Accountant.open(where)
    pipe.send("ready")
    start = time.perf_counter()
    acct.spend(charge_id, STEP, charge_id=charge_id)
    pipe.send(time.perf_counter() - start)
    if linger:
        time.sleep(60)


def client(where: str, charge_id: str, delay: float | None) -> bool | float:
    """Run ``killable`` and SIGKILL it ``delay`` seconds after it starts its charge (never, for None);
    whether it reported its charge done first (its latency, for None)."""
    ours, theirs = FORK.Pipe()
    process = FORK.Process(target=killable, args=(where, charge_id, theirs, delay is not None))
    process.start()
    assert ours.recv() == "ready"
    if delay is None:
        latency = ours.recv()
        process.join()
        return latency
    time.sleep(delay)
    os.kill(process.pid, signal.SIGKILL)
    process.join()
    return ours.poll()


def sigkill(ledgers: Ledgers, store: str, kills: int, rng) -> dict:
    where = ledgers.new(store, BUDGET)
    median = statistics.median(client(where, f"calibrate-{i}", None) for i in range(10))
    completed = replayed = 0
    for i in range(kills):
        charge_id = f"killed-{i}"
        done = client(where, charge_id, float(rng.uniform(0, 2 * median)))
        retry = dp.Accountant.open(where)  # a fresh client, as after a crash
        before = any(e.charge_id == charge_id for e in retry.ledger)
        assert retry.spend(charge_id, STEP, charge_id=charge_id).charge_id == charge_id
        retry.close()
        completed, replayed = completed + done, replayed + before
    ids = totals(where)["ids"]
    killed = [f"killed-{i}" for i in range(kills)]
    result = {"kills": kills, "median_charge_seconds": median, "completed_before_kill": completed,
              "recorded_before_kill": replayed, "recorded_by_retry": kills - replayed,
              "twice": sum(ids[c] > 1 for c in killed), "missing": sum(ids[c] == 0 for c in killed)}
    if store == "sqlite":
        with sqlite3.connect(where) as db:
            result["integrity"] = db.execute("PRAGMA integrity_check").fetchone()[0]
    return result


# -- 3. the PostgreSQL server stopped and started again under charging clients -----------------------

def looping(where: str, prefix: str, stop, out) -> None:
    """A client charging in a loop (one charge per 10 ms) until ``stop``: each outcome with its time.
    A refused charge ("Nothing was charged.") is given up; one in doubt (the connection lost during
    its commit) is retried with its id until it is known to be recorded, as its message says."""
    acct = dp.Accountant.open(where)
    outcomes, number, in_doubt = [], 0, False
    while not stop.is_set():
        charge_id = f"{prefix}-{number}"
        try:
            acct.spend(charge_id, STEP, charge_id=charge_id)
            outcomes.append((time.time(), charge_id, "ok"))
            number, in_doubt = number + 1, False
            time.sleep(0.01)
        except dp.LedgerError as refusal:
            refused = str(refusal).endswith("Nothing was charged.")
            kind = ("refused" if refused else "in doubt") + (" (multi-line)" if "\n" in str(refusal) else "")
            outcomes.append((time.time(), charge_id, kind))
            number, in_doubt = number + (refused and not in_doubt), in_doubt or not refused
            time.sleep(0.05)
        except Exception as other:  # noqa: BLE001 - any other error is a finding, reported
            outcomes.append((time.time(), charge_id, f"other: {type(other).__name__}: {other}"))
            time.sleep(0.05)
    out.put(outcomes)


def restart(ledgers: Ledgers, clients: int, before: float, down: float, after: float) -> dict:
    where = ledgers.new("postgresql", BIG)
    stop, out = FORK.Event(), FORK.Queue()
    workers = [FORK.Process(target=looping, args=(where, f"c{k}", stop, out)) for k in range(clients)]
    for w in workers:
        w.start()
    time.sleep(before)
    stopping = time.time()
    postgres_servers.stop(ledgers.server, "fast")
    stopped = time.time()
    time.sleep(down)
    postgres_servers.restart(ledgers.server)
    started = time.time()
    time.sleep(after)
    stop.set()
    outcomes = [o for _ in workers for o in out.get()]
    for w in workers:
        w.join()
    ids = totals(where)
    kinds = collections.Counter(kind for _, _, kind in outcomes)
    ok = {c for _, c, kind in outcomes if kind == "ok"}
    doubted = {c for _, c, kind in outcomes if kind.startswith("in doubt")}
    refused = {c for _, c, kind in outcomes if kind.startswith("refused")} - doubted
    return {"clients": clients, "seconds_down": started - stopped, "stop_seconds": stopped - stopping,
            "outcomes": dict(kinds),
            "ok_before_stop": sum(t < stopping and k == "ok" for t, _, k in outcomes),
            "ok_after_restart": sum(t > started and k == "ok" for t, _, k in outcomes),
            "clients_charging_after_restart": len({c.split("-")[0] for t, c, k in outcomes
                                                   if t > started and k == "ok"}),
            "refusals_outside_outage": sum(t < stopping or t > started + 1 for t, _, k in outcomes if k != "ok"),
            "refused_but_recorded": sum(ids["ids"][c] > 0 for c in refused), "in_doubt_then_ok": len(doubted & ok),
            "ok_missing": sum(ids["ids"][c] == 0 for c in ok), "ok_twice": sum(ids["ids"][c] > 1 for c in ok),
            "recorded": ids["recorded"], "recorded_not_ok": len(set(ids["ids"]) - ok), "exact": ids["exact"]}


# -- 4. throughput and latency -------------------------------------------------------------------------

def charging(where: str, count: int, ready, out) -> None:
    """A client: open the ledger, wait for the others, make ``count`` small charges, timing each."""
    acct = dp.Accountant.open(where)
    ready.wait()
    start, latencies = time.perf_counter(), []
    for i in range(count):
        begun = time.perf_counter()
        acct.spend(f"{os.getpid()}-{i}", STEP)
        latencies.append(time.perf_counter() - begun)
    out.put((start, time.perf_counter(), latencies))


def throughput(ledgers: Ledgers, store: str, clients: int, count: int) -> dict:
    where = ledgers.new(store, BIG)
    ready, out = FORK.Barrier(clients + 1), FORK.Queue()
    workers = [FORK.Process(target=charging, args=(where, count, ready, out)) for _ in range(clients)]
    for w in workers:
        w.start()
    ready.wait()
    runs = [out.get() for _ in workers]
    for w in workers:
        w.join()
    latencies = np.concatenate([r[2] for r in runs])
    seconds = max(r[1] for r in runs) - min(r[0] for r in runs)
    assert totals(where)["recorded"] == clients * count
    return {"clients": clients, "charges": clients * count, "seconds": seconds,
            "charges_per_second": clients * count / seconds, "p50_ms": 1e3 * float(np.percentile(latencies, 50)),
            "p99_ms": 1e3 * float(np.percentile(latencies, 99))}


def bare_commit(ledgers: Ledgers, store: str, count: int = 100) -> float:
    """Median seconds of one durable INSERT + COMMIT on the store, no dpledger: the floor of a charge."""
    if store == "sqlite":
        db = sqlite3.connect(os.path.join(ledgers.folder, "bare.sqlite"), isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")  # as the ledger file's
    else:
        db = connect(postgres_servers.database(ledgers.server, "bare"))  # the server's defaults: fsync on commit
    with contextlib.closing(db):
        db.execute("CREATE TABLE bare (document TEXT)")
        times = []
        for _ in range(count):
            start = time.perf_counter()
            db.execute("BEGIN")
            db.execute("INSERT INTO bare VALUES ('{}')")
            db.execute("COMMIT")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    if SAVED is not None:
        write("ledger_durability", SAVED, render(SAVED))
        return
    kills, count, outage = (20, 30, 1.0) if QUICK else (100, 100, 3.0)
    rng = np.random.default_rng(0)
    dp.Accountant(BIG, relation=dp.ReplaceOne()).spend("warm-up", STEP)  # forked clients start with all imported
    server = postgres_servers.start()
    results = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "quick": QUICK}
    try:
        with tempfile.TemporaryDirectory() as folder:
            ledgers = Ledgers(folder, server)
            results["concurrent"] = {s: concurrent(ledgers, s) for s in STORES}
            results["sigkill"] = {s: sigkill(ledgers, s, kills, rng) for s in STORES}
            results["restart"] = restart(ledgers, 4, 2.0, outage, 3.0)
            results["bare_commit_seconds"] = {s: bare_commit(ledgers, s) for s in STORES}
            results["throughput"] = {s: [] for s in STORES}
            for clients in (1, 8, 32):  # the stores alternate, so both see the machine's load of the moment
                for s in STORES:
                    results["throughput"][s].append(throughput(ledgers, s, clients, count))
    finally:
        postgres_servers.discard(server)
    markdown = render(results)
    write("ledger_durability", results, markdown)
    print(markdown)


NAMES = {"sqlite": "SQLite file", "postgresql": "PostgreSQL"}


def table(header: list[str], rows: list[list]) -> list[str]:
    """A markdown table's lines."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(map(str, row)) + " |" for row in rows)]


def render(r: dict) -> str:
    x, bare = r["restart"], r["bare_commit_seconds"]
    other = sum(v for k, v in x["outcomes"].items() if k not in ("ok", "refused", "in doubt"))
    ms = "{:.2f} ms".format
    return "\n".join([
        f"Figures taken on a shared 2-core machine (other jobs running), {r['date']}; PostgreSQL is a local "
        "embedded server (pgserver, Unix socket).", "",
        "**Concurrent clients**: 8 processes × 500 charges of ε = 0.001, budget for exactly 1,000.", "",
        *table(["store", "recorded", "distinct", "spent ε", "Σ entries", "exactly 1,000, totals exact", "seconds"],
               [[NAMES[s], c["recorded"], c["unique_names"], f"{c['spent_epsilon']:.12g}",
                 f"{c['sum_of_entries']:.12g}", c["exactly_1000"], f"{c['seconds']:.1f}"]
                for s, c in r["concurrent"].items()]), "",
        "**SIGKILL inside a charge**, then a fresh client retries the same charge id (delay uniform in "
        "[0, 2 × median charge latency]).", "",
        *table(["store", "kills", "median charge (a fresh client's first)", "killed after its charge returned",
                "recorded before the kill (the retry replayed it)", "recorded by the retry", "twice", "missing"],
               [[NAMES[s] + (f" (integrity: {k['integrity']})" if "integrity" in k else ""), k["kills"],
                 ms(k["median_charge_seconds"] * 1e3), k["completed_before_kill"], k["recorded_before_kill"],
                 k["recorded_by_retry"], k["twice"], k["missing"]] for s, k in r["sigkill"].items()]), "",
        f"**PostgreSQL server stopped** (`pg_ctl stop -m fast`) for {x['seconds_down']:.1f} s under {x['clients']} "
        "clients charging in a loop, then started on the same data.", "",
        *table(["", "charges"], [
            ["ok before the stop", x["ok_before_stop"]],
            ["refused while down (one-line LedgerError, \"Nothing was charged.\")", x["outcomes"].get("refused", 0)],
            ["in doubt (connection lost during the commit), retried with their id until ok",
             f"{x['outcomes'].get('in doubt', 0)} ({x['in_doubt_then_ok']} ok)"],
            ["other errors, or refusals before the stop or over 1 s after the restart",
             other + x["refusals_outside_outage"]],
            ["ok after the restart", f"{x['ok_after_restart']} (from {x['clients_charging_after_restart']} of "
                                     f"{x['clients']} clients)"],
            ["seen ok by a client but not in the ledger", x["ok_missing"]], ["in the ledger twice", x["ok_twice"]],
            ["refused but in the ledger", x["refused_but_recorded"]],
            ["in the ledger, never seen ok", x["recorded_not_ok"]],
            ["spent = Σ entries", x["exact"]]]), "",
        "No client re-opens: the same `Accountant` of each goes on after the restart, its store replacing the "
        "connection the server dropped (before this benchmark found it, a restart left every open client failing "
        "for good with a raw psycopg error).", "",
        "**Throughput**: each client makes a fixed number of charges of ε = 0.001 against a budget it never "
        "reaches; latency is per charge, over all clients.", "",
        *table(["clients", "SQLite charges/s", "p50", "p99", "PostgreSQL charges/s", "p50", "p99"],
               [[a["clients"], f"{a['charges_per_second']:,.0f}", ms(a["p50_ms"]), ms(a["p99_ms"]),
                 f"{b['charges_per_second']:,.0f}", ms(b["p50_ms"]), ms(b["p99_ms"])]
                for a, b in zip(r["throughput"]["sqlite"], r["throughput"]["postgresql"])]), "",
        f"A bare durable INSERT + COMMIT without dpledger, timed in the same run: {ms(bare['sqlite'] * 1e3)} in an "
        f"SQLite file (WAL, synchronous=FULL), {ms(bare['postgresql'] * 1e3)} on this PostgreSQL server (its "
        "defaults: fsync at each commit). On this shared machine such timings vary several-fold between runs (the "
        "disk's fsync most of all): compare the two stores within a run. A charge holds the ledger's write lock "
        "from its first read to its commit, so charges are decided one at a time; SQLite's waiting writers sleep "
        "and retry (its busy handler sleeps up to 100 ms at a time), hence its long tail, while PostgreSQL's wait "
        "on the row lock and are woken in turn."])


if __name__ == "__main__":
    main()
