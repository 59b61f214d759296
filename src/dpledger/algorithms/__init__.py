"""Built-in estimators; importing this package registers them."""

from . import sbm

__all__ = ["sbm"]
