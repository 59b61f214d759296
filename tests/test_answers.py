"""Relations of query answers (``dpledger.answers``): distances, neighbours at the full distance,
hypothesis strategies that reach the classic sign patterns, refusal by the accountant, and an
audit that searches through them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given

import dpledger as dp
from dpledger.answers import AnswerDistance, EveryAnswer, OneAnswer
from dpledger.audit import audit, strategies
from dpledger.errors import RelationError

RELATIONS = [OneAnswer(0.5), EveryAnswer(0.5), EveryAnswer(0.5, monotone=True), AnswerDistance(1, 0.5),
             AnswerDistance(2, 0.5)]


def _norm(relation, move):
    if isinstance(relation, AnswerDistance):
        return np.linalg.norm(move, relation.norm)
    return np.abs(move).max()


@pytest.mark.parametrize("relation", RELATIONS, ids=str)
def test_neighbours_are_at_the_full_distance(relation):
    value = np.array([[1.0, -2.0], [0.5, 3.0]])  # any shape
    for other in relation.neighbours(value, np.random.default_rng(1), 50):
        assert other.shape == value.shape and relation.are_neighbours(value, other)
        assert _norm(relation, (other - value).ravel()) == pytest.approx(0.5)
    assert relation.distance(value, value) == 0
    assert not relation.are_neighbours(value, value + 0.6) and not relation.are_neighbours(value, value[:1])


def test_distances_count_the_steps_of_a_path_of_neighbours():
    a = np.zeros(3)
    assert OneAnswer(1.0).distance(a, [1.0, -1.0, 0.0]) == 2  # two answers moved: two steps
    assert OneAnswer(1.0).distance(a, [2.5, 0.0, 0.0]) == 3
    assert EveryAnswer(1.0).distance(a, [1.0, -1.0, 0.5]) == 1
    assert EveryAnswer(1.0).distance(a, [2.0, -1.0, 0.5]) == 2
    assert EveryAnswer(1.0, monotone=True).distance(a, [1.0, -1.0, 0.0]) == 2  # one step up, one down
    assert EveryAnswer(1.0).distance(a, [1.0, 2.0]) == np.inf  # another shape
    assert AnswerDistance(1, 1.0).distance(a, [0.5, -0.5, 0.0]) == 1
    assert AnswerDistance(2, 1.0).distance(a, [0.6, 0.8, 0.0]) == 1


@pytest.mark.parametrize("relation", RELATIONS, ids=str)
def test_answer_pairs_are_neighbours_that_differ(relation):
    @given(strategies.answer_pairs(relation, 1, 6, -2.0, 2.0))
    def check(pair):
        assert relation.are_neighbours(*pair) and not np.array_equal(*pair)
        assert np.all((pair[0] >= -2.0) & (pair[0] <= 2.0))

    check()


def _pattern(pair) -> tuple[int, int]:
    move = pair[1] - pair[0]
    return int((move > 0).sum()), int((move < 0).sum())


@pytest.mark.parametrize("ups, downs", [(3, 3), (1, 5), (6, 0)])
def test_answer_pairs_reach_the_classic_patterns(ups, downs):
    # half the answers up and half down; one up and the rest down; every answer up
    found = find(strategies.answer_pairs(EveryAnswer(1.0), 6, 6), lambda pair: _pattern(pair) == (ups, downs))
    assert np.allclose(np.abs(found[1] - found[0]), 1.0)


def test_the_first_neighbours_are_the_classic_patterns_in_the_given_order():
    """DP-Sniper's sparse-vector pair moves the first half up and the rest down, in order."""
    start = np.ones(10)
    moves = [np.abs(other - start) * np.sign(other - start) for other in
             EveryAnswer(1.0).neighbours(start, np.random.default_rng(3), 4)]
    half = np.r_[np.ones(5), -np.ones(5)]
    assert any(np.array_equal(move, half) or np.array_equal(move, -half) for move in moves)
    one_up = np.r_[1.0, -np.ones(9)]
    assert any(np.array_equal(move, one_up) or np.array_equal(move, -one_up) for move in moves)


def test_the_search_climb_tries_every_kind_of_move():
    """A climb step must not always take a relation's first listed neighbour (always "all up")."""
    from dpledger.audit.search import _neighbour
    rng, start = np.random.default_rng(4), np.ones(6)
    kinds = {tuple(np.sign(_neighbour(EveryAnswer(1.0).neighbours, start, rng) - start)) for _ in range(200)}
    assert len(kinds) >= 10 and (1.0,) * 6 in kinds | {tuple(-np.array(k)) for k in kinds}


def test_monotone_pairs_never_move_both_ways():
    @given(strategies.answer_pairs(EveryAnswer(1.0, monotone=True), 2, 6))
    def check(pair):
        assert min(_pattern(pair)) == 0

    check()


@pytest.mark.parametrize("relation", RELATIONS[:2], ids=str)
def test_pairs_like_answers_keep_their_shape(relation):
    data = np.arange(6.0).reshape(2, 3)

    @given(strategies.pairs_like(relation, data))
    def check(pair):
        assert pair[0].shape == data.shape and relation.are_neighbours(*pair)

    check()


@pytest.mark.parametrize("use", [
    lambda r: dp.Accountant(dp.PureDP(1.0), relation=r),
    lambda r: dp.Accountant(dp.PureDP(1.0)).spend("step", dp.PureDP(0.1), relation=r),
    lambda r: dp.Accountant(dp.PureDP(1.0)).run(dp.Graph(dp.release("x", dp.mechanisms.Laplace(1.0), sum),
                                                             relation=r), np.zeros(3)),
])
def test_the_accountant_refuses_them_as_session_relations(use, tmp_path):
    with pytest.raises(RelationError, match="relates query answers.*ReplaceOne"):
        use(EveryAnswer(1.0))


def test_bad_arguments_are_refused_naming_them():
    with pytest.raises(ValueError, match="sensitivity"):
        OneAnswer(0.0)
    with pytest.raises(ValueError, match="norm"):
        AnswerDistance(3, 1.0)
    with pytest.raises(TypeError, match="OneAnswer, EveryAnswer"):
        strategies.answer_pairs(dp.ReplaceOne())
    with pytest.raises(ValueError, match="answers"):
        list(EveryAnswer(1.0).neighbours([np.nan], np.random.default_rng(0)))


def _noisy_answers(answers, rng, size, epsilon=1.0):
    """Laplace noise of scale 1/ε on each of four answers: ε per answer, 4ε under EveryAnswer(1)."""
    answers = np.asarray(answers, dtype=float)
    return answers + rng.laplace(0.0, 1.0 / epsilon, (size, answers.size))


def test_an_audit_searches_through_the_relation_and_catches_the_composed_cost():
    # honest per answer (OneAnswer), not under every answer moving (the cost is 4ε, not ε)
    answers = np.zeros(4)
    one = audit(_noisy_answers, epsilon=1.0, relation=OneAnswer(1.0), data=answers, samples=100_000,
                confidence=1 - 1e-6, seed=0)
    every = audit(_noisy_answers, epsilon=1.0, relation=EveryAnswer(1.0), data=answers, samples=100_000,
                  confidence=1 - 1e-6, seed=0)
    assert not one.violation and every.violation and every.epsilon_lower_bound > 2.0
