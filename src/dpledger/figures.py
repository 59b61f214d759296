"""Figures written as PNG files or as self-contained HTML pages (the PNG inlined, plus a table).

matplotlib is optional (the ``figures`` extra): it is imported only when a figure is drawn, and a
missing install is reported with the command that fixes it. Figures are ``matplotlib.figure.Figure``
objects made without pyplot, so drawing one never changes a notebook's backend.
"""

from __future__ import annotations

import base64
import html
import io
import pathlib

FORMATS = (".png", ".html")


def new_figure(**options):
    """A pyplot-free ``matplotlib.figure.Figure``, or an ImportError naming the install command."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("figures need matplotlib, which is optional: pip install 'dpledger[figures]' "
                          "(or pip install matplotlib)") from None
    return Figure(**options)


def check_output(path) -> pathlib.Path:
    """``path`` as a Path, refused before any long work when its suffix is not .png or .html, its
    folder is missing, or matplotlib is not installed."""
    path = pathlib.Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"a figure is written as {' or '.join(FORMATS)}, got {str(path)!r}")
    if not path.parent.is_dir():
        raise ValueError(f"no folder {str(path.parent)!r} to write {path.name!r} in")
    new_figure()
    return path


def png(figure) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
    return buffer.getvalue()


def page(title: str, figure, body: str) -> str:
    """A self-contained HTML page: ``title``, the figure as an inline PNG, then ``body`` (HTML)."""
    image = base64.b64encode(png(figure)).decode("ascii")
    title = html.escape(title)
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\n"
            f"<body style=\"font-family: sans-serif\">\n<h1 style=\"font-size: 1.3em\">{title}</h1>\n"
            f"<img alt=\"{title}\" src=\"data:image/png;base64,{image}\">\n{body}\n</body></html>\n")


def write(path, title: str, figure, body: str) -> pathlib.Path:
    """Write ``figure`` to ``path``: a PNG, or for .html a page with ``body`` below the figure."""
    path = check_output(path)
    if path.suffix.lower() == ".png":
        path.write_bytes(png(figure))
    else:
        path.write_text(page(title, figure, body), encoding="utf-8")
    return path
