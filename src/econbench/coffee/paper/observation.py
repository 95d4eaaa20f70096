"""The wake observation of the reference economy (the reference's
`Environment._format_observation` and `date_label`).

Every line and number format is the reference's byte for byte: this is the text an agent
receives as a user message each time it is (re)woken.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from econbench.coffee.paper.audit import ref_sum
from econbench.coffee.paper.clock import format_min

if TYPE_CHECKING:
    from econbench.coffee.paper.economy import PaperEconomy

# Calendar of a run: day 0 is January 1, a Monday; the canonical horizon is 90 days.
MONTH_END_DAYS: tuple[int, ...] = (30, 58, 89)
MONTH_NAMES: tuple[str, ...] = ("Jan", "Feb", "Mar")
DOW_NAMES: tuple[str, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def date_label(day: int) -> str:
    """'Jan 1, Mon' for a run day (as the reference's `date_label`); past day 89 the
    month clamps at March."""
    d = int(day)
    prev_end = -1
    for idx, end in enumerate(MONTH_END_DAYS):
        if d <= end:
            return f"{MONTH_NAMES[idx]} {d - prev_end}, {DOW_NAMES[d % 7]}"
        prev_end = end
    return f"{MONTH_NAMES[-1]} {d - MONTH_END_DAYS[-2]}, {DOW_NAMES[d % 7]}"


def since_day_for(last_active: int, day: int) -> int:
    """First day of the "since you were last active" window (as the reference computes
    `since_day` inside `_format_observation`): yesterday when the agent was active
    yesterday or never woke, else the day after its last active day."""
    since_day = day - 1 if last_active < 0 else max(last_active + 1, day - 1)
    if last_active >= 0 and last_active < day - 1:
        since_day = last_active + 1
    return since_day


def _format_observation(econ: PaperEconomy, agent_id: str, day: int, nudge: str | None) -> str:
    """The wake observation for `agent_id` on `day` (as the reference's
    `Environment._format_observation`)."""
    ba = econ.business_apps[agent_id]
    market = econ.marketplace
    ar_total = ba._ar_outstanding()
    ap_total = ba._ap_outstanding()
    ap_open = [inv for inv in ba.accounts_payable if inv.net_outstanding > 0]
    ap_overdue = [inv for inv in ap_open if inv.due_date < day]
    ap_late_fees = ref_sum(inv.late_fees_accrued for inv in ap_overdue)
    ar_open = [inv for inv in ba.accounts_receivable if inv.net_outstanding > 0]
    ar_overdue = [inv for inv in ar_open if inv.due_date < day]
    ar_late_fees = ref_sum(inv.late_fees_accrued for inv in ar_overdue)

    unread_msgs = market.unread_messages_for(agent_id)
    unread_senders: Counter[str] = Counter(m.sender_id for m in unread_msgs)

    since_day = since_day_for(econ._last_active_day_per_agent.get(agent_id, -1), day)
    recent_deals = [
        d
        for d in market.deals
        if since_day <= (d.deal_at // 1440) < day
        and (d.seller_id == agent_id or d.buyer_id == agent_id)
    ]

    consumer_sales_line = None
    utilization_line = None  # never set in the reference; kept for line order
    if ba.role == "retailer":
        ysales = [
            s
            for s in econ.consumer_sales_log
            if since_day <= int(s.get("day", -1)) < day and s.get("shop_id") == agent_id
        ]
        if ysales:
            tot_qty = sum(int(s.get("qty", 0)) for s in ysales)
            tot_rev = ref_sum(float(s.get("total_price", 0.0)) for s in ysales)
            items_set = sorted({s.get("item_id") for s in ysales if s.get("item_id")})
            items_str = "+".join(items_set) if items_set else "—"
            gap_days = day - since_day
            gap_label = "Yesterday's" if gap_days == 1 else f"Last {gap_days} days'"
            consumer_sales_line = (
                f"{gap_label} retail sales: {tot_qty} unit(s) of {items_str} for ${tot_rev:.2f}."
            )

    ap_extra = (
        f", {len(ap_overdue)} OVERDUE accruing ${ap_late_fees:.2f} late fees" if ap_overdue else ""
    )
    ar_extra = (
        f", {len(ar_overdue)} overdue (+${ar_late_fees:.2f} late-fee revenue)" if ar_overdue else ""
    )
    ar_ap_line = (
        f"AR ${ar_total:.2f} ({len(ar_open)} open{ar_extra}) | "
        f"AP ${ap_total:.2f} ({len(ap_open)} open{ap_extra})"
    )

    if unread_senders:
        dm_summary = ", ".join(f"{s}×{n}" for s, n in unread_senders.most_common())
        oldest_day = min(m.sent_at // 1440 for m in unread_msgs)
        inbox_line = (
            f"Unread DMs: {sum(unread_senders.values())} from {dm_summary} "
            f"(oldest from day {oldest_day}). Use read_message(id) to view."
        )
    else:
        inbox_line = "Unread DMs: 0."

    inv_parts = [f"{k}={v}" for k, v in sorted(ba.inventory.items()) if v]
    on_hand = ba._total_inventory_kg()
    pending = ba._pending_inbound_kg()
    inv_cap = ba._inventory_cap_kg()
    headroom = max(0, inv_cap - on_hand - pending)
    cap_line = (
        f" [on-hand {on_hand} kg + in-flight {pending} kg / cap {inv_cap} kg, "
        f"{headroom} kg headroom]"
    )
    inventory_line = (
        f"Inventory by item: {', '.join(inv_parts)}.{cap_line}"
        if inv_parts
        else f"Inventory by item: (empty).{cap_line}"
    )

    role_lines: list[str] = []
    if ba.role == "retailer":
        price_parts = []
        for item_id in ("roasted_coffee_kg", "roasted_specialty_kg"):
            p = float(ba.retail_prices.get(item_id, 0.0) or 0.0)
            price_parts.append(f"{item_id}=${p:.2f}/kg" if p > 0 else f"{item_id}=(unset)")
        role_lines.append("Retail prices: " + ", ".join(price_parts) + ".")
    elif ba.role == "roaster":
        mine = [r for r in econ._pending_roasting if r["agent_id"] == agent_id]
        if mine:
            summary = ", ".join(
                f"{r['output_qty']} kg {r['output_item']} landing day {r['ready_day']}"
                for r in sorted(mine, key=lambda r: r["ready_day"])
            )
            role_lines.append(f"Pending roasting: {summary}.")
        else:
            role_lines.append("Pending roasting: none.")
    elif ba.role == "farmer":
        mine = [p for p in econ._pending_production if p["agent_id"] == agent_id]
        if mine:
            summary = ", ".join(
                f"{p['qty']} {p['item_id']} landing day {p['ready_day']}"
                for p in sorted(mine, key=lambda p: p["ready_day"])
            )
            role_lines.append(f"Pending production: {summary}.")
        else:
            role_lines.append("Pending production: none.")

    # Counterparty bankruptcies of yesterday only; older ones are not repeated.
    bankruptcy_lines: list[str] = []
    for bust_aid, bust_day in econ._bankrupt_day.items():
        if bust_aid == agent_id or bust_day != day - 1:
            continue
        reason = econ._bankrupt_reason.get(bust_aid, "?")
        written_off = ref_sum(
            round(inv.amount + inv.late_fees_accrued - inv.credited_amount, 2)
            for inv in ba.accounts_receivable
            if inv.bad_debt and inv.bad_debt_date == bust_day and inv.payer == bust_aid
        )
        if written_off > 0:
            bankruptcy_lines.append(
                f"⚠ Counterparty {bust_aid} went BANKRUPT yesterday "
                f"(reason: {reason}). ${written_off:.2f} of your AR has "
                f"been written off (bad_debt_expense → other_operating_expense). "
                f"Reflect it in your next filing's BS/IS."
            )
        else:
            bankruptcy_lines.append(
                f"Note: {bust_aid} went BANKRUPT yesterday (reason: {reason}). "
                f"They can no longer accept orders, settle invoices, or post listings."
            )

    n_listings = len(
        [lt for lt in market.listings if lt.seller_id == agent_id and lt.status == "open"]
    )
    n_in = len([o for o in market.offers if o.seller_id == agent_id and o.status == "pending"])
    n_out = len([o for o in market.offers if o.buyer_id == agent_id and o.status == "pending"])
    lines = [
        f"Observation: {format_min(econ.time_manager.get_virtual_min())} ({date_label(day)}).",
        f"You are {ba.display_name} ({agent_id}).",
        f"Cash ${ba.cash:.2f} | inventory_value ${ba._inventory_value():.2f} | {ar_ap_line}.",
        inventory_line,
        f"Open listings: {n_listings} | pending offers: in {n_in}, out {n_out}.",
        f"Recent deals: {len(recent_deals)} since yesterday.",
        inbox_line,
    ]
    lines.extend(role_lines)
    if consumer_sales_line:
        lines.append(consumer_sales_line)
    if utilization_line:
        lines.append(utilization_line)
    lines.extend(bankruptcy_lines)
    if nudge:
        lines.append(nudge)
    return "\n".join(lines)
