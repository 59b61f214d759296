"""Audits whose memory does not grow with their samples: 10^6 to 10^9 outputs per side of a
ten-dimensional mechanism, on a process pool and on a Dask cluster, with each run's peak memory.

The mechanism is DP-Sniper's SVT1 (``dpsniper_zoo``: ten ⊤/⊥ labels per run, the shape for which
holding every sample would cost 8 bytes × 10 per output: 8 GB a side at 10^8), audited by
``audit_pairs`` with its defaults on DP-Sniper's logged pair at confidence 0.9. The training half
is capped (``pairs.MAX_TRAINING``); the test half is drawn, featurised and counted chunk by chunk.
Each size runs in a fresh Python process, so its peak resident memory (``ru_maxrss`` of the
process and of its pool's workers) is its own. Pools: 2 worker processes
(``ProcessPoolExecutor``), and a ``distributed.LocalCluster`` of 2 single-threaded workers
through ``Client.get_executor()`` (the same code drives a real cluster).

Run: python benchmarks/audit_streaming.py [--quick]. Writes results/audit_streaming.{json,md}.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time

import _common

#: (samples per side, pools)
SIZES = ((10**6, ("processes", "dask")), (10**7, ("processes", "dask")), (10**8, ("processes", "dask")),
         (10**9, ("processes",)))  # 10^9 on one pool only: a quarter of an hour
QUICK_SIZES = ((10**5, ("processes", "dask")), (10**6, ("processes",)))
HERE = pathlib.Path(__file__).resolve().parent

#: one audit in a fresh process: prints its figures as one JSON line
CHILD = """
import json, resource, sys, time
sys.path.insert(0, {here!r})
import dpsniper_zoo
from dpledger.audit import audit_pairs

samples, pool = {samples}, {pool!r}
entry = {{b.name: b for b in dpsniper_zoo.BENCHMARKS}}["SparseVectorTechnique1"]
if __name__ == "__main__":
    if pool == "dask":
        from distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        executor = client.get_executor()
    else:
        from concurrent.futures import ProcessPoolExecutor
        executor = ProcessPoolExecutor(2)
    start = time.perf_counter()
    report = audit_pairs(entry.fn, entry.pairs[:1], entry.epsilon, samples=samples, confidence=0.9, seed=7,
                         executor=executor)
    seconds = time.perf_counter() - start
    if pool == "dask":
        memory = max(client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss).values())
        client.close(); cluster.close()
    else:
        executor.shutdown()
        memory = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({{"samples": samples, "pool": pool, "seconds": seconds,
                      "main_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "worker_mib": memory / 1024, "certified": report.epsilon_lower_bound,
                      "violation": report.violation}}))
"""


def run(samples: int, pool: str) -> dict:
    code = CHILD.format(here=str(HERE), samples=samples, pool=pool)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row["wall_seconds"] = time.perf_counter() - started
    print(row, flush=True)
    return row


def table(rows: list[dict]) -> str:
    lines = ["## Streamed audits: memory flat in the samples (SVT1, 10 labels per run, 2 workers)", "",
             "| samples per side | pool | time (s) | runs/s | peak memory, main (MiB) | peak memory, largest worker (MiB) "
             "| certified ε (claim 0.1) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['samples']:.0e} | {r['pool']} | {r['seconds']:.0f} | {2 * r['samples'] / r['seconds']:,.0f} | "
                     f"{r['main_mib']:.0f} | {r['worker_mib']:.0f} | {r['certified']:.4f} |")
    lines += ["", "Holding the samples would need 8 bytes × 10 per output and side: 80 MB at 10^6, 8 GB at 10^8, 80 GB at 10^9. "
              "Figures from a shared 2-core machine: rates are indicative, memory is not. Peak memory of the main process is flat from 10^7 on: it holds the training half (at most 2·10^6 runs per side) and the fitted statistics; the test half is streamed."]
    return "\n".join(lines)


def main() -> None:
    quick = _common.quick_run("10^5 and 10^6 samples per side instead of 10^6 to 10^9")
    rows = [run(samples, pool) for samples, pools in (QUICK_SIZES if quick else SIZES) for pool in pools]
    _common.publish("audit_streaming" + ("_quick" if quick else ""), {"rows": rows}, table(rows))


if __name__ == "__main__":
    main()
