"""The HTML report shows the audited pairs (D, D′), escaped and short, and the figure."""

import numpy as np
import pytest

from dpledger.audit import audit
from dpledger.audit.report_html import PREVIEW_CHARS, preview


def noisy(data, rng, size):
    return float(np.sum(data)) + rng.laplace(size=size)


def test_html_shows_pairs_figure_and_escapes():
    report = audit(noisy, pairs=[(np.zeros(500), np.r_[np.zeros(499), 1.0])], epsilon=1.0,
                   samples=20_000, seed=1)
    page = report._repr_html_()
    assert "pairs (D, D′) audited" in page and "pair 0:" in page
    assert report.inputs[0][0] in page  # what differs, as describe_pair says it
    assert all(len(text) <= PREVIEW_CHARS for text in report.inputs[0][1:])
    pytest.importorskip("matplotlib")
    assert "data:image/png;base64," in page
    assert "data:image/png" not in report.html(with_figure=False)


def test_preview_escaped_and_truncated():
    from dpledger.audit.report_html import _pairs

    class Fake:
        inputs = (("a <b>", preview("<script>" * 100), preview(np.arange(10_000.0))),)

    text = _pairs(Fake())
    assert "<script>" not in text and "&lt;script&gt;" in text and "a &lt;b&gt;" in text
    assert "…" in Fake.inputs[0][1] and "shape (10000,)" in Fake.inputs[0][2]
