"""The accountant, its ledger and the composition rules it proves with."""

from .accountant import Accountant
from .result import Result
from .filters import BasicFilter, Filter, GaussianFilter, RenyiFilter, Usage, ZCDPFilter
from .pricing import suggest_order
from ..privacy.steps import PlanStep
from .entries import LedgerEntry
from .ledger import Ledger
from ..privacy.rules import (absorb_failure, amplify_by_subsampling, compose, compose_halting, compose_repeated, group_privacy,
                    post_process, privatised_input, random_partition, remainder)
from .schedule import Schedule

__all__ = [
    "Accountant", "BasicFilter", "Filter", "GaussianFilter", "Ledger", "LedgerEntry", "PlanStep", "RenyiFilter",
    "Result", "Schedule", "Usage", "ZCDPFilter", "absorb_failure", "amplify_by_subsampling", "compose", "compose_halting",
    "compose_repeated", "group_privacy", "post_process", "privatised_input", "random_partition", "remainder",
    "suggest_order",
]
