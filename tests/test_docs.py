"""The tutorial's code runs as written."""

import pathlib
import re

import pytest

from dpledger.graph import registry

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def python_blocks(path: pathlib.Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))


def test_tutorial_runs(clean_registry, capsys):
    blocks = python_blocks(DOCS / "tutorial.md")
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "tutorial.md", "exec"), namespace)
    assert "refused:" in capsys.readouterr().out


def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the durable-ledger example creates its file here
    namespace: dict = {}
    for block in python_blocks(DOCS.parent / "README.md"):
        exec(compile(block, "README.md", "exec"), namespace)
    assert (tmp_path / "team-budget.sqlite").exists()
