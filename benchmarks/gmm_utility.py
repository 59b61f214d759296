"""Utility of ``gmm.centres`` (Algorithm D.5, explicit constants) and ``gmm.neighbourhood`` beside
k-means and diffprivlib (issue 7 figures).

1. Synthetic well-separated spherical mixtures (σ = 1), six (k, d, Δ, n) settings: centre error
   (max over centres after the best matching, ``centre_error``) against ε for
   - ours: every run planned and charged through ``Accountant.run`` at (ε, δ = 1e-6); median error
     over the released runs, halt rate, the plan's proven (ε, δ), and step 6's noise radius over Δ;
     "refused" when the calibration cannot meet (ε, δ) at this n (a clear error before any charge);
     gmm.centres is planned but not run above n = 4000 (its step 1 holds several n×n arrays);
   - scikit-learn KMeans (non-private, n_init = 10);
   - diffprivlib KMeans at the same nominal ε with data-independent bounds fixed a priori.
2. scikit-learn's iris and wine data (standardised; truth = the class means), the same comparison.
3. ``useful_n`` for both methods: the smallest n at which the proven guarantee comes with usable
   output (step-6 noise radius below Δ/8), for several (k, d, Δ, ε).

Run: python benchmarks/gmm_utility.py [--quick] [--render]. Writes results/gmm_utility.{json,md,png}.
``gmm.projected`` (any dimension) has its own comparison, built on this one's baselines:
benchmarks/gmm_highdim.py.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import dpledger as dp
from dpledger.algorithms.gmm import calibrate, centre_error, sample_mixture, useful_n
from dpledger.algorithms.gmm.calibration import USEFUL_RATIO

from _common import options, publish

DELTA = 1e-6
EPSILONS = [0.5, 1, 2, 4, 8, 100, 1000]
#: (k, d, separation Δ, n), σ = 1. The last two are too large for gmm.centres's n×n step 1.
SETTINGS = [(2, 2, 10.0, 500), (3, 10, 12.0, 1000), (4, 20, 15.0, 2000), (5, 50, 20.0, 3000),
            (3, 2, 10.0, 10_000), (3, 10, 12.0, 20_000)]
#: Our estimators and their calibration methods.
OURS = {"gmm.centres": "membership", "gmm.neighbourhood": "neighbourhood"}
#: gmm.centres is planned but not run above this n (its step 1 holds several n×n arrays).
CENTRES_MAX_N = 4000
#: (k, d, Δ, ε) for the useful_n table (σ = 1, δ = 1e-6).
USEFUL = [(2, 2, 10.0, 1.0), (2, 2, 10.0, 8.0), (2, 2, 10.0, 100.0), (2, 2, 10.0, 1000.0),
          (3, 10, 12.0, 1.0), (3, 10, 12.0, 8.0), (5, 50, 20.0, 8.0), (5, 50, 20.0, 1000.0)]
#: A-priori rule for the real data (standardised): σ = 1 (each feature has total variance 1, which
#: bounds the within-class spread) and Δ = 2 (centres assumed at least 2 standard units apart).
REAL_SIGMA, REAL_SEPARATION = 1.0, 2.0
#: diffprivlib bounds, per coordinate, fixed before seeing data: synthetic ±(max |μ_j| + 5σ) from the
#: model's true centres (simulation parameters, not the sample), standardised real data ±4.
REAL_BOUND = 4.0
N_INIT = 10


def synthetic_bound(centres: np.ndarray, sigma: float = 1.0) -> float:
    return float(np.abs(centres).max() + 5.0 * sigma)


def ours(name, data, k, separation, sigma, epsilon, rng) -> dict:
    """One charged run of ``name``: {'status', 'estimate', 'guarantee', 'noise_ratio', ...}."""
    n, d = data.shape
    try:
        cal = calibrate(n, d, k, separation, epsilon, DELTA, sigma, method=OURS[name])
    except ValueError as exc:
        return {"status": "refused", "reason": str(exc)}
    facts = {"noise_ratio": cal.noise_sigma / separation, "radius_ratio": cal.noise_radius / separation,
             "useful": bool(cal.useful), "regime": cal.regime, "subsample": cal.subsample}
    if name == "gmm.centres" and n > CENTRES_MAX_N:
        return {"status": "not run", **facts}
    graph = dp.graph.estimator(name, epsilon=epsilon, delta=DELTA, k=k, n=n, d=d, separation=separation, sigma=sigma)
    guarantee = graph.plan().guarantee
    result = dp.Accountant(guarantee).run(graph, data, rng=rng)
    return {"status": "halted" if result.halted else "released", "estimate": result.output,
            "halted_by": None if not result.halted else str(result.halted_by),
            "guarantee": [guarantee.epsilon, guarantee.delta], **facts}


def kmeans(data, k, seed):
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=N_INIT, random_state=seed).fit(data).cluster_centers_


def dp_kmeans(data, k, epsilon, bound, seed):
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import KMeans
    from diffprivlib.utils import PrivacyLeakWarning

    d = data.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # bounds are given: any leak warning is a failure
        model = KMeans(n_clusters=k, epsilon=epsilon, bounds=(np.full(d, -bound), np.full(d, bound)),
                       random_state=seed, accountant=BudgetAccountant())
        return model.fit(data).cluster_centers_


def summarise(name: str, k: int, d: int, separation: float, sigma: float, n: int, bound: float,
              runs: dict, baseline: list[float], outside: float) -> dict:
    rows = []
    for eps in EPSILONS:
        row = {"epsilon": eps, "diffprivlib_median_error": float(np.median(runs["diffprivlib"][eps])),
               "diffprivlib_errors": runs["diffprivlib"][eps], "ours": {}}
        for estimator in OURS:
            mine = runs[estimator][eps]
            released = [r["error"] for r in mine if r["status"] == "released"]
            first = mine[0]
            status = first["status"] if first["status"] in ("refused", "not run") else (
                "released" if released else "halted")
            row["ours"][estimator] = {
                "status": status, "median_error": float(np.median(released)) if released else None,
                "halt_rate": float(np.mean([r["status"] == "halted" for r in mine]))
                if status in ("released", "halted") else None,
                "refused_reason": first.get("reason"),
                "halted_by": sorted({r["halted_by"] for r in mine if r.get("halted_by")}),
                "proven": first.get("guarantee"), "noise_over_separation": first.get("noise_ratio"),
                "radius_over_separation": first.get("radius_ratio"), "useful": first.get("useful"),
                "regime": first.get("regime"), "subsample": first.get("subsample")}
        rows.append(row)
    return {"name": name, "k": k, "d": d, "separation": separation, "sigma": sigma, "n": n, "bound": bound,
            "fraction_outside_bounds": outside, "kmeans_median_error": float(np.median(baseline)),
            "kmeans_errors": baseline, "rows": rows}


def scored(result: dict, truth) -> dict:
    """Replace a released estimate by its centre error (the JSON keeps errors, not estimates)."""
    estimate = result.pop("estimate", None)
    if result["status"] == "released":
        result["error"] = centre_error(estimate, truth)
    return result


def synthetic(setting, seeds, progress, task) -> dict:
    k, d, separation, n = setting
    runs = {name: {eps: [] for eps in EPSILONS} for name in (*OURS, "diffprivlib")}
    baseline, outside, bounds = [], [], []
    for seed in range(seeds):
        data_rng = np.random.default_rng([7, k, d, seed])
        data, truth, _ = sample_mixture(n, k, d, separation, data_rng)
        bound = synthetic_bound(truth)
        bounds.append(bound)
        outside.append(float(np.mean(np.abs(data) > bound)))
        baseline.append(centre_error(kmeans(data, k, seed), truth))
        for eps in EPSILONS:
            for index, name in enumerate(OURS):
                rng = np.random.default_rng([11, k, d, seed, int(eps * 10), index])
                runs[name][eps].append(scored(ours(name, data, k, separation, 1.0, eps, rng), truth))
            runs["diffprivlib"][eps].append(centre_error(dp_kmeans(data, k, eps, bound, seed), truth))
            progress.advance(task)
    return summarise(f"k={k}, d={d}, Δ={separation:g}, n={n}", k, d, separation, 1.0, n, max(bounds), runs, baseline,
                     float(np.mean(outside)))


def real(name: str, seeds, progress, task) -> dict:
    from sklearn import datasets

    loaded = getattr(datasets, f"load_{name}")()
    # Standardising with the data's own mean and std is NOT private: done for comparison only.
    data = (loaded.data - loaded.data.mean(axis=0)) / loaded.data.std(axis=0)
    labels = loaded.target
    classes = np.unique(labels)
    truth = np.array([data[labels == c].mean(axis=0) for c in classes])
    k, (n, d) = len(classes), data.shape
    runs = {name: {eps: [] for eps in EPSILONS} for name in (*OURS, "diffprivlib")}
    baseline = []
    for seed in range(seeds):
        baseline.append(centre_error(kmeans(data, k, seed), truth))
        for eps in EPSILONS:
            for index, estimator in enumerate(OURS):
                rng = np.random.default_rng([13, n, seed, int(eps * 10), index])
                runs[estimator][eps].append(scored(ours(estimator, data, k, REAL_SEPARATION, REAL_SIGMA, eps, rng),
                                                   truth))
            runs["diffprivlib"][eps].append(centre_error(dp_kmeans(data, k, eps, REAL_BOUND, seed), truth))
            progress.advance(task)
    gaps = np.linalg.norm(truth[:, None] - truth[None], axis=-1)[np.triu_indices(k, 1)]
    out = summarise(f"{name} (standardised), k={k}, d={d}, n={n}", k, d, REAL_SEPARATION, REAL_SIGMA, n,
                    REAL_BOUND, runs, baseline, float(np.mean(np.abs(data) > REAL_BOUND)))
    out["true_min_class_gap"] = float(gaps.min())
    return out


def useful_entry(args) -> dict:
    k, d, separation, eps = args
    entry = {"k": k, "d": d, "separation": separation, "epsilon": eps, "delta": DELTA}
    for name, method in OURS.items():
        n = useful_n(d, k, separation, eps, DELTA, method=method)
        entry[name] = {"useful_n": n}
        if n is not None:
            cal = calibrate(n, d, k, separation, eps, DELTA, method=method)
            entry[name] |= {"radius_over_separation": cal.noise_radius / separation, "regime": cal.regime,
                            "useful_there": bool(cal.useful)}
    return entry


def fmt(value, spec=".3g"):
    return "—" if value is None else format(value, spec)


def cell(mine: dict) -> tuple[str, str]:
    """(error or status, halt rate · noise radius/Δ) for one of our estimators at one ε."""
    radius = fmt(mine["radius_over_separation"])
    if mine["status"] == "refused":
        return "refused (no charge)", "—"
    if mine["status"] == "not run":
        return "not run (n×n step 1)", f"radius/Δ {radius}"
    error = fmt(mine["median_error"]) if mine["median_error"] is not None else "none released"
    return error, f"{mine['halt_rate']:.2f} · {radius}"


def table(result: dict) -> str:
    lines = [f"### {result['name']}",
             "",
             f"Non-private KMeans (n_init={N_INIT}) median error {result['kmeans_median_error']:.3g}; "
             f"Δ = {result['separation']:g}, σ = {result['sigma']:g}; diffprivlib bounds ±{result['bound']:g} per "
             f"coordinate (fraction of coordinates outside, clipped: {result['fraction_outside_bounds']:.2g})"
             + (f"; smallest true gap between class means {result['true_min_class_gap']:.3g}"
                if "true_min_class_gap" in result else "") + ".",
             "",
             "| nominal ε | gmm.centres | halts · radius/Δ | gmm.neighbourhood | halts · radius/Δ "
             "| diffprivlib KMeans | KMeans (non-private) |",
             "|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        cells = [part for name in OURS for part in cell(row["ours"][name])]
        lines.append(f"| {row['epsilon']:g} | " + " | ".join(cells) +
                     f" | {row['diffprivlib_median_error']:.3g} | {result['kmeans_median_error']:.3g} |")
    for name in OURS:
        refused = [row for row in result["rows"] if row["ours"][name]["status"] == "refused"]
        if refused:
            listed = ", ".join(format(r["epsilon"], "g") for r in refused)
            reason = refused[0]["ours"][name]["refused_reason"]
            lines.append(f"\n{name} refused at ε ∈ {{{listed}}}; e.g. at ε={refused[0]['epsilon']:g}: "
                         f"{reason[:200]}…")
        halted_by = sorted({h for row in result["rows"] for h in row["ours"][name]["halted_by"]})
        if halted_by:
            lines.append(f"\n{name} halts: " + "; ".join(halted_by) + ".")
    return "\n".join(lines)


def useful_table(entries) -> str:
    lines = ["### For which n the proven guarantee becomes meaningful (`useful_n`, σ = 1, δ = 1e-6)", "",
             "Smallest n (rounded up to 2 significant digits) at which `calibrate(...).useful`: step 6's noise "
             f"radius σ_V·√d is below Δ/{USEFUL_RATIO:g}, so that the proven (ε, δ) comes with output that can "
             "locate the centres; '> 1e15' means not below n = 10^15.", "",
             "| k | d | Δ | ε | gmm.centres | regime there | gmm.neighbourhood |",
             "|---|---|---|---|---|---|---|"]
    for e in entries:
        found = {name: "> 1e15" if e[name]["useful_n"] is None else format(e[name]["useful_n"], ".2g")
                 for name in OURS}
        lines.append(f"| {e['k']} | {e['d']} | {e['separation']:g} | {e['epsilon']:g} | {found['gmm.centres']} | "
                     f"{e['gmm.centres'].get('regime', '—')} | {found['gmm.neighbourhood']} |")
    return "\n".join(lines)


def plot(panels, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 3
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 4.3 * rows), squeeze=False)
    for ax, result in zip(axes.flat, panels):
        eps = [row["epsilon"] for row in result["rows"]]
        dpl = [row["diffprivlib_median_error"] for row in result["rows"]]
        ax.loglog(eps, dpl, "s-", label="diffprivlib KMeans (ε-DP, add/remove)")
        ax.axhline(result["kmeans_median_error"], color="k", linestyle="--", label="KMeans (non-private)")
        ax.axhline(result["separation"] / 2, color="grey", linestyle=":", label="Δ/2")
        top = max(max(dpl), result["separation"]) * 1.6
        for colour, (name, level) in zip(("C3", "C2"), ((name, top * (1.3 ** i)) for i, name in enumerate(OURS))):
            mine = [row["ours"][name]["median_error"] for row in result["rows"]]
            mine = [np.nan if value is None else value for value in mine]
            if np.isfinite(mine).any():
                ax.loglog(eps, mine, "o-", color=colour, label=f"{name} (released runs)")
            for row in result["rows"]:
                marker = {"refused": "x", "halted": "v", "not run": "."}.get(row["ours"][name]["status"])
                if marker:
                    ax.plot(row["epsilon"], level, marker, color=colour, markersize=8)
        for colour, name in zip(("C3", "C2"), OURS):
            ax.plot([], [], "v", color=colour, label=f"{name}: halted (all seeds)")
            ax.plot([], [], "x", color=colour, label=f"{name}: refused (ε, δ unmeetable at this n)")
        ax.plot([], [], ".", color="C3", label="gmm.centres: not run (n×n step 1 too large)")
        ax.set(title=result["name"], xlabel="nominal ε (ours: δ = 1e-6)", ylabel="max centre error (matched)")
        ax.set_ylim(top=top * 2.2)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)


def main() -> None:
    quick, saved = options("gmm_utility", "two settings, one seed, two useful_n entries")
    if saved is not None:
        finish(saved)
        return
    seeds = 1 if quick else 3
    settings = SETTINGS[:2] if quick else SETTINGS
    useful_settings = [USEFUL[3], USEFUL[5]] if quick else USEFUL
    start = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns) as progress:
        panels = []
        for setting in settings:
            task = progress.add_task(f"k={setting[0]} d={setting[1]} n={setting[3]}", total=seeds * len(EPSILONS))
            panels.append(synthetic(setting, seeds, progress, task))
        for name in ("iris", "wine"):
            task = progress.add_task(name, total=seeds * len(EPSILONS))
            panels.append(real(name, seeds, progress, task))
        comparison_seconds = time.perf_counter() - start
        task = progress.add_task("useful_n", total=len(useful_settings))
        entries = []
        for args in useful_settings:
            entries.append(useful_entry(args))
            progress.advance(task)
    seconds = time.perf_counter() - start
    results = {"delta": DELTA, "epsilons": EPSILONS, "seeds": seeds, "n_init": N_INIT, "panels": panels,
               "useful_n": entries, "comparison_seconds": comparison_seconds, "seconds": seconds}
    finish(results)


def finish(results: dict) -> None:
    seeds, panels, entries = results["seeds"], results["panels"], results["useful_n"]
    seconds, comparison_seconds = results["seconds"], results["comparison_seconds"]
    markdown = "\n\n".join([
        f"## gmm.centres and gmm.neighbourhood against k-means: centre error vs ε ({seeds} seeds)",
        "Error: max over centres of ||μ̂ − μ|| after the best (Hungarian) matching, median over seeds of the "
        "runs that released. Ours are planned and charged through `Accountant.run` at (ε, δ = 1e-6) under "
        "ReplaceOne; the plan's proven total is at most that (ε, δ) in every run (recorded in the JSON). "
        "'halts · radius/Δ' is the halt rate and step 6's noise radius σ_V·√d over the separation "
        f"(`Calibration.noise_radius`); `Calibration.useful` needs it below 1/{USEFUL_RATIO:g}. **gmm.centres "
        "(Algorithm D.5 with explicit constants) halts or is refused at every n benchmarked: its proven noise "
        "becomes usable only at n from 1e8 (ε >= 100) to beyond 1e15 (ε <= 1) (table at the end).** "
        "gmm.neighbourhood (our variant without the "
        "convex step) locates the centres from n of about 1e4.",
        "**diffprivlib KMeans** (DPLloyd, Su et al. 2016) is pure ε-DP for *add/remove-one* neighbours "
        "(Laplace noise on per-cluster sums, geometric noise on counts, ε split over its iterations), only "
        "when its `bounds` are chosen without looking at the data (otherwise it computes them from the data "
        "and warns `PrivacyLeakWarning`; here such a warning is turned into an error and none occurred). Under "
        "ReplaceOne, the relation of our guarantee, a replacement is a removal plus an addition, so the same "
        "run is 2ε-DP: at equal nominal ε diffprivlib's guarantee is weaker than ours by a factor 2 in ε (and "
        "ours carries δ = 1e-6). Its number of iterations also uses n, treated as public. Bounds used "
        f"(a priori): synthetic ±(max |μ_j| + 5σ) per coordinate from the simulation's true centres (the table shows the largest over seeds); standardised real data ±{REAL_BOUND:g}; points "
        "outside are clipped. diffprivlib starts from centres drawn uniformly within the bounds and runs a fixed "
        "number of noisy Lloyd iterations, so with wide bounds it can end far from the truth even at large ε "
        "(k=3, d=2, n=10000 below: error about 25 up to ε = 8 and 12 at ε = 1000).",
        "**Real data**: iris and wine from scikit-learn, standardised with their own mean and standard "
        "deviation — this step is itself NOT private and is done for comparison only. Truth = the class "
        "means (so even non-private KMeans has error, its clusters are not the classes). Our public "
        f"parameters by an a-priori rule: σ = {REAL_SIGMA:g} (a standardised feature has total variance 1, "
        f"which bounds the within-class spread) and Δ = {REAL_SEPARATION:g} (centres assumed at least two "
        "standard units apart); neither was tuned on the data.",
        *(table(panel) for panel in panels),
        useful_table(entries),
        f"Run time {seconds:.0f} s (comparison {comparison_seconds:.0f} s).",
    ])
    publish("gmm_utility", results, markdown, lambda path: plot(panels, path))


if __name__ == "__main__":
    main()
