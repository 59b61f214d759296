"""A mechanism graph (a root node, the neighbouring relation it is private under) and its plan."""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from .. import domains, guarantees as _g
from .._render import html_table
from ..domains import Domain
from ..privacy import tight
from ..privacy.steps import PlanStep, params_text
from ..relations import Relation
from .runtime import Halt, PlanContext, RunState


@attrs.frozen
class Plan:
    """What a graph costs, computed without data: the total, the top rule, every step, and the
    names of the values a run releases (``releases``, in order: ``Result.outputs`` holds these)."""

    name: str
    relation: Relation
    guarantee: _g.Guarantee
    rule: str
    steps: tuple[PlanStep, ...]
    event: Any = None
    releases: tuple[str, ...] = ()
    domain: Any = None

    def table(self):
        """A ``rich`` table: the total on the first row, then every step."""
        from rich.markup import escape
        from rich.table import Table

        on = "" if self.domain is None else f", on {self.domain}"
        table = Table(title=escape(f"plan of {self.name} under {self.relation}{on}"))
        for column in ("step", "mechanism", "guarantee", "rule", "parameters"):
            table.add_column(column, overflow="fold", no_wrap=column == "guarantee")
        table.add_row("total", "", escape(str(self.guarantee)), escape(self.rule), "", style="bold")
        for s in self.steps:
            table.add_row(*map(escape, (s.path, s.mechanism, str(s.guarantee), s.rule, params_text(s.params))))
        return table

    def epsilon(self, delta: float) -> float:
        """ε at ``delta`` of this plan as a fixed composition (its privacy profile, read at any δ)."""
        return tight.epsilon(self.event, delta)

    def _repr_html_(self) -> str:
        """The table as an HTML fragment (Jupyter): no page of its own, no global style."""
        return html_table(self.table())

    def __str__(self) -> str:
        on = "" if self.domain is None else f" on {self.domain}"
        lines = [f"{self.name}: {self.guarantee} under {self.relation}{on} by {self.rule}"]
        lines += [f"  {s.path}: {s.mechanism} {s.guarantee} [{s.rule}]" for s in self.steps]
        return "\n".join(lines)


@attrs.frozen
class Graph:
    """A private estimator: ``root`` node, ``relation`` it is private under, and ``domain``, the
    inputs its guarantee speaks about (``dpledger.domains``; by default one finite double per
    record, or a graph under ``EdgeAdjacency``), checked before any charge.

    ``check_input(data)`` (beyond the domain) refuses or converts input before any charge, e.g. a
    graph too large for a dense solver.
    """

    root: Any
    relation: Relation = attrs.field(validator=attrs.validators.instance_of(Relation))
    name: str = attrs.field()
    check_input: Callable | None = None
    description: str = ""
    domain: Domain = attrs.field(kw_only=True, default=None)

    @name.default
    def _name(self) -> str:
        return self.root.name

    def __attrs_post_init__(self):
        if self.domain is None:
            object.__setattr__(self, "domain", domains.default(self.relation))
        elif not isinstance(self.domain, Domain):
            raise TypeError(f"domain must be a dpledger domain (dpledger.Records(...), dpledger.Graphs(...)), "
                            f"got {self.domain!r}")
        self.domain.check_relation(self.relation)

    def plan(self) -> Plan:
        """The plan: the root's guarantee, tightened by PLD where its steps allow (``privacy.tight``:
        every step of one plan is fixed before the data)."""
        p = self.root.plan(PlanContext(self.relation).child(self.root.name))
        g = p.guarantee if p.halting else tight.guarantee(p.event, p.guarantee)
        rule = p.rule if g == p.guarantee else f"tight composition of the plan's steps (PLD); {p.rule} gives {p.guarantee}"
        return Plan(self.name, self.relation, g, rule, p.steps, p.event, p.releases, self.domain)

    def validate(self, data):
        """The input in the form the graph runs on, or an error before any charge: outside the
        domain (the message names ``domain=``), or refused by ``check_input``."""
        data = self.domain.validate(data)
        return data if self.check_input is None else self.check_input(data)

    def execute(self, data, rng: np.random.Generator,
                releases: tuple[str, ...] | None = None) -> tuple[Any, str | None, dict]:
        """Run on already validated data: (output, halting step that fired or None, released values).

        The released values are exactly those named by the plan's ``releases`` (pass them to
        skip planning again), in plan order; a halted run holds those released before the halt.
        """
        output, halted_by, outputs, error = self._run(data, rng, releases)
        if error is not None:
            raise error
        return output, halted_by, outputs

    def observe(self, data, rng: np.random.Generator, releases: tuple[str, ...] | None = None) -> tuple[dict, str]:
        """Everything a run on validated data shows, for the auditor: (released values, ending),
        the ending "" for a run to the end, the halting step's name, or the error raised
        ("TypeName: message"); errors are outcomes here, never raised."""
        _, halted_by, outputs, error = self._run(data, rng, releases)
        if error is not None:
            return outputs, f"{type(error).__name__}: {error}"
        return outputs, "" if halted_by is None else halted_by

    def observe_runs(self, data, rng: np.random.Generator, size: int, releases: tuple[str, ...] | None = None):
        """``size`` runs on validated data at once, for the auditor (``graph.batch``): a ``Runs``
        whose ``run(i)`` is distributed exactly as ``observe``, independently for each i."""
        from .batch import observe_runs

        return observe_runs(self.root, data, rng, size, self.plan().releases if releases is None else releases)

    def _run(self, data, rng, releases):
        names = self.plan().releases if releases is None else releases
        state = RunState(rng)
        output = halted_by = error = None
        try:
            output = self.root.execute(data, state, self.root.name)
        except Halt as halt:
            halted_by = halt.test
        except Exception as exc:  # noqa: BLE001 - the caller decides: execute raises it, observe records it
            error = exc
        return output, halted_by, {name: state.outputs[name] for name in names if name in state.outputs}, error
