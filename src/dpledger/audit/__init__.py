"""Empirical privacy auditing (docs/design.md, "Auditing a whole release"): sample a mechanism on
neighbouring pairs, choose distinguishing events on a training half, certify an ε lower bound on
a test half (a ratio test on Poisson-sized test halves; trade-off tests for μ and ρ claims) and a
Bonferroni correction over every test.

``audit`` audits an estimator, graph, mechanism or function, searching for revealing pairs;
``audit_pairs`` audits given pairs; ``floating_point`` holds statistics on the low-order bits
of outputs; ``encoding`` the encoding of ⊥/⊤, categorical, variable-length and mixed outputs;
``dpledger.audit.strategies`` hypothesis strategies for inputs and neighbouring pairs;
``dpledger.audit.figure`` draws a report (PNG or HTML; needs matplotlib).
"""

from .._lazy import exports

__getattr__, __dir__, __all__ = exports(__name__, {
    "auditor": ("audit",),
    "bounds": ("bonferroni_level", "clopper_pearson_lower", "clopper_pearson_upper", "epsilon_lower_bound",
               "minimum_test_samples", "weighted_levels"),
    "encoding": ("BOTTOM", "TOP", "encode_answers", "halted"),
    "floating_point": ("LatticeReachable", "textbook_laplace_reachable"),
    "pairs": ("audit_pairs",),
    "report": ("AuditError", "AuditReport", "EventTest", "PairReport", "SearchSummary"),
})
