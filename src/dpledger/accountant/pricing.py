"""What a session's filter can price: why a plan is refused (its halting tests, and the filters
that would price it), and the one Rényi order to freeze for a planned workload."""

from __future__ import annotations

import numpy as np

from .. import _validate
from ..errors import PrivacyError
from ..privacy import events as _events, rdp as _rdp
from .filters import FILTERS, Filter, make, one_order_conversion


def unpriced(rule: Filter, plan) -> str:
    """Why ``rule`` cannot price ``plan``, in the plan's own terms: its halting tests (Lemma A.4
    makes the whole graph one (ε, δ) step), and the filters that would price it at the same budget."""
    tests = [f"{step.path!r} ({step.mechanism}, {step.guarantee})" for step in plan.steps
             if step.rule.startswith("halting test")]
    samples = [f"{step.path!r} ({step.mechanism} of {_inner(plan, step.path)})" for step in plan.steps
               if step.mechanism in ("PoissonSample", "SampleWithoutReplacement")]
    if tests:
        why = (f"its halting test{'s' if len(tests) > 1 else ''} {', '.join(tests)} make{'' if len(tests) > 1 else 's'}"
               f" the whole graph one {plan.guarantee} step (Lemma A.4), which has no {rule.currency} price")
    elif samples and (plan.event is None or isinstance(plan.event, _events.EpsilonDeltaDpEvent)):
        why = (f"its subsampled step{'s' if len(samples) > 1 else ''} {', '.join(samples)} enter"
               f"{'' if len(samples) > 1 else 's'} as the amplified (ε, δ) of {plan.rule}, which has no "
               f"{rule.currency} price (a Poisson-subsampled Gaussian, TextbookGaussian or Laplace has one)")
    elif samples:
        why = (f"its subsampled step{'s' if len(samples) > 1 else ''} {', '.join(samples)} ha"
               f"{'ve' if len(samples) > 1 else 's'} no {rule.currency} price"
               + (": subsampling gains nothing in zCDP (ε(α)/α tends to the step's own ρ as α grows)"
                  if rule.name == "zcdp" else ""))
    else:
        why = f"its total {plan.guarantee} by {plan.rule} has no {rule.currency} price"
    able = []
    for name in FILTERS:
        try:
            make(name, rule.budget).price(plan.guarantee, plan.event)
            able.append(repr(name))
        except (PrivacyError, ValueError):
            continue
    return (f"the {rule.name!r} filter cannot price graph {plan.name!r}: {why}; "
            f"{'the filters that would: ' + ', '.join(able) if able else 'no filter prices it'}. Nothing was charged.")


def _inner(plan, path: str) -> str:
    """The mechanisms of the steps inside ``path``."""
    inner = sorted({step.mechanism for step in plan.steps if step.path.startswith(path + "/")})
    return ", ".join(inner) or "nothing"


def suggest_order(what, delta: float, times: int = 1) -> float:
    """The Rényi order at which ``times`` runs of ``what`` (a mechanism, graph, plan or guarantee)
    convert to the smallest ε at ``delta`` under a one-order filter (over ``privacy.rdp.CANDIDATE_ORDERS``).
    Choose it from the planned workload, before any data, and freeze it in a one-order filter:
    ``Accountant(budget, filter="rdp", orders=[suggest_order(step, budget.delta, 1000)])``."""
    import dp_accounting

    from .cost import cost_of

    times = _validate.integer("times", times, minimum=1)
    delta = _validate.probability("delta", delta, low_open=True)
    event = dp_accounting.SelfComposedDpEvent(cost_of(what).event, times)
    values = _rdp.curve(event, _rdp.CANDIDATE_ORDERS)
    if values is None:
        raise PrivacyError(f"{what!r} has no Rényi curve, so no order prices it; the 'rdp' filter would refuse it")
    # the one-order filter's own reading: ties (a workload whose curve is 0) go to the cheapest conversion
    epsilons = [v + one_order_conversion(a, delta) for v, a in zip(values, _rdp.CANDIDATE_ORDERS)]
    return float(_rdp.CANDIDATE_ORDERS[int(np.argmin(epsilons))])
