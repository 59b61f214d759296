"""The pytest plugin (entry point ``pytest11``), loaded wherever dpledger is installed.

- the marker ``@pytest.mark.privacy`` (or ``privacy(seconds=S)``): a privacy test
  (``assert_private``); ``-m privacy`` runs just those, ``-m "not privacy"`` skips them. Each has
  a time budget (``seconds``, 60 by default): the end of the run lists the privacy tests that took
  longer, to be sized down. It is a report, not a failure: shared machines are noisy;
- the option ``--dpledger-audit``: one extra test per audited estimator, auditing it through its
  ``example`` with ``assert_private`` on pairs shaped like the example
  (``audit.strategies.pairs_like``), as our own suite audits ours. By default the project's own
  estimators: every registered estimator not provided by the dpledger distribution (entry-point
  plugins and estimators registered by the project's imports or conftest);
  ``--dpledger-audit=all`` adds the built-ins, ``--dpledger-audit=a,b`` names them.
  ``--dpledger-audit-samples N`` sets the fresh samples per side, ``--dpledger-audit-seed S`` the seed.

Confidence: the audits of one run form one family. With k estimators audited, each runs at
confidence 1 − (1 − ``AUDIT_CONFIDENCE``)/k (Bonferroni), so a run in which every estimator keeps
its claim fails with probability at most 1 − ``AUDIT_CONFIDENCE`` = 0.001. Reports (``audit``,
``dpledger audit``) default to 0.95: a measurement, not a gate.
"""

from __future__ import annotations

import pytest

#: confidence of a whole ``--dpledger-audit`` run: split over its estimators by Bonferroni
AUDIT_CONFIDENCE = 0.999
OWN, ALL = "own", "all"
#: a privacy test's time budget when its marker names none: a bug should be caught within a minute
BUDGET_SECONDS = 60.0
_OVER = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("dpledger")
    group.addoption("--dpledger-audit", nargs="?", const=OWN, default=None, metavar="own|all|NAME,...",
                    help="audit registered estimators through their examples: the project's own (default), "
                         "all (built-ins too), or the named ones")
    group.addoption("--dpledger-audit-samples", type=int, default=3_000,
                    help="fresh samples per side for each estimator audit (default 3000)")
    group.addoption("--dpledger-audit-seed", type=int, default=0, help="seed of the estimator audits (default 0)")


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

    def __init__(self, *, estimator: str, samples: int, seed: int, confidence: float, **kwargs):
        super().__init__(**kwargs)
        self.estimator, self.samples, self.seed, self.confidence = estimator, samples, seed, confidence
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
        assert_private(self.estimator, pairs_like(graph.relation, data, graph.domain), samples=self.samples,
                       search_samples=max(self.samples // 5, 200), max_examples=5, confidence=self.confidence,
                       seed=self.seed)

    def repr_failure(self, excinfo, style=None):
        """A violation (or an estimator raising on a drawn pair) as its message alone: the pair, the
        certified ε and the event; the plugin's and pytest's frames say nothing about the estimator."""
        if isinstance(excinfo.value, AssertionError):
            return f"{type(excinfo.value).__name__}: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return "dpledger-audit", None, f"privacy audit of {self.estimator}"


def audited(choice: str) -> list[str]:
    """The estimators ``--dpledger-audit=choice`` audits: "own" (not from the dpledger
    distribution), "all", or a comma-separated list of registered names."""
    from .. import estimators
    from ..graph import registry

    names = estimators()
    if choice == ALL:
        return names
    if choice == OWN:
        return [name for name in names if registry.info(name).distribution != registry.OWN]
    chosen = [name.strip() for name in choice.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in names]
    if unknown or not chosen:
        raise pytest.UsageError(f"--dpledger-audit={choice}: no registered estimator {', '.join(unknown) or '(empty)'}; "
                                f"use own, all or names among: {', '.join(names)}")
    return chosen


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        _budget(item)  # a bad budget is refused before anything runs
    choice = config.getoption("--dpledger-audit")
    if choice is None:
        return
    names = audited(choice)
    confidence = 1 - (1 - AUDIT_CONFIDENCE) / max(len(names), 1)
    samples, seed = config.getoption("--dpledger-audit-samples"), config.getoption("--dpledger-audit-seed")
    items.extend(EstimatorAudit.from_parent(session, name=f"dpledger-audit[{name}]", nodeid=f"dpledger-audit[{name}]",
                                            estimator=name, samples=samples, seed=seed, confidence=confidence)
                 for name in names)
