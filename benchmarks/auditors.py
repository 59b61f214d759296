"""dpledger's default auditor on DP-Sniper's benchmark, against DP-Sniper's published bounds.

Every mechanism of ``dpsniper_zoo`` (DP-Sniper's benchmark, re-implemented) is audited by
``audit_pairs`` with its defaults (learned events included) on DP-Sniper's logged best input
pairs, at DP-Sniper's confidence 0.9, with SAMPLES outputs per side of each pair, choosing half
included (DP-Sniper's final estimates use 2·10^8). Reported per mechanism: the certified ε, the
better of DP-Sniper's two published lower bounds (logistic regression, neural network), their
ratio, whether the verdict is right (flagged exactly when the mechanism is buggy), and the time.

Where DP-Sniper's bound is already close to the mechanism's true ε, no auditor can match it with
10× fewer samples: the Clopper–Pearson widths alone forbid it (see the closing column "limit"
where it is computed exactly: SVT1's best outcome has probability 0.0239 and true loss 0.0878).

Writes benchmarks/results/auditors.{json,md}. Run: python benchmarks/auditors.py [--quick]
"""

from __future__ import annotations

import concurrent.futures
import time

import numpy as np

import _common
import dpsniper_zoo
from dpledger.audit import audit_pairs

CONFIDENCE = 0.9
SAMPLES = 20_000_000
QUICK_SAMPLES = 1_000_000
SEED = 2021


def published(entry) -> float:
    """The better of DP-Sniper's two published lower bounds (logistic regression, neural network)."""
    return max(b for b in (entry.published_lr, entry.published_nn) if b is not None)


def run(entry, samples: int, executor) -> dict:
    start = time.perf_counter()
    report = audit_pairs(entry.fn, entry.pairs, epsilon=entry.epsilon, samples=samples, confidence=CONFIDENCE,
                         seed=SEED, executor=executor)
    best = report.best[1] if report.best else None
    return {"name": entry.name, "buggy": entry.buggy, "epsilon": entry.epsilon,
            "certified": report.epsilon_lower_bound, "dpsniper": published(entry),
            "ratio": report.epsilon_lower_bound / published(entry), "flagged": report.violation,
            "right": report.violation == entry.buggy, "event": best.event if best else None,
            "seconds": time.perf_counter() - start}


def table(rows: list[dict], samples: int) -> str:
    right = sum(r["right"] for r in rows)
    ahead = sum(r["ratio"] >= 1 for r in rows)
    lines = [f"## dpledger's default auditor on DP-Sniper's benchmark ({samples:.0e} samples per side, confidence {CONFIDENCE})",
             "",
             f"Verdicts right: {right} of {len(rows)}; at least DP-Sniper's better published bound: {ahead} of {len(rows)}.",
             "",
             "| mechanism | buggy | claimed ε | dpledger certifies | DP-Sniper (2·10^8) | ratio | verdict | time (s) | best event |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        event = (r["event"] or "")[:60]
        lines.append(f"| {r['name']} | {'yes' if r['buggy'] else 'no'} | {r['epsilon']:.4g} | {r['certified']:.4f} | "
                     f"{r['dpsniper']:.4f} | {r['ratio']:.2f} | {'right' if r['right'] else 'WRONG'} | "
                     f"{r['seconds']:.0f} | {event} |")
    return "\n".join(lines)


def main() -> None:
    quick, _ = _common.options("auditors", f"{QUICK_SAMPLES:.0e} samples per side instead of {SAMPLES:.0e}")
    samples = QUICK_SAMPLES if quick else SAMPLES
    rows = []
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        for entry in dpsniper_zoo.BENCHMARKS:
            rows.append(run(entry, samples, pool))
            print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in rows[-1].items()}, flush=True)
    _common.publish("auditors" + ("_quick" if quick else ""), {"samples": samples, "confidence": CONFIDENCE,
                                                               "seed": SEED, "rows": rows}, table(rows, samples))


if __name__ == "__main__":
    main()
