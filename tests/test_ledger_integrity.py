"""What a ledger may hold: charges under one relation only, and prepaid steps only of a schedule
that was charged. Each test reproduces a finding of the second privacy review."""

import json
import sqlite3

import pytest

import dpledger as dp
from dpledger.accountant.storage import SQLiteStore
from dpledger.mechanisms import Laplace
from spending import entries

BUDGET = dp.PureDP(1.0)
STEP = dp.PureDP(0.5)


def _graph(relation):
    return dp.Graph(dp.release("s", Laplace(0.5), lambda x: 0.0), relation=relation)


def _insert(path, entry: dp.LedgerEntry):
    """An entry written past the accountant (an older dpledger, a hand-made file)."""
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO entries (document) VALUES (?)", (json.dumps(entry.to_dict()),))


# --- finding 2: one durable ledger never sums charges made under different relations -----------

def test_a_charge_under_another_relation_than_the_files_is_refused(tmp_path):
    path = tmp_path / "l.sqlite"
    early = dp.Accountant.open(path, BUDGET)  # opened before the relation was fixed
    fixing = dp.Accountant.open(path, BUDGET, relation=dp.EdgeAdjacency())
    with pytest.raises(dp.RelationError, match="edge-adjacency") as refusal:
        early.spend("x", STEP, relation=dp.ReplaceOne())
    assert "replace-one" in str(refusal.value) and entries(path) == 0
    assert early.relation is None  # a refused charge leaves the session as it was
    fixing.spend("y", STEP)
    early.spend("z", STEP)  # the file's relation, read inside the charge
    assert [e.relation for e in fixing.ledger] == ["edge-adjacency"] * 2 == [e.relation for e in early.ledger]


def test_an_absorbed_entry_under_another_relation_is_refused(tmp_path):
    path = tmp_path / "l.sqlite"
    acct = dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne())
    acct.spend("a", STEP)
    _insert(path, dp.LedgerEntry("foreign", "declared", "edge-adjacency", STEP, "declared guarantee"))
    with pytest.raises(dp.RelationError, match="edge-adjacency"):
        acct.spend("b", dp.PureDP(0.1))
    assert acct.spent.epsilon == 0.5 and entries(path) == 2  # nothing added, the foreign entry not counted


def test_a_file_that_mixes_relations_is_refused_for_charging_and_still_read(tmp_path):
    path = tmp_path / "mixed.sqlite"
    dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).spend("a", STEP)
    _insert(path, dp.LedgerEntry("b", "declared", "edge-adjacency", STEP, "declared guarantee"))
    with pytest.raises(dp.RelationError, match="replace-one.*edge-adjacency|edge-adjacency.*replace-one"):
        dp.Accountant.open(path, BUDGET)
    read = dp.Accountant.inspect(path)
    assert len(read.ledger) == 2 and "mixes" in "\n".join(read.summary())


def test_a_conflicting_relation_is_never_stored(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite", BUDGET, {"filter": "basic"}, dp.ReplaceOne())
    with store.transaction():
        with pytest.raises(dp.RelationError):
            store.set_relation(dp.EdgeAdjacency())
    assert SQLiteStore(tmp_path / "s.sqlite", BUDGET, {"filter": "basic"}, None).relation == dp.ReplaceOne()


# --- finding 3: a graph is charged under its own relation, wherever it is charged ----------------

def test_spend_and_declare_charge_a_graph_under_its_relation():
    acct = dp.Accountant(BUDGET, relation=dp.ReplaceOne())
    edges = _graph(dp.EdgeAdjacency())
    with pytest.raises(dp.RelationError):
        acct.spend("g", edges)
    with pytest.raises(dp.RelationError):
        acct.declare("s", [("g", edges)])
    with pytest.raises(dp.RelationError):
        acct.spend("g", edges.plan())
    assert len(acct.ledger) == 0
    fresh = dp.Accountant(BUDGET)
    assert fresh.spend("g", edges).relation == "edge-adjacency" and fresh.relation == dp.EdgeAdjacency()
    with pytest.raises(dp.RelationError):
        fresh.spend("h", edges, relation=dp.ReplaceOne())  # an explicit relation that contradicts the graph's


def test_a_schedule_runs_graphs_of_its_own_relation_only():
    acct = dp.Accountant(dp.PureDP(2.0))
    schedule = acct.declare("s", [("a", _graph(dp.ReplaceOne())), ("b", Laplace(0.5))], relation=dp.ReplaceOne())
    with pytest.raises(dp.RelationError):
        schedule.run(_graph(dp.EdgeAdjacency()), [0.0], name="a")
    with pytest.raises(dp.RelationError):
        acct.declare("t", [("a", _graph(dp.ReplaceOne())), ("b", _graph(dp.EdgeAdjacency()))])


# --- finding 7: only a recorded entry fixes the session's relation -------------------------------

@pytest.mark.parametrize("refused", ["over budget", "unpriceable", "bad name"])
def test_a_refused_charge_leaves_the_relation_open(refused, tmp_path):
    acct = dp.Accountant.open(tmp_path / "r.sqlite", dp.ApproxDP(1.0, 1e-6), "zcdp")
    what, name, error = {"over budget": (dp.PureDP(1.2), "x", dp.BudgetExceeded),
                         "unpriceable": (dp.ApproxDP(0.1, 1e-7), "x", dp.PrivacyError),
                         "bad name": (STEP, "", ValueError)}[refused]
    with pytest.raises(error):
        acct.spend(name, what, relation=dp.EdgeAdjacency())
    assert acct.relation is None
    acct.plan(_graph(dp.EdgeAdjacency()))  # planning is no charge either
    assert acct.relation is None
    acct.spend("fits", dp.PureDP(0.1), relation=dp.ReplaceOne())
    assert acct.relation == dp.ReplaceOne()
    assert dp.Accountant.open(tmp_path / "r.sqlite", dp.ApproxDP(1.0, 1e-6), "zcdp").relation == dp.ReplaceOne()


# --- finding 5: prepaid steps only of a schedule that was charged --------------------------------

def test_no_schedule_records_steps_without_its_charge():
    acct = dp.Accountant(dp.PureDP(1.0), relation=dp.ReplaceOne())
    paid = acct.declare("paid", [("q", Laplace(0.5))])
    other = dp.Accountant(dp.PureDP(1.0), relation=dp.ReplaceOne())
    with pytest.raises(dp.PrivacyError, match="not charged"):
        dp.Schedule(other, paid.entry)  # a schedule this accountant never charged
    assert not hasattr(dp.Schedule, "declared")  # the reviewed back door: a schedule built without a charge
    assert len(other.ledger) == 0 and other.spent.epsilon == 0


def test_a_ledger_whose_prepaid_steps_name_no_schedule_is_refused(tmp_path):
    path = tmp_path / "p.sqlite"
    dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne()).spend("a", dp.PureDP(0.25))
    for i in range(100):
        _insert(path, dp.LedgerEntry(f"q{i}", "Laplace", "replace-one", dp.PureDP(1.0), "forged",
                                     event={"dp_event": "EpsilonDeltaDpEvent", "epsilon": 1.0, "delta": 0.0},
                                     prepaid="nowhere"))
    with pytest.raises(dp.LedgerError, match="nowhere"):
        dp.Accountant.open(path, BUDGET)
    read = dp.Accountant.inspect(path)
    assert read.spent.epsilon == 100.25  # priced at their own cost: a safe reading
    assert "no schedule" in "\n".join(read.summary())


def test_a_schedule_cannot_record_more_steps_than_it_declared(tmp_path):
    path = tmp_path / "p.sqlite"
    acct = dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne())
    schedule = acct.declare("s", [("q", Laplace(0.5), 2)])
    schedule.spend("q", Laplace(0.5))
    for _ in range(3):  # one more than declared
        _insert(path, dp.LedgerEntry("q", "Laplace", "replace-one", dp.PureDP(0.5), "forged", prepaid="s"))
    with pytest.raises(dp.LedgerError, match="declared 2"):
        dp.Accountant.open(path, BUDGET)


def test_schedule_names_are_unique_in_a_ledger():
    acct = dp.Accountant(BUDGET, relation=dp.ReplaceOne())
    acct.declare("s", [("q", Laplace(0.25))])
    with pytest.raises(ValueError, match="already"):
        acct.declare("s", [("q", Laplace(0.25))])


# --- the fresh review of these fixes ----------------------------------------------------------

def test_a_schedule_handle_cannot_bring_its_own_steps():
    """A Schedule is built from its charged entry alone; every prepaid step, live or re-read, is
    checked against the steps that entry declared (a forged handle recorded 100-DP steps under a
    schedule paid for 0.01-DP ones)."""
    from dpledger.accountant.schedule import Schedule

    acct = dp.Accountant(dp.PureDP(1.0), relation=dp.ReplaceOne())
    paid = acct.declare("s", [("q", Laplace(0.01), 3)])
    with pytest.raises(TypeError):
        Schedule(acct, paid.entry, paid.steps)
    with pytest.raises(dp.PrivacyError, match="departs"):
        Schedule(acct, paid.entry).spend("q", Laplace(100.0))
    twin = Schedule(acct, paid.entry)  # a second handle shares the ledger's count
    paid.spend("q", Laplace(0.01))
    assert twin.left == (("q", 2),) and acct.spent.epsilon == pytest.approx(0.03)


def test_a_forged_prepaid_step_in_a_file_is_refused(tmp_path):
    path = tmp_path / "f.sqlite"
    acct = dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne())
    acct.declare("s", [("q", Laplace(0.01), 3)])
    _insert(path, dp.LedgerEntry("q", "Laplace", "replace-one", dp.PureDP(1000.0), "forged", prepaid="s",
                                 event={"dp_event": "EpsilonDeltaDpEvent", "epsilon": 1000.0, "delta": 0.0}))
    with pytest.raises(dp.LedgerError, match="does not cover"):
        dp.Accountant.open(path, BUDGET)


def test_a_rolled_back_charge_never_hides_another_writers_entry(tmp_path):
    """A refused check after the append rolled back the row but not what the store had seen, so
    another writer's next row (reusing the id) was never counted: 1.7 spent of a budget of 1."""
    path = tmp_path / "r.sqlite"
    a = dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne())
    b = dp.Accountant.open(path, BUDGET)
    schedule = a.declare("s", [("q", Laplace(0.1))])
    schedule.spend("q", Laplace(0.1))
    with pytest.raises(dp.PrivacyError):
        dp.Schedule(a, schedule.entry).spend("q", Laplace(0.1))  # one step more than declared
    b.spend("b", dp.PureDP(0.8))
    with pytest.raises(dp.BudgetExceeded):
        a.spend("a", dp.PureDP(0.8))
    assert dp.Accountant.inspect(path).spent.epsilon == pytest.approx(0.9) and len(a.ledger) == 3


def test_a_refused_foreign_entry_stays_refused(tmp_path):
    path = tmp_path / "l.sqlite"
    acct = dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne())
    _insert(path, dp.LedgerEntry("foreign", "declared", "edge-adjacency", STEP, "declared guarantee"))
    for _ in range(2):
        with pytest.raises(dp.RelationError):
            acct.spend("b", dp.PureDP(0.1))
    assert len(acct.ledger) == 1


def test_a_refused_prepaid_step_leaves_no_entry_in_memory():
    acct = dp.Accountant(BUDGET, relation=dp.ReplaceOne())
    schedule = acct.declare("s", [("q", Laplace(0.1))])
    schedule.spend("q", Laplace(0.1))
    with pytest.raises(dp.PrivacyError):
        dp.Schedule(acct, schedule.entry).spend("q", Laplace(0.1))  # a second handle, one step too many
    assert [(e.name, e.prepaid) for e in acct.ledger] == [("s", None), ("q", "s")]


def test_a_relation_of_ones_own_is_charged_and_kept_apart():
    """Third review: the check rebuilt each entry's relation from its name, which knows only the
    built-ins, so a graph under a user's own relation could no longer be charged at all."""
    import attrs
    import numpy as np

    @attrs.frozen
    class SwapOne(dp.relations.Relation):
        name = "swap-one"

        def distance(self, a, b):
            return float(np.sum(np.asarray(a) != np.asarray(b)))

        def neighbours(self, data, rng, count=10):
            yield data

    graph = dp.Graph(dp.release("s", Laplace(1.0), lambda x: float(np.clip(x, 0, 1).sum())), SwapOne())
    acct = dp.Accountant(dp.PureDP(3.0))
    acct.run(graph, np.zeros(5))
    acct.run(graph, np.zeros(5))
    assert acct.spent.epsilon == 2.0 and acct.ledger[0].relation == "swap-one"
    with pytest.raises(dp.RelationError, match="swap-one"):
        acct.spend("other", dp.PureDP(0.5), dp.ReplaceOne())
