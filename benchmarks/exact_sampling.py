"""Speed of the exact vectorised samplers (dpledger.mechanisms.exact) beside other samplers.

For σ in {1, 10, 1e3, 1e5, 1e6} (lattice units), draws per second of:
1. our discrete_gaussian (σ² = t·m from gaussian_parameters) and discrete_laplace (scale t = σ);
2. opendp 0.16's exact integer samplers, make_gaussian / make_laplace on a vector_domain of i64
   (timed: the measurement call on a prepared Python list, returning a list);
3. numpy's floating-point rng.normal / rng.laplace (not exact; the speed floor);
4. the pure-Python reference exact.reference_discrete_laplace, on a smaller sample, per draw.
Then the time per call of our two samplers on small arrays (1 to 500 draws, a loop of 2,000 calls;
the Laplace at scale t/s = 1025 given unreduced, the Gaussian at σ² = 4150·4151), where the fixed
cost of a call, not the draws, dominates. All run side by side in one process: each repeat runs every sampler in turn, and the minimum
wall-clock time over the repeats is kept, since the 2-core machine is shared and noisy. The
ratio column is the sampler's draws/s divided by ours (the exact sampler of the same family).
opendp is not a dependency of dpledger: it is imported lazily and reported missing if absent
(pip install opendp==0.16.0).

Run: python benchmarks/exact_sampling.py [--quick]. The full run (2·10^6 draws a sampler, 3
repeats, 2 for opendp at 10-35 s a call) takes about six minutes here. Writes
results/exact_sampling.{json,md}.
"""

from __future__ import annotations

import importlib.metadata
import os
import time
from fractions import Fraction

import numpy as np

from dpledger.mechanisms.exact import discrete_gaussian, discrete_laplace, gaussian_parameters
from dpledger.mechanisms.exact_python import reference_discrete_laplace

from _common import publish, quick_run

SIGMAS = (1, 10, 1_000, 100_000, 1_000_000)
SMALL_SIZES = (1, 5, 50, 500)
CALLS = 2_000


def opendp_samplers(size: int) -> tuple[str | None, dict]:
    """(opendp version or None, {(family, σ): callable}); empty when opendp is not installed."""
    try:
        import opendp.prelude as dp
    except ImportError:
        return None, {}
    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T="i64"))
    zeros = [0] * size
    samplers = {}
    for sigma in SIGMAS:
        gaussian = dp.m.make_gaussian(domain, dp.l2_distance(T="i64"), scale=float(sigma))
        laplace = dp.m.make_laplace(domain, dp.l1_distance(T="i64"), scale=float(sigma))
        samplers["gaussian", sigma] = lambda m=gaussian: m(zeros)
        samplers["laplace", sigma] = lambda m=laplace: m(zeros)
    return importlib.metadata.version("opendp"), samplers


def samplers_at(sigma: int, size: int, reference_size: int, rng, opendp: dict) -> list[tuple]:
    """(name, family, draws per call, repeats-or-None, callable) for every sampler at this σ."""
    t, m = gaussian_parameters(sigma)
    rows = [
        ("dpledger exact discrete_gaussian", "gaussian", size, None, lambda: discrete_gaussian(t, m, size, rng)),
        ("dpledger exact discrete_laplace", "laplace", size, None, lambda: discrete_laplace(sigma, 1, size, rng)),
        ("numpy rng.normal (float, not exact)", "gaussian", size, None, lambda: rng.normal(0.0, sigma, size)),
        ("numpy rng.laplace (float, not exact)", "laplace", size, None, lambda: rng.laplace(0.0, sigma, size)),
        ("pure-Python reference_discrete_laplace", "laplace", reference_size, 2,
         lambda: [reference_discrete_laplace(Fraction(sigma), rng) for _ in range(reference_size)]),
    ]
    for family in ("gaussian", "laplace"):
        if (family, sigma) in opendp:
            rows.append((f"opendp make_{family} (i64, exact)", family, size, 2, opendp[family, sigma]))
    return rows


def measure(size: int, reference_size: int, repeats: int) -> tuple[str | None, list[dict]]:
    version, opendp = opendp_samplers(size)
    rng = np.random.default_rng(0)
    results = []
    for sigma in SIGMAS:
        rows = samplers_at(sigma, size, reference_size, rng, opendp)
        best = {name: np.inf for name, *_ in rows}
        for repeat in range(repeats):
            for name, _, _, limit, draw in rows:
                if limit is not None and repeat >= limit:
                    continue
                start = time.perf_counter()
                draw()
                best[name] = min(best[name], time.perf_counter() - start)
        for name, family, draws, limit, _ in rows:
            results.append({"sampler": name, "family": family, "sigma": sigma, "draws": draws,
                            "repeats": min(repeats, limit or repeats), "seconds": best[name],
                            "draws_per_second": draws / best[name], "load": round(os.getloadavg()[0], 2)})
            print(f"σ={sigma:g} {name}: {draws / best[name]:.3g} draws/s", flush=True)
    ours = {(r["family"], r["sigma"]): r["draws_per_second"] for r in results if r["sampler"].startswith("dpledger")}
    for row in results:
        row["ratio_to_ours"] = row["draws_per_second"] / ours[row["family"], row["sigma"]]
    return version, results


def per_call(repeats: int) -> list[dict]:
    """Microseconds per call of our samplers on small arrays: minimum over repeats of a loop of CALLS calls."""
    rng = np.random.default_rng(1)
    samplers = {"discrete_laplace(1025·2^32, 2^32, size)": lambda n: discrete_laplace(1025 * 2**32, 2**32, n, rng),
                "discrete_gaussian(4150, 4151, size)": lambda n: discrete_gaussian(4150, 4151, n, rng)}
    rows = []
    for name, draw in samplers.items():
        for size in SMALL_SIZES:
            best = np.inf
            for _ in range(repeats):
                start = time.perf_counter()
                for _ in range(CALLS):
                    draw(size)
                best = min(best, (time.perf_counter() - start) / CALLS)
            rows.append({"sampler": name, "size": size, "calls": CALLS, "repeats": repeats,
                         "microseconds_per_call": best * 1e6, "load": round(os.getloadavg()[0], 2)})
            print(f"{name}, size {size}: {best * 1e6:.1f} µs a call", flush=True)
    return rows


def markdown(version: str | None, results: list[dict], small: list[dict], size: int, reference_size: int) -> str:
    measured = f"opendp {version}" if version else "opendp: not installed (pip install opendp==0.16.0), not measured"
    lines = [
        "# Exact discrete Gaussian and Laplace sampling speed",
        "",
        f"{size:,} draws a call ({reference_size:,} for the pure-Python reference); minimum wall-clock time over "
        f"repeats, all samplers interleaved in one process; {measured}. σ in lattice units: the Gaussian's "
        "standard deviation parameter, the Laplace's scale. Ratio = the sampler's draws/s ÷ ours (same family, "
        "same σ).",
        "",
        "| sampler | σ | draws/s | ratio to ours |",
        "| --- | --- | --- | --- |",
    ]
    rank = ("dpledger", "opendp", "pure-Python", "numpy")
    key = lambda r: (r["family"], [r["sampler"].startswith(p) for p in rank].index(True), r["sigma"])  # noqa: E731
    for row in sorted(results, key=key):
        lines.append(f"| {row['sampler']} | {row['sigma']:g} | {row['draws_per_second']:.3g} | "
                     f"{row['ratio_to_ours']:.3g} |")
    lines += ["", f"## Time per call on small arrays (minimum over repeats of a loop of {CALLS:,} calls)", "",
              "| call | " + " | ".join(f"size {n}" for n in SMALL_SIZES) + " |",
              "| --- |" + " --- |" * len(SMALL_SIZES)]
    for name in dict.fromkeys(r["sampler"] for r in small):
        cells = [f"{r['microseconds_per_call']:.0f} µs" for r in small if r["sampler"] == name]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    loads = [r["load"] for r in results + small]
    lines += ["", f"1-minute load average during the run: {min(loads)}–{max(loads)}."]
    return "\n".join(lines)


def main() -> None:
    quick = quick_run("2·10^5 draws a call, 2 repeats, 2,000 reference draws")
    size, reference_size, repeats = (200_000, 2_000, 2) if quick else (2_000_000, 20_000, 3)
    version, results = measure(size, reference_size, repeats)
    small = per_call(repeats)
    data = {"opendp_version": version, "size": size, "reference_size": reference_size, "repeats": repeats,
            "results": results, "per_call": small}
    publish("exact_sampling", data, markdown(version, results, small, size, reference_size))


if __name__ == "__main__":
    main()
