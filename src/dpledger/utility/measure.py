"""``measure_utility``: run a registered estimator's utility sampler over a grid of ε.

Each trial at each ε asks the estimator's ``utility(epsilon, rng)`` for public parameters, a
synthetic input with a known truth and ``error(output) -> float``, then runs the estimator's
graph on that input through ``Accountant.run`` with a fresh accountant whose budget is exactly
the planned guarantee: every run is validated, planned and charged like a real release. A run
that halts (output None) counts as a halt, never as an error.

Randomness: trial t draws its input from ``SeedSequence(entropy, spawn_key=(0, t))`` at every
ε, so a sampler whose input does not depend on ε compares all ε on the same inputs; the i-th ε's
run of trial t draws its noise from ``(1, i, t)``. The report's ``seed`` reproduces everything.

Optional fields on the sampler say what the error is: ``metric`` (its name, e.g. "ℓ2 error"),
``chance`` (the error of a guess that ignores the data) and ``reference(data)`` (a non-private
estimate, scored by the same ``error``: its median over the trials is drawn as a reference).
Samplers without them keep working; the report then says "error".
"""

from __future__ import annotations

import math
import time
from typing import Sequence

import attrs
import numpy as np

from .. import _validate
from .._render import html_table, render
from ..accountant import Accountant
from ..audit.progress import tracking
from ..graph import registry

DATA_STREAM, RUN_STREAM = 0, 1


@attrs.frozen
class UtilityRow:
    """The trials at one ε: ``errors`` of the released outputs (trial order) and the ``halts``."""

    epsilon: float
    errors: tuple[float, ...]
    halts: int

    @property
    def trials(self) -> int:
        return len(self.errors) + self.halts

    @property
    def halt_rate(self) -> float:
        return self.halts / self.trials

    @property
    def quartiles(self) -> tuple[float, float, float]:
        """(first quartile, median, third quartile) of the errors; NaN when every run halted."""
        if not self.errors:
            return (math.nan,) * 3
        return tuple(float(q) for q in np.quantile(self.errors, (0.25, 0.5, 0.75)))

    def to_dict(self) -> dict:
        q1, median, q3 = self.quartiles
        return {"epsilon": self.epsilon, "median": _json(median), "q1": _json(q1), "q3": _json(q3),
                "halt_rate": self.halt_rate, "halts": self.halts, "errors": list(self.errors)}


def _json(value: float) -> float | None:
    """NaN (no released output) as null: JSON has no NaN."""
    return None if math.isnan(value) else value


@attrs.frozen
class UtilityReport:
    """Error against ε of ``estimator``: one row per ε, ``trials`` runs each.

    ``setting`` describes the sampler's public parameters other than ε; ``seed`` is the entropy of
    the root ``SeedSequence`` (pass it back as ``seed`` to reproduce the measurement).
    """

    estimator: str
    setting: str
    trials: int
    seed: int
    rows: tuple[UtilityRow, ...]
    seconds: float
    metric: str = "error"
    chance: float | None = None
    reference: float | None = None  # the median error of the sampler's non-private reference estimate

    def to_dict(self) -> dict:
        # the 128-bit seed as a string: JSON readers that parse numbers as doubles would round it
        return {"estimator": self.estimator, "setting": self.setting, "trials": self.trials, "seed": str(self.seed),
                "seconds": self.seconds, "metric": self.metric, "chance": self.chance, "reference": self.reference,
                "rows": [row.to_dict() for row in self.rows]}

    @property
    def levels(self) -> str:
        """The chance level and the non-private reference, in words ("" when the sampler gives neither)."""
        parts = ([] if self.chance is None else [f"chance level {self.chance:.3g}"]) + (
            [] if self.reference is None else [f"non-private reference {self.reference:.3g} (median)"])
        return "; ".join(parts)

    def table(self):
        """A ``rich`` table: median error, quartiles and halt rate per ε, under the metric's name."""
        from rich.table import Table

        caption = self.levels or None
        table = Table(title=f"{self.estimator} ({self.setting}): {self.metric} against ε, {self.trials} trial(s) per ε",
                      caption=caption)
        for column in ("ε", "median", "quartiles", "halt rate"):
            table.add_column(column, justify="right")
        for row in self.rows:
            q1, median, q3 = row.quartiles
            table.add_row(f"{row.epsilon:g}", f"{median:.4g}", f"{q1:.4g} – {q3:.4g}", f"{row.halt_rate:.0%}")
        return table

    def html(self) -> str:
        """The table as an HTML fragment (Jupyter, report pages)."""
        return html_table(self.table()) + f"<p>seed {self.seed}, {self.seconds:.1f} s</p>"

    def _repr_html_(self) -> str:
        return self.html()

    def __str__(self) -> str:
        return render(self.table()) + f"seed {self.seed}, {self.seconds:.1f} s"


def _checked_epsilons(epsilons: Sequence[float]) -> list[float]:
    if isinstance(epsilons, (str, bytes)) or not hasattr(epsilons, "__iter__"):
        raise TypeError(f"epsilons must be a sequence of numbers, got {epsilons!r}")
    values = sorted(_validate.positive("epsilons", epsilon) for epsilon in epsilons)
    if not values:
        raise ValueError("epsilons must contain at least one ε > 0")
    if len(set(values)) < len(values):
        raise ValueError(f"epsilons must be distinct, got {list(epsilons)}")
    return values


def _sampler(name: str):
    entry = registry.info(name)
    if entry.utility is None:
        raise ValueError(f"estimator {name!r} registers no utility(epsilon, rng) sampler; register one with "
                         f"@register({name!r}, utility=...) (see docs/design.md)")
    return entry.utility


def _trial(name: str, sampler, epsilon: float, data_seed, run_seed, with_reference: bool):
    """(public parameters, error of the released output or None when the run halted, error of the
    sampler's non-private reference on the same input or None)."""
    drawn = sampler(epsilon, np.random.default_rng(data_seed))
    if not isinstance(drawn, tuple) or len(drawn) != 3 or not isinstance(drawn[0], dict) or not callable(drawn[2]):
        raise TypeError(f"the utility sampler of {name!r} must return (params: dict, data, error: callable), "
                        f"got {type(drawn).__name__}")
    params, data, error = drawn
    graph = registry.estimator(name, **params)
    result = Accountant(graph.plan().guarantee).run(graph, data, rng=np.random.default_rng(run_seed))
    reference = getattr(sampler, "reference", None)
    baseline = None if reference is None or not with_reference else float(error(reference(data)))
    if result.halted:
        return params, None, baseline
    value = float(error(result.output))
    if math.isnan(value):
        raise ValueError(f"the utility sampler of {name!r} measured a NaN error at epsilon={epsilon:g}")
    return params, value, baseline


def measure_utility(name: str, epsilons: Sequence[float], trials: int = 5, seed: int | None = None,
                    progress: object = None) -> UtilityReport:
    """Error of the registered estimator ``name`` at each ε of ``epsilons``, ``trials`` runs each.

    ``seed`` None draws OS entropy (the report keeps it); ``progress``: a rich bar over the runs
    (None: only on an interactive terminal). See the module docstring for what a run is.
    """
    start = time.perf_counter()
    sampler = _sampler(name)
    epsilons = _checked_epsilons(epsilons)
    trials = _validate.integer("trials", trials, minimum=1)
    entropy = np.random.SeedSequence(None if seed is None else _validate.integer("seed", seed, minimum=0)).entropy
    rows, setting, baselines = [], {}, []
    with tracking(progress, len(epsilons) * trials, f"utility of {name}") as tracker:
        for index, epsilon in enumerate(epsilons):
            outcomes = []
            for trial in range(trials):
                setting, error, baseline = _trial(name, sampler, epsilon,
                                                  np.random.SeedSequence(entropy, spawn_key=(DATA_STREAM, trial)),
                                                  np.random.SeedSequence(entropy, spawn_key=(RUN_STREAM, index, trial)),
                                                  with_reference=index == 0)  # one input per trial (module doc)
                outcomes.append(error)
                if baseline is not None:
                    baselines.append(baseline)
                tracker.advance(1)
            rows.append(UtilityRow(epsilon, tuple(e for e in outcomes if e is not None), outcomes.count(None)))
    described = ", ".join(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
                          for key, value in setting.items() if key != "epsilon")
    chance = getattr(sampler, "chance", None)
    return UtilityReport(name, described, trials, int(entropy), tuple(rows), time.perf_counter() - start,
                         str(getattr(sampler, "metric", "error")), None if chance is None else float(chance),
                         float(np.median(baselines)) if baselines else None)
