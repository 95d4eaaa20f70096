"""The wake-up observation (``World.observe``) as the text a model reads (docs/coffeebench.md §10).

Text another firm wrote (message titles in the wake reasons, offer notes) appears only as
quoted one-line literals (``econbench.coffee.quoting``), never as lines of its own.
"""

from __future__ import annotations

from typing import Any

from econbench.coffee.quoting import quoted

OFFER_NOTE_CHARS = 300
"""An offer's note is shown up to this length; ``view_offers`` returns all of it."""


def _money(x: float) -> str:
    return f"${x:,.2f}"


def render_observation(obs: dict[str, Any]) -> str:
    lines = [
        f"Day {obs['day']} of {obs['days_total']} (days 0–{obs['days_total'] - 1}), "
        f"{obs['time']}. You are {obs['firm']} ({obs['role']}); "
        f"{obs['actions_left_today']} tool calls left today.",
        "Woken because: " + ("; ".join(obs["wake_reasons"]) or "morning"),
    ]
    ar, ap = obs["receivables"], obs["payables"]
    lines.append(
        f"Cash {_money(obs['cash'])} | inventory value {_money(obs['inventory_value'])} | "
        f"receivables {_money(ar['total'])} ({ar['open']} open, {ar['overdue']} overdue) | "
        f"payables {_money(ap['total'])} ({ap['open']} open, {ap['overdue']} overdue)"
    )
    cap = obs["capacity"]
    lines.append(
        f"Inventory cap {cap['cap']} kg: {cap['committed']} kg committed, "
        f"{cap['headroom']} kg headroom."
    )
    lines.append("Stock (on hand / inbound, average cost):")
    for item, row in obs["stock"].items():
        if row["on_hand"] or row["inbound"]:
            lines.append(
                f"  {item}: {row['on_hand']} kg / {row['inbound']} kg inbound, "
                f"{_money(row['avg_cost'])}/kg"
            )
    if obs["role"] == "retailer":
        prices = ", ".join(f"{i} {_money(p)}" for i, p in obs["retail_prices"].items())
        lines.append(f"Your retail prices: {prices}.")
        sold = obs.get("yesterday_sales") or {}
        lines.append(
            "Yesterday's consumer sales: "
            + (
                "; ".join(
                    f"{item} {row['qty']} kg at {_money(row['price'])} = {_money(row['revenue'])}"
                    for item, row in sold.items()
                )
                or "none"
            )
        )
    elif obs["role"] == "roaster":
        lines.append(f"Roasting capacity left today: {obs['roast_capacity_left_kg']} kg of green.")
        lines.extend(_batches("Pending roasts", obs["pending_roasts"]))
    else:
        left = ", ".join(f"{i} {q} kg" for i, q in obs["production_left_today"].items())
        lines.append(f"Production left today: {left}.")
        lines.extend(_batches("Pending production", obs["pending_production"]))
    lines.extend(_listings(obs["my_open_listings"]))
    lines.extend(_offers("Pending offers to you", obs["offers_in"], "buyer"))
    lines.extend(_offers("Your pending offers", obs["offers_out"], "seller"))
    if obs["new_deals"]:
        lines.append("Deals since your last report:")
        for d in obs["new_deals"]:
            lines.append(
                f"  {d['deal_id']}: you {'sold' if d['role'] == 'seller' else 'bought'} "
                f"{d['qty']} kg {d['item_id']} {'to' if d['role'] == 'seller' else 'from'} "
                f"{d['counterparty']} at {_money(d['price'])}/kg, "
                f"{d['payment_terms_days']}-day terms, {d['status']}"
            )
    unread = obs["unread_messages"]
    if unread:
        lines.append(
            "Unread messages: " + ", ".join(f"{n} from {sender}" for sender, n in unread.items())
        )
    for notice in obs["notices"]:
        lines.append(f"Notice: {notice}")
    if obs["bankrupt_firms"]:
        lines.append("Bankrupt firms (out of the market): " + ", ".join(obs["bankrupt_firms"]))
    return "\n".join(lines)


def _batches(title: str, batches: list[dict[str, Any]]) -> list[str]:
    if not batches:
        return []
    return [
        f"{title}: "
        + "; ".join(f"{b['qty']} kg {b['item_id']} ready day {b['ready_day']}" for b in batches)
    ]


def _listings(listings: list[dict[str, Any]]) -> list[str]:
    if not listings:
        return []
    return ["Your open listings:"] + [
        f"  {lst['listing_id']}: {lst['qty']} kg {lst['item_id']} at "
        f"{_money(lst['asking_price'])}/kg, {lst['payment_terms_days']}-day terms"
        for lst in listings
    ]


def _offers(title: str, offers: list[dict[str, Any]], party: str) -> list[str]:
    if not offers:
        return []
    return [f"{title}:"] + [
        f"  {o['offer_id']} on {o['listing_id']}: {o[party]} — {o['qty']} kg {o['item_id']} at "
        f"{_money(o['offered_price'])}/kg, {o['payment_terms_days']}-day terms"
        + (f" — note: {quoted(o['message'], OFFER_NOTE_CHARS)}" if o["message"] else "")
        for o in offers
    ]
