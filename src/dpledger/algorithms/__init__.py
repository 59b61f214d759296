"""Built-in estimators; importing this package registers them."""

from . import mean, sbm, sparse_mean

__all__ = ["mean", "sbm", "sparse_mean"]
