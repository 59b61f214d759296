"""Block ledgers: one budget per data block (a week of events, a cohort), where a record's block is
a public, fixed attribute it carries (its arrival week), never something computed from the dataset.

A run names the blocks it reads; the runtime keeps only those blocks' records (``select``) before
the graph's domain is checked or the graph sees anything, and charges every named block's filter,
all or nothing, in one transaction. A record lives in exactly one block, so under ``AddRemoveOne``
neighbours (one record added or removed) a run that does not name the record's block sees the same
input on both neighbours and loses nothing about it: the record's privacy loss is the composition
of the runs naming its block, which that block's filter bounds by the budget. This is parallel
composition over disjoint blocks, and it holds under full adaptivity — each run's blocks and steps
chosen after earlier releases — as long as the blocks a run names are chosen from public
information or earlier releases, never by looking at the data (Sage's block composition: Lécuyer
et al., "Privacy Accounting and Quality Control in the Sage Differentiated ML Platform", SOSP 2019;
DPF: Luo et al., "Privacy Budget Scheduling", OSDI 2021, whose blocks all get the same global
budget, as here). Every block has the ledger's budget and filter; there is no ledger-wide
budget beyond them: each record is protected by its own block's budget, which is the guarantee.

``ReplaceOne`` is refused: a record replaced by one of another block is a removal from one block
and an addition to another, which a ReplaceOne guarantee (n fixed) does not cover.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import RelationError
from ..relations import AddRemoveOne, Relation

NOT_REPLACE_ONE = ("a block ledger charges under add-remove-one neighbours only: a record replaced by one of "
                   "another block is a removal from one block and an addition to another, which a {relation} "
                   "guarantee does not cover; state the graph under AddRemoveOne(). Nothing was charged.")


def names(value, what: str = "blocks") -> tuple[str, ...] | None:
    """Block names as given (a non-empty list of distinct non-empty strings), as a tuple; None for None."""
    if value is None:
        return None
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a list of block names (strings), e.g. {what}=['2026-W01'], got {value!r}")
    found = tuple(value)
    if not found or not all(isinstance(name, str) and name.strip() for name in found):
        raise ValueError(f"{what} must be a non-empty list of non-empty block names (strings), got {value!r}")
    if len(set(found)) < len(found):
        raise ValueError(f"{what} names a block twice ({value!r}): name each block once. Nothing was charged.")
    return found


def relation(named: Relation | None, blocks) -> Relation | None:
    """The relation a ledger with ``blocks`` (None: a ledger-wide budget, which keeps ``named``) charges
    under: a block ledger's is ``AddRemoveOne``, and another is refused (module doc)."""
    if blocks is None:
        return named
    if named is not None and not isinstance(named, AddRemoveOne):
        raise RelationError(NOT_REPLACE_ONE.format(relation=named))
    return AddRemoveOne()


def stored(text: str | None) -> tuple[str, ...] | None:
    """The blocks in a ledger's meta (a JSON list), or None for a ledger-wide budget."""
    return None if text is None else tuple(json.loads(text))


def _not_blocks(where: str, what: str = "blocks=") -> str:
    return (f"{where} holds one ledger-wide budget, not a budget per block: drop {what}, or open a new ledger "
            "with Accountant.open(path, budget, blocks=[...]) (a ledger's kind is fixed for life)")


def _unknown(where: str, missing, known) -> str:
    return (f"{where} has no block {missing[0]!r} (its blocks: {', '.join(known)}): name one of them, or add it "
            f"with add_blocks([{missing[0]!r}]) (dpledger ledger add-blocks LEDGER {missing[0]})")


def reopened(where: str, known: tuple[str, ...] | None, given: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The blocks of an existing ledger reopened with ``blocks=given`` (each must be one it holds)."""
    if given is not None:
        charged(where, known, given)
    return known


def added(where: str, known: tuple[str, ...] | None, new: tuple[str, ...]) -> tuple[str, ...]:
    """The ledger's blocks after adding ``new``: each a fresh budget, so never a name it holds."""
    if known is None:
        raise ValueError(_not_blocks(where) + ". Nothing was added.")
    again = [name for name in new if name in known]
    if again:
        raise ValueError(f"{where} already holds block {again[0]!r}: a block keeps its budget for life and is never "
                         "reset; give new data a block of its own. Nothing was added.")
    return known + new


def charged(where: str, known: tuple[str, ...] | None, named: tuple[str, ...] | None,
            then: str = ". Nothing was charged.") -> tuple[str, ...] | None:
    """The blocks a charge pays from, checked against the ledger's (inside the charge's transaction);
    ``then`` ends a refusal's message."""
    if known is None:
        if named is not None:
            raise ValueError(_not_blocks(where) + then)
        return None
    if named is None:
        raise ValueError(f"{where} holds a budget per block ({', '.join(known)}): name the blocks the step reads, "
                         f"blocks=[...]{then}")
    missing = [name for name in named if name not in known]
    if missing:
        raise ValueError(_unknown(where, missing, known) + then)
    return named


def no_schedules(where: str, known) -> None:
    """Refuse a declared schedule on a block ledger (not supported yet: its prepaid steps would
    have to read its blocks' records)."""
    if known is not None:
        raise ValueError(f"{where} holds a budget per block, and a declared schedule cannot be charged to blocks yet: "
                         "spend or run each step with blocks=[...]. Nothing was charged.")


def records(where: str, known, data, blocks, block_of):
    """What a run reads: ``data`` itself on a ledger-wide budget, else the records of the ``blocks``
    it names (``select``); before the graph's domain is checked."""
    if known is None and blocks is None and block_of is None:
        return data
    if known is None:
        raise ValueError(_not_blocks(where, "blocks= and block_of=") + ". Nothing was charged.")
    if blocks is None:
        charged(where, known, None)  # refused before the data is read: a run on a block ledger names its blocks
    return select(data, block_of, names(blocks))


def select(data, block_of, named: tuple[str, ...]):
    """The records of ``data`` whose public block key (``block_of``: one block name per record) is one
    of ``named``, in their order: all a run on those blocks sees. Records of other blocks never reach
    the graph, and nothing about them (not even how many there are) is reported."""
    if block_of is None:
        raise ValueError("a run on blocks needs each record's block: block_of=[one block name per record] (a "
                         "public, fixed attribute such as the arrival week). Nothing was charged.")
    records = np.asarray(data)
    keys = np.asarray(block_of)
    if keys.dtype.kind != "U":  # strings in an object array (a pandas column), or no keys at all
        keys = np.asarray(block_of, dtype=object)
        keys = keys.astype(str) if all(isinstance(key, str) for key in keys.ravel()) else keys
    if keys.dtype.kind != "U" or records.ndim == 0 or keys.shape != records.shape[:1]:
        raise ValueError(f"block_of must be one block name (a string) per record of the data (shape "
                         f"{records.shape}), got {keys.dtype} values of shape {keys.shape}. Nothing was charged.")
    return records[np.isin(keys, np.asarray(named, dtype=str))]
