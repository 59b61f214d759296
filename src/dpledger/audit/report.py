"""What an audit found: per event, per pair, and overall (frozen attrs values)."""

from __future__ import annotations

import decimal
import math

import attrs
import numpy as np

from .bounds import epsilon_lower_bound, ratio_epsilon
from .histogram import SIDE_NAMES, Histogram


#: what a test bounds: "ratio" (the ε route: p/q, and p when δ > 0) or "trade-off" (the μ and ρ
#: routes: p from below and q from above, read as μ-GDP, ρ-zCDP and (ε, δ) bounds)
ROUTES = ("ratio", "trade-off")


@attrs.frozen
class EventTest:
    """One (pair, direction, event) evaluated on the test half.

    ``direction`` "D→D'" bounds P[M(D) ∈ E] against P[M(D') ∈ E]; "D'→D" the reverse; p is the
    first side's probability and q the second's. ``counts``/``sizes`` are in pair order (M(D),
    M(D')); each side's test draws number Poisson(``AuditReport.test_samples``).
    ``route`` "ratio" (``bounds.ratio_test``): ``ratio_lower`` bounds p/q from below and, when δ > 0,
    ``p_lower`` bounds p; ``epsilon_lower_bound`` is max(0, ln r̲ + ln(1 − δ/p̲)). ``route``
    "trade-off": ``p_lower`` bounds p from below and ``p_upper`` q from above, and
    ``epsilon_lower_bound`` is max(0, ln((p̲ − δ)/p̄)), ``mu_lower_bound`` and ``rho_lower_bound``
    what a μ-GDP and a ρ-zCDP claim must at least have (``bounds``). A bound below 0 says nothing.
    ``level`` is the test's error budget (the chance that one of its bounds fails), ``leading``
    says the test led its route (``bounds.weighted_levels``); ``training_bound`` is what the
    training half promised when the event was chosen, ``histogram`` the statistic's test-half
    values on both sides (for the figure).
    """

    event: str
    statistic: str
    op: str
    threshold: float
    direction: str
    counts: tuple[int, int]
    sizes: tuple[int, int]
    epsilon_lower_bound: float
    training_bound: float
    level: float
    leading: bool = False
    route: str = "ratio"
    ratio_lower: float | None = None
    p_lower: float | None = None
    p_upper: float | None = None
    histogram: Histogram | None = None
    mu_lower_bound: float = 0.0
    rho_lower_bound: float = 0.0

    def signed_bound(self, delta: float) -> float:
        """The ε bound before it is floored at 0 (−inf when the event says nothing): ranks pairs."""
        if self.route == "ratio":
            return float(ratio_epsilon(self.ratio_lower, self.p_lower, delta))
        return float(epsilon_lower_bound(self.p_lower, self.p_upper, delta))

    @property
    def evidence(self) -> str:
        """What the test half showed, in words."""
        first, second = SIDE_NAMES[self.direction]
        order = (0, 1) if self.direction == "D→D'" else (1, 0)
        (k1, k2), (n1, n2) = ([self.counts[i] for i in order], [self.sizes[i] for i in order])
        if self.route == "ratio":
            also = "" if self.p_lower is None or math.isnan(self.p_lower) else f", P[{first} ∈ E] >= {self.p_lower:.4g}"
            return (f"P[{first} ∈ E]/P[{second} ∈ E] >= {self.ratio_lower:.4g} ({k1}/{n1} vs {k2}/{n2} in E){also}")
        return f"P[{first} ∈ E] >= {self.p_lower:.4g} ({k1}/{n1}), P[{second} ∈ E] <= {self.p_upper:.4g} ({k2}/{n2})"

    def __str__(self) -> str:
        return f"ε >= {self.epsilon_lower_bound:.4g} from E = {{{self.event}}}: {self.evidence}"


@attrs.frozen
class AuditError:
    """A pair whose sampling or analysis raised: ``message`` says where and what."""

    pair: int
    message: str


@attrs.frozen
class PairReport:
    """All tests of one pair; the pair's bound is its best test's (0 when it has none)."""

    index: int
    tests: tuple[EventTest, ...]
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def best(self) -> EventTest | None:
        return max(self.tests, key=lambda test: test.epsilon_lower_bound, default=None)

    @property
    def epsilon_lower_bound(self) -> float:
        return self.best.epsilon_lower_bound if self.tests else 0.0

    @property
    def event(self) -> str | None:
        """The best event in words, e.g. "projection on mean difference >= 0.731"."""
        return self.best.event if self.tests else None

    @property
    def counts(self) -> tuple[int, int] | None:
        return self.best.counts if self.tests else None

    @property
    def p_lower(self) -> float | None:
        return self.best.p_lower if self.tests else None

    @property
    def p_upper(self) -> float | None:
        return self.best.p_upper if self.tests else None

    def __str__(self) -> str:
        if self.failed:
            return f"pair {self.index}: FAILED — {self.error}"
        if not self.tests:
            return f"pair {self.index}: no event looked promising on the training half (ε >= 0)"
        return f"pair {self.index}: {self.best}"


def _plain(instance, field, value):
    """Arrays as nested lists, for JSON."""
    return value.tolist() if isinstance(value, np.ndarray) else value


def rounded(value: float, direction: str, digits: int = 2) -> str:
    """``value`` to ``digits`` significant digits, rounded ``"down"`` from its exact binary value (a
    lower bound stays a lower bound when read) or ``"up"`` from its shortest decimal form (a claim,
    as it was written, is never understated)."""
    if not math.isfinite(value) or value == 0:
        return "∞" if value == math.inf else "-∞" if value == -math.inf else f"{value:g}"
    value = float(value)
    exact = decimal.Decimal(value) if direction == "down" else decimal.Decimal(repr(value))
    step = decimal.Decimal(1).scaleb(exact.adjusted() - digits + 1)
    shown = exact.quantize(step, rounding=decimal.ROUND_FLOOR if direction == "down" else decimal.ROUND_CEILING)
    return f"{shown.normalize():f}"


def verdict(lower_bound: float, claimed: float) -> str:
    """The certified ε in words: "ε ≥ 0.33 certified (a lower bound; claimed 1)"."""
    certified = f"ε ≥ {rounded(lower_bound, 'down')} certified (a lower bound"
    if lower_bound > claimed:
        return f"VIOLATION: {certified}, above the claimed {rounded(claimed, 'up', 4)})"
    return f"no violation: {certified}; claimed {rounded(claimed, 'up', 4)})"


def _estimate(score: float) -> str:
    if score == -math.inf or math.isnan(score):
        return "search found no event that separates the two sides"
    if score == math.inf:
        return "search saw an output on one side only"
    return f"search estimate ε ≈ {score:.3g}"


@attrs.frozen
class SearchSummary:
    """How ``audit`` chose the pairs it audited, on draws the audit itself never reuses.

    ``candidates`` pairs were scored, each on ``samples`` outputs per side; ``failed`` of them made
    the mechanism raise; the best ``finalists`` were scored again on ``final_samples`` fresh
    outputs per side and ranked by that score alone; ``pairs`` describes the audited pairs,
    ``inputs`` holds them as (D, D') and ``scores`` gives their last search estimates of ε (events
    chosen on one half of the search sample, counted on the other).
    """

    candidates: int
    samples: int
    failed: int
    pairs: tuple[str, ...]
    scores: tuple[float, ...]
    inputs: tuple[tuple[object, object], ...] = attrs.field(default=(), eq=False, repr=False)
    finalists: int = 0
    final_samples: int = 0

    def __str__(self) -> str:
        lines = [f"  pairs found by scoring {self.candidates} candidate(s) on {self.samples} samples per side"
                 + (f", the best {self.finalists} again on {self.final_samples} fresh ones"
                    if self.finalists else "")
                 + (f" ({self.failed} made the mechanism fail)" if self.failed else "")]
        lines += [f"    pair {index}: {pair} ({_estimate(score)})"
                  for index, (pair, score) in enumerate(zip(self.pairs, self.scores))]
        return "\n".join(lines)


@attrs.frozen
class AuditReport:
    """Outcome of ``audit_pairs``.

    ``claimed`` is (ε, δ); ``samples`` the outputs drawn per side of each pair (``test_samples`` of
    them on the test half: each side's test draws number Poisson(``test_samples``), for the ratio
    test); ``tests`` the number m of (pair, direction, event) tests on the test half; ``levels`` =
    (leading, other): the error budget of each leading test (each route's best training event) and
    of each other test, weighted so that all tests hold together with probability >= ``confidence``
    (``bounds.weighted_levels``). ``seed`` is the entropy of the
    root ``SeedSequence``: passing it back as ``seed`` reproduces the audit. ``target`` names what
    was audited and ``search`` how its pairs were found; ``inputs`` shows each audited pair as (what
differs, preview of D, preview of D′), short strings (all three set by ``audit``).
    ``ideal_reals``: the claim was audited for the mechanism on the reals (float rounding untested).
    """

    claimed: tuple[float, float]
    confidence: float
    pairs: tuple[PairReport, ...]
    samples: int
    test_samples: int
    tests: int
    levels: tuple[float, float]
    seconds: float
    seed: int
    target: str = ""
    search: SearchSummary | None = None
    claims: dict = attrs.field(factory=dict)
    inputs: tuple[tuple[str, str, str], ...] = ()
    ideal_reals: bool = False

    @property
    def epsilon_lower_bound(self) -> float:
        """Largest certified ε over pairs, directions and events (0 when nothing was certified)."""
        return max((pair.epsilon_lower_bound for pair in self.pairs), default=0.0)

    @property
    def mu_lower_bound(self) -> float | None:
        """Largest certified μ over every test, when the target claims μ-GDP (``claims["mu"]``), else None."""
        return self._route("mu")

    @property
    def rho_lower_bound(self) -> float | None:
        """Largest certified ρ over every test, when the target claims ρ-zCDP (``claims["rho"]``), else None."""
        return self._route("rho")

    def _route(self, currency: str) -> float | None:
        if currency not in self.claims:
            return None
        found = self._route_test(currency)
        return 0.0 if found is None else getattr(found[1], f"{currency}_lower_bound")

    def _route_test(self, currency: str) -> tuple[int, EventTest] | None:
        """(pair index, test) that gives the largest bound in ``currency``, or None when none does."""
        tests = [(pair.index, test) for pair in self.pairs for test in pair.tests
                 if getattr(test, f"{currency}_lower_bound") > 0]
        return max(tests, key=lambda found: getattr(found[1], f"{currency}_lower_bound"), default=None)

    def currency_lines(self) -> list[str]:
        """One line per claim in another currency (μ-GDP, ρ-zCDP): the certified bound, the verdict and
        the test that gave it."""
        lines = []
        for currency, symbol, name in (("mu", "μ", "μ-GDP"), ("rho", "ρ", "ρ-zCDP")):
            if currency in self.claims:
                bound, claim, found = self._route(currency), self.claims[currency], self._route_test(currency)
                source = ("" if found is None else
                          f", from pair {found[0]}'s {found[1].route} test E = {{{found[1].event}}} ({found[1].direction})")
                lines.append(f"in its own currency, {name} with {symbol} = {claim:.4g}: certified {symbol} >= "
                             f"{rounded(bound, 'down', 3)} ({'VIOLATED' if bound > claim else 'consistent'}{source}; "
                             "the same family of tests, the same confidence)")
        return lines

    @property
    def violations(self) -> tuple[str, ...]:
        """The routes whose certified bound exceeds the claim in their currency: "ε", "μ", "ρ"."""
        found = ["ε"] if self.epsilon_lower_bound > self.claimed[0] else []
        found += [symbol for currency, symbol in (("mu", "μ"), ("rho", "ρ"))
                  if currency in self.claims and self._route(currency) > self.claims[currency]]
        return tuple(found)

    @property
    def violation(self) -> bool:
        """True when a certified bound (ε, or μ or ρ for a target that claims it) exceeds its claim: the
        claim is false at ``confidence``. Every route's tests are one family, whose bounds hold jointly."""
        return bool(self.violations)

    @property
    def best(self) -> tuple[int, EventTest] | None:
        """(pair index, test) of the largest certified bound, or None when nothing was tested."""
        tested = [pair for pair in self.pairs if pair.tests]
        if not tested:
            return None
        pair = max(tested, key=lambda pair: pair.epsilon_lower_bound)
        return pair.index, pair.best

    @property
    def bonferroni(self) -> str:
        """The tests' error budgets, in words."""
        lead, other = self.levels
        if lead == other:
            return f"each test at error budget {lead:.3g} (Bonferroni)"
        return (f"error budget {lead:.3g} for each route's best training event, {other:.3g} for the others "
                "(weighted Bonferroni)")

    @property
    def errors(self) -> tuple[AuditError, ...]:
        return tuple(AuditError(pair.index, pair.error) for pair in self.pairs if pair.failed)

    @property
    def ok(self) -> bool:
        """False when some pair failed: its outputs were not audited."""
        return not self.errors

    def table(self):
        """A ``rich`` table of every test on the held-out half, failed pairs included."""
        from rich.markup import escape
        from rich.table import Table

        table = Table(title="tests on the held-out half (Bonferroni-corrected)")
        for column in ("pair", "direction", "event", "in E: M(D) / M(D')", "certified ε"):
            table.add_column(column)
        for pair in self.pairs:
            if pair.failed:
                table.add_row(str(pair.index), "", f"[red]FAILED: {escape(pair.error)}[/]", "", "")
            for test in pair.tests:
                table.add_row(str(pair.index), test.direction, escape(test.event),
                              f"{test.counts[0]} / {test.counts[1]}", f"{test.epsilon_lower_bound:.4g}")
        return table

    def html(self, with_figure: bool = True) -> str:
        """The verdict, the pairs (D, D′), the figure and the table of tests as HTML (``report_html``)."""
        from .report_html import html

        return html(self, with_figure)

    def _repr_html_(self) -> str:
        return self.html()

    def to_dict(self) -> dict:
        """JSON-ready dictionary, including the derived verdict."""
        data = attrs.asdict(self, value_serializer=_plain)
        for pair, report in zip(data["pairs"], self.pairs):
            pair["epsilon_lower_bound"] = report.epsilon_lower_bound
            pair["event"] = report.event
        # the 128-bit seed as a string: JSON readers that parse numbers as doubles would round it
        data.update(epsilon_lower_bound=self.epsilon_lower_bound, mu_lower_bound=self.mu_lower_bound,
                    rho_lower_bound=self.rho_lower_bound, violations=list(self.violations), violation=self.violation,
                    ok=self.ok, seed=str(self.seed))
        return data

    def __str__(self) -> str:
        epsilon, delta = self.claimed
        subject = f" of {self.target}" if self.target else ""
        lines = [
            f"Privacy audit{subject} of a claimed (ε={epsilon:.4g}, δ={delta:.3g}) at confidence {self.confidence:.6g}: "
            + (verdict(self.epsilon_lower_bound, epsilon) if "ε" in self.violations or not self.violations else
               f"VIOLATION in its own currency ({', '.join(self.violations)}: below); in ε, "
               + verdict(self.epsilon_lower_bound, epsilon)),
            f"  {len(self.pairs)} pair(s), {self.samples} samples per side ({self.samples - self.test_samples} to choose "
            f"events, Poisson({self.test_samples}) to test), {self.tests} test(s), {self.bonferroni}, "
            f"{self.seconds:.2f} s, seed {self.seed}",
        ]
        lines += [f"  {line}" for line in self.currency_lines()]
        if self.ideal_reals:
            lines.append("  audited as a mechanism on the reals (ideal_reals=True): float rounding was not tested")
        if self.search is not None:
            lines.append(str(self.search))
        lines += [f"  {pair}" for pair in self.pairs]
        if not self.ok:
            lines.append(f"  INCOMPLETE: {len(self.errors)} pair(s) failed and were not audited")
        return "\n".join(lines)
