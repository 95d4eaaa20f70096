"""What an agent sees (docs/coffeebench.md §10): the wake-up observation and the public views.

An agent learns about the world only from this observation and from tool results, so both
are built here, from the same views of listings, offers, deals and batches. They show a
firm its own accounts and what is public on the exchange, never another firm's cash or costs,
the demand constants, the loyalty draws or the shipping probabilities (docs/coffeebench.md
§4). ``render.py`` turns the observation into the text a model reads.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from econbench.coffee.config import GREEN_ITEMS
from econbench.coffee.state import ConsumerSale, Deal, Listing, Offer, dollars

if TYPE_CHECKING:
    from econbench.coffee.world import World


@cache
def hhmm(minute: int) -> str:
    """A minute of the day as the clock time agents and logs read, e.g. 09:00 (kept per
    minute: every log line asks for one)."""
    return f"{minute // 60:02d}:{minute % 60:02d}"


def observe(world: World, firm_id: str) -> dict[str, Any]:
    """The wake-up observation, as data; consumes the queued wake reasons and notices and
    marks the firm's deals so far as seen."""
    firm = world.firm(firm_id)
    clock = firm.clock
    day = world.day
    reasons, clock.reasons = clock.reasons, []
    notices, firm.notices = firm.notices, []
    clock.needs_observation = False
    sheet = world.balance_sheet(firm_id)
    inbound = world.inbound(firm_id)
    committed = world.committed_holdings(firm_id, inbound)
    receivables, payables = world.receivables(firm_id), world.payables(firm_id)
    new_deals = _new_deals(world, firm_id)
    firm.seen_deal_seq = world.state.counters.deal
    unread: dict[str, int] = {}
    for msg in world.state.messages.values():
        if msg.recipient == firm_id and not msg.read:
            unread[msg.sender] = unread.get(msg.sender, 0) + 1
    eta = delivery_eta(world)
    obs: dict[str, Any] = {
        "day": day,
        "time": hhmm(clock.minute),
        "days_total": world.config.days,
        "firm": firm_id,
        "role": firm.role,
        "wake_reasons": reasons,
        "cash": dollars(firm.cash),
        "inventory_value": dollars(sheet["inventory"]),
        "receivables": {
            "total": dollars(sheet["ar"]),
            "open": len(receivables),
            "overdue": len([i for i in receivables if day > i.due_day]),
        },
        "payables": {
            "total": dollars(sheet["ap"]),
            "open": len(payables),
            "overdue": len([i for i in payables if day > i.due_day]),
        },
        "stock": {
            item: {
                "on_hand": s.qty,
                "inbound": inbound[item],
                "avg_cost": round(s.unit_cost() / 100, 2),
            }
            for item, s in firm.stock.items()
        },
        "capacity": {
            "cap": firm.inventory_cap,
            "committed": committed,
            "headroom": firm.inventory_cap - committed,
        },
        "actions_left_today": max(
            0, (world.econ.day_end_minute - clock.minute) // world.econ.minutes_per_tool
        ),
        "my_open_listings": [
            listing_view(world, lst, eta)
            for lst in world.open_listings.values()
            if lst.seller == firm_id
        ],
        "offers_in": [offer_view(o) for o in world.pending_offers.values() if o.seller == firm_id],
        "offers_out": [offer_view(o) for o in world.pending_offers.values() if o.buyer == firm_id],
        "new_deals": [deal_view(d, firm_id) for d in new_deals],
        "unread_messages": unread,
        "notices": notices,
        "bankrupt_firms": [f.id for f in world.state.firms.values() if f.bankrupt],
    }
    obs.update(_role_part(world, firm_id))
    return obs


def _new_deals(world: World, firm_id: str) -> list[Deal]:
    """The firm's deals made since its last observation, oldest first."""
    seen = world.firm(firm_id).seen_deal_seq
    new = []
    for deal in reversed(world.state.deals.values()):
        if deal.seq <= seen:
            break
        if firm_id in (deal.buyer, deal.seller):
            new.append(deal)
    new.reverse()
    return new


def _role_part(world: World, firm_id: str) -> dict[str, Any]:
    """What only a retailer, a roaster or a farm is shown."""
    firm, econ = world.firm(firm_id), world.econ
    if firm.role == "retailer":
        return {
            "retail_prices": {i: dollars(p) for i, p in firm.retail_prices.items()},
            "yesterday_sales": {
                item: {"qty": s.qty, "price": dollars(s.price), "revenue": dollars(s.qty * s.price)}
                for s in sales_since(world, world.day - 1)
                if s.firm == firm_id and s.day == world.day - 1
                for item in [s.item]
            },
        }
    if firm.role == "roaster":
        return {
            "pending_roasts": batch_views(world, firm_id),
            "roast_capacity_left_kg": econ.roast_daily_cap_kg - firm.roasted_today_kg,
        }
    return {
        "pending_production": batch_views(world, firm_id),
        "production_left_today": {
            item: econ.production[item].daily_cap - firm.produced_today.get(item, 0)
            for item in GREEN_ITEMS
        },
    }


# ------------------------------------------------------------------ views
def delivery_eta(world: World) -> str:
    """When goods bought today arrive, as a listing shows it."""
    return f"day {world.day + world.econ.shipping_days} 09:00 if accepted today"


def listing_view(world: World, lst: Listing, eta: str | None = None) -> dict[str, Any]:
    """A listing as the exchange shows it; ``eta`` is ``delivery_eta(world)`` when the
    caller shows many listings at once."""
    f = vars(lst)  # its fields: one slow read, not one per field (see state.StateModel)
    return {
        "listing_id": f["id"],
        "seller": f["seller"],
        "item_id": f["item"],
        "qty": f["qty"],
        "asking_price": dollars(f["price"]),
        "payment_terms_days": f["terms"],
        "posted_day": f["day"],
        "delivery_eta": delivery_eta(world) if eta is None else eta,
    }


def offer_view(o: Offer) -> dict[str, Any]:
    f = vars(o)  # its fields: one slow read, not one per field (see state.StateModel)
    return {
        "offer_id": f["id"],
        "listing_id": f["listing_id"],
        "buyer": f["buyer"],
        "seller": f["seller"],
        "item_id": f["item"],
        "qty": f["qty"],
        "offered_price": dollars(f["price"]),
        "payment_terms_days": f["terms"],
        "message": f["message"],
        "day": f["day"],
        "status": f["status"],
    }


def deal_view(d: Deal, firm_id: str) -> dict[str, Any]:
    """A deal as one of its parties sees it (never the seller's cost)."""
    f = vars(d)  # its fields: one slow read, not one per field (see state.StateModel)
    selling = f["seller"] == firm_id
    status = f["status"]
    return {
        "deal_id": f["id"],
        "role": "seller" if selling else "buyer",
        "counterparty": f["buyer"] if selling else f["seller"],
        "item_id": f["item"],
        "qty": f["qty"],
        "price": dollars(f["price"]),
        "payment_terms_days": f["terms"],
        "deal_day": f["day"],
        "status": status,
        "expected_delivery_day": f["ship_day"] if status in ("pending", "delayed") else None,
        "delivered_day": f["delivered_day"],
        "invoice_id": f["invoice_id"],
        "returned_qty": f["returned_qty"],
        "spoiled_in_transit_kg": f["spoiled_qty"],
    }


def sales_since(world: World, first_day: int) -> list[ConsumerSale]:
    """The consumer sales of day ``first_day`` on, in the log's order. Sales are appended
    each evening for that day, so the list runs in day order and only its tail is read."""
    sales = world.state.consumer_sales
    start = len(sales)
    while start and sales[start - 1].day >= first_day:
        start -= 1
    return sales[start:]


def batch_views(world: World, firm_id: str) -> list[dict[str, Any]]:
    return [
        {"batch_id": b.id, "item_id": b.item, "qty": b.qty, "ready_day": b.ready_day}
        for b in world.state.batches.values()
        if b.firm == firm_id
    ]
