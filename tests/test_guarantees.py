import math

import pytest
from hypothesis import given, strategies as st

import dpledger as dp
from dpledger import guarantees


@given(st.floats(min_value=0, max_value=1e6), st.floats(min_value=0, max_value=0.999))
def test_valid_guarantees_keep_their_numbers(eps, delta):
    g = dp.ApproxDP(eps, delta)
    assert (g.epsilon, g.delta) == (eps, delta)
    assert dp.PureDP(eps).delta == 0.0
    assert guarantees.from_dict(guarantees.to_dict(g)) == guarantees.make(eps, delta)


@pytest.mark.parametrize("eps", [-1e-9, -1, math.nan, math.inf, -math.inf])
def test_bad_epsilon_is_refused_naming_it(eps):
    with pytest.raises(ValueError, match="epsilon"):
        dp.PureDP(eps)
    with pytest.raises(ValueError, match="epsilon"):
        dp.ApproxDP(eps, 1e-6)


@pytest.mark.parametrize("delta", [-1e-12, 1.0, 1.5, math.nan, math.inf])
def test_bad_delta_is_refused_naming_it(delta):
    with pytest.raises(ValueError, match="delta"):
        dp.ApproxDP(1.0, delta)


@pytest.mark.parametrize("value", ["1", None, [1.0], True, 1 + 0j])
def test_non_numbers_are_type_errors(value):
    with pytest.raises(TypeError, match="epsilon"):
        dp.PureDP(value)


def test_guarantees_are_frozen_values():
    g = dp.ApproxDP(1, 1e-5)
    with pytest.raises(AttributeError):
        g.epsilon = 2
    assert g == dp.ApproxDP(1.0, 1e-5) and hash(g) == hash(dp.ApproxDP(1.0, 1e-5))
    assert str(g) == "(1, 1e-05)-DP" and str(dp.PureDP(0.5)) == "0.5-DP"
