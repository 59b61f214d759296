"""The house has no back stairs: the import graph, read from the source, is acyclic and runs only
down the layers written in docs/design.md ("Layers"), and no module is too long to read in one
sitting. Lazy imports inside functions count: they are arrows all the same."""

import ast
import pathlib
import re

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src"
DESIGN = pathlib.Path(__file__).resolve().parents[1] / "docs" / "design.md"
MAX_LINES = 400


def _modules() -> dict[str, tuple[pathlib.Path, bool]]:
    found = {}
    for path in (SOURCE / "dpledger").rglob("*.py"):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


MODULES = _modules()


def _imports(module: str) -> set[str]:
    """The dpledger modules ``module`` imports anywhere in its body, with the subpackages whose
    ``__init__`` such an import runs: all but the root package (the top layer itself) and those
    ``module`` is inside (already running when it is imported)."""
    path, package = MODULES[module]
    here = module if package else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            targets = [f"{name}.{alias.name}" if f"{name}.{alias.name}" in MODULES else name for alias in node.names]
        else:
            continue
        for target in targets:
            if not target.startswith("dpledger"):
                continue
            while target not in MODULES:
                target = target.rsplit(".", 1)[0]
            parts = target.split(".")  # and the packages it runs, but those this module is inside
            found.update(p for p in (".".join(parts[:i]) for i in range(2, len(parts) + 1))
                         if not (module + ".").startswith(p + "."))
    found.discard(module)
    return found


def _layers() -> list[set[str]]:
    """The layer table of docs/design.md: lines "N. `a`, `b`, ..." under "### Layers", lowest first."""
    text = DESIGN.read_text().split("### Layers", 1)[1].split("\n### ", 1)[0]
    return [set(re.findall(r"`([\w.]+)`", line)) for line in text.splitlines() if re.match(r"^\d+\. ", line)]


def _layer_of(module: str, layers) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "dpledger"
    for index, names in enumerate(layers):
        if top in names:
            return index
    raise AssertionError(f"{module}: its top-level name {top!r} is in no layer of docs/design.md")


def test_every_module_has_a_layer_and_imports_only_its_own_or_lower_ones():
    layers = _layers()
    assert len(layers) >= 5, layers
    upward = [f"{m} (layer {_layer_of(m, layers)}) imports {t} (layer {_layer_of(t, layers)})"
              for m in sorted(MODULES) for t in sorted(_imports(m)) if _layer_of(t, layers) > _layer_of(m, layers)]
    assert not upward, "\n".join(upward)


def test_no_two_modules_need_each_other():
    graph = {m: _imports(m) for m in MODULES}
    state, cycles = {}, []

    def visit(module, trail):
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(trail[trail.index(target):] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_the_registry_imports_no_estimator_module():
    source = MODULES["dpledger.graph.registry"][0].read_text()
    assert "algorithms" not in source.replace("``", "")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_longer_than_a_sitting(module):
    lines = MODULES[module][0].read_text().count("\n")
    assert lines <= MAX_LINES, f"{module}: {lines} lines (at most {MAX_LINES})"


def test_documented_paths_still_work():
    from dpledger.accountant import events, rdp, rules
    from dpledger.graph.nodes import ERROR_STATE, Halt

    assert events.EpsilonDeltaDpEvent and rdp.FILTER_ORDERS and rules.compose and Halt
    assert ERROR_STATE == {"divide": "ignore", "over": "ignore", "invalid": "ignore", "under": "ignore"}
