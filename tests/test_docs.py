"""The tutorial's and README's code runs as written; every estimator is documented; the index's links resolve."""

import pathlib
import re

import pytest

import dpledger
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


ESTIMATOR_PAGES = DOCS / "estimators"


def estimator_sections() -> dict[str, list[tuple[str, str]]]:
    """For every ``## heading`` of docs/estimators/*.md: [(file name, section text)]."""
    sections: dict[str, list[tuple[str, str]]] = {}
    for page in sorted(ESTIMATOR_PAGES.glob("*.md")):
        parts = re.split(r"^## +(.+?) *$", page.read_text(), flags=re.M)
        for heading, body in zip(parts[1::2], parts[2::2]):
            sections.setdefault(heading, []).append((page.name, body))
    return sections


def github_anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("name", dpledger.estimators())
def test_every_estimator_has_a_section_naming_its_parameters(name):
    found = estimator_sections().get(name, [])
    assert len(found) == 1, f"need exactly one '## {name}' section in docs/estimators/*.md, found {found and [f for f, _ in found]}"
    page, body = found[0]
    missing = [p for p in registry.info(name).parameters if f"`{p}`" not in body]
    assert not missing, f"docs/estimators/{page}, section {name}: parameters not mentioned in backticks: {missing}"


def test_estimator_index_links_resolve():
    index = DOCS / "estimators.md"
    links = re.findall(r"\]\(([^)\s]+)\)", index.read_text())
    relative = [link for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]
    assert relative, "docs/estimators.md links to no page"
    for link in relative:
        target, _, anchor = link.partition("#")
        path = (index.parent / target).resolve()
        assert path.exists(), f"docs/estimators.md links to {link}, but {path} does not exist"
        if anchor and path.suffix == ".md":
            headings = re.findall(r"^#+ +(.+?) *$", path.read_text(), flags=re.M)
            assert anchor in {github_anchor(h) for h in headings}, f"docs/estimators.md: no heading for #{anchor} in {target}"


def test_the_tutorial_says_where_uses_first_appears_that_names_must_match():
    """First-hour review: the tutorial never said that a post-processing function's parameter names
    must equal ``uses``."""
    text = (DOCS / "tutorial.md").read_text()
    first = text.index("uses=")
    assert "parameter names must be\nthe names in `uses`" in text[first:first + 2500]
