"""The audit report as an HTML fragment (``AuditReport.html``, Jupyter's view): verdict, the audited
pairs (D, D′) in words with short previews, the figure as an inline PNG, and the table of tests.

Everything taken from the report is escaped: pair previews hold user data.
"""

from __future__ import annotations

import base64
from html import escape

from .._render import html_table

#: characters of a value's preview: enough to read a small input, short for a big one
PREVIEW_CHARS = 120


def preview(value, limit: int = PREVIEW_CHARS) -> str:
    """``value`` in at most ``limit`` characters: a sparse matrix by shape and entries, an array by
    shape and its (summarised) values, anything else by its repr; cut with "…"."""
    import numpy as np
    from scipy import sparse

    if sparse.issparse(value):
        text = f"{value.shape[0]}×{value.shape[1]} sparse matrix, {value.nnz} stored entries"
    else:
        array = np.asarray(value) if isinstance(value, (list, tuple, np.ndarray)) else None
        if array is not None and array.dtype.kind in "biuf":
            shape = "" if array.ndim <= 1 and array.size <= 8 else f"shape {array.shape}: "
            text = shape + np.array2string(array, precision=4, threshold=8, edgeitems=3, separator=", ",
                                           max_line_width=10_000)
        else:
            text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _pairs(report) -> str:
    if not report.inputs:
        return "<p>pairs (D, D′): not recorded (pass them through <code>audit</code> to see them here)</p>\n"
    rows = "".join(f"<li>pair {index}: {escape(described)}<br>D = <code>{escape(first)}</code><br>"
                   f"D′ = <code>{escape(second)}</code></li>\n"
                   for index, (described, first, second) in enumerate(report.inputs))
    return f"<p>pairs (D, D′) audited:</p>\n<ul>\n{rows}</ul>\n"


def _figure(report) -> str:
    from .. import figures
    from .figure import figure

    try:
        drawing = figure(report)
    except ImportError:
        return ("<p>(no figure: matplotlib is not installed; pip install 'dpledger[figures]' "
                "to see the distributions here)</p>\n")
    image = base64.b64encode(figures.png(drawing)).decode("ascii")
    return f"<img alt=\"audit figure\" style=\"max-width: 100%\" src=\"data:image/png;base64,{image}\">\n"


def html(report, with_figure: bool = True) -> str:
    """The report as an HTML fragment; ``with_figure`` False leaves the figure out (a page that
    shows it already)."""
    summary = "".join(f"<p>{escape(line.strip())}</p>\n"
                      for line in str(report).split("\n")[:2] + report.currency_lines())
    return summary + _pairs(report) + (_figure(report) if with_figure else "") + html_table(report.table())
