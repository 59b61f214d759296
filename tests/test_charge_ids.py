"""Client-chosen charge ids: a retry of a charge whose commit the client never saw (a lost
connection) finds its id recorded, charges nothing and runs nothing, on every store: a spend, a
run, a declared schedule and each of its prepaid steps, from Python and from ``dpledger run``."""

import json

import numpy as np
import pytest

import dpledger as dp
from dpledger.cli import main
from dpledger.mechanisms import Laplace

BUDGET = dp.PureDP(1.0)


def _graph(touched=None):
    """A 0.5-DP release; each time it reads the data, ``touched`` (a list) grows by one."""
    def statistic(x):
        if touched is not None:
            touched.append(len(x))
        return 0.0

    return dp.Graph(dp.release("s", Laplace(0.5), statistic), relation=dp.ReplaceOne())


def test_a_recorded_id_returns_its_entry_and_charges_nothing(ledger):
    path = ledger
    first = dp.Accountant.open(path, BUDGET, relation=dp.ReplaceOne())
    entry = first.spend("q", dp.PureDP(0.5), charge_id="job-1")
    retry = dp.Accountant.open(path)  # a new client, as after a lost connection
    assert retry.spend("q", dp.PureDP(0.5), charge_id="job-1") == entry
    assert len(retry.ledger) == 1 and retry.spent.epsilon == 0.5
    assert dp.Accountant.inspect(path).ledger[0].charge_id == "job-1"


def test_a_retried_run_never_runs_again():
    acct = dp.Accountant(BUDGET, relation=dp.ReplaceOne())
    once = acct.run(_graph(), np.zeros(3), charge_id="run-7")
    again = acct.run(_graph(), np.zeros(3), charge_id="run-7")
    assert not once.replayed and again.replayed and again.output is None and again.entry == once.entry
    assert len(acct.ledger) == 1 and acct.spent.epsilon == 0.5


def test_an_id_of_another_charge_is_refused_and_nothing_charged():
    acct = dp.Accountant(BUDGET, relation=dp.ReplaceOne())
    acct.spend("q", dp.PureDP(0.25), charge_id="x")
    with pytest.raises(ValueError, match="recorded for 'q'.*new id"):
        acct.spend("other", dp.PureDP(0.25), charge_id="x")
    assert len(acct.ledger) == 1 and acct.spent.epsilon == 0.25
    acct.spend("other", dp.PureDP(0.25), charge_id="y")
    assert acct.spent.epsilon == 0.5


def test_a_retried_declaration_returns_its_schedule_and_charges_nothing(ledger):
    steps = [("s", _graph(), 2)]
    first = dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne())
    schedule = first.declare("daily", steps, charge_id="declare-1")
    retry = dp.Accountant.open(ledger)  # a new client, as after a lost connection
    again = retry.declare("daily", steps, charge_id="declare-1")
    assert again.entry == schedule.entry and again.left == (("s", 2),)
    assert len(retry.ledger) == 1 and retry.spent.epsilon == first.spent.epsilon
    with pytest.raises(ValueError, match="already charged"):  # without its id, a second declaration
        retry.declare("daily", steps)
    assert len(dp.Accountant.inspect(ledger).ledger) == 1


def test_a_retried_prepaid_step_counts_no_step_and_never_touches_the_data(ledger):
    touched, steps = [], [("s", _graph(), 2)]
    acct = dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne())
    once = acct.declare("daily", steps, charge_id="declare-1").run(_graph(touched), np.zeros(3), charge_id="day-1")
    retry = dp.Accountant.open(ledger)  # a new client: its retries find the schedule and its step recorded
    schedule = retry.declare("daily", steps, charge_id="declare-1")
    again = schedule.run(_graph(touched), np.zeros(3), charge_id="day-1")
    assert not once.replayed and again.replayed and again.output is None and again.outputs == {}
    assert again.entry == once.entry and touched == [3]  # only the first run read the data
    assert schedule.left == (("s", 1),) and len(dp.Accountant.inspect(ledger).ledger) == 2
    assert not schedule.run(_graph(touched), np.zeros(3), charge_id="day-2").replayed and touched == [3, 3]
    assert schedule.left == ()


def test_an_id_reused_for_another_charge_is_refused_naming_both(ledger):
    touched = []
    acct = dp.Accountant.open(ledger, BUDGET, relation=dp.ReplaceOne())
    acct.spend("s", dp.PureDP(0.25), charge_id="x")
    with pytest.raises(ValueError, match=r"'x' is recorded for 's' \(.*\), not 'daily' \(schedule, .*new id"):
        acct.declare("daily", [("s", dp.PureDP(0.25))], charge_id="x")
    schedule = acct.declare("daily", [("s", dp.PureDP(0.25))], charge_id="y")
    with pytest.raises(ValueError, match=r"recorded for 's' \([^)]*\), not 's' \(.*prepaid by schedule 'daily'"):
        schedule.spend("s", dp.PureDP(0.25), charge_id="x")  # the same step, but one the schedule pays for
    with pytest.raises(ValueError, match=r"recorded for 'daily' \(schedule.*Nothing was charged\.$") as refusal:
        schedule.run(_graph(touched), np.zeros(3), charge_id="y")
    assert "\n" not in str(refusal.value) and touched == [] and schedule.left == (("s", 1),)
    assert [e.name for e in dp.Accountant.inspect(ledger).ledger] == ["s", "daily"]


def test_dpledger_run_with_a_recorded_charge_id_charges_and_runs_nothing(tmp_path, capsys):
    data = tmp_path / "x.csv"
    np.savetxt(data, np.random.default_rng(0).normal(size=(200, 2)), delimiter=",")
    command = ["run", "mean.localised", "--epsilon", "0.5", "R=10", "n=200", "d=2", "--input", str(data),
               "--ledger", str(tmp_path / "l.sqlite"), "--budget-epsilon", "1", "--charge-id", "nightly-7"]
    assert main([*command, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main([*command, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert not first["replayed"] and first["output"] is not None
    assert again["replayed"] and again["output"] is None and again["spent"] == first["spent"]
    assert main(command) == 0 and "'nightly-7' was already recorded" in capsys.readouterr().out
    assert [e.charge_id for e in dp.Accountant.inspect(tmp_path / "l.sqlite").ledger] == ["nightly-7"]
