"""``dpledger demo`` (#17): it states the budget before spending anything, announces every charge
as it is made (its cost and what remains, the refused one too), shows its progress during the
recovery on a terminal only, and its ledger stays readable on an 80-column terminal.

The demo runs at a small n here (a fraction of a second); one test runs the installed console
script at the demo's full size, which takes tens of seconds."""

import io
import os
import re
import shutil
import subprocess
import sys

import pytest
from rich.cells import cell_len
from rich.console import Console

from dpledger import demo

DPLEDGER = shutil.which("dpledger", path=os.path.dirname(sys.executable)) or shutil.which("dpledger")
N = 200


def printed(**options) -> tuple:
    """The accountant of a small demo and what it printed, line by line, on an 80-column console."""
    console = Console(file=io.StringIO(), width=80, **options)
    accountant = demo.main(console, seed=0, n=N)
    return accountant, console.file.getvalue()


@pytest.fixture(scope="module")
def run():
    accountant, text = printed()
    return accountant, text.splitlines()


def ledger_start(lines) -> int:
    """Where the final ledger table starts (its title)."""
    return max(i for i, line in enumerate(lines) if line.strip() == "ledger")


def charge_lines(lines) -> list:
    return [i for i, line in enumerate(lines) if line.startswith(("charged", "refused"))]


def test_the_budget_is_stated_before_anything_is_charged(run):
    accountant, lines = run
    budget = [i for i, line in enumerate(lines[:ledger_start(lines)]) if line.startswith("budget")]
    assert budget and charge_lines(lines), lines
    assert budget[0] < charge_lines(lines)[0]
    assert str(accountant.budget) in lines[budget[0]] and "'basic' filter" in lines[budget[0]]


def test_every_charge_is_announced_as_it_is_made_with_its_cost_and_what_remains(run):
    accountant, lines = run
    end = ledger_start(lines)
    announced = [i for i in charge_lines(lines) if i < end]
    names = [entry.name for entry in accountant.ledger]
    assert names == ["sbm.exact", "edge_count"]
    for entry in accountant.ledger:
        line = next((i for i in announced if lines[i].startswith("charged") and entry.name in lines[i]), None)
        assert line is not None, f"{entry.name} is charged but never announced:\n" + "\n".join(lines)
        said = " ".join(lines[line:line + 2])
        assert str(entry.guarantee) in said and entry.charged in said and "remaining: Σε" in said
    # in the order they were made: the recovery (before its result), the edge count, the refusal
    recovery, count, refusal = announced
    assert recovery < next(i for i, line in enumerate(lines) if line.startswith("exact recovery")) < count
    assert "second_recovery" in lines[refusal] and lines[refusal].startswith("refused")
    assert "remaining: Σε = 0.5 of 5" in " ".join(lines[refusal:end])


def test_no_line_is_wider_than_80_columns(run):
    _, lines = run
    assert max(cell_len(line) for line in lines) <= 80


def test_the_ledger_at_80_columns_keeps_names_mechanisms_and_guarantees_whole(run):
    accountant, lines = run
    table = lines[ledger_start(lines):]
    words = {word for line in table for word in re.split(r"[\s│┃]+", line)}
    cells = " ".join(table)
    assert "…" not in cells
    for entry in accountant.ledger:
        assert entry.name in words and entry.mechanism in words and str(entry.guarantee) in cells
        for step in entry.steps:
            assert step.path in words or set(step.path.split("/")) <= words, step.path
            assert step.mechanism in words and str(step.guarantee) in cells
    # the same table rendered on its own at 80 columns
    console = Console(file=io.StringIO(), width=80)
    console.print(accountant.ledger.table())
    alone = console.file.getvalue()
    assert max(cell_len(line) for line in alone.splitlines()) <= 80 and "…" not in alone
    assert all(entry.name in alone and entry.charged in alone for entry in accountant.ledger)


def test_the_recovery_shows_progress_on_a_terminal_and_plain_lines_when_piped(run):
    _, lines = run
    assert not any("\x1b" in line for line in lines)  # no control codes in a pipe
    assert any(line.startswith("recovering the communities") for line in lines)
    _, text = printed(force_terminal=True, force_interactive=True, color_system=None)
    assert "\x1b[?25l" in text  # the spinner's live display (it hides the cursor), gone once the recovery ends
    assert re.search(r"recovering the communities with sbm\.exact.*0:00:0\d", text)


def test_the_console_script_runs_the_demo_and_announces_the_edge_count_charge():
    """The demo at its full size (tens of seconds), through the installed ``dpledger`` script."""
    assert DPLEDGER, "the dpledger console script is not installed (pip install -e .)"
    done = subprocess.run([DPLEDGER, "demo", "--seed", "0"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONWARNINGS": "always"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    count = [line for line in lines if line.startswith("charged") and "edge_count" in line]
    assert count and "0.5-DP" in count[0], done.stdout
    assert any(line.startswith("budget") for line in lines[:lines.index(count[0])])
    assert any(line.startswith("refused second_recovery") for line in lines)
