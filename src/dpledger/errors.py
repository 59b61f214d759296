"""Typed errors: every refusal names the argument at fault and how to fix it."""


class PrivacyError(Exception):
    """A privacy claim cannot be established (mixed relations, unmet condition, ...)."""


class BudgetExceeded(PrivacyError):
    """A charge would exceed the budget; nothing was recorded and no data was touched."""


class ConditionError(PrivacyError):
    """A conditional step names a halting test that does not run before it (Lemma A.4)."""
