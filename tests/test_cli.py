"""The command line: plan, run against a ledger file, ledger show, exit codes."""

import json
import os
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

from dpledger import ReplaceOne, cli, inputs
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


def test_python_dash_m_dpledger_is_the_command_line():
    done = subprocess.run([sys.executable, "-m", "dpledger", "plan", "sbm.exact", *PARAMS, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["guarantee"]["epsilon"] == 4.0
    unknown = subprocess.run([sys.executable, "-m", "dpledger", "plan", "no.such"], capture_output=True, text=True)
    assert unknown.returncode == 2 and unknown.stderr.startswith("dpledger: error: no estimator named 'no.such'")


@pytest.mark.parametrize("json_output", [False, True], ids=["table", "json"])
def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status(json_output):
    """``dpledger estimators | head`` used to exit 1, the status of a privacy refusal."""
    command = [sys.executable, "-m", "dpledger", "estimators", *(["--json"] if json_output else [])]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        process.stdout.close()  # the reader is gone before anything is written
        error = process.stderr.read()
        assert process.wait(timeout=120) == 141 and b"Traceback" not in error, error


def test_piped_output_is_as_wide_as_columns_says(edges, tmp_path):
    """A pipe used to get 150 columns whatever COLUMNS said (step names split mid-word at 80)."""
    ledger = tmp_path / "l.sqlite"
    assert cli.main(["run", "sbm.exact", *PARAMS, "--input", str(edges),
                     "--ledger", str(ledger), "--budget-epsilon", "8", "--budget-delta", "1e-5"]) == 0
    shown = subprocess.run([sys.executable, "-m", "dpledger", "ledger", "show", str(ledger)], capture_output=True,
                           text=True, env={**os.environ, "COLUMNS": "80"}, timeout=120)
    lines = shown.stdout.splitlines()
    assert shown.returncode == 0 and max(map(len, lines)) <= 80 and any("rough_matrix" in line for line in lines)


def test_run_charges_a_ledger_file_and_refuses_overspending(edges, tmp_path, capsys):
    ledger = tmp_path / "ledger.sqlite"
    common = ["run", "sbm.exact", *PARAMS, "--input", str(edges), "--ledger", str(ledger),
              "--budget-epsilon", "6", "--budget-delta", "1e-5", "--seed", "1", "--json"]
    assert cli.main(common) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["output"]) == 60 and result["spent"]["epsilon"] == 4.0
    assert cli.main(common) == 1  # a second run would exceed the budget
    assert "Nothing was charged" in capsys.readouterr().err
    assert cli.main(["ledger", "show", str(ledger), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["entries"]) == 1 and shown["relation"] == "edge-adjacency"
    assert shown["budget"] == {"type": "ApproxDP", "epsilon": 6.0, "delta": 1e-5} and shown["filter"] == "basic"
    assert (shown["spent"]["epsilon"], shown["remaining"]["epsilon"]) == (4.0, 2.0)
    assert cli.main(["ledger", "show", str(ledger)]) == 0
    text = capsys.readouterr().out
    assert "budget (6, 1e-05)-DP under the 'basic' filter" in text
    assert "spent: Σε = 4 of 6" in text and "remaining: Σε = 2 of 6" in text
    assert text.index("remaining:") < text.index("sbm.exact")  # at the top, before the charges


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


EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
SHIPPED = {  # the README's "Run on the shipped examples" commands, with the output's expected shape
    "karate.edges": (["sbm.exact", "--epsilon", "4", "--delta", "1e-6", "n=34", "d=4.6", "gamma=0.6"], (34,)),
    "karate.graphml": (["sbm.exact", "--epsilon", "4", "--delta", "1e-6", "n=34", "d=4.6", "gamma=0.6"], (34,)),
    "mixture.csv": (["gmm.neighbourhood", "--epsilon", "4", "--delta", "1e-6", "k=3", "n=6000", "d=2",
                     "separation=10"], (3, 2)),
    "means.csv": (["mean.localised", "--epsilon", "1", "R=100", "n=500", "d=5"], (5,)),
}


@pytest.mark.parametrize("example", sorted(SHIPPED))
def test_run_works_on_every_shipped_example(example, tmp_path, capsys):
    arguments, shape = SHIPPED[example]
    command = ["run", *arguments, "--input", str(EXAMPLES / example), "--ledger", str(tmp_path / "l.sqlite"),
               "--budget-epsilon", "8", "--budget-delta", "1e-5", "--seed", "0", "--json"]
    assert cli.main(command) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["halted"] or np.shape(result["output"]) == shape


def test_a_csv_header_is_skipped_but_a_nan_row_is_data(tmp_path):
    rows = types.SimpleNamespace(relation=ReplaceOne())  # a dataset estimator, as inputs.load sees it
    path = tmp_path / "points.csv"
    path.write_text("x,y\n1,2\n3,4\n")
    assert inputs.load(path, rows, {}).shape == (2, 2)
    path.write_text("nan,2\n3,4\n")
    assert inputs.load(path, rows, {}).shape == (2, 2)


def test_estimators_shows_whole_sentences_defaults_guarantees_and_brackets(capsys):
    """Summaries used to stop at the docstring's first line and rich ate "[low, high]"."""
    import dpledger as dp
    from dpledger.graph import registry
    from dpledger.mechanisms import Laplace

    @dp.register("test.bracketed", example=lambda rng: ({"epsilon": 1.0}, np.zeros(3)))
    def bracketed(epsilon: float, upper: float = 1.0):
        """Sum of values in [low, high], clipped to [0, upper] and released with Laplace
        noise of scale upper/ε. Further details here."""
        return dp.Graph(dp.release("s", Laplace(epsilon), lambda x: 0.0), relation=dp.ReplaceOne())

    try:
        assert cli.main(["estimators"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert ("test.bracketed(epsilon, upper=1.0) (pure ε-DP under replace-one): Sum of values in [low, high], "
                "clipped to [0, upper] and released with Laplace noise of scale upper/ε.") in text
        assert "Further details" not in text
        assert cli.main(["estimators", "--json"]) == 0
        row = next(r for r in json.loads(capsys.readouterr().out)["estimators"] if r["name"] == "test.bracketed")
        assert row["parameters"] == {"epsilon": None, "upper": "1.0"} and row["guarantee"].startswith("pure ε-DP")
    finally:
        registry._factories.pop("test.bracketed")
