"""What a durable ledger shared by a team adds to an accountant: its data blocks, each with its own
budget (``blocks``), who charged (``analyst``), sums by analyst or block, and analysts' quotas."""

from __future__ import annotations

from .. import guarantees as _g
from . import blocks as _blocks
from . import filters as _filters
from . import quotas as _quotas
from .storage import MemoryStore

#: what charges can be summed by (``dpledger ledger show --by``)
BY = ("analyst", "block")


class SharedLedger:
    """Mixed into ``Accountant``: reads of its book and store (``_book``, ``_store``, ``_lock``,
    ``filter``), and the two changes a team makes beside charging: adding blocks, setting quotas."""

    @property
    def blocks(self) -> tuple[str, ...] | None:
        """A block ledger's blocks, in order of addition (None: one ledger-wide budget); its ``spent``
        and ``remaining`` read the most-charged block (what any record lost at most, every block has left)."""
        with self._lock:
            return None if self._book.blocks is None else tuple(self._book.blocks)

    def spent_in(self, block: str) -> _filters.Usage:
        """What ``block`` of a block ledger has spent, as this accountant has read it (``refresh()``)."""
        with self._lock:
            return self.filter.usage(self._book.block(block))

    def remaining_in(self, block: str) -> _filters.Usage:
        """What ``block`` of a block ledger has left, as this accountant has read it (``refresh()``)."""
        with self._lock:
            return self.filter.remaining(self._book.block(block))

    def usage_by_block(self) -> dict:
        """Each block's spent and remaining as JSON values (``to_dict``, ``dpledger ledger show --json``)."""
        return {name: {"spent": self.spent_in(name).to_dict(), "remaining": self.remaining_in(name).to_dict()}
                for name in self.blocks or ()}

    def add_blocks(self, names) -> tuple[str, ...]:
        """Add blocks to a block ledger in one transaction, each with a fresh budget (the ledger's, nothing
        spent); a name it holds is refused: a block is never reset. Returns all its blocks."""
        names = _blocks.names(() if names is None else names)
        with self._lock:
            if self._book.blocks is None:
                _blocks.added(self._book.where, None, names)  # refused: a ledger-wide budget has no blocks
            blocks = self._store.add_blocks(names)
            book = self._book.copy()
            book.know(blocks)
            self._book = book
        return blocks

    def spent_by(self, by: str) -> dict:
        """What each analyst (``by="analyst"``; None: not recorded) or each block (``"block"``) spent,
        as a ``Usage`` in the filter's currency; an entry counts in each block it names."""
        if by not in BY:
            raise ValueError(f"charges are summed by one of {BY}, not {by!r}")
        with self._lock:
            totals = (self._book.blocks or {}) if by == "block" else self._book.totals[by]
            return {group: self.filter.usage(total) for group, total in totals.items()}

    @property
    def analyst(self) -> str | None:
        """Who this accountant charges as (None in memory): the declared name, or the database role."""
        return self._store.analyst

    @property
    def quotas(self) -> dict:
        """Each analyst's quota (a guarantee) inside the budget, as the ledger held it when last read."""
        return _quotas.quotas_of(self._store.quotas)

    def set_quota(self, analyst: str, quota: _g.Guarantee) -> None:
        """Limit ``analyst``'s own charges to ``quota`` (within the budget, under the ledger's filter),
        checked in every charge's transaction; a quota below what they spent refuses their next
        charge. A PostgreSQL ledger lets only its owner set quotas."""
        if isinstance(self._store, MemoryStore):
            raise ValueError("quotas are kept by a durable ledger: Accountant.open(path or URL)")
        if self.blocks is not None:
            raise ValueError(f"{self._book.where} holds a budget per block, and quotas are shares of one "
                             "ledger-wide budget: a block ledger has no quotas (yet). Nothing was changed.")
        self._store.set_quota(analyst, _quotas.document(self.filter, analyst, quota))

