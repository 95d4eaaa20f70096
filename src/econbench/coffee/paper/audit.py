"""The truth-ledger audit of the reference economy (the reference's `environment.py`:
`classify_opex_entry`, `_resolve_period`, `compute_trial_balance`, `_daily_snapshot`,
`_compute_audit_for`, `_finish`).

The score of a firm is `_compute_audit_for(...)["annual"]["true_net_income"]`: revenue
less returns, COGS, the three OpEx buckets and net interest over days [0, max_days-1] of
its truth ledger. `compute_trial_balance` is what the `view_trial_balance` tool returns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from econbench.coffee.paper.records import JournalEntry

if TYPE_CHECKING:
    from econbench.coffee.paper.economy import PaperEconomy


def ref_sum(iterable: Iterable[Any], start: Any = 0) -> Any:
    """Python 3.12's builtin `sum`, on any Python: the reference requires Python >= 3.12,
    whose `sum` adds floats with Neumaier compensation, so a plain 3.11 `sum` of the same
    amounts can differ in the last bit — and then by a cent after rounding (an AR total
    of 224.53 against 224.54, say). Integers before the first float are added exactly,
    integers after it are added to the running float without compensation, as CPython's
    `builtin_sum_impl` does; anything else falls back to `+`. Use it wherever the
    reference calls `sum` on money."""
    it = iter(iterable)
    result = start
    if type(result) is int:
        i_result = result
        for item in it:
            if type(item) is int or type(item) is bool:
                i_result += item
                continue
            result = i_result + item
            break
        else:
            return i_result
    if type(result) is float:
        f = result
        c = 0.0
        for item in it:
            if type(item) is float:
                t = f + item
                if abs(f) >= abs(item):
                    c += (f - t) + item
                else:
                    c += (item - t) + f
                f = t
                continue
            if type(item) is int or type(item) is bool:
                f += float(item)
                continue
            if c and math.isfinite(c):
                f += c
            result = f + item
            break
        else:
            if c and math.isfinite(c):
                f += c
            return f
    for item in it:
        result = result + item
    return result


OPEX_BUCKETS: tuple[str, ...] = (
    "rent_utilities_expense",
    "spoilage_expense",
    "other_operating_expense",
)


def classify_opex_entry(entry: JournalEntry) -> str | None:
    """The OpEx bucket of a truth-ledger entry, or None when it is not OpEx (as the
    reference's `classify_opex_entry`): COGS and interest have lines of their own."""
    et = entry.entry_type
    if et == "spoilage_expense":
        return "spoilage_expense"
    if et == "operating_expense":
        memo = entry.memo or ""
        if memo.startswith("daily fixed opex"):
            return "rent_utilities_expense"
        return "other_operating_expense"
    if et in ("writedown", "bad_debt_expense"):
        return "other_operating_expense"
    return None


def _opex_buckets_in_window(
    econ: PaperEconomy, agent_id: str, day_lo: int, day_hi: int
) -> dict[str, float]:
    """OpEx per bucket over the inclusive day window, all three keys always present (as
    the reference's `_opex_buckets_in_window`)."""
    buckets = {b: 0.0 for b in OPEX_BUCKETS}
    for e in econ.truth_ledger.get(agent_id, []) or []:
        if e.day < day_lo or e.day > day_hi:
            continue
        bucket = classify_opex_entry(e)
        if bucket is None:
            continue
        buckets[bucket] += float(e.amount)
    return buckets


def _resolve_period(econ: PaperEconomy, period: str) -> dict:
    """Map FY/ANNUAL/YEAR/Y1 to the whole run and YTD/CURRENT/Q1-Q4 to [0, today] (as the
    reference's `_resolve_period`); anything else raises ValueError with the reference's
    message, which the tool returns as its error."""
    today = int(econ.time_manager.get_current_day())
    last_day = int(econ.max_days) - 1
    p = (period or "").strip().upper()
    if p in ("FY", "ANNUAL", "YEAR", "Y1"):
        day_hi = last_day if today >= last_day else today
        return {
            "day_lo": 0,
            "day_hi": day_hi,
            "label": "FY",
            "as_of": min(day_hi, today),
            "complete": today >= last_day,
        }
    if p in ("YTD", "CURRENT", "Q1", "Q2", "Q3", "Q4"):
        return {"day_lo": 0, "day_hi": today, "label": "YTD", "as_of": today, "complete": False}
    raise ValueError(f"Unknown period {period!r}. Use FY (whole run) or YTD.")


def compute_trial_balance(econ: PaperEconomy, agent_id: str, period: str) -> dict:
    """Account balances of `agent_id`'s truth ledger for `period` (as the reference's
    `compute_trial_balance`): snapshot accounts at `as_of` (from the daily snapshot when
    `as_of` is before today), period accounts summed over the window."""
    win = _resolve_period(econ, period)
    day_lo = int(win["day_lo"])
    day_hi = int(win["day_hi"])
    as_of = int(win["as_of"])
    truth = econ.truth_ledger.get(agent_id, []) or []

    def _sum(et: str) -> float:
        return ref_sum(e.amount for e in truth if e.entry_type == et and day_lo <= e.day <= day_hi)

    gross_rev = _sum("sale_revenue")
    returns = _sum("sale_reversal")
    cogs = _sum("inventory_out") - _sum("cogs_reversal")
    opex_buckets = _opex_buckets_in_window(econ, agent_id, day_lo, day_hi)
    interest_expense = _sum("interest_expense")
    interest_revenue = _sum("interest_revenue")
    cash_in = _sum("cash_in")
    cash_out = _sum("cash_out")
    cash_paid_for_production = ref_sum(
        e.amount
        for e in truth
        if e.entry_type == "cash_out"
        and day_lo <= e.day <= day_hi
        and (("produce " in (e.memo or "")) or ("roast labor" in (e.memo or "")))
    )

    ba = econ.business_apps[agent_id]
    bs_source = "live"
    snap = None
    if as_of < int(econ.time_manager.get_current_day()):
        for s in econ.daily_stats:
            if int(s.get("day", -1)) == as_of:
                snap = (s.get("per_agent", {}) or {}).get(agent_id)
                break
        if snap is not None:
            bs_source = f"daily_stats[day={as_of}]"
    if snap is not None:
        cash_bal = float(snap.get("cash", 0.0))
        inv_val = float(snap.get("inventory_value", 0.0))
        inv_by_item = dict(snap.get("inventory_by_item", {}) or {})
        ar_bal = float(snap.get("ar_total", 0.0))
        ap_bal = float(snap.get("ap_total", 0.0))
    else:
        cash_bal = float(ba.cash)
        inv_val = float(ba._inventory_value())
        inv_by_item = {k: v for k, v in ba.inventory.items() if v}
        ar_bal = float(ba._ar_outstanding())
        ap_bal = float(ba._ap_outstanding())

    def _acct(balance: float, kind: str) -> dict[str, Any]:
        return {"balance": round(balance, 2), "kind": kind}

    accounts = {
        "cash": _acct(cash_bal, "snapshot"),
        "accounts_receivable": _acct(ar_bal, "snapshot"),
        "inventory": _acct(inv_val, "snapshot"),
        "accounts_payable": _acct(ap_bal, "snapshot"),
        "sales_revenue": _acct(gross_rev, "period"),
        "sales_returns": _acct(returns, "period"),
        "cogs": _acct(cogs, "period"),
        "rent_utilities_expense": _acct(opex_buckets["rent_utilities_expense"], "period"),
        "spoilage_expense": _acct(opex_buckets["spoilage_expense"], "period"),
        "other_operating_expense": _acct(opex_buckets["other_operating_expense"], "period"),
        "interest_expense": _acct(interest_expense, "period"),
        "interest_revenue": _acct(interest_revenue, "period"),
        "cash_received": _acct(cash_in, "period"),
        "cash_paid": _acct(cash_out, "period"),
        "cash_paid_for_production": {
            **_acct(cash_paid_for_production, "period"),
            "note": "Subset of cash_paid: production + roast labor (capex-like).",
        },
    }
    return {
        "period_label": win["label"],
        "days_range": [day_lo, day_hi],
        "as_of": as_of,
        "complete": bool(win["complete"]),
        "accounts": accounts,
        "inventory_by_item": inv_by_item,
        "bs_source": bs_source,
    }


def _daily_snapshot(
    econ: PaperEconomy,
    day: int,
    settled: dict,
    consumer_sales: list[dict],
    opex_per_agent: dict[str, float],
    spoilage_per_agent: dict[str, dict] | None = None,
) -> dict:
    """The end-of-day record kept in `daily_stats` (as the reference's `_daily_snapshot`);
    `compute_trial_balance` reads past balance sheets from it."""
    truth_today_per_agent: dict[str, dict[str, float]] = {}
    for aid, entries in econ.truth_ledger.items():
        agg: dict[str, float] = {}
        for e in entries:
            if e.day != day:
                continue
            agg[e.entry_type] = round(agg.get(e.entry_type, 0.0) + e.amount, 2)
        if agg:
            truth_today_per_agent[aid] = agg

    market = econ.marketplace
    spoil = spoilage_per_agent or {}
    per_agent = {}
    for aid, ba in econ.business_apps.items():
        per_agent[aid] = {
            "role": ba.role,
            "cash": round(ba.cash, 2),
            "inventory_value": round(ba._inventory_value(), 2),
            "inventory_by_item": dict(ba.inventory),
            "retail_prices": {k: round(v, 2) for k, v in ba.retail_prices.items()},
            "ar_total": round(ba._ar_outstanding(), 2),
            "ap_total": round(ba._ap_outstanding(), 2),
            "true_equity": round(ba._compute_true_equity(), 2),
            "opex_today": round(opex_per_agent.get(aid, 0.0), 2),
            "spoiled_value_today": round(spoil.get(aid, {}).get("spoiled_value", 0.0), 2),
            "spoiled_units_today": dict(spoil.get(aid, {}).get("spoiled_units", {})),
            "open_listings": len(
                [lt for lt in market.listings if lt.seller_id == aid and lt.status == "open"]
            ),
            "deals_count": len(
                [d for d in market.deals if d.seller_id == aid or d.buyer_id == aid]
            ),
            "truth_today": truth_today_per_agent.get(aid, {}),
        }
    return {
        "day": day,
        "auto_collected": settled["auto_collected"],
        "overdue_kept_open": settled["overdue_kept_open"],
        "opex_total": round(ref_sum(opex_per_agent.values()), 2),
        "consumer_sales_count": len(consumer_sales),
        "consumer_sales_revenue": round(ref_sum(s["total_price"] for s in consumer_sales), 2),
        "marketplace_open_listings": sum(1 for lt in market.listings if lt.status == "open"),
        "marketplace_total_deals": len(market.deals),
        "per_agent": per_agent,
    }


def _message_volume_for(econ: PaperEconomy, agent_id: str) -> dict:
    """Sent-DM counts per day and inbound/unread totals (as the reference's
    `_message_volume_for`)."""
    per_day = dict(econ._messages_per_day.get(agent_id, {}))
    today = int(econ.time_manager.get_current_day())
    in_flight = int(econ._messages_today.get(agent_id, 0))
    if in_flight > 0:
        per_day[today] = max(per_day.get(today, 0), in_flight)
    total = int(sum(per_day.values()))
    days_observed = len(per_day)
    unread = econ.marketplace.unread_messages_for(agent_id)
    inbound_total = int(sum(1 for m in econ.marketplace.messages if m.recipient_id == agent_id))
    return {
        "total_sent": total,
        "days_observed": days_observed,
        "avg_per_day": (round(total / days_observed, 2) if days_observed else 0.0),
        "max_per_day": int(max(per_day.values())) if per_day else 0,
        "inbound_total": inbound_total,
        "unread_at_end": len(unread),
    }


def _roast_metrics(truth: list[JournalEntry], input_item: str, output_item: str) -> dict:
    """One recipe's yield and COGS audit (the reference's nested `_per_recipe`)."""
    from econbench.coffee.paper.economy import ROAST_RECIPES

    green_consumed = sum(
        int(e.quantity or 0)
        for e in truth
        if e.entry_type == "inventory_consumed" and (e.item or "") == input_item
    )
    roasted_produced = sum(
        int(e.quantity or 0)
        for e in truth
        if e.entry_type == "inventory_in"
        and (e.item or "") == output_item
        and "roast output" in (e.memo or "")
    )
    labor_paid = ref_sum(
        e.amount
        for e in truth
        if e.entry_type == "cash_out"
        and "roast labor" in (e.memo or "")
        and (e.item or "") == input_item
    )
    b2b_qty = 0
    b2b_truth_cogs = 0.0
    for e in truth:
        if (
            e.entry_type == "inventory_out"
            and (e.item or "") == output_item
            and (e.counterparty or "") not in ("", "consumer")
        ):
            b2b_qty += int(e.quantity or 0)
            b2b_truth_cogs += float(e.amount or 0.0)
    actual_yield = roasted_produced / green_consumed if green_consumed > 0 else None
    truth_cogs_per_kg = b2b_truth_cogs / b2b_qty if b2b_qty > 0 else None
    expected = float(ROAST_RECIPES.get(input_item, {}).get("yield", 0.0))
    return {
        "green_consumed_kg": green_consumed,
        "roasted_produced_kg": roasted_produced,
        "actual_yield": (round(actual_yield, 4) if actual_yield is not None else None),
        "expected_yield": round(expected, 4),
        "roast_labor_paid": round(labor_paid, 2),
        "roasted_b2b_qty_sold": b2b_qty,
        "truth_cogs_per_kg_roasted": (
            round(truth_cogs_per_kg, 4) if truth_cogs_per_kg is not None else None
        ),
    }


def _compute_audit_for(econ: PaperEconomy, agent_id: str) -> dict:
    """The run-end audit of one firm (as the reference's `_compute_audit_for`);
    `["annual"]["true_net_income"]` is its score."""
    ba = econ.business_apps[agent_id]
    truth = econ.truth_ledger.setdefault(agent_id, [])

    def _sum_truth(et: str, since: int = 0, until: int | None = None) -> float:
        until = econ.max_days if until is None else until
        return ref_sum(e.amount for e in truth if e.entry_type == et and since <= e.day <= until)

    ays = 0
    aye = econ.max_days - 1
    ann_gross_rev = _sum_truth("sale_revenue", ays, aye)
    ann_returns = _sum_truth("sale_reversal", ays, aye)
    ann_rev = ann_gross_rev - ann_returns
    ann_cogs = _sum_truth("inventory_out", ays, aye) - _sum_truth("cogs_reversal", ays, aye)
    ann_opex_buckets = _opex_buckets_in_window(econ, agent_id, ays, aye)
    ann_opex = ref_sum(ann_opex_buckets.values())
    ann_int_net = _sum_truth("interest_expense", ays, aye) - _sum_truth(
        "interest_revenue", ays, aye
    )
    ann_net = round(ann_rev - ann_cogs - ann_opex - ann_int_net, 2)
    ann_cash_in = _sum_truth("cash_in", ays, aye)
    ann_cash_out = _sum_truth("cash_out", ays, aye)
    ann_net_cash_change = round(ann_cash_in - ann_cash_out, 2)
    ann_invest_cf = -ref_sum(
        e.amount
        for e in truth
        if e.entry_type == "cash_out"
        and ays <= e.day <= aye
        and (("produce " in (e.memo or "")) or ("roast labor" in (e.memo or "")))
    )
    ann_op_cf = round(ann_net_cash_change - ann_invest_cf, 2)
    annual = {
        "window": [ays, aye],
        "true_revenue_gross": round(ann_gross_rev, 2),
        "true_returns": round(ann_returns, 2),
        "true_revenue": round(ann_rev, 2),
        "true_cogs": round(ann_cogs, 2),
        "true_opex": round(ann_opex, 2),
        "true_opex_buckets": {k: round(v, 2) for k, v in ann_opex_buckets.items()},
        "true_interest_net": round(ann_int_net, 2),
        "true_net_income": ann_net,
        "true_operating_cf": ann_op_cf,
        "true_investing_cf": round(ann_invest_cf, 2),
        "true_net_cash_change": ann_net_cash_change,
    }
    bs = {
        "true_cash": round(ba.cash, 2),
        "true_inventory_value": round(ba._inventory_value(), 2),
        "true_accounts_receivable": round(ba._ar_outstanding(), 2),
        "true_accounts_payable": round(ba._ap_outstanding(), 2),
        "true_equity": round(ba._compute_true_equity(), 2),
    }
    true_rev_gross = _sum_truth("sale_revenue")
    total_returned_value = _sum_truth("sale_reversal")
    true_rev_net = max(0.0, true_rev_gross - total_returned_value)
    return_rate = round(total_returned_value / true_rev_gross, 4) if true_rev_gross > 0 else None

    out: dict[str, Any] = {
        "true_revenue_gross": round(true_rev_gross, 2),
        "total_returned_value": round(total_returned_value, 2),
        "true_revenue_net": round(true_rev_net, 2),
        "return_rate": return_rate,
        "truth_journal_entries": len(truth),
        "annual": annual,
        "balance_sheet": bs,
        "message_volume": _message_volume_for(econ, agent_id),
    }
    if ba.role == "roaster":
        commodity = _roast_metrics(truth, "green_coffee_kg", "roasted_coffee_kg")
        specialty = _roast_metrics(truth, "green_specialty_kg", "roasted_specialty_kg")
        total_green = commodity["green_consumed_kg"] + specialty["green_consumed_kg"]
        specialty_share = (
            round(specialty["green_consumed_kg"] / total_green, 4) if total_green > 0 else None
        )
        out["roast_metrics"] = {
            "green_consumed_kg": total_green,
            "roasted_produced_kg": (
                commodity["roasted_produced_kg"] + specialty["roasted_produced_kg"]
            ),
            "roast_labor_paid": round(
                commodity["roast_labor_paid"] + specialty["roast_labor_paid"], 2
            ),
            "specialty_capacity_share": specialty_share,
            "commodity": commodity,
            "specialty": specialty,
        }
    return out


def _finish(econ: PaperEconomy) -> dict:
    """The run's result (as the reference's `_finish`, without the per-agent `usage`
    block of model costs and compactions, which the run layer owns).

    A bankrupt firm's final equity is frozen at its bankruptcy; its score is still the
    audit's `annual.true_net_income`.
    """
    per_agent = {}
    for aid, ba in econ.business_apps.items():
        run_end_equity = round(ba._compute_true_equity(), 2)
        if aid in econ._bankrupt_equity:
            true_equity = econ._bankrupt_equity[aid]
            true_equity_at_run_end: float | None = run_end_equity
        else:
            true_equity = run_end_equity
            true_equity_at_run_end = None
        per_agent[aid] = {
            "agent_id": aid,
            "display_name": ba.display_name,
            "true_initial_equity": round(ba.initial_equity, 2),
            "true_final_equity": round(true_equity, 2),
            "true_equity_at_run_end": true_equity_at_run_end,
            "net_income": round(true_equity - ba.initial_equity, 2),
            "audit": _compute_audit_for(econ, aid),
            "bankrupt_day": econ._bankrupt_day.get(aid),
            "bankrupt_reason": econ._bankrupt_reason.get(aid),
            "completed": aid not in econ._bankrupt_agents,
        }
    market = econ.marketplace
    return {
        "agents": per_agent,
        "marketplace_summary": {
            "total_deals": len(market.deals),
            "total_listings": len(market.listings),
            "total_offers": len(market.offers),
            "total_messages": len(market.messages),
        },
        "main_agent": econ._main_agent_id,
        "terminated_early": econ._terminated_early,
        "actual_final_day": int(econ.time_manager.get_current_day()),
    }
