"""HaggleRoaster (``haggle``): a roaster_A that negotiates by message instead of taking asks.

It roasts, lists and pays like the negotiating roaster. Buying green: for each green item it
needs, it writes a BUY proposal at 60 % of the cheapest farm's ask (to each farm listing the
item), and answers each COUNTER with a COUNTER of its own halfway between its last price and
the farm's, until the farm stops conceding (a counter no more than 1 % under the previous
one) or after 4 rounds; then it bids the farm's price on its listing, if that is within its
maximum. A price once agreed with a farm is bid directly on later days (at most the ask);
a farm that has never answered any of its messages after two days of proposals is taken at
its ask, so against firms that ignore messages it buys like a roaster that takes asks.
Selling roasted: it holds out — its floor is max(1.25 × cost, 85 % of its current ask) —
counters retailers' low bids, and offers its stock each morning with a SELL proposal at the
ask to each retailer (when it holds more than 10 kg of the item).
Its margins are fixed, not drawn: sell floor 1.25 × cost, ask 2.2 × cost, green margin 25 %,
bid start 0.7, step 0.08, expected wholesale $11 / $36.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.policy import Routine
from econbench.coffee.config import RETAIL_ITEMS
from econbench.coffee.policies.common import call
from econbench.coffee.policies.negotiating import memory as mem
from econbench.coffee.policies.negotiating.roaster import NegotiatingRoaster
from econbench.coffee.policies.negotiating.valuations import ROASTED, ROASTED_SPECIALTY
from econbench.coffee.policies.proposals import Proposal, format_proposal

if TYPE_CHECKING:
    import numpy as np

OPENING_SHARE = 0.6
CONVERGED = 0.99
MAX_ROUNDS = 4
HOLD_SHARE = 0.85
RETAILERS = ("retailer_A", "retailer_B")
OFFER_MIN_KG = 10


class HaggleRoaster(NegotiatingRoaster):
    name = "haggle"

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:
        return {
            "floor_mult": 1.25,
            "ask_mult": 2.2,
            "margin": 0.25,
            "expected": {ROASTED: 11.0, ROASTED_SPECIALTY: 36.0},
            "bid_start": 0.7,
            "bid_step": 0.08,
            "concession": 0.3,
        }

    def init_levels(self) -> None:
        super().init_levels()
        self.memory["haggle"] = {"agreed": {}, "mine": {}, "theirs": {}, "asked": {}}

    def floor(self, item: str, stock: dict[str, Any]) -> float | None:
        base = super().floor(item, stock)
        if base is None:
            return None
        return round(max(base, HOLD_SHARE * self.ask(item)), 2)

    # ------------------------------------------------------------ buying green
    def buy_green(
        self, observation: dict[str, Any], stock: dict[str, Any], budget: dict[str, float]
    ) -> Routine:
        day = observation["day"]
        state = self.memory["haggle"]
        listings: list[dict[str, Any]] | None = None
        for green in self.buy_items:
            need = self.green_need(stock, green)
            for offer in observation.get("offers_out", []):
                if offer["item_id"] == green and offer["day"] < day:
                    state["agreed"].pop(f"{offer['seller']}|{green}", None)
                    yield call("withdraw_offer", offer_id=offer["offer_id"])
            if need <= 0:
                continue
            if listings is None:
                result = yield call("view_listings")
                listings = result.get("listings", [])
            top = self.max_price(green) or 0.0
            mine = sorted(
                (
                    x
                    for x in listings
                    if x["item_id"] == green and not mem.blocked(self.memory, x["seller"])
                ),
                key=lambda x: (x["asking_price"], x["listing_id"]),
            )
            silent = state.setdefault("silent_since", {})
            heard = state.setdefault("heard", {})
            for x in mine:  # a farm that never answers proposals: take its ask
                key = f"{x['seller']}|{green}"
                first = silent.get(key)
                if first is not None and first <= day - 2 and x["seller"] not in heard:
                    state["agreed"].setdefault(key, x["asking_price"])
            agreed = [
                (min(x["asking_price"], state["agreed"][f"{x['seller']}|{green}"]), x)
                for x in mine
                if f"{x['seller']}|{green}" in state["agreed"]
            ]
            for price, lst in sorted(agreed, key=lambda t: (t[0], t[1]["listing_id"])):
                if price <= top:
                    need -= (yield from self.bid(lst, price, need, budget)) or 0
            if need <= 0:
                continue
            for lst in mine:
                key = f"{lst['seller']}|{green}"
                if key in state["agreed"] or state["asked"].get(key) == day:
                    continue
                price = round(min(top, lst["asking_price"] * OPENING_SHARE), 2)
                if price <= 0:
                    continue
                state["asked"][key] = day
                state.setdefault("silent_since", {}).setdefault(key, day)
                state["mine"][key] = price
                state["theirs"].pop(key, None)
                yield call(
                    "send_message",
                    recipient=lst["seller"],
                    title=f"Buying {green}",
                    body=format_proposal("buy", green, min(need, lst["qty"]), price)
                    + ". Tell me if this works for you.",
                )

    def answer_sell(
        self,
        sender: str,
        proposal: Proposal,
        need: int,
        observation: dict[str, Any],
        budget: dict[str, float],
    ) -> Routine:
        key = f"{sender}|{proposal.item}"
        state = self.memory["haggle"]
        state.setdefault("heard", {})[sender] = True
        if proposal.kind == "counter" and proposal.item in self.buy_items:
            last = state["theirs"].get(key)
            state["theirs"][key] = proposal.price
            converged = last is not None and proposal.price >= CONVERGED * last
            done = mem.rounds(self.memory, sender, proposal.item) >= MAX_ROUNDS
            if not converged and not done:
                mine = state["mine"].get(key, proposal.price * OPENING_SHARE)
                price = round((mine + proposal.price) / 2, 2)
                state["mine"][key] = price
                mem.next_round(self.memory, sender, proposal.item)
                yield from self.reply(
                    sender,
                    "counter",
                    "buy",
                    proposal.item,
                    proposal.qty,
                    price,
                    "Meet me here and I will bid it on your listing.",
                    through=observation["day"] + mem.PROMISE_DAYS,
                )
                return
        if proposal.kind in ("counter", "accept") and proposal.item in self.buy_items:
            top = self.max_price(proposal.item) or 0.0
            if proposal.price <= top:
                state["agreed"][key] = proposal.price
        yield from super().answer_sell(sender, proposal, max(need, 1), observation, budget)

    # ------------------------------------------------------------ selling roasted
    def morning(self, observation: dict[str, Any]) -> Routine:
        yield from super().morning(observation)
        day = observation["day"]
        for item in RETAIL_ITEMS:
            qty = observation["stock"][item]["on_hand"]
            if qty < OFFER_MIN_KG:
                continue
            for retailer in RETAILERS:
                if retailer in observation.get("bankrupt_firms", []):
                    continue
                mem.promise_made(
                    self.memory, retailer, item, qty, self.ask(item), day + mem.PROMISE_DAYS
                )
                yield call(
                    "send_message",
                    recipient=retailer,
                    title=f"Selling {item}",
                    body=format_proposal(
                        "sell",
                        item,
                        qty,
                        self.ask(item),
                        valid_through=day + mem.PROMISE_DAYS,
                        kind="propose",
                    )
                    + ". Bid it on my listing and I will accept.",
                )
