"""The tutorial's and README's code runs as written (the shared-ledger section against a real
PostgreSQL, its commands printing what it shows); every estimator is documented; the index's links resolve."""

import pathlib
import re
import shlex

import pytest

import dpledger
from dpledger.accountant.postgres import _safe
from dpledger.cli import main
from dpledger.graph import registry

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
SHARED_LEDGER = "## 10. One budget for a team"
#: the URLs the shared-ledger section's reader replaces, by role
PLACEHOLDERS = {role: f"postgresql://{role}@db.example/budget" for role in ("owner", "alice", "bob", "carol")}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def tutorial_parts() -> tuple[str, str]:
    """The tutorial without its shared-ledger section (no server needed), and that section."""
    text = (DOCS / "tutorial.md").read_text()
    start = text.index(SHARED_LEDGER)
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end
    return text[:start] + text[end:], text[start:end]


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))


def test_tutorial_runs(clean_registry, capsys):
    blocks = python_blocks(tutorial_parts()[0])
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "tutorial.md", "exec"), namespace)
    assert "refused:" in capsys.readouterr().out


def test_the_plugin_run_shown_in_the_tutorial_catches_its_histogram(pytester):
    # the conftest block of section 6, in a project of its own, under `pytest --dpledger-audit`
    text = (DOCS / "tutorial.md").read_text()
    conftest = next(block for block in python_blocks(text) if block.startswith("# conftest.py"))
    shown = re.search(r"```text\n\$ pytest (.*?)\n(.*?)```", text, flags=re.S)
    pytester.makeconftest(conftest)
    result = pytester.runpytest_subprocess(*shown.group(1).split())
    result.assert_outcomes(failed=1)
    for line in shown.group(2).strip().splitlines():  # each line as shown, "..." standing for anything
        result.stdout.fnmatch_lines([line.replace("...", "*").replace("[", "[[]")])


def console_commands(block: str) -> list[tuple[str, str]]:
    """Each ``$ command`` of a console block with the output shown under it."""
    runs = re.split(r"^\$ (.*)$", block, flags=re.M)
    return list(zip(runs[1::2], (output.strip() for output in runs[2::2])))


def comparable(output: str, urls: dict) -> list[str]:
    """Lines of a command's output with each real URL (or its masked form) put back as its placeholder;
    rich wraps a table's title to the table's width, so the text above a table counts without its spaces."""
    lines = [line.rstrip() for line in output.strip().splitlines()]
    table = [line[:1] in "┏┃┡│└" for line in lines]
    if any(table):
        title = "".join("".join(line.split()) for line, boxed in zip(lines, table) if not boxed)
        lines = [title] + [line for line, boxed in zip(lines, table) if boxed]
    for placeholder, url in urls.items():
        lines = [line.replace(url, placeholder).replace(_safe(url), placeholder) for line in lines]
    return lines


def test_the_shared_ledger_section_runs_on_postgresql_as_shown(clean_registry, postgres_url, postgres_role, capsys):
    """Section 10 against the test server: its URLs replaced by the owner's and three roles', its
    python run in order with its commands (through ``dpledger.cli.main``), each printing what it shows."""
    urls = {PLACEHOLDERS["owner"]: postgres_url, **{PLACEHOLDERS[r]: postgres_role(r) for r in ("alice", "bob", "carol")}}
    blocks = re.findall(r"```(python|console)\n(.*?)```", tutorial_parts()[1], flags=re.S)
    namespace: dict = {}
    for kind, block in blocks:
        for placeholder, url in urls.items():
            block = block.replace(placeholder, url)
        if kind == "python":
            exec(compile(block, "tutorial.md, section 10", "exec"), namespace)
            continue
        for command, shown in console_commands(block):
            capsys.readouterr()  # what the python before printed
            code = main(shlex.split(command, comments=True)[1:])
            printed = capsys.readouterr()
            assert code == (2 if shown.startswith("dpledger: error") else 0), (command, printed)
            assert comparable(printed.out + printed.err, urls) == comparable(shown, urls), command
    assert [kind for kind, _ in blocks].count("console") >= 4
    read = dpledger.Accountant.inspect(postgres_url)
    assert [e.analyst for e in read.ledger] == ["alice", "bob", "alice"] and read.quotas == {}


def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the durable-ledger example creates its file here
    namespace: dict = {}
    for block in python_blocks((DOCS.parent / "README.md").read_text()):
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
