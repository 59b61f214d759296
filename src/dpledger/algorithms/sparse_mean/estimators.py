"""Registered pure-DP k-sparse mean estimators (ReplaceOne; public n, d, k, R, σ).

Both select a support of k coordinates with ε·selection_share, then run ``mean.localised``'s
graph piece on those coordinates with the rest, and embed the result in R^d (zeros elsewhere)
projected onto the R-ball. Total ε by basic sequential composition (adaptive: the second step is
calibrated to public parameters only and reads the released support).
"""

from __future__ import annotations

import numpy as np

from ... import _validate
from ...privacy.rules import remainder
from ...domains import extremes_of
from ...graph import Graph, per_record, postprocess, release, register, sequence
from ...mechanisms import Exponential, TopKPeeling
from ...relations import ReplaceOne
from ..mean.estimators import utility_sampler
from ..mean.nodes import SPREAD, localised_mean
from ...rounding import mean_sensitivity
from ..mean.parameters import check_public, check_share, domain, project_to_ball, sparse_gaussian
from .scores import MAX_LEVELS, levels, subset_scores, support_candidates, thresholds


def _parameters(epsilon, k, R, n, d, sigma, selection_share):
    epsilon, R, n, d, sigma = check_public(epsilon, R, n, d, sigma)
    k = _validate.integer("k", k, minimum=1)
    if k > d:
        raise ValueError(f"sparsity k={k} exceeds the dimension d={d}")
    share = check_share("selection_share", selection_share)
    return epsilon * share, remainder(epsilon, epsilon * share), k, R, n, d, sigma


def _example(n: int, d: int, k: int, R: float):
    def example(rng):
        data, _ = sparse_gaussian(n, d, k, R, rng)
        return {"epsilon": 1.0, "k": k, "R": R, "n": n, "d": d}, data
    return example


def _graph(name: str, select, eps_mean: float, k: int, R: float, n: int, d: int, sigma: float,
           locate_share: float) -> Graph:
    def embed(support, noisy_mean):
        vector = np.zeros(d)
        vector[np.asarray(support, dtype=int)] = noisy_mean
        return project_to_ball(vector, R)

    root = sequence(
        *select,
        localised_mean("noisy_mean", eps_mean, R, n, k, sigma, check_share("locate_share", locate_share),
                       columns="support"),
        postprocess("mean", embed, uses=("support", "noisy_mean")),
        name=name.replace(".", "_"))
    return Graph(root, ReplaceOne(), name=name, domain=domain(n, d),
                 description=f"{name}: support selection + localised mean on it")


@register("sparse_mean.exponential", example=_example(100, 5, 2, 2.0), utility=utility_sampler(300, 20, 10.0, k=2),
          stress=extremes_of(_example(100, 5, 2, 2.0)))
def exponential(epsilon: float, k: int, R: float, n: int, d: int, sigma: float = 1.0,
                selection_share: float = 0.5, locate_share: float = 0.5) -> Graph:
    """ε-DP sparse mean: exponential mechanism over size-k supports with the sensitivity-1 score
    of ``scores`` (McSherry & Talwar 2007), then the localised mean on the chosen support.
    Exponential time: refuses C(d, k)·(3^k - 1) > MAX_DIRECTIONS."""
    eps_select, eps_mean, k, R, n, d, sigma = _parameters(epsilon, k, R, n, d, sigma, selection_share)
    supports, grid = support_candidates(d, k), thresholds(R, sigma)
    directions = len(supports) * (3**k - 1)
    if n * directions > MAX_LEVELS:
        raise ValueError(f"n·C(d, k)·(3^k - 1) = {n * directions:,} per-record levels exceed {MAX_LEVELS:,} bytes; "
                         "use sparse_mean.peeling (polynomial time) instead")
    select = (
        per_record("levels", lambda records: levels(records, supports, grid),
                   release("support_index", Exponential(eps_select, sensitivity=1.0),
                           lambda reached: subset_scores(reached, len(supports)),
                           note="score = average over thresholds of max over directions of counts: sensitivity 1")),
        postprocess("support", lambda support_index: supports[int(support_index)], uses="support_index"),
    )
    return _graph("sparse_mean.exponential", select, eps_mean, k, R, n, d, sigma, locate_share)


@register("sparse_mean.peeling", example=_example(100, 5, 2, 2.0), utility=utility_sampler(2000, 1000, 10.0, k=10),
          stress=extremes_of(_example(100, 5, 2, 2.0)))
def peeling(epsilon: float, k: int, R: float, n: int, d: int, sigma: float = 1.0,
            selection_share: float = 0.5, locate_share: float = 0.5) -> Graph:
    """ε-DP sparse mean in polynomial time: top-k peeling (k exponential mechanisms with ε/k each,
    basic composition; Durfee & Rogers 2019) on |clipped coordinate means|, then the localised
    mean on the chosen coordinates. Each score moves by at most 2B/n, B = R + 3σ, when one sample
    is replaced (the clipped mean does, and its rounding in any order adds 2B·γ_n; |·| is
    1-Lipschitz)."""
    eps_select, eps_mean, k, R, n, d, sigma = _parameters(epsilon, k, R, n, d, sigma, selection_share)
    bound = R + SPREAD * sigma
    select = (
        per_record("clipped", lambda records: np.clip(records, -bound, bound),
                   release("support", TopKPeeling(eps_select, k=k, sensitivity=mean_sensitivity(bound, n)),
                           lambda clipped: np.abs(clipped.mean(axis=0)),
                           note=f"|coordinate means clipped to ±{bound:g}|: sensitivity 2B·(1/n + γ_n) each")),
    )
    return _graph("sparse_mean.peeling", select, eps_mean, k, R, n, d, sigma, locate_share)
