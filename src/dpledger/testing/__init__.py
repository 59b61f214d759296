"""Privacy tests for estimator authors: ``assert_private`` (hypothesis searches neighbouring
pairs, fresh samples decide, violations shrink to a small pair) and a pytest plugin
(``dpledger.testing.plugin``: the ``privacy`` marker and ``pytest --dpledger-audit``)."""

from .assertion import PrivacyViolation, assert_private

__all__ = ["PrivacyViolation", "assert_private"]
