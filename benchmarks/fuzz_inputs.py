"""How many malformed inputs each public entry point survives (issue 5 figure).

Runs the same malformed-value strategy as tests/test_fuzz_inputs.py with more examples, counts
the cases tried per entry point and checks that every one ended in success or a typed error.
Run: python benchmarks/fuzz_inputs.py [--examples N]. Writes results/fuzz_inputs.{json,md}.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import pathlib
import sys
import warnings

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from fuzzing import ENTRY_POINTS, bad_arrays, exercise  # noqa: E402

from _common import write  # noqa: E402


def count(entry_point: str, examples: int) -> int:
    total = [0]

    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(value=bad_arrays)
    def run(value):
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("error", RuntimeWarning)
            total[0] += exercise(entry_point, value)

    run()
    return total[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=300)
    args = parser.parse_args()
    counts = {name: count(name, args.examples) for name in sorted(ENTRY_POINTS)}
    lines = [f"{args.examples} malformed values per entry point (NaN, ±inf, negatives, huge integers, strings, "
             "None, ragged lists, empty/mis-shaped/complex/boolean arrays), each thrown at every case of the "
             "entry point; every case ended in success or a typed error (ValueError, TypeError, KeyError, "
             "PrivacyError), never a crash, hang or charge.", "",
             "| entry point | cases tried |", "|---|---|"]
    lines += [f"| {name} | {n:,} |" for name, n in counts.items()]
    write("fuzz_inputs", {"examples": args.examples, "cases": counts}, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
