"""``dpledger ledger copy``, ``backup``, ``restore`` and ``adopt``: moving a ledger without forking its
budget (``dpledger.accountant.moving``); each prints one line saying what it wrote."""

from __future__ import annotations


def add_parsers(ledger_commands) -> None:
    """The three commands, under ``dpledger ledger``."""
    copy = ledger_commands.add_parser("copy", help="copy a ledger into a new one (SQLite file or postgresql:// URL) "
                                                   "and seal it: it refuses charges from then on, naming the copy")
    copy.add_argument("src")
    copy.add_argument("dst", help="a missing file path, or a database `dpledger ledger init` made and nothing charged")
    copy.set_defaults(run=_run("copy"))
    backup = ledger_commands.add_parser("backup", help="a consistent backup of an SQLite ledger file while it is "
                                                       "charged (never `cp`); the backup refuses charges")
    backup.add_argument("src")
    backup.add_argument("dst", help="a missing file path")
    backup.set_defaults(run=_run("backup"))
    restore = ledger_commands.add_parser("restore", help="make a backup a ledger again, only once its original is "
                                                         "lost or damaged (charges made after the backup are lost)")
    restore.add_argument("backup")
    restore.add_argument("dst", help="a missing file path, or a database `dpledger ledger init` made")
    restore.set_defaults(run=_run("restore"))
    adopt = ledger_commands.add_parser("adopt", help="make a ledger file moved with mv its ledger's home, once the "
                                                     "path it was made at holds no ledger")
    adopt.add_argument("file")
    adopt.set_defaults(run=_run("adopt"))


#: each command's positional arguments, in ``moving``'s order
ARGUMENTS = {"copy": ("src", "dst"), "backup": ("src", "dst"), "restore": ("backup", "dst"), "adopt": ("file",)}


def _run(command: str):
    def run(args) -> int:
        from .accountant import moving

        print(getattr(moving, command)(*(getattr(args, name) for name in ARGUMENTS[command])))
        return 0

    return run
