"""``dpledger utility NAME``: error against ε of a registered estimator that has a utility sampler.

Exit codes: 0 measured, 1 a privacy refusal while running, 2 bad usage (unknown estimator, no
sampler, bad ε list or output file, matplotlib missing for a figure) or a failing run.
"""

from __future__ import annotations

import argparse
import json

from .._arguments import epsilons, integer

DEFAULT_EPSILONS = (0.5, 1.0, 2.0, 4.0)
DEFAULT_TRIALS = 5


def run(args: argparse.Namespace) -> int:
    """Measure, print the table (or JSON) and write the figure; errors go to ``dpledger.cli``."""
    from rich.markup import escape

    from .. import figures
    from .._render import terminal
    from . import figure
    from .measure import measure_utility

    if args.output is not None:
        figures.check_output(args.output)  # before the long work
    report = measure_utility(args.name, args.epsilons, trials=args.trials, seed=args.seed)
    if args.output is not None:
        figure.save(report, args.output)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    console = terminal()
    console.print(report.table())
    console.print(f"seed {report.seed} (pass --seed to reproduce), {report.seconds:.1f} s")
    if args.output is not None:
        console.print(f"figure written to {escape(args.output)}")
    return 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``utility`` to the ``dpledger`` command's subparsers."""
    parser = subparsers.add_parser("utility", help="error against ε of a registered estimator (privacy–utility)",
                                   description=__doc__.split("\n")[0])
    parser.add_argument("name", help="registered estimator with a utility sampler (see `dpledger estimators`)")
    parser.add_argument("--epsilons", type=epsilons, default=list(DEFAULT_EPSILONS),
                        help="comma-separated ε grid (default 0.5,1,2,4)")
    parser.add_argument("--trials", type=integer(1), default=DEFAULT_TRIALS,
                        help=f"runs per ε (default {DEFAULT_TRIALS})")
    parser.add_argument("--seed", type=integer(0), default=None, help="seed that reproduces the measurement")
    parser.add_argument("--output", metavar="FILE", help="write the figure: FILE.png or FILE.html")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.set_defaults(run=run)
    return parser
