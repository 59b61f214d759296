"""``dpledger ledger copy``, ``backup``, ``restore`` and ``adopt``: moving a ledger without forking its
budget (``dpledger.accountant.moving``); each prints one line saying what it wrote."""

from __future__ import annotations

_NEW = "a missing file path, or a database `dpledger ledger init` made and nothing charged"

#: each command: its help, then its positional arguments in ``moving``'s order with their help
COMMANDS = {
    "copy": ("copy a ledger into a new one (SQLite file or postgresql:// URL) and seal it: it refuses charges "
             "from then on, naming the copy", (("src", None), ("dst", _NEW))),
    "backup": ("a consistent backup of an SQLite ledger file while it is charged (never `cp`); the backup refuses "
               "charges", (("src", None), ("dst", "a missing file path"))),
    "restore": ("make a backup a ledger again, only once its original is lost or damaged (charges made after the "
                "backup are lost)", (("backup", None), ("dst", _NEW))),
    "adopt": ("make a ledger file moved with mv its ledger's home, once the path it was made at holds no ledger",
              (("file", None),)),
}


def add_parsers(ledger_commands) -> None:
    """The four commands, under ``dpledger ledger``."""
    for command, (summary, arguments) in COMMANDS.items():
        parser = ledger_commands.add_parser(command, help=summary)
        for name, text in arguments:
            parser.add_argument(name, help=text)
        parser.set_defaults(run=_run(command))


def _run(command: str):
    def run(args) -> int:
        from .accountant import moving

        print(getattr(moving, command)(*(getattr(args, name) for name, _ in COMMANDS[command][1])))
        return 0

    return run
