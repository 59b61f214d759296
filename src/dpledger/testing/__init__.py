"""Privacy tests for estimator authors: ``assert_private`` (hypothesis searches neighbouring
pairs, fresh samples decide, violations shrink to a small pair) and a pytest plugin
(``dpledger.testing.plugin``: the ``privacy`` marker and ``pytest --dpledger-audit``).

Names are imported on first use: pytest loads the plugin in every project where dpledger is
installed, and the auditor's imports (hypothesis, scipy, dp-accounting) took 2 s of each start.
"""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, {"assertion": ("PrivacyViolation", "assert_private")})
