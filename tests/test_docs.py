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


def test_readme_example_runs():
    (block,) = python_blocks(DOCS.parent / "README.md")
    exec(compile(block, "README.md", "exec"), {})
