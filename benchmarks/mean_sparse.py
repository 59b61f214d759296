"""Utility and robustness of the pure-DP mean and sparse-mean estimators (issue 6 figures).

1. Sparse mean, d=1000, k=10, ε=1: sparse_mean.peeling (and mean.localised, where it does not
   refuse) against the non-private empirical mean, the non-private top-k oracle (empirical mean
   on the true support) and the constant 0, error ||μ̂ - μ||_2 vs n.
2. The same at d=20, k=2, where sparse_mean.exponential runs.
3. Non-sparse mean, d=5, R=100: mean.localised vs mean.clipped vs the empirical mean.
4. Robustness (dpledger.audit.robustness) of sparse_mean.peeling and sparse_mean.exponential at
   d=20, k=2, n=2000: median error vs the corrupted fraction η, beside ln(1/β)/(εn).
Data: N(μ, I_d), μ k-sparse with equal-magnitude coordinates, ||μ||_2 = R/2 (R is the public bound).

Run: python benchmarks/mean_sparse.py [--quick]. Writes results/mean_sparse.{json,md,png}.
"""

from __future__ import annotations

import time

import numpy as np

import dpledger as dp
import dpledger.algorithms.mean  # noqa: F401  (registers mean.*)
import dpledger.algorithms.sparse_mean  # noqa: F401  (registers sparse_mean.*)
from dpledger.algorithms.mean import sparse_gaussian
from dpledger.audit.robustness import robustness

from _common import publish, quick_run

EPSILON = 1.0
ETAS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1)


def private(name: str, params: dict, data: np.ndarray, rng) -> float | None:
    """The estimate, or None when the factory refuses these parameters (e.g. n too small)."""
    try:
        graph = dp.estimator(name, **params)
    except ValueError:
        return None
    return graph.execute(graph.validate(data), rng)[0]


def error_vs_n(names, d: int, k: int, R: float, sizes, trials: int, seed: int) -> dict:
    """Median error over ``trials`` of each estimator and baseline, per n (None: refused)."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        errors = {name: [] for name in (*names, "empirical mean", *(["top-k oracle"] if k < d else []), "zero")}
        for _ in range(trials):
            data, mean = sparse_gaussian(n, d, k, R / 2, rng)
            support = np.flatnonzero(mean)
            oracle = np.zeros(d)
            oracle[support] = data[:, support].mean(axis=0)
            baselines = {"empirical mean": data.mean(axis=0), "zero": np.zeros(d)} | (
                {"top-k oracle": oracle} if k < d else {})
            for name in names:
                params = {"epsilon": EPSILON, "R": R, "n": n, "d": d} | ({"k": k} if name.startswith("sparse") else {})
                estimate = private(name, params, data, rng)
                errors[name].append(None if estimate is None else float(np.linalg.norm(estimate - mean)))
            for name, estimate in baselines.items():
                errors[name].append(float(np.linalg.norm(estimate - mean)))
        rows.append({"n": n, **{name: None if None in e else float(np.median(e)) for name, e in errors.items()}})
        print(d, k, n, rows[-1], flush=True)
    return {"d": d, "k": k, "R": R, "epsilon": EPSILON, "trials": trials, "rows": rows}


def robustness_curves(name: str, n: int, d: int, k: int, R: float, trials: int, seed: int) -> dict:
    mean = sparse_gaussian(1, d, k, R / 2, np.random.default_rng(seed))[1]
    report = robustness(name, lambda rng: mean + rng.standard_normal((n, d)), mean,
                        params={"epsilon": EPSILON, "k": k, "R": R, "n": n, "d": d}, etas=ETAS, trials=trials,
                        seed=seed)
    return report.to_dict()


def table(result: dict, title: str) -> str:
    columns = [c for c in result["rows"][0] if c != "n"]
    lines = [f"### {title}", "", "| n | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for row in result["rows"]:
        cells = ["refused" if row[c] is None else f"{row[c]:.3g}" for c in columns]
        lines.append(f"| {row['n']} | " + " | ".join(cells) + " |")
    beats = {c: next((row["n"] for row in result["rows"] if row[c] is not None and row[c] < row["zero"]), None)
             for c in columns if c != "zero"}
    lines.append("\nSmallest n (of those run) where the median error beats outputting 0: "
                 + ", ".join(f"{c}: {'none' if n is None else n}" for c, n in beats.items()) + ".")
    return "\n".join(lines)


def robustness_table(result: dict, name: str) -> str:
    lines = [f"### Robustness of {name} (n={result['n']}, ε={result['epsilon']}, β={result['beta']}): "
             f"clean (1-β)-quantile α={result['clean_threshold']:.3g}, ln(1/β)/(εn)={result['predicted_scale']:.2g}",
             "", "| adversary | " + " | ".join(f"η={eta:g}" for eta in ETAS) + " |", "|---" * (len(ETAS) + 1) + "|"]
    for curve in result["curves"].values():
        cells = [f"{e:.3g} ({f:.2f} / {p:.2g})" for e, f, p in
                 zip(curve["median_error"], curve["failure_rate"], curve["predicted_failure"])]
        lines.append(f"| {curve['adversary']} | " + " | ".join(cells) + " |")
    lines.append("\nCells: median error (measured P[error > α] / group-privacy bound min(1, e^{εηn}·β)).")
    return "\n".join(lines)


def plot(results: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    for ax, key, title in [(axes[0, 0], "sparse_d1000", "sparse mean, d=1000, k=10"),
                           (axes[0, 1], "sparse_d20", "sparse mean, d=20, k=2"),
                           (axes[1, 0], "dense_d5", "mean, d=5, R=100")]:
        result = results[key]
        sizes = [row["n"] for row in result["rows"]]
        for column in [c for c in result["rows"][0] if c != "n"]:
            values = [np.nan if row[column] is None else row[column] for row in result["rows"]]
            ax.loglog(sizes, values, "o-" if "." in column else "--", label=column)
        ax.set(title=f"{title}, ε={EPSILON}", xlabel="n", ylabel="median ||μ̂ - μ||₂")
        ax.legend(fontsize=8)
    ax = axes[1, 1]
    for name, result in results["robustness"].items():
        for curve in result["curves"].values():
            ax.plot(ETAS, curve["median_error"], "o-", label=f"{name.split('.')[1]}: {curve['adversary']}")
        ax.axvline(result["predicted_scale"], color="grey", linestyle=":")
    ax.set(xscale="symlog", xlabel="corrupted fraction η (dotted: ln(1/β)/(εn))", ylabel="median error",
           title="robustness, d=20, k=2, n=2000", xlim=(0, 0.12))
    ax.set_xscale("symlog", linthresh=1e-3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    quick = quick_run("fewer sizes and trials (smoke run)")
    trials = 2 if quick else 5
    start = time.perf_counter()
    results = {
        "sparse_d1000": error_vs_n(["sparse_mean.peeling", "mean.localised"], 1000, 10, 10.0,
                                   [2000, 10000] if quick else [2000, 5000, 10000, 20000, 40000], trials, 1),
        "sparse_d20": error_vs_n(["sparse_mean.exponential", "sparse_mean.peeling", "mean.localised"], 20, 2, 10.0,
                                 [300, 1000] if quick else [300, 600, 1000, 2000, 5000], trials, 2),
        "dense_d5": error_vs_n(["mean.localised", "mean.clipped"], 5, 5, 100.0,
                               [500, 2000] if quick else [500, 1000, 2000, 5000, 20000], trials, 3),
        "robustness": {name: robustness_curves(name, 2000, 20, 2, 10.0, 5 if quick else 20, 4)
                       for name in ("sparse_mean.peeling", "sparse_mean.exponential")},
    }
    results["seconds"] = time.perf_counter() - start
    markdown = "\n\n".join([
        "## Mean and sparse-mean estimation (pure ε-DP, ReplaceOne), median over "
        f"{trials} trials; data N(μ, I), ||μ|| = R/2",
        table(results["sparse_d1000"], "d=1000, k=10, R=10"),
        table(results["sparse_d20"], "d=20, k=2, R=10"),
        table(results["dense_d5"], "non-sparse, d=5, R=100"),
        *(robustness_table(r, name) for name, r in results["robustness"].items()),
        f"Run time {results['seconds']:.0f} s.",
    ])
    publish("mean_sparse", results, markdown, lambda path: plot(results, path))


if __name__ == "__main__":
    main()
