"""The ``dpledger`` command line: demo, estimators, plan, run, audit, utility, ledger show.

Exit codes scripts can trust: 0 success; 1 a privacy refusal (budget exceeded, unprovable
claim) or an audit violation; 2 bad usage or bad input; 141 the reader closed the pipe.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

from . import guarantees as _g
from ._render import quiet_exit_on_broken_pipe, terminal
from .audit import command as audit_command
from .errors import PrivacyError
from .utility import command as utility_command


def _value(text: str):
    """Parse a ``key=value`` value: int, float, none/true/false, else the string."""
    lowered = text.lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _params(pairs: list[str], args) -> dict:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"estimator parameters are key=value pairs, got {pair!r}")
        params[key] = _value(value)
    for key in ("epsilon", "delta"):
        if getattr(args, key, None) is not None:
            params[key] = getattr(args, key)
    return params


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
    from .graph import registry

    rows = [_estimator_row(registry.info(name)) for name in registry.estimators()]

    def render(console):
        from rich.markup import escape

        for row in rows:
            parameters = ", ".join(p if d is None else f"{p}={d}" for p, d in row["parameters"].items())
            guarantee = f" [dim]({escape(row['guarantee'])})[/]" if row["guarantee"] else ""
            console.print(f"[bold]{escape(row['name'])}[/]({escape(parameters)}){guarantee}: {escape(row['summary'])}")

    _emit(args, {"estimators": rows}, render)
    return 0


def _estimator_row(info) -> dict:
    """Name, parameters with their defaults (None: required), the guarantee's type and relation (from
    the registered example, when there is one) and the docstring's first sentence."""
    parameters = {name: None if p.default is p.empty else repr(p.default) for name, p in info.parameters.items()}
    guarantee = ""
    if info.example is not None:
        from .graph import registry

        params, _ = info.example(np.random.default_rng(0))
        plan = registry.estimator(info.name, **params).plan()
        kind = "pure ε-DP" if plan.guarantee.delta == 0 else "(ε, δ)-DP"
        guarantee = f"{kind} under {plan.relation}"
    return {"name": info.name, "parameters": parameters, "guarantee": guarantee, "summary": info.summary}


def _plan(args) -> int:
    from .graph import registry

    graph = registry.estimator(args.name, **_params(args.params, args))
    plan = graph.plan()
    data = {"name": plan.name, "relation": str(plan.relation), "guarantee": _g.to_dict(plan.guarantee),
            "rule": plan.rule, "steps": [s.to_dict() for s in plan.steps]}
    _emit(args, data, lambda console: console.print(str(plan), markup=False, highlight=False))
    return 0


def _load_input(path: pathlib.Path, graph, params: dict):
    """Graphs: GraphML, an edge list (CSV or whitespace text of integer pairs; needs the public n) or a
    .npy adjacency matrix. Datasets: .npy, or CSV/whitespace text of numbers (one point per row,
    optionally under a header line). The format is detected from the content and checked against the
    extension; anything else is refused in one line (a ``ValueError``: exit code 2) before the ledger
    is opened, so nothing is charged (``dpledger.inputs``)."""
    from . import inputs

    return inputs.load(path, graph, params)


def _budget(args):
    return _g.make(args.budget_epsilon, args.budget_delta)


def _run(args) -> int:
    from .accountant import Accountant
    from .graph import registry

    params = _params(args.params, args)
    graph = registry.estimator(args.name, **params)
    data = _load_input(pathlib.Path(args.input), graph, params)
    accountant = Accountant.open(args.ledger, _budget(args), args.filter)
    rng = None if args.seed is None else np.random.default_rng(args.seed)
    result = accountant.run(graph, data, rng=rng)
    output = {"estimator": args.name, "halted": result.halted, "halted_by": result.halted_by,
              "output": None if result.output is None else np.asarray(result.output).tolist(),
              "charged": _g.to_dict(result.entry.guarantee), "filter": accountant.filter.name,
              "spent": accountant.spent.to_dict(), "remaining": accountant.remaining.to_dict(),
              "budget": _g.to_dict(accountant.budget)}
    text = json.dumps(output, indent=2)
    if args.output:
        pathlib.Path(args.output).write_text(text + "\n")
    if args.json or not args.output:
        print(text)
    else:
        terminal().print(f"{args.name}: charged {result.entry.guarantee}; budget {accountant.budget} under the "
                         f"{accountant.filter.name!r} filter, spent {accountant.spent}; output written to {args.output}")
    return 0


def _ledger_show(args) -> int:
    from .accountant import Accountant

    accountant = Accountant.inspect(args.file)
    data = {"budget": _g.to_dict(accountant.budget), **accountant.filter.describe(),
            "relation": None if accountant.relation is None else str(accountant.relation),
            "spent": accountant.spent.to_dict(), "remaining": accountant.remaining.to_dict(),
            "entries": accountant.ledger.to_dicts()}

    def render(console):
        console.print(f"relation {accountant.relation or 'not fixed yet'}")
        console.print(accountant.ledger.table(title=str(args.file)))

    _emit(args, data, render)
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="dpledger", description="Differential privacy as accountable mechanism graphs.")
    commands = top.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="run the demonstration (private SBM exact recovery)")
    demo.add_argument("--seed", type=int, default=None, help="seed for a reproducible demo (never for real data)")
    demo.set_defaults(run=_demo)

    listing = commands.add_parser("estimators", help="list registered estimators")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=_estimators)

    for name, helptext, handler in (("plan", "the guarantee of an estimator, rule by rule (no data)", _plan),
                                    ("run", "run an estimator on a file, charged against a ledger file", _run)):
        sub = commands.add_parser(name, help=helptext)
        sub.add_argument("name", help="registered estimator, e.g. sbm.exact")
        sub.add_argument("params", nargs="*", help="public parameters as key=value (e.g. n=1000 d=300 gamma=0.6)")
        sub.add_argument("--epsilon", type=float)
        sub.add_argument("--delta", type=float)
        sub.add_argument("--json", action="store_true")
        if name == "run":
            sub.add_argument("--input", required=True, help="edge list, GraphML, CSV or .npy")
            sub.add_argument("--ledger", required=True, help="SQLite ledger file (created if missing)")
            sub.add_argument("--budget-epsilon", type=float, required=True)
            sub.add_argument("--budget-delta", type=float, default=0.0)
            sub.add_argument("--filter", choices=("basic", "gdp", "zcdp", "rdp"), default="basic",
                             help="the rule for this ledger's adaptively chosen charges (fixed for the file's life)")
            sub.add_argument("--output", help="write the result JSON here instead of stdout")
            sub.add_argument("--seed", type=int, default=None, help="for reproducible experiments only")
        sub.set_defaults(run=handler)

    audit_command.add_parser(commands)
    utility_command.add_parser(commands)

    ledger = commands.add_parser("ledger", help="inspect a ledger file")
    ledger_commands = ledger.add_subparsers(dest="ledger_command", required=True)
    show = ledger_commands.add_parser("show", help="print a ledger file's charges")
    show.add_argument("file")
    show.add_argument("--json", action="store_true")
    show.set_defaults(run=_ledger_show)
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
