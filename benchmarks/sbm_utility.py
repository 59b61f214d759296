"""Utility of the private SBM estimators (issue 4 figures).

1. Exact recovery at n=1000, within 0.5, across 0.1, (ε, δ) = (4, 1e-6): successes in 10 seeds.
2. Error against ε (0.5..16) for three (n, p, q) settings: weak, exact, the non-private SDP, and
   the exponential mechanism on a small graph.
3. Zachary's karate club (networkx; weights dropped, two factions as truth): error against ε, with
   d estimated privately and γ = 0.5 as a stated prior guess (the true γ would leak the labels).

Run: python benchmarks/sbm_utility.py [--quick]. Writes results/sbm_utility.{json,md,png}.
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np

import dpledger as dp
from dpledger.algorithms import sbm
from dpledger.algorithms.sbm.recovery import centred, leading_signs, upper_triangle
from dpledger.stability.correlation import project_onto_elliptope

from _common import RESULTS, write

EPSILONS = [0.5, 1, 2, 4, 8, 16]
SETTINGS = [(1000, 0.5, 0.1), (600, 0.3, 0.05), (1000, 0.15, 0.05)]
SMALL = (20, 0.9, 0.1)


def parameters(n, p, q):
    return n * (p + q) / 2, (p - q) / (p + q)


def private_error(name, adjacency, truth, epsilon, rng, **params):
    graph = dp.estimator(name, epsilon=epsilon, **params)
    result = dp.Accountant(graph.plan().guarantee).run(graph, adjacency, rng=rng)
    return np.nan if result.halted else sbm.error_rate(result.output, truth)


def nonprivate_error(adjacency, truth, d, gamma):
    solution = project_onto_elliptope(centred(adjacency, d, gamma), target=1e-7)
    return sbm.error_rate(leading_signs(upper_triangle(solution.solution), adjacency.shape[0]), truth)


def success_rate(seeds):
    n, p, q = 1000, 0.5, 0.1
    d, gamma = parameters(n, p, q)
    errors, seconds = [], []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        adjacency, truth = sbm.sample(n, d, gamma, rng)
        start = time.perf_counter()
        errors.append(private_error("sbm.exact", adjacency, truth, 4.0, rng, delta=1e-6, n=n, d=d, gamma=gamma))
        seconds.append(time.perf_counter() - start)
    return {"n": n, "p": p, "q": q, "epsilon": 4.0, "delta": 1e-6, "errors": errors,
            "successes": int(sum(e == 0 for e in errors)), "seeds": seeds, "median_seconds": float(np.median(seconds))}


def curves(seeds, settings, epsilons):
    """Error rows for weak/exact recovery on each setting and the exponential mechanism on SMALL."""
    plans = [(setting, ("sbm.weak", "sbm.exact"), {"delta": 1e-6}, 100) for setting in settings]
    plans.append((SMALL, ("sbm.exponential",), {}, 200))
    rows = []
    for (n, p, q), names, extra, first_seed in plans:
        d, gamma = parameters(n, p, q)
        for seed in range(seeds):
            rng = np.random.default_rng(first_seed + seed)
            adjacency, truth = sbm.sample(n, d, gamma, rng)
            base = nonprivate_error(adjacency, truth, d, gamma)
            for eps in epsilons:
                for name in names:
                    err = private_error(name, adjacency, truth, eps, rng, n=n, d=d, gamma=gamma, **extra)
                    rows.append({"setting": f"n={n}, p={p}, q={q}", "estimator": name, "epsilon": eps,
                                 "seed": seed, "error": err, "nonprivate_sdp": base})
    return rows


def karate(seeds, epsilons):
    club = nx.karate_club_graph()
    simple = nx.Graph()
    simple.add_nodes_from(club.nodes)
    simple.add_edges_from(club.edges())  # the shipped graph carries interaction counts as weights
    adjacency = sbm.as_adjacency(simple)
    truth = np.array([1 if club.nodes[v]["club"] == "Mr. Hi" else -1 for v in club.nodes])
    n = adjacency.shape[0]
    rows = []
    for eps in epsilons:
        for name in ("sbm.weak", "sbm.exact"):
            for seed in range(seeds):
                rng = np.random.default_rng(300 + seed)
                err = private_error(name, adjacency, truth, eps, rng, delta=1e-6, n=n, gamma=0.5)
                rows.append({"estimator": name, "epsilon": eps, "seed": seed, "error": err})
    d_true = adjacency.sum() / n
    base = nonprivate_error(adjacency, truth, d_true, 0.5)
    return {"rows": rows, "nonprivate_sdp": base, "n": n}


def summarise(rows, key):
    table = {}
    for row in rows:
        table.setdefault((row.get("setting", "karate"), row["estimator"], row["epsilon"]), []).append(row[key])
    return {k: float(np.nanmean(v)) for k, v in table.items()}


def plot(curve_rows, karate_result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = sorted({r["setting"] for r in curve_rows}) + ["karate club (n=34)"]
    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings), 3.6), sharey=True)
    for ax, setting in zip(axes, settings):
        rows = karate_result["rows"] if setting.startswith("karate") else [r for r in curve_rows if r["setting"] == setting]
        for name in sorted({r["estimator"] for r in rows}):
            by_eps = {k[2]: v for k, v in summarise([r for r in rows if r["estimator"] == name], "error").items()}
            ax.plot(sorted(by_eps), [by_eps[e] for e in sorted(by_eps)], marker="o", label=name)
        base = karate_result["nonprivate_sdp"] if setting.startswith("karate") else np.mean([r["nonprivate_sdp"] for r in rows])
        ax.axhline(base, color="grey", linestyle="--", label="non-private SDP")
        ax.set_xscale("log", base=2)
        ax.set_title(setting, fontsize=9)
        ax.set_xlabel("ε (δ = 1e-6 where used)")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("error rate (fraction misclassified)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer seeds and settings (smoke run)")
    args = parser.parse_args()
    seeds = 1 if args.quick else 3
    settings = SETTINGS[:1] if args.quick else SETTINGS
    epsilons = EPSILONS[::2] if args.quick else EPSILONS

    success = success_rate(3 if args.quick else 10)
    curve_rows = curves(seeds, settings, epsilons)
    karate_result = karate(seeds, epsilons)
    plot(curve_rows, karate_result, RESULTS / "sbm_utility.png")

    lines = [f"Exact recovery, n=1000, p=0.5, q=0.1, (ε, δ)=(4, 1e-6): **{success['successes']}/{success['seeds']}** "
             f"seeds recovered exactly (median {success['median_seconds']:.1f} s per run).", "",
             "| setting | estimator | " + " | ".join(f"ε={e}" for e in epsilons) + " |",
             "|---|---|" + "---|" * len(epsilons)]
    means = summarise(curve_rows, "error")
    for setting, name in sorted({(k[0], k[1]) for k in means}):
        lines.append(f"| {setting} | {name} | " + " | ".join(f"{means[(setting, name, e)]:.3f}" for e in epsilons) + " |")
    kmeans = summarise(karate_result["rows"], "error")
    for name in ("sbm.weak", "sbm.exact"):
        lines.append(f"| karate club, d private, γ=0.5 guessed | {name} | "
                     + " | ".join(f"{kmeans[('karate', name, e)]:.3f}" for e in epsilons) + " |")
    lines += ["", f"Non-private SDP on the karate club: error {karate_result['nonprivate_sdp']:.3f}. "
              "Error is the fraction misclassified up to a global flip, averaged over seeds.",
              "![error against ε](sbm_utility.png)"]
    write("sbm_utility", {"success": success, "curves": curve_rows, "karate": karate_result}, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
