"""Pure-DP k-sparse mean estimation under ReplaceOne (seed "privacy induces robustness"):
``sparse_mean.exponential`` (exponential mechanism over supports) and ``sparse_mean.peeling``."""

from . import estimators
from .scores import MAX_DIRECTIONS, direction_count, levels, subset_scores, support_candidates, unit_directions

__all__ = ["MAX_DIRECTIONS", "direction_count", "estimators", "levels", "subset_scores", "support_candidates",
           "unit_directions"]
