"""The command line: plan, run against a ledger file, ledger show, exit codes."""

import json

import numpy as np
import pytest

from dpledger import cli
from dpledger.algorithms import sbm

PARAMS = ["--epsilon", "4", "--delta", "1e-6", "n=60", "d=30", "gamma=0.6"]


@pytest.fixture
def edges(tmp_path):
    adjacency, _ = sbm.sample(60, 30, 0.6, np.random.default_rng(0))
    path = tmp_path / "edges.txt"
    np.savetxt(path, np.argwhere(np.triu(adjacency, 1)), fmt="%d")
    return path


def test_plan_prints_the_guarantee_as_json(capsys):
    assert cli.main(["plan", "sbm.exact", *PARAMS, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["guarantee"] == {"type": "ApproxDP", "epsilon": 4.0, "delta": 1e-6}
    assert plan["rule"].startswith("random partition")


def test_run_charges_a_ledger_file_and_refuses_overspending(edges, tmp_path, capsys):
    ledger = tmp_path / "ledger.sqlite"
    common = ["run", "sbm.exact", *PARAMS, "--input", str(edges), "--ledger", str(ledger),
              "--budget-epsilon", "6", "--budget-delta", "1e-5", "--seed", "1"]
    assert cli.main(common) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["output"]) == 60 and result["spent"]["epsilon"] == 4.0
    assert cli.main(common) == 1  # a second run would exceed the budget
    assert "Nothing was charged" in capsys.readouterr().err
    assert cli.main(["ledger", "show", str(ledger), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["entries"]) == 1 and shown["meta"]["relation"] == "edge-adjacency"


def test_bad_usage_and_input_exit_with_two(edges, tmp_path, capsys):
    assert cli.main(["plan", "sbm.exact", "--epsilon", "1", "n=10"]) == 2
    assert cli.main(["plan", "no.such", "--epsilon", "1"]) == 2
    assert cli.main(["ledger", "show", str(tmp_path / "missing.sqlite")]) == 2
    assert cli.main(["run", "sbm.exact", *PARAMS, "--input", str(tmp_path / "none.txt"), "--ledger",
                     str(tmp_path / "l.sqlite"), "--budget-epsilon", "5", "--budget-delta", "1e-5"]) == 2
    with pytest.raises(SystemExit) as exit_:
        cli.main(["plan", "sbm.exact", "--no-such-flag"])
    assert exit_.value.code == 2


def test_estimators_lists_the_registry(capsys):
    assert cli.main(["estimators", "--json"]) == 0
    names = [row["name"] for row in json.loads(capsys.readouterr().out)["estimators"]]
    assert {"sbm.weak", "sbm.exact", "sbm.exponential"} <= set(names)
