"""Malformed input at every public entry point ends in a typed error, never a crash or a charge."""

import warnings

import pytest
from hypothesis import given, settings

from fuzzing import ENTRY_POINTS, bad_arrays, exercise


@pytest.mark.parametrize("entry_point", sorted(ENTRY_POINTS))
@settings(max_examples=40)
@given(value=bad_arrays)
def test_malformed_input_ends_in_a_typed_error(entry_point, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # overflow/invalid inside numpy is a failure too
        exercise(entry_point, value)
