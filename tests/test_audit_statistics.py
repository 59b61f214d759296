"""Output normalisation, statistics, event search and batching of the auditor."""

from __future__ import annotations

import functools
import math

import attrs
import numpy as np
import pytest

from dpledger.audit.counting import Counter
from dpledger.audit.events import Event, search_events
from dpledger.audit.outputs import NAN_REASON, Outputs
from dpledger.audit.pairs import audit_pairs
from dpledger.audit.sampling import accepts_size, batch_sizes
from dpledger.audit.statistics import (Halted, HammingToMode, MeanDifferenceProjection, Output, PlusOnes, Statistic,
                                       fit_statistics)


def test_outputs_keep_halt_reasons_apart():
    outputs = Outputs.from_list([1.5, None, "budget", "None", float("nan"), 2])
    assert list(outputs.reasons) == ["", "None", "'budget'", "'None'", NAN_REASON, ""]
    assert outputs.shape == () and outputs.released.ravel().tolist() == [1.5, 2.0]
    assert np.isnan(outputs.values[1:5]).all()


def test_batches_of_objects_and_arrays_agree():
    as_array = Outputs.from_batch(np.array([[1, 2], [3, 4]]), 2)
    as_objects = Outputs.from_batch([np.array([1, 2]), np.array([3, 4])], 2)
    assert np.array_equal(as_array.values, as_objects.values) and as_array.shape == as_objects.shape == (2,)
    halted = Outputs.from_batch(np.array([None, None], dtype=object), 2)
    joined = Outputs.concatenate([as_array, halted])
    assert joined.shape == (2,) and joined.halted.tolist() == [False, False, True, True]


def test_outputs_of_different_shapes_are_refused():
    with pytest.raises(ValueError, match="one fixed shape"):
        Outputs.from_list([np.zeros(2), np.zeros(3)])


def test_statistics_for_labels_and_matrices():
    labels = Outputs.from_list([np.array([1, -1, 1]), np.array([1, 1, 1])])
    kinds = {type(s) for s in fit_statistics(labels, labels)}
    assert {HammingToMode, PlusOnes}.issubset(kinds)
    matrices = Outputs.from_list([np.arange(6.0).reshape(2, 3) * k for k in (0.5, 1.5)])
    names = [s.name for s in fit_statistics(matrices, Outputs.from_list([np.zeros((2, 3))] * 2))]
    assert "coordinate (1, 2)" in names and "projection on mean difference" in names and "ℓ2 norm" in names
    assert not any(isinstance(s, (HammingToMode, PlusOnes)) for s in fit_statistics(matrices, matrices))


def test_halted_runs_are_only_in_halting_events():
    outputs = Outputs.from_list([None, 3.0])
    assert np.isnan(Output()(outputs)[0]) and Halted()(outputs).tolist() == [1.0, 0.0]
    projection = MeanDifferenceProjection(np.array([1.0]))
    assert np.isnan(projection(outputs)[0])


def test_threshold_search_finds_a_separating_threshold():
    rng = np.random.default_rng(0)
    first = Outputs.from_batch(rng.normal(3.0, 1.0, 20_000), 20_000)
    second = Outputs.from_batch(rng.normal(0.0, 1.0, 20_000), 20_000)
    best = max(search_events(Output(), first, second, 0.0, 1e-3), key=lambda c: c.training_bound)
    # {s >= t} favours the first side, {s <= t} the second: either is a correct choice
    assert (best.event.op, best.reverse) in {(">=", False), ("<=", True)}
    assert best.training_bound > 2.0


def test_a_zero_threshold_is_plus_zero_whichever_side_holds_minus_zero():
    # {s >= -0} and {s >= 0} are one event; the report names it one way, however the zeros were drawn
    zeros = np.array([-0.0, 0.0, 1.0, -1.0] * 500)
    for first, second in ((zeros, -zeros), (-zeros, zeros)):
        found = search_events(Output(), Outputs.from_batch(first, first.size), Outputs.from_batch(second + 2, 2000),
                              0.0, 1e-3)
        zero = [c.event.threshold for c in found if c.event.threshold == 0]
        assert zero and all(math.copysign(1.0, t) == 1.0 for t in zero), found


def _halts_with_reason(data, rng):
    return "out of budget" if data == 0 else "diverged"


def test_a_halt_reason_that_depends_on_the_input_is_flagged():
    report = audit_pairs(_halts_with_reason, [(0, 1)], 1.0, samples=2_000, confidence=0.999999, seed=5)
    assert report.violation and "run halted with" in report.pairs[0].event


def _with_size(data, rng, size):
    return rng.random(size)


def _keyword_only_size(data, rng, *, size=1):
    return rng.random(size)


def test_batched_fn_is_detected_from_its_signature():
    assert accepts_size(_with_size) and accepts_size(_keyword_only_size)
    assert accepts_size(functools.partial(_with_size, 0))
    assert not accepts_size(_halts_with_reason) and not accepts_size(lambda data, rng, **kwargs: 0.0)


@pytest.mark.parametrize("total", [1, 255, 256, 1_000, 500_000, 3_000_001])
def test_batches_cover_every_sample(total):
    sizes = batch_sizes(total)
    assert sum(sizes) == total and max(sizes) <= 65_536 and len(sizes) <= max(16, total // 65_536 + 1)


def test_a_counter_computes_a_statistic_once_per_batch_for_all_its_events():
    # a learned score's two tails are two events on one statistic: scoring a batch twice doubled its cost
    @attrs.frozen(eq=False)
    class Counted(Statistic):
        calls: list = attrs.field(factory=list)
        name = "counted output"

        def __call__(self, outputs):
            self.calls.append(len(outputs))
            return outputs.values[:, 0]

    statistic = Counted()
    train = Outputs.from_batch(np.arange(100.0), 100)
    counter = Counter.fixed([Event(statistic, ">=", 60.0), Event(statistic, "<=", 9.0)], (train, train))
    statistic.calls.clear()
    tally = counter(Outputs.from_batch(np.arange(50.0, 150.0), 100))
    assert statistic.calls == [100]
    assert tally.counts.tolist() == [90, 0]
