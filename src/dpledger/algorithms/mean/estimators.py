"""Registered pure-DP mean estimators (ReplaceOne, public n, d, R, σ); output: the mean vector.

- ``mean.clipped``: per-coordinate clipping to the a priori box + lattice Laplace (baseline).
- ``mean.localised``: private per-coordinate localisation, clipping around it, lattice Laplace.
Both project the noisy vector onto the R-ball (post-processing, Lemma A.2).
"""

from __future__ import annotations

import numpy as np

from ...domains import extremes_of
from ...graph import Graph, postprocess, register, sequence
from ...relations import ReplaceOne
from .nodes import clipped_mean, localised_mean
from .parameters import check_public, check_share, domain, project_rows, sparse_gaussian


def _example(n: int, d: int, R: float):
    def example(rng):
        data, _ = sparse_gaussian(n, d, d, R, rng)
        return {"epsilon": 1.0, "R": R, "n": n, "d": d}, data
    return example


def utility_sampler(n: int, d: int, R: float, k: int | None = None):
    """Privacy–utility sampler: n draws of N(μ, I_d), μ k-sparse (dense when k is None) with
    ||μ||_2 = R/2, and the error ||μ̂ − μ||_2 (also used by the sparse-mean estimators)."""
    def utility(epsilon, rng):
        data, mean = sparse_gaussian(n, d, d if k is None else k, R / 2, rng)
        params = {"epsilon": epsilon, "R": R, "n": n, "d": d} | ({} if k is None else {"k": k})
        return params, data, lambda estimate: float(np.linalg.norm(estimate - mean))
    utility.metric = "ℓ2 error ‖μ̂ − μ‖"
    utility.reference = lambda data: np.mean(data, axis=0)  # the non-private sample mean
    return utility


def mean_graph(name: str, body, output: str, n: int, d: int, R: float, description: str) -> Graph:
    """Wrap ``body`` (releasing ``output``) with the projection onto the R-ball and the input check.
    The projection is vectorised (one call for a batch of runs: ``project_rows``, row by row the
    bits of ``project_to_ball``)."""
    root = sequence(body, postprocess("mean", lambda **out: project_rows(np.asarray(out[output], float), R),
                                      uses=output, vectorised=True), name=name.replace(".", "_"))
    return Graph(root, ReplaceOne(), name=name, domain=domain(n, d), description=description)


@register("mean.clipped", example=_example(100, 2, 2.0), utility=utility_sampler(500, 5, 100.0),
          stress=extremes_of(_example(100, 2, 2.0)))
def clipped(epsilon: float, R: float, n: int, d: int, sigma: float = 1.0) -> Graph:
    """ε-DP mean: clip each coordinate to ±(R + 3σ), lattice Laplace with Δ1 = 2(R + 3σ)d/n."""
    epsilon, R, n, d, sigma = check_public(epsilon, R, n, d, sigma)
    return mean_graph("mean.clipped", clipped_mean("noisy_mean", epsilon, R, n, d, sigma), "noisy_mean", n, d, R,
                      "clipping to the a priori box + Laplace")


@register("mean.localised", example=_example(100, 2, 2.0), utility=utility_sampler(500, 5, 100.0),
          stress=extremes_of(_example(100, 2, 2.0)))
def localised(epsilon: float, R: float, n: int, d: int, sigma: float = 1.0, locate_share: float = 0.5) -> Graph:
    """ε-DP mean: private per-coordinate histograms locate μ, then clip to ±6σ around it and add
    lattice Laplace noise; basic composition of the two steps."""
    epsilon, R, n, d, sigma = check_public(epsilon, R, n, d, sigma)
    body = localised_mean("noisy_mean", epsilon, R, n, d, sigma, check_share("locate_share", locate_share))
    return mean_graph("mean.localised", body, "noisy_mean", n, d, R, "localisation + clipping + Laplace")
