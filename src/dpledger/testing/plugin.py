"""The pytest plugin (entry point ``pytest11``), loaded wherever dpledger is installed.

- the marker ``@pytest.mark.privacy`` (or ``privacy(seconds=S)``): a privacy test
  (``assert_private``); ``-m privacy`` runs just those, ``-m "not privacy"`` skips them. Each has
  a time budget (``seconds``, 60 by default): the end of the run lists the privacy tests that took
  longer, to be sized down. It is a report, not a failure: shared machines are noisy;
- the option ``--dpledger-audit``: one extra test per registered estimator (built-in and
  third-party entry-point plugins alike), auditing it through its ``example`` with
  ``assert_private`` on pairs shaped like the example (``audit.strategies.pairs_like``), as our
  own suite audits ours. ``--dpledger-audit-samples N`` sets the fresh samples per side.
"""

from __future__ import annotations

import pytest

#: confidence of each estimator audit: with a few dozen estimators a false alarm stays below 1e-4
AUDIT_CONFIDENCE = 1 - 1e-6
#: a privacy test's time budget when its marker names none: a bug should be caught within a minute
BUDGET_SECONDS = 60.0
_OVER = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("dpledger")
    group.addoption("--dpledger-audit", action="store_true", default=False,
                    help="audit every registered dpledger estimator (entry-point plugins included) through its example")
    group.addoption("--dpledger-audit-samples", type=int, default=3_000,
                    help="fresh samples per side for each estimator audit (default 3000)")


def pytest_configure(config):
    config.addinivalue_line("markers", "privacy(seconds=60): a privacy test of a mechanism or estimator "
                                       "(dpledger.testing), listed at the end of the run if it takes longer")
    config.stash[_OVER] = []


def _budget(item) -> float | None:
    """The time budget of a privacy test (None for other tests); a bad one is a usage error."""
    marker = item.get_closest_marker("privacy")
    if marker is None:
        return None
    seconds = marker.kwargs.get("seconds", BUDGET_SECONDS)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise pytest.UsageError(f"{item.nodeid}: privacy(seconds=...) must be a positive number, got {seconds!r}")
    return float(seconds)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    budget = _budget(item) if call.when == "call" else None
    if budget is not None and call.duration > budget and outcome.get_result().passed:
        item.config.stash[_OVER].append((item.nodeid, call.duration, budget))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    over = config.stash.get(_OVER, [])
    if over:
        terminalreporter.section("privacy tests over their time budget (size them down)")
        for nodeid, seconds, budget in sorted(over, key=lambda row: -row[1] / row[2]):
            terminalreporter.write_line(f"{seconds:7.1f} s  (budget {budget:g} s)  {nodeid}")


class EstimatorAudit(pytest.Item):
    """``assert_private`` on a registered estimator, through its ``example``."""

    def __init__(self, *, estimator: str, samples: int, **kwargs):
        super().__init__(**kwargs)
        self.estimator, self.samples = estimator, samples
        self.add_marker("privacy")

    def runtest(self):
        import numpy as np

        from ..audit.strategies import pairs_like
        from ..graph import registry
        from .assertion import assert_private

        info = registry.info(self.estimator)
        if info.example is None:
            pytest.skip(f"{self.estimator} registers no example(rng): nothing to audit it on")
        params, data = info.example(np.random.default_rng(0))
        graph = registry.estimator(self.estimator, **params)
        assert_private(self.estimator, pairs_like(graph.relation, data), samples=self.samples,
                       search_samples=max(self.samples // 5, 200), max_examples=5, confidence=AUDIT_CONFIDENCE)

    def reportinfo(self):
        return "dpledger-audit", None, f"privacy audit of {self.estimator}"


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        _budget(item)  # a bad budget is refused before anything runs
    if not config.getoption("--dpledger-audit"):
        return
    from .. import estimators

    samples = config.getoption("--dpledger-audit-samples")
    items.extend(EstimatorAudit.from_parent(session, name=f"dpledger-audit[{name}]", estimator=name, samples=samples)
                 for name in estimators())
