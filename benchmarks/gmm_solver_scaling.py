"""Scaling of gmm.centres's step-1 solver (``membership.solve``, certified dual first-order) with n.

Data: a spherical mixture with k = 3, d = 10, Δ = 12, σ = 1 (seeded); the program's constants are
the estimator's defaults (radius midway between within- and between-cluster distances, cap = n/k,
c = 1). For each n:
1. time and iterations of ``membership.solve`` at the calibrated accuracy target τ = 0.05·sqrt(cap)
   (what the estimator uses) and at a tight target 1e-3, with 1 and with 2 BLAS threads
   (threadpoolctl); reported as ratios (to the smallest n, and 1-thread/2-thread time);
2. for small n, the cvxpy reference (``membership.solve_cvxpy``, certified by the same duality gap):
   its time as a ratio to the dual solver's, the Frobenius distance between the two solutions and
   both certified errors (the distance must be at most their sum, through the exact minimiser).

Run: python benchmarks/gmm_solver_scaling.py [--quick]. Writes results/gmm_solver_scaling.{json,md,png}.
"""

from __future__ import annotations

import math
import time

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from threadpoolctl import threadpool_limits

from dpledger.algorithms.gmm import membership, sample_mixture
from dpledger.algorithms.gmm.calibration import default_radius

from _common import publish, quick_run

K, D, SEPARATION, SIGMA, C = 3, 10, 12.0, 1.0, 1.0
SIZES = [250, 500, 1000, 2000, 3000, 4000]
CVXPY_SIZES = [50, 100, 150, 200, 250]
TIGHT = 1e-3
THREADS = (1, 2)


def problem(n: int, seed: int):
    data, _, _ = sample_mixture(n, K, D, SEPARATION, np.random.default_rng([17, n, seed]), SIGMA)
    cap = n / K
    return data, default_radius(D, SEPARATION, SIGMA), cap, 0.05 * math.sqrt(cap)


def timed(function, *args):
    start = time.perf_counter()
    out = function(*args)
    return time.perf_counter() - start, out


def dual_rows(sizes, repeats, progress, task) -> list[dict]:
    rows = []
    for n in sizes:
        data, radius, cap, tau = problem(n, 0)
        for label, target in (("calibrated τ", tau), ("tight 1e-3", TIGHT)):
            row = {"n": n, "target_name": label, "target": target}
            for threads in THREADS:
                times = []
                with threadpool_limits(limits=threads):
                    for _ in range(repeats):
                        seconds, solution = timed(membership.solve, data, radius, cap, C, target)
                        times.append(seconds)
                        progress.advance(task)
                row[f"seconds_{threads}"] = float(np.median(times))
            row |= {"iterations": solution.iterations, "certified_error": solution.certified_error,
                    "meets_target": bool(solution.meets_target),
                    "mask_degree_max": int(membership.radius_mask(data, radius).sum(axis=1).max())}
            row["thread_ratio"] = row["seconds_1"] / row["seconds_2"]
            rows.append(row)
    for label in {row["target_name"] for row in rows}:
        group = [row for row in rows if row["target_name"] == label]
        for row in group:
            row["time_ratio_to_smallest"] = row["seconds_1"] / group[0]["seconds_1"]
    return rows


def cvxpy_rows(sizes, progress, task) -> list[dict]:
    rows = []
    for n in sizes:
        data, radius, cap, tau = problem(n, 0)
        cvx_seconds, reference = timed(membership.solve_cvxpy, data, radius, cap, C, tau)
        for label, target in (("calibrated τ", tau), ("tight 1e-3", TIGHT)):
            dual_seconds, dual = timed(membership.solve, data, radius, cap, C, target)
            distance = float(np.linalg.norm(dual.solution - reference.solution))
            rows.append({"n": n, "target_name": label, "target": target, "cvxpy_over_dual_time": cvx_seconds / dual_seconds,
                         "cvxpy_seconds": cvx_seconds, "dual_seconds": dual_seconds,
                         "distance": distance, "dual_certified": dual.certified_error,
                         "cvxpy_certified": reference.certified_error, "dual_iterations": dual.iterations,
                         "consistent": distance <= dual.certified_error + reference.certified_error + 1e-9})
        progress.advance(task)
    return rows


def slope(rows) -> float:
    """Least-squares exponent a of time ∝ n^a (1 thread)."""
    n = np.log([row["n"] for row in rows])
    t = np.log([row["seconds_1"] for row in rows])
    return float(np.polyfit(n, t, 1)[0])


def markdown_for(result: dict) -> str:
    lines = [f"## Step-1 solver of gmm.centres: scaling with n (k={K}, d={D}, Δ={SEPARATION:g}, σ={SIGMA:g}, "
             f"median of {result['repeats']} runs)", "",
             "Certified dual first-order solver `membership.solve`. Time ratios are to the smallest n of the same "
             "target (1 thread); thread ratio = time with 1 BLAS thread / time with 2 (above 1: the second thread "
             "helps). Absolute seconds are in the JSON (shared 2-core machine).", "",
             "| n | target | iterations | certified error | meets target | time / time(n=250) | 1-thread / 2-thread |",
             "|---|---|---|---|---|---|---|"]
    for row in result["dual"]:
        lines.append(f"| {row['n']} | {row['target_name']} = {row['target']:.3g} | {row['iterations']} | "
                     f"{row['certified_error']:.3g} | {row['meets_target']} | {row['time_ratio_to_smallest']:.3g} | "
                     f"{row['thread_ratio']:.2f} |")
    lines.append("\nFitted exponent of time ∝ n^a (1 thread): "
                 + ", ".join(f"{name}: a = {value:.2f}" for name, value in result["exponents"].items())
                 + ". Each iteration is dense O(n²) elementwise work on the n×n mask (no matrix products "
                   "except the one Gram matrix for the mask), so BLAS threads barely matter.")
    lines += ["", "### Reference: cvxpy (`membership.solve_cvxpy`, default conic solver), certified by the same gap", "",
              "| n | dual target | cvxpy time / dual time | ‖W_dual − W_cvxpy‖_F | dual certified | cvxpy certified | "
              "distance <= sum of certified |", "|---|---|---|---|---|---|---|"]
    for row in result["cvxpy"]:
        lines.append(f"| {row['n']} | {row['target_name']} | {row['cvxpy_over_dual_time']:.3g} | {row['distance']:.3g} | "
                     f"{row['dual_certified']:.3g} | {row['cvxpy_certified']:.3g} | {row['consistent']} |")
    lines.append(f"\nRun time {result['seconds']:.0f} s.")
    return "\n".join(lines)


def plot(result: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for label in ("calibrated τ", "tight 1e-3"):
        group = [row for row in result["dual"] if row["target_name"] == label]
        sizes = [row["n"] for row in group]
        for threads, style in zip(THREADS, ("o-", "s--")):
            axes[0].loglog(sizes, [row[f"seconds_{threads}"] / group[0]["seconds_1"] for row in group], style,
                           label=f"dual, {label}, {threads} thread{'s' * (threads > 1)}")
        axes[1].semilogx(sizes, [row["iterations"] for row in group], "o-", label=label)
    cvx = [row for row in result["cvxpy"] if row["target_name"] == "calibrated τ"]
    small = result["dual"][0]["seconds_1"]
    axes[0].loglog([row["n"] for row in cvx], [row["cvxpy_seconds"] / small for row in cvx], "^-", label="cvxpy")
    reference = np.array([250, 4000])
    axes[0].loglog(reference, (reference / 250) ** 2, "k:", label="∝ n²")
    axes[0].set(xlabel="n", ylabel="time / time(dual, n=250, τ, 1 thread)", title="solver time (ratios)")
    axes[0].legend(fontsize=7)
    axes[1].set(xlabel="n", ylabel="dual iterations to certificate", title="iterations")
    axes[1].minorticks_off()
    axes[1].set_xticks(sizes, [str(n) for n in sizes])
    axes[1].legend(fontsize=8)
    for label, style in (("calibrated τ", "o-"), ("tight 1e-3", "s-")):
        group = [row for row in result["cvxpy"] if row["target_name"] == label]
        axes[2].loglog([row["n"] for row in group], [row["distance"] for row in group], style,
                       label=f"‖W_dual − W_cvxpy‖, dual at {label}")
    axes[2].loglog([row["n"] for row in cvx], [row["cvxpy_certified"] for row in cvx], "^:", label="cvxpy certified error")
    axes[2].set(xlabel="n", ylabel="Frobenius distance", title="dual vs cvxpy (small n)")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    quick = quick_run("small sizes, one repeat")
    sizes = SIZES[:3] if quick else SIZES
    cvx_sizes = CVXPY_SIZES[:2] if quick else CVXPY_SIZES
    repeats = 1 if quick else 3
    start = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns) as progress:
        dual = dual_rows(sizes, repeats, progress,
                         progress.add_task("dual solver", total=len(sizes) * 2 * len(THREADS) * repeats))
        cvx = cvxpy_rows(cvx_sizes, progress, progress.add_task("cvxpy reference", total=len(cvx_sizes)))
    exponents = {label: slope([row for row in dual if row["target_name"] == label])
                 for label in ("calibrated τ", "tight 1e-3")}
    result = {"k": K, "d": D, "separation": SEPARATION, "sigma": SIGMA, "repeats": repeats, "dual": dual,
              "cvxpy": cvx, "exponents": exponents, "seconds": time.perf_counter() - start}
    markdown = markdown_for(result)
    publish("gmm_solver_scaling", result, markdown, lambda path: plot(result, path))


if __name__ == "__main__":
    main()
