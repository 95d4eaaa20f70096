"""The buying side of a negotiating firm (retailers and roasters).

- A hidden maximum price per item. The bid level, kept per item and seller, starts at a
  drawn share (0.6–0.8) of it and rises by a drawn step (5–10 % of the max) each morning
  that a bid on that seller is still pending from an earlier day, never above the max; after
  a purchase from that seller with no bid left unfilled it falls half a step (not below
  35 % of the max), so a seller that accepts any bid is probed down to its own floor.
- Buying: stale bids (earlier days, or priced differently from today's bid) are withdrawn;
  listings asking more than the max × a drawn walk-away factor (1.15–1.40) get no bid at
  all (unless the seller promised a price); then the cheapest listings first (near-equal
  asks: the seller with the better record) get a bid of min(ask, level) — or a price a
  seller promised, if that is lower than the ask — for the kg still needed, within cash and
  inventory-cap headroom. Sellers that broke promises are skipped.
- SELL proposals and sellers' COUNTER/ACCEPT SELL replies: at or below the max the firm bids
  that price on the seller's listing (the bid is its acceptance); above the max a proposal
  gets a COUNTER at today's bid level for that seller, or a REJECT after 3 rounds with that
  seller in a day.
  A seller's promise is broken if a bid made on it is still pending after it expired.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from econbench.agents.policy import Routine
from econbench.agents.tools import ToolCall
from econbench.coffee.policies.common import call, ok
from econbench.coffee.policies.negotiating import memory as mem
from econbench.coffee.policies.proposals import Proposal

COUNTER_ROUNDS = 3
LOWEST_SHARE = 0.35
WALK_AWAY_DEFAULT = 1.3
NEAR_EQUAL = 0.03


class Buyer:
    """Mixin: needs ``memory``, ``values['bid_start']``/``['bid_step']``, ``max_price``."""

    memory: mem.Memory
    values: dict[str, Any]
    buy_items: tuple[str, ...] = ()

    def max_price(self, item: str) -> float | None:  # pragma: no cover
        raise NotImplementedError

    def share(self, item: str, seller: str) -> float:
        return self.memory["levels"]["share"][item].get(seller, self.values["bid_start"])

    def bid_price(self, item: str, seller: str) -> float | None:
        top = self.max_price(item)
        if top is None or top <= 0:
            return None
        return round(top * self.share(item, seller), 2)

    def adjust_bids(self, observation: dict[str, Any]) -> None:
        """Once each morning: raise the level of items whose bids stay unfilled."""
        day = observation["day"]
        share = self.memory["levels"]["share"]
        start, step = self.values["bid_start"], self.values["bid_step"]
        waiting = {
            (o["item_id"], o["seller"]) for o in observation.get("offers_out", []) if o["day"] < day
        }
        bought = {
            (d["item_id"], d["counterparty"])
            for d in observation.get("new_deals", [])
            if d["role"] == "buyer"
        }
        for item, seller in sorted(waiting | bought):
            if item not in share:
                continue
            level = share[item].get(seller, start)
            if (item, seller) in waiting:
                level = min(1.0, level + step)
            else:
                level = max(LOWEST_SHARE, level - step / 2)
            share[item][seller] = round(level, 4)
        pending = {o["offer_id"] for o in observation.get("offers_out", [])}
        mem.check_promises_got(self.memory, day, pending)

    def bid(
        self, lst: dict[str, Any], price: float, need: int, budget: dict[str, float]
    ) -> Generator[ToolCall, dict[str, Any], int | None]:
        """Bid ``price`` on a listing for what is needed and affordable; returns the kg bid
        (0 if the offer was refused), or None when nothing could be bid at all."""
        qty = min(lst["qty"], need, int(budget["headroom"]), int(budget["cash"] // price))
        if qty <= 0:
            return None
        result = yield call(
            "make_offer", listing_id=lst["listing_id"], offered_price=price, qty=qty
        )
        if not ok(result):
            return 0
        budget["headroom"] -= qty
        budget["cash"] -= qty * price
        return qty

    def buy(
        self,
        item: str,
        need: int,
        listings: list[dict[str, Any]],
        observation: dict[str, Any],
        budget: dict[str, float],
    ) -> Routine:
        """Bid for ``need`` kg of ``item``; ``budget`` holds ``cash`` and ``headroom``."""
        if self.max_price(item) is None:
            return
        day = observation["day"]
        top = self.max_price(item) or 0.0
        promised = {
            p["firm"]: p["price"]
            for p in self.memory["promises_got"]
            if p["item"] == item and p["through"] >= day
        }
        plan: dict[str, float] = {}
        # An ask far above what the firm would pay is not worth a bid: a seller who lists
        # high gets nothing from it unless it comes down (or proposes a price by message).
        walk_away = top * self.values.get("walk_away", WALK_AWAY_DEFAULT)
        candidates = [
            x
            for x in listings
            if x["item_id"] == item
            and not mem.blocked(self.memory, x["seller"])
            and (x["asking_price"] <= walk_away or x["seller"] in promised)
        ]
        candidates.sort(
            key=lambda x: (
                round(x["asking_price"] / max(top, 0.01) / NEAR_EQUAL),
                -mem.score(self.memory, x["seller"]),
                x["asking_price"],
                x["listing_id"],
            )
        )
        for lst in candidates:
            bid = self.bid_price(item, lst["seller"]) or 0.0
            price = min(lst["asking_price"], bid)
            if lst["seller"] in promised and promised[lst["seller"]] <= top:
                price = min(lst["asking_price"], max(price, promised[lst["seller"]]))
            plan[lst["listing_id"]] = round(price, 2)
        # Keep bids already standing at today's price; withdraw the rest of this item's.
        for offer in observation.get("offers_out", []):
            if offer["item_id"] != item:
                continue
            if plan.get(offer["listing_id"]) == offer["offered_price"]:
                need -= offer["qty"]
                plan.pop(offer["listing_id"], None)
                continue
            yield call("withdraw_offer", offer_id=offer["offer_id"])
        for lst in candidates:
            if need <= 0 or budget["headroom"] <= 0:
                break
            price = plan.get(lst["listing_id"])
            if price is None:
                continue
            bought = yield from self.bid(lst, price, need, budget)
            if bought is None:
                break
            need -= bought

    def take(
        self,
        sender: str,
        proposal: Proposal,
        need: int,
        observation: dict[str, Any],
        budget: dict[str, float],
        through: int,
    ) -> Routine:
        """Accept a SELL proposal by bidding its price on the sender's listing (its bid is
        its acceptance), for what is needed and affordable."""
        item = proposal.item
        qty = min(proposal.qty, need, int(budget["headroom"]))
        qty = min(qty, int(budget["cash"] // proposal.price))
        if qty <= 0:
            return
        listings = yield call("view_listings", item_id=item)
        lst = next((x for x in listings.get("listings", []) if x["seller"] == sender), None)
        if lst is None:
            return
        qty = min(qty, lst["qty"])
        price = round(min(proposal.price, lst["asking_price"]), 2)
        for offer in observation.get("offers_out", []):
            if offer["listing_id"] == lst["listing_id"]:
                yield call("withdraw_offer", offer_id=offer["offer_id"])
        result = yield call(
            "make_offer", listing_id=lst["listing_id"], offered_price=price, qty=qty
        )
        if ok(result):
            budget["headroom"] -= qty
            budget["cash"] -= qty * price
            mem.promise_got(
                self.memory,
                sender,
                item,
                qty,
                price,
                proposal.valid_through or through,
                result["offer"]["offer_id"],
            )

    def answer_sell(
        self,
        sender: str,
        proposal: Proposal,
        need: int,
        observation: dict[str, Any],
        budget: dict[str, float],
    ) -> Routine:
        """Answer a SELL proposal or a seller's COUNTER/ACCEPT SELL."""
        if proposal.kind == "reject" or proposal.item not in self.buy_items:
            return
        item, day = proposal.item, observation["day"]
        through = day + mem.PROMISE_DAYS
        top = self.max_price(item)
        if mem.blocked(self.memory, sender) or top is None:
            if proposal.kind == "propose":
                yield from self.reply(  # type: ignore[attr-defined]
                    sender,
                    "reject",
                    "sell",
                    item,
                    proposal.qty,
                    proposal.price,
                    "I am not buying that from you now.",
                )
            return
        if proposal.price <= top + 1e-9:
            yield from self.take(sender, proposal, need, observation, budget, through)
            return
        if proposal.kind == "accept":
            return
        bid = self.bid_price(item, sender) or 0.0
        today = f"{item}|{day}"
        if mem.rounds(self.memory, sender, today) >= COUNTER_ROUNDS or bid <= 0:
            yield from self.reply(  # type: ignore[attr-defined]
                sender,
                "reject",
                "sell",
                item,
                proposal.qty,
                proposal.price,
                "That is more than I can pay.",
            )
            return
        mem.next_round(self.memory, sender, today)
        yield from self.reply(  # type: ignore[attr-defined]
            sender,
            "counter",
            "buy",
            item,
            proposal.qty,
            bid,
            "That is more than I can pay; I would buy at this price.",
            through=through,
        )
