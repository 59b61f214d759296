"""dpledger: differential privacy as mechanism graphs, with a central accountant and an auditor.

A private estimator is a graph of mechanisms; ``Accountant.plan`` proves what the graph costs
without data, ``Accountant.run`` charges that cost and then runs it, and the ledger records every
charge with the rule that justified it.
"""

from typing import TYPE_CHECKING

from ._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, {
    "accountant": ("Accountant", "Ledger", "LedgerEntry", "Result", "Schedule", "absorb_failure", "amplify_by_subsampling",
                   "compose", "compose_halting", "group_privacy", "post_process", "privatised_input",
                   "random_partition"),
    "domains": ("Graphs", "Records"),
    "errors": ("BudgetExceeded", "ConditionError", "LedgerError", "PrivacyError", "RelationError"),
    "graph": ("Graph", "Plan", "absorb", "conditional", "estimator", "estimators", "group", "halt_if", "per_record",
              "postprocess", "private", "privatise", "register", "release", "repeat", "sequence", "split", "subsample",
              "transform"),
    "guarantees": ("ApproxDP", "PureDP"),
    "relations": ("AddRemoveOne", "EdgeAdjacency", "Relation", "ReplaceOne"),
})

if TYPE_CHECKING:  # what static tools see: the same names, imported eagerly
    from .accountant import (Accountant, Ledger, LedgerEntry, Result, Schedule, absorb_failure, amplify_by_subsampling,
                             compose, compose_halting, group_privacy, post_process, privatised_input, random_partition)
    from .domains import Graphs, Records
    from .errors import BudgetExceeded, ConditionError, LedgerError, PrivacyError, RelationError
    from .graph import (Graph, Plan, absorb, conditional, estimator, estimators, group, halt_if, per_record,
                        postprocess, private, privatise, register, release, repeat, sequence, split, subsample,
                        transform)
    from .guarantees import ApproxDP, PureDP
    from .relations import AddRemoveOne, EdgeAdjacency, Relation, ReplaceOne

__version__ = "0.1.0"
