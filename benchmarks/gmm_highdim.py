"""Private mixture-centre estimation in high dimension (issue 16): ``gmm.projected`` beside k-means,
diffprivlib, and the error sources of ours.

1. Synthetic spherical mixtures (Model 1.2: k = 3, separation Δ = 20, σ = 1) at d = 2, 10, 50, 100:
   centre error (max over centres of ||μ̂ − μ|| after the Hungarian matching, ``centre_error``)
   against n at ε = 4 and against ε at n = 20,000, δ = 1e-6, median over 3 seeds. For one (d, seed)
   the samples for every n are prefixes of one draw of the largest n (the same centres throughout).
   - ours: ``gmm.projected`` planned and charged through ``Accountant.run`` with the public ball
     (centre 0, radius R = max_j ||μ_j|| + σ(√d + 6), from the simulation's true centres);
   - scikit-learn KMeans (non-private, n_init = 10);
   - diffprivlib KMeans at the same nominal ε, bounds ±(max |μ_j| + 5σ) per coordinate (a priori).
   Error sources of ours, per run: (a) the error of the true-label means (the statistical rate,
   no privacy), (b) the error of the coarse centres released before the refinement
   (``result.outputs["coarse"]``), (c) the fraction of points misassigned (against the true labels,
   centres matched by the Hungarian method) by the map-back step (nearest located centre in the
   projection) and by the last Lloyd step (nearest centre before it), beside the fraction the true
   centres themselves misassign (the model's overlap), (d) the calibration's predicted noise error
   (``Calibration.final_error``, public parameters only) and its weaknesses.
2. scikit-learn's digits (d = 64, n = 1,797, k = 10, pixels 0..16; truth = the class means).
3. Synthetic 64-dimensional "embeddings" (``embedding_mixture``): n = 50,000, k = 10, uniform
   labels; centres = k independent uniform directions on the sphere, all scaled by one radius ρ
   chosen so that the closest pair is exactly 15 apart (ρ ≈ 12.4: the closest of 45 random
   directions in R^64 are somewhat nearer than √2), or 30 apart; cluster j's noise is
   N(0, Σ_j) with Σ_j = Q_j diag(λ_j) Q_jᵀ, Q_j a uniformly random rotation and λ_j uniform in
   [0.25, 1.5] (so the spread along any direction is between 0.5 and √1.5 ≈ 1.22).

Public parameters are fixed by a priori rules (stated in the md, never tuned on the data).

Run: python benchmarks/gmm_highdim.py [--quick] [--render]. Writes results/gmm_highdim.{json,md,png}.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from scipy.optimize import linear_sum_assignment
from scipy.stats import special_ortho_group

import dpledger as dp
from dpledger.algorithms.gmm import centre_error, sample_mixture

from _common import options, publish
from gmm_utility import N_INIT, dp_kmeans, kmeans, synthetic_bound

NAME = "gmm_highdim"
ESTIMATOR = "gmm.projected"
DELTA = 1e-6
K, SEPARATION, SIGMA = 3, 20.0, 1.0
DIMENSIONS = [2, 10, 50, 100]
EPSILONS = [0.5, 1, 2, 4, 8]
NS = [2_000, 5_000, 20_000, 100_000]
HEADLINE_N, HEADLINE_EPSILON = 20_000, 4.0
#: Issue 16's targets at the headline setting: error of ours at d, and diffprivlib's error over ours.
TARGETS = {2: 0.5, 50: 1.0}
RATIO_TARGET = 10.0
SEEDS = 3
#: Digits: the pixel box [0, 16]^64 is known a priori; it lies in the ball centred at 8·1 of radius
#: 8·√64 = 64. σ = 4 (a quarter of the pixel range) and Δ = 20 (a third of the box's
#: half-diagonal) are our a-priori guesses of the within-class spread and the class-mean gaps.
DIGITS_SIGMA, DIGITS_SEPARATION, DIGITS_RADIUS, DIGITS_MIDDLE = 4.0, 20.0, 64.0, 8.0
#: Embeddings: k, d, n and the closest gap of the generator; σ = √(largest eigenvalue) is public.
#: Two closest gaps: 15 (about 12σ; the projection merges clusters) and 30 (where it should work).
EMBEDDING_K, EMBEDDING_D, EMBEDDING_N, EMBEDDING_GAPS = 10, 64, 50_000, (15.0, 30.0)
EMBEDDING_EIGENVALUES = (0.25, 1.5)
EMBEDDING_SIGMA = float(np.sqrt(EMBEDDING_EIGENVALUES[1]))


@dataclass
class Dataset:
    """One input with its truth and the public parameters fixed for it a priori."""

    family: str
    data: np.ndarray
    labels: np.ndarray
    truth: np.ndarray
    separation: float
    sigma: float
    radius: float  # the public ball (centre ``middle``·1, this radius) given to ours
    middle: float  # the ball's centre and the centre of diffprivlib's box, per coordinate
    half_width: float  # diffprivlib's box: middle ± half_width per coordinate

    @property
    def k(self) -> int:
        return len(self.truth)


def ball_radius(centres: np.ndarray, sigma: float) -> float:
    """R = max_j ||μ_j|| + σ(√d + 6): the ball about 0 that holds all but a negligible part of the
    mixture (a Gaussian's norm exceeds σ(√d + t) with probability at most e^{−t²/2})."""
    return float(np.linalg.norm(centres, axis=1).max() + sigma * (np.sqrt(centres.shape[1]) + 6.0))


def mixture(d: int, n: int, seed: int) -> Dataset:
    """Model 1.2 at (K, d, SEPARATION, σ = 1), public bounds from the simulation's true centres."""
    data, truth, labels = sample_mixture(n, K, d, SEPARATION, np.random.default_rng([16, d, seed]))
    return Dataset("mixture", data, labels, truth, SEPARATION, SIGMA, ball_radius(truth, SIGMA), 0.0,
                   synthetic_bound(truth, SIGMA))


def prefix(dataset: Dataset, n: int) -> Dataset:
    """The first n samples (labels are i.i.d., so a prefix is a sample of size n)."""
    return Dataset(**{**vars(dataset), "data": dataset.data[:n], "labels": dataset.labels[:n]})


def embedding_mixture(n: int, k: int, d: int, gap: float, rng: np.random.Generator):
    """(samples, centres, labels) of the embedding generator described in the module docstring."""
    directions = rng.standard_normal((k, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    gaps = np.linalg.norm(directions[:, None] - directions[None], axis=-1)[np.triu_indices(k, 1)]
    centres = directions * (gap / gaps.min())
    labels = rng.integers(k, size=n)
    low, high = EMBEDDING_EIGENVALUES
    samples = centres[labels]
    for j in range(k):
        root = special_ortho_group.rvs(d, random_state=rng) * np.sqrt(rng.uniform(low, high, d))  # Q_j diag(√λ_j)
        members = labels == j
        samples[members] += rng.standard_normal((members.sum(), d)) @ root.T
    return samples, centres, labels


def embedding_family(gap: float) -> str:
    return f"embeddings, gap {gap:g}"


def embeddings(n: int, seed: int, gap: float) -> Dataset:
    data, truth, labels = embedding_mixture(n, EMBEDDING_K, EMBEDDING_D, gap, np.random.default_rng([64, seed]))
    return Dataset(embedding_family(gap), data, labels, truth, gap, EMBEDDING_SIGMA,
                   ball_radius(truth, EMBEDDING_SIGMA), 0.0, synthetic_bound(truth, EMBEDDING_SIGMA))


def digits() -> Dataset:
    from sklearn.datasets import load_digits

    loaded = load_digits()
    classes = np.unique(loaded.target)
    truth = np.array([loaded.data[loaded.target == c].mean(axis=0) for c in classes])
    return Dataset("digits", loaded.data, loaded.target, truth, DIGITS_SEPARATION, DIGITS_SIGMA, DIGITS_RADIUS,
                   DIGITS_MIDDLE, DIGITS_MIDDLE)


def available() -> bool:
    return ESTIMATOR in dp.graph.estimators()


def ours(dataset: Dataset, epsilon: float, rng: np.random.Generator) -> dict:
    """One charged run of gmm.projected: status ('released', 'halted', 'refused' when the plan
    cannot be built at these parameters, or 'not available'), the released centres of each stage
    (located in the projection, coarse, the ones the last Lloyd step assigned by, final), the
    guarantee, and what the calibration predicts before the data."""
    if not available():
        return {"status": "not available"}
    from dpledger.algorithms.gmm.projected import calibrate, projection

    n, d = dataset.data.shape
    params = {"epsilon": epsilon, "delta": DELTA, "k": dataset.k, "n": n, "d": d, "separation": dataset.separation,
              "radius": dataset.radius, "sigma": dataset.sigma,
              "centre": None if dataset.middle == 0 else np.full(d, dataset.middle)}
    try:
        graph = dp.graph.estimator(ESTIMATOR, **params)
    except ValueError as exc:
        return {"status": "refused", "reason": str(exc)}
    guarantee = graph.plan().guarantee
    result = dp.Accountant(guarantee).run(graph, dataset.data, rng=rng)
    calibration = calibrate(**params)
    previous = "coarse" if calibration.steps == 1 else f"lloyd_{calibration.steps - 1}"
    return {"status": "halted" if result.halted else "released", "halted_by": result.halted_by,
            "guarantee": [guarantee.epsilon, guarantee.delta], "estimate": result.output,
            "located": result.outputs.get("locate"), "coarse": result.outputs.get("coarse"),
            "previous": result.outputs.get(previous),
            "projection": projection(d, calibration.dimension, calibration.seed), **predicted(calibration)}


def predicted(calibration) -> dict:
    """(d) the calibration's own prediction, from public parameters only: the typical distance the
    last Lloyd step's noise (``final_error``) and the map-back step's noise move a centre, and the
    plan's list of weaknesses (empty when it calls the setting useful)."""
    return {"predicted_noise": calibration.final_error,
            "predicted_coarse_noise": calibration.noise_error(calibration.mapback),
            "weaknesses": calibration.weaknesses(), "steps": calibration.steps}


def misassigned(data: np.ndarray, labels: np.ndarray, centres: np.ndarray, truth: np.ndarray) -> float:
    """Fraction of points whose nearest centre is not matched (Hungarian) to their true centre."""
    rows, cols = linear_sum_assignment(np.linalg.norm(centres[:, None] - truth[None], axis=-1))
    matched = np.empty(len(centres), int)
    matched[rows] = cols
    squared = (data ** 2).sum(1)[:, None] - 2 * data @ centres.T + (centres ** 2).sum(1)[None]
    return float(np.mean(matched[squared.argmin(axis=1)] != labels))


def scored(run: dict, dataset: Dataset) -> dict:
    """Replace our centres by their errors and misassignments (the JSON keeps numbers): (b) the
    coarse centres' error, (c) the points misassigned by the map-back step (nearest located centre
    in the projection) and by the last Lloyd step, and whether a final centre left the public ball."""
    arrays = {key: run.pop(key, None) for key in ("estimate", "located", "coarse", "previous", "projection")}
    if run["status"] == "released":
        run["error"] = centre_error(arrays["estimate"], dataset.truth)
        offsets = np.asarray(arrays["estimate"]) - dataset.middle
        run["outside_ball"] = bool(np.linalg.norm(offsets, axis=1).max() > dataset.radius)
    if arrays["coarse"] is not None:
        run["coarse_error"] = centre_error(arrays["coarse"], dataset.truth)
    if arrays["located"] is not None:
        matrix = arrays["projection"]
        run["mapback_misassigned"] = misassigned(dataset.data @ matrix.T, dataset.labels, arrays["located"],
                                                 dataset.truth @ matrix.T)
    if arrays["previous"] is not None:
        run["misassigned"] = misassigned(dataset.data, dataset.labels, np.asarray(arrays["previous"]),
                                         dataset.truth)
    return run


def baselines(dataset: Dataset, seed: int) -> dict:
    """What does not depend on ε: KMeans, the true-label means and the true centres' misassignment."""
    means = np.array([dataset.data[dataset.labels == j].mean(axis=0) for j in range(dataset.k)])
    return {"kmeans": centre_error(kmeans(dataset.data, dataset.k, seed), dataset.truth),
            "label_means": centre_error(means, dataset.truth),
            "truth_misassigned": misassigned(dataset.data, dataset.labels, dataset.truth, dataset.truth)}


def private_runs(dataset: Dataset, epsilon: float, seed: int) -> dict:
    """Ours and diffprivlib at one ε (diffprivlib on the data shifted so that its box is symmetric)."""
    n, d = dataset.data.shape
    rng = np.random.default_rng([17, d, n, seed, int(epsilon * 10)])
    shift = dataset.middle
    diffprivlib = dp_kmeans(dataset.data - shift, dataset.k, epsilon, dataset.half_width, seed) + shift
    return {"epsilon": epsilon, "ours": scored(ours(dataset, epsilon, rng), dataset),
            "diffprivlib": centre_error(diffprivlib, dataset.truth)}


def evaluate(dataset: Dataset, epsilons, seed: int, progress, task) -> list[dict]:
    """Flat rows (one per ε) for one dataset and seed."""
    n, d = dataset.data.shape
    fixed = {"family": dataset.family, "d": d, "n": n, "seed": seed, **baselines(dataset, seed)}
    rows = []
    for epsilon in epsilons:
        rows.append({**fixed, **private_runs(dataset, epsilon, seed)})
        progress.advance(task)
    return rows


def sweep(label: str, make, ns, sweep_n: int, epsilons, seeds: int, progress) -> list[dict]:
    """Runs against n (at HEADLINE_EPSILON) and against ε (at ``sweep_n``) on prefixes of
    ``make(seed)``, a dataset of the largest n."""
    task = progress.add_task(label, total=seeds * sum(len(epsilons) if n == sweep_n else 1 for n in ns))
    rows = []
    for seed in range(seeds):
        full = make(seed)
        for n in ns:
            rows += evaluate(prefix(full, n), epsilons if n == sweep_n else [HEADLINE_EPSILON], seed, progress, task)
    return rows


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def summary(rows: list[dict], **where) -> dict:
    """Medians over seeds of every number at one (family, d, n, ε), and our status there."""
    chosen = [r for r in rows if all(r[key] == value for key, value in where.items())]
    mine = [r["ours"] for r in chosen]
    statuses = {m["status"] for m in mine}
    released = [m for m in mine if m["status"] == "released"]
    return {"status": "released" if released else "/".join(sorted(statuses)),
            "halt_rate": float(np.mean([m["status"] == "halted" for m in mine])),
            "ours": median(m.get("error") for m in released), "coarse": median(m.get("coarse_error") for m in mine),
            "misassigned": median(m.get("misassigned") for m in mine),
            "mapback_misassigned": median(m.get("mapback_misassigned") for m in mine),
            "outside_ball": sum(bool(m.get("outside_ball")) for m in released), "released": len(released),
            "predicted": median(m.get("predicted_noise") for m in mine),
            "predicted_coarse": median(m.get("predicted_coarse_noise") for m in mine),
            "weaknesses": next((m["weaknesses"] for m in mine if m.get("weaknesses")), []),
            **{key: median(r[key] for r in chosen)
               for key in ("kmeans", "diffprivlib", "label_means", "truth_misassigned")}}


def fmt(value, spec=".3g") -> str:
    return "—" if value is None else format(value, spec)


def ours_cell(s: dict) -> str:
    """Our median error, with the halt rate and the released runs with a centre outside the ball."""
    if s["status"] != "released":
        return s["status"]
    notes = ([f"{s['halt_rate']:.0%} halted"] if s["halt_rate"] else []) + (
        [f"{s['outside_ball']}/{s['released']} outside the ball"] if s["outside_ball"] else [])
    return fmt(s["ours"]) + (f" ({', '.join(notes)})" if notes else "")


def ratio(s: dict) -> float | None:
    return s["diffprivlib"] / s["ours"] if s["ours"] else None


def table(rows: list[dict], vary: str, values, **where) -> str:
    """One md table: a row per value of ``vary`` (n or epsilon) at the fixed ``where``; then the
    plan's weaknesses wherever it called the setting weak."""
    lines = [f"| {vary} | ours | (a) label means | (b) coarse | (c) misassigned: map-back · last Lloyd "
             "| true centres misassign | (d) predicted noise: final · map-back | plan | KMeans | diffprivlib "
             "| diffprivlib / ours |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    weak = []
    for value in values:
        s = summary(rows, **where, **{vary: value})
        if s["weaknesses"]:
            weak.append(f"{vary} = {value:g}: " + "; ".join(s["weaknesses"]) + ".")
        plan = "—" if s["predicted"] is None else ("WEAK" if s["weaknesses"] else "useful")
        lines.append(f"| {value:g} | {ours_cell(s)} | {fmt(s['label_means'])} | {fmt(s['coarse'])} | "
                     f"{fmt(s['mapback_misassigned'], '.2%')} · {fmt(s['misassigned'], '.2%')} | "
                     f"{fmt(s['truth_misassigned'], '.2%')} | {fmt(s['predicted'])} · {fmt(s['predicted_coarse'])} | "
                     f"{plan} | {fmt(s['kmeans'])} | {fmt(s['diffprivlib'])} | {fmt(ratio(s))} |")
    return "\n".join(lines + ([""] + ["Plan WEAK at " + line for line in weak] if weak else []))


def headline(rows: list[dict], dims) -> tuple[str, list[dict]]:
    """The headline table (n = 20,000, ε = 4) per d, with the issue's targets checked and the error
    beside its sources: √((a)² + (d)²) is what the statistical rate and the predicted noise add to."""
    lines = ["| d | ours | target | (a) label means | (d) predicted noise | √((a)² + (d)²) | (b) coarse "
             "| (c) misassigned: map-back · last Lloyd | KMeans | diffprivlib | diffprivlib / ours (target ≥ 10) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    entries = []
    for d in dims:
        s = summary(rows, family="mixture", d=d, n=HEADLINE_N, epsilon=HEADLINE_EPSILON)
        target = TARGETS.get(d)
        met = "" if target is None or s["ours"] is None else (" met" if s["ours"] <= target else " **missed**")
        times = ratio(s)
        ratio_met = "" if times is None else (" met" if times >= RATIO_TARGET else " **missed**")
        combined = None if s["predicted"] is None else float(np.hypot(s["label_means"], s["predicted"]))
        lines.append(f"| {d} | {ours_cell(s)} | {'—' if target is None else f'≤ {target:g}'}{met} | "
                     f"{fmt(s['label_means'])} | {fmt(s['predicted'])} | {fmt(combined)} | {fmt(s['coarse'])} | "
                     f"{fmt(s['mapback_misassigned'], '.2%')} · {fmt(s['misassigned'], '.2%')} | {fmt(s['kmeans'])} | "
                     f"{fmt(s['diffprivlib'])} | {fmt(times)}{ratio_met} |")
        entries.append({"d": d, **s, "target": target, "ratio": times})
    return "\n".join(lines), entries


def panels(config: dict) -> list[tuple[str, str, list, dict]]:
    """(title, varied key, its values, the fixed keys) of each plotted panel."""
    dims, ns, epsilons = config["dims"], config["ns"], config["epsilons"]
    return ([(f"d={d}, ε={HEADLINE_EPSILON:g}", "n", ns, {"family": "mixture", "d": d, "epsilon": HEADLINE_EPSILON})
             for d in dims]
            + [(f"d={d}, n={HEADLINE_N:,}", "epsilon", epsilons, {"family": "mixture", "d": d, "n": HEADLINE_N})
               for d in dims]
            + [("digits (d=64, n=1,797, k=10)", "epsilon", epsilons, {"family": "digits"})]
            + [(f"embeddings (d={EMBEDDING_D}, n={config['embedding_n']:,}, k={EMBEDDING_K}, gap {gap:g})", "epsilon",
                epsilons, {"family": embedding_family(gap), "n": config["embedding_n"]}) for gap in EMBEDDING_GAPS])


#: (summary key, matplotlib keywords, legend) of each plotted curve; the label means are drawn wide
#: and pale because KMeans's error coincides with theirs when the clusters are recovered.
CURVES = [("label_means", {"color": "0.75", "linewidth": 6}, "true-label means (a): statistical rate"),
          ("kmeans", {"color": "k", "linestyle": "--"}, f"KMeans (non-private, n_init={N_INIT})"),
          ("diffprivlib", {"color": "C0", "marker": "s"}, "diffprivlib KMeans (ε-DP add/remove: 2ε replace-one)"),
          ("coarse", {"color": "C1", "marker": "o", "linestyle": "--"}, "ours: coarse centres (b)"),
          ("ours", {"color": "C3", "marker": "o"}, f"{ESTIMATOR} (median of released runs)"),
          ("predicted", {"color": "C3", "linestyle": ":"}, "ours: predicted noise error of the last step (d)")]


def plot(rows: list[dict], config: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    chosen = panels(config)
    columns = len(config["dims"])
    rows_of_panels = -(-(len(chosen) + 1) // columns)  # one free slot for the legend
    fig, axes = plt.subplots(rows_of_panels, columns, figsize=(4.6 * columns, 4.2 * rows_of_panels), squeeze=False)
    for ax, (title, vary, values, where) in zip(axes.flat, chosen):
        summaries = [summary(rows, **where, **{vary: v}) for v in values]
        for key, style, label in CURVES:
            ys = np.array([np.nan if s[key] is None else s[key] for s in summaries])
            if np.isfinite(ys).any():
                ax.plot(values, ys, label=label, **style)
        if where.get("d") in TARGETS:
            ax.plot([HEADLINE_N if vary == "n" else HEADLINE_EPSILON], [TARGETS[where["d"]]], "*", color="C2",
                    markersize=13, label="issue 16 target at the headline (n=20,000, ε=4)")
        ax.set(xscale="log", yscale="log", title=title, xlabel="n" if vary == "n" else "nominal ε (ours: δ = 1e-6)",
               ylabel="max centre error (matched)")
        ax.set_xticks(values, [f"{v:,g}" for v in values])
        ax.xaxis.set_minor_locator(NullLocator())
    for ax in axes.flat[len(chosen):]:
        ax.axis("off")
    legend = {}
    for ax in axes.flat:
        legend |= dict(zip(*reversed(ax.get_legend_handles_labels())))
    fig.legend(list(legend.values()), list(legend), loc="lower right", bbox_to_anchor=(0.97, 0.06), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


#: What we checked for other private k-means on PyPI (see the final report of issue 16).
OTHERS = (
    "**Other private k-means checked (none included).** opendp 0.16.0 (installed): its modules were walked by "
    "introspection (`pkgutil.walk_packages`, names matching kmeans/cluster/centroid/lloyd/mixture/gmm) and hold "
    "no clustering: its measurements are noise, thresholds, noisy max/top-k, quantiles, randomized response and "
    "polars/expression queries, and `opendp.extras.sklearn` has only `decomposition.PCA` and "
    "`linear_model.LinearRegression` (Theil–Sen). python-dp 1.1.5 (Google's library, PyPI `python-dp`; "
    "PyPI `pydp` 0.1.16 is an unrelated 2019 'Data Processing Lib'): its wheel holds Laplace bounded "
    "sums/means/counts, percentiles, partition selection and `pydp.ml.naive_bayes`, no clustering. "
    "dp-learning-ff 0.0.8: CoinPress private means and class prototypes from labelled data (supervised, not "
    "clustering). differential-privacy 0.1.0: an empty package (one 194-byte `__init__.py`). `dp-clustering` "
    "is not on PyPI. The wheels were downloaded with `pip download --no-deps` and read, not installed.")


def diffprivlib_seeds(rows: list[dict], config: dict) -> str:
    """diffprivlib's error on each seed at the headline: how much of the ratio its starts explain."""
    parts = [f"d = {d}: " + ", ".join(fmt(r["diffprivlib"]) for r in rows if r["family"] == "mixture" and r["d"] == d
                                      and r["n"] == HEADLINE_N and r["epsilon"] == HEADLINE_EPSILON)
             for d in config["dims"]]
    return "Per seed at the headline: " + "; ".join(parts) + "."


def notes(rows: list[dict], config: dict) -> str:
    steps = next((r["ours"]["steps"] for r in rows if "steps" in r["ours"]), "—")
    return "\n\n".join([
        f"Error: max over centres of ||μ̂ − μ|| after the best (Hungarian) matching (`centre_error`), median over "
        f"{config['seeds']} seed(s) (ours: over the runs that released). Ours (`{ESTIMATOR}`) is planned and charged "
        "through `Accountant.run` at (ε, δ = 1e-6) under ReplaceOne, with the public ball (centre, radius R) "
        "that bounds the data (points outside are clipped by the estimator). Error sources of ours: **(a)** the "
        "error of the true-label means (the statistical rate: no privacy, no clustering), **(b)** the error of "
        "the coarse centres the run releases before its refinement (`result.outputs['coarse']`), **(c)** the "
        "fraction of points misassigned (centres matched to the true ones, against the true labels) by the "
        "map-back step (each point to its nearest located centre *in the projection*: the bias of the locating "
        "step, which feeds (b)) and by the last Lloyd step (each point to its nearest centre before that step: "
        f"the coarse ones when `steps` = 1, else those of the step before; `steps` = {steps} here, the "
        "default); beside them the fraction the true centres themselves misassign (the mixture's overlap, a "
        "floor for (c)); **(d)** the calibration's prediction before the data (`Calibration.final_error`: the "
        "typical distance the last step's noise moves a centre, σ_noise·√d·k/n; and the same for the map-back "
        "step). 'plan' is WEAK when `Calibration.weaknesses()` is not empty (listed below each table). "
        "'outside the ball': released runs with a final centre farther than R from the ball's centre.",
        "**diffprivlib KMeans** (DPLloyd, Su et al. 2016) is pure ε-DP for *add/remove-one* neighbours, when its "
        "`bounds` are fixed without looking at the data (a `PrivacyLeakWarning` is turned into an error; none "
        "occurred). Under ReplaceOne, our relation, a replacement is a removal plus an addition, so the same run "
        "is **2ε-DP**: at equal nominal ε its guarantee is weaker than ours by a factor 2 in ε (ours carries "
        "δ = 1e-6). Its iteration count also uses n, treated as public. Its error here is mostly not noise: it "
        "starts from centres drawn uniformly in the box, and a centre that no point is nearest to is skipped by "
        "every update (`if cluster not in labels: continue`), so it stays where it started, tens of units from "
        "any cluster. " + diffprivlib_seeds(rows, config),
        "**Public parameters, all fixed a priori.** Synthetic mixtures (k = 3, Δ = 20, σ = 1): our ball is "
        "centred at 0 with R = max_j ||μ_j|| + σ(√d + 6) from the simulation's true centres; diffprivlib's box "
        "is ±(max |μ_j| + 5σ) per coordinate (as in gmm_utility). **Digits** (truth = the class means, so (a) is "
        "0 and KMeans has error): the pixel box [0, 16]^64 is known before the data; our ball is its enclosing "
        f"ball, centre 8·1, radius 8·√64 = {DIGITS_RADIUS:g}; diffprivlib gets the box itself. σ = "
        f"{DIGITS_SIGMA:g} (a quarter of the pixel range as the within-class spread of a pixel) and Δ = "
        f"{DIGITS_SEPARATION:g} (a third of the box's half-diagonal 64 as the gap between class means) are "
        "guesses made before looking at the data, not tuned. **Embeddings** (generator in the module "
        f"docstring): k = {EMBEDDING_K}, d = {EMBEDDING_D}, n = {config['embedding_n']:,}, centres on a sphere "
        f"with closest gap {' or '.join(f'{gap:g}' for gap in EMBEDDING_GAPS)}, cluster covariances with eigenvalues "
        f"uniform in [{EMBEDDING_EIGENVALUES[0]:g}, {EMBEDDING_EIGENVALUES[1]:g}]; public Δ = the gap (the "
        f"generator's), σ = √{EMBEDDING_EIGENVALUES[1]:g} = {EMBEDDING_SIGMA:.3g} (the largest spread along any "
        "direction), R and diffprivlib's box by the synthetic rule with this σ.",
        OTHERS])


def statuses(rows: list[dict]) -> str:
    """Halting steps, runs that left the ball and refusals seen, if any (the first refusal's reason, cut)."""
    halts = sorted({str(r["ours"]["halted_by"]) for r in rows if r["ours"].get("halted_by")})
    refusals = [r for r in rows if r["ours"]["status"] == "refused"]
    outside = [r for r in rows if r["ours"].get("outside_ball")]
    lines = [f"Ours halted at: {', '.join(halts)}." if halts else "",
             f"{len(outside)} released runs had a final centre outside the public ball: "
             + "; ".join(f"{r['family']} d={r['d']} n={r['n']} ε={r['epsilon']:g} seed {r['seed']} "
                         f"(error {r['ours']['error']:.3g})" for r in outside) + "." if outside else ""]
    if refusals:
        first = refusals[0]
        lines.append(f"Ours refused {len(refusals)} runs (no charge); e.g. {first['family']} d={first['d']} "
                     f"n={first['n']} ε={first['epsilon']:g}: {first['ours']['reason'][:300]}")
    return "\n\n".join(line for line in lines if line)


def finish(results: dict) -> None:
    config, rows = results["config"], results["rows"]
    head, entries = headline(rows, config["dims"])
    results["headline"] = entries
    sections = [f"## {ESTIMATOR} in high dimension: centre error vs n and ε (issue 16)",
                f"### Headline: n = {HEADLINE_N:,}, k = {K}, Δ = {SEPARATION:g}, σ = {SIGMA:g}, "
                f"(ε, δ) = ({HEADLINE_EPSILON:g}, 1e-6)", head, notes(rows, config)]
    for d in config["dims"]:
        sections += [f"### Synthetic, d = {d}: against n at ε = {HEADLINE_EPSILON:g}",
                     table(rows, "n", config["ns"], family="mixture", d=d, epsilon=HEADLINE_EPSILON),
                     f"### Synthetic, d = {d}: against ε at n = {HEADLINE_N:,}",
                     table(rows, "epsilon", config["epsilons"], family="mixture", d=d, n=HEADLINE_N)]
    sections += ["### Digits (scikit-learn; d = 64, n = 1,797, k = 10): against ε",
                 table(rows, "epsilon", config["epsilons"], family="digits"),
                 *(part for gap in EMBEDDING_GAPS for part in (
                     f"### Embeddings (d = {EMBEDDING_D}, n = {config['embedding_n']:,}, k = {EMBEDDING_K}, closest "
                     f"gap {gap:g}): against ε",
                     table(rows, "epsilon", config["epsilons"], family=embedding_family(gap), n=config["embedding_n"]))),
                 statuses(rows), f"Run time {results['seconds']:.0f} s ({config['seeds']} seeds)."]
    markdown = "\n\n".join(section for section in sections if section)
    publish(NAME, results, markdown, lambda path: plot(rows, config, path))
    Console().rule("[bold]headline: n = 20,000, k = 3, Δ = 20, (ε, δ) = (4, 1e-6)")
    print(head)


def configure(quick: bool) -> dict:
    if quick:
        return {"dims": [2, 50], "ns": [5_000, HEADLINE_N], "epsilons": [1, HEADLINE_EPSILON], "seeds": 1,
                "embedding_n": 10_000}
    return {"dims": DIMENSIONS, "ns": NS, "epsilons": EPSILONS, "seeds": SEEDS, "embedding_n": EMBEDDING_N}


def run(config: dict) -> list[dict]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    epsilons, seeds = config["epsilons"], config["seeds"]
    rows = []
    with Progress(*columns) as progress:
        for d in config["dims"]:
            rows += sweep(f"mixture d={d}", lambda seed: mixture(d, max(config["ns"]), seed), config["ns"],
                          HEADLINE_N, epsilons, seeds, progress)
        loaded = digits()
        rows += sweep("digits", lambda seed: loaded, [len(loaded.data)], len(loaded.data), epsilons, seeds, progress)
        n = config["embedding_n"]
        for gap in EMBEDDING_GAPS:
            rows += sweep(embedding_family(gap), lambda seed: embeddings(n, seed, gap), [n], n, epsilons, seeds,
                          progress)
    return rows


def main() -> None:
    quick, saved = options(NAME, "d = 2 and 50, two n, two ε, one seed, 10,000 embeddings")
    if saved is not None:
        finish(saved)
        return
    config = configure(quick)
    start = time.perf_counter()
    rows = run(config)
    finish({"estimator": ESTIMATOR, "available": available(), "delta": DELTA, "config": config, "rows": rows,
            "seconds": time.perf_counter() - start})


if __name__ == "__main__":
    main()
