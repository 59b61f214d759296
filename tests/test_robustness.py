"""dpledger.audit.robustness: adversaries, curves, and the group-privacy prediction."""

import math

import numpy as np
import pytest

from dpledger.algorithms.mean import sparse_gaussian
from dpledger.audit import robustness as rb

MEAN = sparse_gaussian(1, 10, 2, 5.0, np.random.default_rng(0))[1]
PARAMS = {"epsilon": 1.0, "k": 2, "R": 10.0, "n": 1000, "d": 10}


def clean(rng):
    return MEAN + rng.standard_normal((1000, 10))


def test_adversaries_replace_exactly_m_samples_adaptively():
    data = clean(np.random.default_rng(1))
    for name, adversary in rb.ADVERSARIES.items():
        corrupted = adversary(data, MEAN, 37, 10.0)
        assert np.count_nonzero(np.any(corrupted != data, axis=1)) == 37, name
        assert np.array_equal(adversary(data, MEAN, 0, 10.0), data)
    shifted = rb.shift(data, MEAN, 100, 10.0)
    j = int(np.argmax(np.abs(MEAN)))
    assert abs(shifted.mean(axis=0)[j] - MEAN[j]) > 0.9  # the signal is biased by about ηR
    faked = rb.cluster(data, MEAN, 100, 10.0)
    assert np.max(np.abs(faked.mean(axis=0)[MEAN == 0])) > 0.9  # a fake coordinate appears


def test_private_estimator_is_robust_and_the_prediction_has_its_scale():
    report = rb.robustness("sparse_mean.peeling", clean, MEAN, params=PARAMS, etas=(0.0, 0.002, 0.05),
                           trials=20, seed=3)
    assert report.epsilon == 1.0 and report.n == 1000
    assert report.predicted_scale == pytest.approx(math.log(10) / 1000)
    for curve in report.curves.values():
        assert curve.corrupted == (0, 2, 50)
        assert curve.predicted_failure[0] == pytest.approx(0.1)
        assert curve.predicted_failure[1] == pytest.approx(min(1.0, math.exp(2) * 0.1))
        assert max(curve.median_error) < 0.2 * PARAMS["R"]  # 5% corruption stays far below R
    assert report.curves["shift"].median_error[-1] > report.curves["shift"].median_error[0]
    assert report.to_dict()["curves"]["outliers"]["adversary"] == "outliers"


def test_plain_functions_need_epsilon_and_bad_arguments_are_refused():
    def empirical(data, rng):
        return data.mean(axis=0)

    with pytest.raises(ValueError, match="epsilon is required"):
        rb.robustness(empirical, clean, MEAN, magnitude=10.0, trials=2)
    with pytest.raises(ValueError, match="unknown adversaries"):
        rb.robustness(empirical, clean, MEAN, epsilon=1.0, magnitude=10.0, adversaries=("nope",))
    with pytest.raises(ValueError, match="eta"):
        rb.robustness(empirical, clean, MEAN, epsilon=1.0, magnitude=10.0, etas=(1.5,))
    report = rb.robustness(empirical, clean, MEAN, epsilon=1.0, magnitude=10.0, etas=(0.0, 0.1), trials=5, seed=0)
    assert report.curves["outliers"].median_error[-1] > 100  # the non-private mean is not robust
