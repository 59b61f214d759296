"""Privacy–utility curves: the error of a registered estimator against ε, on synthetic inputs
from the estimator's ``utility(epsilon, rng)`` sampler (``@register(..., utility=...)``).

``measure_utility`` runs the trials and returns a ``UtilityReport`` (median, quartiles and halt
rate per ε); ``dpledger.utility.figure`` plots it (PNG or HTML); ``dpledger utility NAME`` does
both from the command line.
"""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, {"measure": ("UtilityReport", "UtilityRow", "measure_utility")})
