"""``audit``: targets, the pair search, reproducibility, executors, progress, errors and the CLI.

Verdicts asserted here run at confidence 1 − 1e-8 (false alarm <= 1e-8 each); the flagged
estimator is wrong by a factor of about 2.5 in ε, far beyond what the samples need.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import json

import numpy as np
import pytest

import dpledger as dp
from dpledger.audit import audit, audit_pairs, command
from dpledger.audit.progress import Tracker
from dpledger.audit.runners import encode, histogram_vector
from dpledger.audit.search import FINALISTS, Scored, best_pairs, final_round, finalists_of, search_pairs
from dpledger.graph import registry
from dpledger.mechanisms import Laplace
from dpledger.mechanisms.histogram import Histogram

STRICT = 1 - 1e-8


# --- a cheap registered estimator, correct and buggy ---------------------------------------------

def _sum(data, clip: bool) -> float:
    return float(np.sum(np.clip(data, 0, 1) if clip else data))


def _example(rng):
    return {"epsilon": 1.0}, rng.random(6)


def _noisy_sum(epsilon: float = 1.0, clip: bool = True) -> dp.Graph:
    """Sum of values in [0, 1] plus Lap(1/ε); ``clip=False`` forgets to clip (a classic bug)."""
    return dp.Graph(dp.release("sum", Laplace(epsilon), functools.partial(_sum, clip=clip)), relation=dp.ReplaceOne())


@pytest.fixture
def registered(monkeypatch):
    """test.sum (correct) and test.unclipped_sum (replacing one value moves the sum by up to 2)."""
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    dp.register("test.sum", example=_example)(_noisy_sum)
    dp.register("test.unclipped_sum", example=_example)(functools.partial(_noisy_sum, clip=False))


def test_search_finds_the_pairs_that_break_an_estimator(registered):
    # The example's values are in [0, 1]; its neighbours replace one by a point in [-1, 2], so
    # the unclipped sum moves by up to 2: true ε up to 2 against the planned 1.
    report = audit("test.unclipped_sum", samples=20_000, confidence=STRICT, seed=1)
    assert report.violation and report.ok, str(report)
    assert report.claimed == (1.0, 0.0) and report.target.startswith("test.unclipped_sum")
    assert report.search.candidates == 20 and report.search.samples == 1_000
    assert report.search.finalists == FINALISTS and "the best 6 again on 2000 fresh ones" in str(report)
    assert report.epsilon_lower_bound > 1.5  # the search found pairs far outside [0, 1]
    assert all(description.startswith("row ") for description in report.search.pairs)
    correct = audit("test.sum", samples=20_000, confidence=STRICT, seed=1)
    assert correct.ok and not correct.violation, str(correct)


def test_audit_is_reproducible_and_its_test_never_sees_the_search_draws(registered):
    first = audit("test.unclipped_sum", samples=4_000, seed=2, search_examples=5)
    again = audit("test.unclipped_sum", samples=4_000, seed=first.seed, search_examples=5)
    assert first.pairs == again.pairs and first.search == again.search
    # the same pairs audited with no search at all give the same tests: the search's draws are
    # independent of the audit's, which is what keeps the Bonferroni count honest
    direct = audit("test.unclipped_sum", samples=4_000, seed=first.seed, pairs=first.search.inputs)
    assert direct.pairs == first.pairs and direct.search is None


def test_graph_mechanism_and_function_targets():
    graph = _noisy_sum()
    data = np.linspace(0, 1, 5)
    from_graph = audit(graph, data=data, samples=10_000, seed=3, search_examples=4)
    assert from_graph.claimed == (1.0, 0.0) and from_graph.target == "graph 'sum'" and from_graph.ok
    from_mechanism = audit(Laplace(0.5, sensitivity=2.0), samples=10_000, seed=3)
    assert from_mechanism.search.pairs == ("0. vs 2.",)
    given = audit(Laplace(1.0), pairs=[(0.0, 1.0), (3.0, 2.5)], samples=10_000, seed=3)
    assert given.search is None and len(given.pairs) == 2
    function = functools.partial(_unbatched_sum, scale=1.0)
    from_function = audit(function, epsilon=1.0, relation=dp.ReplaceOne(), data=data, samples=10_000, seed=3,
                          search_examples=0, audited_pairs=3)
    assert from_function.search.candidates == 0 and len(from_function.pairs) == 3


def test_search_climbs_through_neighbours_towards_higher_scores():
    relation = dp.ReplaceOne()

    def score(pair, index):  # the size of the replacement; None ("failed") for one candidate
        return None if index == 3 else float(np.abs(pair[1] - pair[0]).max())

    start = (np.zeros(4), np.array([0.5, 0.0, 0.0, 0.0]))
    scored = search_pairs(score, [start], relation.neighbours, 30, np.random.default_rng(0))
    assert len(scored) == 30 and scored[0].pair is start
    assert all(relation.are_neighbours(*s.pair) for s in scored) and scored[3].score is None
    best = best_pairs(scored, 2)
    assert best[0].score >= best[1].score > 10 * 0.5  # the walk widened the range far beyond the start
    again = search_pairs(score, [start], relation.neighbours, 30, np.random.default_rng(0))
    assert [s.score for s in again] == [s.score for s in scored]


def test_the_final_round_ranks_the_best_candidates_by_their_fresh_scores_alone():
    # first-round scores favour the luckiest draws; the better half are ranked again on fresh ones
    scored = [Scored((index, index), float(index)) for index in range(20)] + [Scored((20, 20), None)]
    rescored = []

    def rescore(pair, index):
        rescored.append(index)
        return -float(pair[0])  # the fresh scores reverse the first round's order
    finals = final_round(scored, rescore, 2)
    assert [s.pair[0] for s in finals] == [20 - FINALISTS, 21 - FINALISTS] and rescored == list(range(FINALISTS))
    assert [finalists_of(n, 2) for n in (1, 2, 3, 5, 8, 20)] == [0, 0, 3, 3, 4, FINALISTS]
    # a finalist that fails on its fresh draws ranks last, but still fills the audited pairs
    failing = final_round(scored, lambda pair, index: 1.0 if index == 3 else None, 2)
    assert [s.pair[0] for s in failing] == [16, 19] and [s.score for s in failing] == [1.0, None]
    # nothing left to choose: no fresh draws spent
    assert final_round(scored[:2], lambda pair, index: pytest.fail("rescored"), 2) == best_pairs(scored[:2], 2)


def _unbatched_sum(data, rng, *, scale):
    return float(np.sum(data) + rng.laplace(scale=scale))


def test_histogram_learner_outputs_become_vectors_over_their_bins():
    histogram = Histogram({(0,): 0.5, (2,): 0.25}, 1.0, 0.3)
    assert histogram_vector(histogram, ((-1,), (0,), (1,), (2,)), random_offset=True).tolist() == [0.3, 0, 0.5, 0, 0.25]
    with pytest.raises(ValueError, match="outside the bins"):
        histogram_vector(histogram, ((0,),), random_offset=False)


def test_graph_releases_are_encoded_as_flat_vectors():
    assert encode((1.0, np.array([2.0, 3.0]))).tolist() == [1.0, 2.0, 3.0]
    # a histogram: width and offset, then its size and heaviest bins (cell, frequency)
    assert encode(Histogram({(0,): 0.25, (2,): 0.5}, 1.0, 0.3)).tolist() == [1.0, 0.3, 2, 2, 0.5, 0, 0.25]
    assert encode(None).size == 0
    with pytest.raises(TypeError, match="type str cannot be audited"):
        encode("a")


# --- executors and progress ----------------------------------------------------------------------

def test_threads_processes_and_in_process_give_the_same_report(registered):
    settings = {"samples": 4_000, "seed": 4, "search_examples": 3}
    alone = audit("test.sum", **settings)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        threaded = audit("test.sum", executor=pool, **settings)
    in_processes = audit("test.sum", executor="processes", **settings)
    assert alone.pairs == threaded.pairs == in_processes.pairs and alone.search == in_processes.search


def test_dask_client_executor_gives_the_same_report():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is the optional 'dask' extra")
    settings = {"samples": 4_000, "seed": 5}
    alone = audit(Laplace(1.0), **settings)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = audit(Laplace(1.0), executor=client.get_executor(), **settings)
    assert on_dask.pairs == alone.pairs


def test_a_graph_a_process_pool_cannot_pickle_is_refused_up_front():
    graph = dp.Graph(dp.release("sum", Laplace(1.0), lambda data: float(np.sum(data))), relation=dp.ReplaceOne())
    with pytest.raises(TypeError, match="executor: a process pool must pickle"):
        audit(graph, data=np.zeros(3), samples=1_000, executor="processes")


def test_progress_counts_every_run_of_search_and_audit():
    tracker = Tracker(2 * 500 + 2 * 2_000, "test", show=False)  # one candidate scored, one pair audited
    audit(Laplace(1.0), samples=2_000, seed=6, search_samples=500, progress=tracker)
    # the test halves draw Poisson-many runs; the total follows them, and the bar ends at 100%
    assert tracker.completed == tracker.total != 2 * 500 + 2 * 2_000
    shown = audit(Laplace(1.0), samples=2_000, seed=6, progress=True)  # a bar on a non-terminal: harmless
    assert shown.ok


# --- statistics and bad input ---------------------------------------------------------------------

def test_a_statistic_of_the_wrong_shape_is_named():
    with pytest.raises(ValueError, match="statistic '_first_only' must return one number per run"):
        audit_pairs(Laplace(1.0).sample, [(0.0, 1.0)], 1.0, samples=1_000, statistics=[_first_only])


def _first_only(outputs):
    return outputs[:1]


@pytest.mark.parametrize("kwargs, error, name", [
    ({"target": 42}, TypeError, "target must be"),
    ({"target": "no.such.estimator"}, ValueError, "target: no estimator named"),
    ({"relation": dp.EdgeAdjacency()}, ValueError, "relation:"),
    ({"executor": "gpu"}, ValueError, "executor must be"),
    ({"search_examples": -1}, ValueError, "search_examples"),
    ({"audited_pairs": 0}, ValueError, "audited_pairs"),
    ({"search_samples": 4}, ValueError, "search_samples"),
    ({"seed": -1}, ValueError, "seed"),
    ({"samples": 1}, ValueError, "samples"),
    ({"samples": 2**70}, ValueError, "samples must be <="),
    ({"samples": 40, "epsilon": 2.0}, ValueError, "samples=40 is too few"),
    ({"confidence": 1.0}, ValueError, "confidence"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"delta": 1.5}, ValueError, "delta"),
    ({"statistics": [3]}, TypeError, r"statistics\[0\]"),
    ({"progress": "yes"}, TypeError, "progress"),
    ({"pairs": [(0.0, 3.0)]}, ValueError, r"pairs\[0\] is not a neighbouring pair"),
])
def test_bad_input_is_refused_naming_the_argument(kwargs, error, name):
    arguments = {"target": Laplace(1.0), "samples": 1_000} | kwargs
    with pytest.raises(error, match=name):
        audit(**arguments)


def test_a_function_needs_a_claim_and_something_to_audit():
    function = functools.partial(_unbatched_sum, scale=1.0)
    with pytest.raises(ValueError, match="epsilon is required"):
        audit(function, pairs=[(0.0, 1.0)])
    with pytest.raises(ValueError, match="pairs is required"):
        audit(function, epsilon=1.0)


# --- command line ---------------------------------------------------------------------------------

def _cli(*argv: str) -> int:
    top = argparse.ArgumentParser(prog="dpledger")
    command.add_parser(top.add_subparsers(dest="command", required=True))
    args = top.parse_args(["audit", *argv])
    return args.run(args)


def test_cli_exit_codes_and_outputs(registered, capsys):
    assert _cli("test.sum", "--samples", "4000", "--seed", "7") == 0
    assert "no violation" in capsys.readouterr().out
    assert _cli("test.unclipped_sum", "--samples", "20000", "--confidence", "0.99999999", "--seed", "1") == 1
    assert "VIOLATION" in capsys.readouterr().out
    assert _cli("test.sum", "--samples", "4000", "--seed", "7", "--json") == 0
    assert json.loads(capsys.readouterr().out)["violation"] is False
    assert _cli("no.such.estimator") == 2
    assert "no estimator named" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["test.sum", "--confidence", "1.5"], ["test.sum", "--samples", "1"],
                                  ["test.sum", "--seed", "-3"]])
def test_cli_refuses_bad_options(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        _cli(*argv)
    assert exit_info.value.code == 2


def test_a_graphs_neighbours_are_drawn_inside_its_domain():
    """The relation draws replacement records beyond the data's range; the auditor moves them into
    the graph's declared domain, where its claim holds and its input check passes."""
    from dpledger.audit import audit
    from dpledger.mechanisms import Laplace

    unit = dp.Graph(dp.release("sum", Laplace(1.0), lambda x: float(x.sum())), dp.ReplaceOne(),
                    domain=dp.Records(low=0.0, high=1.0))
    report = audit(unit, data=np.full(5, 0.5), samples=2_000, search_examples=2, seed=0)
    assert report.ok and not report.violation, str(report)
    with pytest.raises(ValueError, match="domain="):
        unit.validate(np.array([0.5, 2.0]))
