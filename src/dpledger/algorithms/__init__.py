"""Built-in estimators; importing this package registers them."""

from . import gmm, mean, sbm, sparse_mean

__all__ = ["gmm", "mean", "sbm", "sparse_mean"]
