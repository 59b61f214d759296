"""Malformed inputs for every public entry point (shared by tests/test_fuzz_inputs.py and
benchmarks/fuzz_inputs.py). An entry point passes when every case either succeeds or ends in a
*typed* error: ValueError, TypeError, KeyError (unknown names) or a dpledger PrivacyError."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

import dpledger as dp
from dpledger import mechanisms as m
from dpledger.audit import audit_pairs
from dpledger.graph import registry

TYPED = (ValueError, TypeError, KeyError, dp.PrivacyError)

bad_numbers = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -1.0, 0.0, -0.0, 1e308, -1e-300, 2**70, True, 1j]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.text(max_size=5), st.none(), st.lists(st.floats(), max_size=3),
)
bad_arrays = st.one_of(
    bad_numbers,
    st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=2)), max_size=6),
    st.sampled_from([np.array([]), np.zeros((0, 3)), np.full((3, 3), np.nan), np.ones((2, 3, 4)),
                     np.array(["a", "b"]), np.array([1 + 2j]), np.eye(3) * 2, np.triu(np.ones((4, 4)), 1),
                     np.zeros((1, 1)), np.ones((5, 5)) - np.eye(5), np.array([[0, 1], [1, 0]], dtype=bool)]),
)


def _mechanisms(value):
    return [
        lambda: m.Laplace(value), lambda: m.Laplace(1.0, value), lambda: m.Gaussian(value, 1e-5),
        lambda: m.Gaussian(1.0, value), lambda: m.Gaussian(1.0, 1e-5, value), lambda: m.TruncatedLaplace(1.0, value),
        lambda: m.Exponential(value), lambda: m.ReportNoisyMax(1.0, value), lambda: m.TopKPeeling(1.0, value),
        lambda: m.HistogramLearner(1.0, 1e-6, n=value), lambda: m.HistogramLearner(1.0, 1e-6, 10, bin_width=value),
        lambda: m.DiscreteLaplace(1.0, value), lambda: m.Laplace(1.0, 1.0, value), lambda: m.Gaussian(1.0, 1e-5, 1.0, value),
        lambda: m.TruncatedLaplace(1.0, 1e-5, 1.0, value), lambda: m.TextbookLaplace(value),
        lambda: m.Lattice.for_query(value, 1, 1), lambda: m.Lattice.for_query(1.0, value, 2),
        lambda: m.EdgeSplit(value), lambda: m.PoissonSample(value), lambda: m.SampleWithoutReplacement(value, 10),
    ]


def _releases(value):
    rng = np.random.default_rng(0)
    return [
        lambda: m.Laplace(1.0).release(value, rng), lambda: m.Gaussian(1.0, 1e-5).sample(value, rng, 3),
        lambda: m.TruncatedLaplace(1.0, 1e-5).release(value, rng), lambda: m.Exponential(1.0).release(value, rng),
        lambda: m.TopKPeeling(1.0, 2).release(value, rng), lambda: m.DiscreteLaplace(1.0).release(value, rng),
        lambda: m.HistogramLearner(1.0, 1e-3, n=3).release(value, rng), lambda: m.Laplace(1.0).sample(0.0, rng, value),
        lambda: m.Laplace(1.0, bound=2.0).release(value, rng), lambda: m.TextbookGaussian(1.0, 1e-5).release(value, rng),
        lambda: m.EdgeSplit().parts(value, rng),
    ]


def _guarantees_and_rules(value):
    return [
        lambda: dp.PureDP(value), lambda: dp.ApproxDP(1.0, value), lambda: dp.ApproxDP(value, 0.0),
        lambda: dp.compose(dp.PureDP(1), value), lambda: dp.absorb_failure(dp.PureDP(1), value),
        lambda: dp.group_privacy(dp.PureDP(1), value), lambda: dp.privatised_input(dp.PureDP(1), dp.PureDP(1), value),
        lambda: dp.amplify_by_subsampling(dp.PureDP(1), value, dp.AddRemoveOne()),
    ]


def _relations(value):
    rng = np.random.default_rng(0)
    return [
        lambda: dp.EdgeAdjacency().distance(value, value), lambda: dp.ReplaceOne().are_neighbours(value, np.zeros(3)),
        lambda: list(dp.AddRemoveOne().neighbours(value, rng, 2)), lambda: list(dp.ReplaceOne().neighbours(np.zeros(3), rng, value)),
        lambda: dp.EdgeAdjacency().validate(value),
    ]


def _accountant(value):
    def spend():
        acct = dp.Accountant(dp.PureDP(1.0), relation=dp.ReplaceOne())
        try:
            acct.spend(value, m.Laplace(0.5))
        finally:
            assert len(acct.ledger) == 0 or isinstance(value, str)
    return [lambda: dp.Accountant(value), lambda: dp.Accountant(dp.PureDP(1), composition=value),
            lambda: dp.Accountant(dp.PureDP(1), relation=value), spend,
            lambda: dp.Accountant(dp.PureDP(1), relation=dp.ReplaceOne()).spend("x", value)]


def _estimators(value):
    cases = []
    for name in registry.estimators():
        example = registry.info(name).example
        params, data = example(np.random.default_rng(0))
        for key in params:
            cases.append(lambda name=name, key=key, params=params: dp.estimator(name, **{**params, key: value}))

        def run(name=name, params=params):
            graph = dp.estimator(name, **params)
            acct = dp.Accountant(graph.plan().guarantee)
            try:
                acct.run(graph, value, rng=np.random.default_rng(0))
            finally:
                assert len(acct.ledger) == 0, "bad input was charged"
        cases.append(run)
    return cases


def _audit(value):
    fn = lambda data, rng: data + rng.laplace()  # noqa: E731
    pairs = [(0.0, 1.0)]
    return [lambda: audit_pairs(fn, pairs, epsilon=value), lambda: audit_pairs(fn, pairs, 1.0, delta=value),
            lambda: audit_pairs(fn, pairs, 1.0, confidence=value), lambda: audit_pairs(fn, pairs, 1.0, samples=value),
            lambda: audit_pairs(fn, value, 1.0)]


def _cli(value):
    from dpledger import cli

    def call(*args):
        try:
            cli.main([str(a) for a in args])
        except SystemExit as exit_:
            if exit_.code not in (0, 1, 2):
                raise AssertionError(f"unexpected exit code {exit_.code}") from None
    return [lambda: call(value), lambda: call("estimators", value), lambda: call("--no-such-option", value)]


ENTRY_POINTS = {
    "guarantees and rules": _guarantees_and_rules, "relations": _relations, "mechanism constructors": _mechanisms,
    "mechanism releases": _releases, "accountant": _accountant, "registered estimators": _estimators,
    "audit_pairs": _audit, "command line": _cli,
}


def exercise(entry_point: str, value) -> int:
    """Run every case of ``entry_point`` on ``value``; return how many cases ran. Raises an
    ``AssertionError`` when a case ends in an untyped error."""
    cases = ENTRY_POINTS[entry_point](value)
    for case in cases:
        try:
            case()
        except TYPED:
            pass
        except Exception as exc:  # noqa: BLE001 - the point is to catch anything untyped
            raise AssertionError(f"{entry_point}: {value!r} ended in {type(exc).__name__}: {exc}") from exc
    return len(cases)
