"""The pytest plugin (entry point ``pytest11``), loaded wherever dpledger is installed.

- the marker ``@pytest.mark.privacy``: a privacy test (``assert_private``); ``-m privacy`` runs
  just those, ``-m "not privacy"`` skips them;
- the option ``--dpledger-audit``: one extra test per registered estimator (built-in and
  third-party entry-point plugins alike), auditing it through its ``example`` with
  ``assert_private`` on pairs shaped like the example (``audit.strategies.pairs_like``), as our
  own suite audits ours. ``--dpledger-audit-samples N`` sets the fresh samples per side.
"""

from __future__ import annotations

import pytest

#: confidence of each estimator audit: with a few dozen estimators a false alarm stays below 1e-4
AUDIT_CONFIDENCE = 1 - 1e-6


def pytest_addoption(parser):
    group = parser.getgroup("dpledger")
    group.addoption("--dpledger-audit", action="store_true", default=False,
                    help="audit every registered dpledger estimator (entry-point plugins included) through its example")
    group.addoption("--dpledger-audit-samples", type=int, default=3_000,
                    help="fresh samples per side for each estimator audit (default 3000)")


def pytest_configure(config):
    config.addinivalue_line("markers", "privacy: a privacy test of a mechanism or estimator (dpledger.testing)")


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
    if not config.getoption("--dpledger-audit"):
        return
    from .. import estimators

    samples = config.getoption("--dpledger-audit-samples")
    items.extend(EstimatorAudit.from_parent(session, name=f"dpledger-audit[{name}]", estimator=name, samples=samples)
                 for name in estimators())
