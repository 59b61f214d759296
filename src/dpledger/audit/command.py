"""``dpledger audit NAME``: audit a registered estimator from the command line.

Exit codes: 0 no violation, 1 violation (the claim is false at the stated confidence), 2 error
(bad arguments, unknown estimator, or a run of the estimator raised).
"""

from __future__ import annotations

import argparse
import json

from .._arguments import integer, probability

#: runs per side of the audited pair: registered estimators cost milliseconds per run
DEFAULT_SAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95


def _print(report, console) -> None:
    from rich.markup import escape

    from .report import verdict as verdict_words

    epsilon, delta = report.claimed
    colour = "red" if report.violation else "green"
    verdict = "VIOLATION" if report.violation else "no violation"
    if report.violation and "ε" not in report.violations:
        verdict += f" in its own currency ({', '.join(report.violations)})"
    words = verdict_words(report.epsilon_lower_bound, epsilon).split(": ", 1)[1]
    console.print(f"[bold]{escape(report.target)}[/]: claimed (ε={epsilon:.4g}, δ={delta:.3g}) — "
                  f"[bold {colour}]{verdict}[/]: {escape(words)} at confidence {report.confidence:g}")
    for line in report.currency_lines():
        console.print(escape(line))
    console.print(f"{report.samples} samples per side, {report.tests} test(s), {report.seconds:.1f} s, "
                  f"seed {report.seed} (pass --seed to reproduce)")
    if report.search is not None:
        console.print(escape(str(report.search).strip()))
    if report.tests or not report.ok:
        console.print(report.table())
    else:
        console.print("no event looked promising on the training half, so nothing was tested")
    if not report.ok:
        console.print(f"[red]INCOMPLETE: {len(report.errors)} pair(s) failed and were not audited[/]")


def run(args: argparse.Namespace) -> int:
    """Audit ``args.name`` and print the report; the exit code says what was found."""
    from rich.console import Console
    from rich.markup import escape

    from .. import figures
    from .._render import terminal
    from . import figure
    from .auditor import audit

    console = terminal()
    try:
        if args.report is not None:
            figures.check_output(args.report)  # before the long work
        report = audit(args.name, samples=args.samples, confidence=args.confidence, seed=args.seed,
                       executor="processes" if args.processes else None)
    except (ValueError, TypeError, ImportError) as exc:
        Console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    if args.report is not None:
        figure.save(report, args.report)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        _print(report, console)
        if args.report is not None:
            console.print(f"report written to {escape(args.report)}")
    if report.violation:
        return 1
    return 0 if report.ok else 2


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``audit`` to the ``dpledger`` command's subparsers."""
    parser = subparsers.add_parser("audit", help="audit a registered estimator's privacy claim empirically",
                                   description=__doc__.split("\n")[0])
    parser.add_argument("name", help="registered estimator (see `dpledger estimators`)")
    parser.add_argument("--samples", type=integer(2), default=DEFAULT_SAMPLES,
                        help=f"runs per side of each audited pair (default {DEFAULT_SAMPLES})")
    parser.add_argument("--confidence", type=probability, default=DEFAULT_CONFIDENCE,
                        help=f"confidence of the verdict (default {DEFAULT_CONFIDENCE})")
    parser.add_argument("--seed", type=integer(0), default=None, help="seed that reproduces the audit")
    parser.add_argument("--processes", action="store_true", help="run the estimator on a process pool (every core)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--report", metavar="FILE", help="also write the report as a figure: FILE.png or FILE.html")
    parser.set_defaults(run=run)
    return parser
