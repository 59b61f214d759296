"""``dpledger demo``: private community recovery on a generated stochastic block model, planned,
charged and recorded by the accountant, then a budget refusing an overspend."""

from __future__ import annotations

import time

import numpy as np
from rich.console import Console

from . import Accountant, ApproxDP, BudgetExceeded, estimator
from .algorithms import sbm
from .mechanisms import DiscreteLaplace


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
    console.print(f"sampled {int(adjacency.sum() / 2):,} edges in {time.perf_counter() - start:.1f} s")

    accountant = Accountant(ApproxDP(5.0, 1e-5))
    graph = estimator("sbm.exact", epsilon=epsilon, delta=delta, n=n, d=d, gamma=gamma)
    console.print("\n[bold]plan[/] (computed before touching the graph):")
    console.print(str(accountant.plan(graph)), markup=False, highlight=False)

    start = time.perf_counter()
    result = accountant.run(graph, adjacency, rng=rng)
    seconds = time.perf_counter() - start
    console.print(f"\nexact recovery: error rate {sbm.error_rate(result.output, truth):.4f} "
                  f"(rough estimate from half the edges: {sbm.error_rate(result.outputs['rough'], truth):.4f}) "
                  f"in {seconds:.1f} s")

    console.print("\n[bold]the same budget, spent further[/]")
    accountant.spend("edge_count", DiscreteLaplace(epsilon=0.5))
    try:
        accountant.run(graph, adjacency, rng=rng, name="second_recovery")
    except BudgetExceeded as refusal:
        console.print(f"[red]refused before touching the data:[/] {refusal}")

    console.print()
    console.print(accountant.ledger.table())
    return accountant
