"""``dpledger demo``: private community recovery on a generated stochastic block model, planned,
charged and recorded by the accountant, then a budget refusing an overspend.

The demo states the budget before spending anything and announces every charge the ledger records,
with its cost and what remains. The recovery takes tens of seconds at the default size: on a
terminal a spinner shows it running and the time elapsed; a pipe gets a plain line.
"""

from __future__ import annotations

import contextlib
import time
from typing import Iterator

import numpy as np
from rich.console import Console
from rich.markup import escape

from . import Accountant, ApproxDP, BudgetExceeded, estimator
from .algorithms import sbm
from .mechanisms import DiscreteLaplace


class _Charges:
    """Announces each charge once, when the ledger records it: its name, cost and what remains."""

    def __init__(self, console: Console, accountant: Accountant):
        self.console, self.accountant = console, accountant
        self.announced = len(accountant.ledger)

    def announce(self) -> None:
        entries = self.accountant.ledger.entries
        for number, entry in enumerate(entries[self.announced:], start=self.announced + 1):
            paid = (f"prepaid by {entry.prepaid}" if entry.prepaid
                    else f"{self.accountant.filter.name!r} filter: {entry.charged}")
            self.console.print(f"[bold]charged[/] #{number} {escape(entry.name)}: {escape(str(entry.guarantee))} "
                               f"({escape(paid)})", highlight=False)
            self.remaining()
        self.announced = len(entries)

    def remaining(self) -> None:
        self.console.print(f"  remaining: {escape(str(self.accountant.remaining))}", highlight=False)


@contextlib.contextmanager
def _running(console: Console, description: str) -> Iterator[None]:
    """A spinner with the time elapsed while the block runs, on a terminal; a plain line otherwise."""
    if not console.is_terminal:
        console.print(f"{description}…", highlight=False)
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True) as progress:
        progress.add_task(escape(description), total=None)
        yield


def main(console: Console | None = None, seed: int | None = None, n: int = 2000) -> Accountant:
    console = console or Console()
    rng = np.random.default_rng(seed)
    p, q, epsilon, delta = 0.5, 0.1, 4.0, 1e-6
    d, gamma = n * (p + q) / 2, (p - q) / (p + q)

    console.rule("[bold]dpledger demo: private exact recovery in a stochastic block model")
    console.print(f"graph: SBM with n={n} vertices, within-community edge probability {p}, across {q} "
                  f"(d={d:g}, γ={gamma:.3g}); neighbouring graphs differ in one edge")
    start = time.perf_counter()
    adjacency, truth = sbm.sample(n, d, gamma, rng)
    edges = int(adjacency.sum() // 2)
    console.print(f"sampled {edges:,} edges in {time.perf_counter() - start:.1f} s")

    accountant = Accountant(ApproxDP(5.0, 1e-5))
    charges = _Charges(console, accountant)
    console.print(f"\n[bold]budget[/] {escape(str(accountant.budget))} under the {accountant.filter.name!r} filter "
                  f"({escape(accountant.filter.source)}); nothing spent yet", highlight=False)
    graph = estimator("sbm.exact", epsilon=epsilon, delta=delta, n=n, d=d, gamma=gamma)
    console.print("\n[bold]plan[/] (computed before touching the graph):")
    console.print(str(accountant.plan(graph)), markup=False, highlight=False)
    console.print()

    start = time.perf_counter()
    with _running(console, f"recovering the communities with {graph.name}"):
        result = accountant.run(graph, adjacency, rng=rng)  # charged in full before the graph is read
    seconds = time.perf_counter() - start
    charges.announce()
    console.print(f"exact recovery: error rate {sbm.error_rate(result.output, truth):.4f} "
                  f"(rough estimate from half the edges: {sbm.error_rate(result.outputs['rough'], truth):.4f}) "
                  f"in {seconds:.1f} s")

    console.print("\n[bold]the same budget, spent further[/]")
    count = DiscreteLaplace(epsilon=0.5)  # an edge changes the count by 1, its sensitivity
    accountant.spend("edge_count", count)
    charges.announce()
    console.print(f"edge count, released with {count.kind}: {int(count.release(edges, rng)):,} "
                  f"(the sample has {edges:,})")
    try:
        accountant.run(graph, adjacency, rng=rng, name="second_recovery")
    except BudgetExceeded as refusal:
        console.print(f"[bold red]refused[/] second_recovery before touching the data: {escape(str(refusal))}",
                      highlight=False)
        charges.remaining()

    console.print()
    console.print(accountant.ledger.table())
    return accountant
