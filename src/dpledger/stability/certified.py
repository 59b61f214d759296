"""Lemma B.1 and the notion of a *certified* solver result.

Lemma B.1 (stability of strongly convex optimisation): if for neighbouring Y, Y' every X in K(Y)
has a Z in K(Y) ∩ K(Y') with |f_Y(X) - f_Y'(Z)| <= α and |f_Y(Z) - f_Y'(Z)| <= α, and f_Y is
κ-strongly convex, then ||X̂ - X̂'||² <= 12α/κ for the *exact* minimisers.

A solver returns an approximation, so its error is part of the privacy proof (docs/proofs.md). A
``CertifiedSolution`` carries a feasible point and a proven bound on its distance to the exact
minimiser (for a κ-strongly convex objective, sqrt(2·gap/κ) from a duality gap). A mechanism fixes
an accuracy target τ *before* seeing data and calibrates its noise to Δ + 2τ (+ a floating-point
allowance); the released point is within τ of the exact minimiser on both inputs, so by the
triangle inequality the released points are within Δ + 2τ. Whether a run reaches τ must never
decide what a user sees (it is a function of the data): a private caller fixes τ at or above a
public floor that every input in the domain provably reaches, and treats a miss as a bug
(``SolverError``), never as a halt.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from .. import _validate


class SolverError(RuntimeError):
    """A certified solver missed a target at or above its proven floor: impossible by
    docs/proofs.md, so a bug (the graph runtime reports it as a ``PrivacyError``), never a halt."""

    def __init__(self, solution: "CertifiedSolution"):
        super().__init__(f"the certificate {solution.certified_error:.3g} missed τ = {solution.target:.3g}, "
                         "which docs/proofs.md shows every input reaches: please report this as a bug")


def lemma_b1_sensitivity(alpha: float, kappa: float) -> float:
    """ℓ2 (Frobenius) sensitivity sqrt(12α/κ) of the exact minimiser (Lemma B.1)."""
    alpha = _validate.nonnegative("alpha", alpha)
    kappa = _validate.positive("kappa", kappa)
    return math.sqrt(12.0 * alpha / kappa)


def certified_sensitivity(exact: float, target: float, float_allowance: float = 0.0) -> float:
    """Sensitivity of a released approximate minimiser: Δ_exact + 2τ + floating-point allowance.

    ``target`` is the accuracy τ every released solution is certified to meet; it must be fixed
    before the data is seen (never the accuracy reached on the particular input).
    """
    exact = _validate.nonnegative("exact", exact)
    target = _validate.nonnegative("target", target)
    float_allowance = _validate.nonnegative("float_allowance", float_allowance)
    return exact + 2.0 * target + float_allowance


@attrs.frozen(eq=False)
class CertifiedSolution:
    """A solver's answer with a proof of how far it can be from the exact minimiser.

    ``solution``: a feasible point. ``certified_error``: proven upper bound on
    ||solution - exact minimiser|| (already including floating-point allowance). ``target``: the
    accuracy τ fixed before the data was seen. ``iterations``/``work`` describe the cost (e.g.
    eigendecompositions).
    """

    solution: np.ndarray
    certified_error: float
    target: float
    iterations: int = 0
    work: int = 0
    gap: float = math.nan

    @property
    def meets_target(self) -> bool:
        """True when the certificate proves the solution within τ."""
        return bool(self.certified_error <= self.target)
