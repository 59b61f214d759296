"""Every composition rule with exact numbers, its validation and its refusals."""

import math

import pytest
from hypothesis import given, strategies as st

import dpledger as dp
from dpledger import PureDP, ApproxDP

eps = st.floats(min_value=0, max_value=5)
delta = st.floats(min_value=0, max_value=1e-3)


def test_basic_composition_sums():
    assert dp.compose(PureDP(0.5), ApproxDP(0.25, 1e-6), ApproxDP(1, 2e-6)) == ApproxDP(1.75, 3e-6)
    assert dp.compose(PureDP(0.1), PureDP(0.2)) == PureDP(0.1 + 0.2)
    assert dp.compose(*[PureDP(0.1)] * 10) == PureDP(1.0)  # fsum: exactly 1, not 0.9999999999999999


def test_composition_refuses_a_total_delta_of_one():
    with pytest.raises(ValueError, match="delta"):
        dp.compose(ApproxDP(1, 0.6), ApproxDP(1, 0.5))


def test_halting_composition_is_the_sum_of_lemma_a4():
    assert dp.compose_halting(ApproxDP(1, 1e-6), ApproxDP(0.5, 1e-7), PureDP(0.25)) == ApproxDP(1.75, 1.1e-6)


def test_post_processing_keeps_the_guarantee():
    assert dp.post_process(ApproxDP(1, 1e-5)) == ApproxDP(1, 1e-5)


def test_failure_absorption_fact_i3():
    assert dp.absorb_failure(ApproxDP(1, 1e-6), 0.01) == ApproxDP(1.02, 0.010001)
    assert dp.absorb_failure(PureDP(1), 0.5) == ApproxDP(2, 0.5)
    with pytest.raises(ValueError, match="gamma"):
        dp.absorb_failure(PureDP(1), 0.5000001)
    with pytest.raises(ValueError, match="gamma"):
        dp.absorb_failure(PureDP(1), -0.1)
    with pytest.raises(ValueError, match="gamma"):
        dp.absorb_failure(PureDP(1), math.nan)


def test_group_privacy():
    assert dp.group_privacy(PureDP(0.5), 3) == PureDP(1.5)
    g = dp.group_privacy(ApproxDP(0.5, 1e-6), 3)
    assert g.epsilon == 1.5 and g.delta == pytest.approx(3 * math.exp(1.0) * 1e-6, rel=1e-15)
    assert dp.group_privacy(ApproxDP(0.5, 1e-6), 1) == ApproxDP(0.5, 1e-6)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="k"):
            dp.group_privacy(PureDP(1), bad)
    with pytest.raises(TypeError, match="k"):
        dp.group_privacy(PureDP(1), 2.5)
    with pytest.raises(ValueError, match="no guarantee"):
        dp.group_privacy(ApproxDP(2, 1e-3), 10)


def test_random_partition_takes_the_maximum_not_the_sum():
    assert dp.random_partition(ApproxDP(1, 1e-6), PureDP(1)) == ApproxDP(1, 1e-6)
    assert dp.random_partition(ApproxDP(0.5, 1e-5), PureDP(2)) == ApproxDP(2, 1e-5)
    with pytest.raises(ValueError):
        dp.random_partition()


def test_privatised_input_lemma_i4_constants():
    g1, g2, m = ApproxDP(1.0, 1e-6), ApproxDP(0.1, 1e-7), 4
    out = dp.privatised_input(g1, g2, m)
    gaussian_first = 1e-6 + math.e * 4 * math.exp(0.3) * 1e-7
    group_first = math.exp(0.4) * 1e-6 + 4 * math.exp(0.3) * 1e-7
    assert out.epsilon == pytest.approx(1.4)
    assert out.delta == pytest.approx(min(gaussian_first, group_first), rel=1e-12)
    assert dp.privatised_input(g1, g2, 0) == g1
    with pytest.raises(ValueError, match="m"):
        dp.privatised_input(g1, g2, -1)


def test_subsampling_amplification_and_its_relations():
    q = 0.01
    out = dp.amplify_by_subsampling(ApproxDP(1.0, 1e-5), q, dp.AddRemoveOne())
    assert out.epsilon == pytest.approx(math.log(1 + q * (math.e - 1)))
    assert out.delta == pytest.approx(q * 1e-5)
    assert dp.amplify_by_subsampling(PureDP(1.0), 1.0, dp.ReplaceOne()) == PureDP(1.0)
    with pytest.raises(dp.PrivacyError, match="EdgeAdjacency"):
        dp.amplify_by_subsampling(PureDP(1.0), q, dp.EdgeAdjacency())
    with pytest.raises(ValueError, match="rate"):
        dp.amplify_by_subsampling(PureDP(1.0), 0.0, dp.AddRemoveOne())


@given(st.lists(st.tuples(eps, delta), min_size=1, max_size=6))
def test_partition_never_costs_more_than_composition(pairs):
    gs = [ApproxDP(e, d) for e, d in pairs]
    part, seq = dp.random_partition(*gs), dp.compose(*gs)
    assert part.epsilon <= seq.epsilon and part.delta <= seq.delta


@given(eps, delta, st.integers(min_value=1, max_value=5))
def test_group_privacy_is_monotone_in_k(e, d, k):
    g = ApproxDP(e, d)
    try:
        a, b = dp.group_privacy(g, k), dp.group_privacy(g, k + 1)
    except ValueError:
        return
    assert a.epsilon <= b.epsilon and a.delta <= b.delta


def test_rules_refuse_non_guarantees():
    with pytest.raises(TypeError, match="PureDP or ApproxDP"):
        dp.compose(PureDP(1), (1.0, 0.0))


# --- second review, finding 9: what is not a sum is rounded up ------------------------------------

def _exact(value) -> "mpmath.mpf":
    import mpmath
    return mpmath.mpf(value)


def _at_least(computed: float, exact) -> bool:
    from fractions import Fraction
    import mpmath
    return Fraction(computed) >= Fraction(mpmath.nstr(exact, 60, strip_zeros=False).replace(" ", ""))


def _grid():
    import itertools
    epsilons = [1e-3, 0.1, 0.3, 1 / 3, 0.7, 1.0, 2.0, 5.0, 9.9]
    deltas = [1e-12, 1e-9, 3e-7, 1e-6, 1e-5]
    return list(itertools.product(epsilons, deltas))


def test_group_privacy_amplification_and_privatised_input_round_up():
    import mpmath

    mpmath.mp.dps = 80
    short = []
    for e, d in _grid():
        E, D = _exact(e), _exact(d)
        for k in (2, 3, 7, 10):
            if k * mpmath.exp((k - 1) * E) * D >= 0.5:
                continue
            g = dp.group_privacy(ApproxDP(e, d), k)
            short += [("group ε", e, k)] * (not _at_least(g.epsilon, k * E))
            short += [("group δ", e, d, k)] * (not _at_least(g.delta, k * mpmath.exp((k - 1) * E) * D))
        for q in (1e-4, 0.01, 1 / 3, 0.3):
            a = dp.amplify_by_subsampling(ApproxDP(e, d), q, dp.AddRemoveOne())
            short += [("amplified ε", e, q)] * (not _at_least(a.epsilon, mpmath.log1p(_exact(q) * mpmath.expm1(E))))
            short += [("amplified δ", d, q)] * (not _at_least(a.delta, _exact(q) * D))
        for m in (1, 3, 8):
            e2, d2 = e / 7, d / 3
            E2, D2 = _exact(e2), _exact(d2)
            group = m * mpmath.exp((m - 1) * E2) * D2
            exact = min(D + mpmath.exp(E) * group, mpmath.exp(m * E2) * D + group)
            if exact >= 0.5:
                continue
            p = dp.privatised_input(ApproxDP(e, d), ApproxDP(e2, d2), m)
            short += [("privatised δ", e, d, m)] * (not _at_least(p.delta, exact))
            short += [("privatised ε", e, m)] * (not _at_least(p.epsilon, E + m * E2))
    assert not short, f"{len(short)} results below the exact value, e.g. {short[:5]}"
