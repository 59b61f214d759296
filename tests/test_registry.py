"""The estimator registry: decorator, lookup, parameter errors, third-party entry points."""

import sys
import textwrap

import numpy as np
import pytest

import dpledger as dp
from dpledger.graph import registry
from dpledger.mechanisms import Laplace


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_factories", {})
    monkeypatch.setattr(registry, "_loaded", False)


def test_register_build_and_list(clean_registry):
    @dp.register("test.count")
    def count(epsilon: float = 1.0):
        """A noisy count."""
        return dp.Graph(dp.release("count", Laplace(epsilon), lambda x: float(len(x))), relation=dp.AddRemoveOne())

    assert "test.count" in dp.estimators()
    graph = dp.estimator("test.count", epsilon=0.5)
    assert dp.Accountant(dp.PureDP(1)).plan(graph).guarantee == dp.PureDP(0.5)
    assert registry.info("test.count").summary == "A noisy count."
    with pytest.raises(TypeError, match="takes \\['epsilon'\\]"):
        dp.estimator("test.count", eps=0.5)
    with pytest.raises(KeyError, match="test.count"):
        dp.estimator("test.missing")
    with pytest.raises(ValueError, match="already registered"):
        dp.register("test.count")(lambda: None)


def test_factory_must_return_a_graph(clean_registry):
    dp.register("test.bad")(lambda: 42)
    with pytest.raises(TypeError, match="not a dpledger Graph"):
        dp.estimator("test.bad")


def test_third_party_entry_point_is_discovered(clean_registry, tmp_path, monkeypatch):
    (tmp_path / "thirdparty_est.py").write_text(textwrap.dedent('''
        import dpledger as dp
        from dpledger.mechanisms import Laplace

        def noisy_total(epsilon=1.0):
            """Sum of values clipped to [0, 1]."""
            return dp.Graph(dp.release("total", Laplace(epsilon), lambda x: float(sum(min(max(v, 0), 1) for v in x))),
                            relation=dp.ReplaceOne())
    '''))
    dist = tmp_path / "thirdparty_est-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-est\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[dpledger.estimators]\nthirdparty.total = thirdparty_est:noisy_total\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "thirdparty.total" in dp.estimators()
    result = dp.Accountant(dp.PureDP(1)).run(dp.estimator("thirdparty.total", epsilon=1.0), np.ones(5),
                                             rng=np.random.default_rng(0))
    assert np.isfinite(result.output)
    sys.modules.pop("thirdparty_est", None)
