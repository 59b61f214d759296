"""Mechanism graphs: nodes, combinators, plans and the estimator registry (each name imported on
first use: the registry alone, which lists estimators, loads no mechanism)."""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, {
    "combinators": ("absorb", "conditional", "group", "halt_if", "per_record", "postprocess", "private", "privatise",
                    "release", "repeat", "sequence", "split", "subsample", "transform"),
    "graph": ("Graph", "Plan"),
    "registry": ("estimator", "estimators", "info", "register"),
})
