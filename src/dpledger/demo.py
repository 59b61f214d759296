"""``dpledger demo``: a budget, a few mechanisms, a halting pipeline and the ledger, end to end."""

from __future__ import annotations

import numpy as np
from rich.console import Console

from . import (Accountant, ApproxDP, BudgetExceeded, Graph, ReplaceOne, conditional, halt_if, postprocess, release,
               sequence)
from .mechanisms import Gaussian, Laplace, TruncatedLaplace


def salary_pipeline(n: int, cap: float) -> Graph:
    """Mean of n salaries clipped to [0, cap], released only when enough salaries are positive.

    Under ReplaceOne with public n: the clipped sum has sensitivity cap; the count of positive
    salaries has sensitivity 1 and is tested one-sidedly (truncated Laplace never overstates it).
    """
    def positives(x):
        return float(np.count_nonzero(x > 0))

    def clipped_mean(x):
        return float(np.clip(x, 0, cap).mean())

    return Graph(sequence(
        halt_if("enough_positive", TruncatedLaplace(0.2, 1e-6), positives, lambda v: v < n / 2),
        conditional("enough_positive",
                    release("mean", Gaussian(0.5, 1e-6, sensitivity=cap / n), clipped_mean)),
        postprocess("rounded", lambda mean: round(float(mean), -2), uses="mean"),
        name="salary_mean"), relation=ReplaceOne())


def main(console: Console | None = None, seed: int | None = None) -> Accountant:
    console = console or Console()
    rng = np.random.default_rng(seed)
    n, cap = 5_000, 200_000.0
    salaries = np.concatenate([rng.lognormal(11, 0.5, n - 300), np.zeros(300)])
    unemployed = np.zeros(n)

    acct = Accountant(ApproxDP(2.0, 1e-5), composition="pld", relation=ReplaceOne())
    console.rule("[bold]dpledger demo: one budget, several releases")
    console.print(f"budget {acct.budget} under {acct.relation}, tight (PLD) composition")

    count = Laplace(epsilon=0.1, sensitivity=1.0)
    acct.spend("count_high_earners", count)
    console.print(f"high earners (> 100k): {count.release(np.count_nonzero(salaries > 1e5), rng):.1f}")

    pipeline = salary_pipeline(n, cap)
    console.print("\n[bold]plan[/] (computed without data):")
    console.print(str(acct.plan(pipeline)), markup=False, highlight=False)
    result = acct.run(pipeline, salaries, rng=rng)
    console.print(f"mean salary: {result.output}  (halted: {result.halted})")
    halted = acct.run(pipeline, unemployed, rng=rng, name="salary_mean_other_town")
    console.print(f"other town: output {halted.output}, halted by {halted.halted_by!r}, still charged {halted.entry.guarantee}")

    for i in range(3):  # three Gaussian releases compose tightly in PLD mode
        acct.spend(f"region_total_{i}", Gaussian(0.15, 1e-7, sensitivity=cap))
    try:
        acct.spend("one_query_too_many", Laplace(epsilon=1.0))
    except BudgetExceeded as refusal:
        console.print(f"\n[red]refused:[/] {refusal}")

    console.print()
    console.print(acct.ledger.table())
    console.print(f"spent {acct.spent}, remaining {acct.remaining}")
    return acct
