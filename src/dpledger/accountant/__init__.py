"""The accountant, its ledger and the composition rules it proves with."""

from .accountant import Accountant, Result
from .ledger import Ledger, LedgerEntry, PlanStep
from .rules import (absorb_failure, amplify_by_subsampling, compose, compose_halting, group_privacy, post_process,
                    privatised_input, random_partition)

__all__ = [
    "Accountant", "Ledger", "LedgerEntry", "PlanStep", "Result", "absorb_failure", "amplify_by_subsampling",
    "compose", "compose_halting", "group_privacy", "post_process", "privatised_input", "random_partition",
]
