"""The selling side of a negotiating firm (farmers and roasters).

- Offers on its listings: accepted best price first (ties: the buyer with the better record)
  when at or above the hidden floor and the stock and listing can fill them; a buyer in
  default or with broken promises is never accepted. An offer below the floor gets one
  COUNTER message, conceding from the ask toward the floor by a share of the gap for each
  round with that buyer and item, never below the floor.
- BUY proposals by message: ACCEPT at the proposed price if it is at or above the floor
  (for what it holds on hand or has inbound), else COUNTER as above; REJECT to firms it does
  not trade with or when it has nothing to sell. An ACCEPT or COUNTER is a promise for 3
  days: an offer from that buyer at or above the promised price for at most the promised kg
  is accepted while the stock lasts (such offers go first).
- Asks: lowered 5 % a day toward floor × 1.05 after 2 days without a sale, raised 4 % (up to
  ask₀ × 1.3) when the listing sold out; all on-hand stock is listed at the ask, 30-day terms.
"""

from __future__ import annotations

import math
from typing import Any

from econbench.agents.policy import Routine
from econbench.coffee.policies.common import call, ok
from econbench.coffee.policies.negotiating import memory as mem
from econbench.coffee.policies.proposals import Proposal

UNSOLD_DAYS = 2
ASK_DROP = 0.95
ASK_RISE = 1.04
ASK_FLOOR_MARGIN = 1.05
ASK_TOP = 1.3


def cents_up(value: float) -> float:
    return math.ceil(round(value * 100, 6)) / 100


class Seller:
    """Mixin: needs ``memory``, ``floor(item, stock)``, ``concession`` and ``reply``."""

    memory: mem.Memory
    concession: float
    sell_items: tuple[str, ...] = ()

    def floor(self, item: str, stock: dict[str, Any]) -> float | None:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------ asks
    def ask(self, item: str) -> float:
        return self.memory["levels"]["ask"][item]

    def adjust_asks(self, observation: dict[str, Any], stock: dict[str, Any]) -> None:
        """Once each morning: lower unsold asks, raise sold-out ones."""
        levels = self.memory["levels"]
        day = observation["day"]
        open_items = {lst["item_id"] for lst in observation["my_open_listings"]}
        for deal in observation.get("new_deals", []):
            if deal["role"] == "seller":
                levels["last_sale"][deal["item_id"]] = max(
                    levels["last_sale"].get(deal["item_id"], -1), deal["deal_day"]
                )
        for item in self.sell_items:
            floor = self.floor(item, stock[item])
            if floor is None:
                continue
            ask = levels["ask"][item]
            unsold = day - levels["last_sale"].get(item, day - 1) >= UNSOLD_DAYS
            if item in levels["listed"] and item not in open_items:
                ask = min(ask * ASK_RISE, levels["ask0"][item] * ASK_TOP)
            elif stock[item]["on_hand"] > 0 and (unsold or self.overstocked(item, stock[item])):
                ask = ask * ASK_DROP
            levels["ask"][item] = round(max(ask, floor * ASK_FLOOR_MARGIN), 2)

    def overstocked(self, item: str, row: dict[str, Any]) -> bool:
        """Whether to lower the ask although the item sells: never here (a firm that bargains
        with its market, ``policies.bargaining``, lowers it when stock piles up)."""
        return False

    def list_stock(self, stock: dict[str, Any]) -> Routine:
        listed = []
        for item in self.sell_items:
            qty = stock[item]["on_hand"]
            if qty > 0:
                result = yield call(
                    "post_listing", item_id=item, qty=qty, asking_price=self.ask(item)
                )
                if ok(result):
                    listed.append(item)
        self.memory["levels"]["listed"] = listed

    # ------------------------------------------------------------ offers
    def acceptable(self, buyer: str, item: str, floor: float, day: int) -> float:
        """The least this firm takes from ``buyer`` today: here the floor itself (a firm
        that bargains with the market, ``policies.bargaining``, answers otherwise)."""
        return floor

    def note_round(self, buyer: str, item: str, day: int) -> None:
        """One more counter-proposal to ``buyer`` on ``item``."""
        mem.next_round(self.memory, buyer, item)

    def counter_price(self, buyer: str, item: str, floor: float) -> float:
        ask = max(self.ask(item), floor)
        share = min(1.0, self.concession * (mem.rounds(self.memory, buyer, item) + 1))
        return cents_up(max(floor, ask - (ask - floor) * share))

    def handle_offers(
        self, offers: list[dict[str, Any]], stock: dict[str, Any], observation: dict[str, Any]
    ) -> Routine:
        """Accept what clears the floor (promised offers first), counter the rest once."""
        day = observation["day"]
        listed = {lst["listing_id"]: lst["qty"] for lst in observation["my_open_listings"]}

        def rank(offer: dict[str, Any]) -> tuple[Any, ...]:
            promised = mem.promise_for(self.memory, offer["buyer"], offer["item_id"], day)
            kept = promised is not None and offer["offered_price"] >= promised["price"] - 1e-9
            return (
                not kept,
                -offer["offered_price"],
                -mem.score(self.memory, offer["buyer"]),
                int(offer["offer_id"][1:]),
            )

        to_counter = []
        for offer in sorted(offers, key=rank):
            item, buyer = offer["item_id"], offer["buyer"]
            if item not in stock or mem.blocked(self.memory, buyer):
                continue
            floor = self.floor(item, stock[item])
            if floor is None:
                continue
            least = self.acceptable(buyer, item, floor, day)
            promised = mem.promise_for(self.memory, buyer, item, day)
            if promised is not None and offer["qty"] <= promised["qty"]:
                least = min(least, max(floor, promised["price"]))
            if offer["offered_price"] + 1e-9 < least:
                if offer["offer_id"] not in self.memory["countered"]:
                    to_counter.append(offer)
                continue
            if (
                stock[item]["on_hand"] < offer["qty"]
                or listed.get(offer["listing_id"], 0) < (offer["qty"])
            ):
                continue
            result = yield call("accept_offer", offer_id=offer["offer_id"])
            if ok(result):
                stock[item]["on_hand"] -= offer["qty"]
                listed[offer["listing_id"]] -= offer["qty"]
                mem.drop_promise(self.memory, buyer, item)
        for offer in to_counter[:3]:
            item, buyer = offer["item_id"], offer["buyer"]
            mem.remember(self.memory, "countered", offer["offer_id"])
            if not mem.may_reply(self.memory, buyer):
                continue
            floor = self.floor(item, stock[item])
            assert floor is not None
            price = self.counter_price(buyer, item, floor)
            qty = min(offer["qty"], max(stock[item]["on_hand"], 1))
            self.note_round(buyer, item, day)
            mem.promise_made(self.memory, buyer, item, qty, price, day + mem.PROMISE_DAYS)
            yield from self.reply(  # type: ignore[attr-defined]
                buyer,
                "counter",
                "sell",
                item,
                qty,
                price,
                f"Your offer {offer['offer_id']} is below what I can take; bid this on my "
                f"listing {offer['listing_id']} and I will accept.",
                through=day + mem.PROMISE_DAYS,
            )

    # ------------------------------------------------------------ proposals
    def answer_buy(
        self,
        sender: str,
        proposal: Proposal,
        stock: dict[str, Any],
        observation: dict[str, Any],
    ) -> Routine:
        """Answer a BUY proposal (or a buyer's COUNTER/ACCEPT BUY) by message."""
        if proposal.kind == "reject":
            return
        day, item = observation["day"], proposal.item
        through = day + mem.PROMISE_DAYS
        if mem.blocked(self.memory, sender):
            yield from self.reply(  # type: ignore[attr-defined]
                sender,
                "reject",
                "buy",
                item,
                proposal.qty,
                proposal.price,
                "I do not trade with firms that leave invoices unpaid or break promises.",
            )
            return
        floor = self.floor(item, stock[item]) if item in self.sell_items else None
        available = 0
        if floor is not None:
            available = stock[item]["on_hand"] + stock[item].get("inbound", 0)
        if floor is None or available <= 0:
            yield from self.reply(  # type: ignore[attr-defined]
                sender,
                "reject",
                "buy",
                item,
                proposal.qty,
                proposal.price,
                "I have none of that to sell now.",
            )
            return
        qty = min(proposal.qty, available)
        listing = next(
            (x["listing_id"] for x in observation["my_open_listings"] if x["item_id"] == item),
            None,
        )
        where = f"on my listing {listing}" if listing else "on my listing of it"
        if proposal.price + 1e-9 >= self.acceptable(sender, item, floor, day):
            price = round(proposal.price, 2)
            mem.promise_made(self.memory, sender, item, qty, price, through)
            yield from self.reply(  # type: ignore[attr-defined]
                sender,
                "accept",
                "sell",
                item,
                qty,
                price,
                f"Bid this {where} and I will accept.",
                through=through,
                terms=proposal.terms,
            )
            return
        price = self.counter_price(sender, item, floor)
        self.note_round(sender, item, day)
        mem.promise_made(self.memory, sender, item, qty, price, through)
        yield from self.reply(  # type: ignore[attr-defined]
            sender,
            "counter",
            "sell",
            item,
            qty,
            price,
            f"Bid this {where} and I will accept.",
            through=through,
        )
