"""Every constant of ``gmm.centres``, computed from public parameters before any data is seen.

The derivation is in docs/proofs.md ("gmm.centres"); the names below follow it.

1. W (step 1) moves by Δ_W = sqrt(24·c·cap) + 2τ in Frobenius norm (Lemma B.1 with α = 4·c·cap,
   κ = 2, plus the solver's certified accuracy τ on both inputs).
2. For every row i other than the changed one, ||ν(i) − ν'(i)|| <= (2r/A0)(L·sqrt(n)·e_i + 2)
   with e_i = ||W_i − W'_i||, L the Lipschitz constant of ϕ and A0 the normaliser's floor.
3. Over the subsample S (size s) the rows outside a set of m are jointly within
   Δ_V = (2r/A0)(L·sqrt(n·Σ) + 2·sqrt(s)), where Σ bounds Σ_{i∈S, good} e_i². Two regimes:
   *deterministic* (Σ = Δ_W², m = 1, nothing absorbed) and *subsampled* (rows with e_i² > t are
   bad; m bad rows at most except with probability γ_m (hypergeometric tail); Σ by Bernstein's
   inequality for sampling without replacement (Hoeffding 1963, Thm 4) except with probability
   γ_S). The regime (and m) with the smaller Δ_V is used; both are data-independent choices.
4. Lemma I.4: the Gaussian step (ε1, δ1) on V, then steps 7–9, (ε2, δ2) for one changed row, give
   (ε1 + m·ε2, δ1 + e^{ε1}·m·e^{(m−1)ε2}·δ2); Fact I.3 adds (2γ, γ) for γ = γ_S + γ_m.
The budget (ε, δ) the user asks for is split so that this total is at most (ε, δ).
"""

from __future__ import annotations

import math

import attrs

from ... import _validate, rowwise
from ...mechanisms import Gaussian, HistogramLearner
from ...rounding import UNIT_ROUNDOFF, gamma as _gamma
from . import projected
from .membership import accuracy_floor

#: Subsampled-regime candidates for the number m of bad rows tolerated in S.
BAD_ROW_CHOICES = (2, 4, 8, 16, 32)
#: Largest n and d the calibration accepts (useful_n searches up to 1e15).
MAX_N, MAX_D = 10**16, 10**7
#: Budget beyond this ε is left unspent: Lemma I.4's e^{ε} factors would drive the δ of the later
#: steps towards the limits of double precision, and more ε must never make a budget unmeetable.
SPLIT_EPSILON_CAP = 50.0
#: How ν(i) is formed: Algorithm D.5's membership matrix, or plain radius neighbourhoods.
METHODS = ("membership", "neighbourhood")
#: Public lengths (separation, σ, radius, bin width) accepted: from ``rowwise.MIN_LENGTH`` (no
#: underflow in a clipped offset) to 1e100 (sums of n <= MAX_N offsets stay finite).
MIN_SCALE, MAX_SCALE = rowwise.MIN_LENGTH, 1e100
#: Output is called useful when the step-6 noise radius σ_V·sqrt(d) is below separation / USEFUL_RATIO
#: (a quarter of the default bin width): the noisy rows of a cluster then mostly share a bin.
USEFUL_RATIO = 8.0
#: The budget split leaves this relative room for the upward rounding of Lemma I.4's and Fact I.3's
#: totals (``rules``), so that the plan never lands an ulp above the request.
ROUNDING_ROOM = 2.0**-40
#: The lattice Gaussian clamps each coordinate of an answer to ±2^50·g before rounding it to g·Z,
#: so rounding a computed y + t with y shared by both neighbours (a row y_i + its offset, a cube's
#: corner + a mean offset) adds at most 2u·2^50·g = g/4 per coordinate: at most Δ/4096 in ℓ2 for
#: the lattice of sensitivity Δ (docs/proofs.md). A bound X on the rest is declared as X / LATTICE_SHARE.
LATTICE_SHARE = 1.0 - 2.0**-12


def row_bound(radius: float, floor: float, n: int, d: int, method: str, lipschitz: float = 1.0) -> tuple[float, float]:
    """(c1, c2) with every good row of ν moving by at most c1·L·sqrt(n)·e_i + c2 in the computed
    values (docs/proofs.md, "gmm.centres"): c1 = 2b/A0, and c2 = 2b/A0 for the neighbourhood method,
    (2b/A0)·2 for the membership method, plus rounding; computed offsets are at most b = r(1 + γ_{2d+10}) long,
    the normalised sum of each row errs by at most 3γ_{n+2}·b per input whatever the summation
    order, and (membership) the soft threshold's rounding moves ||a_i||_1 by at most 3uLn."""
    b = radius * (1.0 + _gamma(2 * d + 10))
    per_row = 2.0 * b / floor
    spread = 1.0 if method == "neighbourhood" else 2.0 + 6.0 * UNIT_ROUNDOFF * lipschitz * n
    return per_row, per_row * spread + 6.0 * _gamma(n + 2) * b


@attrs.frozen
class Tuning:
    """The tunable constants (defaults in brackets; docs/estimators/gmm.md says what each trades).

    radius r [midway between typical within- and between-cluster distances], c [1], cap
    [n/k], threshold ϕ knees (low, high) [(0.5, 1.0)], floor A0 [cap/2], solver accuracy τ
    [0.05·sqrt(cap)], subsample s [enough for the histogram], bin width b [separation/2], light-bin
    threshold N_min [s/(4k)], budget shares: noise_share of ε to the Gaussian step [0.5],
    gamma_share of δ to absorbed failures [0.1], and the split of step 7–9's (ε2, δ2) between the
    histogram, the light-bin test and the bin averages [(0.4, 0.2, 0.4)].
    """

    radius: float | None = None
    c: float = 1.0
    cap: float | None = None
    low: float = 0.5
    high: float = 1.0
    floor: float | None = None
    accuracy: float | None = None
    subsample: int | None = None
    bin_width: float | None = None
    min_bin: int | None = None
    noise_share: float = 0.5
    gamma_share: float = 0.1
    shares: tuple[float, float, float] = (0.4, 0.2, 0.4)


@attrs.frozen
class Calibration:
    """All numbers the graph uses, and the proof's intermediate quantities (for the ledger)."""

    method: str
    n: int
    d: int
    k: int
    separation: float
    sigma: float
    epsilon: float
    delta: float
    radius: float
    c: float
    cap: float
    low: float
    high: float
    floor: float
    accuracy: float
    subsample: int
    bin_width: float
    min_bin: int
    regime: str
    bad_rows: int
    gamma_bad_rows: float
    gamma_bernstein: float
    delta_w: float
    sum_bound: float
    delta_v: float
    epsilon_noise: float
    delta_noise: float
    epsilon_histogram: float
    epsilon_test: float
    epsilon_average: float
    delta_histogram: float
    delta_test: float
    delta_average: float
    average_sensitivity: float

    @property
    def gamma(self) -> float:
        return self.gamma_bad_rows + self.gamma_bernstein

    @property
    def histogram_threshold(self) -> float:
        """Rows a bin needs to survive the histogram's threshold with probability >= 1/2."""
        return 3.0 * math.log(2.0 / self.delta_histogram) / self.epsilon_histogram

    @property
    def lipschitz(self) -> float:
        return 1.0 / (self.high - self.low)

    @property
    def noise_sigma(self) -> float:
        """Standard deviation per coordinate of the step-6 Gaussian noise on each ν(i)."""
        return Gaussian(self.epsilon_noise, self.delta_noise, self.delta_v).sigma

    @property
    def noise_radius(self) -> float:
        """Typical distance σ_V·sqrt(d) of a noisy ν(i) from the exact one."""
        return self.noise_sigma * math.sqrt(self.d)

    @property
    def useful(self) -> bool:
        """Whether the step-6 noise keeps each cluster's noisy rows together (radius < Δ/8)."""
        return self.noise_radius < self.separation / USEFUL_RATIO

    def verdict(self) -> str:
        ratio = self.noise_radius / self.separation
        if self.useful:
            return f"step-6 noise radius is {ratio:.2g}× the separation: the guarantee comes with usable output"
        return (f"WEAK AT THIS n: to prove ({self.epsilon:g}, {self.delta:g})-DP, step 6 moves every ν(i) by "
                f"about {ratio:.3g}× the separation, so the output is not expected to locate the centres; "
                f"gmm.useful_n() gives the n at which it would")


def default_radius(d: int, separation: float, sigma: float) -> float:
    """Midway between the typical within-cluster distance sqrt(2d)σ and between-cluster distance
    sqrt(Δ² + 2dσ²) of a spherical mixture (a utility choice: privacy holds for any radius)."""
    within = math.sqrt(2.0 * d) * sigma
    return 0.5 * (within + math.sqrt(separation * separation + within * within))


def calibrate(n: int, d: int, k: int, separation: float, epsilon: float, delta: float, sigma: float = 1.0,
              tuning: Tuning = Tuning(), method: str = "membership") -> Calibration:
    """The calibration for public (n, d, k, Δ, σ) and total budget (ε, δ); raises ValueError
    when the budget cannot be met at this n (with what would be needed).

    ``method``: "membership" (Algorithm D.5's step 1, Lemma B.1) or "neighbourhood" (ν(i) is the
    plain average of the points within r of y_i: every row but the changed one moves by at most
    2r/A0, docs/proofs.md).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n = _validate.integer("n", n, minimum=2)
    d = _validate.integer("d", d, minimum=1)
    k = _validate.integer("k", k, minimum=1)
    if n > MAX_N or d > MAX_D:
        raise ValueError(f"n must be <= {MAX_N:.0e} and d <= {MAX_D:.0e} (the calibration's arithmetic), got n={n}, d={d}")
    if k > n:
        raise ValueError(f"k must be <= n, got k={k} > n={n}")
    separation = _validate.positive("separation", separation)
    sigma = _validate.positive("sigma", sigma)
    epsilon = _validate.positive("epsilon", epsilon)
    delta = _validate.probability("delta", delta, low_open=True)
    t = _check_tuning(tuning)
    radius = t.radius if t.radius is not None else default_radius(d, separation, sigma)
    bin_width = t.bin_width if t.bin_width is not None else separation / 2.0
    for name, value in (("separation", separation), ("sigma", sigma), ("radius", radius), ("bin_width", bin_width)):
        if not MIN_SCALE <= value <= MAX_SCALE:
            raise ValueError(f"{name}={value:g} must lie in [{MIN_SCALE:g}, {MAX_SCALE:g}]: smaller, a clipped offset's "
                             "squares could underflow and leave it unclipped; larger, sums of n offsets could overflow. "
                             "Rescale the data")
    cap = t.cap if t.cap is not None else n / k
    # τ: the tuning's (default 0.05·sqrt(cap)), never below the floor every input reaches
    accuracy = max(t.accuracy if t.accuracy is not None else 0.05 * math.sqrt(cap), accuracy_floor(n, t.c, cap))
    common = dict(method=method, n=n, d=d, k=k, separation=separation, sigma=sigma, epsilon=epsilon, delta=delta, radius=radius,
                  c=t.c, cap=cap, low=t.low, high=t.high, floor=t.floor if t.floor is not None else cap / 2.0,
                  accuracy=accuracy, bin_width=bin_width,
                  delta_w=math.sqrt(24.0 * t.c * cap) + 2.0 * accuracy)
    gamma = t.gamma_share * delta
    regimes = [("deterministic", 1, 0.0)]
    if method == "membership":
        regimes += [("subsampled", m, gamma) for m in BAD_ROW_CHOICES]
    regimes = [(*regime, order) for regime in regimes for order in ("noise first", "group first")]
    candidates = [_regime(common, t, *regime) for regime in regimes]
    feasible = [c for c in candidates if isinstance(c, Calibration)]
    if not feasible:
        raise ValueError(f"gmm ({method}) cannot meet (ε={epsilon:g}, δ={delta:g}) at n={n}, k={k}: "
                         + "; ".join(sorted(set(candidates))))
    # The least step-6 noise, penalised when the histogram's threshold count 3·ln(2/δ_h)/ε_h exceeds
    # half a cluster's share s/k of the subsample (its bins would not be released): data-independent.
    return min(feasible, key=lambda c: c.noise_sigma * max(1.0, 2.0 * c.k * c.histogram_threshold / c.subsample))


def useful_n(d: int, k: int, separation: float, epsilon: float, delta: float, sigma: float = 1.0,
             tuning: Tuning = Tuning(), method: str = "membership", limit: float = 1e15,
             radius: float | None = None) -> int | None:
    """Smallest n at which the calibration is useful, rounded up to 2 significant digits (so the
    returned n is useful); None beyond ``limit``. ``method``: "membership" (gmm.centres),
    "neighbourhood" (gmm.neighbourhood) or "projected" (gmm.projected, which needs its public
    ``radius`` and ignores ``tuning``). Bad parameters are refused up front: in the search, a
    ValueError only means "this n cannot meet the budget"."""
    _validate.integer("d", d, minimum=1)
    _validate.integer("k", k, minimum=1)
    for name, value in (("separation", separation), ("sigma", sigma), ("epsilon", epsilon), ("limit", limit)):
        _validate.positive(name, value)
    _validate.probability("delta", delta, low_open=True)
    _check_tuning(tuning)
    if method == "projected":
        if radius is None:
            raise ValueError("method='projected' needs the public radius of the data's ball")
        radius = _validate.positive("radius", radius)

        def calibration(n: int):
            return projected.calibrate(n, d, k, separation, epsilon, delta, radius, sigma)
    elif method in METHODS:
        def calibration(n: int):
            return calibrate(n, d, k, separation, epsilon, delta, sigma, tuning, method)
    else:
        raise ValueError(f"method must be one of {(*METHODS, 'projected')}, got {method!r}")

    def useful(n: int) -> bool:
        try:
            return calibration(n).useful
        except ValueError:
            return False
    low, high = max(2 * k, 16), max(2 * k, 16)
    while not useful(high):
        low, high = high, high * 10
        if high > limit:
            return None
    while high > 1.01 * low + 1:
        middle = int(math.sqrt(low * high))
        low, high = (middle, high) if not useful(middle) else (low, middle)
    step = 10 ** max(int(math.floor(math.log10(high))) - 1, 0)  # round up to 2 significant digits
    return math.ceil(high / step) * step


def _check_tuning(t: Tuning) -> Tuning:
    if not isinstance(t, Tuning):
        raise TypeError(f"tuning must be a gmm Tuning, got {t!r}")
    for name in ("radius", "cap", "floor", "accuracy", "bin_width"):
        if getattr(t, name) is not None:
            _validate.positive(name, getattr(t, name))
    if _validate.real("c", t.c) < 1.0:
        raise ValueError(f"c must be >= 1 (the proof of α = 4·c·cap uses 2c >= 1 >= W_ij), got {t.c}")
    if not 0.0 <= _validate.real("low", t.low) < _validate.real("high", t.high) <= 1.0:
        raise ValueError(f"the soft threshold needs 0 <= low < high <= 1, got low={t.low}, high={t.high}")
    for name in ("noise_share", "gamma_share"):
        _validate.probability(name, getattr(t, name), low_open=True)
    if len(t.shares) != 3 or any(_validate.positive("shares", v) <= 0 for v in t.shares) \
            or abs(sum(t.shares) - 1.0) > 1e-12:
        raise ValueError(f"shares must be three positive numbers summing to 1, got {t.shares}")
    if t.subsample is not None:
        _validate.integer("subsample", t.subsample, minimum=2)
    if t.min_bin is not None:
        _validate.integer("min_bin", t.min_bin, minimum=2)
    return t


def _default_subsample(k: int, eps_h: float, delta_h: float) -> int:
    """Enough rows that a cluster's share of S, s/k, is four times the histogram's threshold
    count 3·ln(2/δ_h)/ε_h (Lemma A.13)."""
    return math.ceil(4.0 * k * 3.0 * math.log(2.0 / delta_h) / eps_h)


def _tail_bound(m: int, n: int, bad: int, s: int) -> float:
    """Upper bound on P[Hypergeom(n, bad, s) > m]: the Chernoff bound exp(−s·KL((m+1)/s ‖ bad/n)),
    valid for sampling without replacement (Hoeffding 1963, Theorem 4) and cheap at any n."""
    a, p = (m + 1) / s, bad / n
    if a >= 1.0:
        return 0.0 if p < 1.0 else 1.0
    if a <= p:
        return 1.0
    divergence = a * math.log(a / p) + (1.0 - a) * math.log((1.0 - a) / (1.0 - p))
    return math.exp(-s * divergence)


def _subsampled_sum(n: int, s: int, total: float, m: int, gamma_rows: float, gamma_sum: float) -> float | None:
    """Bound on Σ_{i∈S, good} e_i² holding except with probability γ_S, if at most m of S are bad
    except with probability γ_m; None when no threshold makes that possible.

    K = the largest number of bad rows for which P[Hypergeom(n, K, s) > m] <= γ_m (by
    ``_tail_bound``); rows with
    e_i² > t = total/(K − 1) are fewer than K − 1, so with the changed row at most K are bad.
    The good values lie in [0, t] with mean <= total/n and variance <= t·total/n; Bernstein.
    """
    def rare(bad: int) -> bool:
        return _tail_bound(m, n, bad, s) <= gamma_rows

    if not rare(2):
        return None
    low = 2  # invariant: rare(low). Gallop up first: the tail is cheap to compute for small K.
    while low < n and rare(min(2 * low, n)):
        low = min(2 * low, n)
    high = min(2 * low, n)  # not rare (or equal to low = n)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if rare(middle) else (low, middle)
    threshold = total / (low - 1)
    mean, log_term = total / n, math.log(1.0 / gamma_sum)
    deviation = threshold * log_term / 3.0 + math.sqrt((threshold * log_term / 3.0) ** 2
                                                         + 2.0 * s * threshold * mean * log_term)
    return min(total, s * mean + deviation)


def _regime(common: dict, t: Tuning, regime: str, m: int, gamma: float, order: str) -> Calibration | str:
    """Split the budget for one regime and one order of Lemma I.4's hybrid argument (which term
    carries the e^ε factor): its Calibration, or why it cannot meet the budget."""
    n, k = common["n"], common["k"]
    # a relative 2^-40 below the budget: the rules round their products and exponentials up by ulps
    epsilon = (min(common["epsilon"], SPLIT_EPSILON_CAP) - 2.0 * gamma) * (1.0 - ROUNDING_ROOM)
    delta = (common["delta"] - gamma) * (1.0 - ROUNDING_ROOM)
    if epsilon <= 0 or delta <= 0:
        return f"absorbing γ={gamma:.3g} leaves no budget"
    eps1 = t.noise_share * epsilon
    eps2 = (epsilon - eps1) / m
    if order == "noise first":  # δ1 + e^{ε1}·m·e^{(m−1)ε2}·δ2
        delta1, delta2 = delta / 2.0, math.exp(math.log(delta / (2.0 * m)) - eps1 - (m - 1) * eps2)
    else:  # e^{mε2}·δ1 + m·e^{(m−1)ε2}·δ2
        delta1, delta2 = math.exp(math.log(delta / 2.0) - m * eps2), math.exp(math.log(delta / (2.0 * m)) - (m - 1) * eps2)
    if min(delta1, delta2) < 1e-100:
        return f"Lemma I.4's e^ε factors leave no δ for the {order} order"
    eps_h, eps_t, eps_a = (share * eps2 for share in t.shares)
    lipschitz = 1.0 / (t.high - t.low)
    scale, constant = row_bound(common["radius"], common["floor"], n, common["d"], common["method"], lipschitz)
    s = t.subsample if t.subsample is not None else _default_subsample(k, eps_h, delta2 / 3.0)
    if t.subsample is None and common["method"] == "neighbourhood":
        # Δ_V ∝ sqrt(s): take the largest s whose noise radius stays a quarter of a bin (the bin
        # averages' noise falls like 1/s), but never fewer rows than the histogram needs.
        unit = Gaussian(eps1, delta1, constant / LATTICE_SHARE).sigma * math.sqrt(common["d"])
        ratio = common["bin_width"] / (4.0 * unit)
        s = min(n, max(s, n if ratio >= math.sqrt(n) else math.floor(ratio * ratio)))
    if s > n:
        return f"step 5 needs a subsample of s={s} rows > n"
    try:
        HistogramLearner(eps_h, delta2 / 3.0, s)
    except ValueError as exc:
        return f"the histogram of step 7 is not private at this split ({exc})"
    if common["method"] == "neighbourhood":  # every good row moves by at most 2b/A0, plus rounding
        sum_bound, delta_v = 0.0, constant * math.sqrt(s) / LATTICE_SHARE
    else:  # rows move by at most (2b/A0)·L·sqrt(n)·e_i + constant, Σ e_i² over good rows of S <= sum_bound
        if gamma > 0:
            sum_bound = _subsampled_sum(n, s, common["delta_w"] ** 2, m, gamma / 2.0, gamma / 2.0)
            if sum_bound is None:
                return f"more than m={m} bad rows in S is too likely"
        else:
            sum_bound = common["delta_w"] ** 2
        delta_v = (scale * lipschitz * math.sqrt(n * sum_bound) + constant * math.sqrt(s)) / LATTICE_SHARE
    min_bin = t.min_bin if t.min_bin is not None else max(2, s // (4 * k))
    diameter = common["bin_width"] * math.sqrt(common["d"])
    return Calibration(**common, subsample=s, min_bin=min_bin, regime=f"{regime} ({order})", bad_rows=m,
                       gamma_bad_rows=gamma / 2.0, gamma_bernstein=gamma / 2.0, sum_bound=sum_bound,
                       delta_v=delta_v, epsilon_noise=eps1, delta_noise=delta1, epsilon_histogram=eps_h,
                       epsilon_test=eps_t, epsilon_average=eps_a, delta_histogram=delta2 / 3.0,
                       delta_test=delta2 / 3.0, delta_average=delta2 / 3.0,
                       average_sensitivity=average_sensitivity(diameter, min_bin, s))


def average_sensitivity(diameter: float, min_bin: int, rows: int) -> float:
    """ℓ2-sensitivity of step 9's computed bin averages: exactly sqrt(2)·D/(N_min − 1) (docs/proofs.md),
    plus each computed mean offset's error γ_{s+2}·D on either input, and the corner's rounding
    (``LATTICE_SHARE``)."""
    return math.sqrt(2.0) * diameter * (1.0 / (min_bin - 1) + 2.0 * _gamma(rows + 2)) / LATTICE_SHARE
