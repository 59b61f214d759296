"""The estimator registry: names → factories (public parameters in, ``Graph`` out).

Every estimator comes from an entry point of the group ``dpledger.estimators``, the built-ins
(dpledger's own, in its pyproject.toml) exactly as a plugin's: a point names the factory itself
(it is registered under the point's name, with the hooks its module's ``@register`` gave) or a
module that calls ``@dpledger.register``. Loading is lazy, by name: a lookup imports the entry
points of that name and those naming a module (which may register or replace it: every order of
lookups resolves a name the same way), and listing imports none that name a factory. dpledger's
own entry points load before any other's, so a plugin can clash with a built-in but never break
it. Each entry point loads once, all or nothing: a broken one (an import error, a name clash)
registers nothing and is named with its error by every lookup that misses (``failures``); a name
two entry points provide is refused, naming both. Neither hides any other estimator.
The registry imports no estimator module itself (docs/design.md, "Layers").
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import threading
from typing import TYPE_CHECKING, Callable

import attrs

from ..errors import PrivacyError

if TYPE_CHECKING:
    from .graph import Graph

ENTRY_POINT_GROUP = "dpledger.estimators"

_factories: dict[str, "EstimatorInfo"] = {}
_lock = threading.RLock()
_points: tuple | None = None  # the group's entry points, read once (metadata only: nothing imported)
_done: set[str] = set()  # entry points loaded or failed, by their text ("name = value")
_failed: dict[str, str] = {}  # a failed entry point -> why (its exception), reported by every lookup
_hooks: dict[Callable, dict] = {}  # factory -> the hooks its @register gave, for entry points naming it
_loading = 0  # > 0 while an entry point's module is being imported
OWN = "dpledger"  # the distribution whose entry points load before any other's


@attrs.frozen
class EstimatorInfo:
    """A registered estimator: its name, factory, parameters and one-line summary.

    ``example(rng) -> (params, data)``, when given, makes small public parameters and an input
    for them: the auditor and the CLI use it to exercise the estimator on synthetic data.
    ``utility(epsilon, rng) -> (params, data, error)``, when given, makes the public parameters
    at ``epsilon``, a synthetic input with a known truth, and ``error(output) -> float``, the
    error of a released output against that truth: ``dpledger.utility`` plots it against ε.
    ``stress(rng) -> (params, pairs)``, when given, makes parameters and neighbouring pairs that
    push the estimator's data-dependent code to its limits (a solver's hardest inputs, clamps,
    halting tests): the suite audits the estimator on them too.
    """

    name: str
    factory: Callable[..., Graph]
    example: Callable | None = None
    utility: Callable | None = None
    stress: Callable | None = None

    @property
    def parameters(self) -> dict[str, inspect.Parameter]:
        return dict(inspect.signature(self.factory).parameters)

    @property
    def summary(self) -> str:
        """The docstring's first sentence, whole (its first paragraph up to the first full stop)."""
        paragraph = " ".join((inspect.getdoc(self.factory) or "").split("\n\n")[0].split())
        end = next((i + 1 for i, c in enumerate(paragraph) if c == "." and paragraph[i + 1:i + 2] in ("", " ")),
                   len(paragraph))
        return paragraph[:end]

    @property
    def distribution(self) -> str | None:
        """The installed distribution whose entry point provides this estimator ("dpledger" for the
        built-ins), or None for one registered in this process only."""
        module = getattr(self.factory, "__module__", None)
        for point in _entry_points():
            if point.name == self.name or (":" not in point.value and point.value == module):
                return point.dist.name if point.dist is not None else None
        return None


def register(name: str, *, example: Callable | None = None, utility: Callable | None = None,
             stress: Callable | None = None, replace: bool = False) -> Callable:
    """Decorator: register ``factory(**public_params) -> Graph`` under ``name``; ``example(rng)``
    returns ``(params, data)``: small public parameters and a synthetic input (for audits);
    ``utility(epsilon, rng)`` returns ``(params, data, error)`` (for privacy–utility curves);
    ``stress(rng)`` returns ``(params, pairs)``: neighbouring pairs at the estimator's limits.
    It loads nothing but another module's entry point of the same name (to report a clash), so a
    module that registers its own factories can always be imported."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"estimator name must be a non-empty string, got {name!r}")
    for label, hook in (("example", example), ("utility", utility), ("stress", stress)):
        if hook is not None and not callable(hook):
            raise TypeError(f"@register({name!r}): {label} must be callable or None, got {hook!r}")

    def decorate(factory: Callable[..., Graph]) -> Callable[..., Graph]:
        if not callable(factory):
            raise TypeError(f"@register({name!r}) must decorate a callable factory, got {factory!r}")
        with _lock:
            module = getattr(factory, "__module__", None)
            for point in _entry_points() if not _loading else ():  # not while an entry point imports
                if point.name == name and point.value.split(":")[0] != module:
                    _load_point(point)  # another module's estimator of this name: a clash shows here
            existing = _factories.get(name)
            if existing is not None and existing.factory is not factory and not replace:
                raise ValueError(f"an estimator named {name!r} is already registered by {_source(existing.factory)}; "
                                 f"{_source(factory)} cannot register it too (pass replace=True to override it)")
            _factories[name] = EstimatorInfo(name, factory, example, utility, stress)
            _hooks[factory] = {"example": example, "utility": utility, "stress": stress}
        return factory

    return decorate


def _source(factory: Callable) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"


def _entry_points() -> tuple:
    global _points
    with _lock:
        if _points is None:
            _points = tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
        return _points


def _load_point(point) -> None:
    """Load one entry point, once, all or nothing: if it fails (an import error, a name clash), what
    it registered is taken back and the failure is kept to be reported (``failures``)."""
    global _loading
    key = f"{point.name} = {point.value}"
    if key in _done:
        return
    _done.add(key)
    if _distribution(point) != OWN:  # dpledger's own first: a plugin can clash with a built-in, never break it
        for own in _entry_points():
            if _distribution(own) == OWN:
                _load_point(own)
    before = dict(_factories)
    _loading += 1
    try:
        loaded = point.load()
        if callable(loaded) and not inspect.ismodule(loaded):
            _register_entry_point(point.name, loaded)
    except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never breaks the others
        _factories.clear()
        _factories.update(before)
        source = f" ({_distribution(point)})" if point.dist is not None else ""
        _failed[point.name] = f"{point.value}{source}: {type(exc).__name__}: {exc}"
    finally:
        _loading -= 1


def _distribution(point) -> str | None:
    return None if point.dist is None else point.dist.name


def _ambiguous(name: str) -> str | None:
    """Why ``name`` is refused when two entry points name different factories for it (which one
    loads would depend on the order of lookups), else None."""
    values = sorted({f"{p.value} ({_distribution(p)})" for p in _entry_points() if p.name == name and ":" in p.value})
    if len(values) < 2:
        return None
    return f"two entry points provide it: {' and '.join(values)}; uninstall one, or register one under another name"


def _register_entry_point(name: str, factory: Callable) -> None:
    """An entry point naming a factory: registered under the entry point's name, keeping the hooks
    (``example``, ``utility``, ``stress``) of an ``@register`` of that factory in its module."""
    existing = _factories.get(name)
    if existing is not None and existing.factory is factory:
        return
    register(name, **_hooks.get(factory, {}))(factory)


def _load(name: str) -> None:
    """Load the entry points that may provide ``name``: those of that name, then those naming a
    module (which may register it, or replace it), so every lookup resolves it the same way."""
    with _lock:
        for point in _entry_points():
            if point.name == name:
                _load_point(point)
        _load_module_points()


def failures() -> dict[str, str]:
    """The entry points that failed to load so far, and the names two entry points provide:
    name -> "value (distribution): the error"."""
    with _lock:
        clashes = {p.name: _ambiguous(p.name) for p in _entry_points() if _ambiguous(p.name) is not None}
        return {**_failed, **clashes}


def estimators() -> list[str]:
    """Names of every estimator that loads, sorted (``failures()`` names those that do not). Lists
    entry points by name without importing them, except those that name a module."""
    _load_module_points()
    with _lock:
        named = {point.name for point in _entry_points() if ":" in point.value}
        names = set(_factories) | (named - set(_failed))
        return sorted(name for name in names if _ambiguous(name) is None)


def _load_module_points() -> None:
    with _lock:
        for point in _entry_points():
            if ":" not in point.value:
                _load_point(point)


def info(name: str) -> EstimatorInfo:
    with _lock:
        clash = _ambiguous(name)
        if clash is not None:
            raise KeyError(f"estimator {name!r} is refused: {clash}")
        _load(name)
        if name not in _factories:
            known = ", ".join(estimators()) or "none"
            broken = "".join(f"; the entry point {key!r} failed to load: {why}" for key, why in _failed.items())
            hint = "" if _entry_points() else "; no entry points found: is dpledger installed (pip install -e .)?"
            raise KeyError(f"no estimator named {name!r}; registered: {known}{broken}{hint}")
        return _factories[name]


def estimator(name: str, **params) -> Graph:
    """Build the graph of the estimator ``name`` for the given public parameters."""
    entry = info(name)
    signature = inspect.signature(entry.factory)
    try:
        bound = signature.bind(**params)
    except TypeError as exc:
        raise TypeError(f"estimator {name!r} takes {list(signature.parameters)}: {exc}") from None
    graph = entry.factory(**params)
    from .graph import Graph  # here, not above: listing estimators loads no mechanism

    if not isinstance(graph, Graph):
        raise TypeError(f"factory of {name!r} returned {type(graph).__name__}, not a dpledger Graph")
    _within_request(name, graph, bound)
    return graph


def _within_request(name: str, graph: Graph, bound: inspect.BoundArguments) -> None:
    """A factory that takes ``epsilon`` (and ``delta``) must plan at most that (ε, δ), exactly: a
    budget equal to the request would otherwise refuse the run, and a user who reads the request
    as the guarantee would be misled."""
    bound.apply_defaults()
    epsilon, delta = bound.arguments.get("epsilon"), bound.arguments.get("delta")
    if not isinstance(epsilon, (int, float)) or isinstance(epsilon, bool):
        return
    delta = delta if isinstance(delta, (int, float)) and not isinstance(delta, bool) else 0.0
    planned = graph.plan().guarantee
    if planned.epsilon > epsilon or planned.delta > delta:
        raise PrivacyError(f"estimator {name!r} plans {planned}, above the requested (ε={epsilon:g}, δ={delta:g}): a "
                           "factory's plan must be at most what it is asked for. This is a bug in the estimator")
