"""``gmm.projected``: mixture centres located in a random projection, refined by private Lloyd steps.

ReplaceOne neighbours; n, d, k, the separation Δ, the spread σ and a ball B(a, R) meant to hold
the data are public (points outside are clipped: privacy holds for every input, only accuracy
needs the ball). The graph, with every number fixed by ``calibrate`` before the data:

    locate (ε_h, δ_h)     histogram learner (exact discrete Laplace) of the points projected by a
                          data-independent orthonormal P (d* × d; P = I when d <= d*) on cubes of
                          side w; k-means of the released cells → k projected centres
                          (post-processing; halts when fewer than k cells are released)
    refine (ε − ε_h, δ − δ_h), one sequence of lattice Gaussians composed by their Rényi curve:
      map back            assign by the nearest projected centre, clip x − a to R, release
                          [sums, R·counts] → coarse centres in R^d
      Lloyd 1…T           assign to the nearest current centre, clip x − c_j to r_t, release
                          [sums, r_t·counts] → centres (each move kept within r_t, each centre
                          within the ball: post-processing)
    total                 basic composition of locate and refine: (ε, δ)

The projection, the assignments and the clips are maps of each point alone (``per_record``,
position-free: ``rowwise``, no matrix products), so one changed point changes one point's terms: the histogram by Lemma A.13, each Lloyd vector by 2·clip in ℓ2 with its
counts included (``lloyd``; docs/proofs.md, "gmm.projected").
"""

from __future__ import annotations

import math

import attrs
import numpy as np
from scipy import stats

from ... import _validate, rowwise
from ...privacy.rdp import budget_rho
from ...domains import extremes_of
from ...graph import Graph, per_record, postprocess, register, release, sequence
from ...graph.runtime import Halt
from ...mechanisms import Gaussian, HistogramLearner
from ...mechanisms.base import checked_epsilon
from ...mechanisms.laplace import ROUNDING
from ...relations import ReplaceOne
from ..mean.parameters import domain
from . import lloyd
from .membership import clamped
from .model import CENTRE_METRIC, centre_error, nonprivate_centres, sample_mixture

#: Projected dimension d* (the histogram's), cell side in units of σ, Lloyd clip margin in σ.
DIMENSION, WIDTH, MARGIN = 8, 4.0, 4.0
#: Lloyd steps: two, so that a coarse centre the projection placed badly is repaired (one step
#: leaves about 1 in 6 runs at d = 50 with error near 1; two cost about 7% in the median error).
STEPS = 2
#: Most Lloyd steps accepted (past a few, each adds noise and repairs nothing).
MAX_STEPS = 100
#: Largest |a|, R and σ accepted: squared distances of clamped points stay finite; smallest R and
#: σ: every clip radius stays at or above ``lloyd.MIN_CLIP``.
MAX_SCALE, MIN_SCALE = 1e100, lloyd.MIN_CLIP
#: A cluster's cell must expect this many times the histogram's threshold count to be "useful".
CELL_FACTOR = 2.0
#: Final noise error (per centre) below separation / USEFUL_RATIO is "useful" (as gmm.centres).
USEFUL_RATIO = 8.0


def projection(d: int, dimension: int, seed: int) -> np.ndarray:
    """The public (d*, d) matrix with orthonormal rows from ``seed``; the identity when d <= d*."""
    if d <= dimension:
        return np.eye(d)
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, dimension)))
    return q.T


def central_cell_mass(width: float, dimension: int) -> float:
    """Expected share of a spherical Gaussian cluster (σ = 1) in the cell holding its centre, over
    the histogram's uniform offset: (E_U[Φ(w − U) − Φ(−U)])^{d*}, U ~ U[0, w] (a utility estimate)."""
    grid = (np.arange(2000) + 0.5) / 2000 * width
    return float(np.mean(stats.norm.cdf(width - grid) - stats.norm.cdf(-grid))) ** dimension


@attrs.frozen
class Calibration:
    """Every number of the graph, from public parameters only."""

    n: int
    d: int
    k: int
    separation: float
    sigma: float
    epsilon: float
    delta: float
    radius: float
    centre: tuple = attrs.field(converter=tuple)
    dimension: int
    steps: int
    seed: int
    histogram: HistogramLearner
    mapback: Gaussian
    lloyd: tuple = attrs.field(converter=tuple)
    clips: tuple = attrs.field(converter=tuple)
    rho: float
    mapback_share: float

    @property
    def cell_count(self) -> float:
        """Expected rows of a cluster (n/k of them) in the cell holding its projected centre."""
        return self.n / self.k * central_cell_mass(self.histogram.bin_width / self.sigma, self.dimension)

    @property
    def projected_gap(self) -> float:
        """The closest of the k(k − 1)/2 projected gaps, in units of σ, at a level every pair exceeds
        with probability at least 1/2 (union bound): a pair's squared gap shrinks by a
        Beta(d*/2, (d − d*)/2) factor under a random orthonormal projection."""
        if self.k == 1:
            return math.inf
        if self.dimension >= self.d:
            return self.separation / self.sigma
        level = 1.0 / (self.k * (self.k - 1))
        shrink = float(stats.beta.ppf(level, self.dimension / 2, (self.d - self.dimension) / 2))
        return self.separation * math.sqrt(shrink) / self.sigma

    def noise_error(self, step: Gaussian) -> float:
        """Typical distance σ·sqrt(d)/(n/k) a step's noise moves a centre of n/k points."""
        return step.sigma * math.sqrt(self.d) * self.k / self.n

    @property
    def final_error(self) -> float:
        return self.noise_error(self.lloyd[-1])

    def weaknesses(self) -> list[str]:
        """Why the output is not expected to locate the centres at these parameters (empty: useful)."""
        out = []
        if self.cell_count < CELL_FACTOR * self.histogram.count_threshold:
            out.append(f"a cluster's central cell expects {self.cell_count:.3g} rows, below {CELL_FACTOR:g}× the "
                       f"histogram's threshold {self.histogram.count_threshold:.3g}: runs are likely to halt")
        if self.projected_gap < WIDTH:
            out.append(f"the projection may shrink the closest gap to {self.projected_gap:.3g}σ < {WIDTH:g}σ, "
                       "a cell: clusters may merge (raise dimension)")
        if self.noise_error(self.mapback) > MARGIN * self.sigma:
            out.append(f"the map-back noise moves a centre by about {self.noise_error(self.mapback):.3g}, beyond the "
                       f"Lloyd clip margin {MARGIN:g}σ (a smaller radius helps)")
        if self.final_error > self.separation / USEFUL_RATIO:
            out.append(f"the last step's noise moves a centre by about {self.final_error:.3g} > "
                       f"separation/{USEFUL_RATIO:g}")
        return out

    @property
    def useful(self) -> bool:
        return not self.weaknesses()

    def verdict(self) -> str:
        weak = self.weaknesses()
        if not weak:
            return (f"expected noise error per centre {self.final_error:.3g} "
                    f"({self.final_error / self.separation:.2g}× the separation)")
        if self.projected_gap < WIDTH:  # no n helps: only the dimension or the separation
            return "WEAK AT THESE PARAMETERS: " + "; ".join(weak) + "; a larger n does not help"
        return "WEAK AT THIS n: " + "; ".join(weak) + "; gmm.useful_n(..., method='projected') gives the n"


def calibrate(n: int, d: int, k: int, separation: float, epsilon: float, delta: float, radius: float,
              sigma: float = 1.0, centre=None, dimension: int = DIMENSION, steps: int = STEPS,
              histogram_share: float = 0.2, mapback_share: float = 0.3, seed: int = 0) -> Calibration:
    """The calibration for public parameters and the total budget (ε, δ); a ValueError names what
    cannot be met. δ: a tenth to the histogram, the rest to the Gaussian steps; ε: ``histogram_share``
    to the histogram; the Gaussian steps' zCDP budget ρ: ``mapback_share`` to the map-back step, the
    rest split evenly over the ``steps`` Lloyd steps."""
    n = _validate.integer("n", n, minimum=2)
    d = _validate.integer("d", d, minimum=1)
    k = _validate.integer("k", k, minimum=1)
    if n > lloyd.MAX_POINTS or d > 10**6 or k > n:
        raise ValueError(f"need k <= n <= {lloyd.MAX_POINTS:.0e} and d <= 1e6, got n={n}, d={d}, k={k}")
    epsilon = checked_epsilon(epsilon)
    delta = _validate.probability("delta", delta, low_open=True)
    separation, sigma, radius = (_validate.positive(name, value) for name, value in
                                 (("separation", separation), ("sigma", sigma), ("radius", radius)))
    centre = np.zeros(d) if centre is None else _validate.finite_array("centre", centre, ndim=1)
    if centre.shape != (d,):
        raise ValueError(f"centre must be a point of R^d (d={d}), got shape {centre.shape}")
    if max(radius, sigma, float(np.abs(centre).max())) > MAX_SCALE:
        raise ValueError(f"radius, sigma and centre must stay below {MAX_SCALE:g} in size; rescale the data")
    for name, value in (("radius", radius), ("sigma", sigma)):
        if value < MIN_SCALE:
            raise ValueError(f"{name} must be at least {MIN_SCALE:g} (smaller clips could round to no clip); "
                             "rescale the data")
    dimension = min(_validate.integer("dimension", dimension, minimum=1), d)
    steps = _validate.integer("steps", steps, minimum=1)
    if steps > MAX_STEPS:
        raise ValueError(f"steps must be <= {MAX_STEPS} (each step takes a share of the budget), got {steps}")
    seed = _validate.integer("seed", seed, minimum=0)
    for name, share in (("histogram_share", histogram_share), ("mapback_share", mapback_share)):
        if not 0 < _validate.real(name, share) < 1:
            raise ValueError(f"{name} must be in (0, 1), got {share}")
    if delta / 10 >= 1 / n:
        raise ValueError(f"a tenth of delta goes to the histogram, which needs it below 1/n = {1 / n:.3g} "
                         f"(Lemma A.13): pass delta < {10 / n:.3g}, got delta={delta:g}")
    histogram = HistogramLearner(histogram_share * epsilon, delta / 10, n, bin_width=WIDTH * sigma)
    delta_g = delta - histogram.delta
    rho = budget_rho(epsilon - histogram.epsilon, delta_g) * (1 - 1e-8)  # room for the roundings
    shares = [mapback_share] + [(1 - mapback_share) / steps] * steps
    per_step = _split(delta, histogram.delta, steps + 1)

    def gaussian(clip: float, share: float) -> Gaussian:
        sensitivity = lloyd.step_sensitivity(n, d, clip)
        noise = sensitivity * float(ROUNDING) / math.sqrt(2 * share * rho)
        return Gaussian.from_sigma(noise, sensitivity=sensitivity, delta=per_step, coordinates=k * (d + 1))

    calibration = {"mapback": gaussian(radius, shares[0]), "lloyd": [], "clips": []}
    previous = calibration["mapback"]
    for share in shares[1:]:
        # each clip covers a cluster, (sqrt(d) + MARGIN)σ, and 3× the last step's noise error, but no
        # more than the ball's diameter 2R: centres and data both lie in the ball
        clip = min(sigma * (math.sqrt(d) + MARGIN) + 3 * previous.sigma * math.sqrt(d) * k / n, 2 * radius)
        previous = gaussian(clip, share)
        calibration["lloyd"].append(previous)
        calibration["clips"].append(clip)
    return Calibration(n=n, d=d, k=k, separation=separation, sigma=sigma, epsilon=epsilon, delta=delta,
                       radius=radius, centre=tuple(float(v) for v in centre), dimension=dimension, steps=steps,
                       seed=seed, histogram=histogram, rho=rho, mapback_share=mapback_share, **calibration)


def _split(total: float, first: float, parts: int) -> float:
    """The largest δ per part with first + parts·δ <= total as the plan adds them (math.fsum), so
    that rounding never lands the plan's total an ulp above the budget."""
    per = (total - first) / parts
    while math.fsum([first, math.fsum([per] * parts)]) > total:
        per = math.nextafter(per, 0.0)
    return per


def located(histogram, k: int, seed: int) -> np.ndarray:
    """k projected centres: weighted k-means of the released cells' centres (post-processing);
    halts when fewer than k cells were released."""
    if len(histogram.frequencies) < k:
        raise Halt(f"histogram released {len(histogram.frequencies)} < k={k} cells")
    cells = np.array(list(histogram.frequencies), dtype=float)
    weights = np.array(list(histogram.frequencies.values()), dtype=float)
    points = histogram.offset + (cells + 0.5) * histogram.bin_width
    return lloyd.weighted_kmeans(points, weights, k, seed)


def projected_graph(cal: Calibration) -> Graph:
    """The whole graph for one calibration (module doc)."""
    matrix = projection(cal.d, cal.dimension, cal.seed).T  # (d, d*)
    anchors = np.tile(np.asarray(cal.centre), (cal.k, 1))

    def project(points: np.ndarray) -> np.ndarray:  # a branch on the public d: no product for P = I
        return points if cal.dimension >= cal.d else rowwise.dot(points, matrix)

    def inside(centres: np.ndarray) -> np.ndarray:  # the public ball holds the data, hence their means
        return anchors + rowwise.shortened(centres - anchors, cal.radius)
    rule = ("ℓ2-sensitivity 2·clip(1 + rounding) of [sums of offsets clipped to {}, clip·counts] (docs/proofs.md); "
            "{:.0%} of the refine steps' zCDP budget ρ = " + f"{cal.rho:.4g}")
    lloyd_share = (1 - cal.mapback_share) / cal.steps

    def lloyd_step(t: int, clip: float, noise: Gaussian, before: str):
        def mapped(records, **out):
            points = clamped(records)
            return lloyd.terms(points, rowwise.nearest(points, out[before]), out[before], clip)

        return [per_record(f"lloyd_{t}_terms", mapped, release(
                    f"lloyd_{t}_sums", noise, lambda terms: lloyd.clipped_sums(terms, cal.k, clip),
                    note=rule.format(f"r={clip:.4g} around the current centres", lloyd_share)), uses=before),
                postprocess(f"lloyd_{t}", lambda **out: inside(lloyd.centres_from(out[f"lloyd_{t}_sums"], out[before],
                                                                                  clip)),
                            uses=(f"lloyd_{t}_sums", before))]

    def mapback(records, locate):
        points = clamped(records)
        return lloyd.terms(points, rowwise.nearest(project(points), locate), anchors, cal.radius)

    steps = [per_record("mapback_terms", mapback, release(
                 "mapback_sums", cal.mapback, lambda terms: lloyd.clipped_sums(terms, cal.k, cal.radius),
                 note=rule.format(f"R={cal.radius:.4g} around the public centre", cal.mapback_share)), uses="locate"),
             postprocess("coarse", lambda mapback_sums: lloyd.centres_from(mapback_sums, anchors, cal.radius),
                         uses="mapback_sums")]
    for t, (clip, noise) in enumerate(zip(cal.clips, cal.lloyd), start=1):
        steps += lloyd_step(t, clip, noise, "coarse" if t == 1 else f"lloyd_{t - 1}")
    last = f"lloyd_{cal.steps}"
    root = sequence(
        per_record("projected", lambda records: project(clamped(records)), release(
            "histogram", cal.histogram, _identity,
            note=f"the points projected by a public orthonormal {cal.dimension}×{cal.d} matrix (a map of "
                 f"each point); {cal.verdict()}")),
        postprocess("locate", lambda histogram: located(histogram, cal.k, cal.seed), uses="histogram"),
        sequence(*steps, name="refine"),
        postprocess("centres", lambda **out: np.asarray(out[last]), uses=last),
        name="gmm_projected")
    return Graph(root, ReplaceOne(), name="gmm.projected", domain=domain(cal.n, cal.d),
                 description=f"Located in a random projection, refined by private Lloyd steps. {cal.verdict()}")


def _identity(points: np.ndarray) -> np.ndarray:
    return points


def _example(rng):
    """Two clusters of 200 points in R^6 located in a 2-dimensional projection: small enough to
    audit, large enough that the histogram releases both clusters' cells."""
    data, _, _ = sample_mixture(400, 2, 6, 30.0, rng)
    return {"epsilon": 3.0, "delta": 1e-3, "k": 2, "n": 400, "d": 6, "separation": 30.0, "radius": 60.0,
            "dimension": 2}, data


def _utility(epsilon, rng):
    """Privacy–utility sampler: Model 1.2 at n = 20,000, k = 3, d = 50, Δ = 20, σ = 1, δ = 1e-6, with
    the public radius set from the model's centres; error = ``centre_error``."""
    data, truth, _ = sample_mixture(20_000, 3, 50, 20.0, rng)
    radius = float(np.linalg.norm(truth, axis=1).max() + math.sqrt(50) + 6)
    params = {"epsilon": epsilon, "delta": 1e-6, "k": 3, "n": 20_000, "d": 50, "separation": 20.0, "radius": radius}
    return params, data, lambda estimate: centre_error(estimate, truth)


_utility.metric, _utility.reference = CENTRE_METRIC, nonprivate_centres(3)


@register("gmm.projected", example=_example, utility=_utility, stress=extremes_of(_example))
def projected(epsilon: float, delta: float, k: int, n: int, d: int, separation: float, radius: float,
              sigma: float = 1.0, centre=None, dimension: int = DIMENSION, steps: int = STEPS,
              histogram_share: float = 0.2, mapback_share: float = 0.3, seed: int = 0) -> Graph:
    """(ε, δ)-DP mixture centres in any dimension: located in a random projection, refined by private Lloyd steps.

    Output: a (k, d) array. The data should lie in the public ball of ``radius`` around ``centre``
    (default the origin); points outside are clipped, which costs accuracy, never privacy.
    """
    return projected_graph(calibrate(n, d, k, separation, epsilon, delta, radius, sigma, centre, dimension, steps,
                                     histogram_share, mapback_share, seed))
