"""The estimator registry: names → factories (public parameters in, ``Graph`` out).

Built-in estimators register when ``dpledger.algorithms`` is imported; third-party packages
register either by calling ``@dpledger.register`` in a module named by an entry point of the
group ``dpledger.estimators``, or by pointing that entry point at the factory itself (it is then
registered under the entry point's name too, with the hooks its ``@register`` gave). Loading is
lazy and all or nothing: the first lookup or registration loads everything, and a name clash is
an error naming both sources that leaves the registry as it was.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import threading
from typing import Callable

import attrs

from ..errors import PrivacyError
from .graph import Graph

ENTRY_POINT_GROUP = "dpledger.estimators"

_factories: dict[str, "EstimatorInfo"] = {}
_lock = threading.RLock()
_loaded = False
_loading = False  # inside _load: registrations then come from the built-ins or the plugins


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


def register(name: str, *, example: Callable | None = None, utility: Callable | None = None,
             stress: Callable | None = None, replace: bool = False) -> Callable:
    """Decorator: register ``factory(**public_params) -> Graph`` under ``name``; ``example(rng)``
    returns ``(params, data)``: small public parameters and a synthetic input (for audits);
    ``utility(epsilon, rng)`` returns ``(params, data, error)`` (for privacy–utility curves);
    ``stress(rng)`` returns ``(params, pairs)``: neighbouring pairs at the estimator's limits."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"estimator name must be a non-empty string, got {name!r}")
    for label, hook in (("example", example), ("utility", utility), ("stress", stress)):
        if hook is not None and not callable(hook):
            raise TypeError(f"@register({name!r}): {label} must be callable or None, got {hook!r}")

    def decorate(factory: Callable[..., Graph]) -> Callable[..., Graph]:
        if not callable(factory):
            raise TypeError(f"@register({name!r}) must decorate a callable factory, got {factory!r}")
        if not _loading:
            _load()  # so that a clash with a built-in or a plugin shows here, not at some later lookup
        with _lock:
            existing = _factories.get(name)
            if existing is not None and existing.factory is not factory and not replace:
                raise ValueError(f"an estimator named {name!r} is already registered by {_source(existing.factory)}; "
                                 f"{_source(factory)} cannot register it too (pass replace=True to override it)")
            _factories[name] = EstimatorInfo(name, factory, example, utility, stress)
        return factory

    return decorate


def _source(factory: Callable) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"


def _load() -> None:
    """Register the built-ins and every entry point, all or nothing: if one fails (a name clash, an
    import error), the registry is left as it was and the error is raised again at the next lookup."""
    global _loaded, _loading
    with _lock:
        if _loaded or _loading:
            return
        before, _loading = dict(_factories), True
        try:
            importlib.import_module("dpledger.algorithms")
            for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
                loaded = point.load()
                if callable(loaded) and not inspect.ismodule(loaded):
                    _register_entry_point(point.name, loaded)
            _loaded = True
        except BaseException:
            _factories.clear()
            _factories.update(before)
            raise
        finally:
            _loading = False


def _register_entry_point(name: str, factory: Callable) -> None:
    """An entry point naming a factory: registered under the entry point's name, keeping the hooks
    (``example``, ``utility``, ``stress``) of an ``@register`` of that factory in its module."""
    hooks = next((info for info in _factories.values() if info.factory is factory), None)
    if hooks is not None and hooks.name == name:
        return
    keep = {} if hooks is None else {"example": hooks.example, "utility": hooks.utility, "stress": hooks.stress}
    register(name, **keep)(factory)


def estimators() -> list[str]:
    """Names of every registered estimator, sorted."""
    _load()
    with _lock:
        return sorted(_factories)


def info(name: str) -> EstimatorInfo:
    _load()
    with _lock:
        if name not in _factories:
            known = ", ".join(sorted(_factories)) or "none"
            raise KeyError(f"no estimator named {name!r}; registered: {known}")
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
                           "factory's plan must be at most what it is asked for. This is a bug in the estimator; "
                           "nothing was charged")
