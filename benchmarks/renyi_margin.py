"""The Poisson-subsampled Gaussian's Rényi curve against an 80-digit reference, on a full grid.

σ on a log grid over [0.5, 10^3] (and 20, 50, 100), q on a log grid over [1e-6, 1] (and 1e-3,
3e-3), orders: the Rényi filter's, every 20th of ``ORDERS`` (1 + 1e-4 to 1 + 1e7, both ends), the
integers 2..256 and a few more. For each case: the module's value (``privacy.rdp.curve``), which
must be >= the reference, and dp-accounting 0.6.0's (``RdpAccountant``'s function), whose error the
module's margins are chosen from. dp-accounting's integer sum at α = 1 + 1e7 takes ~1 min: it is
measured on a few (q, σ) only. The reference is tests/test_renyi_margin.py's.

Writes results/renyi_margin.json: worst ratio module/reference (>= 1), worst looseness, where, and
dp-accounting's worst errors. ``--cache FILE`` keeps the reference values between runs (they take
~1 h of two cores; the rest ~5 min).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import pathlib
import pickle
import sys
import time

import dp_accounting
import mpmath as mp
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as dpa

ROOT = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT.parent / "tests")]
from _common import machine  # noqa: E402
from test_renyi_margin import DIGITS, reference  # noqa: E402

from dpledger.privacy import rdp  # noqa: E402
from dpledger.mechanisms.gaussian import ORDERS  # noqa: E402

SIGMAS = sorted(set(np.geomspace(0.5, 1000.0, 12).tolist()) | {20.0, 50.0, 100.0})
RATES = sorted({10.0 ** (e / 2) for e in range(-12, 1)} | {1e-3, 3e-3})
GRID = sorted(set(rdp.FILTER_ORDERS) | set(ORDERS[::20]) | {ORDERS[-1]} | {float(a) for a in range(2, 257)}
              | {7.3, 33.3, 300.5, 1000.5, 1000.0, 1e5, 1e5 + 0.5})
SLOW = ORDERS[-1]  # dp-accounting's loop of 10^7 terms: on these (q, σ) only
SLOW_PAIRS = {(q, s) for q in (1e-6, 1e-3, 1.0) for s in (SIGMAS[0], 50.0, SIGMAS[-1])}
REVIEWED = dict(sigma=(20.0, 100.0), q=(1e-4, 3e-3))  # where the privacy review found dp-accounting low
OLD_MARGIN, OLD_ABSOLUTE = 1e-9, 1e-18  # the module's margins before: values·(1 + 1e-9) + 1e-18


def evaluate(task):
    """The reference values (unless given) and rows (q, σ, α, reference, module, dp-accounting) of one (q, σ)."""
    pair, refs = task
    q, sigma = pair
    logging.disable(logging.WARNING)  # dp-accounting's "failed to converge" for its ∞ values
    if refs is None:
        refs = {a: mp.nstr(reference(q, sigma, a), DIGITS) for a in GRID}
    started = time.perf_counter()
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    module = rdp.curve(event, tuple(GRID))
    seconds = time.perf_counter() - started
    rows = []
    for alpha, value in zip(GRID, module):
        slow = alpha == SLOW and q != 1 and pair not in SLOW_PAIRS
        dp = None if slow else float(dpa._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])
        rows.append((q, sigma, alpha, refs[alpha], float(value), dp))
    return pair, refs, rows, seconds


def summary(rows):
    with mp.workdps(DIGITS):
        cases = []
        for q, sigma, alpha, ref, module, dp in rows:
            ref = mp.mpf(ref)
            case = dict(q=q, sigma=sigma, alpha=alpha, integer=float(alpha).is_integer(), reference=float(ref),
                        module=module, ratio=float(mp.mpf(module) / ref) if ref > 0 else 1.0, dp=dp)
            if dp is not None and np.isfinite(dp) and ref > 0:
                case["dp_relative"] = float(mp.mpf(dp) / ref - 1)
                case["dp_absolute"] = float(mp.mpf(dp) - ref)
                case["dp_absolute_log_a"] = float((mp.mpf(dp) - ref) * (mp.mpf(alpha) - 1))
                case["old_ratio"] = float(mp.mpf(dp * (1 + OLD_MARGIN) + OLD_ABSOLUTE) / ref)
            cases.append(case)

    def where(case):
        return {k: case[k] for k in ("q", "sigma", "alpha", "reference", "module", "dp") if k in case}

    def worst(selected, key, largest, count=5):
        ranked = sorted((c for c in selected if key in c), key=lambda c: c[key], reverse=largest)[:count]
        return [dict(where(c), **{key: c[key]}) for c in ranked]

    integer = [c for c in cases if c["integer"]]
    fractional = [c for c in cases if not c["integer"]]
    reviewed = [c for c in integer if REVIEWED["sigma"][0] <= c["sigma"] <= REVIEWED["sigma"][1]
                and REVIEWED["q"][0] <= c["q"] <= REVIEWED["q"][1]]
    infinite = [c for c in cases if c["dp"] is not None and not np.isfinite(c["dp"])]
    below_old = [c for c in cases if c.get("old_ratio", 2.0) < 1]
    result = {
        "cases": len(cases),
        "module": {
            "worst_ratio": min(c["ratio"] for c in cases),
            "worst_looseness": max(c["ratio"] for c in cases) - 1,
            "all_above_reference": all(c["ratio"] >= 1 for c in cases),
            "lowest_ratios": worst(cases, "ratio", largest=False),
            "worst_looseness_integer_orders": max(c["ratio"] for c in integer) - 1,
            "worst_looseness_fractional_orders": max(c["ratio"] for c in fractional) - 1,
            "median_looseness_fractional_orders": float(np.median([c["ratio"] - 1 for c in fractional])),
            "fractional_orders_looser_than_1e-6": sum(c["ratio"] > 1 + 1e-6 for c in fractional),
            "loosest_integer": worst(integer, "ratio", largest=True),
            "loosest_fractional": worst(fractional, "ratio", largest=True),
            "infinite_values": sum(not np.isfinite(c["module"]) for c in cases),
        },
        "dp_accounting": {
            "integer_orders": {
                "worst_relative_below": worst(integer, "dp_relative", largest=False),
                "worst_absolute_below_log_a": worst(integer, "dp_absolute_log_a", largest=False),
                "worst_relative_above": max(c.get("dp_relative", 0) for c in integer),
            },
            "fractional_orders": {
                "worst_relative_below": worst(fractional, "dp_relative", largest=False),
                "worst_absolute_below_log_a": worst(fractional, "dp_absolute_log_a", largest=False),
                "worst_relative_above": max(c.get("dp_relative", 0) for c in fractional),
                "median_relative": float(np.median([c["dp_relative"] for c in fractional if "dp_relative" in c])),
            },
            "reviewed_region_integer_orders": {
                "cases": len(reviewed),
                "worst_relative_below": worst(reviewed, "dp_relative", largest=False, count=3),
                "old_module_below_reference": sum(c.get("old_ratio", 2.0) < 1 for c in reviewed),
                "old_module_worst": worst(reviewed, "old_ratio", largest=False, count=3),
            },
            "infinite": {"count": len(infinite), "fractional": sum(not c["integer"] for c in infinite),
                         "smallest_alpha": min((c["alpha"] for c in infinite), default=None),
                         "largest_alpha": max((c["alpha"] for c in infinite), default=None)},
            "old_module_below_reference": {"count": len(below_old),
                                           "integer": sum(c["integer"] for c in below_old),
                                           "worst": worst(below_old, "old_ratio", largest=False)},
        },
        "smallest_reference": worst(cases, "reference", largest=False, count=3),
    }
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=pathlib.Path, help="a pickle of the reference values, read or written")
    arguments = parser.parse_args()
    pairs = [(q, s) for q in RATES for s in SIGMAS]
    started = time.perf_counter()
    refs = pickle.loads(arguments.cache.read_bytes()) if arguments.cache and arguments.cache.exists() else {}
    rows, module_seconds = [], []
    with multiprocessing.Pool(os.cpu_count()) as pool:
        tasks = [(pair, refs.get(pair)) for pair in pairs]
        for i, (pair, values, pair_rows, seconds) in enumerate(pool.imap_unordered(evaluate, tasks)):
            refs[pair] = values
            rows += pair_rows
            module_seconds.append(seconds)
            print(f"{i + 1}/{len(pairs)} (q, σ), {time.perf_counter() - started:.0f} s", flush=True)
    if arguments.cache:
        arguments.cache.write_bytes(pickle.dumps(refs))
    result = {
        "grid": {"sigmas": SIGMAS, "rates": RATES, "orders": len(GRID), "smallest_order": GRID[0],
                 "largest_order": GRID[-1], "integer_orders": sum(float(a).is_integer() for a in GRID),
                 "reference_digits": DIGITS, "dp_accounting_at_1e7_only_on": sorted(SLOW_PAIRS)},
        **summary(rows),
        "seconds": {"total": time.perf_counter() - started,
                    "module_curve_per_pair_median": float(np.median(module_seconds)),
                    "module_curve_per_pair_max": max(module_seconds)},
    }
    out = ROOT / "results" / "renyi_margin.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"machine": machine(), **result}, indent=2, default=float) + "\n")
    module = result["module"]
    print(f"{result['cases']} cases: worst module/reference {module['worst_ratio']!r} (>= 1: "
          f"{module['all_above_reference']}), looseness {module['worst_looseness_integer_orders']:.3g} at integer "
          f"orders, {module['worst_looseness_fractional_orders']:.3g} at fractional ones; wrote {out}")


if __name__ == "__main__":
    main()
