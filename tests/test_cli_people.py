"""The command line talks to people (first-hour review, third pass), through the installed console
script as a user runs it: a run says what it charged and what remains, an existing ledger keeps its
budget, listings say what each estimator takes, a ledger shows when and on what, every shipped
example has a README command that runs, and `dpledger --help` loads no numerics."""

import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DPLEDGER = shutil.which("dpledger", path=os.path.dirname(sys.executable)) or shutil.which("dpledger")
GRAPH = ["sbm.exact", "--epsilon", "4", "--delta", "1e-6", "n=34", "d=4.6", "gamma=0.6"]
CENTRES = ["gmm.neighbourhood", "--epsilon", "4", "--delta", "1e-6", "k=3", "n=6000", "d=2", "separation=10"]


def dpledger(*arguments, cwd=None, env=None, columns=100) -> subprocess.CompletedProcess:
    assert DPLEDGER, "the dpledger console script is not installed (pip install -e .)"
    env = {**os.environ, "COLUMNS": str(columns), **(env or {})}
    return subprocess.run([DPLEDGER, *map(str, arguments)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def test_run_prints_a_summary_for_people_and_json_only_when_asked(tmp_path):
    ledger = tmp_path / "karate.sqlite"
    karate = ROOT / "examples" / "karate.edges"
    shown = dpledger("run", *GRAPH, "--input", karate, "--ledger", ledger, "--budget-epsilon", "8",
                     "--budget-delta", "1e-5", "--seed", "0")
    assert shown.returncode == 0, shown.stderr
    assert "{" not in shown.stdout and "\\u03a3" not in shown.stdout
    assert re.search(r"charged \(4, 1e-06\)-DP under edge-adjacency", shown.stdout)
    assert re.search(r"budget \(8, 1e-05\)-DP, 'basic' filter\): spent Σε = 4 of 8, Σδ = 1e-06 of 1e-05; "
                     r"remaining Σε = 4 of 8", " ".join(shown.stdout.split()))
    assert re.search(r"34 labels; community sizes -?\d+: \d+, -?\d+: \d+", shown.stdout)
    scripted = dpledger("run", *GRAPH, "--input", karate, "--ledger", ledger, "--seed", "0", "--json")
    result = json.loads(scripted.stdout)  # the budget came from the ledger
    assert len(result["output"]) == 34 and result["spent"]["epsilon"] == 8.0 and result["budget"]["epsilon"] == 8.0


def test_centres_are_a_small_table(tmp_path):
    shown = dpledger("run", *CENTRES, "--input", ROOT / "examples" / "mixture.csv", "--ledger", tmp_path / "l.sqlite",
                     "--budget-epsilon", "8", "--budget-delta", "1e-5", "--seed", "0")
    assert shown.returncode == 0, shown.stderr
    assert "halted" in shown.stdout or re.search(r"output: 3 × 2", shown.stdout), shown.stdout


def in_process(*arguments, capsys) -> tuple[int, str, str]:
    """``dpledger ARGUMENTS`` through ``cli.main`` (the console script's own code, without its
    second of start-up), for the cases after the first."""
    from dpledger import cli

    code = cli.main([str(argument) for argument in arguments])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_existing_ledger_refuses_only_a_contradicting_budget_in_dp_notation(tmp_path, capsys):
    ledger = tmp_path / "l.sqlite"
    karate = ROOT / "examples" / "karate.edges"
    common = ["run", *GRAPH, "--input", karate, "--ledger", ledger, "--seed", "0"]
    new = dpledger(*common)
    assert new.returncode == 2 and "is a new ledger: give its budget" in new.stderr
    assert in_process(*common, "--budget-epsilon", "8", "--budget-delta", "1e-5", capsys=capsys)[0] == 0
    assert in_process(*common, "--budget-epsilon", "8", "--budget-delta", "1e-5", capsys=capsys)[0] == 0  # the same
    code, _, error = in_process(*common, "--budget-epsilon", "9", "--budget-delta", "1e-5", capsys=capsys)
    assert code == 2 and "the budget (8, 1e-05)-DP, not the budget (9, 1e-05)-DP" in error and "{" not in error
    code, _, error = in_process(*common, "--filter", "rdp", capsys=capsys)
    assert code == 2 and "the 'basic' filter, not the 'rdp' filter" in error, error


def test_estimators_say_what_input_each_takes_in_whole_sentences():
    shown = dpledger("estimators", columns=300)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    exact = next(i for i, line in enumerate(lines) if line.startswith("sbm.exact("))
    assert lines[exact].endswith("by the random-partition rule.") and "edge split," in lines[exact]
    assert lines[exact + 1].strip().startswith("--input: a graph: an edge list")
    clipped = next(i for i, line in enumerate(lines) if line.startswith("mean.clipped("))
    assert lines[clipped + 1].strip().startswith("--input: a dataset: CSV")


def test_a_broken_plugin_is_named_and_every_other_estimator_listed(tmp_path):
    (tmp_path / "broken_est.py").write_text("raise ImportError('no module named numpyy')\n")
    dist = tmp_path / "broken_est-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-est\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[dpledger.estimators]\nbroken.count = broken_est:count\n")
    shown = dpledger("estimators", env={"PYTHONPATH": str(tmp_path)}, columns=300)
    assert shown.returncode == 0, shown.stderr
    assert "sbm.exact(" in shown.stdout and "mean.clipped(" in shown.stdout
    assert re.search(r"broken.count: failed to load: broken_est:count \(broken-est\): ImportError: no module "
                     r"named numpyy", shown.stdout), shown.stdout
    assert "charged" not in shown.stdout + shown.stderr


@pytest.fixture(scope="module")
def charged_ledger(tmp_path_factory):
    ledger = tmp_path_factory.mktemp("shown") / "l.sqlite"
    assert dpledger("run", *GRAPH, "--input", ROOT / "examples" / "karate.edges", "--label", "karate club",
                    "--ledger", ledger, "--budget-epsilon", "8", "--budget-delta", "1e-5").returncode == 0
    return ledger


def _shown_whole(shown: str, ledger) -> None:
    """Each charge's date, time and input label, and every step name, are whole words of ``shown``."""
    from dpledger.accountant import Accountant

    words = set(re.findall(r"[\w.:-]+", shown))  # lines may wrap between words, never inside one
    assert any(re.fullmatch(r"\d{4}-\d\d-\d\d", w) for w in words) and any(re.fullmatch(r"\d\d:\d\d:\d\d", w) for w in words)
    assert {"karate", "club", "UTC"} <= words
    steps = {part for step in Accountant.inspect(ledger).ledger[0].steps for part in step.path.split("/")}
    assert steps <= words, sorted(steps - words)


def test_ledger_show_gives_time_and_input(charged_ledger):
    shown = dpledger("ledger", "show", charged_ledger, columns=80)
    assert shown.returncode == 0, shown.stderr
    _shown_whole(shown.stdout, charged_ledger)


@pytest.mark.parametrize("columns", [40, 60, 100, 140, 200])
def test_ledger_show_never_breaks_a_step_name(charged_ledger, columns, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = in_process("ledger", "show", charged_ledger, capsys=capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= columns
    _shown_whole(out, charged_ledger)


def _readme_runs() -> list[str]:
    text = (ROOT / "README.md").read_text()
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        commands += [line.split("#")[0].strip() for line in joined.splitlines() if line.startswith("dpledger run ")]
    return commands


def test_every_shipped_example_has_a_readme_command_that_runs(tmp_path, capsys, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    commands = _readme_runs()
    used = {pathlib.Path(word).name for command in commands for word in shlex.split(command) if "examples/" in word}
    shipped = {path.name for path in (ROOT / "examples").iterdir()} - {"mixture_centres.csv"}  # a truth, not an input
    assert shipped <= used, sorted(shipped - used)
    for index, command in enumerate(commands):  # the first through the console script, the rest in process
        if index == 0:
            ran = dpledger(*shlex.split(command)[1:], cwd=tmp_path)
            assert ran.returncode == 0, f"{command}\n{ran.stderr}"
        else:
            monkeypatch.chdir(tmp_path)
            assert in_process(*shlex.split(command)[1:], capsys=capsys)[0] == 0, command


def test_help_loads_no_numerics():
    code = textwrap.dedent("""
        import sys
        from dpledger import cli
        try:
            cli.main(["--help"])
        except SystemExit:
            pass
        heavy = ("dp_accounting", "scipy.stats", "scipy.signal", "cvxpy", "matplotlib")
        print(",".join(name for name in heavy if name in sys.modules))
    """)
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0 and loaded.stdout.splitlines()[-1] == "", loaded.stdout + loaded.stderr
    assert dpledger("--help").returncode == 0


def test_listing_estimators_again_loads_no_estimator_and_a_changed_plugin_is_seen(tmp_path):
    """Start-up: listing used to import every estimator (dp-accounting alone takes a second) on each
    call; it is kept on disk, keyed by the installed code, so a change to a plugin shows at once."""
    plugin = tmp_path / "site"
    plugin.mkdir()
    source = ('import dpledger as dp\n\n@dp.register("cached.count")\ndef count(epsilon=1.0):\n'
              '    """{}"""\n    raise NotImplementedError\n')
    (plugin / "cached_est.py").write_text(source.format("First version."))
    dist = plugin / "cached_est-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cached-est\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[dpledger.estimators]\ncached.count = cached_est:count\n")
    env = {"PYTHONPATH": str(plugin), "DPLEDGER_CACHE": str(tmp_path / "cache")}
    code = ("import sys; from dpledger import cli; cli.main(['estimators']); "
            "print('LOADED', [m for m in ('dp_accounting', 'dpledger.mechanisms', 'scipy.stats') if m in sys.modules])")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env},
                           timeout=300)
    assert "First version." in first.stdout and "LOADED ['dp_accounting'" in first.stdout, first.stdout + first.stderr
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env},
                           timeout=300)
    assert "First version." in again.stdout and "LOADED []" in again.stdout, again.stdout + again.stderr
    (plugin / "cached_est.py").write_text(source.format("Second version, longer."))
    changed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, **env}, timeout=300)
    assert "Second version, longer." in changed.stdout and "First version." not in changed.stdout


def test_the_listing_cache_keeps_only_the_newest_listings(tmp_path, monkeypatch):
    from dpledger import catalogue

    for i in range(12):
        (tmp_path / f"estimators-{i:02d}.json").write_text("{}")
        os.utime(tmp_path / f"estimators-{i:02d}.json", ns=(i * 10**9, i * 10**9))
    catalogue._prune(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"estimators-{i:02d}.json" for i in range(4, 12)]


def test_a_one_order_renyi_ledger_from_the_command_line(tmp_path, capsys):
    """Third review: the command line could not create a one-order Rényi ledger."""
    ledger = tmp_path / "l.sqlite"
    common = ["run", "mean.clipped", "--epsilon", "1", "R=100", "n=500", "d=5", "--input",
              ROOT / "examples" / "means.csv", "--ledger", ledger, "--seed", "0", "--json"]
    code, out, err = in_process(*common, "--budget-epsilon", "8", "--budget-delta", "1e-5", "--orders", "7.6",
                                capsys=capsys)
    assert code == 0, err
    from dpledger.accountant import Accountant

    reopened = Accountant.open(ledger)
    assert reopened.filter.name == "rdp" and reopened.filter.orders == (7.6,) and "one order" in reopened.filter.source
    reopened.close()
    code, _, err = in_process(*common, "--orders", "8", capsys=capsys)
    assert code == 2 and "orders" in err


def test_an_output_file_that_cannot_be_written_is_refused_before_the_charge(tmp_path, capsys):
    ledger = tmp_path / "l.sqlite"
    code, _, err = in_process("run", *GRAPH, "--input", ROOT / "examples" / "karate.edges", "--ledger", ledger,
                              "--budget-epsilon", "8", "--budget-delta", "1e-5",
                              "--output", tmp_path / "missing" / "result.json", capsys=capsys)
    assert code == 2 and "cannot write a file there; nothing was run or charged" in err and not ledger.exists()
