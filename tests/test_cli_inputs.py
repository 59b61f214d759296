"""``dpledger run --input``: the file's format is detected (extension and content) and a file this
estimator does not take is refused in one line naming the file, what it is and what the estimator
takes, with exit code 2, no Python warning and no privacy charge (#17).

The three mistakes the issue names run through the installed console script, as a user runs
them; the other cases run ``cli.main`` in this process (the same code, without a second
interpreter's start-up per case)."""

import gc
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from dpledger import cli
from dpledger.algorithms import sbm

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
DPLEDGER = shutil.which("dpledger", path=os.path.dirname(sys.executable)) or shutil.which("dpledger")

MEAN = ["mean.clipped", "--epsilon", "1", "R=100", "n=500", "d=5"]
GRAPH = ["sbm.exact", "--epsilon", "4", "--delta", "1e-6", "n=34", "d=4.6", "gamma=0.6"]
DATASET_FORMATS = "mean.clipped takes a dataset: CSV or whitespace-separated numbers"
GRAPH_FORMATS = "sbm.exact takes a graph: an edge list"


def dpledger(*arguments, console_script: bool = False) -> subprocess.CompletedProcess:
    """``dpledger ARGUMENTS``: in this process (``cli.main``, every warning recorded into stderr, so a
    leaked one would be seen), or through the installed console script as a user runs it."""
    arguments = [str(argument) for argument in arguments]
    if console_script:
        assert DPLEDGER, "the dpledger console script is not installed (pip install -e .)"
        env = {**os.environ, "PYTHONWARNINGS": "always", "COLUMNS": "200"}
        return subprocess.run([DPLEDGER, *arguments], capture_output=True, text=True, env=env, timeout=300)
    out, err = io.StringIO(), io.StringIO()
    gc.collect()  # finalise earlier tests' garbage (an unclosed connection warns when collected) outside the capture
    with warnings.catch_warnings(record=True) as caught, redirect_stdout(out), redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            code = cli.main(arguments)
        except SystemExit as exit:  # argparse's usage errors
            code = exit.code
    leaked = "".join(f"{warning.category.__name__}: {warning.message}\n" for warning in caught)
    return subprocess.CompletedProcess(arguments, code, out.getvalue(), err.getvalue() + leaked)


def run(estimator, path, ledger, *extra, console_script: bool = False) -> subprocess.CompletedProcess:
    return dpledger("run", *estimator, "--input", path, "--ledger", ledger, "--budget-epsilon", "10",
                    "--budget-delta", "1e-5", "--seed", "0", "--json", *extra, console_script=console_script)


def refused(result, path, *expected) -> str:
    """Exit code 2 and exactly one line on stderr, naming the file and each expected phrase."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("dpledger: error: ") and str(path) in line, line
    for phrase in expected:
        assert phrase in line, (phrase, line)
    for leak in ("Warning", "Traceback", "float64", "int64", "loadtxt"):
        assert leak not in line, (leak, line)
    return line


def entries(ledger) -> list:
    shown = dpledger("ledger", "show", ledger, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)["entries"]


@pytest.fixture
def points(tmp_path):
    """500 points in R^5 near (20, 20, 20, 20, -20), as CSV under a header line."""
    path = tmp_path / "points.csv"
    data = np.random.default_rng(0).normal(20.0, 1.0, size=(500, 5)) * [1, 1, 1, 1, -1]
    np.savetxt(path, data, delimiter=",", header="a,b,c,d,e", comments="", fmt="%.4f")
    return path


@pytest.fixture
def karate_adjacency():
    edges = np.loadtxt(EXAMPLES / "karate.edges", dtype=int)
    return sbm.from_edge_list(edges, 34)


def test_graphml_given_to_a_mean_estimator_is_refused(tmp_path):
    path = EXAMPLES / "karate.graphml"
    line = refused(run(MEAN, path, tmp_path / "l.sqlite", console_script=True), path, "GraphML", DATASET_FORMATS,
                   ".npy")
    assert "could not convert" not in line


@pytest.mark.parametrize("content", ['{"points": [[1, 2], [3, 4]]}\n', "[[1, 2], [3, 4]]\n", "{}"])
def test_a_json_file_is_refused_without_a_warning(content, tmp_path):
    path = tmp_path / "points.json"
    path.write_text(content)
    console_script = content.startswith("{\"")  # one case as a user runs it
    refused(run(MEAN, path, tmp_path / "l.sqlite", console_script=console_script), path, "JSON", DATASET_FORMATS)


def test_a_float_csv_given_to_sbm_exact_is_refused(points, tmp_path):
    line = refused(run(GRAPH, points, tmp_path / "l.sqlite", console_script=True), points, "not integer", GRAPH_FORMATS,
                   "GraphML", ".npy adjacency")
    assert "line 2" in line  # the first data row, under the header


def test_an_integer_table_of_the_wrong_width_is_not_an_edge_list(tmp_path):
    path = tmp_path / "triples.txt"
    path.write_text("0 1 2\n3 4 5\n")
    refused(run(GRAPH, path, tmp_path / "l.sqlite"), path, "3 columns", GRAPH_FORMATS)


@pytest.mark.parametrize("estimator", [MEAN, GRAPH], ids=["dataset", "graph"])
@pytest.mark.parametrize("content", ["", "\n  \n", "x,y\n", "# only a comment\n"],
                         ids=["empty", "blank", "header", "comment"])
def test_a_file_without_data_is_refused_and_charges_nothing(estimator, content, tmp_path):
    """An empty edge list used to run sbm.exact on the empty graph, charging the budget."""
    path = tmp_path / "empty.csv"
    path.write_text(content)
    ledger = tmp_path / "l.sqlite"
    refused(run(estimator, path, ledger), path, "empty" if not content.strip() else "no data")
    assert not ledger.exists()


@pytest.mark.parametrize("estimator", [MEAN, GRAPH], ids=["dataset", "graph"])
def test_a_missing_file_is_refused(estimator, tmp_path):
    path = tmp_path / "nowhere.csv"
    formats = DATASET_FORMATS if estimator is MEAN else GRAPH_FORMATS
    refused(run(estimator, path, tmp_path / "l.sqlite"), path, "no such file", formats)
    refused(run(estimator, tmp_path, tmp_path / "l.sqlite"), tmp_path, "a directory", formats)


def test_a_format_error_writes_no_ledger_entry(points, tmp_path):
    ledger = tmp_path / "ledger.sqlite"
    first = run(MEAN, points, ledger)
    assert first.returncode == 0, first.stderr
    assert len(entries(ledger)) == 1
    spent = json.loads(first.stdout)["spent"]
    wrong = tmp_path / "points.json"
    wrong.write_text("[[1, 2]]")
    for path in (EXAMPLES / "karate.graphml", wrong, tmp_path / "missing.csv"):
        refused(run(MEAN, path, ledger), path)
    assert len(entries(ledger)) == 1
    shown = dpledger("ledger", "show", ledger, "--json")
    assert json.loads(shown.stdout)["spent"] == spent


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("points.npy", "1,2\n3,4\n", ["extension .npy", "CSV"]),
    ("points.csv", "<?xml version='1.0'?>\n<graphml></graphml>\n", ["GraphML", "extension .csv"]),
    ("points.csv", b"\x00\x01\x02\xff\xfe", ["binary"]),
    ("points.csv", b"\x93NUMPY\x01\x00v\x00{'descr': '<f8'", ["NumPy .npy", "extension .csv"]),
    ("points.xml", "<?xml version='1.0'?>\n<data><p>1</p></data>\n", ["XML", "not GraphML"]),
    ("points.csv", "1,2\n3,4\n5,x\n", ["line 3", "'5,x'"]),
    ("points.csv", "1,2\n3,4,5\n", ["line 2", "3 fields", "2"]),
])
def test_other_mistakes_are_refused_in_one_line(name, content, expected, tmp_path):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    refused(run(MEAN, path, tmp_path / "l.sqlite"), path, *expected)


def test_a_truncated_npy_file_is_refused(tmp_path):
    path = tmp_path / "points.npy"
    np.save(path, np.zeros((500, 5)))
    path.write_bytes(path.read_bytes()[:200])
    refused(run(MEAN, path, tmp_path / "l.sqlite"), path, "NumPy .npy", "cannot be read")


def test_graphml_that_does_not_parse_is_refused(tmp_path):
    path = tmp_path / "broken.graphml"
    path.write_text((EXAMPLES / "karate.graphml").read_text()[:300])
    refused(run(GRAPH, path, tmp_path / "l.sqlite"), path, "GraphML", "cannot be parsed")


def test_an_edge_list_naming_a_vertex_beyond_n_is_refused(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1 34\n")
    refused(run(GRAPH, path, tmp_path / "l.sqlite"), path, "0..33")


def test_data_the_estimator_refuses_is_refused_before_the_ledger_is_opened(points, tmp_path):
    """A readable file whose content the estimator's validation refuses (a 500 x 5 array is no
    adjacency matrix) names the file and leaves no ledger file behind."""
    path, ledger = tmp_path / "points.npy", tmp_path / "l.sqlite"
    np.save(path, np.loadtxt(points, delimiter=",", skiprows=1))
    refused(run(GRAPH, path, ledger), path, "square adjacency matrix", "(500, 5)")
    assert not ledger.exists()


def test_the_formats_each_estimator_takes_still_run(points, karate_adjacency, tmp_path):
    """Datasets: CSV (with or without header), whitespace text and .npy; graphs: whitespace and
    comma edge lists (with a header and comments), GraphML and a .npy adjacency matrix."""
    data = np.loadtxt(points, delimiter=",", skiprows=1)
    plain, spaced, array = tmp_path / "plain.csv", tmp_path / "points.txt", tmp_path / "points.npy"
    np.savetxt(plain, data, delimiter=",")
    np.savetxt(spaced, data)
    np.save(array, data)
    edges = np.loadtxt(EXAMPLES / "karate.edges", dtype=int)
    comma, adjacency = tmp_path / "karate.csv", tmp_path / "karate.npy"
    np.savetxt(comma, edges, delimiter=",", fmt="%d", header="# the karate club\nsource,target", comments="")
    np.save(adjacency, karate_adjacency)
    cases = [(MEAN, path, (5,)) for path in (points, plain, spaced, array)]
    cases += [(GRAPH, path, (34,)) for path in (EXAMPLES / "karate.edges", comma, EXAMPLES / "karate.graphml",
                                                 adjacency)]
    for number, (estimator, path, shape) in enumerate(cases):
        result = run(estimator, path, tmp_path / f"l{number}.sqlite")
        assert result.returncode == 0 and result.stderr == "", (path, result.stderr)
        output = json.loads(result.stdout)
        assert np.shape(output["output"]) == shape, path
