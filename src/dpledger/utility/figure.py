"""The privacy–utility curve: median error against ε (log scale) with its interquartile band and
every trial's error, and the halt rate when some run halted; as PNG, or as an HTML page that adds
the table of the report."""

from __future__ import annotations

import pathlib

import numpy as np

from .. import figures
from .measure import UtilityReport


def figure(report: UtilityReport):
    """A ``matplotlib.figure.Figure`` of the report's error against ε."""
    if not isinstance(report, UtilityReport):
        raise TypeError(f"report must be a UtilityReport (from measure_utility), got {type(report).__name__}")
    drawing = figures.new_figure(figsize=(7, 4.5), layout="constrained")
    axes = drawing.subplots()
    epsilons = np.array([row.epsilon for row in report.rows])
    q1, median, q3 = np.array([row.quartiles for row in report.rows]).T
    axes.fill_between(epsilons, q1, q3, alpha=0.25, label="interquartile range")
    axes.plot(epsilons, median, marker="o", label=f"median {report.metric}")
    if report.chance is not None:
        axes.axhline(report.chance, color="grey", linestyle=":", label=f"chance level ({report.chance:.3g})")
    if report.reference is not None:
        axes.axhline(report.reference, color="tab:green", linestyle="--",
                     label=f"non-private reference ({report.reference:.3g})")
    trials = [(row.epsilon, error) for row in report.rows for error in row.errors]
    if trials:
        axes.scatter(*zip(*trials), s=10, color="black", alpha=0.4, label="trials")
    axes.set_xscale("log")
    axes.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
    axes.minorticks_off()
    axes.set_xlabel("ε")
    axes.set_ylabel(report.metric)
    if any(row.halts for row in report.rows):
        rates = axes.twinx()
        rates.plot(epsilons, [row.halt_rate for row in report.rows], "s--", color="tab:red", label="halt rate")
        rates.set_ylim(0, 1.05)
        rates.set_ylabel("halt rate", color="tab:red")
        rates.legend(loc="upper center", fontsize=8)
    axes.legend(fontsize=8)
    axes.set_title(f"{report.estimator}: {report.metric} against ε, {report.trials} trial(s) per ε\n{report.setting}",
                   fontsize=10)
    return drawing


def save(report: UtilityReport, path) -> pathlib.Path:
    """Write the report's figure to ``path``: .png, or .html (figure and table)."""
    return figures.write(path, f"Privacy–utility of {report.estimator}", figure(report), report.html())
