"""Stochastic block models: sampler, error rate and the private recovery estimators of Appendix C."""

from . import estimators
from .graphs import MAX_VERTICES, as_adjacency, from_edge_list
from .model import (balanced_labels, error_rate, from_log_parameterisation, sample, sample_log, sample_sparse,
                    sample_sparse_log)
from .recovery import MAX_ENUMERATION_VERTICES

__all__ = [
    "MAX_ENUMERATION_VERTICES", "MAX_VERTICES", "as_adjacency", "balanced_labels", "error_rate", "estimators",
    "from_edge_list", "from_log_parameterisation", "sample", "sample_log", "sample_sparse", "sample_sparse_log",
]
