"""Pure-DP mean estimation in R^d under ReplaceOne: clipping + Laplace, and private localisation
then clipping (registered as ``mean.clipped`` and ``mean.localised``)."""

from . import estimators
from .nodes import clipped_mean, localised_mean
from .parameters import check_public, sparse_gaussian

__all__ = ["check_public", "clipped_mean", "estimators", "localised_mean", "sparse_gaussian"]
