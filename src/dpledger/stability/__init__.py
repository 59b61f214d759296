"""Sensitivity of argmins of strongly convex programs (Lemma B.1) and certified solver results."""

from .certified import CertifiedSolution, certified_sensitivity, lemma_b1_sensitivity

__all__ = ["CertifiedSolution", "certified_sensitivity", "lemma_b1_sensitivity"]
