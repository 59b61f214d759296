"""dpledger: differential privacy as mechanism graphs, with a central accountant and an auditor.

A private estimator is a graph of mechanisms; ``Accountant.plan`` proves what the graph costs
without data, ``Accountant.run`` charges that cost and then runs it, and the ledger records every
charge with the rule that justified it.
"""

from .accountant import (Accountant, Ledger, LedgerEntry, Result, Schedule, absorb_failure, amplify_by_subsampling, compose,
                         compose_halting, group_privacy, post_process, privatised_input, random_partition)
from .domains import Graphs, Records
from .errors import BudgetExceeded, ConditionError, LedgerError, PrivacyError, RelationError
from .graph import (Graph, Plan, absorb, conditional, estimator, estimators, group, halt_if, per_record, postprocess,
                    private, privatise, register, release, repeat, sequence, split, subsample, transform)
from .guarantees import ApproxDP, PureDP
from .relations import AddRemoveOne, EdgeAdjacency, Relation, ReplaceOne

__version__ = "0.1.0"

__all__ = [
    "Accountant", "AddRemoveOne", "ApproxDP", "BudgetExceeded", "ConditionError", "EdgeAdjacency", "Graph", "Graphs", "Ledger", "LedgerError",
    "LedgerEntry", "Plan", "PrivacyError", "PureDP", "Records", "Relation", "RelationError", "ReplaceOne", "Result", "Schedule", "absorb", "absorb_failure",
    "amplify_by_subsampling", "compose", "compose_halting", "conditional", "estimator", "estimators", "group",
    "group_privacy", "halt_if", "per_record", "post_process", "postprocess", "private", "privatise", "privatised_input",
    "random_partition",
    "register", "release", "repeat", "sequence", "split", "subsample", "transform",
]
