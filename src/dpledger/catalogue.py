"""The estimators listing (``dpledger estimators``): each estimator's parameters, first sentence,
guarantee, relation and the input files ``run`` takes, every broken plugin named with its error.

Building it imports every estimator and plans its example, which costs seconds (dp-accounting's
import alone takes one), so it is kept on disk, keyed by the installed code: the entry points,
every installed distribution's version, and the size and modification time of every Python file
of each entry point's top-level package. Any change to those makes it anew; estimators registered
only in this process bypass it. Code outside those packages (a helper package a plugin imports,
edited in place) is not seen: ``dpledger estimators --fresh`` makes it anew. The listing is for
reading only: every run and plan is built from the live code. The cache holds nothing but the listing (no data, no ledger);
``DPLEDGER_CACHE`` names its folder (default ``~/.cache/dpledger``); an unwritable folder only
costs the time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib

#: Bump when the rows' shape changes, so that older caches are never read.
VERSION = 1
#: How many listings the folder keeps (the newest: one per environment or version in use).
KEEP = 8


def listing(fresh: bool = False) -> tuple[list[dict], dict[str, str]]:
    """(rows, failures): a row per estimator that loads, and name -> error for those that do not;
    ``fresh`` makes the kept listing anew."""
    from .graph import registry

    names = registry.estimators()
    cached = _path(registry) if set(registry._factories) <= {p.name for p in registry._entry_points()} else None  # noqa: SLF001
    if cached is not None and not fresh:
        try:
            data = json.loads(cached.read_text())
            return data["rows"], data["failures"]
        except (OSError, ValueError, KeyError):
            pass
    rows, failures = [], {}
    for name in names:
        try:
            rows.append(row(registry.info(name)))
        except Exception as error:  # noqa: BLE001 - a broken estimator is reported, never breaks the listing
            failures[name] = f"{type(error).__name__}: {error}"
    failures.update(registry.failures())  # an entry point that did not load: its own error, not the lookup's
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            temporary = cached.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"rows": rows, "failures": failures}))
            temporary.replace(cached)
            _prune(cached.parent)
        except OSError:
            pass
    return rows, failures


def _prune(folder: pathlib.Path, keep: int = KEEP) -> None:
    """Remove all but the ``keep`` most recently written listings (one per installed code; several
    environments may share the folder)."""
    listings = sorted(folder.glob("estimators-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in listings[keep:]:
        old.unlink(missing_ok=True)


def row(info) -> dict:
    """Name, parameters with their defaults (None: required), the guarantee's type and relation and
    the input files ``run`` takes (from the registered example, when there is one), and the
    docstring's first sentence."""
    parameters = {name: None if p.default is p.empty else repr(p.default) for name, p in info.parameters.items()}
    guarantee = inputs = ""
    if info.example is not None:
        import numpy as np

        from . import inputs as _inputs
        from .graph import registry
        from .relations import EdgeAdjacency

        params, _ = info.example(np.random.default_rng(0))
        plan = registry.estimator(info.name, **params).plan()
        kind = "pure ε-DP" if plan.guarantee.delta == 0 else "(ε, δ)-DP"
        guarantee = f"{kind} under {plan.relation}"
        inputs = _inputs.GRAPH_FORMATS if isinstance(plan.relation, EdgeAdjacency) else _inputs.DATASET_FORMATS
    return {"name": info.name, "parameters": parameters, "guarantee": guarantee, "inputs": inputs,
            "summary": info.summary}


def _path(registry) -> pathlib.Path | None:
    """The cache file for the code installed now, or None when its packages cannot be found."""
    key = hashlib.sha256(f"catalogue {VERSION}".encode())
    for dist in sorted((d.metadata["Name"] or "", d.version or "") for d in importlib.metadata.distributions()):
        key.update(repr(dist).encode())
    for point in sorted(registry._entry_points(), key=lambda p: (p.name, p.value)):  # noqa: SLF001
        folder = _package_folder(point.value.split(":")[0].split(".")[0])
        if folder is None:
            return None
        key.update(repr((point.name, point.value, _stamp(folder))).encode())
    root = pathlib.Path(os.environ.get("DPLEDGER_CACHE") or pathlib.Path.home() / ".cache" / "dpledger")
    return root / f"estimators-{key.hexdigest()[:32]}.json"


def _package_folder(top: str) -> pathlib.Path | None:
    """Where the top-level package ``top`` lives, found without importing it."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    origin = pathlib.Path(spec.origin)
    return origin.parent if spec.submodule_search_locations else origin


def _stamp(folder: pathlib.Path) -> tuple:
    files = [folder] if folder.is_file() else sorted(folder.rglob("*.py"))
    stats = [(str(f.relative_to(folder.parent)), s.st_size, s.st_mtime_ns) for f in files for s in (f.stat(),)]
    return len(stats), hashlib.sha256(repr(stats).encode()).hexdigest()
