"""``dpledger.testing``: hypothesis searches, fresh samples decide, violations shrink, runs are
reproducible across programs, and the pytest plugin audits every registered estimator.

False alarms: every call here runs at confidence 1 − 1e-6 (or the default 1 − 1e-3 where a pass is
expected and stated as such), so a correct target fails with probability at most that, whatever
hypothesis tried (docs/design.md, "Privacy tests")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import strategies as st

import dpledger as dp
from dpledger.audit import strategies
from dpledger.mechanisms import Laplace
from dpledger.relations import ReplaceOne
from dpledger.testing import PrivacyViolation, assert_private

CONFIDENCE = 1 - 1e-6
ROWS = strategies.replace_one_pairs(1, 10, None, 0.0, 1.0)  # sums over [0, 1]^n, n up to 10


def noisy_sum(data, rng, size=None, *, scale=1.0):
    return float(np.clip(data, 0, 1).sum()) + rng.laplace(0.0, scale, size)


def half_noise(data, rng, size=None):
    return noisy_sum(data, rng, size, scale=0.5)  # claims ε = 1: needs scale 1


def noise_from_the_data(data, rng, size=None):
    """Noise scale chosen from the data: enough for large datasets, half for one or two rows."""
    return noisy_sum(data, rng, size, scale=1.0 if len(data) > 2 else 0.5)


@pytest.mark.privacy
@pytest.mark.parametrize("buggy", [half_noise, noise_from_the_data])
def test_a_bug_is_caught_and_shrunk_to_a_tiny_pair(buggy):
    with pytest.raises(PrivacyViolation) as caught:
        assert_private(buggy, ROWS, epsilon=1.0, relation=ReplaceOne(), confidence=CONFIDENCE)
    violation = caught.value
    assert isinstance(violation, AssertionError) and violation.claimed == (1.0, 0.0)
    assert violation.epsilon_lower_bound > 1.0 and len(violation.pair[0]) <= 2
    assert "D  = " in str(violation) and "distinguishing event" in str(violation) and violation.event


def _violation_of(buggy, **options) -> PrivacyViolation:
    with pytest.raises(PrivacyViolation) as caught:
        assert_private(buggy, ROWS, epsilon=1.0, relation=ReplaceOne(), confidence=CONFIDENCE, **options)
    return caught.value


@pytest.mark.privacy
def test_shrinking_keeps_to_its_budget_in_steps_and_ends_on_short_decimals():
    few, again = _violation_of(half_noise, shrink_steps=3), _violation_of(half_noise, shrink_steps=3)
    assert "shrunk in 3 step(s), stopped at its budget of 3 shrink steps" in str(few)
    assert [np.asarray(x).tolist() for x in few.pair] == [np.asarray(x).tolist() for x in again.pair]
    shrunk = _violation_of(half_noise)
    values = np.concatenate([np.ravel(x) for x in shrunk.pair])
    assert np.array_equal(values * 1000, np.round(values * 1000)), values  # at most 3 decimals, no 3.9e-263
    assert "stopped" not in str(shrunk)  # within the default budget
    assert "safety clock" in str(_violation_of(half_noise, shrink_seconds=1e-9))


@pytest.mark.privacy
def test_the_correct_mechanism_passes():
    # numpy's float Laplace keeps ε = 1 on the reals, not on doubles (tests/test_audit_core.py)
    report = assert_private(noisy_sum, ROWS, epsilon=1.0, relation=ReplaceOne(), confidence=CONFIDENCE,
                            ideal_reals=True)
    assert not report.violation and report.tests >= 2


@pytest.mark.privacy
def test_mechanisms_graphs_and_estimators_are_targets():
    answers = st.floats(-5.0, 5.0).map(lambda v: (v, v + 1.0))
    assert_private(Laplace(1.0), answers, confidence=CONFIDENCE)
    graph = dp.Graph(dp.release("sum", Laplace(1.0), lambda x: float(np.clip(x, 0, 1).sum())), relation=ReplaceOne())
    assert_private(graph, ROWS, samples=4_000, search_samples=600, max_examples=8, confidence=CONFIDENCE)
    with pytest.raises(PrivacyViolation):  # a graph claiming more than its mechanism gives
        half = dp.Graph(dp.release("sum", Laplace(2.0), lambda x: float(np.clip(x, 0, 1).sum())), relation=ReplaceOne())
        assert_private(half, ROWS, epsilon=1.0, samples=4_000, search_samples=600, max_examples=8,
                       confidence=CONFIDENCE)
    params, data = dp.graph.registry.info("mean.clipped").example(np.random.default_rng(0))
    assert_private("mean.clipped", strategies.pairs_like(ReplaceOne(), data), samples=4_000, search_samples=600,
                   max_examples=5, confidence=CONFIDENCE)


def test_bad_input_is_refused_before_sampling():
    with pytest.raises(ValueError, match=r"not neighbouring under answers within ℓ1 distance 1.*D = 0.0, D' = 2.0"):
        assert_private(Laplace(1.0), st.just((0.0, 2.0)))
    with pytest.raises(ValueError, match="epsilon is required"):
        assert_private(noisy_sum, ROWS)
    with pytest.raises(TypeError, match="hypothesis strategy"):
        assert_private(noisy_sum, [(np.zeros(1), np.ones(1))], epsilon=1.0)
    with pytest.raises(ValueError, match="not neighbouring under replace-one"):
        assert_private(noisy_sum, st.just((np.zeros(2), np.ones(2))), epsilon=1.0, relation=ReplaceOne())


PROGRAM = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "with-constants":
        import local_constants  # a local module full of floats Hypothesis would mine
        from hypothesis.internal.conjecture import providers
        assert 0.7182818 in providers._get_local_constants().floats
    import numpy as np
    from dpledger.audit import strategies
    from dpledger.relations import ReplaceOne
    from dpledger.testing import assert_private
    seen = []
    def noisy_sum(data, rng, size=None):
        seen.append(np.asarray(data).round(12).tolist())
        return float(np.clip(data, 0, 1).sum()) + rng.laplace(0.0, 1.0, size)
    report = assert_private(noisy_sum, strategies.replace_one_pairs(1, 6, None, 0.0, 1.0), epsilon=1.0,
                            relation=ReplaceOne(), samples=2_000, search_samples=400, max_examples=15,
                            ideal_reals=True)  # about the search, not float rounding
    print(json.dumps({"seen": seen, "bound": report.epsilon_lower_bound}))
""")


def test_the_same_search_runs_the_same_in_two_programs(tmp_path):
    """Hypothesis mines constants from imported local modules; assert_private's search must not."""
    (tmp_path / "local_constants.py").write_text(
        "VALUES = [0.7182818, 0.3141592, 0.5772156, 0.6931471, 0.1414213, 0.9999999, 0.0000001]\n")
    runs = [subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path), mode], capture_output=True, text=True,
                           cwd=tmp_path, check=True) for mode in ("plain", "with-constants")]
    first, second = (json.loads(run.stdout) for run in runs)
    assert first == second and len(first["seen"]) >= 15


def test_loading_the_plugin_loads_no_numerics():
    # pytest loads the plugin in every project where dpledger is installed: its start must not pay
    # for the auditor's imports (they took 2 s of each pytest start)
    code = ("import sys, dpledger.testing.plugin, dpledger.testing as t; "
            "print([m for m in ('dpledger.audit.auditor', 'dp_accounting', 'scipy', 'numpy') if m in sys.modules]); "
            "t.assert_private; print('dpledger.audit.auditor' in sys.modules)")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert loaded.stdout.splitlines() == ["[]", "True"], loaded.stdout + loaded.stderr


def test_the_plugin_audits_every_registered_estimator_when_asked(pytester):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--dpledger-audit=all")
    collected = result.stdout.str()
    for name in dp.estimators():
        assert f"dpledger-audit[{name}]" in collected
    result = pytester.runpytest_subprocess("-q", "--dpledger-audit=mean.clipped", "--dpledger-audit-samples", "2000")
    result.assert_outcomes(passed=2)
    result = pytester.runpytest_subprocess("-q", "--dpledger-audit=no.such")
    assert "no registered estimator no.such" in result.stderr.str() and result.ret != 0
    assert "privacy" in pytester.runpytest_subprocess("--markers").stdout.str()


PLUGIN_HISTOGRAM = """
import numpy as np
import dpledger as dp
from dpledger.mechanisms import DiscreteLaplace


def example(rng):
    return {"epsilon": 1.0}, rng.uniform(0, 4, 20)


@dp.register("myproject.histogram", example=example)
def histogram(epsilon: float) -> dp.Graph:
    \"\"\"Counts of 20 values in 4 bins; NOISE.\"\"\"
    counts = lambda values: np.histogram(values, bins=4, range=(0, 4))[0]
    return dp.Graph(dp.release("counts", DiscreteLaplace(epsilon, sensitivity=SENSITIVITY), counts),
                    relation=dp.ReplaceOne(), domain=dp.Records(n=20, low=0, high=4))
"""


@pytest.mark.parametrize("sensitivity, caught", [(1, True), (2, False)])
def test_the_plugin_audits_the_projects_own_estimators_and_catches_half_the_noise(pytester, sensitivity, caught):
    # Replacing one value moves one count down and another up: ℓ1-sensitivity 2. Stating 1 halves
    # the noise (true ε = 2 against a claim of 1). By default only the project's own estimators run.
    noise = "the noise of sensitivity 1 is half what it needs" if caught else "correct"
    pytester.makeconftest(PLUGIN_HISTOGRAM.replace("NOISE", noise).replace("SENSITIVITY", str(sensitivity)))
    result = pytester.runpytest_subprocess("-q", "--dpledger-audit")
    result.assert_outcomes(failed=1) if caught else result.assert_outcomes(passed=1)
    if caught:
        assert "PrivacyViolation" in result.stdout.str() and "myproject.histogram" in result.stdout.str()


def test_privacy_tests_over_their_time_budget_are_listed_not_failed(pytester):
    pytester.makepyfile(textwrap.dedent("""
        import time
        import pytest

        @pytest.mark.privacy(seconds=0.01)
        def test_slow():
            time.sleep(0.1)

        @pytest.mark.privacy
        def test_quick():
            pass
    """))
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*privacy tests over their time budget*", "*(budget 0.01 s)*test_slow*"])
    assert "test_quick" not in result.stdout.str().split("over their time budget")[1]
    pytester.makepyfile(textwrap.dedent("""
        import pytest

        @pytest.mark.privacy(seconds="a minute")
        def test_bad():
            pass
    """))
    bad = pytester.runpytest()
    assert bad.ret != 0 and "privacy(seconds=...) must be a positive number" in bad.stderr.str() + bad.stdout.str()


def test_a_target_that_raises_on_some_input_fails_with_a_small_pair():
    def fragile(data, rng, size=None):
        if np.max(data) > 0.9:
            raise ValueError("value out of range")
        return noisy_sum(data, rng, size)

    with pytest.raises(AssertionError, match="raised on a neighbouring pair.*value out of range") as caught:
        assert_private(fragile, ROWS, epsilon=1.0, relation=ReplaceOne())
    assert not isinstance(caught.value, PrivacyViolation)


def test_a_violation_under_pytest_shows_its_message_not_library_source(pytester):
    """First-hour review: about 40 lines of dpledger's own source came before the message."""
    pytester.makepyfile(textwrap.dedent("""
        import numpy as np
        from dpledger.audit.strategies import replace_one_pairs
        from dpledger.testing import assert_private

        def half_noise(data, rng, size):
            return np.clip(data, 0, 1).sum() + rng.laplace(0, 0.5, size)

        def test_half_noise():
            assert_private(half_noise, replace_one_pairs(1, 4, low=0.0, high=1.0), epsilon=1.0, seed=0,
                           samples=20_000, max_examples=10)
    """))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-n", "0")
    result.assert_outcomes(failed=1)
    shown = result.stdout.str()
    failure = shown.split("test_half_noise _", 1)[1].split("short test summary", 1)[0]
    assert "fresh samples certify" in failure and "dpledger/testing" not in failure and "def _search" not in failure
    assert len(failure.splitlines()) < 30, failure
