"""What a bargaining firm knows of its market, kept in its memory as plain JSON data.

Per item (``memory["market"][item]``):

- ``deals``: its own deals of the last ``WINDOW`` days, ``[day, counterparty, kg, price]``;
- ``ref``: the price it has been dealing at, a kilogram-weighted average with a memory of
  ``DEPTH_KG`` kilograms: a deal of q kg moves it q / (q + depth) of the way to the deal's
  price, and a price more than ``CLAMP`` times away counts as that bound. Eight 1-kg deals
  at an absurd price move it by a few cents, a week's trade at a new price moves it there;
- ``urgency``: for a buyer, how many mornings in a row a bid of its has stayed unfilled.

Per counterparty and item (``memory["talks"]["<firm>|<item>"] = [round, last day]``): one
negotiation. Each exchange of prices with that firm on that item (a counter-proposal, a bid
left unfilled overnight) is a round; a deal closes it, and ``STALE_DAYS`` days without a
round end it, so the next one starts again from the firm's current target. Concessions
belong to a negotiation, never to a firm forever.

``parity`` (what a firm dealt at with everyone but one counterparty this week) and
``cheapest_ask`` (the lowest ask of any other seller) tie what one firm gets to what the rest
of the market gets: what a proposer learns by probing is the market's price, not a hidden
valuation.
"""

from __future__ import annotations

import math
from typing import Any

from econbench.coffee.config import GREEN, GREEN_SPECIALTY, ROASTED, ROASTED_SPECIALTY

WINDOW = 7
STALE_DAYS = 3
CLAMP = 1.25
DEPTH_KG = {GREEN: 120.0, GREEN_SPECIALTY: 30.0, ROASTED: 120.0, ROASTED_SPECIALTY: 30.0}
DRIFT = 0.06
DRIFT_PERIOD = 45.0
FESTIVAL = (40, 53)
FESTIVAL_LIFT = 0.10

Memory = dict[str, Any]


def fresh(items: tuple[str, ...], refs: dict[str, float]) -> dict[str, Any]:
    """The market memory of a firm dealing in ``items``, its starting reference prices."""
    return {item: {"deals": [], "ref": round(refs[item], 4), "urgency": 0} for item in items}


def book(memory: Memory, item: str) -> dict[str, Any]:
    return memory["market"][item]


def record(memory: Memory, observation: dict[str, Any]) -> None:
    """Take in the firm's new deals (an observation lists each once, at whichever wake comes
    next, so this runs at every wake): each updates the reference price of its item by its
    weight and closes the negotiation it came from. A firm buys some items and sells the
    others, so the item tells the side."""
    day = int(observation["day"])
    market = memory["market"]
    for deal in observation.get("new_deals", []):
        item = deal["item_id"]
        if item not in market:
            continue
        qty, price = int(deal["qty"]), float(deal["price"])
        entry = market[item]
        entry["deals"].append([int(deal["deal_day"]), deal["counterparty"], qty, price])
        entry["ref"] = round(weighted(entry["ref"], price, qty, DEPTH_KG[item]), 4)
        close(memory, deal["counterparty"], item)
    for entry in market.values():
        entry["deals"] = [d for d in entry["deals"] if d[0] > day - WINDOW]


def weighted(ref: float, price: float, qty: int, depth: float) -> float:
    """``ref`` moved toward ``price`` by the deal's weight, the price clamped near ``ref``."""
    if ref <= 0:
        return price
    bounded = min(max(price, ref / CLAMP), ref * CLAMP)
    return ref + (bounded - ref) * qty / (qty + depth)


def parity(memory: Memory, item: str, counterparty: str, buying: bool) -> float | None:
    """What this firm has been dealing at with everyone but ``counterparty`` over the last
    ``WINDOW`` days: the kilogram-weighted price or the latest deal's, whichever is the less
    favourable to ``counterparty`` (the lower when buying, the higher when selling), so a
    price that has just moved is followed at once in that direction and a stale one never
    gives ``counterparty`` more than the others get now."""
    kg = value = 0.0
    latest: float | None = None
    for _day, firm, qty, price in book(memory, item)["deals"]:
        if firm != counterparty:
            kg += qty
            value += qty * price
            latest = price
    if latest is None:
        return None
    average = value / kg
    return min(average, latest) if buying else max(average, latest)


def cheapest_ask(listings: list[dict[str, Any]], seller: str) -> float | None:
    """The lowest ask among ``listings`` of sellers other than ``seller``."""
    asks = [float(x["asking_price"]) for x in listings if x["seller"] != seller and x["qty"] > 0]
    return min(asks) if asks else None


def seasonal(values: dict[str, Any], day: int) -> float:
    """The factor a firm's reservation value moves by: a slow drift with the firm's own
    phase, and the festival's lift, so a value learned on one day is not the next week's."""
    phase = float(values.get("phase", 0.0))
    drift = 1.0 + DRIFT * math.sin(2 * math.pi * (day / DRIFT_PERIOD + phase))
    lift = 1.0 + FESTIVAL_LIFT if FESTIVAL[0] <= day <= FESTIVAL[1] else 1.0
    return drift * lift


# ------------------------------------------------------------------ negotiations
def _key(firm: str, item: str) -> str:
    return f"{firm}|{item}"


def round_of(memory: Memory, firm: str, item: str, day: int) -> int:
    """The current round of the negotiation with ``firm`` on ``item`` (0: a new one)."""
    talk = memory["talks"].get(_key(firm, item))
    if talk is None or day - talk[1] > STALE_DAYS:
        return 0
    return int(talk[0])


def advance(memory: Memory, firm: str, item: str, day: int) -> None:
    """One more round with ``firm`` on ``item``."""
    memory["talks"][_key(firm, item)] = [round_of(memory, firm, item, day) + 1, day]


def close(memory: Memory, firm: str, item: str) -> None:
    memory["talks"].pop(_key(firm, item), None)


def concede(start: float, reserve: float, rounds_done: int, rounds: int, beta: float) -> float:
    """A time-dependent concession (Faratin et al. 1998): from ``start`` toward ``reserve``
    by (t/T)^(1/beta) of the gap after t of T rounds; beta < 1 is Boulware, conceding little
    until the deadline."""
    share = min(1.0, max(0, rounds_done) / max(1, rounds)) ** (1.0 / beta)
    return start + (reserve - start) * share
