"""DP-Sniper's benchmark mechanisms as batched ``dpledger.audit`` targets.

Re-implements, in our own numpy, the mechanisms that DP-Sniper evaluates:
B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers", IEEE S&P 2021. The sparse-vector variants follow the
numbering of M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for Differential
Privacy", PVLDB 10(6), 2017 (SVT1..SVT6 = their Algorithms 1..6).

Everything below was read from the public repository github.com/eth-sri/dp-sniper (commit ee087b2):

- the mechanism list and its parameters (c, T, ε, sizes): ``dpsniper/experiments/exp_default.py``
  (the logistic-regression and neural-network runs) and ``dpsniper/experiments/exp_floating_point.py``
  (the floating-point case study), definitions in ``dpsniper/mechanisms/*.py``;
- the input pairs: DD-Search runs every pair of the StatDP pattern generator
  ``dpsniper/input/pattern_generator.py`` (``patterns`` below rebuilds that whole set) and logs the
  one it found best as ``best_result``; each entry's ``pairs`` are those best pairs, the
  logistic-regression run's first, then the neural-network run's when it differs, exactly as logged in
  ``eval_sp2021/reference-results/dd_search_reg_data.log`` / ``dd_search_mlp_data.log``
  (``floating_point_data.log`` / ``floating_fixed_data.log`` for the floating-point pair);
- the published bounds: ``published_lr`` / ``published_nn`` are the ``eps_lcb`` records (the final
  90%-confidence lower bound on ε from 2·10^8 samples, which ``eval_sp2021/plots/create_plots.py``
  plots in the paper's power figure) of those same logs, rounded to 4 decimals.

Output encodings (all float64): ⊥/⊤ label vectors are 0/1 of fixed length, padded with 0 after an
abort; mixed vectors hold the released number, ``-inf`` for ⊥ (and for positions after an abort);
categorical outputs are integer codes. DP-Sniper's own special values (-1, -1000, -2000) are not used.

Run: python benchmarks/dpsniper_zoo.py (a smoke check of shapes and encodings, no audits).
"""

from __future__ import annotations

import math
import pickle
from typing import Callable

import attrs
import numpy as np

EPS = 0.1  # DP-Sniper's eps parameter for every mechanism of exp_default.py (LaplaceParallel aside)


# ---------------------------------------------------------------- helpers
def _vec(data) -> np.ndarray:
    return np.asarray(data, dtype=float).reshape(-1)


def _scalar(data) -> float:
    return float(_vec(data)[0])


def _after_abort(above: np.ndarray, c: int) -> np.ndarray:
    """True at every query that comes after the c-th ⊤ of its run (the SVT has stopped)."""
    return np.cumsum(above, axis=1) - above >= c


def _labels(above: np.ndarray, c: int | None) -> np.ndarray:
    """0/1 labels; with a cut-off c, positions after the c-th ⊤ are padded with 0."""
    return (above if c is None else above & ~_after_abort(above, c)).astype(float)


def _mixed(above: np.ndarray, values: np.ndarray, c: int) -> np.ndarray:
    """The released value where ⊤, -inf where ⊥ and after the c-th ⊤."""
    return np.where(above & ~_after_abort(above, c), values, -np.inf)


# ---------------------------------------------------------------- Laplace, geometric, histograms
def laplace(data, rng, size, eps=EPS):
    """Laplace mechanism: x + Lap(1/ε) on a sensitivity-1 scalar, ε-DP (in exact arithmetic)."""
    return _scalar(data) + rng.laplace(0.0, 1.0 / eps, size)


def _geo_k(eps: float) -> int:
    return math.ceil(math.log(2.0 / eps))  # natural log, as DP-Sniper instantiates Balcer-Vadhan


def truncated_geometric(data, rng, size, eps=EPS, n=5):
    """Balcer & Vadhan's GeoSample(ε, n) (their Alg. 4.8) on a count c in {0..n}.

    Its CDF is that of c + G clamped to [0, n], with G two-sided geometric, P[G = g] ∝ r^|g|,
    r = 2^k / (2^k + 1), k = ceil(ln(2/ε)); so it is ln(1 + 2^-k)-DP (their Thm 4.7), which for
    DP-Sniper's ε = 0.1 (k = 3) is ln(1.125) = 0.1178, not 0.1. Sampled as a difference of geometrics.
    """
    r = 2.0 ** _geo_k(eps) / (2.0 ** _geo_k(eps) + 1.0)
    g = rng.geometric(1.0 - r, size) - rng.geometric(1.0 - r, size)
    return np.clip(round(_scalar(data)) + g, 0, n).astype(float)


def noisy_hist1(data, rng, size, eps=EPS):
    """NoisyHist1 (StatDP Alg. 9): each bin + Lap(1/ε). ε-DP: pairs change one bin by 1."""
    return _vec(data) + rng.laplace(0.0, 1.0 / eps, (size, np.size(data)))


def noisy_hist2(data, rng, size, eps=EPS):
    """NoisyHist2 (StatDP Alg. 10): each bin + Lap(ε), noise scale inverted. Only (1/ε)-DP = 10-DP."""
    return _vec(data) + rng.laplace(0.0, eps, (size, np.size(data)))


# ---------------------------------------------------------------- report noisy max (StatDP Algs. 5-8)
def report_noisy_max1(data, rng, size, eps=EPS):
    """ReportNoisyMax1: index of the max of q + Lap(2/ε). ε-DP (only the argmax is released)."""
    return np.argmax(_vec(data) + rng.laplace(0.0, 2.0 / eps, (size, np.size(data))), axis=1).astype(float)


def report_noisy_max2(data, rng, size, eps=EPS):
    """ReportNoisyMax2: index of the max of q + Exp(2/ε). ε-DP (the argmax only)."""
    return np.argmax(_vec(data) + rng.exponential(2.0 / eps, (size, np.size(data))), axis=1).astype(float)


def report_noisy_max3(data, rng, size, eps=EPS):
    """ReportNoisyMax3: releases the max *value* of q + Lap(2/ε). Not ε-DP: the value leaks."""
    return np.max(_vec(data) + rng.laplace(0.0, 2.0 / eps, (size, np.size(data))), axis=1)


def report_noisy_max4(data, rng, size, eps=EPS):
    """ReportNoisyMax4: releases the max *value* of q + Exp(2/ε). Not ε-DP."""
    return np.max(_vec(data) + rng.exponential(2.0 / eps, (size, np.size(data))), axis=1)


# ---------------------------------------------------------------- sparse vector (Lyu, Su & Li 2017)
def svt1(data, rng, size, eps=EPS, c=1, t=0.5):
    """SVT1 (Lyu Alg. 1): ρ ~ Lap(2/ε), ν_i ~ Lap(4c/ε), ⊤ iff q_i + ν_i >= T + ρ, stop after c ⊤. ε-DP."""
    q, rho = _vec(data), rng.laplace(0.0, 1.0 / (eps / 2), (size, 1))  # ε1 = ε2 = ε/2
    return _labels(q + rng.laplace(0.0, 2.0 * c / (eps / 2), (size, q.size)) >= t + rho, c)


def svt2(data, rng, size, eps=EPS, c=1, t=1.0):
    """SVT2 (Lyu Alg. 2, Dwork & Roth): ρ ~ Lap(2c/ε), redrawn after every ⊤; ν_i ~ Lap(4c/ε). ε-DP."""
    q, rho = _vec(data), rng.laplace(0.0, c / (eps / 2), size)
    nu = rng.laplace(0.0, 2.0 * c / (eps / 2), (size, q.size))
    above = np.zeros((size, q.size), dtype=bool)
    for i in range(q.size):  # a loop over the 10 queries, vectorised over the runs
        above[:, i] = q[i] + nu[:, i] >= t + rho
        rho = np.where(above[:, i], rng.laplace(0.0, c / (eps / 2), size), rho)
    return _labels(above, c)


def svt3(data, rng, size, eps=EPS, c=1, t=1.0):
    """SVT3 (Lyu Alg. 3): as SVT1 with ν_i ~ Lap(2c/ε) but releases q_i + ν_i at every ⊤.
    Not ε-DP for any ε: the released noisy answers reveal the queries (∞-DP)."""
    rho = rng.laplace(0.0, 1.0 / (eps / 2), (size, 1))
    noisy = _vec(data) + rng.laplace(0.0, c / (eps / 2), (size, np.size(data)))
    return _mixed(noisy >= t + rho, noisy, c)


def svt4(data, rng, size, eps=EPS, c=1, t=1.0):
    """SVT4 (Lyu Alg. 4): ε1 = ε/4, ρ ~ Lap(1/ε1), ν_i ~ Lap(1/(ε - ε1)) independent of c.
    Only ((1 + 6c)/4)ε-DP (0.175 at c = 1), so not ε-DP."""
    q, rho = _vec(data), rng.laplace(0.0, 1.0 / (eps / 4), (size, 1))
    return _labels(q + rng.laplace(0.0, 1.0 / (eps - eps / 4), (size, q.size)) >= t + rho, c)


def svt5(data, rng, size, eps=EPS, t=1.0):
    """SVT5 (Lyu Alg. 5): noisy threshold ρ ~ Lap(2/ε) but no noise on the queries and no cut-off.
    Not ε-DP for any ε (∞-DP)."""
    return _labels(_vec(data) >= t + rng.laplace(0.0, 1.0 / (eps / 2), (size, 1)), None)


def svt6(data, rng, size, eps=EPS, t=1.0):
    """SVT6 (Lyu Alg. 6): ρ ~ Lap(2/ε), ν_i ~ Lap(2/ε), but no cut-off. Not ε-DP for any ε (∞-DP)."""
    q, rho = _vec(data), rng.laplace(0.0, 1.0 / (eps / 2), (size, 1))
    return _labels(q + rng.laplace(0.0, 1.0 / (eps / 2), (size, q.size)) >= t + rho, None)


def numerical_svt(data, rng, size, eps=EPS, c=2, t=1.0):
    """NumericalSVT (Wang et al., PLDI 2019): ρ ~ Lap(3/ε), ⊤ iff q_i + Lap(6c/ε) >= T + ρ, and at a ⊤
    releases a fresh q_i + Lap(3c/ε); stops after c ⊤. ε-DP (the fresh noise is paid for)."""
    q, rho = _vec(data), rng.laplace(0.0, 3.0 / eps, (size, 1))
    above = q + rng.laplace(0.0, 6.0 * c / eps, (size, q.size)) >= t + rho
    return _mixed(above, q + rng.laplace(0.0, 3.0 * c / eps, (size, q.size)), c)


def svt34_parallel(data, rng, size, eps=EPS, c=2, t=1.0):
    """SVT34Parallel: SVT3 and SVT4 (each ε, c = 2) on the same queries, outputs concatenated.
    Claimed 2ε by composition; not: its SVT3 half is ∞-DP."""
    return np.hstack([svt3(data, rng, size, eps, c, t), svt4(data, rng, size, eps, c, t)])


# ---------------------------------------------------------------- RAPPOR (Erlingsson et al. 2014)
def murmur3_32(key: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit, as a signed int (what DP-Sniper's ``mmh3.hash`` returns)."""
    mask, c1, c2 = 0xFFFFFFFF, 0xCC9E2D51, 0x1B873593
    def scramble(k: int) -> int:
        k = (k * c1) & mask
        return (((k << 15) | (k >> 17)) & mask) * c2 & mask
    h, body = seed & mask, len(key) - len(key) % 4
    for i in range(0, body, 4):
        h ^= scramble(int.from_bytes(key[i:i + 4], "little"))
        h = ((((h << 13) | (h >> 19)) & mask) * 5 + 0xE6546B64) & mask
    if body < len(key):
        h ^= scramble(int.from_bytes(key[body:], "little"))
    h ^= len(key)
    for shift, mult in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h = ((h ^ (h >> shift)) * mult) & mask
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def bloom(data, hashes=4, bits=20) -> np.ndarray:
    """Bloom filter of the integer value: bit mmh3(str(v), seed=i) mod bits, i < hashes."""
    key = str(int(np.asarray(data).reshape(-1)[0])).encode()
    out = np.zeros(bits)
    out[[murmur3_32(key, i) % bits for i in range(hashes)]] = 1.0
    return out


def _permanent_rr(data, rng, size, f, hashes, bits):
    u = rng.random((size, bits))
    return np.where(u < f / 2, 1.0, np.where(u < f, 0.0, bloom(data, hashes, bits)))


def one_time_rappor(data, rng, size, f=0.95, hashes=4, bits=20):
    """One-time RAPPOR (steps 1-2): Bloom filter, each bit set to 1 / 0 w.p. f/2 each, else kept.
    ε = 2h ln((1 - f/2)/(f/2)) = 0.80 (RAPPOR paper); 0.60 is tight for 0 vs 1 (6 bits differ)."""
    return _permanent_rr(data, rng, size, f, hashes, bits)


def rappor(data, rng, size, f=0.75, p=0.45, q=0.55, hashes=4, bits=20):
    """RAPPOR (steps 1-3, one report): permanent RR with f, then report 1 w.p. q on a 1, p on a 0.
    ε_1 = h ln(q*(1-p*)/(p*(1-q*))) = 0.40 (RAPPOR paper); 0.30 is tight for 0 vs 1."""
    prr = _permanent_rr(data, rng, size, f, hashes, bits)
    return (rng.random((size, bits)) < np.where(prr == 1.0, q, p)).astype(float)


def _rappor_eps(f, p=None, q=None, hashes=4) -> float:
    if p is None:  # one-time: per-bit ratio (1 - f/2)/(f/2), h bits on each side
        return 2 * hashes * math.log((1 - f / 2) / (f / 2))
    qs, ps = f / 2 * (p + q) + (1 - f) * q, f / 2 * (p + q) + (1 - f) * p
    return hashes * math.log(qs * (1 - ps) / (ps * (1 - qs)))


# ---------------------------------------------------------------- parallel, prefix sum, snapping
def laplace_parallel(data, rng, size, eps=0.005, copies=20):
    """LaplaceParallel: 20 independent Laplace(1/0.005) releases of one scalar: 20·0.005 = 0.1-DP."""
    return _scalar(data) + rng.laplace(0.0, 1.0 / eps, (size, copies))


def prefix_sum(data, rng, size, eps=EPS):
    """PrefixSum (Wang et al., PLDI 2019): prefix sums of q + Lap(1/ε). ε-DP when one entry changes,
    but DP-Sniper's pairs move all 10 entries by 1: the loss is ε‖a - a'‖₁ = 1.0, so not 0.1-DP there."""
    return np.cumsum(_vec(data) + rng.laplace(0.0, 1.0 / eps, (size, np.size(data))), axis=1)


def laplace_snapping(data, rng, size, eps=EPS, bound=100.0):
    """Mironov's snapping mechanism (DP-Sniper's LaplaceFixed): clamp to [-B, B], add sign·λ·ln U with
    λ = (1 + B 2^-49)/ε, round to a multiple of Λ (the power of 2 >= λ), clamp. ε-DP in floating point."""
    lam = (1.0 + bound * 2.0 ** -49) / eps
    step = 2.0 ** math.ceil(math.log2(lam))
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    noisy = np.clip(_scalar(data), -bound, bound) + sign * lam * np.log(1.0 - rng.random(size))
    return np.clip(np.round(noisy / step) * step, -bound, bound)


# ---------------------------------------------------------------- the table
@attrs.frozen(eq=False)
class Benchmark:
    """One DP-Sniper benchmark: ``fn(data, rng, size)`` with the claim it is audited against."""

    name: str  # DP-Sniper's (class / experiment) name
    fn: Callable
    epsilon: float
    buggy: bool  # not ε-DP on DP-Sniper's neighbourhood
    pairs: tuple  # ((a, a'), ...): the best pairs DD-Search logged (LR run's first, then NN's)
    published_lr: float | None  # eps_lcb, dd_search_reg_data.log
    published_nn: float | None  # eps_lcb, dd_search_mlp_data.log (or floating_*_data.log)
    encoding: str
    kind: str  # real | code | labels | mixed | labels+mixed: what the smoke check allows
    domain: tuple  # (dimensions, 'int' | 'float', low, high, component-wise) of the pattern generator
    cutoff: int | None = None  # an SVT's c: at most c ⊤ per run
    delta: float = 0.0
    ideal_reals: bool = True  # the label is about the mechanism on the reals (False: about its float64 outputs)


def _pairs(domain, *logged) -> tuple:
    """Pairs written as in the logs ("0 1 1 1 1", ...), repeats dropped, in the domain's dtype."""
    dtype = np.int64 if domain[1] == "int" else np.float64
    return tuple(tuple(np.array(v.split(), dtype=float).astype(dtype) for v in pair) for pair in dict.fromkeys(logged))


def patterns(domain) -> list:
    """DP-Sniper's whole generated pair set (StatDP's patterns), both orders, clipped to the domain."""
    d, base, low, high, componentwise = domain
    h, ones = d // 2, [1] * d
    raw = [(ones, [0] + [1] * (d - 1)), (ones, [2] + [1] * (d - 1))]
    if componentwise:
        raw += [(ones, [2] + [0] * (d - 1)), (ones, [0] + [2] * (d - 1)), (ones, [2] * h + [0] * (d - h)),
                (ones, [2] * d), (ones, [0] * d), ([1] * h + [0] * (d - h), [0] * h + [1] * (d - h))]
    dtype = np.int64 if base == "int" else np.float64
    out = []
    for a, b in raw:
        a, b = (np.clip(np.array(v), low, high).astype(dtype) for v in (a, b))
        out += [(a, b), (b, a)]
    return out


_ONE_F, _ONE_I = (1, "float", -10, 10, False), (1, "int", -10, 10, False)
_RNM, _SVT = (5, "float", -10, 10, True), (10, "float", -10, 10, True)
_HIST, _GEO = (5, "int", 0, 10, False), (1, "int", 0, 5, False)
_X, _XS = "1 1 1 1 1 0 0 0 0 0", "0 0 0 0 0 1 1 1 1 1"  # the X-shape pattern and its swap
_ONES, _HALF, _H0, _H1 = "1" + " 1" * 9, "2 2 2 2 2 0 0 0 0 0", "0 1 1 1 1", "1 1 1 1 1"
REAL, CODE = "real: released value(s), float64", "categorical: argmax index 0..4 as a float code"
ABORT = "labels: 1 = ⊤, 0 = ⊥, 0-padded after the c-th ⊤ (lossless: #1s == c iff the run aborted)"
NOCUT = "labels: 1 = ⊤, 0 = ⊥; no cut-off, every query answered"
MIXED = "mixed: noisy value at ⊤, -inf at ⊥ and after the c-th ⊤ (lossless: #finite == c iff aborted)"

BENCHMARKS: list[Benchmark] = [
    Benchmark("LaplaceMechanism", laplace, EPS, False, _pairs(_ONE_F, ("1", "2"), ("0", "1")), 0.0968, 0.0976,
              REAL, "real", _ONE_F),
    # ε is the guarantee of DP-Sniper's instantiation (k = ceil(ln 20) = 3), see truncated_geometric
    Benchmark("TruncatedGeometricMechanism", truncated_geometric, math.log1p(2.0 ** -_geo_k(EPS)), False,
              _pairs(_GEO, ("2", "1")), 0.1156, 0.1155, "integer output 0..5 as float64", "code", _GEO),
    Benchmark("NoisyHist1", noisy_hist1, EPS, False, _pairs(_HIST, (_H0, _H1), (_H1, _H0)), 0.0978, 0.0977,
              REAL, "real", _HIST),
    Benchmark("NoisyHist2", noisy_hist2, EPS, True, _pairs(_HIST, (_H0, _H1), (_H1, "2 1 1 1 1")), 4.6020, 4.6015,
              REAL, "real", _HIST),
    Benchmark("ReportNoisyMax1", report_noisy_max1, EPS, False, _pairs(_RNM, (_H1, "0 2 2 2 2")), 0.0923, 0.0925,
              CODE, "code", _RNM),
    Benchmark("ReportNoisyMax2", report_noisy_max2, EPS, False, _pairs(_RNM, (_H1, "0 2 2 2 2")), 0.0975, 0.0979,
              CODE, "code", _RNM),
    Benchmark("ReportNoisyMax3", report_noisy_max3, EPS, True, _pairs(_RNM, ("0 0 0 0 0", _H1), (_H1, "2 2 2 2 2")),
              0.2478, 0.2488, REAL, "real", _RNM),
    Benchmark("ReportNoisyMax4", report_noisy_max4, EPS, True, _pairs(_RNM, (_H1, "2 2 2 2 2")), 0.3463, 0.3534,
              REAL, "real", _RNM),
    # SVT1, SVT2, SVT4 stop after c = 1 ⊤: 0-padding is lossless (a single 1 in the vector iff aborted)
    Benchmark("SparseVectorTechnique1", svt1, EPS, False, _pairs(_SVT, (_XS, _X), (_ONES, _HALF)), 0.0858, 0.0858,
              ABORT, "labels", _SVT, 1),
    Benchmark("SparseVectorTechnique2", svt2, EPS, False, _pairs(_SVT, (_XS, _X)), 0.0859, 0.0852,
              ABORT, "labels", _SVT, 1),
    # SVT3 (c = 1) is mixed: -inf after the released value is lossless (a single finite entry iff aborted)
    Benchmark("SparseVectorTechnique3", svt3, EPS, True, _pairs(_SVT, (_ONES, _HALF), (_XS, _X)), 0.1716, 0.1822,
              MIXED, "mixed", _SVT, 1),
    Benchmark("SparseVectorTechnique4", svt4, EPS, True, _pairs(_SVT, (_ONES, _HALF)), 0.1687, 0.1696,
              ABORT, "labels", _SVT, 1),
    # SVT5 and SVT6 have no cut-off: nothing to pad
    Benchmark("SparseVectorTechnique5", svt5, EPS, True, _pairs(_SVT, (_HALF, _ONES), ("0" + " 2" * 9, _ONES)),
              1.7612, 1.7610, NOCUT, "labels", _SVT),
    Benchmark("SparseVectorTechnique6", svt6, EPS, True, _pairs(_SVT, (_X, _XS), (_XS, _X)), 0.2720, 0.2698,
              NOCUT, "labels", _SVT),
    # ε: the RAPPOR paper's bound for these parameters (DP-Sniper states none; its StatDP runs pass eps 0)
    Benchmark("Rappor", rappor, _rappor_eps(0.75, 0.45, 0.55), False, _pairs(_ONE_I, ("1", "0")), 0.2930, 0.3008,
              "bits: the 20 reported bits, 0/1", "labels", _ONE_I),
    Benchmark("OneTimeRappor", one_time_rappor, _rappor_eps(0.95), False, _pairs(_ONE_I, ("1", "0"), ("0", "1")),
              0.5978, 0.5999, "bits: the 20 permanent-RR bits, 0/1", "labels", _ONE_I),
    Benchmark("LaplaceParallel", laplace_parallel, 20 * 0.005, False, _pairs(_ONE_F, ("1", "0"), ("0", "1")),
              0.0350, 0.0299, REAL + " (20 copies)", "real", _ONE_F),
    # [0:10] SVT3 with c = 2, -inf-padded: lossless (2 finite entries iff aborted);
    # [10:20] SVT4 with c = 2, 0-padded: lossless (two 1s iff aborted)
    Benchmark("SVT34Parallel", svt34_parallel, 2 * EPS, True, _pairs(_SVT, (_ONES, _HALF)), 0.2610, 0.2616,
              "[0:10] " + MIXED + "; [10:20] " + ABORT, "labels+mixed", _SVT, 2),
    Benchmark("PrefixSum", prefix_sum, EPS, True, _pairs(_SVT, (_ONES, "0" + " 0" * 9)), 0.5040, 0.5774,
              REAL, "real", _SVT),
    # c = 2: -inf after the second released value is lossless (2 finite entries iff aborted)
    Benchmark("NumericalSVT", numerical_svt, EPS, False, _pairs(_SVT, ("2" + " 2" * 9, _ONES), (_X, _XS)),
              0.0343, 0.0345, MIXED + " (DP-Sniper writes 0 for ⊥)", "mixed", _SVT, 2),
    # the floating-point case study (neural network on the 64 bits of the output only, no LR run):
    # the textbook float Laplace, the same fn as LaplaceMechanism, is not 0.1-DP on its float outputs
    Benchmark("floating_point", laplace, EPS, True, _pairs(_ONE_F, ("1", "0")), None, 0.2521,
              "real: the raw float64 (its bit pattern leaks)", "real", _ONE_F, ideal_reals=False),
    Benchmark("floating_fixed", laplace_snapping, EPS, False, _pairs(_ONE_F, ("0", "1")), None, 0.0979,
              "real: multiples of Λ = 16 in [-100, 100]", "real", _ONE_F, ideal_reals=False),
]


# ---------------------------------------------------------------- smoke check
def _check(entry: Benchmark, out: np.ndarray, size: int) -> None:
    """dtype, shape, no NaN, and the encoding's values (labels 0/1 with at most c ones, mixed finite or -inf)."""
    assert out.dtype == np.float64 and out.shape[0] == size and out.ndim in (1, 2), (entry.name, out.dtype, out.shape)
    labels, mixed = (out[:, 10:], out[:, :10]) if entry.kind == "labels+mixed" else (out, out)
    assert not np.isnan(out).any(), entry.name
    if entry.kind in ("real", "code"):
        assert np.isfinite(out).all() and (entry.kind == "real" or np.all(out == np.round(out))), entry.name
    if "labels" in entry.kind:
        assert np.isin(labels, (0.0, 1.0)).all(), entry.name
        assert entry.cutoff is None or labels.sum(axis=1).max() <= entry.cutoff, entry.name
    if "mixed" in entry.kind:
        assert not np.isposinf(mixed).any() and np.isfinite(mixed).sum(axis=1).max() <= entry.cutoff, entry.name


def main(size: int = 1000, seed: int = 2021) -> None:
    rng = np.random.default_rng(seed)
    print(f"{'name':28s} {'shape':10s} {'buggy':5s} {'eps':>7s} {'LR':>7s} {'NN':>7s} pairs")
    for entry in BENCHMARKS:
        pickle.loads(pickle.dumps(entry.fn))
        assert all(any(np.array_equal(a, x) and np.array_equal(b, y) for x, y in patterns(entry.domain))
                   for a, b in entry.pairs), f"{entry.name}: a logged pair is not a DP-Sniper pattern"
        outs = [entry.fn(side, rng, size=size) for side in entry.pairs[0]]
        for out in outs:
            _check(entry, out, size)
        assert outs[0].shape == outs[1].shape, entry.name
        lr, nn = ("-" if v is None else f"{v:.4f}" for v in (entry.published_lr, entry.published_nn))
        print(f"{entry.name:28s} {str(outs[0].shape):10s} {str(entry.buggy):5s} {entry.epsilon:7.4f} {lr:>7s} "
              f"{nn:>7s} {len(entry.pairs)}")
    print(f"ok: {len(BENCHMARKS)} mechanisms, {size} outputs per side of each first pair")


if __name__ == "__main__":
    main()
