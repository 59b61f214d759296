"""Mechanism graphs: plans without data, charge-then-run, halting, conditions, partitions."""

import dp_accounting
import numpy as np
import pytest

import dpledger as dp
from dpledger.mechanisms import (EdgeSplit, Gaussian, HistogramLearner, Laplace, PoissonSample, RowSplit, SampleWithoutReplacement,
                                 TextbookGaussian, TextbookLaplace, TruncatedLaplace)


def rng(seed=0):
    return np.random.default_rng(seed)


def clipped_sum(x):
    return float(np.clip(x, 0, 1).sum())


def halting_graph(threshold):
    """Release a noisy sum; halt if a one-sided noisy count is below ``threshold``; then a mean."""
    return dp.Graph(dp.sequence(
        dp.release("sum", Laplace(0.5), clipped_sum),
        dp.halt_if("enough", TruncatedLaplace(0.25, 1e-6), clipped_sum, lambda v: v < threshold),
        dp.conditional("enough", dp.release("mean", Gaussian(0.5, 1e-6, sensitivity=0.02),
                                            lambda x: float(np.clip(x, 0, 1).mean()))),
        name="pipeline"), relation=dp.ReplaceOne())


def test_plan_needs_no_data_and_cites_lemma_a4():
    plan = dp.Accountant(dp.ApproxDP(5, 1e-5)).plan(halting_graph(10))
    assert plan.guarantee == dp.ApproxDP(1.25, 2e-6)
    assert plan.rule == "halting composition (Lemma A.4)"
    assert [s.path for s in plan.steps] == ["pipeline/sum", "pipeline/enough", "pipeline/mean"]
    assert "condition 'enough'" in plan.steps[2].rule or "Gaussian" in plan.steps[2].rule


def test_a_halted_run_is_charged_in_full_and_outputs_none():
    acct = dp.Accountant(dp.ApproxDP(5, 1e-5))
    data = rng().random(100)
    halted = acct.run(halting_graph(threshold=1e9), data, rng=rng(1))
    assert halted.halted and halted.output is None and halted.halted_by == "enough"
    assert "mean" not in halted.outputs and "sum" in halted.outputs
    ran = acct.run(halting_graph(threshold=-1e9), data, rng=rng(1))
    assert not ran.halted and ran.output == ran.outputs["mean"]
    assert [e.guarantee for e in acct.ledger] == [dp.ApproxDP(1.25, 2e-6)] * 2
    assert (acct.spent.epsilon, acct.spent.delta) == (2.5, 4e-6)


def test_unestablished_condition_is_refused_at_plan_time():
    orphan = dp.Graph(dp.sequence(
        dp.conditional("check", dp.release("x", Laplace(1.0), clipped_sum)),
        dp.halt_if("check", TruncatedLaplace(1.0, 1e-6), clipped_sum, lambda v: v < 0),
    ), relation=dp.ReplaceOne())
    acct = dp.Accountant(dp.ApproxDP(5, 1e-5))
    with pytest.raises(dp.ConditionError, match="'check'"):
        acct.plan(orphan)
    with pytest.raises(dp.ConditionError):
        acct.run(orphan, np.ones(5))
    assert len(acct.ledger) == 0


def test_conditions_do_not_cross_a_partition():
    graph = dp.Graph(dp.split(RowSplit((0.5, 0.5)),
                              dp.halt_if("test", TruncatedLaplace(1.0, 1e-6), clipped_sum, lambda v: v < 0),
                              dp.conditional("test", dp.release("x", Laplace(1.0), clipped_sum))),
                     relation=dp.ReplaceOne())
    with pytest.raises(dp.ConditionError):
        graph.plan()


def test_random_partition_costs_the_maximum():
    graph = dp.Graph(dp.split(
        EdgeSplit(0.5),
        dp.release("weak", Gaussian(1.0, 1e-6, sensitivity=2.0), lambda g: g.sum(axis=0)),
        dp.release("vote", Laplace(1.0, sensitivity=2.0), lambda g, weak: g @ np.sign(weak), uses="weak"),
        name="exact"), relation=dp.EdgeAdjacency())
    plan = graph.plan()
    assert plan.guarantee == dp.ApproxDP(1.0, 1e-6) and plan.rule.startswith("random partition")
    adjacency = np.ones((6, 6)) - np.eye(6)
    result = dp.Accountant(dp.ApproxDP(1.0, 1e-6)).run(graph, adjacency, rng=rng())
    assert result.output.shape == (6,)


def test_partitions_match_their_relation():
    graph = dp.Graph(dp.split(EdgeSplit(), dp.release("a", Laplace(1.0), np.sum), dp.release("b", Laplace(1.0), np.sum)),
                     relation=dp.ReplaceOne())
    with pytest.raises(dp.PrivacyError, match="EdgeAdjacency"):
        graph.plan()


def test_uses_must_name_an_earlier_output():
    graph = dp.Graph(dp.sequence(
        dp.release("b", Laplace(1.0), lambda x, a: a, uses="a"),
        dp.release("a", Laplace(1.0), clipped_sum)), relation=dp.ReplaceOne())
    with pytest.raises(dp.PrivacyError, match="uses \\['a'\\]"):
        graph.plan()
    with pytest.raises(dp.PrivacyError):
        dp.Graph(dp.postprocess("p", lambda z: z, uses="z"), relation=dp.ReplaceOne()).plan()


def test_post_processing_is_free_and_sees_only_outputs():
    graph = dp.Graph(dp.sequence(dp.release("s", Laplace(1.0), clipped_sum),
                                 dp.postprocess("double", lambda s: 2 * s, uses="s")), relation=dp.ReplaceOne())
    assert graph.plan().guarantee == dp.PureDP(1.0)
    result = dp.Accountant(dp.PureDP(1.0)).run(graph, np.ones(4), rng=rng())
    assert result.output == 2 * result.outputs["s"]


def test_absorb_group_and_transform():
    inner = dp.release("x", Gaussian(0.5, 1e-6), clipped_sum)
    assert dp.Graph(dp.absorb(inner, 0.01), relation=dp.ReplaceOne()).plan().guarantee == dp.ApproxDP(0.52, 0.010001)
    grouped = dp.Graph(dp.group(dp.release("x", Laplace(0.5), clipped_sum), 3), relation=dp.ReplaceOne()).plan()
    assert grouped.guarantee == dp.PureDP(1.5) and "group privacy" in grouped.rule
    same = dp.Graph(dp.transform("sq", np.square, dp.release("x", Laplace(0.5), clipped_sum)), relation=dp.ReplaceOne())
    assert same.plan().guarantee == dp.PureDP(0.5)
    with pytest.raises(ValueError, match="gamma"):
        dp.absorb(inner, 0.7)


def test_subsampling_checks_its_relation_and_amplifies():
    poisson = dp.subsample(PoissonSample(0.01), dp.release("x", Laplace(1.0), clipped_sum))
    plan = dp.Graph(poisson, relation=dp.AddRemoveOne()).plan()
    assert plan.guarantee.epsilon == pytest.approx(np.log1p(0.01 * (np.e - 1)))
    textbook = dp.subsample(PoissonSample(0.01), dp.release("x", TextbookLaplace(1.0), clipped_sum))
    assert dp.Graph(textbook, relation=dp.AddRemoveOne()).plan().event == \
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.LaplaceDpEvent(1.0))  # tight in PLD mode
    with pytest.raises(dp.PrivacyError, match="AddRemoveOne"):
        dp.Graph(poisson, relation=dp.ReplaceOne()).plan()
    wor = dp.subsample(SampleWithoutReplacement(10, 100), dp.release("x", Laplace(1.0), clipped_sum))
    assert dp.Graph(wor, relation=dp.ReplaceOne()).plan().guarantee.epsilon == pytest.approx(np.log1p(0.1 * (np.e - 1)))


def test_the_steps_of_one_plan_compose_tightly():
    """A plan's steps are fixed before the data: its guarantee is their PLD composition, as
    dp-accounting's own, and the basic filter charges that."""
    gauss = [dp.release(f"g{i}", TextbookGaussian(0.5, 1e-7), clipped_sum) for i in range(6)]
    graph = dp.Graph(dp.sequence(*gauss), relation=dp.ReplaceOne())
    plan = graph.plan()
    reference = dp_accounting.pld.PLDAccountant()
    reference.compose(dp_accounting.GaussianDpEvent(TextbookGaussian(0.5, 1e-7).sigma), 6)
    assert plan.guarantee.delta == pytest.approx(6e-7)
    assert plan.guarantee.epsilon == pytest.approx(reference.get_epsilon(6e-7), rel=1e-6)  # composed one by one
    assert plan.guarantee.epsilon < dp.compose(*[Gaussian(0.5, 1e-7).guarantee()] * 6).epsilon
    assert plan.rule.startswith("tight composition")
    acct = dp.Accountant(dp.ApproxDP(3.0, 1e-6))
    acct.run(graph, np.ones(3), rng=rng())
    assert acct.spent.epsilon == plan.guarantee.epsilon


def test_a_nested_sequence_composes_tightly_beside_a_step_without_a_curve():
    """A (ε, δ) step with no Rényi curve (the histogram learner) leaves the whole plan without a
    tight route; the Gaussian steps after it, in a sequence of their own, still compose tightly,
    and the total is that plus the histogram's (ε, δ) by basic composition."""
    steps = [dp.release(f"g{i}", Gaussian.from_sigma(4.0, delta=1e-7), clipped_sum) for i in range(6)]
    inner = dp.sequence(*steps, name="refine")
    histogram = dp.release("h", HistogramLearner(0.5, 1e-7, 3), lambda x: x)
    plan = dp.Graph(dp.sequence(histogram, inner), relation=dp.ReplaceOne()).plan()
    refine = dp.Graph(inner, relation=dp.ReplaceOne()).plan().guarantee
    assert refine.epsilon < dp.compose(*[s.mechanism.guarantee() for s in steps]).epsilon / 2
    assert plan.guarantee.epsilon == pytest.approx(0.5 + refine.epsilon, rel=1e-12)
    assert plan.guarantee.delta == pytest.approx(1e-7 + refine.delta, rel=1e-12)


def test_bad_input_is_refused_before_any_charge():
    acct = dp.Accountant(dp.ApproxDP(5, 1e-5))
    graph = dp.Graph(dp.release("s", Laplace(1.0), clipped_sum), relation=dp.ReplaceOne(),
                     check_input=lambda x: x if len(x) == 4 else (_ for _ in ()).throw(ValueError("need n=4")))
    for bad in ([1.0, np.nan, 0.0, 0.0], [1.0, 2.0], "text"):
        with pytest.raises((ValueError, TypeError)):
            acct.run(graph, bad)
    edge_graph = dp.Graph(dp.release("deg", Laplace(1.0, 2.0), lambda g: g.sum()), relation=dp.EdgeAdjacency())
    edge_acct = dp.Accountant(dp.PureDP(5))
    for bad in (np.ones((3, 3)), np.array([[0, 2], [2, 0]]), np.array([[0, 1], [0, 0]]), np.zeros((1, 1))):
        with pytest.raises(ValueError):
            edge_acct.run(edge_graph, bad)
    assert len(acct.ledger) == 0 and len(edge_acct.ledger) == 0


def test_graph_relation_must_match_the_accountant():
    acct = dp.Accountant(dp.PureDP(5), relation=dp.EdgeAdjacency())
    with pytest.raises(dp.PrivacyError):
        acct.run(dp.Graph(dp.release("s", Laplace(1.0), clipped_sum), relation=dp.ReplaceOne()), np.ones(3))


def test_step_names_are_checked():
    with pytest.raises(ValueError, match="repeated"):
        dp.sequence(dp.release("a", Laplace(1.0), np.sum), dp.release("a", Laplace(1.0), np.sum))
    with pytest.raises(ValueError, match="name"):
        dp.release("a/b", Laplace(1.0), np.sum)


def test_privatise_costs_lemma_i4_and_never_releases_the_noisy_rows():
    seen = {}

    def rows(data, rng):
        seen["coins"] = rng.integers(1 << 30)  # the query may draw data-independent coins
        return data

    inner = dp.release("mean", Laplace(0.5, sensitivity=2.0), lambda v: v.mean(axis=0))
    node = dp.privatise("noisy_rows", Gaussian(1.0, 1e-6, sensitivity=0.1), rows, inner, m=3,
                        note="rows within 0.1 outside 3")
    graph = dp.Graph(node, dp.ReplaceOne())
    plan = graph.plan()
    assert plan.guarantee == dp.privatised_input(dp.ApproxDP(1.0, 1e-6), dp.PureDP(0.5), 3)
    assert plan.guarantee.epsilon == pytest.approx(1.0 + 3 * 0.5)
    assert "Lemma I.4" in plan.rule and any("rows within 0.1" in s.rule for s in plan.steps)
    output, halted, outputs = graph.execute(np.ones((5, 2)), np.random.default_rng(0))
    assert halted is None and "coins" in seen and set(outputs) == {"mean"}  # releases only
    with pytest.raises(dp.PrivacyError, match="uses"):
        dp.Graph(dp.privatise("p", Gaussian(1.0, 1e-6), rows, inner, m=1, uses="missing"), dp.ReplaceOne()).plan()


def test_a_function_that_cannot_take_its_uses_is_refused_before_the_charge():
    """A typo between ``uses`` and a function's parameter names used to fail after the charge."""
    released = dp.release("sum", Laplace(1.0), clipped_sum)
    cases = [
        dp.postprocess("mean", lambda total: total / 10, uses="sum"),
        dp.release("again", Laplace(1.0), lambda x, total: total, uses="sum"),
        dp.private("step", lambda x, rng, total: total, dp.PureDP(0.5), "a proof", uses="sum"),
    ]
    for wrong in cases:
        acct = dp.Accountant(dp.PureDP(5.0), relation=dp.ReplaceOne())
        graph = dp.Graph(dp.sequence(released, wrong), relation=dp.ReplaceOne())
        with pytest.raises(TypeError, match=r"uses=\['sum'\]. Nothing was charged"):
            acct.run(graph, np.ones(3), rng=rng())
        assert len(acct.ledger) == 0
    fine = dp.Graph(dp.sequence(released, dp.postprocess("mean", lambda sum: sum / 10, uses="sum")),
                    relation=dp.ReplaceOne())
    dp.Accountant(dp.PureDP(5.0)).run(fine, np.ones(3), rng=rng())  # matching names run as before


def test_input_outside_the_graphs_domain_is_refused_before_the_charge():
    """Second review, finding 11: a graph built for scalar records, run on a (500, 2) array, was
    charged and released with twice its stated sensitivity. Every graph has a domain (by default
    one finite double per record), checked before the charge."""
    from dpledger.mechanisms import Laplace

    summed = dp.Graph(dp.release("sum", Laplace(1.0), lambda x: float(np.clip(x, 0, 1).sum())), dp.ReplaceOne())
    acct = dp.Accountant(dp.PureDP(1.0), relation=dp.ReplaceOne())
    with pytest.raises(ValueError, match=r"domain=.*\(2,\)"):
        acct.run(summed, np.full((500, 2), 0.5))
    assert len(acct.ledger) == 0 and acct.spent.epsilon == 0
    points = dp.Graph(summed.root, dp.ReplaceOne(), domain=dp.Records(shape=(2,), low=0.0, high=1.0))
    assert "of shape (2,)" in str(points.plan()) and acct.run(points, np.full((500, 2), 0.5)).entry.params["domain"]
    with pytest.raises(TypeError, match="domain"):
        dp.Graph(summed.root, dp.EdgeAdjacency(), domain=dp.Records())
    with pytest.raises(ValueError, match="AddRemoveOne"):
        dp.Graph(summed.root, dp.AddRemoveOne(), domain=dp.Records(n=5))


def test_a_public_bound_on_n_is_checked_before_the_charge():
    domain = dp.Records(low=0.0, high=1.0, max_n=3)
    assert str(domain) == "at most 3 records, one finite double each in [0, 1]"
    graph = dp.Graph(dp.release("count", dp.mechanisms.Laplace(1.0, sensitivity=1.0), lambda r: float(len(r))),
                     relation=dp.AddRemoveOne(), domain=domain)
    acct = dp.Accountant(dp.PureDP(1.0))
    with pytest.raises(ValueError, match="got 4 records.*nothing was charged"):
        acct.run(graph, np.zeros(4), rng=np.random.default_rng(0))
    assert len(acct.ledger) == 0
    assert acct.run(graph, np.zeros(3), rng=np.random.default_rng(0)).output is not None
    with pytest.raises(ValueError, match="not both"):
        dp.Records(n=3, max_n=3)
