"""Typed errors: every refusal names the argument at fault and how to fix it."""


class PrivacyError(Exception):
    """A privacy claim cannot be established (mixed relations, unmet condition, ...)."""


class BudgetExceeded(PrivacyError):
    """A charge would exceed the budget; nothing was recorded and no data was touched."""


class ConditionError(PrivacyError):
    """A conditional step names a halting test that does not run before it (Lemma A.4)."""


class RelationError(PrivacyError, ValueError):
    """A charge, a ledger entry or a file names another neighbouring relation than the session's:
    guarantees under different relations do not compose, so nothing was charged. The message names
    both relations."""


class LedgerError(PrivacyError):
    """A ledger cannot be trusted for charging (e.g. a prepaid step of no charged schedule); it is
    refused, and ``Accountant.inspect`` still reads it."""


class LedgerCorrupt(LedgerError, ValueError):
    """An existing file (or database) at a ledger's path is not a readable dpledger ledger: empty,
    another kind of file, or damaged. It is refused, never initialised over, so a budget is never
    started afresh on top of one that was lost; the message names the file."""
