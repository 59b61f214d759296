"""A learned distinguishing statistic: logistic regression over the whole output.

Threshold events on one statistic at a time miss what only several coordinates show together
(which of a sparse vector's answers are ⊤, and how many). ``fit_learned`` trains, on the training
half only, a logistic regression telling M(D) from M(D') on features of every coordinate, every
label and the halt reason; its log-odds ``LearnedScore`` is then one more statistic whose
thresholds the event search ranks beside the others. Fitted weights, feature scaling and the
threshold are frozen before any test draw, so an event on the score is a fixed event and the
ratio-test/Bonferroni guarantee of ``audit_pairs`` holds unchanged (docs/design.md,
"Learned events").

Features of a column with values v (NaN where the run did not release it): indicators of
absent, −∞ and +∞ (the encoding of ⊥/⊤ in mixed outputs, ``outputs``), the standardised finite
value z and z², one indicator per value for a column with at most ``MAX_LEVELS`` distinct
training values (labels, categories), else indicators of v above each of its training
``QUANTILES`` (so that a sum of signs, the likelihood ratio of parallel Laplace noise, is a
linear score); plus one indicator per halt reason. Features constant on
the training half, or spanned by the others and the intercept (``_spanned``), are dropped.

The columns are the output's and the differences of adjacent continuous columns that are finite
on every training run: a cumulative release (prefix sums, running counts) has its likelihood
ratio in the increments, which no feature of one coordinate shows.
"""

from __future__ import annotations

import functools
from typing import Iterator

import attrs
import numpy as np
from scipy import optimize, special

from .outputs import Outputs
from .statistics import Statistic, nan_moments, standardised_gaps

#: columns the learner sees: the most different between the sides by standardised training means
MAX_COLUMNS = 32
#: a column with at most this many distinct finite training values also gets one indicator per value
MAX_LEVELS = 12
#: quantiles of a continuous column's pooled training values that get an indicator of "above"
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: training rows per side the regression is fitted on: a tenth of them, within these bounds (its
#: thresholds are ranked on the others); 200,000 from the largest training half (``pairs.MAX_TRAINING``):
#: SVT34Parallel's score certified 0.198 fitted on 50,000, 0.226 on 100,000, 0.274 on 200,000
MIN_FIT_ROWS, MAX_FIT_ROWS = 20_000, 200_000
#: ridge penalty on the standardised weights (keeps separable training data from diverging)
PENALTY = 1e-3
#: fewest training runs per side the learner is fitted on
MIN_TRAINING = 2_000
#: rows featurised at once when scoring (bounds the memory of a large training half)
CHUNK = 65_536


@attrs.frozen(eq=False)
class Features:
    """The fixed feature map: the output columns after which an increment column is appended
    (``steps``), per kept column (of the output and increments) its centre, scale and levels
    (values of a discrete column, quantiles of a continuous one, NaN-padded to one width) and the
    halt reasons."""

    steps: np.ndarray
    columns: np.ndarray
    centre: np.ndarray
    scale: np.ndarray
    levels: np.ndarray
    discrete: np.ndarray
    reasons: tuple[str, ...]

    def raw(self, outputs: Outputs, keep: np.ndarray | None = None) -> np.ndarray:
        """The unstandardised features, shape (runs, all features), or only the ``keep`` ones (a
        boolean mask over all), computed alone: the same values as ``raw(outputs)[:, keep]``."""
        found = [np.asarray(feature, dtype=np.float32) for feature in self.each(outputs, keep)]
        # column-major, as the fit's moments and products have always read it (their sums' bits
        # follow the memory layout)
        return np.stack(found).T if found else np.zeros((len(outputs), 0), dtype=np.float32)

    def each(self, outputs: Outputs, keep: np.ndarray | None = None) -> Iterator[np.ndarray]:
        """Every feature (or only the ``keep`` ones) as one array over the runs, in feature order:
        an indicator as booleans, a value as float32. Computed a column at a time on contiguous
        rows, so scoring a run costs a pass per kept feature and no feature matrix."""
        rows = _column_rows(outputs.values, self.steps, self.columns)
        # one indicator per (column, level) slot that holds a level, in slot order (a NaN slot's
        # indicator is 0 on every run: the fit drops it, so it is not computed)
        equal_at, equal_to = self._slots(self.discrete, self.levels)
        above_at, above_than = self._slots(~self.discrete, self.levels[:, :len(QUANTILES)])
        width = len(self.columns)
        kinds = [(kind, column, None) for kind in ("absent", "-inf", "+inf", "z", "z²") for column in range(width)]
        kinds += [("==", column, level) for column, level in zip(equal_at, equal_to)]
        kinds += [(">", column, level) for column, level in zip(above_at, above_than)]
        kinds += [("reason", None, reason) for reason in self.reasons]
        standardised = functools.cache(lambda column: self._z(rows[column], column))  # for z and z²
        for index, (kind, column, level) in enumerate(kinds):
            if keep is not None and not keep[index]:
                continue
            values = None if column is None else rows[column]
            if kind == "absent":
                yield np.isnan(values)
            elif kind in ("-inf", "+inf"):
                yield values == (-np.inf if kind == "-inf" else np.inf)
            elif kind == "z":
                yield standardised(column).astype(np.float32)
            elif kind == "z²":
                yield (standardised(column) ** 2).astype(np.float32)
            elif kind == "==":
                yield values == level  # NaN (absent) compares False
            elif kind == ">":
                yield values > level
            else:
                yield outputs.reasons == level

    def _z(self, values: np.ndarray, column: int) -> np.ndarray:
        """Column ``column``'s standardised finite values (its centre where not finite), clipped to ±50."""
        centre = self.centre[column]
        return np.clip((np.where(np.isfinite(values), values, centre) - centre) / self.scale[column], -50, 50)

    @staticmethod
    def _slots(rows: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(kept column, level) of every filled level slot of the ``rows`` columns, row-major."""
        chosen = np.where(rows[:, None] & ~np.isnan(levels))
        return chosen[0], levels[chosen]


def _column_rows(values: np.ndarray, steps: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """One contiguous row per entry of ``columns`` (sorted indices into the output columns followed
    by the increments, column j+1 minus column j for every j in ``steps``): the same values as
    ``_columns(values, steps)[:, columns].T``."""
    width = values.shape[1]
    own, step = columns[columns < width], steps[columns[columns >= width] - width]
    return np.concatenate([values[:, own].T, (values[:, step + 1] - values[:, step]).T])  # copies the kept only


def _columns(values: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """The output columns followed by the increments, column j+1 minus column j for every j in ``steps``."""
    return np.concatenate([values, values[:, steps + 1] - values[:, steps]], axis=1)


def _steps(values: np.ndarray) -> np.ndarray:
    """The columns j such that j and j+1 are continuous (more than ``MAX_LEVELS`` distinct values)
    and finite on every training run: their increment is one more column."""
    smooth = np.all(np.isfinite(values), axis=0)
    smooth[smooth] = [np.unique(column).size > MAX_LEVELS for column in values[:, smooth].T]
    return np.flatnonzero(smooth[:-1] & smooth[1:])


def _features(first: Outputs, second: Outputs) -> Features:
    """The feature map, read from the training outputs of both sides."""
    steps = _steps(np.concatenate([first.values, second.values]))
    sides = [_columns(side.values, steps) for side in (first, second)]
    both = np.concatenate(sides)
    width = both.shape[1]
    finite = [np.where(np.isfinite(side), side, np.nan) for side in sides]
    gap = standardised_gaps(*finite)
    shares = [np.mean(~np.isfinite(side), axis=0) for side in sides]
    # rank by the gap in finite values and in how often a column is ⊥/⊤/absent
    rank = np.nan_to_num(gap, nan=0.0) + 10 * np.abs(shares[0] - shares[1])
    columns = np.sort(np.argsort(-rank, kind="stable")[:MAX_COLUMNS]) if width else np.zeros(0, dtype=int)
    kept = both[:, columns]
    values = np.where(np.isfinite(kept), kept, np.nan)
    centre, variance = nan_moments(values)
    centre, scale = np.nan_to_num(centre), np.nan_to_num(np.sqrt(variance)) + 1e-12
    levels = np.full((len(columns), max(MAX_LEVELS, len(QUANTILES))), np.nan)
    discrete = np.zeros(len(columns), dtype=bool)
    for index, column in enumerate(values.T):
        defined = column[~np.isnan(column)]
        distinct = np.unique(defined)
        discrete[index] = distinct.size <= MAX_LEVELS
        found = distinct if discrete[index] else np.unique(np.quantile(defined, QUANTILES)) if defined.size else []
        levels[index, :len(found)] = found
    reasons = tuple(sorted(set(first.reasons) | set(second.reasons))) if (first.halted.any() or second.halted.any()) else ()
    return Features(steps, columns, centre, scale, levels, discrete, reasons)


def _logistic(weights: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean logistic loss of ``X @ w + b`` for labels ``y`` plus the ridge penalty, and its gradient.
    The products are taken in X's float32 (a float64 operand would copy X at every step, 0.5 s
    at 200,000 runs per side), the sums over runs in float64."""
    margin = (X @ weights[:-1].astype(X.dtype)).astype(float) + weights[-1]
    loss = np.mean(np.logaddexp(0.0, margin) - y * margin) + PENALTY * weights[:-1] @ weights[:-1]
    residual = (special.expit(margin) - y) / len(y)
    gradient = np.append((X.T @ residual.astype(X.dtype)).astype(float) + 2 * PENALTY * weights[:-1], residual.sum())
    return float(loss), gradient


@attrs.frozen(eq=False)
class LearnedScore(Statistic):
    """The log-odds that an output came from M(D), by logistic regression fitted on training draws:
    ``intercept`` plus the ``coefficients`` times the kept features (standardisation folded in)."""

    features: Features
    keep: np.ndarray
    coefficients: np.ndarray
    intercept: float
    #: the first training runs of each side it was fitted on: its thresholds are ranked on the others,
    #: where its training bound is not inflated by the fit (``events.search_events``)
    fitted_rows: int = 0

    @property
    def name(self) -> str:
        return f"learned score (logistic regression on {self.coefficients.size} features of the whole output)"

    def __call__(self, outputs: Outputs) -> np.ndarray:
        scores = np.full(len(outputs), self.intercept)
        for start in range(0, len(outputs), CHUNK):
            chunk = scores[start:start + CHUNK]
            features = self.features.each(outputs.rows(start, start + CHUNK), self.keep)
            for feature, coefficient in zip(features, self.coefficients):  # a fixed order: the same bits
                chunk += feature * coefficient                              # on any machine or BLAS
        return scores


def _spanned(features: Features, varies: np.ndarray) -> np.ndarray:
    """The features the others and the intercept already span, among those that ``varies``: a
    discrete column's z and z² (functions of its level, as its level indicators are) and, when its
    absent/−∞/+∞ flags never vary (it is always released, finite), its first level's indicator (its
    indicators then sum to one). Dropping them leaves the same scores to fit and a smaller score to
    evaluate on every test run (a vector of bits: one feature per bit instead of four)."""
    width = len(features.columns)
    spanned = np.zeros_like(varies)
    spanned[3 * width:5 * width] = np.tile(features.discrete, 2)
    columns, _ = Features._slots(features.discrete, features.levels)
    first = np.r_[True, columns[1:] != columns[:-1]] if columns.size else np.zeros(0, dtype=bool)
    steady = ~(varies[:width] | varies[width:2 * width] | varies[2 * width:3 * width])
    spanned[5 * width:5 * width + columns.size] = first & steady[columns]
    return spanned


def fit_learned(first: Outputs, second: Outputs) -> LearnedScore | None:
    """The learned score of a pair, fitted on some of each side's training runs (``MIN_FIT_ROWS``);
    None when the outputs give fewer than two features to learn from, or when there are fewer than
    ``MIN_TRAINING`` runs per side (a score fitted on a few hundred runs over-fits them, and its
    optimistic training bound would crowd out the honest one-statistic events)."""
    if min(len(first), len(second)) < MIN_TRAINING:
        return None
    fit = min(max(MIN_FIT_ROWS, len(first) // 10), MAX_FIT_ROWS)
    rows = [side.rows(0, fit) for side in (first, second)]
    features = _features(*rows)
    raw = np.concatenate([features.raw(rows[0]), features.raw(rows[1])])
    # moments in float64 from float32 squares: numpy's std(dtype=float) copies the matrix to float64
    mean = raw.mean(axis=0, dtype=float)
    spread = np.sqrt(np.maximum(np.square(raw).mean(axis=0, dtype=float) - mean ** 2, 0.0))
    keep = (spread > 1e-6) & ~_spanned(features, spread > 1e-6)
    if keep.sum() < 2:
        return None
    X = (raw[:, keep] - mean[keep].astype(np.float32)) / spread[keep].astype(np.float32)
    y = np.concatenate([np.ones(len(rows[0])), np.zeros(len(rows[1]))])
    fitted = optimize.minimize(_logistic, np.zeros(X.shape[1] + 1), args=(X, y), jac=True, method="L-BFGS-B",
                               options={"maxiter": 100})
    coefficients = fitted.x[:-1] / spread[keep]
    return LearnedScore(features, keep, coefficients, float(fitted.x[-1] - coefficients @ mean[keep]), fit)
