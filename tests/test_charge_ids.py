"""Client-chosen charge ids: a retry of a charge whose commit the client never saw (a lost
connection) finds its id recorded, charges nothing and runs nothing, on every store."""

import numpy as np
import pytest

import dpledger as dp
from dpledger.mechanisms import Laplace

BUDGET = dp.PureDP(1.0)


def _graph():
    return dp.Graph(dp.release("s", Laplace(0.5), lambda x: 0.0), relation=dp.ReplaceOne())


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
