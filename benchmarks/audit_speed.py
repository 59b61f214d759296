"""How fast the auditor samples a graph: run by run (``Graph.observe`` per sample, forced with
``per_run=True``, the path every graph that was not flat took before) against the batched sampler
(``Graph.observe_runs``), side by side in one run, on a pool of 2 worker processes (the machine's
2 cores).

Graphs: ``mean.clipped`` and ``mean.localised`` on their registered examples (n = 100, d = 2), and
a subsample graph: a Poisson subsample (rate 0.1, a fresh O(n) draw per sample) of n = 1,000
records in [0, 1] under AddRemoveOne, then a lattice Laplace count and sum, the second reading the
first.

Two figures per path:
- **sampling**: runs drawn per second by the audit's own batches (``sampling.draw_batch``, batches
  of the audit's size, both sides of the example pair) on the pool, results sent back included;
- **audit**: runs per second of a whole ``audit_pairs`` on that one pair (sampling, choosing
  events on the training half, testing on the test half; 2 · samples runs), on the same pool.

The batched path is measured on more samples than the run-by-run one (it would take minutes
otherwise); a rate is a rate. Run: python benchmarks/audit_speed.py [--quick].
Writes results/audit_speed.{json,md}.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import dpledger as dp
from dpledger.audit import audit_pairs
from dpledger.audit.runners import RunEstimator, RunGraph
from dpledger.audit.sampling import batch_sizes, draw_batch
from dpledger.graph import registry
from dpledger.mechanisms import Laplace, PoissonSample

from _common import publish, quick_run

WORKERS = 2
N_RECORDS, RATE = 1_000, 0.1


def count(records):
    return float(len(records))


def clipped_sum(records, count):
    return float(np.clip(records, 0.0, 1.0).sum()) if count > 0 else 0.0


def subsampled_graph() -> dp.Graph:
    """A Poisson subsample of the rows, a noisy count and a noisy clipped sum (module-level
    functions, so the standard library's pickle sends the graph to the workers)."""
    body = dp.sequence(dp.release("count", Laplace(0.5, coordinates=1), count),
                       dp.release("sum", Laplace(0.5, coordinates=1), clipped_sum, uses="count"), name="counted")
    return dp.Graph(dp.subsample(PoissonSample(RATE), body), dp.AddRemoveOne(), name="subsampled sum",
                    domain=dp.Records(low=0.0, high=1.0))


def targets():
    """(label, runner factory (per_run -> fn), pair, claim) for each graph."""
    found = []
    for name in ("mean.clipped", "mean.localised"):
        params, data = registry.info(name).example(np.random.default_rng(0))
        graph = dp.estimator(name, **params)
        other = graph.domain.project(next(iter(graph.relation.neighbours(data, np.random.default_rng(1), 1))))
        g = graph.plan().guarantee
        found.append((name, lambda per_run, name=name, params=params: RunEstimator(name, params, per_run),
                      (data, other), (g.epsilon, g.delta)))
    graph = subsampled_graph()
    data = np.random.default_rng(2).random(N_RECORDS)
    g = graph.plan().guarantee
    found.append((graph.name, lambda per_run: RunGraph(graph, per_run), (data, data[1:]), (g.epsilon, g.delta)))
    return found


def sampling_rate(pool, fn, pair, samples: int) -> float:
    """Runs per second of the audit's batches of ``samples`` runs per side, on the pool."""
    sizes = batch_sizes(samples)
    start = time.perf_counter()
    futures = [pool.submit(draw_batch, fn, pair[side], np.random.SeedSequence(0, spawn_key=(side, b)), size, True)
               for side in (0, 1) for b, size in enumerate(sizes)]
    drawn = sum(len(future.result()) for future in futures)
    return drawn / (time.perf_counter() - start)


def audit_rate(pool, fn, pair, claim, samples: int) -> tuple[float, float]:
    """Runs per second of a whole audit_pairs on ``pair`` with ``samples`` runs per side, and its ε bound."""
    start = time.perf_counter()
    report = audit_pairs(fn, [pair], epsilon=claim[0], delta=claim[1], samples=samples, seed=0, executor=pool)
    assert report.ok, report
    return 2 * samples / (time.perf_counter() - start), float(report.epsilon_lower_bound)


def main() -> None:
    quick = quick_run("a smoke run: 10× fewer samples")
    slow, fast = (2_000, 50_000) if quick else (20_000, 500_000)
    rows = []
    with ProcessPoolExecutor(WORKERS) as pool:
        for label, runner, pair, claim in targets():
            warm = runner(False)
            pool.submit(draw_batch, warm, pair[0], np.random.SeedSequence(9), 256, True).result()  # imports, plan
            row = {"graph": label, "claim": claim, "load_before": os.getloadavg()[0]}
            for path, per_run, samples in (("per-run", True, slow), ("batched", False, fast)):
                fn = runner(per_run)
                row[path] = {"samples_per_side": samples, "sampling": sampling_rate(pool, fn, pair, samples)}
                row[path]["audit"], row[path]["epsilon_lower_bound"] = audit_rate(pool, fn, pair, claim, samples)
            row["speedup"] = row["batched"]["sampling"] / row["per-run"]["sampling"]
            rows.append(row)
            print(label, f"{row['per-run']['sampling']:,.0f} -> {row['batched']['sampling']:,.0f} runs/s")
    lines = ["# Audit sampling speed: run by run vs batched", "",
             f"{WORKERS} worker processes; runs per second (both sides of one pair). *Sampling*: the audit's "
             "batches drawn and sent back; *audit*: a whole `audit_pairs` on the pair (sampling, events, tests). "
             "Per-run: `Graph.observe` per sample (forced); batched: `Graph.observe_runs`. The 1-minute load "
             "average before each graph: " + ", ".join(f"{row['graph']} {row['load_before']:.2f}" for row in rows) + ".",
             "",
             "| graph | per-run sampling | batched sampling | speed-up | per-run audit | batched audit | samples/side (per-run, batched) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        slow_row, fast_row = row["per-run"], row["batched"]
        lines.append(f"| {row['graph']} | {slow_row['sampling']:,.0f}/s | **{fast_row['sampling']:,.0f}/s** | "
                     f"{row['speedup']:.0f}× | {slow_row['audit']:,.0f}/s | {fast_row['audit']:,.0f}/s | "
                     f"{slow_row['samples_per_side']:,}, {fast_row['samples_per_side']:,} |")
    publish("audit_speed", {"workers": WORKERS, "quick": quick, "rows": rows}, "\n".join(lines))


if __name__ == "__main__":
    main()
