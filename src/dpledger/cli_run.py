"""``dpledger run`` and ``dpledger ledger``: a charged run and what a ledger holds (``show``, also
summed per analyst or block), summarised for people, or as JSON for scripts (``--json``; ``run
--output FILE`` writes the same JSON); a ledger's quotas, and its PostgreSQL tables and roles."""

from __future__ import annotations

import argparse
import json
import os
import pathlib

from . import cli_moving
from ._arguments import estimator_params
from ._render import terminal


def add_parsers(commands, estimator_arguments) -> None:
    """``run`` (its estimator arguments from the ``plan`` command's ``estimator_arguments``) and
    ``ledger show``."""
    run = commands.add_parser("run", help="run an estimator on a file, charged against a ledger file")
    estimator_arguments(run)
    run.add_argument("--input", required=True, help="edge list, GraphML, CSV or .npy (see `dpledger estimators`)")
    run.add_argument("--label", help="the input's name in the ledger (default: --input as given); never "
                                     "anything computed from the data")
    run.add_argument("--ledger", required=True, help="SQLite ledger file (created if missing) or a postgresql:// "
                                                   "URL (see `dpledger ledger init`)")
    run.add_argument("--budget-epsilon", type=float, help="a new ledger's budget (an existing one keeps its own)")
    run.add_argument("--budget-delta", type=float, help="a new ledger's δ (default 0)")
    run.add_argument("--filter", choices=("basic", "gdp", "zcdp", "rdp"),
                     help="a new ledger's rule for its adaptively chosen charges (default basic; fixed for life)")
    run.add_argument("--json", action="store_true", help="print the result as JSON (for scripts) instead")
    run.add_argument("--orders", type=_orders, help="a new ledger's Rényi orders, comma-separated (one order: the "
                                                  "sharper conversion; see dpledger.accountant.suggest_order)")
    run.add_argument("--blocks", type=_names, help="on a block ledger (a new one is made with these blocks): the "
                                                 "blocks this run reads, comma-separated, chosen from public "
                                                 "information or earlier releases, never from the data")
    run.add_argument("--block-column", help="with --blocks: the CSV header's column that holds each record's "
                                            "public block (e.g. its arrival week)")
    run.add_argument("--output", help="also write the result JSON here")
    run.add_argument("--seed", type=int, default=None, help="for reproducible experiments only")
    run.add_argument("--analyst", help="who charges, recorded in an SQLite ledger (default: the OS user); a "
                                       "PostgreSQL ledger records the database role")
    run.add_argument("--charge-id", help="this run's id, unique per charge: a retry with the same id (after a lost "
                                         "connection) charges nothing and runs nothing if the ledger records it")
    run.set_defaults(run=_run)

    ledger = commands.add_parser("ledger", help="inspect, initialise, copy, back up or restore a ledger")
    ledger_commands = ledger.add_subparsers(dest="ledger_command", required=True)
    show = ledger_commands.add_parser("show", help="print a ledger file's charges")
    show.add_argument("file")
    show.add_argument("--json", action="store_true")
    show.add_argument("--by", choices=("analyst", "block"), help="sum the charges per analyst or per block instead")
    show.set_defaults(run=_ledger_show)
    init = ledger_commands.add_parser("init", help="make an empty PostgreSQL database a ledger (postgresql://...)")
    init.add_argument("url")
    init.set_defaults(run=_ledger_init)
    cli_moving.add_parsers(ledger_commands)
    add = ledger_commands.add_parser("add-blocks", help="add blocks, each with a fresh budget, to a block ledger")
    add.add_argument("ledger")
    add.add_argument("blocks", type=_names, help="comma-separated block names, none the ledger holds")
    add.set_defaults(run=_ledger_add_blocks)
    quota = ledger_commands.add_parser("quota", help="limit one analyst's charges to a share of the budget")
    quota.add_argument("file", help="an existing ledger file or postgresql:// URL (PostgreSQL: as its owner)")
    quota.add_argument("analyst", help="the analyst's name (PostgreSQL: the database role)")
    quota.add_argument("--epsilon", type=float, required=True)
    quota.add_argument("--delta", type=float, default=0.0)
    quota.set_defaults(run=_ledger_quota)
    grant = ledger_commands.add_parser("grant", help="let a PostgreSQL role charge (--analyst) or only read (--reader)")
    grant.add_argument("url")
    grant.add_argument("role")
    kind = grant.add_mutually_exclusive_group(required=True)
    kind.add_argument("--analyst", action="store_true", help="charge through dpledger_append and read; nothing else")
    kind.add_argument("--reader", action="store_true", help="read only")
    grant.set_defaults(run=_ledger_grant)


def _shown(where) -> str:
    """A ledger's name for output: a file as given, a URL without its password."""
    from .accountant import storage

    return storage.name(where) if storage.is_url(where) else str(where)


def _orders(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"orders are comma-separated numbers > 1, got {text!r}") from None


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def _budget(args):
    from . import guarantees as _g

    if args.budget_epsilon is None:
        if args.budget_delta is not None:
            raise ValueError("--budget-delta needs --budget-epsilon")
        return None  # the ledger's own
    return _g.make(args.budget_epsilon, args.budget_delta or 0.0)


def _run(args) -> int:
    from . import inputs
    from .accountant import Accountant
    from .graph import registry

    params = estimator_params(args)
    graph = registry.estimator(args.name, **params)
    if (args.blocks is None) != (args.block_column is None):
        raise ValueError("--blocks and --block-column go together: the blocks a run reads, and the column that "
                         "holds each record's block. Nothing was charged.")
    keys = None  # refused before the ledger is opened:
    if args.blocks is None:
        data = inputs.load(pathlib.Path(args.input), graph, params)
    else:
        data, keys = inputs.load_blocks(pathlib.Path(args.input), graph, args.block_column, args.blocks)
    if args.output:
        _check_writable(pathlib.Path(args.output))  # before the charge: a result is never charged and lost
    accountant = Accountant.open(args.ledger, _budget(args), args.filter, orders=args.orders, blocks=args.blocks,
                                 analyst=args.analyst)
    try:
        return _run_charged(args, accountant, graph, data, keys)
    finally:
        accountant.close()  # cli.main called in a process that goes on (tests, scripts) keeps no connection


def _run_charged(args, accountant, graph, data, keys) -> int:
    """``_run`` once the ledger is open: run the graph, charged to ``accountant``, and report it."""
    import numpy as np

    from . import guarantees as _g

    rng = None if args.seed is None else np.random.default_rng(args.seed)
    result = accountant.run(graph, data, rng=rng, label=args.label or args.input, charge_id=args.charge_id,
                            blocks=args.blocks, block_of=keys)
    output = {"estimator": args.name, "replayed": result.replayed, "halted": result.halted, "halted_by": result.halted_by,
              "output": None if result.output is None else np.asarray(result.output).tolist(),
              "charged": _g.to_dict(result.entry.guarantee), "filter": accountant.filter.name,
              "spent": accountant.spent.to_dict(), "remaining": accountant.remaining.to_dict(),
              "budget": _g.to_dict(accountant.budget),
              **({} if accountant.blocks is None else {"blocks": accountant.usage_by_block()})}
    text = json.dumps(output, indent=2)
    if args.output:
        pathlib.Path(args.output).write_text(text + "\n")
    if args.json:
        print(text)
        return 0
    console = terminal()
    entry = result.entry
    console.print(f"[bold]{_markup(args.name)}[/] on {_markup(entry.label)}: charged {entry.guarantee} under {entry.relation} "
                  f"({_markup(entry.rule)})")
    spent = (f"spent {accountant.spent}; remaining {accountant.remaining}" if accountant.blocks is None else
             "; ".join(f"block {b}: spent {accountant.spent_in(b)}" for b in result.entry.blocks))
    console.print(f"ledger {_markup(_shown(args.ledger))} (budget {accountant.budget}, {accountant.filter.name!r} filter): "
                  f"{_markup(spent)}")
    console.print(summary(result))
    if args.output:
        console.print(f"result JSON written to {_markup(args.output)}")
    return 0


def _check_writable(path: pathlib.Path) -> None:
    folder = path.parent if str(path.parent) else pathlib.Path(".")
    if path.is_dir() or not folder.is_dir() or not os.access(folder, os.W_OK) or (
            path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"--output {path}: cannot write a file there; nothing was run or charged")


def _markup(text: str) -> str:
    from rich.markup import escape

    return escape(str(text))


def summary(result):
    """The released output in a few lines: a halt and its step; labels as community sizes; a
    matrix (centres) as a small table; a vector by its length and first values; a number."""
    import numpy as np
    from rich.table import Table

    if result.replayed:
        return (f"the charge id {result.entry.charge_id!r} was already recorded ({result.entry.time}): nothing was "
                "charged or run now; the first run's output is the only one")
    if result.halted:
        return f"halted by {result.halted_by}: no output (the halt is part of what the plan covers)"
    value = np.asarray(result.output)
    if value.ndim == 0:
        return f"output: {value.item():.6g}"
    if value.ndim == 1 and value.size and np.all(value == np.round(value)) and len(np.unique(value)) <= 10:
        labels, sizes = np.unique(value, return_counts=True)
        communities = ", ".join(f"{int(label)}: {size}" for label, size in zip(labels, sizes))
        return f"output: {value.size} labels; community sizes {communities}"
    if value.ndim == 2 and value.shape[0] <= 20:
        table = Table(title=f"output: {value.shape[0]} × {value.shape[1]}", title_justify="left")
        table.add_column("row", justify="right")
        shown = min(value.shape[1], 8)
        for j in range(shown):
            table.add_column(f"x{j + 1}", justify="right")
        if shown < value.shape[1]:
            table.add_column(f"… {value.shape[1] - shown} more")
        for i, row in enumerate(value):
            table.add_row(str(i + 1), *(f"{v:.4g}" for v in row[:shown]), *([""] if shown < value.shape[1] else []))
        return table
    head = ", ".join(f"{v:.4g}" for v in value.ravel()[:5])
    return f"output: shape {value.shape}; first values {head}{', …' if value.size > 5 else ''} (--json for all)"


def _ledger_show(args) -> int:
    from . import guarantees as _g
    from .accountant import Accountant, storage
    from .accountant.sqlstore import closed

    accountant = Accountant.inspect(args.file)
    if args.by:
        return _show_by(accountant, args)
    if args.json:
        data = {"budget": _g.to_dict(accountant.budget), **accountant.filter.describe(),
                "relation": None if accountant.relation is None else str(accountant.relation),
                "charges_refused": closed(storage.name(args.file), storage.read(args.file)[0]),
                "spent": accountant.spent.to_dict(), "remaining": accountant.remaining.to_dict(),
                **({} if accountant.blocks is None else {"blocks": accountant.usage_by_block()}),
                "entries": accountant.ledger.to_dicts()}
        print(json.dumps(data, indent=2, default=str))
        return 0
    console = terminal()
    console.print(f"relation {accountant.relation or 'not fixed yet'}")
    console.print(accountant.ledger.table(title=_shown(args.file)))
    return 0


def _ledger_add_blocks(args) -> int:
    """Add blocks, each with a fresh budget, to a block ledger (``Accountant.add_blocks``)."""
    from .accountant import Accountant

    accountant = Accountant.open(args.ledger)
    try:
        print(f"{_shown(args.ledger)}: blocks {', '.join(accountant.add_blocks(args.blocks))}")
    finally:
        accountant.close()
    return 0


def _show_by(accountant, args) -> int:
    """The charges summed per analyst or per block, in the filter's currency, with each analyst's quota."""
    from . import guarantees as _g

    quotas, spent = accountant.quotas if args.by == "analyst" else {}, accountant.spent_by(args.by)
    groups = [{args.by: group, "spent": usage.to_dict(), **({"quota": _g.to_dict(quotas[group])} if group in quotas else {})}
              for group, usage in spent.items()]
    if args.json:
        print(json.dumps({"by": args.by, "budget": _g.to_dict(accountant.budget), **accountant.filter.describe(),
                          "groups": groups}, indent=2))
        return 0
    if not spent:
        print(f"no charge in {_shown(args.file)} names a {args.by}")
        return 0
    from rich.table import Table

    table = Table(title=f"{_shown(args.file)}: spent per {args.by} under the {accountant.filter.name!r} filter "
                        f"(budget {accountant.budget})")
    for column in (args.by, "spent", *(("quota",) if quotas else ())):
        table.add_column(column, overflow="fold")
    for group, usage in spent.items():
        quota = (str(quotas[group]) if group in quotas else "none",) if quotas else ()
        table.add_row(_markup("(not recorded)" if group is None else group), str(usage), *quota)
    terminal().print(table)
    return 0


def _ledger_quota(args) -> int:
    from . import guarantees as _g
    from .accountant import Accountant

    accountant = Accountant.open(args.file)
    try:
        accountant.set_quota(args.analyst, _g.make(args.epsilon, args.delta))
    finally:
        accountant.close()
    print(f"quota of {args.analyst} in {_shown(args.file)}: {_g.make(args.epsilon, args.delta)} of the budget "
          f"{accountant.budget} under the {accountant.filter.name!r} filter")
    return 0


def _ledger_grant(args) -> int:
    from .accountant import storage

    if not storage.is_url(args.url):
        raise ValueError(f"{_shown(args.url)} is not a postgresql:// URL: an SQLite file's readers and writers are whoever "
                         "the file system lets open it")
    from .accountant.postgres import grant

    print(grant(args.url, args.role, analyst=args.analyst))
    return 0


def _ledger_init(args) -> int:
    """Make the ledger tables in an empty PostgreSQL database; its budget is fixed by the first run."""
    from .accountant import storage

    if not storage.is_url(args.url):
        raise ValueError(f"{_shown(args.url)} is not a postgresql:// URL: an SQLite ledger file is created by its first run")
    from .accountant.postgres import init

    print(init(args.url))
    return 0
