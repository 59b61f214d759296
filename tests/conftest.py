"""Test configuration: hypothesis is derandomised everywhere, so every run checks the same cases."""

import os
import tempfile

from hypothesis import HealthCheck, settings

# the estimators listing's cache (dpledger.catalogue) in a folder of the test run's own
os.environ.setdefault("DPLEDGER_CACHE", tempfile.mkdtemp(prefix="dpledger-cache-"))

settings.register_profile(
    "dpledger", derandomize=True, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("dpledger")

pytest_plugins = ["pytester"]  # tests/test_testing.py runs the plugin in a fresh pytest
