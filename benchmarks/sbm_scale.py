"""Scale of private exact recovery in the SBM (issue 15): ``sbm.spectral_exact`` beside the dense
SDP ``sbm.exact`` and two baselines written here, on sparse graphs of the log-n model
(p = a ln n/n, q = b ln n/n, ``sbm.sample_sparse_log``).

1. Scale: n from 1000 to 10^6 at (a, b, ε, δ) = (40, 5, 2, 1e-9): exact-recovery rate, median
   error, time (sampling reported apart) and peak memory of each method; ``sbm.exact`` at n = 1000
   and 2000 only (its dense SDP refuses n > 10^4). n = 10^6: one seed.
2. Regimes at n = 10^5: (a, b) in {(40, 5), (20, 4), (10, 2)} × ε in {0.5, 1, 2, 4}, the two private
   methods side by side, and the smallest ε with exact recovery in >= 2 of 3 seeds.
3. Time of ``sbm.spectral_exact`` over the non-private spectral baseline at n = 10^5.

Baselines (numpy/scipy, *not* privacy-audited code, labelled as such in the results):
- non-private spectral: signs of the eigenvector of the second largest eigenvalue of A
  (``eigsh(A, k=2, which="LA")``), then a majority vote on the same graph;
- textbook private: edge split 1/2; 15 noisy power steps y = A1·x + N(0, σ²I) on one half, x = y
  centred, unit norm, clipped entrywise to ±2/√n (ℓ2-sensitivity √2·2/√n), σ from Gaussian DP:
  μ_total solves δ = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), μ_step = μ_total/√15, σ = Δ/μ_step; then a
  Laplace vote (scale 2/ε) on the other half. Floating-point effects on sensitivity are ignored.

Every measurement runs in a fresh ``spawn`` process that loads the graph from disk, so the peak RSS
(``ru_maxrss``) of each (method, graph) is its own and includes the graph itself; sampling runs in
its own process too. A process that fails (out of memory, time limit) is recorded, not fatal.

Run: python benchmarks/sbm_scale.py [--quick]. Writes results/sbm_scale.{json,md,png} and
results/sbm_scale_regimes.png.
"""

from __future__ import annotations

import math
import multiprocessing
import pathlib
import resource
import shutil
import sys
import tempfile
import time
import traceback

import numpy as np

from _common import machine, publish, quick_run

DELTA = 1e-9
SCALE_MODEL = (40.0, 5.0, 2.0)  # (a, b, ε)
SCALE_N = [1000, 2000, 3000, 10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6]  # 2000: the SDP's second point
SDP_N = [1000, 2000]
ONE_SEED_N = 10**6
REGIME_N = 10**5
REGIMES = [(40.0, 5.0), (20.0, 4.0), (10.0, 2.0)]
EPSILONS = [0.5, 1.0, 2.0, 4.0]
TEXTBOOK_STEPS, TEXTBOOK_CLIP = 15, 2.0
METHODS = ("nonprivate", "textbook", "sbm.spectral_exact", "sbm.exact")
LABELS = {"nonprivate": "non-private spectral (baseline)", "textbook": "textbook private (baseline)",
          "sbm.spectral_exact": "sbm.spectral_exact", "sbm.exact": "sbm.exact (SDP)"}
TIME_LIMIT = 1800.0  # seconds per process
GIB = 2.0**30


# ---------------------------------------------------------------- worker side (fresh processes)

def _peak_rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0  # kilobytes on Linux


def _limit_memory() -> float | None:
    """Cap the address space at what the machine has free (less a margin), so that a run too big
    for it ends in MemoryError here instead of waking the kernel's OOM killer on a shared machine."""
    try:
        info = dict(line.split(":", 1) for line in pathlib.Path("/proc/meminfo").read_text().splitlines())
        available = float(info["MemAvailable"].split()[0]) * 1024
        status = dict(line.split(":", 1) for line in pathlib.Path("/proc/self/status").read_text().splitlines())
        virtual = float(status["VmSize"].split()[0]) * 1024
        limit = int(virtual + max(available - 1.5 * GIB, 1 * GIB))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        return limit
    except (OSError, KeyError, ValueError):
        return None


def _save(folder: pathlib.Path, adjacency, labels) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "indptr.npy", adjacency.indptr)
    np.save(folder / "indices.npy", adjacency.indices)
    np.save(folder / "labels.npy", labels)


def _load(folder: pathlib.Path):
    import scipy.sparse as sp

    indptr, indices = np.load(folder / "indptr.npy"), np.load(folder / "indices.npy")
    n = indptr.size - 1
    return sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, n)), np.load(folder / "labels.npy")


def _sample_job(n, a, b, seed, folder):
    from dpledger.algorithms import sbm

    start = time.perf_counter()
    adjacency, labels = sbm.sample_sparse_log(n, a, b, np.random.default_rng(seed))
    seconds = time.perf_counter() - start
    _save(pathlib.Path(folder), adjacency, labels)
    nbytes = adjacency.data.nbytes + adjacency.indices.nbytes + adjacency.indptr.nbytes
    return {"seconds": seconds, "edges": int(adjacency.nnz // 2), "graph_bytes": nbytes}


def gdp_mu(epsilon: float, delta: float) -> float:
    """The μ of μ-Gaussian DP whose (ε, δ) curve passes through (epsilon, delta) (Dong, Roth, Su)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def curve(mu):
        return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2) - delta

    return brentq(curve, 1e-6, 100.0, xtol=1e-14, rtol=1e-12)


def _signs(vector) -> np.ndarray:
    return np.where(vector - vector.mean() >= 0, 1, -1)


def nonprivate_spectral(adjacency, rng):
    """Baseline (not private): second eigenvector's signs, then a majority vote on the same graph."""
    from scipy.sparse.linalg import eigsh

    values, vectors = eigsh(adjacency, k=2, which="LA", v0=rng.standard_normal(adjacency.shape[0]))
    rough = np.where(vectors[:, int(np.argmin(values))] >= 0, 1, -1)
    labels = np.where(adjacency @ rough.astype(float) >= 0, 1, -1)
    return labels, rough


def _halves(adjacency, rng, probability=0.5):
    import scipy.sparse as sp

    upper = sp.triu(adjacency, k=1, format="coo")
    first = rng.random(upper.nnz) < probability
    parts = []
    for keep in (first, ~first):
        half = sp.csr_matrix((upper.data[keep], (upper.row[keep], upper.col[keep])), shape=upper.shape)
        parts.append((half + half.T).tocsr())
    return parts


def textbook_private(adjacency, epsilon, delta, rng, steps=TEXTBOOK_STEPS, clip=TEXTBOOK_CLIP):
    """Baseline (not audited): edge split 1/2, noisy power method (GDP-calibrated), Laplace vote."""
    n = adjacency.shape[0]
    first, second = _halves(adjacency, rng)
    sensitivity = math.sqrt(2.0) * clip / math.sqrt(n)
    sigma = sensitivity / (gdp_mu(epsilon, delta) / math.sqrt(steps))
    limit = clip / math.sqrt(n)
    y = rng.standard_normal(n)  # public start
    for _ in range(steps):
        x = y - y.mean()
        x = np.clip(x / np.linalg.norm(x), -limit, limit)
        y = first @ x + rng.normal(0.0, sigma, n)
    rough = _signs(y)
    scores = second @ rough.astype(float) + rng.laplace(0.0, 2.0 / epsilon, n)
    return np.where(scores >= 0, 1, -1), rough


def _private(name, adjacency, epsilon, rng, n, a, b):
    import dpledger as dp
    from dpledger.algorithms import sbm

    if name == "sbm.exact":
        d, gamma = sbm.from_log_parameterisation(n, a, b)
        graph = dp.estimator(name, epsilon=epsilon, delta=DELTA, n=n, d=d, gamma=gamma)
        adjacency = adjacency.toarray()  # the SDP is dense
    else:
        graph = dp.estimator(name, epsilon=epsilon, delta=DELTA, n=n)
    result = dp.Accountant(dp.ApproxDP(epsilon, DELTA)).run(graph, adjacency, rng=rng)
    if result.halted:
        return None, None
    return result.output, result.outputs.get("rough")


def _method_job(method, folder, epsilons, n, a, b, seed):
    from dpledger.algorithms import sbm

    adjacency, truth = _load(pathlib.Path(folder))
    loaded = _peak_rss()
    runs = []
    for epsilon in epsilons:
        rng = np.random.default_rng(10_000 + seed)
        start = time.perf_counter()
        if method == "nonprivate":
            labels, rough = nonprivate_spectral(adjacency, rng)
        elif method == "textbook":
            labels, rough = textbook_private(adjacency, epsilon, DELTA, rng)
        else:
            labels, rough = _private(method, adjacency, epsilon, rng, n, a, b)
        seconds = time.perf_counter() - start
        error = None if labels is None else sbm.error_rate(labels, truth)
        rough_error = None if rough is None else sbm.error_rate(rough, truth)
        runs.append({"epsilon": epsilon, "error": error, "rough_error": rough_error, "seconds": seconds,
                     "halted": labels is None})
    return {"runs": runs, "peak_rss": _peak_rss(), "rss_after_load": loaded}


def _child(connection, job, args):
    try:
        limit = _limit_memory()
        result = {"ok": True, **job(*args), "memory_limit": limit}
    except MemoryError:
        result = {"ok": False, "failure": "MemoryError (address space capped at the machine's free memory)"}
    except BaseException as exc:  # recorded, not raised: one failed run must not end the benchmark
        result = {"ok": False, "failure": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    result["peak_rss"] = result.get("peak_rss", _peak_rss())
    connection.send(result)
    connection.close()


def isolated(job, *args, timeout=TIME_LIMIT) -> dict:
    """``job(*args)`` in a fresh spawned process: its result, or a record of how it failed."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, job, args))
    start = time.perf_counter()
    process.start()
    send.close()
    result = None
    try:
        if receive.poll(timeout):
            result = receive.recv()
    except EOFError:
        pass
    process.join(5 if result is not None else 0.1)
    if process.is_alive():
        process.terminate()
        process.join()
    if result is None:
        died = process.exitcode
        result = {"ok": False, "failure": (f"time limit {timeout:.0f} s reached" if died == -15 else
                                           f"process ended with exit code {died} (killed, likely out of memory)")}
    result["wall_seconds"] = time.perf_counter() - start
    return result


# ---------------------------------------------------------------- parent side

def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def measure_graph(store, n, a, b, seed, jobs):
    """Sample one graph (own process), then run each (method, epsilons) of ``jobs`` on it."""
    folder = store / f"n{n}_a{a:g}_b{b:g}_s{seed}"
    sample = isolated(_sample_job, n, a, b, seed, str(folder))
    log(f"n={n} (a,b)=({a:g},{b:g}) seed={seed}: sampling "
        + (f"{sample['seconds']:.1f} s, {sample['edges']} edges, peak RSS {sample['peak_rss'] / GIB:.2f} GiB"
           if sample["ok"] else f"FAILED: {sample['failure']}"))
    rows = []
    for method, epsilons in jobs if sample["ok"] else []:
        result = isolated(_method_job, method, str(folder), list(epsilons), n, a, b, seed)
        if not result["ok"]:
            log(f"  {method}: FAILED: {result['failure']}")
            rows.append({"n": n, "a": a, "b": b, "seed": seed, "method": method, "epsilon": None,
                         "failure": result["failure"]})
            continue
        for run in result["runs"]:
            rows.append({"n": n, "a": a, "b": b, "seed": seed, "method": method, **run,
                         "peak_rss": result["peak_rss"], "rss_after_load": result["rss_after_load"]})
            error = "halted" if run["error"] is None else f"{run['error']:.4g}"
            log(f"  {method} ε={run['epsilon']:g}: error {error} (rough {run['rough_error']}), "
                f"{run['seconds']:.2f} s, peak RSS {result['peak_rss'] / GIB:.2f} GiB")
    shutil.rmtree(folder, ignore_errors=True)
    return {"n": n, "a": a, "b": b, "seed": seed, **{k: v for k, v in sample.items() if k != "traceback"}}, rows


def _select(rows, **keys):
    return [r for r in rows if all(r.get(k) == v for k, v in keys.items())]


def summary(rows):
    """Exact-recovery rate, median error, median time and max peak RSS of a list of runs."""
    done = [r for r in rows if r.get("failure") is None and r.get("error") is not None]
    failures = sorted({r["failure"] for r in rows if r.get("failure")})
    if not done:
        return {"runs": 0, "failures": failures}
    errors = [r["error"] for r in done]
    return {"runs": len(done), "exact": sum(e == 0 for e in errors), "median_error": float(np.median(errors)),
            "median_rough_error": float(np.median([r["rough_error"] for r in done if r["rough_error"] is not None]))
            if any(r["rough_error"] is not None for r in done) else None,
            "median_seconds": float(np.median([r["seconds"] for r in done])),
            "peak_rss": float(max(r["peak_rss"] for r in done)), "failures": failures}


def _gib(value) -> str:
    return f"{value / GIB:.2f}"


def _error(value) -> str:
    return "0" if value == 0 else f"{value:.2g}"


def run(quick: bool) -> dict:
    seeds = 1 if quick else 3
    scale_n = [n for n in SCALE_N if n <= 10**4] if quick else SCALE_N
    regime_n = 10**4 if quick else REGIME_N
    a0, b0, eps0 = SCALE_MODEL
    samples, rows = [], []
    store = pathlib.Path(tempfile.mkdtemp(prefix="sbm_scale_"))
    started = time.perf_counter()
    try:
        for n in scale_n:
            for seed in range(1 if n >= ONE_SEED_N else seeds):
                jobs = [("nonprivate", [eps0]), ("textbook", [eps0]), ("sbm.spectral_exact", [eps0])]
                if n in SDP_N:
                    jobs.append(("sbm.exact", [eps0]))
                sample, found = measure_graph(store, n, a0, b0, seed, jobs)
                samples.append({**sample, "part": "scale"})
                rows += [{**r, "part": "scale"} for r in found]
        for a, b in REGIMES:
            for seed in range(seeds):
                jobs = [("nonprivate", [EPSILONS[0]]), ("textbook", EPSILONS), ("sbm.spectral_exact", EPSILONS)]
                sample, found = measure_graph(store, regime_n, a, b, 100 + seed, jobs)
                samples.append({**sample, "part": "regimes"})
                rows += [{**r, "part": "regimes"} for r in found]
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return {"quick": quick, "seeds": seeds, "delta": DELTA, "scale_model": {"a": a0, "b": b0, "epsilon": eps0},
            "scale_n": scale_n, "regime_n": regime_n, "regimes": REGIMES, "epsilons": EPSILONS,
            "textbook": {"steps": TEXTBOOK_STEPS, "clip": TEXTBOOK_CLIP}, "samples": samples, "rows": rows,
            "total_seconds": time.perf_counter() - started}


def markdown(data: dict) -> str:
    rows, samples = data["rows"], data["samples"]
    a0, b0, eps0 = data["scale_model"]["a"], data["scale_model"]["b"], data["scale_model"]["epsilon"]
    scale = _select(rows, part="scale")
    regimes = _select(rows, part="regimes")
    info = machine()
    lines = [
        f"Measured in one run ({data['total_seconds'] / 60:.1f} min{', --quick' if data['quick'] else ''}) on "
        f"{info['cpus']} shared cores (Python {info['python']}, numpy {info['numpy']}; other work was running on "
        "the machine, so times are indicative): private exact recovery on sparse log-n SBM graphs "
        "(p = a ln n/n, q = b ln n/n, `sbm.sample_sparse_log`), δ = 1e-9. `sbm.spectral_exact` runs through "
        "`Accountant.run` with budget ApproxDP(ε, 1e-9) on the CSR matrix (kept sparse); `sbm.exact` (dense SDP) "
        "gets the dense matrix and the true (d, γ). The two baselines are numpy/scipy code in this script, not "
        "privacy-audited: *non-private spectral* (second eigenvector of A by `eigsh`, then a majority vote on the "
        f"same graph) and *textbook private* (edge split 1/2, {TEXTBOOK_STEPS} noisy power steps with x clipped to "
        f"±{TEXTBOOK_CLIP:g}/√n and σ from Gaussian DP at (ε, δ), continuous Laplace vote of scale 2/ε). Each "
        "method runs on each graph in a fresh process that loads the graph from disk: *time* is the method alone "
        "(sampling is in its own column), *peak RSS* is that process's maximum resident memory, graph included. "
        "*Exact* is the number of seeds with 0 misclassified vertices; error is the fraction misclassified up "
        "to a global flip (median over seeds).", ""]

    # 1. scale
    lines += [f"### 1. Scale: (a, b, ε) = ({a0:g}, {b0:g}, {eps0:g}), δ = 1e-9", "",
              "| n | edges | sampling s | method | exact | median error | median time s | peak RSS GiB |",
              "|---|---|---|---|---|---|---|---|"]
    for n in data["scale_n"]:
        sampled = _select(samples, part="scale", n=n)
        ok = [s for s in sampled if s["ok"]]
        edges = f"{np.median([s['edges'] for s in ok]):.3g}" if ok else "—"
        sample_s = f"{np.median([s['seconds'] for s in ok]):.2g}" if ok else "—"
        if not ok:
            failure = "; ".join(sorted({s["failure"] for s in sampled}))
            lines.append(f"| {n:,} | — | failed | all | sampling failed: {failure} | | | |")
            continue
        for method in METHODS:
            found = _select(scale, n=n, method=method)
            if not found:
                continue
            s = summary(found)
            if not s["runs"]:
                lines.append(f"| {n:,} | {edges} | {sample_s} | {LABELS[method]} | failed: {'; '.join(s['failures'])} | | | |")
                continue
            lines.append(f"| {n:,} | {edges} | {sample_s} | {LABELS[method]} | {s['exact']}/{s['runs']} | "
                         f"{_error(s['median_error'])} | {s['median_seconds']:.2f} | {_gib(s['peak_rss'])} |")
    for n in SDP_N:
        sdp, spec = summary(_select(scale, n=n, method="sbm.exact")), summary(_select(scale, n=n, method="sbm.spectral_exact"))
        if sdp.get("runs") and spec.get("runs"):
            better = ("the SDP is better here" if sdp["median_error"] < spec["median_error"] else
                      "the SDP is not better here" if sdp["median_error"] > spec["median_error"] else "they tie")
            lines.append("")
            lines.append(f"At n = {n:,}: `sbm.exact` median error {_error(sdp['median_error'])} "
                         f"(rough labels {_error(sdp['median_rough_error'])}, {sdp['exact']}/{sdp['runs']} exact, "
                         f"{sdp['median_seconds']:.1f} s) against `sbm.spectral_exact` {_error(spec['median_error'])} "
                         f"({spec['exact']}/{spec['runs']} exact, {spec['median_seconds']:.2f} s): {better}.")
    for sample in [s for s in samples if s["part"] == "scale" and s["n"] >= ONE_SEED_N]:
        found = _select(scale, n=sample["n"])
        if not sample["ok"]:
            lines += ["", f"n = {sample['n']:,} (one seed): sampling failed ({sample['failure']})."]
            continue
        parts = [f"{LABELS[r['method']]} " + (f"failed ({r['failure']})" if r.get("failure") else f"{r['seconds']:.0f} s")
                 for r in found]
        compute = sample["seconds"] + sum(r.get("seconds") or 0 for r in found)
        lines += ["", f"n = {sample['n']:,} (one seed, {sample['edges']:,} edges): sampling {sample['seconds']:.0f} s "
                  f"(peak RSS {_gib(sample['peak_rss'])} GiB); " + ", ".join(parts)
                  + f". Sampling plus the three methods: {compute / 60:.1f} min of compute "
                  f"({'under' if compute < 1200 else 'over'} the 20-minute target); sbm.spectral_exact alone "
                  + next((f"{r['seconds'] / 60:.1f} min" for r in found
                          if r["method"] == "sbm.spectral_exact" and not r.get("failure")), "failed") + "."]

    # 2. regimes
    n = data["regime_n"]
    need = 2 if data["seeds"] >= 3 else data["seeds"]
    lines += ["", f"### 2. Regimes at n = {n:,}, δ = 1e-9 ({data['seeds']} seed(s) each)", "",
              "Exact-recovery count / median error:", "",
              "| (a, b) | method | " + " | ".join(f"ε = {e:g}" for e in data["epsilons"]) + f" | smallest ε, exact in ≥ {need}/{data['seeds']} | median time s | peak RSS GiB |",
              "|---|---|" + "---|" * len(data["epsilons"]) + "---|---|---|"]
    for a, b in data["regimes"]:
        for method in ("textbook", "sbm.spectral_exact"):
            cells, smallest, times, peaks = [], None, [], []
            for eps in data["epsilons"]:
                s = summary(_select(regimes, a=a, b=b, method=method, epsilon=eps))
                if not s["runs"]:
                    cells.append("failed")
                    continue
                cells.append(f"{s['exact']}/{s['runs']} · {_error(s['median_error'])}")
                if smallest is None and s["exact"] >= need:
                    smallest = eps
                times.append(s["median_seconds"])
                peaks.append(s["peak_rss"])
            smallest = f"{smallest:g}" if smallest is not None else f"none ≤ {data['epsilons'][-1]:g}"
            timing = f"{max(times):.1f}" if times else "—"
            lines.append(f"| ({a:g}, {b:g}) | {LABELS[method]} | " + " | ".join(cells) + f" | {smallest} | "
                         f"{timing} | {_gib(max(peaks)) if peaks else '—'} |")
        reference = summary(_select(regimes, a=a, b=b, method="nonprivate"))
        if reference.get("runs"):
            lines.append(f"| ({a:g}, {b:g}) | {LABELS['nonprivate']} | " + " | ".join(
                [f"{reference['exact']}/{reference['runs']} · {_error(reference['median_error'])}"] * len(data["epsilons"]))
                + f" | (no ε) | {reference['median_seconds']:.1f} | {_gib(reference['peak_rss'])} |")
    lines += ["", "Median time is the largest per-ε median; peak RSS is the largest over the process that ran "
              "all ε values of one method on one graph (targets at n = 10^5: < 2 min, < 4 GiB per run)."]

    # 3. ratio
    spec = summary(_select(scale, n=REGIME_N if not data["quick"] else data["scale_n"][-1], method="sbm.spectral_exact"))
    base = summary(_select(scale, n=REGIME_N if not data["quick"] else data["scale_n"][-1], method="nonprivate"))
    ratio_n = REGIME_N if not data["quick"] else data["scale_n"][-1]
    lines += ["", f"### 3. Time ratio at n = {ratio_n:,}", ""]
    if spec.get("runs") and base.get("runs"):
        ratio = spec["median_seconds"] / base["median_seconds"]
        data["ratio"] = {"n": ratio_n, "spectral_exact_seconds": spec["median_seconds"],
                         "nonprivate_seconds": base["median_seconds"], "ratio": ratio}
        lines.append(f"`sbm.spectral_exact` {spec['median_seconds']:.2f} s (through `Accountant.run`: validation, "
                     f"edge split, {10} products, vote) against non-private spectral {base['median_seconds']:.2f} s "
                     f"(`eigsh` + vote) on the same graphs, in the same run: **{ratio:.1f}×** (target ≤ 20×).")
    else:
        lines.append("not measured (a run failed; see the JSON).")
    lines += ["", "![time and peak memory against n](sbm_scale.png)", "",
              f"![error against ε at n = {n:,}; errors of 0 drawn at 0.5/n](sbm_scale_regimes.png)"]
    return "\n".join(lines)


def draw(data: dict, path: pathlib.Path) -> None:
    from dpledger.figures import new_figure, png

    scale = _select(data["rows"], part="scale")
    figure = new_figure(figsize=(10, 4))
    axes = figure.subplots(1, 2)
    for method, marker in zip(METHODS, "^sod"):
        points = [(n, summary(_select(scale, n=n, method=method))) for n in data["scale_n"]]
        points = [(n, s) for n, s in points if s.get("runs")]
        if points:
            ns = [n for n, _ in points]
            axes[0].plot(ns, [s["median_seconds"] for _, s in points], marker=marker, label=LABELS[method])
            axes[1].plot(ns, [s["peak_rss"] / GIB for _, s in points], marker=marker, label=LABELS[method])
    sampled = [(n, [s for s in data["samples"] if s["part"] == "scale" and s["n"] == n and s["ok"]]) for n in data["scale_n"]]
    sampled = [(n, s) for n, s in sampled if s]
    if sampled:
        axes[0].plot([n for n, _ in sampled], [np.median([x["seconds"] for x in s]) for _, s in sampled],
                     color="grey", linestyle="--", label="sampling (sample_sparse_log)")
        axes[1].plot([n for n, _ in sampled], [max(x["peak_rss"] for x in s) / GIB for _, s in sampled],
                     color="grey", linestyle="--", label="sampling")
    a, b, eps = data["scale_model"]["a"], data["scale_model"]["b"], data["scale_model"]["epsilon"]
    for ax, label in zip(axes, ("time, s (median over seeds)", "peak RSS of the process, GiB (graph included)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_title(f"(a, b, ε, δ) = ({a:g}, {b:g}, {eps:g}, 1e-9)", fontsize=9)
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    path.write_bytes(png(figure))

    regimes = _select(data["rows"], part="regimes")
    n = data["regime_n"]
    floor = 0.5 / n
    figure = new_figure(figsize=(12, 3.8))
    axes = figure.subplots(1, len(data["regimes"]), sharey=True)
    for ax, (a, b) in zip(np.atleast_1d(axes), data["regimes"]):
        for method, marker in (("textbook", "s"), ("sbm.spectral_exact", "o")):
            points = [(e, summary(_select(regimes, a=a, b=b, method=method, epsilon=e))) for e in data["epsilons"]]
            points = [(e, s) for e, s in points if s.get("runs")]
            ax.plot([e for e, _ in points], [max(s["median_error"], floor) for _, s in points], marker=marker,
                    label=LABELS[method])
        ax.axhline(floor, color="grey", linestyle=":", linewidth=1, label="error 0 (drawn at 0.5/n)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ε (δ = 1e-9)")
        ax.set_title(f"n = {n:,}, (a, b) = ({a:g}, {b:g})", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("median error (fraction misclassified)")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    figure.tight_layout()
    (path.parent / "sbm_scale_regimes.png").write_bytes(png(figure))


def main():
    quick = quick_run("n up to 10^4, regimes at n = 10^4, one seed (smoke run)")
    data = run(quick)
    text = markdown(data)
    publish("sbm_scale", data, text, draw=lambda path: draw(data, path))


if __name__ == "__main__":
    sys.exit(main())
