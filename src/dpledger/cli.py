"""The ``dpledger`` command line."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console


def _console() -> Console:
    """Rich console; wide when output goes to a file or pipe, so tables stay readable."""
    return Console() if sys.stdout.isatty() else Console(width=150)


def _demo(args) -> int:
    from . import demo

    demo.main(_console(), seed=args.seed)
    return 0


def _estimators(args) -> int:
    from .graph import registry

    console = _console()
    for name in registry.estimators():
        entry = registry.info(name)
        console.print(f"[bold]{name}[/]({', '.join(entry.parameters)}): {entry.summary}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="dpledger", description="Differential privacy as accountable mechanism graphs.")
    commands = top.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run the demonstration")
    demo.add_argument("--seed", type=int, default=None, help="seed for a reproducible demo (never for real data)")
    demo.set_defaults(run=_demo)
    listing = commands.add_parser("estimators", help="list registered estimators")
    listing.set_defaults(run=_estimators)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
