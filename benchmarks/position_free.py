"""What position-free per-record maps and order-proof sums cost (docs/design.md, "Per-record maps").

1. Speed, side by side in one run: each per-record map as the estimators computed it before
   (BLAS products, numpy's einsum) and as they compute it now (``dpledger.rowwise``: elementwise
   products and sums in index order), 1 BLAS thread, minimum of repeats, and the ratio.
2. Whole runs of the estimators whose maps changed (``gmm.projected``, ``gmm.neighbourhood``,
   ``mean.localised``, ``sparse_mean.exponential``), seconds per run, beside the same runs of the
   commit before the fixes (a temporary git worktree), in fresh processes.
3. Noise: the sensitivities that gained a rounding allowance, against the bound without it, at
   several n (the noise grows by the same factor).

Run: python benchmarks/position_free.py [--quick]. Writes results/position_free.{json,md}.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from threadpoolctl import threadpool_limits

import dpledger as dp
from dpledger import rowwise
from dpledger.algorithms.gmm import calibration
from dpledger.rounding import mean_sensitivity

from _common import quick_run, write


def best(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def maps(quick: bool) -> list[dict]:
    rng = np.random.default_rng(0)
    repeats = 3 if quick else 7
    rows = []
    for n, d in ((20_000, 50), (200_000, 100)) if not quick else ((20_000, 50),):
        points = rng.standard_normal((n, d))
        projection = np.linalg.qr(rng.standard_normal((d, 8)))[0]
        centres = rng.standard_normal((3, d))
        cases = {
            "projection to 8 dimensions": (lambda: points @ projection, lambda: rowwise.dot(points, projection)),
            "nearest of 3 centres": (
                lambda: np.argmin((centres * centres).sum(1)[None] - 2.0 * (points @ centres.T), axis=1),
                lambda: rowwise.nearest(points, centres)),
            "offsets shortened to a radius": (
                lambda: points * (1.0 / np.maximum(np.sqrt(np.einsum("ij,ij->i", points, points)), 1.0))[:, None],
                lambda: rowwise.shortened(points, 1.0)),
        }
        for label, (before, now) in cases.items():
            with threadpool_limits(1):
                old, new = best(before, repeats), best(now, repeats)
            rows.append({"map": label, "n": n, "d": d, "before_s": old, "now_s": new, "ratio": new / old})
    mask_n = 1500 if quick else 3000
    cloud = rng.standard_normal((mask_n, 2))
    squares = np.einsum("ij,ij->i", cloud, cloud)
    with threadpool_limits(1):
        old = best(lambda: squares[:, None] + squares[None, :] - 2.0 * (cloud @ cloud.T) <= 1.0, repeats)
        new = best(lambda: rowwise.squared_distances(cloud, cloud) <= 1.0, repeats)
    rows.append({"map": "radius mask (all pairs)", "n": mask_n, "d": 2, "before_s": old, "now_s": new,
                 "ratio": new / old})
    return rows


#: The commit before the second review's fixes: its estimators are timed beside today's.
BEFORE = "3f01780"

TIMING = """
import json, math, sys, time
import numpy as np
import dpledger as dp
from dpledger.algorithms.gmm import sample_mixture
from threadpoolctl import threadpool_limits

def settings():
    rng = np.random.default_rng(1)
    data, truth, _ = sample_mixture(20_000, 3, 50, 20.0, rng)
    radius = float(np.linalg.norm(truth, axis=1).max() + math.sqrt(50) + 6)
    return [
        ("gmm.projected", dict(epsilon=4.0, delta=1e-6, k=3, n=20_000, d=50, separation=20.0, radius=radius), data),
        ("gmm.neighbourhood", dict(epsilon=4.0, delta=1e-6, k=3, n=6000, d=2, separation=10.0),
         sample_mixture(6000, 3, 2, 10.0, rng)[0]),
        ("mean.localised", dict(epsilon=1.0, R=10.0, n=100_000, d=20), rng.standard_normal((100_000, 20))),
        ("sparse_mean.exponential", dict(epsilon=1.0, k=2, R=10.0, n=2000, d=20), rng.standard_normal((2000, 20))),
    ]

out = []
with threadpool_limits(1):
    for name, params, x in settings():
        graph = dp.estimator(name, **params)
        checked = graph.validate(x)
        times = []
        for _ in range(int(sys.argv[1])):
            start = time.perf_counter()
            graph.execute(checked, np.random.default_rng(0))
            times.append(time.perf_counter() - start)
        out.append({"estimator": name, "n": params["n"], "d": params["d"], "seconds": min(times)})
print(json.dumps(out))
"""


def _timed(source: pathlib.Path, repeats: int) -> list[dict]:
    done = subprocess.run([sys.executable, "-c", TIMING, str(repeats)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(source)})
    return json.loads(done.stdout)


def runs(quick: bool) -> list[dict]:
    """Whole runs, today's code beside the commit before the fixes (a git worktree of BEFORE),
    alternating, in fresh processes, 1 BLAS thread."""
    repeats = 2 if quick else 5
    root = pathlib.Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as scratch:
        before = pathlib.Path(scratch) / "before"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "-q", str(before), BEFORE], check=True)
        try:
            old = _timed(before / "src", repeats)
            new = _timed(root / "src", repeats)
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(before)], check=True)
    return [{**now, "before_s": then["seconds"], "ratio": now["seconds"] / then["seconds"]}
            for now, then in zip(new, old)]


def noise() -> list[dict]:
    rows = []
    for n in (1_000, 100_000, 10_000_000):
        rows.append({"bound": "mean of n clipped records (mean.*, sparse_mean.peeling)", "n": n,
                     "ratio": mean_sensitivity(1.0, n) / (2.0 / n)})
    for n in (6_000, 100_000, 1_000_000):
        cal = calibration.calibrate(n, 2, 3, 10.0, 4.0, 1e-6, method="neighbourhood")
        exact = 2.0 * cal.radius / cal.floor * math.sqrt(cal.subsample)
        rows.append({"bound": "gmm.neighbourhood Δ_V", "n": n, "ratio": cal.delta_v / exact})
        diameter = cal.bin_width * math.sqrt(cal.d)
        rows.append({"bound": "gmm bin averages", "n": n,
                     "ratio": cal.average_sensitivity / (math.sqrt(2.0) * diameter / (cal.min_bin - 1))})
    return rows


def markdown(result: dict) -> str:
    lines = ["### Per-record maps: before (BLAS, einsum) and now (rowwise), 1 thread", "",
             "| map | n | d | before (s) | now (s) | now / before |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['map']} | {r['n']:,} | {r['d']} | {r['before_s']:.4f} | {r['now_s']:.4f} | {r['ratio']:.1f}× |"
              for r in result["maps"]]
    lines += ["", f"### Whole runs, 1 thread (seconds per run, minimum of repeats): before ({BEFORE}) and now", "",
              "| estimator | n | d | before (s) | now (s) | now / before |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['estimator']} | {r['n']:,} | {r['d']} | {r['before_s']:.3f} | {r['seconds']:.3f} | "
              f"{r['ratio']:.2f}× |" for r in result["runs"]]
    lines += ["", "### Noise: sensitivity with the rounding allowance over the bound without it", "",
              "| bound | n | ratio |", "|---|---|---|"]
    lines += [f"| {r['bound']} | {r['n']:,} | {r['ratio']:.8f} |" for r in result["noise"]]
    return "\n".join(lines)


def main() -> None:
    quick = quick_run("one size, fewer repeats")
    result = {"maps": maps(quick), "runs": runs(quick), "noise": noise()}
    write("position_free", result, markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
