"""Rich renderables as plain text (logs, ``str``) or as HTML with inline styles (Jupyter, reports)."""

from __future__ import annotations


class _Null:
    """A file that discards what is written: the console records instead."""

    def write(self, _text):
        return 0

    def flush(self):
        pass


#: an HTML fragment (for embedding in a page) instead of rich's whole document
FRAGMENT = "<pre style=\"font-family: Menlo, 'DejaVu Sans Mono', consolas, monospace\">{code}</pre>"


def render(renderable, width: int = 140, html: bool = False, fragment: bool = False) -> str:
    """``renderable`` (e.g. a ``rich.table.Table``) as text, or as HTML with inline styles: a whole
    document (Jupyter), or a ``<pre>`` fragment to place in a page when ``fragment`` is set."""
    from rich.console import Console

    console = Console(width=width, record=True, file=_Null(), color_system="truecolor" if html else None)
    console.print(renderable)
    if not html:
        return console.export_text()
    return console.export_html(inline_styles=True, code_format=FRAGMENT if fragment else None)
