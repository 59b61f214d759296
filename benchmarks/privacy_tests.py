"""How often, and how fast, does ``assert_private`` catch the bug zoo with no pair given?

For every bug of the suite's hypothesis zoo (``tests/test_audit_zoo.py``, ``HYPOTHESIS_ZOO``: a
buggy mechanism from the literature, its correct counterpart, a pair strategy and the claim) and
for the two bugs of the issue's performance target (half the noise, and noise chosen from the data,
on a sum over [0, 1]^n), over several seeds: the fraction of seeds on which the bug is caught, the
median time to catch it, the median size of the reported (shrunk) pair, and the fraction of seeds
on which the correct counterpart passes with its median time. Settings are the suite's (the zoo's
claims are about the mechanisms on the reals: ``ideal_reals=True``, as the suite audits them; the
default auditor would also flag the textbook float samplers of their fixes), so the table says how
much margin each suite test has.

Then a plugin author's run: ``pytest --dpledger-audit`` (the plugin's defaults, one process per
run, started afresh) on a project whose conftest registers the small histogram of
``tests/test_testing.py`` with half its noise (true ε = 2 against a claim of 1), and on the same
histogram done right, for ten seeds (``--dpledger-audit-seed``): how many runs catch the bug, and
each run's wall time (the issue's target: at least 9 of 10 within 60 s each).

Writes benchmarks/results/privacy_tests.{json,md}. Run: python benchmarks/privacy_tests.py
(``--quick``: 2 seeds instead of 10).
"""

from __future__ import annotations

import importlib.util
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from _common import publish, quick_run
from dpledger.testing import PrivacyViolation, assert_private

TESTS = pathlib.Path(__file__).resolve().parent.parent / "tests"


def _module(name: str):
    sys.path.insert(0, str(TESTS))
    spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases() -> dict:
    """name -> (buggy, correct, pairs(), claim, confidence): the zoo and the issue's two sum bugs."""
    zoo, testing = _module("test_audit_zoo"), _module("test_testing")
    found = {name: (*entry, zoo.CONFIDENCE) for name, entry in zoo.HYPOTHESIS_ZOO.items()}
    claim = dict(epsilon=1.0, relation=testing.ReplaceOne())
    for name, buggy in (("sum over [0, 1]^n with half the noise", testing.half_noise),
                        ("sum over [0, 1]^n, noise chosen from the data", testing.noise_from_the_data)):
        found[name] = (buggy, testing.noisy_sum, lambda: testing.ROWS, claim, testing.CONFIDENCE)
    return found


def measure(target, pairs, claim: dict, confidence: float, seed: int) -> dict:
    start = time.perf_counter()
    try:
        assert_private(target, pairs(), confidence=confidence, seed=seed, ideal_reals=True, **claim)
    except PrivacyViolation as violation:
        return {"violation": True, "seconds": time.perf_counter() - start,
                "epsilon": violation.epsilon_lower_bound, "claimed": violation.claimed[0],
                "size": int(np.size(violation.pair[0]))}
    return {"violation": False, "seconds": time.perf_counter() - start}


def plugin_run(sensitivity: int, seed: int) -> dict:
    """``pytest --dpledger-audit`` in a fresh project holding the histogram at ``sensitivity``."""
    conftest = _module("test_testing").PLUGIN_HISTOGRAM.replace("NOISE", "a plugin author's histogram")
    with tempfile.TemporaryDirectory() as project:
        (pathlib.Path(project) / "conftest.py").write_text(conftest.replace("SENSITIVITY", str(sensitivity)))
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--dpledger-audit",
                              f"--dpledger-audit-seed={seed}"], cwd=project, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    return {"failed": run.returncode == 1 and "PrivacyViolation" in run.stdout, "passed": run.returncode == 0,
            "seconds": seconds}


def plugin_table(seeds: range) -> tuple[dict, str]:
    """The plugin's defaults on the half-noise histogram and on the correct one, per seed."""
    buggy = [plugin_run(1, seed) for seed in seeds]
    correct = [plugin_run(2, seed) for seed in seeds]
    data = {"half_noise": buggy, "correct": correct}
    markdown = "\n".join([
        "", f"`pytest --dpledger-audit` with the plugin's defaults, seeds {seeds.start}..{seeds.stop - 1}, a fresh "
        "process per run (interpreter start and imports included): a project's conftest registers a histogram of "
        "20 values in 4 bins with discrete Laplace noise at sensitivity 1 (half the noise: replacing a value moves "
        "two counts) or 2 (correct).", "",
        "| histogram | runs failing with a PrivacyViolation | runs passing | wall time per run: median (max) |",
        "|---|---|---|---|",
        *(f"| {name} | {sum(r['failed'] for r in runs)}/{len(runs)} | {sum(r['passed'] for r in runs)}/{len(runs)} | "
          f"{statistics.median(r['seconds'] for r in runs):.1f} s ({max(r['seconds'] for r in runs):.1f} s) |"
          for name, runs in (("half the noise (true ε = 2, claim 1)", buggy), ("correct", correct)))])
    return data, markdown


def main() -> None:
    seeds = range(2 if quick_run("2 seeds instead of 10") else 10)
    rows, data = [], {}
    for name, (buggy, correct, pairs, claim, confidence) in cases().items():
        caught = [measure(buggy, pairs, claim, confidence, 100 + seed) for seed in seeds]
        passed = [measure(correct, pairs, claim, confidence, 200 + seed) for seed in seeds]
        hits = [run for run in caught if run["violation"]]
        data[name] = {"caught": caught, "passed": passed, "confidence": confidence}
        rows.append(f"| {name} | {len(hits)}/{len(caught)} | "
                    f"{statistics.median(run['seconds'] for run in caught):.1f} s | "
                    + (f"{statistics.median(run['size'] for run in hits):g} | "
                       f"{statistics.median(run['epsilon'] for run in hits):.2f} vs {hits[0]['claimed']:g} | "
                       if hits else "– | – | ")
                    + f"{sum(not run['violation'] for run in passed)}/{len(passed)} | "
                    f"{statistics.median(run['seconds'] for run in passed):.1f} s |")
        print(rows[-1], flush=True)
    markdown = "\n".join([
        f"`assert_private` with the suite's settings, no pair given, seeds {seeds.start}..{seeds.stop - 1} "
        "(buggy: 100 + seed, correct: 200 + seed); time per call on this machine.",
        "",
        "| bug | caught | median time | median values in reported D | median certified ε vs claim "
        "| fix passes | median time |",
        "|---|---|---|---|---|---|---|",
        *rows])
    plugin, plugin_markdown = plugin_table(seeds)
    publish("privacy_tests", {"seeds": list(seeds), "cases": data, "plugin": plugin}, markdown + "\n" + plugin_markdown)


if __name__ == "__main__":
    main()
