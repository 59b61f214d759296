"""Reports and plots: the audit figure, privacy–utility curves, HTML rendering for notebooks."""

import json
import math
import sys
from html import escape

import numpy as np
import pytest

import dpledger as dp
from dpledger import cli
from dpledger._render import render
from dpledger.audit import audit_pairs
from dpledger.audit.figure import save as save_audit
from dpledger.graph import registry
from dpledger.mechanisms import Gaussian, Laplace, TextbookLaplace
from dpledger.utility import measure_utility
from dpledger.utility.figure import save as save_utility

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _count(epsilon: float = 1.0, halt: bool = False) -> dp.Graph:
    """A Laplace count; with ``halt``, a test that always halts runs first."""
    share = epsilon / 2 if halt else epsilon  # the plan must stay within the requested ε
    count = dp.release("count", Laplace(share), lambda x: float(len(x)))
    if not halt:
        return dp.Graph(count, relation=dp.AddRemoveOne())
    stop = dp.halt_if("stop", Laplace(share), lambda x: float(len(x)), lambda value: True)
    return dp.Graph(dp.sequence(stop, count, name="halting_count"), relation=dp.AddRemoveOne())


def _count_utility(epsilon, rng):
    data = np.ones(50)
    return {"epsilon": epsilon}, data, lambda output: abs(output - 50.0)


@pytest.fixture
def test_estimators(monkeypatch):
    """The built-in estimators plus test.count, test.halting (both with samplers) and test.plain."""
    registry.estimators()  # load the built-ins before copying
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    dp.register("test.count", utility=_count_utility)(_count)
    dp.register("test.halting", utility=lambda epsilon, rng: ({"epsilon": epsilon, "halt": True}, np.ones(5),
                                                              lambda output: 0.0))(_count)
    dp.register("test.plain")(_count)


def _shifted_laplace(x, rng):
    """A Laplace mechanism at ε = 1 that halts on large outputs."""
    value = x + rng.laplace(scale=1.0)
    return None if value > 3 else value


def _in_event(test) -> int:
    """Runs of the first side of ``test`` that its histogram places in the event."""
    edges = np.array(test.histogram.edges)
    centres = (edges[:-1] + edges[1:]) / 2
    inside = {">=": centres >= test.threshold, "<=": centres <= test.threshold}[test.op]
    return int(np.array(test.histogram.counts[0])[inside].sum())


# -- the audit figure -----------------------------------------------------------------------------------

def test_audit_report_keeps_a_histogram_that_agrees_with_the_counts(tmp_path):
    report = audit_pairs(_shifted_laplace, [(0.0, 1.0)], epsilon=1.0, samples=4000, seed=3, events_per_pair=4)
    for test in report.pairs[0].tests:
        histogram = test.histogram
        assert len(histogram.edges) <= 50  # bounded, whatever the number of samples
        for side in (0, 1):
            assert sum(histogram.counts[side]) + histogram.undefined[side] == test.sizes[side]
        if test.op != "==":
            assert _in_event(test) == test.counts[0]  # the threshold is a bin edge: no bin straddles the event
    output = next(test for test in report.pairs[0].tests if test.statistic == "output")
    assert output.histogram.undefined[1] > output.histogram.undefined[0] > 0  # halted runs: NaN for the output
    assert json.loads(json.dumps(report.to_dict()))["pairs"][0]["tests"][0]["histogram"]["edges"]
    png, page = save_audit(report, tmp_path / "audit.png"), save_audit(report, tmp_path / "audit.html")
    assert png.read_bytes().startswith(PNG_MAGIC)
    text = page.read_text()
    assert "data:image/png;base64," in text and test.event.replace("<", "&lt;").replace(">", "&gt;") in text


def test_audit_command_writes_a_report_and_refuses_bad_files(tmp_path, capsys):
    command = ["audit", "mean.clipped", "--samples", "2000", "--seed", "0"]
    assert cli.main([*command, "--report", str(tmp_path / "audit.html")]) == 0
    assert "certified ε" in (tmp_path / "audit.html").read_text()
    assert "report written to" in capsys.readouterr().out
    assert cli.main([*command, "--json", "--report", str(tmp_path / "audit.png")]) == 0
    assert json.loads(capsys.readouterr().out)["ok"]
    assert (tmp_path / "audit.png").read_bytes().startswith(PNG_MAGIC)
    assert cli.main([*command, "--report", str(tmp_path / "audit.pdf")]) == 2
    assert cli.main([*command, "--report", str(tmp_path / "missing" / "audit.png")]) == 2
    assert ".png or .html" in capsys.readouterr().err


# -- privacy–utility ------------------------------------------------------------------------------------

def test_measure_utility_passes_epsilon_through_and_reproduces(test_estimators):
    report = measure_utility("test.count", [10.0, 1.0], trials=150, seed=5, progress=False)
    assert [row.epsilon for row in report.rows] == [1.0, 10.0]
    for row in report.rows:  # the median of |Lap(1/ε)| is ln 2/ε
        assert row.quartiles[1] == pytest.approx(math.log(2) / row.epsilon, rel=0.3)
        assert row.halts == 0 and row.trials == 150
    again = measure_utility("test.count", [1.0, 10.0], trials=150, seed=5, progress=False)
    assert again.rows == report.rows and report.seed == 5


def test_halted_runs_are_counted_as_halts_not_errors(test_estimators, tmp_path):
    report = measure_utility("test.halting", [1.0, 2.0], trials=3, seed=0, progress=False)
    assert all(row.halt_rate == 1.0 and row.errors == () for row in report.rows)
    assert all(math.isnan(q) for q in report.rows[0].quartiles)
    assert json.loads(json.dumps(report.to_dict()))["rows"][0]["median"] is None
    assert save_utility(report, tmp_path / "halts.png").read_bytes().startswith(PNG_MAGIC)


def test_utility_command_on_shipped_estimators(tmp_path, capsys):
    command = ["utility", "mean.clipped", "--epsilons", "1,4", "--trials", "2", "--seed", "0"]
    assert cli.main([*command, "--output", str(tmp_path / "curve.png"), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert [row["epsilon"] for row in table["rows"]] == [1.0, 4.0]
    assert all(len(row["errors"]) == 2 and row["halt_rate"] == 0 and row["q1"] <= row["median"] <= row["q3"]
               for row in table["rows"])
    assert (tmp_path / "curve.png").read_bytes().startswith(PNG_MAGIC)
    assert cli.main(["utility", "sbm.exponential", "--epsilons", "2", "--trials", "1", "--seed", "0",
                     "--output", str(tmp_path / "curve.html")]) == 0
    page = (tmp_path / "curve.html").read_text()
    assert "data:image/png;base64," in page and "misclassified fraction against ε" in page
    assert "figure written to" in capsys.readouterr().out


def test_utility_command_refuses_bad_usage(test_estimators, tmp_path, capsys):
    assert cli.main(["utility", "test.plain", "--trials", "1"]) == 2
    assert "registers no utility" in capsys.readouterr().err
    assert cli.main(["utility", "no.such"]) == 2
    assert cli.main(["utility", "test.count", "--output", str(tmp_path / "curve.svg")]) == 2
    for bad in (["--epsilons", "1,x"], ["--epsilons", "0,1"], ["--trials", "0"]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["utility", "test.count", *bad])
        assert exit_.value.code == 2
    with pytest.raises(ValueError, match="distinct"):
        measure_utility("test.count", [1.0, 1.0])


def test_missing_matplotlib_is_a_clear_usage_error(test_estimators, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import now fails
    assert cli.main(["utility", "test.count", "--output", str(tmp_path / "curve.png")]) == 2
    assert "pip install 'dpledger[figures]'" in capsys.readouterr().err
    assert not (tmp_path / "curve.png").exists()


def test_register_checks_the_hooks(test_estimators):
    assert registry.info("test.count").utility is _count_utility
    assert registry.info("test.plain").utility is None
    with pytest.raises(TypeError, match="utility must be callable"):
        dp.register("test.broken", utility=3)(_count)


# -- notebooks ------------------------------------------------------------------------------------------

def test_plan_audit_and_utility_reports_render_as_html(test_estimators):
    plan = dp.estimator("sbm.exact", epsilon=4.0, delta=1e-6, n=60, d=30, gamma=0.6).plan()
    html = plan._repr_html_()
    assert html.lstrip().startswith("<table") and str(plan.guarantee) in html and "total" in html
    report = audit_pairs(_shifted_laplace, [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=1)
    html = report._repr_html_()
    assert f"{report.epsilon_lower_bound:.4g}" in html and "claimed 1" in html and _is_fragment(html)
    utility = measure_utility("test.count", [1.0], trials=3, seed=0, progress=False)
    html = utility._repr_html_()
    assert f"{utility.rows[0].quartiles[1]:.4g}" in html and _is_fragment(html)


def _is_fragment(html: str) -> bool:
    """An HTML fragment to place in a notebook: a table, no page of its own, no global style."""
    lowered = html.lower()
    return ("<table" in lowered and "<thead>" in lowered and "<tbody>" in lowered
            and not any(tag in lowered for tag in ("<!doctype", "<html", "<head", "<body", "<style", "<pre",
                                                   "body{", "body {")))


def test_plan_html_is_an_escaped_table_and_leaves_the_page_style_alone():
    """#17: a plan in a notebook is a real table, cells escaped, equivalent to its text table."""
    count = dp.release("<b>count [b]", Laplace(1.0), lambda x: float(len(x)))
    plan = dp.Graph(dp.sequence(count, name="<i>counts"), relation=dp.AddRemoveOne()).plan()
    html = plan._repr_html_()
    assert _is_fragment(html)
    assert "&lt;b&gt;count [b]" in html and "&lt;i&gt;counts" in html and "<b>" not in html and "<i>" not in html
    assert "[b]" in render(plan.table(), width=400)  # rich markup in a name is shown, not applied
    assert html.count("<tr") == 1 + 1 + len(plan.steps)  # the header, the total, every step
    for text in (str(plan.relation), str(plan.guarantee), plan.rule, *(s.path for s in plan.steps),
                 *(s.mechanism for s in plan.steps)):
        assert escape(text) in html


@pytest.mark.parametrize("rule", ["basic", "zcdp"])
def test_ledger_html_is_an_escaped_table_with_the_budget_totals(rule):
    """#17: a ledger in a notebook is a real table (cells escaped), with what was spent and what
    remains in the filter's currency, as in its text rendering; it never restyles the page."""
    acct = dp.Accountant(dp.ApproxDP(1.0, 1e-5), rule, relation=dp.ReplaceOne())
    acct.spend("<b>count</b> [b]", Gaussian.from_sigma(10.0))
    html = acct.ledger._repr_html_()
    assert _is_fragment(html)
    assert "&lt;b&gt;count&lt;/b&gt; [b]" in html and "<b>" not in html
    assert "[b]" in acct.ledger.render(width=400)  # rich markup in a name is shown, not applied
    for total in (f"spent: {acct.spent}", f"remaining: {acct.remaining}"):
        assert escape(total) in html and total in acct.ledger.render(width=400)
    entry = acct.ledger[0]
    for text in (entry.mechanism, str(entry.guarantee), entry.charged, entry.rule):
        assert escape(text) in html
    assert acct.ledger.render(html=True) == html


def test_a_ledger_without_its_accountant_renders_its_entries():
    acct = dp.Accountant(dp.ApproxDP(1.0, 1e-5), relation=dp.ReplaceOne())
    acct.spend("count", TextbookLaplace(0.25))
    html = dp.Ledger.from_dicts(acct.ledger.to_dicts())._repr_html_()
    assert _is_fragment(html) and "count" in html and "Lemma A.8" in html and "spent:" not in html


@pytest.mark.parametrize("rule", ["basic", "zcdp"])
def test_an_accountant_and_its_usage_render_as_html(rule):
    """First-hour review: the two objects a notebook user evaluates most had no HTML view."""
    acct = dp.Accountant(dp.ApproxDP(2.0, 1e-5), filter=rule, relation=dp.ReplaceOne())
    acct.run(dp.Graph(dp.release("<sum>", dp.mechanisms.Gaussian(0.5, 1e-6), lambda x: float(np.clip(x, 0, 1).sum())),
                      relation=dp.ReplaceOne()), np.zeros(4))
    spent, remaining = acct.spent._repr_html_(), acct.remaining._repr_html_()
    assert _is_fragment(spent) and _is_fragment(remaining)
    assert f"{acct.spent.amounts[0]:.6g}" in spent and f"{acct.remaining.amounts[0]:.6g}" in remaining
    assert "spent under" in spent and "remaining under" in remaining
    html = acct._repr_html_()
    assert _is_fragment(html) and escape(str(acct.budget)) in html and "&lt;sum&gt;" in html and "<sum>" not in html
    assert spent in html and remaining in html


def test_audit_verdicts_read_as_words_lower_bounds_down_claims_up():
    """First-hour review: "certified ε >= 0.3396 <= claimed 1" read badly, and "search estimate -inf"
    meant nothing to a reader."""
    from dpledger.audit.report import SearchSummary, rounded, verdict

    assert verdict(0.3396, 1.0) == "no violation: ε ≥ 0.33 certified (a lower bound; claimed 1)"
    assert verdict(1.43, 1.0) == "VIOLATION: ε ≥ 1.4 certified (a lower bound, above the claimed 1)"
    assert rounded(0.29, "down") == "0.28"  # the double 0.29 is below 0.29: its lower bound is too
    assert rounded(1.1, "up", 4) == "1.1" and rounded(0.0049999, "up") == "0.005"
    for value in np.random.default_rng(0).uniform(1e-3, 50, 2000):
        assert float(rounded(value, "down")) <= value <= float(rounded(value, "up"))
    summary = str(SearchSummary(3, 100, 0, ("D vs D'",), (-math.inf,)))
    assert "-inf" not in summary and "no event that separates" in summary
    report = audit_pairs(_shifted_laplace, [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=1)
    assert "certified (a lower bound; claimed 1)" in str(report)


def test_utility_reports_name_their_metric_and_draw_chance_and_a_reference(test_estimators, tmp_path):
    """First-hour review: the utility table and figure never said what "error" was."""
    plain = measure_utility("test.count", [1.0], trials=2, seed=0, progress=False)  # no fields: still works
    assert plain.metric == "error" and plain.chance is None and plain.reference is None and plain.levels == ""
    labels = measure_utility("sbm.weak", [4.0], trials=2, seed=0, progress=False)
    assert labels.metric == "misclassified fraction" and labels.chance == 0.5
    assert "misclassified fraction against ε" in str(labels) and "chance level 0.5" in str(labels)
    means = measure_utility("mean.clipped", [1.0, 8.0], trials=3, seed=0, progress=False)
    assert means.metric.startswith("ℓ2 error") and 0 < means.reference < means.rows[0].quartiles[1]
    assert json.loads(json.dumps(means.to_dict()))["reference"] == means.reference
    pytest.importorskip("matplotlib")
    from dpledger.utility.figure import figure

    axes = figure(labels).axes[0]
    assert axes.get_ylabel() == "misclassified fraction"
    assert any("chance level" in text.get_text() for text in axes.get_legend().get_texts())
    axes = figure(means).axes[0]
    assert any("non-private reference" in text.get_text() for text in axes.get_legend().get_texts())
