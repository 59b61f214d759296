"""Empirical privacy auditing (DESIGN §9): sample a mechanism on neighbouring pairs, choose
distinguishing events on a training half, certify an ε lower bound on a test half with
Clopper–Pearson bounds and a Bonferroni correction over every test.
"""

from .bounds import (bonferroni_level, clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound,
                     minimum_test_samples)
from .pairs import audit_pairs
from .report import AuditError, AuditReport, EventTest, PairReport

__all__ = [
    "AuditError",
    "AuditReport",
    "EventTest",
    "PairReport",
    "audit_pairs",
    "bonferroni_level",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "minimum_test_samples",
]
