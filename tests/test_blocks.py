"""Block ledgers (one budget per data block) on every durable store: each block spends its own
budget, a charge naming several blocks is all or nothing, a run sees only its blocks' records,
ReplaceOne is refused, and processes charging one block never overspend it."""

import json

import numpy as np
import pytest

import dpledger as dp
from dpledger.cli import main
from dpledger.mechanisms import Gaussian, Laplace
from spending import spend_together

BUDGET = dp.PureDP(1.0)
WEEKS = ("2026-W01", "2026-W02")


def _open(ledger, blocks=WEEKS):
    return dp.Accountant.open(ledger, BUDGET, blocks=blocks)


def _unchanged(ledger, entries: int) -> None:
    assert len(dp.Accountant.inspect(ledger).ledger) == entries


def test_disjoint_blocks_each_spend_their_full_budget(ledger):
    acct = _open(ledger)
    assert acct.blocks == WEEKS and acct.relation == dp.AddRemoveOne()
    for i in range(10):  # exact totals per block: ten tenths fit
        acct.spend(f"w1-{i}", dp.PureDP(0.1), blocks=["2026-W01"])
    acct.spend("w2", BUDGET, blocks=["2026-W02"])
    for week in WEEKS:
        with pytest.raises(dp.BudgetExceeded, match=f"block '{week}'.*Nothing was charged"):
            acct.spend("more", dp.PureDP(1e-9), blocks=[week])
    read = dp.Accountant.inspect(ledger)
    assert [read.spent_in(week).epsilon for week in WEEKS] == [pytest.approx(1.0), 1.0]
    assert read.spent.epsilon == 1.0 and read.remaining.epsilon == 0.0  # the most-charged block


def test_a_charge_naming_two_blocks_is_refused_whole(ledger):
    acct = _open(ledger)
    acct.spend("w1", dp.PureDP(0.8), blocks=["2026-W01"])
    with pytest.raises(dp.BudgetExceeded, match="block '2026-W01'"):
        acct.spend("both", dp.PureDP(0.5), blocks=["2026-W02", "2026-W01"])
    again = dp.Accountant.open(ledger)
    assert again.spent_in("2026-W02").epsilon == 0.0 and again.spent_in("2026-W01").epsilon == 0.8
    entry = again.spend("both", dp.PureDP(0.2), blocks=WEEKS)
    assert entry.blocks == WEEKS and [again.spent_in(w).epsilon for w in WEEKS] == [1.0, 0.2]
    _unchanged(ledger, 2)


def test_every_block_keeps_the_ledgers_filter(ledger):
    acct = dp.Accountant.open(ledger, dp.ApproxDP(1.0, 1e-6), "zcdp", blocks=WEEKS)
    step = Gaussian(0.4, 1e-7)
    acct.spend("both", step, blocks=WEEKS)
    admitted = {}
    for week in WEEKS:  # each block alone admits the same further steps: a budget each, one filter
        admitted[week] = 0
        while True:
            try:
                acct.spend(f"{week}-{admitted[week]}", step, blocks=[week])
            except dp.BudgetExceeded:
                break
            admitted[week] += 1
    assert admitted[WEEKS[0]] == admitted[WEEKS[1]] >= 1
    read = dp.Accountant.open(ledger)
    assert read.filter.name == "zcdp" and read.spent_in(WEEKS[0]).amounts == read.spent_in(WEEKS[1]).amounts


def test_bad_block_names_are_one_line_naming_the_fix_and_charge_nothing(ledger, tmp_path):
    acct = _open(ledger)
    refusals = [(lambda: acct.spend("x", dp.PureDP(0.1), blocks=["2026-W09"]), "no block '2026-W09'.*add_blocks"),
                (lambda: acct.spend("x", dp.PureDP(0.1)), "budget per block.*blocks="),
                (lambda: acct.spend("x", dp.PureDP(0.1), blocks=["2026-W01", "2026-W01"]), "twice"),
                (lambda: acct.declare("s", [("q", dp.PureDP(0.1))]), "schedule cannot be charged to blocks"),
                (lambda: dp.Accountant.open(ledger, blocks=["2026-W09"]), "no block '2026-W09'")]
    for refuse, why in refusals:
        with pytest.raises(ValueError, match=why) as refusal:
            refuse()
        assert "\n" not in str(refusal.value)
    _unchanged(ledger, 0)
    plain = dp.Accountant.open(tmp_path / "plain.sqlite", BUDGET, relation=dp.AddRemoveOne())
    for refuse in (lambda: plain.spend("x", dp.PureDP(0.1), blocks=["2026-W01"]),
                   lambda: plain.add_blocks(["2026-W01"]),
                   lambda: dp.Accountant.open(tmp_path / "plain.sqlite", blocks=["2026-W01"])):
        with pytest.raises(ValueError, match="one ledger-wide budget.*drop blocks="):
            refuse()
    assert len(plain.ledger) == 0


def test_records_of_other_blocks_never_reach_the_graph(ledger):
    seen = []

    def count(records):
        seen.append(records.copy())
        return float(len(records))

    graph = dp.Graph(dp.release("n", Laplace(1.0), count), relation=dp.AddRemoveOne(),
                     domain=dp.Records(low=0.0, high=1.0))
    records = np.array([0.1, 99.0, 0.2, np.nan, 0.3])  # the other week's records are outside the domain
    weeks = ["2026-W01", "2026-W02", "2026-W01", "2026-W02", "2026-W01"]
    acct = _open(ledger)
    result = acct.run(graph, records, rng=np.random.default_rng(0), blocks=["2026-W01"], block_of=weeks)
    assert len(seen) == 1 and seen[0].tolist() == [0.1, 0.2, 0.3]
    assert result.entry.blocks == ("2026-W01",) and acct.spent_in("2026-W02").epsilon == 0.0
    with pytest.raises(ValueError, match="domain="):  # the other week's records are refused only when read
        acct.run(graph, records, blocks=["2026-W02"], block_of=weeks)
    with pytest.raises(ValueError, match="one block name .* per record"):
        acct.run(graph, records, blocks=["2026-W01"], block_of=weeks[:4])
    with pytest.raises(ValueError, match="budget per block.*blocks="):  # before the data is read
        acct.run(graph, records, block_of=weeks)
    assert len(seen) == 1
    _unchanged(ledger, 1)


def test_added_blocks_get_a_fresh_budget_every_client_sees_and_are_never_reset(ledger):
    acct = _open(ledger, blocks=["2026-W01"])
    other = dp.Accountant.open(ledger)  # another client, opened before the block exists
    acct.spend("w1", BUDGET, blocks=["2026-W01"])
    assert acct.add_blocks(["2026-W02", "2026-W03"]) == ("2026-W01", "2026-W02", "2026-W03")
    other.spend("w2", BUDGET, blocks=["2026-W02"])  # read inside its charge's transaction
    with pytest.raises(ValueError, match="already holds block '2026-W01'.*never reset"):
        other.add_blocks(["2026-W04", "2026-W01"])
    read = dp.Accountant.inspect(ledger)
    assert read.blocks == ("2026-W01", "2026-W02", "2026-W03")
    assert [read.spent_in(w).epsilon for w in read.blocks] == [1.0, 1.0, 0.0]


def test_replace_one_is_refused_on_a_block_ledger(ledger):
    with pytest.raises(dp.RelationError, match="removal from one block and an addition to another"):
        dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne(), blocks=WEEKS)
    acct = _open(ledger)
    graph = dp.Graph(dp.release("s", Laplace(0.5), lambda x: 0.0), relation=dp.ReplaceOne())
    with pytest.raises(dp.RelationError, match="AddRemoveOne().*Nothing was charged"):
        acct.spend("x", dp.PureDP(0.1), relation=dp.ReplaceOne(), blocks=["2026-W01"])
    with pytest.raises(dp.RelationError, match="removal from one block"):
        acct.run(graph, np.zeros(2), blocks=["2026-W01"], block_of=["2026-W01"] * 2)
    _unchanged(ledger, 0)


def test_reopened_and_shown_ledgers_read_each_block(ledger, capsys):
    _open(ledger).spend("w1", dp.PureDP(0.25), blocks=["2026-W01"])
    again = dp.Accountant.open(ledger)
    assert again.blocks == WEEKS and again.ledger[0].blocks == ("2026-W01",)
    assert main(["ledger", "show", ledger, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["blocks"]["2026-W01"]["spent"]["epsilon"] == 0.25
    assert shown["blocks"]["2026-W02"]["remaining"]["epsilon"] == 1.0
    assert shown["entries"][0]["blocks"] == ["2026-W01"]
    assert main(["ledger", "show", ledger]) == 0
    assert "block 2026-W02: spent" in capsys.readouterr().out


def test_processes_charging_one_block_stay_within_its_budget(ledger):
    _open(ledger).close()
    spend_together(ledger, BUDGET, dp.PureDP(1 / 32), 24, 2, blocks=["2026-W02"])  # 48 tries; exactly 32 fit
    read = dp.Accountant.inspect(ledger)
    assert len(read.ledger) == 32 and read.spent_in("2026-W02").epsilon == 1.0
    assert read.spent_in("2026-W01").epsilon == 0.0


def test_the_command_line_runs_on_blocks_of_a_csv_column(ledger, tmp_path, monkeypatch, capsys):
    from dpledger.graph import registry

    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    seen = []

    @dp.register("test.blocks.count")
    def count(epsilon: float = 0.5):
        """A noisy count of records in [0, 1]."""
        return dp.Graph(dp.release("n", Laplace(epsilon), lambda x: seen.append(x.tolist()) or float(len(x))),
                        relation=dp.AddRemoveOne(), domain=dp.Records(shape=(1,), low=0.0, high=1.0))

    data = tmp_path / "events.csv"
    data.write_text("week,x\n2026-W01,0.5\n2026-W02,not a number\n2026-W01,0.25\n")
    run = ["run", "test.blocks.count", "--input", str(data), "--ledger", ledger, "--block-column", "week"]
    assert main(run + ["--budget-epsilon", "1", "--blocks", "2026-W01", "--json"]) == 0  # a new block ledger
    assert seen == [[[0.5], [0.25]]]
    assert json.loads(capsys.readouterr().out)["blocks"]["2026-W01"]["spent"]["epsilon"] == 0.5
    assert main(run + ["--blocks", "2026-W02"]) == 2  # its own rows are read when it is named
    assert main(run + ["--blocks", "2026-W03"]) == 2
    assert "ledger add-blocks" in capsys.readouterr().err
    assert main(["ledger", "add-blocks", ledger, "2026-W03"]) == 0
    assert main(run + ["--blocks", "2026-W03"]) == 0 and seen[-1] == []
    assert main(run[:-2]) == 2  # without --blocks the whole file is read, and refused
    assert [e.blocks for e in dp.Accountant.inspect(ledger).ledger] == [("2026-W01",), ("2026-W03",)]
