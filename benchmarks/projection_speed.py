"""Speed and accuracy of the certified projection onto K = {X ⪰ 0, X_ii = 1/n} (docs/proofs.md, "Certified solvers").

1. n = 200: our semismooth Newton solver against cvxpy + SCS (default settings). Distances to the
   optimum are measured against a reference: our solver at target 1e-11 on a signed permutation
   of Y, mapped back (same optimum, independent rounding). Goal: at least 20× faster than SCS,
   with a certified error at least 100× smaller than SCS's distance.
2. One eigendecomposition (scipy ``eigh``, driver evd) with 1 and 2 BLAS threads, on the idle
   machine and while one other process keeps a core busy (a bounded busy loop we start and kill).
3. Our solver at larger n with 1 and 2 BLAS threads: eigendecompositions, seconds, certificate.

Inputs: Y(G) = (A − (d/n)J)/(γd) for G ~ SBM_n(d = 20, γ = 0.5) with balanced labels. Timings
are wall-clock minima over repeats; the 1-minute load average (which includes the busy loop and
any other process sharing the machine) is recorded next to each, because a second busy process
makes two BLAS threads much slower than one on this 2-core machine.

Run: python benchmarks/projection_speed.py [--sizes 1000,2000]. n = 5000 (--sizes 1000,2000,5000)
takes several minutes per thread setting here (12 eigendecompositions of ~17 s each plus CG).
Writes results/projection_speed.{json,md}.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time

import cvxpy as cp
import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

from dpledger.algorithms import sbm
from dpledger.algorithms.sbm.recovery import centred
from dpledger.stability.correlation import project_onto_elliptope

from _common import write

D, GAMMA, TARGET = 20.0, 0.5, 1e-8


def sbm_input(n: int, seed: int = 0) -> np.ndarray:
    adjacency, _ = sbm.sample(n, D, GAMMA, np.random.default_rng(seed))
    return centred(adjacency, D, GAMMA)


def load() -> float:
    return round(os.getloadavg()[0], 2)


def timed(function, repeats: int):
    """(result of the last call, minimum wall-clock seconds over ``repeats`` calls)."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return result, best


def versus_scs(n: int = 200) -> dict:
    Y = sbm_input(n)
    rng = np.random.default_rng(2)
    signed = np.eye(n)[rng.permutation(n)] * rng.choice([-1.0, 1.0], n)
    moved = project_onto_elliptope(signed @ Y @ signed.T, target=1e-11)
    reference = signed.T @ moved.solution @ signed
    ours, ours_seconds = timed(lambda: project_onto_elliptope(Y, target=TARGET), repeats=5)
    X = cp.Variable((n, n), PSD=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X - Y) / 2), [cp.diag(X) == 1.0 / n])
    start = time.perf_counter()
    problem.solve(solver=cp.SCS)
    scs_seconds = time.perf_counter() - start
    scs_distance = float(np.linalg.norm(X.value - reference))
    return {
        "n": n,
        "load": load(),
        "ours_seconds": ours_seconds,
        "ours_certified_error": ours.certified_error,
        "ours_eigendecompositions": ours.work,
        "ours_distance_to_reference": float(np.linalg.norm(ours.solution - reference)),
        "reference_certified_error": moved.certified_error,
        "scs_status": problem.status,
        "scs_seconds_total": scs_seconds,
        "scs_seconds_solver": float(problem.solver_stats.solve_time),
        "scs_iterations": int(problem.solver_stats.num_iters),
        "scs_distance_to_optimum": scs_distance,
        "speedup_total": scs_seconds / ours_seconds,
        "speedup_solver_only": float(problem.solver_stats.solve_time) / ours_seconds,
        "accuracy_ratio": scs_distance / ours.certified_error,
    }


@contextlib.contextmanager
def busy_core(seconds: float = 120.0):
    """Another process spinning on one core for at most ``seconds`` (killed on exit)."""
    loop = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass"
    process = subprocess.Popen([sys.executable, "-c", loop])
    time.sleep(0.5)
    try:
        yield
    finally:
        process.kill()
        process.wait()


def eigendecomposition_times(sizes: list[int]) -> list[dict]:
    rows = []
    rng = np.random.default_rng(1)
    for n in sizes:
        A = rng.standard_normal((n, n))
        A = (A + A.T) / 2
        for busy in (False, True):
            if busy and n > 2000:
                continue
            with busy_core() if busy else contextlib.nullcontext():
                for threads in (1, 2):
                    with threadpool_limits(limits=threads, user_api="blas"):
                        _, seconds = timed(lambda: scipy.linalg.eigh(A, driver="evd"), 3 if n <= 2000 else 1)
                    rows.append({"n": n, "blas_threads": threads, "busy_process": busy, "seconds": seconds,
                                 "load": load()})
                    print(f"eigh n={n} threads={threads} busy={busy}: {seconds:.3f}s", flush=True)
    return rows


def solver_runs(sizes: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        Y = sbm_input(n)
        for threads in (1, 2):
            repeats = 2 if n <= 2000 else 1
            result, seconds = timed(lambda: project_onto_elliptope(Y, TARGET, blas_threads=threads), repeats)
            rows.append({
                "n": n, "blas_threads": threads, "seconds": seconds, "eigendecompositions": result.work,
                "iterations": result.iterations, "certified_error": result.certified_error,
                "meets_target": result.meets_target, "load": load(),
            })
            print(f"solver n={n} threads={threads}: {seconds:.2f}s, {result.work} eigh, "
                  f"certified {result.certified_error:.2e}", flush=True)
    return rows


def markdown(scs: dict, eig: list[dict], runs: list[dict]) -> str:
    lines = [
        "# Certified projection onto {X ⪰ 0, X_ii = 1/n}",
        "",
        f"Inputs Y(G), G ~ SBM_n(d={D:g}, γ={GAMMA:g}); our target τ = {TARGET:g}; wall-clock minima.",
        "",
        f"## n = {scs['n']}: ours vs cvxpy + SCS (default settings)",
        "",
        "| solver | seconds | error vs optimum | eigendecompositions / iterations |",
        "| --- | --- | --- | --- |",
        f"| ours (semismooth Newton, 1 BLAS thread) | {scs['ours_seconds']:.3f} | "
        f"certified ≤ {scs['ours_certified_error']:.1e} "
        f"(to reference {scs['ours_distance_to_reference']:.1e}) | "
        f"{scs['ours_eigendecompositions']} |",
        f"| cvxpy + SCS ({scs['scs_status']}) | {scs['scs_seconds_total']:.2f} total, "
        f"{scs['scs_seconds_solver']:.2f} in SCS | {scs['scs_distance_to_optimum']:.1e} | "
        f"{scs['scs_iterations']} |",
        "",
        f"Speed-up {scs['speedup_total']:.0f}× (vs cvxpy + SCS), {scs['speedup_solver_only']:.0f}× "
        f"(vs SCS's own solve time); SCS's distance / our certificate = {scs['accuracy_ratio']:.1e}. "
        f"The reference is certified to {scs['reference_certified_error']:.1e}. "
        f"Load average {scs['load']}.",
        "",
        "## One eigendecomposition (scipy eigh, evd)",
        "",
        "| n | 1 thread (s) | 2 threads (s) | 1 thread, busy core (s) | 2 threads, busy core (s) | load |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for n in sorted({row["n"] for row in eig}):
        cells = []
        for busy in (False, True):
            for threads in (1, 2):
                key = (n, threads, busy)
                row = [r for r in eig if (r["n"], r["blas_threads"], r["busy_process"]) == key]
                cells.append(f"{row[0]['seconds']:.3f}" if row else "–")
        loads = [r["load"] for r in eig if r["n"] == n]
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {min(loads)}–{max(loads)} |")
    lines += [
        "",
        "## Our solver at larger n",
        "",
        "BLAS threads apply to the eigendecompositions; the solver's other BLAS calls use one.",
        "",
        "| n | BLAS threads | seconds | eigendecompositions | Newton steps | certified error | load |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in runs:
        lines.append(
            f"| {row['n']} | {row['blas_threads']} | {row['seconds']:.2f} | {row['eigendecompositions']} | "
            f"{row['iterations']} | {row['certified_error']:.1e} | {row['load']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,2000", help="comma-separated n for the solver runs")
    sizes = [int(n) for n in parser.parse_args().sizes.split(",")]
    scs = versus_scs()
    print(f"n=200: ours {scs['ours_seconds']:.3f}s certified {scs['ours_certified_error']:.1e}; "
          f"SCS {scs['scs_seconds_total']:.2f}s distance {scs['scs_distance_to_optimum']:.1e}", flush=True)
    eig = eigendecomposition_times([200, *sizes])
    runs = solver_runs(sizes)
    data = {"d": D, "gamma": GAMMA, "target": TARGET, "versus_scs": scs, "eigendecomposition": eig,
            "solver": runs}
    write("projection_speed", data, markdown(scs, eig, runs))


if __name__ == "__main__":
    main()
