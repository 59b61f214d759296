"""How much of a mechanism's true ε does ``audit_pairs`` certify, and how fast does it sample?

Measures (confidence 0.95, pair (0, 1), sensitivity-1 scalar):

- Laplace(1/ε) at ε = 1 and ε = 0.1 with 10^6 samples per side, over several seeds: the fraction
  of ε certified (targets >= 0.97 and >= 0.90), next to references computed at the *expected*
  counts of the best event {s >= 1}: the single-test limit with all 10^6 samples testing and the
  limit of this auditor's protocol (half the samples test, the leading test's budget), each for
  the ratio test the auditor uses and for two separate Clopper–Pearson bounds (its former test).
- The classic Gaussian σ = sqrt(2 ln(1.25/δ))/ε at (1, 1e-5): certified ε and its fraction of the
  mechanism's true ε (exact analytic formula, checked against dp-accounting's PLD).
- A ``TextbookGaussian`` at (1, 1e-5) audited by ``audit`` in its own currency (exactly μ-GDP, μ = 1/σ)
  with 10^6 samples per side: certified μ as a fraction of μ over the 10 seeds (targets: mean >= 0.95,
  every seed >= 0.90; issue 26).
- Throughput in samples per second (both sides, end to end) for the batched (``size=``) path,
  the unbatched path in-process, and the unbatched path on a 2-process pool (10^6 samples per side
  each; the event search after sampling runs in the calling process).

Every mechanism here is textbook float noise kept as the ideal reference: the figures are about the
mechanism on the reals, so each audit passes ``ideal_reals=True`` (the default auditor would flag
their float rounding, Mironov 2012, whatever the scale).

Writes benchmarks/results/audit_tightness.{json,md}. Run: python benchmarks/audit_tightness.py
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import math
import pathlib
import platform

import numpy as np
from dp_accounting.pld import privacy_loss_distribution
from scipy import optimize, stats

from dpledger.audit.bounds import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound, ratio_test
from dpledger.audit.pairs import EVENTS_PER_PAIR, audit_pairs

RESULTS = pathlib.Path(__file__).parent / "results"
CONFIDENCE = 0.95
SAMPLES = 1_000_000
SEEDS = range(10)
PAIR = [(0.0, 1.0)]
TARGETS = {1.0: 0.97, 0.1: 0.90}
#: certified μ as a fraction of μ: (mean over the seeds, every seed)
MU_TARGETS = (0.95, 0.90)


def laplace_batch(data, rng, size, *, scale):
    return data + rng.laplace(scale=scale, size=size)


def laplace_one(data, rng):
    return data + rng.laplace()


def gaussian_batch(data, rng, size, *, sigma):
    return data + rng.normal(scale=sigma, size=size)


def expected_limit(epsilon: float, n: int, level: float, ratio: bool = True) -> float:
    """Fraction of ε certified by {s >= 1} on Laplace(0) vs Laplace(1) at the expected counts, by a
    test of budget ``level``: the ratio test, or (``ratio=False``) p̲ and p̄ at half the budget each."""
    first, second = round(n * 0.5), round(n * 0.5 * math.exp(-epsilon))
    if ratio:
        return float(ratio_test(first, second, n, level)[0]) / epsilon
    bound = epsilon_lower_bound(clopper_pearson_lower(first, n, level / 2), clopper_pearson_upper(second, n, level / 2))
    return float(bound) / epsilon


def gaussian_true_epsilon(sigma: float, delta: float) -> tuple[float, float]:
    """(exact ε from the analytic Gaussian formula, dp-accounting PLD's ε) of N(0, σ²), sensitivity 1."""
    def excess(epsilon: float) -> float:
        return (stats.norm.cdf(1 / (2 * sigma) - epsilon * sigma)
                - math.exp(epsilon) * stats.norm.cdf(-1 / (2 * sigma) - epsilon * sigma) - delta)
    exact = optimize.brentq(excess, 0.0, 10.0, xtol=1e-12)
    pld = privacy_loss_distribution.from_gaussian_mechanism(sigma, sensitivity=1.0, value_discretization_interval=1e-4)
    return exact, float(pld.get_epsilon_for_delta(delta))


def laplace_tightness(epsilon: float) -> dict:
    fn = functools.partial(laplace_batch, scale=1 / epsilon)
    reports = [audit_pairs(fn, PAIR, epsilon, samples=SAMPLES, confidence=CONFIDENCE, seed=seed, ideal_reals=True)
               for seed in SEEDS]  # ideal_reals: the fraction of the ideal Laplace's ε
    fractions = [report.epsilon_lower_bound / epsilon for report in reports]
    level = reports[0].levels[0]  # the leading test's error budget
    return {
        "epsilon": epsilon, "samples_per_side": SAMPLES, "seeds": list(SEEDS), "fractions": fractions,
        "mean": float(np.mean(fractions)), "min": float(np.min(fractions)), "max": float(np.max(fractions)),
        "target": TARGETS[epsilon],
        "limit_single_test_all_samples": expected_limit(epsilon, SAMPLES, 1 - CONFIDENCE),
        "limit_this_protocol": expected_limit(epsilon, reports[0].test_samples, level),
        "limit_this_protocol_two_bounds": expected_limit(epsilon, reports[0].test_samples, level, ratio=False),
        "tests": reports[0].tests, "level": level,
        "example": str(reports[0]), "seconds_mean": float(np.mean([r.seconds for r in reports])),
    }


def gaussian_tightness() -> dict:
    epsilon, delta = 1.0, 1e-5
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    exact, pld = gaussian_true_epsilon(sigma, delta)
    fn = functools.partial(gaussian_batch, sigma=sigma)
    bounds = [audit_pairs(fn, PAIR, epsilon, delta, samples=SAMPLES, confidence=CONFIDENCE, seed=seed,
                          ideal_reals=True).epsilon_lower_bound  # against the ideal Gaussian's true ε
              for seed in SEEDS[:5]]
    return {"epsilon": epsilon, "delta": delta, "sigma": sigma, "true_epsilon_exact": exact, "true_epsilon_pld": pld,
            "lower_bounds": bounds, "mean_lower_bound": float(np.mean(bounds)),
            "fraction_of_true_epsilon": float(np.mean(bounds)) / exact,
            "fraction_of_claimed_epsilon": float(np.mean(bounds)) / epsilon}


def mu_tightness() -> dict:
    from dpledger.audit import audit
    from dpledger.mechanisms import TextbookGaussian

    mechanism = TextbookGaussian(1.0, 1e-5)
    # ideal_reals: μ is the claim of the Gaussian on the reals, the textbook float sampler its reference
    reports = [audit(mechanism, samples=SAMPLES, confidence=CONFIDENCE, seed=seed, ideal_reals=True) for seed in SEEDS]
    mu = reports[0].claims["mu"]
    fractions = [r.mu_lower_bound / mu for r in reports]
    floats = audit(mechanism, samples=SAMPLES, confidence=CONFIDENCE, seed=SEEDS[0])  # the default: floats tested
    return {"mu": mu, "confidence": CONFIDENCE, "samples_per_side": SAMPLES, "seeds": list(SEEDS),
            "fractions": fractions, "mean": float(np.mean(fractions)), "min": min(fractions),
            "target_mean": MU_TARGETS[0], "target_min": MU_TARGETS[1], "tests": reports[0].tests,
            "epsilon_lower_bounds": [r.epsilon_lower_bound for r in reports],
            "violations": sum(r.violation for r in reports),
            "default_auditor": {"flagged": floats.violation, "epsilon_lower_bound": floats.epsilon_lower_bound,
                                "event": floats.best[1].event if floats.best else None}}


def throughput() -> dict:
    def rate(fn, samples: int, executor=None) -> float:
        report = audit_pairs(fn, PAIR, 1.0, samples=samples, confidence=CONFIDENCE, seed=1, executor=executor,
                             ideal_reals=True)  # the same audits as above, timed
        return 2 * samples / report.seconds
    results = {"batched": rate(functools.partial(laplace_batch, scale=1.0), SAMPLES),
               "unbatched": rate(laplace_one, SAMPLES)}
    with concurrent.futures.ProcessPoolExecutor(2) as executor:
        results["unbatched_2_processes"] = rate(laplace_one, SAMPLES, executor)
    return results


def mu_line(mu: dict) -> str:
    """The μ row in words: certified μ against its two targets, then the default auditor's verdict."""
    floats = mu["default_auditor"]
    return (f"TextbookGaussian(1, 1e-5), μ-GDP with μ = {mu['mu']:.4f}, audited by `audit` at confidence "
            f"{mu['confidence']} with {mu['samples_per_side']:,} samples per side ({mu['tests']} tests): certified "
            f"μ = {mu['mean']:.3f} of μ on average (target >= {mu['target_mean']}), min {mu['min']:.3f} "
            f"(target >= {mu['target_min']}) over {len(mu['fractions'])} seeds; {mu['violations']} false alarm(s); "
            "audited on the reals (`ideal_reals=True`). The default auditor, which tests float rounding, "
            f"{'flags' if floats['flagged'] else 'does not flag'} its float64 sampler (seed 0): "
            f"ε >= {floats['epsilon_lower_bound']:.3g} from {{{floats['event']}}}.")


def markdown(results: dict) -> str:
    lines = ["# Audit tightness", "",
             f"Confidence {CONFIDENCE}, pair (0, 1), sensitivity-1 scalar, {SAMPLES:,} samples per side "
             f"(half choose events, half test them), {EVENTS_PER_PAIR} events tested per pair (Bonferroni), "
             f"{len(SEEDS)} seeds.", "",
             "The references are the fraction certified by the ideal event {s >= 1} at its *expected* counts: "
             "on this auditor's test half at its leading test's budget, by the ratio test it uses and by two "
             "separate Clopper–Pearson bounds (its test before the ratio test), and with all samples in one "
             "ratio test at the whole budget α (the statistical limit).", "",
             "| mechanism | certified fraction of ε: mean (min–max) | target | ideal event, test half, ratio test | "
             "ideal event, test half, two bounds | ideal event, all samples, α |",
             "|---|---|---|---|---|---|"]
    for row in results["laplace"]:
        lines.append(f"| Laplace ε = {row['epsilon']} | {row['mean']:.4f} ({row['min']:.4f}–{row['max']:.4f}) | "
                     f">= {row['target']} | {row['limit_this_protocol']:.4f} | "
                     f"{row['limit_this_protocol_two_bounds']:.4f} | {row['limit_single_test_all_samples']:.4f} |")
    g = results["gaussian"]
    lines += ["", f"Classic Gaussian σ = sqrt(2 ln(1.25/δ))/ε = {g['sigma']:.4f} at (ε, δ) = ({g['epsilon']}, {g['delta']}): "
              f"true ε = {g['true_epsilon_exact']:.4f} (analytic; PLD {g['true_epsilon_pld']:.4f}); certified "
              f"ε >= {g['mean_lower_bound']:.4f} (mean of {len(g['lower_bounds'])} seeds) = "
              f"{g['fraction_of_true_epsilon']:.3f} of the true ε, {g['fraction_of_claimed_epsilon']:.3f} of the claimed ε.",
              "", mu_line(results["mu"]),
              "", "Throughput (samples of both sides per second, whole audit including event search):", ""]
    lines += [f"- {name.replace('_', ' ')}: {value:,.0f} samples/s" for name, value in results["throughput"].items()]
    lines += ["", f"Machine: {results['machine']}", "", "Example report (Laplace ε = 1, seed 0):", "", "```",
              results["laplace"][0]["example"], "```", ""]
    return "\n".join(lines)


def main() -> None:
    results = {"laplace": [laplace_tightness(epsilon) for epsilon in TARGETS], "gaussian": gaussian_tightness(),
               "mu": mu_tightness(), "throughput": throughput(), "machine": f"{platform.machine()}, {platform.python_version()}"}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "audit_tightness.json").write_text(json.dumps(results, indent=2))
    (RESULTS / "audit_tightness.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
