"""Rich renderables as plain text (logs, ``str``); rich tables as HTML ``<table>`` fragments with
inline styles (Jupyter, report pages: ``html_table``); the command line's console (``terminal``)."""

from __future__ import annotations

import os
import sys

#: the exit status of a command whose reader closed the pipe (``dpledger estimators | head``): the
#: shell's 128 + SIGPIPE, not 1, which the command line keeps for privacy refusals
BROKEN_PIPE = 141


def quiet_exit_on_broken_pipe() -> None:
    """Send what is still to be written to /dev/null and exit with ``BROKEN_PIPE``."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise SystemExit(BROKEN_PIPE)


def terminal():
    """The command line's rich console: a terminal's width; in a file or pipe as wide as
    ``COLUMNS`` says, else 150 columns, so tables stay readable."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            quiet_exit_on_broken_pipe()

    return _Console() if sys.stdout.isatty() or os.environ.get("COLUMNS") else _Console(width=150)


class _Null:
    """A file that discards what is written: the console records instead."""

    def write(self, _text):
        return 0

    def flush(self):
        pass


def render(renderable, width: int = 140) -> str:
    """``renderable`` (e.g. a ``rich.table.Table``) as plain text."""
    from rich.console import Console

    console = Console(width=width, record=True, file=_Null(), color_system=None)
    console.print(renderable)
    return console.export_text()


#: inline styles of ``html_table`` (nothing global: a fragment never restyles the page it is placed in)
_TABLE = "border-collapse: collapse; margin: 0.5em 0"
_CAPTION = "text-align: left; font-weight: bold; padding-bottom: 0.3em"
_CELL = "text-align: {align}; vertical-align: top; padding: 0.15em 0.6em; white-space: {wrap}"


def _plain(renderable) -> str:
    """What the terminal shows of a cell or title: markup applied (as rich does), no styles."""
    from rich.text import Text

    if isinstance(renderable, str):
        return Text.from_markup(renderable).plain
    if isinstance(renderable, Text):
        return renderable.plain
    return render(renderable).rstrip("\n")


def _row_style(style) -> str:
    """A rich row style as inline CSS; dim as opacity, which reads on light and dark pages alike."""
    from rich.style import Style

    if not style:
        return ""
    style = Style.parse(style) if isinstance(style, str) else style
    css = (style + Style(dim=False)).get_html_style()
    return "; ".join(filter(None, (css, "opacity: 0.6" if style.dim else "")))


def html_table(table, css_class: str = "dpledger-table") -> str:
    """A rich ``Table`` as an HTML ``<table>`` fragment (Jupyter, report pages): the same title,
    header and cells as its text rendering, every text escaped, every style inline."""
    from html import escape

    def text(renderable) -> str:
        return "<br>".join(escape(line) for line in _plain(renderable).split("\n"))

    def cell(tag, column, content, style="") -> str:
        css = _CELL.format(align="right" if column.justify == "right" else "left",
                           wrap="pre" if column.no_wrap else "pre-wrap") + (f"; {style}" if style else "")
        return f'<{tag} style="{css}">{text(content)}</{tag}>'

    lines = [f'<table class="{escape(css_class)}" style="{_TABLE}">']
    titles = [part for part in (table.title, table.caption) if part]
    if titles:
        lines.append(f'<caption style="{_CAPTION}">' + "<br>".join(map(text, titles)) + "</caption>")
    if table.show_header:
        lines.append("<thead><tr>" + "".join(cell("th", c, c.header, "font-weight: bold") for c in table.columns)
                     + "</tr></thead>")
    lines.append("<tbody>")
    columns = [list(column.cells) for column in table.columns]
    for index, row in enumerate(table.rows):
        style = _row_style(row.style)
        lines.append((f'<tr style="{style}">' if style else "<tr>")
                     + "".join(cell("td", c, cells[index]) for c, cells in zip(table.columns, columns)) + "</tr>")
    lines.append("</tbody>")
    lines.append("</table>")
    return "\n".join(lines) + "\n"
