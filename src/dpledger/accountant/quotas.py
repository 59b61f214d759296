"""Per-analyst quotas: a policy inside a durable ledger's budget (its meta row ``quotas``).

An analyst with a quota may charge only while their own charges, priced by the ledger's filter,
fit the quota as a budget under that same filter; an analyst without one is limited by the budget
alone. The check runs inside the charge's transaction, beside the budget's, so a refused charge
records nothing. A quota never exceeds the budget (in ε and in δ) and may be set below what the
analyst has already spent: their next charge is then refused, and nothing they spent is undone.
"""

from __future__ import annotations

from .. import guarantees as _g
from ..errors import BudgetExceeded
from . import filters as _filters
from .book import add
from .pg_functions import decimal_text


def quota_filter(rule: _filters.Filter, quota: _g.Guarantee) -> _filters.Filter:
    """The ledger's filter (its kind and orders) with ``quota`` as its budget."""
    spec = rule.describe()
    return _filters.make(spec["filter"], quota, spec.get("orders"))


def document(rule: _filters.Filter, analyst: str, quota: _g.Guarantee) -> dict:
    """What the ledger stores for ``analyst``'s quota: the guarantee, and its limits in the filter's
    currency as exact decimals (which a PostgreSQL ledger's own check reads); refused if it exceeds
    the budget or the filter cannot take it as a budget."""
    if not isinstance(analyst, str) or not analyst.strip():
        raise ValueError(f"a quota is for a named analyst, got {analyst!r}")
    quota = _g.check("quota", quota)
    budget = rule.budget
    if quota.epsilon > budget.epsilon or quota.delta > budget.delta:
        raise ValueError(f"the quota {quota} of {analyst} exceeds the ledger's budget {budget}: a quota is a share "
                         "of the budget; give one within it")
    limits = quota_filter(rule, quota).limits  # a ValueError naming the fix if the filter cannot take it
    return {"budget": _g.to_dict(quota), "limits": [decimal_text(x, up=False) for x in limits]}


def quotas_of(stored: dict) -> dict[str, _g.Guarantee]:
    """Each analyst's quota, from the stored documents."""
    return {analyst: _g.from_dict(entry["budget"]) for analyst, entry in stored.items()}


def check(rule: _filters.Filter, book, stored: dict, analyst: str | None, name: str, price) -> None:
    """Refuse the charge ``name`` at ``price`` if it takes ``analyst``'s own charges past their quota."""
    if analyst not in stored:
        return
    quota = _g.from_dict(stored[analyst]["budget"])
    spent, share = book.totals["analyst"].get(analyst, rule.zero()), quota_filter(rule, quota)
    if not share.fits(add(spent, price)):
        raise BudgetExceeded(f"charging {name!r} ({rule.price_text(price)}) would exceed the quota {quota} of "
                             f"{analyst} under the {rule.name!r} filter: {analyst} spent {share.usage(spent)}. The "
                             "ledger's owner may raise it (dpledger ledger quota). Nothing was charged.")
