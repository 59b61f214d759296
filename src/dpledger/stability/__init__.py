"""Sensitivity of argmins of strongly convex programs (Lemma B.1) and certified solver results."""

from .certified import CertifiedSolution, SolverError, certified_sensitivity, lemma_b1_sensitivity

__all__ = ["CertifiedSolution", "SolverError", "certified_sensitivity", "lemma_b1_sensitivity"]
