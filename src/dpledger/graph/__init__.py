"""Mechanism graphs: nodes, combinators, plans and the estimator registry."""

from .combinators import (absorb, conditional, group, halt_if, per_record, postprocess, private, privatise, release,
                          repeat, sequence, split, subsample, transform)
from .graph import Graph, Plan
from .registry import estimator, estimators, info, register

__all__ = [
    "Graph", "Plan", "absorb", "conditional", "estimator", "estimators", "group", "halt_if", "info", "per_record", "postprocess",
    "private", "privatise", "register", "release", "repeat", "sequence", "split", "subsample", "transform",
]
