"""The audit report as a figure: the two output distributions of the test that certified the
largest ε, its event, and that certified ε against the claim; as PNG, or as an HTML page that
adds the report's verdict and table of tests (``dpledger audit NAME --report FILE``).

The distributions are the histograms of the event's statistic on the test half that the report
keeps (``EventTest.histogram``): the very values the certified bound was counted on.
"""

from __future__ import annotations

import pathlib

import numpy as np

from .. import figures
from .histogram import SIDE_NAMES

COLOURS = ("tab:blue", "tab:orange")


def _event_span(test, edges: np.ndarray) -> tuple[float, float]:
    """The x-range of the event {statistic op threshold} within the histogram's range."""
    if test.op == ">=":
        return test.threshold, edges[-1]
    if test.op == "<=":
        return edges[0], test.threshold
    index = int(np.clip(np.searchsorted(edges, test.threshold, "right") - 1, 0, len(edges) - 2))
    return edges[index], edges[index + 1]


def _distributions(axes, pair: int, test) -> None:
    histogram = test.histogram
    edges = np.array(histogram.edges)
    for side, name in enumerate(SIDE_NAMES["D→D'"]):
        undefined = f", {histogram.undefined[side]} undefined" if histogram.undefined[side] else ""
        axes.stairs(np.array(histogram.counts[side]) / test.sizes[side], edges, fill=True, alpha=0.45,
                    color=COLOURS[side], label=f"{name}: {test.counts[side]}/{test.sizes[side]} in E{undefined}")
    axes.axvspan(*_event_span(test, edges), color="grey", alpha=0.2, label="event E")
    axes.axvline(test.threshold, color="black", linestyle="--", linewidth=1)
    axes.set_xlabel(f"{test.statistic} on the test half (tails counted in the end bins)")
    axes.set_ylabel("fraction of runs")
    axes.set_title(f"pair {pair}, {test.direction}: E = {{{test.event}}}", fontsize=10)
    axes.legend(fontsize=8)


def _claim(axes, report) -> None:
    claimed, certified = report.claimed[0], report.epsilon_lower_bound
    bars = axes.bar(["claimed ε", "certified ε ≥"], [claimed, certified],
                    color=["tab:grey", "tab:red" if report.violation else "tab:green"])
    axes.bar_label(bars, labels=[f"{claimed:.3g}", f"{certified:.3g}"])
    axes.set_title(("VIOLATION" if report.violation else "no violation") + f" at confidence {report.confidence:g}",
                   fontsize=10)
    axes.set_ylim(0, 1.15 * max(claimed, certified, 1e-9))


def figure(report):
    """A ``matplotlib.figure.Figure``: the best test's distributions and event, and ε certified vs claimed."""
    if not hasattr(report, "best") or not hasattr(report, "claimed"):  # duck-typed: report.py draws through here
        raise TypeError(f"report must be an AuditReport (from dpledger.audit.audit), got {type(report).__name__}")
    drawing = figures.new_figure(figsize=(11, 4), layout="constrained")
    left, right = drawing.subplots(1, 2, width_ratios=(3, 1))
    best = report.best
    if best is None or best[1].histogram is None:
        left.text(0.5, 0.5, "no event was tested: nothing to draw", ha="center", va="center",
                  transform=left.transAxes)
        left.set_axis_off()
    else:
        _distributions(left, *best)
    _claim(right, report)
    drawing.suptitle(f"privacy audit of {report.target or 'a mechanism'}", fontsize=11)
    return drawing


def save(report, path) -> pathlib.Path:
    """Write the report's figure to ``path``: .png, or .html (figure, verdict and table of tests)."""
    return figures.write(path, f"Privacy audit of {report.target or 'a mechanism'}", figure(report), report.html(with_figure=False))
