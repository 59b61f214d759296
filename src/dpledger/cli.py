"""The ``dpledger`` command line: demo, estimators, plan, run, audit, utility, ledger (show, init, copy, ...).

Exit codes scripts can trust: 0 success; 1 a privacy refusal (budget exceeded, unprovable
claim) or an audit violation; 2 bad usage or bad input; 141 the reader closed the pipe.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from . import cli_run
from ._arguments import estimator_params
from ._render import quiet_exit_on_broken_pipe, terminal
from .audit import command as audit_command
from .errors import PrivacyError
from .utility import command as utility_command

# Each command imports what it needs when it runs (numpy, the accountant, the registry): `dpledger
# --help` loads none of them (tests/test_cli_startup.py).


def _emit(args, data: dict, render) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        render(terminal())


def _demo(args) -> int:
    from . import demo

    demo.main(terminal(), seed=args.seed)
    return 0


def _estimators(args) -> int:
    """Every estimator that loads, each on its own: a broken plugin is named with its error and
    hides nothing else (``dpledger.catalogue``)."""
    from .catalogue import listing

    rows, failures = listing(fresh=args.fresh)

    def render(console):
        from rich.markup import escape

        for row in rows:
            parameters = ", ".join(p if d is None else f"{p}={d}" for p, d in row["parameters"].items())
            guarantee = f" [dim]({escape(row['guarantee'])})[/]" if row["guarantee"] else ""
            console.print(f"[bold]{escape(row['name'])}[/]({escape(parameters)}){guarantee}: {escape(row['summary'])}")
            if row["inputs"]:
                console.print(f"    --input: {escape(row['inputs'])}", style="dim")
        for name, why in failures.items():
            console.print(f"[bold red]{escape(name)}[/]: failed to load: {escape(why)}")

    _emit(args, {"estimators": rows, "failures": failures}, render)
    return 0


def _plan(args) -> int:
    from .graph import registry

    graph = registry.estimator(args.name, **estimator_params(args))
    plan = graph.plan()
    from . import guarantees as _g

    data = {"name": plan.name, "relation": str(plan.relation), "guarantee": _g.to_dict(plan.guarantee),
            "rule": plan.rule, "steps": [s.to_dict() for s in plan.steps]}
    _emit(args, data, lambda console: console.print(str(plan), markup=False, highlight=False))
    return 0


def _estimator_arguments(sub) -> None:
    sub.add_argument("name", help="registered estimator, e.g. sbm.exact")
    sub.add_argument("params", nargs="*", help="public parameters as key=value (e.g. n=1000 d=300 gamma=0.6)")
    sub.add_argument("--epsilon", type=float)
    sub.add_argument("--delta", type=float)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="dpledger", description="Differential privacy as accountable mechanism graphs.")
    commands = top.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run the demonstration (private SBM exact recovery)")
    demo.add_argument("--seed", type=int, default=None, help="seed for a reproducible demo (never for real data)")
    demo.set_defaults(run=_demo)

    listing = commands.add_parser("estimators", help="list registered estimators")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--fresh", action="store_true", help="make the kept listing anew (dpledger.catalogue)")
    listing.set_defaults(run=_estimators)

    plan = commands.add_parser("plan", help="the guarantee of an estimator, rule by rule (no data)")
    _estimator_arguments(plan)
    plan.add_argument("--json", action="store_true")
    plan.set_defaults(run=_plan)
    cli_run.add_parsers(commands, _estimator_arguments)

    audit_command.add_parser(commands)
    utility_command.add_parser(commands)

    return top


def main(argv: list[str] | None = None) -> int:
    top = parser()
    args, extra = top.parse_known_args(argv)
    if hasattr(args, "params"):  # key=value parameters may sit between options
        args.params += [item for item in extra if "=" in item and not item.startswith("-")]
        extra = [item for item in extra if item not in args.params]
    if extra:
        top.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.run(args)
    except BrokenPipeError:  # print() into a closed pipe; rich's console exits the same way
        quiet_exit_on_broken_pipe()
    except PrivacyError as refusal:
        print(f"dpledger: refused: {refusal}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, KeyError, ImportError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error  # no repr quotes
        print(f"dpledger: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
