"""``gmm.centres`` (Algorithm D.5) and ``gmm.neighbourhood`` (our variant without its convex step):
private centres of a mixture of spherical Gaussians.

ReplaceOne neighbours; n, d, k, the separation Δ and the spread σ are public (Remark D.2). The
graph, with every constant from ``calibration.calibrate``:

    privatised input (Lemma I.4), absorbed failures (Fact I.3) when the subsampled regime is used
      ├ query: steps 1–5 (certified W, ϕ, ν(i) for a random subsample S; or, for the
      │        neighbourhood method, S then plain radius-neighbourhood averages) — no release
      ├ noise: Gaussian on the rows ν(i), i ∈ S (step 6)
      └ on the noisy rows, halting composition (Lemma A.4):
          histogram (Lemma A.13, step 7) → k heaviest bins (post-processing; halts if < k)
          → light-bin test (truncated Laplace, Lemma A.10; step 8)
          → under that test: Gaussian on the bin averages (step 9)
"""

from __future__ import annotations

import numpy as np

from ...domains import extremes_of
from ...graph import Graph, absorb, conditional, halt_if, per_record, postprocess, privatise, register, release, sequence
from ...mechanisms import Gaussian, HistogramLearner, TruncatedLaplace
from ...relations import ReplaceOne
from ...stability import SolverError
from ..mean.parameters import domain
from . import bins, membership
from .calibration import Calibration, Tuning, calibrate
from .model import CENTRE_METRIC, centre_error, nonprivate_centres, sample_mixture

def steps_one_to_five(cal: Calibration):
    """Query of the privatised-input node: certified W, soft threshold, subsample, ν rows (or,
    for the neighbourhood method, subsample then plain radius-neighbourhood averages)."""
    def query(points: np.ndarray, rng: np.random.Generator) -> np.ndarray:  # points: clamped records
        solution = membership.solve(points, cal.radius, cal.cap, cal.c, cal.accuracy)
        if not solution.meets_target:
            raise SolverError(solution)
        rows = rng.choice(cal.n, size=cal.subsample, replace=False)
        weights = membership.soft_threshold(solution.solution[rows], cal.low, cal.high)
        return membership.representatives(points, weights, rows, cal.radius, cal.floor)

    def neighbourhood_query(points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows = rng.choice(cal.n, size=cal.subsample, replace=False)
        weights = membership.neighbourhoods(points, rows, cal.radius)
        return membership.representatives(points, weights, rows, cal.radius, cal.floor)

    return query if cal.method == "membership" else neighbourhood_query


def steps_seven_to_nine(cal: Calibration):
    """Steps 7–9 on the privatised rows: private for one changed row (ReplaceOne)."""
    histogram = HistogramLearner(cal.epsilon_histogram, cal.delta_histogram, cal.subsample, bin_width=cal.bin_width)
    test = TruncatedLaplace(cal.epsilon_test, cal.delta_test, 1.0)
    average = Gaussian(cal.epsilon_average, cal.delta_average, cal.average_sensitivity, coordinates=cal.k * cal.d)
    return sequence(
        release("histogram", histogram, lambda rows: rows),
        postprocess("bins", lambda histogram: bins.heaviest(histogram, cal.k), uses="histogram"),
        halt_if("light_bins", test, bins.smallest_count, lambda noisy: noisy < cal.min_bin, uses="bins"),
        conditional("light_bins", release(
            "averages", average, bins.averages, uses="bins",
            note=f"each kept bin holds >= {cal.min_bin} rows within diameter D = b·sqrt(d): ℓ2-sensitivity "
                 f"sqrt(2)·D·(1/(min_bin − 1) + 2γ_(s+2))/(1 − 2^-12) = {cal.average_sensitivity:.4g} "
                 "(rounding included; docs/proofs.md)")),
        name="bins_and_averages")


def centres_graph(cal: Calibration) -> Graph:
    """The whole graph for one calibration (either method)."""
    noise = Gaussian(cal.epsilon_noise, cal.delta_noise, cal.delta_v, coordinates=cal.subsample * cal.d)
    why = (f"Lemma B.1: Δ_W={cal.delta_w:.4g}" if cal.method == "membership"
           else "each neighbourhood average moves by <= 2r/A0")
    node = privatise(
        "privatised_rows", noise, steps_one_to_five(cal), steps_seven_to_nine(cal), cal.bad_rows,
        note=(f"{cal.regime} regime: rows of ν over S within Δ_V={cal.delta_v:.4g} outside m={cal.bad_rows} "
              f"({why}; docs/proofs.md). {cal.verdict()}"))
    if cal.gamma > 0:
        node = absorb(node, cal.gamma)
    name = NAMES[cal.method]
    root = sequence(per_record("clamped", membership.clamped, node), postprocess("centres", lambda averages: np.asarray(averages), uses="averages"),
                    name=name.replace(".", "_"))
    return Graph(root, ReplaceOne(), name=name, domain=domain(cal.n, cal.d),
                 description=f"{DESCRIPTIONS[cal.method]} {cal.verdict()}")


NAMES = {"membership": "gmm.centres", "neighbourhood": "gmm.neighbourhood"}
DESCRIPTIONS = {"membership": "Algorithm D.5 with explicit constants.",
                "neighbourhood": "Algorithm D.5 with radius-neighbourhood averages in place of steps 1–4."}


def _example(rng):
    """One cluster of 40 points, all subsampled, one huge bin: at this n only such settings release."""
    data, _, _ = sample_mixture(40, 1, 2, 20.0, rng)
    return {"epsilon": 3.0, "delta": 0.1, "k": 1, "n": 40, "d": 2, "separation": 20.0, "subsample": 40,
            "min_bin": 2, "bin_width": 1e6}, data


def _neighbourhood_example(rng):
    """Two clusters, 300 points, well separated: the smallest setting this method runs at ε = 3."""
    data, _, _ = sample_mixture(300, 2, 2, 30.0, rng)
    return {"epsilon": 3.0, "delta": 0.05, "k": 2, "n": 300, "d": 2, "separation": 30.0}, data


def _utility(n: int, k: int, d: int, separation: float, delta: float):
    """Privacy–utility sampler: Model 1.2 with unit spread; error = ``centre_error`` (max over
    centres after the best matching)."""
    def utility(epsilon, rng):
        data, truth, _ = sample_mixture(n, k, d, separation, rng)
        params = {"epsilon": epsilon, "delta": delta, "k": k, "n": n, "d": d, "separation": separation}
        return params, data, lambda estimate: centre_error(estimate, truth)
    utility.metric, utility.reference = CENTRE_METRIC, nonprivate_centres(k)
    return utility


@register("gmm.centres", example=_example, utility=_utility(3000, 2, 2, 10.0, 1e-3), stress=extremes_of(_example))
def centres(epsilon: float, delta: float, k: int, n: int, d: int, separation: float, sigma: float = 1.0,
            radius: float | None = None, c: float = 1.0, cap: float | None = None, low: float = 0.5,
            high: float = 1.0, floor: float | None = None, accuracy: float | None = None,
            subsample: int | None = None, bin_width: float | None = None, min_bin: int | None = None,
            noise_share: float = 0.5, gamma_share: float = 0.1) -> Graph:
    """(ε, δ)-DP mixture centres by Algorithm D.5 with explicit constants; useful_n finds no usable n up to 10^15 (k = 3, d = 2, ε = 1).

    Output: a (k, d) array. The plan says "WEAK AT THIS n" whenever the proven noise swamps the
    clusters, which is at every n the n×n convex step fits in memory (docs/proofs.md).
    """
    tuning = Tuning(radius=radius, c=c, cap=cap, low=low, high=high, floor=floor, accuracy=accuracy,
                    subsample=subsample, bin_width=bin_width, min_bin=min_bin, noise_share=noise_share,
                    gamma_share=gamma_share)
    return centres_graph(calibrate(n, d, k, separation, epsilon, delta, sigma, tuning))


@register("gmm.neighbourhood", example=_neighbourhood_example, utility=_utility(10_000, 3, 2, 10.0, 1e-6),
          stress=extremes_of(_neighbourhood_example))
def neighbourhood(epsilon: float, delta: float, k: int, n: int, d: int, separation: float, sigma: float = 1.0,
                  radius: float | None = None, floor: float | None = None, subsample: int | None = None,
                  bin_width: float | None = None, min_bin: int | None = None, noise_share: float = 0.5) -> Graph:
    """(ε, δ)-DP mixture centres: D.5's steps 5–9 on radius-neighbourhood averages; usable from n ≈ 5,900 at ε = 4 and 42,000 at ε = 1 (k = 3, d = 2, Δ = 10).

    Output: a (k, d) array. Each neighbourhood average moves by at most 2r/A0 when one sample
    changes, so no convex step and no Lemma B.1 are needed (docs/proofs.md).
    """
    tuning = Tuning(radius=radius, floor=floor, subsample=subsample, bin_width=bin_width, min_bin=min_bin,
                    noise_share=noise_share)
    return centres_graph(calibrate(n, d, k, separation, epsilon, delta, sigma, tuning, method="neighbourhood"))
