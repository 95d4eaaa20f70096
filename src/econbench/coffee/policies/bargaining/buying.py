"""The buying side of a bargaining firm (retailers, and roasters buying green).

What it pays is set by its market, not by the seller's number:

- its **cap** for a seller: its reservation value (the hidden maximum, moving with the
  season), or else what its market says, raised by ``bid_step`` for each morning in a row on
  which it is still short and a bid of its is still unfilled (``urgency``: scarcity raises
  prices, up to the reservation value, and plenty brings them back): the price it has been
  paying (``market.ref``, weighted by kg), the cheapest ask of any other seller, and what it
  paid the others this week (``market.parity``) — these last two by at most
  ``PREMIUM_MAX``, however short the firm is: nobody is paid much more than the rest of the
  market is;
- its **offer** in a negotiation: the price it has been paying, conceding toward the cap
  by the Boulware schedule of ``market.concede`` over ``ROUNDS`` rounds (a round is a
  counter it sends, or a morning its bid on that seller is still unfilled) — or, once it is
  short, the cap at once;
- bids on listings are min(ask, offer); a SELL proposal (or a seller's counter) at or below
  its current offer is taken by bidding that price on the seller's listing, one above it
  gets a counter at the next round's offer — "yes at your price" only below its own
  schedule, never up to a private maximum. A proposal fills at most what the firm still
  needs once the bids it has standing with other sellers are counted.
"""

from __future__ import annotations

from typing import Any

from econbench.agents.policy import Routine
from econbench.coffee.policies.bargaining import market
from econbench.coffee.policies.common import call
from econbench.coffee.policies.negotiating import memory as mem
from econbench.coffee.policies.negotiating.buying import Buyer
from econbench.coffee.policies.proposals import Proposal

ROUNDS = 4
SCARCITY_MAX = 0.15
"""The most urgency raises what it pays over the price it has been paying (15 %): a seller alone in
the market for a while gets a scarcity price, not whatever the buyer could bear."""
ASK_LEARNING = 0.25
PREMIUM_MAX = 0.02
"""However short it is, a buyer pays one seller at most 5 % over another's ask or over what
it paid the others this week: what a seller can get is what the market gets, and a seller
who wants more must wait until the others' prices rise."""


class BargainBuyer(Buyer):
    """Mixin over the negotiating buyer: ``bid_price``, ``adjust_bids`` and ``answer_sell``
    answer from the market (see the module docstring)."""

    def short_of(self, item: str, observation: dict[str, Any]) -> bool:  # pragma: no cover
        """Whether the firm still lacks ``item`` this morning (by its own stock target)."""
        raise NotImplementedError

    _seen: dict[str, tuple[int, list[dict[str, Any]]]]

    def see_listings(self, item: str, listings: list[dict[str, Any]]) -> None:
        """The open listings of ``item`` now, for today's caps: set within a routine from its
        own tool results, so a routine re-driven after a checkpoint sets them the same way."""
        if not hasattr(self, "_seen"):
            self._seen = {}
        mine = [x for x in listings if x["item_id"] == item]
        self._seen[item] = (self.memory["day"], mine)
        # the market's ask: the cheapest of at least two sellers', so no one seller sets it
        if len({x["seller"] for x in mine if x["qty"] > 0}) >= 2:
            market.book(self.memory, item)["seen_ask"] = market.cheapest_ask(mine, "")

    def _listings(self, item: str) -> list[dict[str, Any]]:
        day, listings = getattr(self, "_seen", {}).get(item, (-1, []))
        return listings if day == self.memory["day"] else []

    def cap(self, item: str, seller: str) -> float | None:
        """The most it pays ``seller`` today: its reservation value; and, each raised by its
        urgency, the price it has been paying, the cheapest ask of any other seller, and
        what it paid the others this week."""
        top = self.max_price(item)
        if top is None or top <= 0:
            return None
        entry = market.book(self.memory, item)
        raised = min(self.values["bid_step"] * entry["urgency"], SCARCITY_MAX)
        caps = [top, entry["ref"] * (1 + raised)]
        for other in (
            market.cheapest_ask(self._listings(item), seller),
            market.parity(self.memory, item, seller, buying=True),
        ):
            if other is not None:
                caps.append(other * (1 + min(raised, PREMIUM_MAX)))
        return min(caps)

    def offer_at(self, item: str, seller: str, rounds_done: int) -> float | None:
        """Its offer after ``rounds_done`` rounds: the price it has been paying (or the cap,
        if lower), conceding toward the cap."""
        cap = self.cap(item, seller)
        if cap is None:
            return None
        entry = market.book(self.memory, item)
        if entry["urgency"] > 0:  # short already: no haggling, it pays what it must
            return round(cap, 2)
        start = min(cap, entry["ref"])
        return round(market.concede(start, cap, rounds_done, ROUNDS, self.values["beta"]), 2)

    def bid_price(self, item: str, seller: str) -> float | None:
        day = self.memory["day"]
        return self.offer_at(item, seller, market.round_of(self.memory, seller, item, day))

    def buy(
        self,
        item: str,
        need: int,
        listings: list[dict[str, Any]],
        observation: dict[str, Any],
        budget: dict[str, float],
    ) -> Routine:
        self.see_listings(item, listings)
        yield from super().buy(item, need, listings, observation, budget)

    def adjust_bids(self, observation: dict[str, Any]) -> None:
        """Once each morning: count a round for every bid still unfilled from an earlier
        day, and the urgency of items nobody sold it."""
        day = observation["day"]
        waiting = sorted(
            {
                (o["item_id"], o["seller"])
                for o in observation.get("offers_out", [])
                if o["day"] < day
            }
        )
        for item, seller in waiting:
            if item in self.memory["market"]:
                market.advance(self.memory, seller, item, day)
        for item in self.buy_items:
            entry = market.book(self.memory, item)
            if any(w[0] == item for w in waiting) and self.short_of(item, observation):
                entry["urgency"] += 1
                self.learn_from_asks(item, entry)
            else:
                entry["urgency"] = max(0, entry["urgency"] - 1)
        pending = {o["offer_id"] for o in observation.get("offers_out", [])}
        mem.check_promises_got(self.memory, day, pending)

    def learn_from_asks(self, item: str, entry: dict[str, Any]) -> None:
        """A buyer short of an item it has bought nothing of for a week has no price of its
        own to go by: it moves its reference a quarter of the way toward the market's ask
        (the cheapest of two or more sellers' it last saw, within its reservation value)
        each such morning, rather than wait for ever at its first guess. Once it trades, its
        deals set the reference again; a seller alone in the market cannot set it."""
        ask, top = entry.get("seen_ask"), self.max_price(item)
        if entry["deals"] or ask is None or top is None or ask <= entry["ref"]:
            return
        entry["ref"] = round(min(top, entry["ref"] + (ask - entry["ref"]) * ASK_LEARNING), 4)

    def answer_sell(
        self,
        sender: str,
        proposal: Proposal,
        need: int,
        observation: dict[str, Any],
        budget: dict[str, float],
    ) -> Routine:
        """Answer a SELL proposal or a seller's COUNTER/ACCEPT SELL; ``need`` is what is
        still needed once the firm's bids with other sellers are counted."""
        if proposal.kind == "reject" or proposal.item not in self.buy_items:
            return
        item, day = proposal.item, observation["day"]
        through = day + mem.PROMISE_DAYS
        if need > 0:
            listings = yield call("view_listings", item_id=item)
            self.see_listings(item, listings.get("listings", []))
        rounds_done = market.round_of(self.memory, sender, item, day)
        offer = self.offer_at(item, sender, rounds_done)
        if mem.blocked(self.memory, sender) or offer is None or need <= 0:
            if proposal.kind == "propose":
                why = "I have what I need for now." if need <= 0 else "I am not buying that now."
                yield from self.reply(  # type: ignore[attr-defined]
                    sender, "reject", "sell", item, proposal.qty, proposal.price, why
                )
            return
        if proposal.price <= offer + 1e-9:
            yield from self.take(sender, proposal, need, observation, budget, through)
            return
        if proposal.kind == "accept":
            return
        market.advance(self.memory, sender, item, day)
        counter = self.offer_at(item, sender, rounds_done + 1) or offer
        final = rounds_done + 1 >= ROUNDS
        yield from self.reply(  # type: ignore[attr-defined]
            sender,
            "counter",
            "buy",
            item,
            min(proposal.qty, need),
            counter,
            "That is my last offer."
            if final
            else "That is more than I would pay; I can offer this.",
            through=through,
        )


def standing_elsewhere(observation: dict[str, Any], item: str, seller: str) -> int:
    """The kg of ``item`` the firm has bid for on other sellers' listings."""
    return sum(
        o["qty"]
        for o in observation.get("offers_out", [])
        if o["item_id"] == item and o["seller"] != seller
    )
