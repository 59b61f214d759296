"""Robustness of a private estimator to adaptive corruption of η·n samples.

The seed "privacy induces robustness" argues that an ε-DP estimator is automatically robust: if
on clean data the error exceeds α with probability at most β, then replacing m samples changes
the probability of any event by a factor at most e^{εm} (group privacy over m ReplaceOne steps),
so the error still stays below α with probability >= 1 - e^{εm}·β. The guarantee is meaningful
up to m ≈ ln(1/β)/ε, i.e. corruption fractions η of order ln(1/β)/(εn) (``predicted_scale``).
For an adversary that chooses the corruption after seeing the sample, the seed's meta-theorem
needs a union over corruption patterns; the bound reported here is the fixed-corruption
group-privacy bound, shown beside the measured curve, not a certificate.

``robustness(...)`` measures, for each adversary and η, the error ||μ̂ - μ||_2 over ``trials``
fresh clean samples, the fraction of trials whose error exceeds the clean (1 - β)-quantile α,
and the predicted bound min(1, e^{ε·⌊ηn⌋}·β) on that fraction.

Adversaries see the clean sample and μ, and replace ⌊ηn⌋ samples:
- ``shift`` biases the signal: along u = sign(μ_j)·e_j for the largest |μ_j|, the samples with the
  largest projection on u are moved by -``magnitude``·u;
- ``cluster`` fakes a signal: along u = ±e_j for the coordinate with the smallest |μ_j| (ties
  broken by the largest |empirical mean|, sign of the empirical mean), the samples with the
  smallest projection on u all become the point μ + ``magnitude``·u;
- ``outliers``: as ``cluster`` at μ + 1000·``magnitude``·u (far outliers: a test of clipping).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import attrs
import numpy as np

from .. import _validate


def _signal_direction(truth: np.ndarray) -> np.ndarray:
    j = int(np.argmax(np.abs(truth)))
    u = np.zeros_like(truth)
    u[j] = 1.0 if truth[j] >= 0 else -1.0
    return u


def _fake_direction(samples: np.ndarray, truth: np.ndarray) -> np.ndarray:
    empirical = samples.mean(axis=0)
    smallest = np.flatnonzero(np.abs(truth) == np.abs(truth).min())
    j = smallest[np.argmax(np.abs(empirical[smallest]))]
    u = np.zeros_like(truth)
    u[j] = 1.0 if empirical[j] >= 0 else -1.0
    return u


def _victims(samples: np.ndarray, u: np.ndarray, m: int) -> np.ndarray:
    return np.argsort(samples @ u, kind="stable")[:m]


def shift(samples, truth, m, magnitude):
    u = _signal_direction(truth)
    corrupted = samples.copy()
    corrupted[_victims(samples, -u, m)] -= magnitude * u
    return corrupted


def cluster(samples, truth, m, magnitude):
    u = _fake_direction(samples, truth)
    corrupted = samples.copy()
    corrupted[_victims(samples, u, m)] = truth + magnitude * u
    return corrupted


def outliers(samples, truth, m, magnitude):
    return cluster(samples, truth, m, 1000.0 * magnitude)


ADVERSARIES: dict[str, Callable] = {"shift": shift, "cluster": cluster, "outliers": outliers}


@attrs.frozen
class RobustnessCurve:
    """One adversary's measured and predicted curves, one entry per η."""

    adversary: str
    etas: tuple[float, ...]
    corrupted: tuple[int, ...]
    median_error: tuple[float, ...]
    failure_rate: tuple[float, ...]
    predicted_failure: tuple[float, ...]


@attrs.frozen
class RobustnessReport:
    epsilon: float
    n: int
    beta: float
    clean_threshold: float  # α: the clean error's (1 - β)-quantile
    clean_median_error: float
    predicted_scale: float  # ln(1/β)/(εn)
    curves: dict[str, RobustnessCurve]

    def to_dict(self) -> dict:
        return attrs.asdict(self)


def _runner(estimator, params):
    """(fn(data, rng) -> estimate, ε) for a registered name + params or a plain function."""
    if isinstance(estimator, str):
        from ..graph import estimator as build

        graph = build(estimator, **(params or {}))
        epsilon = graph.plan().guarantee.epsilon
        return (lambda data, rng: graph.execute(graph.validate(data), rng)[0]), epsilon
    if callable(estimator):
        return estimator, None
    raise TypeError(f"estimator must be a registered name or a callable fn(data, rng), got {estimator!r}")


def robustness(estimator: str | Callable, sample: Callable, truth, *, params: dict | None = None,
               epsilon: float | None = None, magnitude: float | None = None,
               etas: Sequence[float] = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1),
               adversaries: Sequence[str] = tuple(ADVERSARIES), trials: int = 50, beta: float = 0.1,
               seed: int | None = None) -> RobustnessReport:
    """Error of ``estimator`` on clean samples and under each adversary, vs the corruption η.

    ``estimator``: a registered name (built with ``params``; ε is read from its plan) or a
    function ``fn(data, rng) -> vector`` (then ``epsilon`` is required). ``sample(rng)`` draws one
    clean (n, d) dataset whose mean is ``truth``. ``magnitude`` (default ``params["R"]``) is how far
    the adversaries move points. Each trial uses one clean sample for every (adversary, η).
    """
    fn, planned = _runner(estimator, params)
    epsilon = _validate.positive("epsilon", planned if planned is not None else epsilon
                                 if epsilon is not None else _missing("epsilon"))
    if magnitude is None:
        magnitude = (params or {}).get("R") or _missing("magnitude")
    magnitude = _validate.positive("magnitude", magnitude)
    beta = _validate.probability("beta", beta, low_open=True)
    trials = _validate.integer("trials", trials, minimum=2)
    truth = _validate.finite_array("truth", truth, ndim=1)
    etas = tuple(_validate.probability("eta", eta) for eta in etas)
    unknown = set(adversaries) - set(ADVERSARIES)
    if unknown:
        raise ValueError(f"unknown adversaries {sorted(unknown)}; choose from {sorted(ADVERSARIES)}")
    rng = np.random.default_rng(seed)

    clean, errors = [], {(a, eta): [] for a in adversaries for eta in etas}
    n = None
    for _ in range(trials):
        data = sample(rng)
        n = data.shape[0]
        clean.append(float(np.linalg.norm(fn(data, rng) - truth)))
        for a in adversaries:
            for eta in etas:
                corrupted = ADVERSARIES[a](data, truth, math.floor(eta * n), magnitude)
                errors[a, eta].append(float(np.linalg.norm(fn(corrupted, rng) - truth)))

    threshold = float(np.quantile(clean, 1.0 - beta))
    curves = {a: RobustnessCurve(
        a, etas, tuple(math.floor(eta * n) for eta in etas),
        tuple(float(np.median(errors[a, eta])) for eta in etas),
        tuple(float(np.mean(np.asarray(errors[a, eta]) > threshold)) for eta in etas),
        tuple(min(1.0, math.exp(epsilon * math.floor(eta * n)) * beta) for eta in etas)) for a in adversaries}
    return RobustnessReport(epsilon, n, beta, threshold, float(np.median(clean)),
                            math.log(1.0 / beta) / (epsilon * n), curves)


def _missing(name: str):
    raise ValueError(f"{name} is required when the estimator is a plain function (or params lacks it)")
