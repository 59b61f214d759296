"""The encoding of rich outputs (``audit.encoding``): ⊥/⊤, numbers, categories, variable length
and halts become one observation per run, with the label statistics kept on, and audits of
sparse vectors written with it catch the classic bug and pass the correct algorithm.

Verdicts run at confidence 1 − 1e-6: a false alarm has probability at most 1e-6 per audit."""

from __future__ import annotations

import functools
import math
import pickle

import numpy as np
import pytest

from dpledger.audit import audit_pairs
from dpledger.audit.encoding import BOTTOM, TOP, encode_answers, halted
from dpledger.audit.outputs import Outputs
from dpledger.audit.statistics import FieldStatistic, HammingToMode, PlusOnes, fit_statistics

STRICT = 1 - 1e-6


def test_a_run_becomes_its_length_kinds_and_numbers():
    observation = encode_answers([BOTTOM, TOP, 2.5, "b", False, np.nan], length=8, categories=("a", "b"))
    fields = dict(observation.values)
    assert fields["length"].tolist() == [6.0]
    assert fields["kinds"].tolist() == [0, 1, 2, 4, 0, -2, -1, -1]
    assert fields["numbers"][2] == 2.5 and np.isneginf(np.delete(fields["numbers"], 2)).all()
    assert halted("cut off").ending == "cut off" and halted().values == ()
    assert pickle.loads(pickle.dumps([BOTTOM, TOP])) == [BOTTOM, TOP]  # the same singletons in a worker


@pytest.mark.parametrize("run, length, message", [
    ([1.0, 2.0, 3.0], 2, "raise length"),
    (["c"], 2, "'c' is not"),
    ([object()], 2, "is not"),
    ([1.0], 0, "length"),
])
def test_what_it_cannot_encode_faithfully_is_refused(run, length, message):
    with pytest.raises(ValueError, match=message):
        encode_answers(run, length, categories=("a", "b"))


def test_label_statistics_stay_on_for_the_kinds():
    rng = np.random.default_rng(0)
    runs = [[TOP if x else BOTTOM for x in rng.random(rng.integers(1, 5)) < 0.5] for _ in range(200)]
    outputs = Outputs.from_list([encode_answers(run, 4) for run in runs])
    found = fit_statistics(outputs, outputs)
    inner = {type(s.inner) for s in found if isinstance(s, FieldStatistic) and s.field == "kinds"}
    assert {HammingToMode, PlusOnes} <= inner


def _sparse_vector(answers, rng, size, epsilon=1.0, cutoff=1, threshold=0.5):
    """Lyu, Su & Li's Algorithm 1 with cut-off ``cutoff`` (None: never stops, with query noise
    for one answer: their Algorithm 6, not ε-DP): ⊤/⊥ per answer against one noisy threshold until ``cutoff`` ⊤s, a variable-length
    output; every third run halts first when the noisy threshold exceeds 10 (a public outcome)."""
    answers = np.asarray(answers, dtype=float)
    runs = []
    for _ in range(size):
        noisy_threshold = threshold + rng.laplace(0.0, 2.0 / epsilon)
        if noisy_threshold > 10:
            runs.append(halted("threshold too high"))
            continue
        scale = 4.0 * cutoff / epsilon if cutoff else 2.0 / epsilon  # Algorithm 6: Lap(Δ/ε₂), ε₂ = ε/2
        run, tops = [], 0
        for answer in answers:
            top = answer + rng.laplace(0.0, scale) >= noisy_threshold
            run.append(TOP if top else BOTTOM)
            tops += top
            if cutoff is not None and tops == cutoff:
                break
        runs.append(encode_answers(run, answers.size))
    return runs


HALF = (np.r_[np.zeros(5), np.ones(5)], np.r_[np.ones(5), np.zeros(5)])


def test_the_sparse_vector_with_its_cutoff_passes_and_without_it_is_caught():
    correct = audit_pairs(_sparse_vector, [HALF], epsilon=1.0, samples=40_000, confidence=STRICT, seed=0)
    broken = audit_pairs(functools.partial(_sparse_vector, cutoff=None), [HALF], epsilon=1.0,
                         samples=40_000, confidence=STRICT, seed=0)
    assert correct.ok and not correct.violation
    assert broken.violation and broken.epsilon_lower_bound > 1.0


def _thresholded_mean(answers, rng, size, epsilon=1.0):
    """The noisy sum, or ⊥ when the *true* sum is negative: the ⊥ depends on the data itself."""
    total = float(np.sum(answers))
    noisy = total + rng.laplace(0.0, 1.0 / epsilon, size)
    return [encode_answers([BOTTOM] if total < 0 else [value], 1) for value in noisy]


def test_a_mixed_output_whose_bottom_reads_the_data_is_caught():
    report = audit_pairs(_thresholded_mean, [(np.array([0.0]), np.array([-0.5]))], epsilon=1.0, samples=20_000,
                         confidence=STRICT, seed=0)
    assert report.violation and report.epsilon_lower_bound > 3.0 and not math.isnan(report.epsilon_lower_bound)
