"""Per-firm metrics of a finished run (docs/coffeebench.md §13), computed from the final state and
the daily snapshots — never from anything an agent reported about itself.

Definitions where the spec leaves room:
- ``net_income`` is the score: the ledger's net income including the closing lines
  (``closing_writedown``: stock still held valued at the economy's cost of making it;
  ``closing_opex``: fixed opex of horizon days not paid); ``net_income_before_closing``
  is the same without them.
- ``revenue`` is net of returns; ``opex`` includes spoilage, shipment and production
  write-offs, bad debt and inventory write-downs.
- ``tool_calls`` counts every tool call the firm made, ``wait_for_next_day``, invalid
  calls and calls of unknown tool names included; ``tool_calls_by_name`` has only the
  firm's real tools, and ``unknown_tool_calls`` counts the rest; ``idle_days`` counts days
  with no call other than waiting.
- ``average_inventory_kg`` is the mean over days of the on-hand kg at the evening snapshot.
- ``spoilage_rate`` is kg spoiled ÷ kg that left the firm's stock by any route (sold to
  consumers or firms, roasted, spoiled, lost in transit).
- ``avg_sale_price`` per item is revenue ÷ kg over B2B deliveries and consumer sales.
- ``circular_trades`` counts purchases of an item that the buyer had sold, earlier in the
  run, to the seller or to a firm that then sold that item to the seller.
"""

from __future__ import annotations

from typing import Any

from econbench.coffee.rules.ledger import opex_breakdown
from econbench.coffee.state import Firm, dollars
from econbench.coffee.world import World


def firm_summary(world: World, firm: Firm, policy: str, daily: list[dict[str, Any]]) -> dict:
    state = world.state
    books = firm.books
    sent = [m for m in state.messages.values() if m.sender == firm.id]
    by_recipient: dict[str, int] = {}
    for msg in sent:
        by_recipient[msg.recipient] = by_recipient.get(msg.recipient, 0) + 1
    sold_kg: dict[str, int] = {}
    sold_rev: dict[str, int] = {}
    outflow = 0
    for deal in state.deals.values():
        if deal.seller != firm.id:
            continue
        if deal.status == "delivered":
            kept = deal.shipped_qty - deal.returned_qty
            sold_kg[deal.item] = sold_kg.get(deal.item, 0) + kept
            sold_rev[deal.item] = sold_rev.get(deal.item, 0) + kept * deal.price
        if deal.status in ("delivered", "lost", "pending", "delayed"):
            outflow += deal.shipped_qty - deal.returned_qty
    for sale in state.consumer_sales:
        if sale.firm == firm.id:
            sold_kg[sale.item] = sold_kg.get(sale.item, 0) + sale.qty
            sold_rev[sale.item] = sold_rev.get(sale.item, 0) + sale.qty * sale.price
            outflow += sale.qty
    spoiled = sum(firm.spoiled_kg.values())
    outflow += spoiled + firm.roasted_green_kg
    rows = [r for r in daily if r["firm"] == firm.id]
    avg_inventory = (
        sum(sum(v["qty"] for v in r["inventory"].values()) for r in rows) / len(rows)
        if rows
        else 0.0
    )
    sheet = world.balance_sheet(firm.id)
    return {
        "policy": policy,
        "net_income": dollars(books.net_income),
        "net_income_before_closing": dollars(books.net_income_before_closing),
        "closing_writedown": dollars(books.closing_writedown),
        "closing_opex": dollars(books.closing_opex),
        "revenue": dollars(books.net_revenue),
        "cogs": dollars(books.cogs),
        "opex": dollars(books.opex),
        "interest_expense": dollars(books.interest_expense),
        "interest_income": dollars(books.interest_income),
        "tool_calls": sum(firm.tool_calls.values()) + firm.unknown_tool_calls,
        "tool_calls_by_name": dict(sorted(firm.tool_calls.items())),
        "unknown_tool_calls": firm.unknown_tool_calls,
        "idle_days": firm.idle_days,
        "messages_sent": len(sent),
        "messages_sent_by_recipient": dict(sorted(by_recipient.items())),
        "bankrupt": firm.bankrupt,
        "bankrupt_day": firm.bankrupt_day,
        "messages_read": firm.messages_read,
        "gross_revenue": dollars(books.revenue),
        "returns": dollars(books.returns),
        "opex_breakdown": opex_breakdown(books),
        "cash_end": dollars(firm.cash),
        "equity_end": dollars(sheet["equity"]),
        "deals_as_seller": sum(1 for d in state.deals.values() if d.seller == firm.id),
        "deals_as_buyer": sum(1 for d in state.deals.values() if d.buyer == firm.id),
        "average_inventory_kg": round(avg_inventory, 2),
        "spoiled_kg": spoiled,
        "spoilage_rate": round(spoiled / outflow, 4) if outflow else 0.0,
        "avg_sale_price": {
            item: round(sold_rev[item] / sold_kg[item] / 100, 2)
            for item in sorted(sold_kg)
            if sold_kg[item]
        },
        "sold_kg": dict(sorted(sold_kg.items())),
        "circular_trades": circular_trades(world, firm.id),
    }


def circular_trades(world: World, firm_id: str) -> int:
    """Purchases of goods the buyer had sold before, directly or via one intermediary."""
    direct: dict[str, set[str]] = {}
    via: dict[str, set[str]] = {}
    count = 0
    for deal in sorted(world.state.deals.values(), key=lambda d: d.seq):
        if deal.status == "cancelled":
            continue
        item = deal.item
        if deal.buyer == firm_id and deal.seller in direct.get(item, set()) | via.get(item, set()):
            count += 1
        if deal.seller == firm_id:
            direct.setdefault(item, set()).add(deal.buyer)
        elif deal.seller in direct.get(item, ()):
            via.setdefault(item, set()).add(deal.buyer)
    return count


def run_summary(
    world: World,
    policies: dict[str, str],
    daily: list[dict[str, Any]],
    agent_stats: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    state = world.state
    stats = agent_stats or {}
    return {
        "seed": state.seed,
        "days": world.config.days,
        "days_run": state.day,
        "ended_early": state.ended and state.day < world.config.days,
        "deals": len(state.deals),
        "consumer_sales_kg": sum(s.qty for s in state.consumer_sales),
        "firms": {
            firm.id: firm_summary(world, firm, policies[firm.id], daily) | stats.get(firm.id, {})
            for firm in state.firms.values()
        },
    }
