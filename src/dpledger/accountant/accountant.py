"""The accountant: holds a budget, proves and charges each step *before* it runs, keeps the ledger.

What is fixed in advance composes tightly: the steps of one graph's plan (``Plan.guarantee``), a
``repeat``, a schedule declared with ``declare`` (charged in full when declared, then enforced
step by step). What the user chooses after seeing earlier outputs (each ``spend``, ``run`` and
``declare``) is charged through the session's *filter*, fixed when the accountant is created:
``"basic"``, ``"gdp"``, ``"zcdp"`` or ``"rdp"`` (``accountant.filters``). The session's guarantee is its budget
under that filter, whenever it stops; ``spent`` and ``remaining`` are the filter's bookkeeping.

A charge that would exceed the budget raises ``BudgetExceeded``: nothing is recorded and no data
is touched. Charges never depend on the data: a graph run is charged its planned cost before it
starts, whether it later halts or not. ``Accountant.open(path, ...)`` keeps the ledger in an
SQLite file or a PostgreSQL database (a ``postgresql://`` URL): the budget survives restarts and
clients sharing it never overspend. ``Accountant.open(path, budget, blocks=[...])`` makes a block
ledger: one budget per data block, each run charging the blocks whose records it reads
(``accountant.blocks``).
"""

from __future__ import annotations

import json
import threading

import attrs
import numpy as np

from .. import _random
from .. import guarantees as _g
from ..errors import BudgetExceeded, PrivacyError, RelationError
from ..mechanisms.base import Mechanism
from ..relations import Relation, check as check_relation, from_name
from ..privacy import events as _events
from . import filters as _filters
from .entries import LedgerEntry
from .pricing import unpriced
from .result import Result, execute
from .ledger import Ledger
from .cost import cost_of
from .book import Book, add
from . import blocks as _blocks
from . import quotas as _quotas
from .sharing import SharedLedger
from .schedule import Schedule, declared as declared_schedule
from . import storage
from .sqlstore import closed
from .storage import MemoryStore


class Accountant(SharedLedger):
    """A privacy budget with a ledger and a filter. Thread-safe: concurrent charges never overspend.

    ``filter``: the rule for the session's adaptively chosen steps, fixed now, before any data:
    ``"basic"`` (any steps), ``"gdp"`` (continuous Gaussian steps), ``"zcdp"`` (zCDP steps: the
    float-safe Gaussian) or ``"rdp"`` (steps with a Rényi curve, subsampled ones included;
    ``orders`` fixes its orders), or a ``filters.Filter``. ``relation``: the neighbouring
    relation every charge is made under; if omitted, the first charge that names one fixes it, and
    later charges under another relation are refused.
    """

    def __init__(self, budget: _g.Guarantee, filter="basic", relation: Relation | None = None, *,  # noqa: A002
                 orders=None):
        budget = _g.check("budget", budget)
        self._setup(budget, _filters.make(filter, budget, orders), relation, MemoryStore())

    @classmethod
    def open(cls, path, budget: _g.Guarantee | None = None, filter=None, relation: Relation | None = None, *,  # noqa: A002
             orders=None, blocks=None, analyst: str | None = None) -> "Accountant":
        """A durable accountant whose ledger is the SQLite file ``path`` (created if missing) or the
        PostgreSQL database at a ``postgresql://`` URL (made a ledger by ``dpledger ledger init URL``).

        Reopening restores the spent budget and the ledger. What is not given (``None``) is read
        from the file: its budget, filter and orders; a different value is refused, and so is a
        file whose entries mix relations or name a schedule it never charged (``Accountant.inspect``
        still reads it). A new file needs a budget; its filter defaults to "basic" ("rdp" when orders
        are given). Every charge is committed to the file before its step runs.

        ``blocks``: a new block ledger's data blocks, each with its own ``budget`` and the filter (it
        charges under ``AddRemoveOne``; ``add_blocks``); reopening, blocks the ledger holds.
        ``analyst``: who charges, recorded with each charge. An SQLite file records the name given
        (default: the OS user); a PostgreSQL ledger records the database role connected, written
        by the database itself (a name given must be that role).
        """
        stored = storage.settings(path) if budget is None or filter is None else None
        if budget is None and stored is None:
            raise ValueError(f"{path} is a new ledger: give its budget (budget=..., or --budget-epsilon on the "
                             "command line). Nothing was charged.")
        if stored is not None:
            budget = stored["budget"] if budget is None else budget
            if filter is None and orders is None:
                filter, orders = stored["filter"], stored["orders"]
        filter = ("rdp" if orders is not None else "basic") if filter is None else filter
        self = cls.__new__(cls)
        budget = _g.check("budget", budget)
        rule = _filters.make(filter, budget, orders)
        relation, blocks = None if relation is None else check_relation("relation", relation), _blocks.names(blocks)
        store = storage.open_store(path, budget, rule.describe(), _blocks.relation(relation, blocks), blocks, analyst)
        try:
            self._setup(budget, rule, store.relation, store)
            with self._lock, store.transaction() as earlier:
                self._book = self._updated(earlier)
        except BaseException:
            store.close()  # refused at opening (entries that mix relations, ...): nothing keeps the connection
            raise
        return self

    def _setup(self, budget, rule, relation, store, strict: bool = True) -> None:
        self.budget = budget
        self.filter = rule
        self._store = store
        self._book = Book(rule, None if relation is None else check_relation("relation", relation),
                          str(getattr(store, "path", "the ledger")), strict)
        self.ledger = Ledger(store, summary=self.summary)
        self._lock = threading.RLock()

    @classmethod
    def inspect(cls, path) -> "Accountant":
        """A read-only, in-memory copy of the ledger file ``path``: its entries, filter, spent and
        remaining (for ``dpledger ledger show``). Files written before filters existed (schema 1)
        are read under the basic filter, valid for any steps. A file that mixes relations or holds
        prepaid steps no charged schedule covers is read too, the latter priced at their own cost,
        and its summary says so; so is a ledger that refuses charges (moved, or a backup: ``moving``)."""
        meta, entries = storage.read(path)
        budget = _g.from_dict(json.loads(meta["budget"]))
        spec = json.loads(meta["filter"]) if "filter" in meta else {"filter": "basic"}
        relation = from_name(meta["relation"]) if "relation" in meta else None
        self = cls.__new__(cls)
        store = MemoryStore()
        store.quotas = json.loads(meta.get("quotas", "{}"))
        for entry in entries:
            store.append(entry)
        self._setup(budget, _filters.make(spec["filter"], budget, spec.get("orders")), relation, store, strict=False)
        self._book.where = str(path)
        self._book.know(_blocks.stored(meta.get("blocks")))
        self._book.take(entries)
        refused = closed(storage.name(path), meta)
        if refused is not None:
            self._book.doubts.append(f"CHARGES REFUSED: {refused}")
        return self

    @property
    def relation(self) -> Relation | None:
        """The neighbouring relation every charge is made under (None until one is recorded or given)."""
        return self._book.relation

    @property
    def _total(self):
        return self._book.total

    def summary(self) -> list[str]:
        """The budget, its filter, spent and remaining (each block's): the lines above a ledger's table."""
        head = f"budget {self.budget}{'' if self.blocks is None else ' per block'} under the {self.filter.name!r} filter"
        usage = ([f"spent: {self.spent}", f"remaining: {self.remaining}"] if self.blocks is None else
                 [f"block {b}: spent {self.spent_in(b)}; remaining {self.remaining_in(b)}" for b in self.blocks])
        return [f"{head} ({self.filter.source})", *usage, *self._book.doubts]

    # -- the budget ---------------------------------------------------------------------------
    @property
    def guarantee(self) -> _g.Guarantee:
        """What the whole session promises, however and whenever it stops: its budget, by its filter."""
        return self.budget

    @property
    def spent(self) -> _filters.Usage:
        """The filter's bookkeeping of what was charged (its own currency, and ε at the budget's δ
        for reading). A durable accountant reports what it has seen; ``refresh()`` reads charges
        other processes made since."""
        with self._lock:
            return self.filter.usage(self._total)

    @property
    def remaining(self) -> _filters.Usage:
        """The filter's headroom, in its own currency. Whether a step fits is decided by pricing it."""
        with self._lock:
            return self.filter.remaining(self._total)

    def refresh(self) -> None:
        """Take in charges that other processes sharing the ledger file made since we last looked."""
        with self._lock:
            with self._store.transaction() as others:
                book = self._updated(others)
            self._book = book

    def _updated(self, others) -> Book:
        """Inside the store's transaction: a copy of the book with the ledger's blocks and ``others``' entries."""
        book = self._book.copy()
        book.know(self._store.blocks)
        book.take(others)
        return book

    # -- charging -----------------------------------------------------------------------------
    def spend(self, name: str, what: _g.Guarantee | Mechanism, relation: Relation | None = None, *,
              charge_id: str | None = None, blocks=None) -> LedgerEntry:
        """Charge one adaptively chosen step (a guarantee, a mechanism, a graph or its plan) through
        the filter and record it; raise before recording if it does not fit. Call this *before*
        running the step. A graph is charged under its own relation. ``charge_id``: the client's
        id for this charge; if the ledger already records it (a retry after a lost connection),
        its entry is returned and nothing is charged (``LedgerEntry.charge_id``). ``blocks``: on a
        block ledger, the blocks whose records the step reads, each charged (all or nothing)."""
        return self._charge(name, cost_of(what), relation, charge_id=charge_id, blocks=blocks)

    def plan(self, graph):
        """The graph's total guarantee and step-by-step breakdown, computed without data; a graph
        under another relation than the session's, or one this session's filter cannot price, is
        refused (naming the halting test that stops it and the filters that would price it;
        planning fixes nothing)."""
        with self._lock:
            self._relation_for(None, graph.relation)
        plan = graph.plan()
        try:
            self.filter.price(plan.guarantee, plan.event)
        except PrivacyError:
            raise PrivacyError(unpriced(self.filter, plan)) from None
        return plan

    def run(self, graph, data, rng: np.random.Generator | None = None, name: str | None = None,
            label: str | None = None, *, charge_id: str | None = None, blocks=None, block_of=None) -> Result:
        """Validate the input, plan, charge the full planned cost through the filter, then execute
        the graph. ``label``: a public name for the input (a file name), recorded with the charge;
        the ledger is an observable, so never pass anything computed from the data.

        A halted run returns ``Result(output=None, halted=True, ...)`` and stays charged: the
        charge never depends on the data. Bad input is refused before the charge; an error raised
        while the graph touches the data is a bug and surfaces as a ``PrivacyError`` naming the
        step, after the charge. ``charge_id``: if the ledger already records it, nothing is charged
        and nothing runs (``Result.replayed``): a retry yields one charge and one output, or none.

        ``blocks``, ``block_of``: on a block ledger, the blocks the run reads (chosen from public
        information or earlier releases) and each record's public block: only their records reach
        the domain check and the graph; each named block is charged, all or nothing (``accountant.blocks``).
        """
        plan = self.plan(graph)
        data = graph.validate(_blocks.records(self._book.where, self._book.blocks, data, blocks, block_of))
        rng = _random.generator(rng)
        charged = self._charge_once(name or plan.name, cost_of(plan), label=_label(label), charge_id=charge_id,
                                    blocks=blocks)
        return execute(graph, plan, data, rng, *charged)  # recorded before: never run twice

    def declare(self, name: str, steps, relation: Relation | None = None, *, charge_id: str | None = None) -> Schedule:
        """Declare a schedule fixed in advance and charge it in full now; its steps then run through
        the returned ``Schedule``, each refused unless dominated by its declared step.

        ``steps``: ``(step name, mechanism | guarantee | graph[, times])`` in the order they will
        run. The steps compose tightly (``privacy.tight``: they are fixed before the data), and
        the whole enters the filter as one step. Its graphs must be private under the session's
        relation; schedule names are unique in a ledger. A block ledger takes no schedules (yet).
        ``charge_id``: if the ledger already records it (a retry), the schedule it charged is returned
        and nothing is charged.
        """
        _blocks.no_schedules(self._book.where, self._book.blocks)
        entry = self._charge(name, declared_schedule(name, steps), relation, charge_id=charge_id)
        return Schedule(self, entry)

    def charged_schedule(self, entry: LedgerEntry) -> bool:
        """Whether ``entry`` is the charge of a schedule this accountant recorded or read."""
        with self._lock:
            known = self._book.schedules.get(entry.name)
            return known is not None and known[0] == entry

    def prepaid_count(self, schedule: str) -> int:
        """How many prepaid steps of ``schedule`` the ledger holds (as this accountant has read it)."""
        with self._lock:
            known = self._book.schedules.get(schedule)
            return 0 if known is None else known[2]

    def _relation_for(self, *named: Relation | None, book: Book | None = None) -> Relation:
        """The relation a charge is made under: the one the step names (explicitly, or as its
        graph's), which must agree with each other and with the session's; the session's when the
        step names none. Changes nothing: only a recorded entry fixes the session's relation."""
        book = self._book if book is None else book
        current = book.relation
        stated = {check_relation("relation", r) for r in named if r is not None}
        if len(stated) > 1:
            raise RelationError(f"the step is named under {' and '.join(sorted(map(str, stated)))} at once: a graph is "
                                "charged under its own relation. Nothing was charged.")
        relation = _blocks.relation(next(iter(stated), current), book.blocks)  # a block ledger's: AddRemoveOne
        if relation is None:
            raise PrivacyError("name the neighbouring relation: Accountant(budget, relation=ReplaceOne()) or "
                               "spend(..., relation=...)")
        if current is not None and relation != current:
            raise RelationError(
                f"this accountant charges under {current}; a step under {relation} cannot be composed with it "
                "(use a separate accountant, or restate the step under the same relation). Nothing was charged.")
        return relation

    def _charge(self, name, cost, relation=None, prepaid: str | None = None, label: str | None = None,
                charge_id: str | None = None, blocks=None) -> LedgerEntry:
        """The entry of the charge (``_charge_once``), recorded now or, for a known id, before."""
        return self._charge_once(name, cost, relation, prepaid, label, charge_id, blocks)[0]

    def _charge_once(self, name, cost, relation=None, prepaid: str | None = None, label: str | None = None,
                     charge_id: str | None = None, blocks=None) -> tuple[LedgerEntry, bool]:
        """Price ``cost`` through the filter (nothing for a step of a schedule paid in advance, which
        must be its next declared step) and append its entry, atomically; ``BudgetExceeded`` with
        nothing recorded if it does not fit. Every check runs inside the store's transaction, on a
        copy of the book brought up to date with what the store holds now, before the append; the
        book is replaced only once the store has committed. On a block ledger, one of ``blocks``
        that the charge would overspend refuses it whole."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if charge_id is not None and (not isinstance(charge_id, str) or not charge_id):
            raise ValueError(f"charge_id must be a non-empty string (unique per charge), got {charge_id!r}")
        blocks = _blocks.names(blocks)
        with self._lock:
            with self._store.transaction() as others:
                book = self._updated(others)
                blocks = _blocks.charged(book.where, book.blocks, blocks)
                if charge_id is not None and charge_id in book.ids:  # a refused id raises before the book changes
                    replayed = _same_charge(book.ids[charge_id], name, cost, prepaid, blocks)
                else:
                    replayed = None
                    entry, relation, price = self._priced(book, name, cost, relation, prepaid, label, charge_id, blocks)
                    book.adopt(relation, book.where)  # the session's own, whatever relation it is
                    book.take([entry])  # exactly as a re-read will: checked before it is written
                    self._store.append(entry, relation, price)
            self._book = book  # only once the store committed: what was read stays read
            return (replayed, False) if replayed is not None else (entry, True)

    def _priced(self, book: Book, name, cost, relation, prepaid, label, charge_id, blocks):
        """Inside the charge's transaction: the entry of a new charge, its relation and its price, once
        every check passed on ``book`` (relation, schedule, budget of each block it pays from, quota)."""
        book.adopt(self._store.relation, book.where)
        relation = self._relation_for(relation, cost.relation, book=book)
        if cost.kind == "schedule" and name in book.schedules:
            raise ValueError(f"a schedule named {name!r} was already charged in this ledger; name it "
                             "differently. Nothing was charged.")
        if prepaid is not None:
            cost = attrs.evolve(cost, rule=book.prepaid_rule(prepaid, name, cost))
        price = self.filter.zero() if prepaid is not None else self.filter.price(cost.guarantee, cost.event)
        for block, spent in book.paying(blocks).items():  # each block it pays from, or the ledger
            if not self.filter.fits(add(spent, price)):
                raise BudgetExceeded(
                    f"charging {name!r} ({cost.guarantee}; {self.filter.price_text(price)}) would exceed the "
                    f"budget {self.budget}{'' if block is None else f' of block {block!r}'} under the "
                    f"{self.filter.name!r} filter: spent {self.filter.usage(spent)}. Nothing was charged.")
        analyst = self.analyst
        _quotas.check(self.filter, book, self._store.quotas, analyst, name, price)
        entry = LedgerEntry(name, cost.kind, str(relation), cost.guarantee, cost.rule, cost.params,
                            cost.steps, _events.to_dict(cost.event), charged=self.filter.price_text(price),
                            prepaid=prepaid, label=label, charge_id=charge_id, blocks=blocks, analyst=analyst)
        return entry, relation, price

    # -- export -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"budget": _g.to_dict(self.budget), **self.filter.describe(), "relation": str(self.relation),
                "spent": self.spent.to_dict(), "remaining": self.remaining.to_dict(),
                **({} if self.blocks is None else {"blocks": self.usage_by_block()}), "entries": self.ledger.to_dicts()}

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def close(self) -> None:
        """Release the ledger file (durable accountants)."""
        close = getattr(self._store, "close", None)
        if close is not None:
            close()

    def _repr_html_(self) -> str:
        """Jupyter: the budget, filter and relation, what is spent and remaining, then the ledger."""
        from html import escape

        from .._render import html_table

        relation = "not fixed yet" if self.relation is None else str(self.relation)
        head = (f"<div class=\"dpledger-accountant\"><p><b>Accountant</b>: budget {escape(str(self.budget))} under the "
                f"{escape(repr(self.filter.name))} filter, relation {escape(relation)}, "
                f"{len(self.ledger)} charge(s)</p>")
        return head + html_table(self.spent.table()) + html_table(self.remaining.table()) + self.ledger.render(
            html=True) + "</div>"

    def __repr__(self) -> str:
        return f"Accountant(budget={self.budget}, filter={self.filter.name!r}, spent: {self.spent})"


def _same_charge(entry: LedgerEntry, name: str, cost, prepaid: str | None, blocks) -> LedgerEntry:
    """The recorded ``entry`` of a charge id, if the retry asks for the same charge (step, kind,
    guarantee, schedule that prepaid it, blocks); else a ValueError naming both."""
    recorded = (entry.name, entry.mechanism, entry.guarantee, entry.prepaid, entry.blocks)
    asked = (name, cost.kind, cost.guarantee, prepaid, blocks)
    if recorded != asked:
        raise ValueError(f"the charge id {entry.charge_id!r} is recorded for {_charge_text(*recorded)}, not "
                         f"{_charge_text(*asked)}: choose a new id for a new charge. Nothing was charged.")
    return entry


def _charge_text(name: str, kind: str, guarantee, prepaid: str | None, blocks) -> str:
    """A charge in words, for a refused charge id: "'q' (laplace, ε = 0.5, prepaid by schedule 's')"."""
    by = "" if prepaid is None else f", prepaid by schedule {prepaid!r}"
    on = "" if blocks is None else f", on the blocks {list(blocks)}"
    return f"{name!r} ({kind}, {guarantee}{by}{on})"


def _label(label) -> str | None:
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ValueError(f"label must be a non-empty string (the input's public name), got {label!r}")
    return label
