"""Code that touches data is silent and total: no floating-point event reaches Python's warnings or
an exception, whatever the caller's numpy error state or warning filters (second review, finding
4: numpy's "warn" state made an overflow on D' and none on D an observable the plan did not cover)."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import dpledger as dp

BUILT_INS = dp.estimators()


def _run_strictly(graph, data):
    """A run under np.seterr(all="raise") and warnings as errors, as a careful caller sets them."""
    plan = graph.plan()
    accountant = dp.Accountant(plan.guarantee if plan.guarantee.delta else dp.PureDP(plan.guarantee.epsilon))
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        return accountant.run(graph, data, rng=np.random.default_rng(1))


def test_every_built_in_registers_stress_pairs():
    assert [name for name in BUILT_INS if dp.graph.registry.info(name).stress is None] == ["sbm.exponential",
                                                                                         "sbm.spectral",
                                                                                         "sbm.spectral_exact"]


@pytest.mark.parametrize("name", [n for n in BUILT_INS if dp.graph.registry.info(n).stress is not None])
def test_built_ins_are_silent_and_total_on_their_stress_pairs(name):
    params, pairs = dp.graph.registry.info(name).stress(np.random.default_rng(0))
    graph = dp.estimator(name, **params)
    for a, b in pairs:
        for data in (a, b):
            result = _run_strictly(graph, data)
            assert set(result.outputs) <= set(graph.plan().releases)
            for value in result.outputs.values():
                if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                    assert np.all(np.isfinite(value)), (name, value)


def test_the_reviewed_overflow_raises_no_warning():
    """mean.localised at σ = 0.1 with one sample of 1.7e308: an in-domain overflow in the binning."""
    graph = dp.estimator("mean.localised", epsilon=1.0, R=2.0, n=100, d=2, sigma=0.1)
    data = np.random.default_rng(0).normal(size=(100, 2))
    data[0] = 1.7e308
    _run_strictly(graph, data)


def test_under_a_python_that_turns_warnings_into_errors():
    script = ("import numpy as np, dpledger as dp\n"
              "graph = dp.estimator('mean.localised', epsilon=1.0, R=2.0, n=100, d=2, sigma=0.1)\n"
              "data = np.zeros((100, 2)); data[0] = 1.7e308; np.seterr(all='raise')\n"
              "print(dp.Accountant(dp.PureDP(1.0)).run(graph, data, rng=np.random.default_rng(0)).halted)\n")
    done = subprocess.run([sys.executable, "-W", "error", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "False" and done.stderr == "", done.stderr


# --- the fresh review of these fixes: extreme public parameters ---------------------------------

@pytest.mark.parametrize("name, params", [
    ("mean.clipped", dict(epsilon=1.0, R=1e306, n=1000, d=1)),
    ("mean.localised", dict(epsilon=1.0, R=1e306, n=1000, d=1, sigma=1e305)),
    ("sparse_mean.peeling", dict(epsilon=1.0, k=1, R=1e306, n=1000, d=2, sigma=1e305)),
    ("gmm.neighbourhood", dict(epsilon=4.0, delta=1e-6, k=3, n=6000, d=2, separation=1e306, sigma=1e-10)),
    ("gmm.neighbourhood", dict(epsilon=4.0, delta=1e-6, k=3, n=6000, d=2, separation=1e-199, sigma=1e-200)),
    ("gmm.centres", dict(epsilon=4.0, delta=1e-6, k=3, n=3000, d=2, separation=1e-199, sigma=1e-200)),
])
def test_public_parameters_whose_sums_could_overflow_or_offsets_underflow_are_refused(name, params):
    """With n·B above the largest double a clipped mean overflowed to inf on some inputs and not on
    their neighbours (an error after the charge); with a radius near 1e-200 an offset's squares
    underflowed and left it unclipped. Both are refused when the graph is built."""
    with pytest.raises(ValueError, match="overflow|underflow"):
        dp.estimator(name, **params)


def test_the_projection_onto_the_ball_keeps_a_huge_noisy_mean():
    from dpledger.algorithms.mean.parameters import project_to_ball

    assert project_to_ball(np.array([1.7e305]), 1e306)[0] == 1.7e305  # its norm overflowed, giving 0
    assert project_to_ball(np.array([3e307, 4e307]), 1.0) == pytest.approx([0.6, 0.8])
