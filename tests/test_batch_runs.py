"""The auditor's batched sampler (``Graph.observe_runs``) against ``Graph.observe`` run by run.

Two kinds of evidence, on graphs with ``uses``, halting tests, conditionals, errors, halting
post-processing, per-record maps that read releases, ``repeat``, ``subsample``, ``split``,
``private`` steps and a node type the batch does not know:

- **Exact, where the randomness lines up.** A batch of one run draws from the generator in the
  order ``Graph.observe`` does, so with the same seed it must show exactly the same run: every
  released value (type, dtype, shape and bits), the ending (halting step, or "Type: message").
- **Statistical, for batches.** The test mechanisms add a fair coin, so a run's whole observation
  (every value and the ending) takes a few dozen values; a chi-square test of homogeneity between
  20,000 batched runs and 20,000 runs of ``observe`` rejects at p < 1e-9, so a correct sampler
  fails one of these tests with probability below 1e-8 whatever the seeds. The same test rejects
  a sampler that hands a release another run's earlier outputs (``test_the_test_has_power``).
"""

from __future__ import annotations

import collections

import attrs
import numpy as np
import pytest
from scipy import stats

import dpledger as dp
from dpledger.audit.outputs import Observation, Outputs
from dpledger.audit.runners import RunEstimator, encode, outputs_of
from dpledger.graph import registry
from dpledger.graph.runtime import Halt, NodePlan
from dpledger.guarantees import PureDP
from dpledger.mechanisms import Laplace, PoissonSample, RowSplit, SampleWithoutReplacement
from dpledger.mechanisms.base import Mechanism, shaped

LEVEL = 1e-9
RUNS = 20_000


@attrs.frozen
class Coin(Mechanism):
    """The answer plus a fair coin (0 or 1), drawn one answer at a time (``sample_each`` loops)."""

    def guarantee(self):
        return PureDP(1.0)

    def _draw(self, value, rng, size):
        return value + rng.integers(0, 2, size=shaped(value.shape, size))


@attrs.frozen
class StackedCoin(Coin):
    """The same coin, drawn for many answers at once (``sample_each`` stacks them)."""

    def _draw_stacked(self, values, rng):
        return values + rng.integers(0, 2, size=values.shape)


def _halt_big(a, c):
    if c >= 5:
        raise Halt("p")
    return c + a


def _refuse_two(x, b):
    if b == 2:
        raise ValueError("b is two")
    return float(b)


def uses_graph(coin=Coin()):
    """Releases that read releases, a halting test on one, a conditional release whose query
    raises on some runs, and post-processing that halts."""
    return dp.Graph(dp.sequence(
        dp.release("a", coin, lambda x: 0.0),
        dp.release("b", coin, lambda x, a: 2 * a + float(x.sum()) - 2, uses="a"),
        dp.halt_if("h", coin, lambda x, b: b - 2, lambda v: v >= 3, uses="b"),
        dp.conditional("h", dp.release("c", coin, _refuse_two, uses="b")),
        dp.postprocess("p", _halt_big, uses=("a", "c")),
        name="uses"), dp.ReplaceOne())


def repeat_graph(coin=Coin()):
    """A random walk: each step reads the last; a per-record map that reads it; a list release."""
    step = dp.sequence(
        dp.release("r", coin, lambda x, r: r, uses="r"),
        dp.per_record("shifted", lambda records, r: records + r, dp.release("s", coin, lambda x: float(x.sum())),
                      uses="r"),
        name="step")
    return dp.Graph(dp.sequence(dp.repeat(step, 3, initial={"r": 0.0}, name="walk"),
                                dp.postprocess("last", lambda walk: float(len(walk)), uses="walk"), name="main"),
                    dp.ReplaceOne())


def subsample_graph(coin=StackedCoin()):
    """A Poisson subsample (each run its own), a release in it that reads one outside."""
    return dp.Graph(dp.sequence(
        dp.release("a", coin, lambda x: 0.0),
        dp.subsample(PoissonSample(0.5), dp.release("k", coin, lambda x, a: float(len(x)) + a, uses="a")),
        name="main"), dp.AddRemoveOne())


def split_graph(coin=Coin()):
    """A random split whose second branch reads the first, and a private step drawing its own coins."""
    return dp.Graph(dp.sequence(
        dp.split(RowSplit((0.5, 0.5)), dp.release("left", coin, lambda x: float(len(x))),
                 dp.release("right", coin, lambda x, left: float(len(x)) + left, uses="left")),
        dp.private("dice", lambda x, rng, right: int(rng.integers(0, 2)) + int(right > 3), PureDP(1.0), "test",
                   uses="right"),
        dp.halt_if("odd", coin, lambda x, dice: float(dice), lambda v: v == 3, uses="dice"),
        name="main"), dp.ReplaceOne())


@attrs.frozen
class Doubling:
    """A node type of its own (the batch runs it run by run through ``execute``)."""

    name: str
    uses: str

    def plan(self, ctx):
        return NodePlan(PureDP(0.0), "test", (), frozenset({self.name}), releases=(self.name,))

    def execute(self, data, state, path):
        if state.outputs[self.uses] >= 3:
            raise RuntimeError("too big")
        state.outputs[self.name] = out = 2 * state.outputs[self.uses]
        return out


def custom_graph(coin=Coin()):
    return dp.Graph(dp.sequence(dp.release("a", coin, lambda x: float(x.sum())), Doubling("twice", "a"),
                                dp.release("t", coin, lambda x, twice: twice, uses="twice"), name="main"),
                    dp.ReplaceOne())


DATA = np.array([0.0, 1.0, 1.0])
GRAPHS = {"uses": uses_graph, "repeat": repeat_graph, "subsample": subsample_graph, "split": split_graph,
          "custom": custom_graph}


def same(a, b) -> bool:
    """The same value: type, dtype, shape and bits (lists and tuples item by item)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and np.shape(a) == np.shape(b) and np.asarray(a).tobytes() == np.asarray(b).tobytes()
    return a == b


def same_run(batched: tuple[dict, str], observed: tuple[dict, str]) -> bool:
    (outputs, ending), (reference, expected) = batched, observed
    return (ending == expected and list(outputs) == list(reference)
            and all(same(outputs[name], reference[name]) for name in reference))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_a_batch_of_one_is_the_run_observe_makes_with_the_same_seed(name):
    graph = GRAPHS[name]()
    endings = set()
    for seed in range(300):
        batched = graph.observe_runs(DATA, np.random.default_rng(seed), 1).run(0)
        observed = graph.observe(DATA, np.random.default_rng(seed))
        assert same_run(batched, observed), (seed, batched, observed)
        endings.add(observed[1])
    assert len(endings) >= 2 or name in ("repeat", "subsample"), endings  # the seeds reach halts or errors


def _atom(outputs: dict, ending: str) -> tuple:
    return tuple((name, tuple(encode(value))) for name, value in outputs.items()) + (ending,)


def _homogeneity(first: collections.Counter, second: collections.Counter) -> float:
    """Chi-square p-value that two samples of atoms come from one distribution (cells expected
    below 5 merged)."""
    atoms = sorted(set(first) | set(second), key=lambda atom: -(first[atom] + second[atom]))
    total = sum(first.values()) + sum(second.values())
    table, rare = [], [0, 0]
    for atom in atoms:
        row = [first[atom], second[atom]]
        if sum(row) * min(sum(first.values()), sum(second.values())) / total < 5:
            rare = [rare[0] + row[0], rare[1] + row[1]]
        else:
            table.append(row)
    if sum(rare):
        table.append(rare)
    return 1.0 if len(table) < 2 else float(stats.chi2_contingency(np.array(table).T)[1])


def _batched_atoms(graph, seed: int, runs: int = RUNS) -> collections.Counter:
    batch = graph.observe_runs(DATA, np.random.default_rng(seed), runs)
    return collections.Counter(_atom(*batch.run(i)) for i in range(runs))


def _observed_atoms(graph, seed: int, runs: int = RUNS) -> collections.Counter:
    rng, releases = np.random.default_rng(seed), graph.plan().releases
    return collections.Counter(_atom(*graph.observe(DATA, rng, releases)) for _ in range(runs))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_batched_runs_are_distributed_as_observe_runs(name):
    graph = GRAPHS[name]()
    batched, observed = _batched_atoms(graph, 1), _observed_atoms(graph, 2)
    assert len(observed) >= 3, observed  # a distribution worth testing
    assert _homogeneity(batched, observed) > LEVEL, (batched.most_common(12), observed.most_common(12))


def test_the_test_has_power():
    """A sampler that gives every run the first run's ``a`` (a shared query answer where each run
    should have its own) is rejected."""
    graph = uses_graph()
    batch = graph.observe_runs(DATA, np.random.default_rng(3), RUNS)
    wrong = collections.Counter()
    for i in range(RUNS):
        outputs, ending = batch.run(i)
        outputs = dict(outputs, a=batch.run(0)[0]["a"]) if "a" in outputs else outputs
        wrong[_atom(outputs, ending)] += 1
    assert _homogeneity(wrong, _observed_atoms(graph, 4)) < LEVEL


def test_the_stacked_and_one_by_one_noise_give_the_same_distribution():
    for make in (uses_graph, subsample_graph):
        assert _homogeneity(_batched_atoms(make(Coin()), 5, 20_000), _batched_atoms(make(StackedCoin()), 6, 20_000)) > LEVEL


def test_an_answer_a_mechanism_refuses_ends_only_its_own_run():
    """Runs with their own answers (a subsample each) share one ``sample_each``; when one answer is
    refused, each run gets its own outcome, as run by run."""
    graph = dp.Graph(dp.subsample(SampleWithoutReplacement(1, 3), dp.release(
        "x", Laplace(1.0), lambda x: float(x[0]) if x[0] < 2 else np.inf)), dp.ReplaceOne())
    data = np.array([0.0, 1.0, 5.0])
    batch = graph.observe_runs(data, np.random.default_rng(0), 3000)
    endings = collections.Counter(batch.endings)
    expected = graph.observe(data, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    while expected[1] == "":
        expected = graph.observe(data, rng)
    assert set(endings) == {"", expected[1]} and expected[1].startswith("PrivacyError: step 'subsample/x' raised")
    assert abs(endings[""] / 3000 - 2 / 3) < 0.05
    released = np.array([batch.run(i)[0]["x"] for i in range(3000) if batch.endings[i] == ""])
    assert np.mean(released < 0.5) > 0.3 and np.mean(released > 0.5) > 0.3  # both answers, each with its noise


def test_outputs_of_a_batch_lay_out_what_from_observations_lays_out():
    """Fields in order of first appearance, each as wide as its widest value, NaN where a run
    released nothing: a graph whose values vary in width (a mapping) and whose runs halt early."""
    coin = Coin()
    graph = dp.Graph(dp.sequence(
        dp.halt_if("first", coin, lambda x: 0.0, lambda v: v > 0),
        dp.release("vector", coin, lambda x: np.zeros(2)),
        dp.postprocess("bins", lambda vector: {(int(i),): float(v) for i, v in enumerate(vector) if v > 0},
                       uses="vector"),
        name="main"), dp.ReplaceOne())
    batch = graph.observe_runs(DATA, np.random.default_rng(0), 500)
    observations = [Observation(tuple((n, encode(v)) for n, v in batch.run(i)[0].items()), batch.run(i)[1])
                    for i in range(500)]
    ours, reference = outputs_of(batch), Outputs.from_observations(observations)
    assert ours.fields == reference.fields and ours.shape == reference.shape
    assert np.array_equal(ours.values, reference.values, equal_nan=True)
    assert list(ours.reasons) == list(reference.reasons) and set(ours.reasons) == {"", "first"}


# --- the registered estimators ----------------------------------------------------------------

def _without_vectorised(node):
    """The same node tree with every post-processing step called run by run."""
    if isinstance(node, dp.graph.wrappers.PostProcess):
        return attrs.evolve(node, vectorised=False)
    changes = {}
    for field in attrs.fields(type(node)):
        value = getattr(node, field.name)
        if field.name in ("node", "release") and attrs.has(type(value)):
            changes[field.name] = _without_vectorised(value)
        elif field.name in ("nodes", "branches"):
            changes[field.name] = tuple(_without_vectorised(child) for child in value)
    return attrs.evolve(node, **changes)


@pytest.mark.parametrize("name", ["mean.clipped", "mean.localised"])
def test_vectorised_post_processing_shows_what_run_by_run_post_processing_shows(name):
    params, data = registry.info(name).example(np.random.default_rng(0))
    graph = dp.estimator(name, **params)
    assert any(getattr(step, "vectorised", False) for step in graph.root.nodes)
    one_by_one = attrs.evolve(graph, root=_without_vectorised(graph.root))
    data = graph.validate(data)
    fast = graph.observe_runs(data, np.random.default_rng(7), 5000)
    slow = one_by_one.observe_runs(data, np.random.default_rng(7), 5000)  # the same noise: post-processing draws none
    assert all(same_run(fast.run(i), slow.run(i)) for i in range(5000))
    for seed in range(20):  # and a batch of one is the run observe makes
        assert same_run(graph.observe_runs(data, np.random.default_rng(seed), 1).run(0),
                        graph.observe(data, np.random.default_rng(seed)))


def test_the_projection_row_by_row_is_the_projection_of_each_row():
    from dpledger.algorithms.mean.parameters import project_rows, project_to_ball

    rng = np.random.default_rng(0)
    for d in (1, 2, 5, 17, 100, 1000):
        rows = rng.standard_normal((200, d)) * rng.choice([1e-300, 1e-3, 1.0, 1e3, 1e300], size=(200, 1))
        rows[:3] = 0.0
        projected = project_rows(rows, 2.0)
        for row, got in zip(rows, projected):
            assert got.tobytes() == project_to_ball(row, 2.0).tobytes()


@pytest.mark.parametrize("name", ["mean.clipped", "mean.localised", "sparse_mean.exponential", "sparse_mean.peeling"])
def test_registered_estimators_batched_are_distributed_as_run_by_run(name):
    """Every released coordinate: a two-sample Kolmogorov–Smirnov test between the batch and the
    per-run path (p < 1e-9 rejects), the same fields and the same endings."""
    params, data = registry.info(name).example(np.random.default_rng(0))
    fast = RunEstimator(name, params)(data, np.random.default_rng(1), 20_000)
    slow = Outputs.from_list(RunEstimator(name, params, per_run=True)(data, np.random.default_rng(2), 4_000))
    assert fast.fields == slow.fields and set(fast.reasons) == set(slow.reasons)
    for column in range(fast.values.shape[1]):
        a, b = fast.values[:, column], slow.values[:, column]
        if np.ptp(a) or np.ptp(b):
            assert stats.ks_2samp(a, b).pvalue > LEVEL, (fast.fields, column)
        else:
            assert a[0] == b[0]


def test_every_registered_estimator_shows_the_fields_and_endings_of_run_by_run():
    for name in dp.estimators():
        params, data = registry.info(name).example(np.random.default_rng(0))
        fast = RunEstimator(name, params)(data, np.random.default_rng(1), 8)
        slow = Outputs.from_list(RunEstimator(name, params, per_run=True)(data, np.random.default_rng(1), 8))
        assert [f for f, _ in fast.fields] == [f for f, _ in slow.fields], name
        assert set(fast.reasons) <= set(slow.reasons) | {""}, (name, set(fast.reasons), set(slow.reasons))


# --- Mechanism.sample_each ---------------------------------------------------------------------

def _mechanisms():
    from dpledger.mechanisms import (DiscreteLaplace, Gaussian, TextbookGaussian, TextbookLaplace,
                                     TextbookTruncatedLaplace, TruncatedLaplace)
    return [(Laplace(1.0), (0.25, 3.5)), (Laplace(1.0, coordinates=2), ([0.0, 1.0], [5.0, -2.0])),
            (Gaussian(1.0, 1e-5), (0.25, 3.5)), (TruncatedLaplace(1.0, 1e-3), (0.25, 3.5)),
            (DiscreteLaplace(1.0), (0, 7)), (TextbookLaplace(1.0), (0.25, 3.5)),
            (TextbookGaussian(1.0, 1e-5), ([0.0, 1.0], [5.0, -2.0])), (TextbookTruncatedLaplace(1.0, 1e-3), (0.25, 3.5)),
            (dp.mechanisms.ReportNoisyMax(1.0), ([0.0, 1.0, 2.0], [2.0, 1.0, 0.0]))]


@pytest.mark.parametrize("mechanism, answers", _mechanisms(), ids=lambda m: type(m).__name__)
def test_sample_each_draws_for_each_answer_what_release_draws(mechanism, answers):
    """Row i of ``sample_each`` is of the type ``release`` gives, distributed as ``sample`` of its
    answer (a Kolmogorov–Smirnov test per coordinate, p < 1e-9 rejects); a refused answer raises
    what ``release`` raises."""
    rng = np.random.default_rng(0)
    first, second = answers
    rows = mechanism.sample_each([first, second] * 4000, rng)
    single = mechanism.release(first, rng)
    assert type(rows[0]) is type(single) and np.shape(rows[0]) == np.shape(single)
    assert np.asarray(rows[0]).dtype == np.asarray(single).dtype
    for index, answer in enumerate(answers):
        mine = np.array([np.ravel(row) for row in rows[index::2]], dtype=float)
        reference = np.asarray(mechanism.sample(answer, rng, 4000), dtype=float).reshape(4000, -1)
        for column in range(reference.shape[1]):
            assert stats.ks_2samp(mine[:, column], reference[:, column]).pvalue > LEVEL
    with pytest.raises(Exception) as refused:
        mechanism.release(np.full(np.shape(first), np.inf), rng)
    with pytest.raises(type(refused.value), match="NaN or inf|integer|finite"):
        mechanism.sample_each([first, np.full(np.shape(first), np.inf)], rng)
