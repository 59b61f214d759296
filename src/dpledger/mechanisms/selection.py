"""Private selection: exponential mechanism, report-noisy-max and top-k peeling.

``value`` is the vector of candidate scores S(Y, h), one per candidate h; ``sensitivity`` is the
score's sensitivity Δ_S = max over h and neighbours of |S(Y, h) - S(Y', h)|.
"""

from __future__ import annotations

import attrs
import numpy as np

from .. import _validate
from ..guarantees import PureDP
from .base import Mechanism, epsilon_field, sensitivity_field, shaped


class _Selection(Mechanism):
    def _check_value(self, value):
        return _validate.finite_array("scores", value, ndim=1)

    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity}


@attrs.frozen
class Exponential(_Selection):
    """Samples h with probability ∝ exp(ε·S(h)/(2Δ_S)): ε-DP (McSherry & Talwar 2007).

    Implemented by the Gumbel-max trick: argmax_h ε·S(h)/(2Δ_S) + Gumbel noise has exactly that
    distribution, with no overflow for large scores.
    """

    source = "exponential mechanism (McSherry & Talwar 2007)"

    epsilon: float = epsilon_field()
    sensitivity: float = sensitivity_field()

    def probabilities(self, scores) -> np.ndarray:
        """The exact selection distribution (for tests and small candidate sets)."""
        logits = self.epsilon * self._check_value(scores) / (2.0 * self.sensitivity)
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def _draw(self, scores, rng, size):
        logits = self.epsilon * scores / (2.0 * self.sensitivity)
        return np.argmax(logits + rng.gumbel(size=shaped(scores.shape, size)), axis=-1)


@attrs.frozen
class ReportNoisyMax(_Selection):
    """Index of the largest score after adding Lap(2Δ/ε) to each (Lap(Δ/ε) when the scores are
    monotone, e.g. counts): ε-DP (Dwork & Roth 2014, Claim 3.9). Only the index is released;
    releasing the noisy value too is a known bug that breaks the guarantee."""

    source = "report-noisy-max (Dwork & Roth 2014, Claim 3.9)"

    epsilon: float = epsilon_field()
    sensitivity: float = sensitivity_field()
    monotonic: bool = attrs.field(default=False, converter=bool)

    @property
    def scale(self) -> float:
        return (1.0 if self.monotonic else 2.0) * self.sensitivity / self.epsilon

    def params(self) -> dict:
        return {**super().params(), "scale": self.scale, "monotonic": self.monotonic}

    def _draw(self, scores, rng, size):
        return np.argmax(scores + rng.laplace(0.0, self.scale, size=shaped(scores.shape, size)), axis=-1)


@attrs.frozen
class TopKPeeling(_Selection):
    """k rounds of the exponential mechanism with ε/k each, without replacement ("peeling").

    ε-DP by basic composition. Sampled in one shot: the k largest of
    (ε/k)·S(h)/(2Δ_S) + Gumbel noise, in order, have the same distribution as k peeling rounds
    (Durfee & Rogers 2019, Lemma 4.2). Returns the k indices in selection order.
    """

    source = "k-fold exponential mechanism, basic composition (Durfee & Rogers 2019)"

    epsilon: float = epsilon_field()
    k: int = attrs.field(default=1, converter=lambda v: _validate.integer("k", v, minimum=1))
    sensitivity: float = sensitivity_field()

    def _check_value(self, value):
        scores = super()._check_value(value)
        if scores.size < self.k:
            raise ValueError(f"top-k needs at least k={self.k} candidate scores, got {scores.size}")
        return scores

    def params(self) -> dict:
        return {**super().params(), "k": self.k}

    def _draw(self, scores, rng, size):
        logits = (self.epsilon / self.k) * scores / (2.0 * self.sensitivity)
        noisy = logits + rng.gumbel(size=shaped(scores.shape, size))
        top = np.argpartition(-noisy, self.k - 1, axis=-1)[..., : self.k]
        order = np.argsort(-np.take_along_axis(noisy, top, axis=-1), axis=-1)
        return np.take_along_axis(top, order, axis=-1)
