"""The selling side of a bargaining firm (farmers, and roasters selling roasted coffee).

Its asks move as the negotiating firm's do (down when unsold, up on sell-outs: public
prices anyone can take). Below the ask it bargains with the market:

- its **least** price for a buyer: the highest of its floor (moving with the season), the
  price it has been selling at (``market.ref``, weighted by kg) and the best bid another
  buyer has standing (``market.best_bid``) — never more than its ask. A lower ask lowers it
  for all;
- what it **accepts** in a negotiation: from the ask toward that least price, conceding by
  the Boulware schedule of ``market.concede`` over ``ROUNDS`` rounds; a round is a counter
  it sends, or a morning a buyer's bid below it is still waiting. An offer or a BUY
  proposal at or above it is accepted; a lower one gets a counter at the next round's
  price (a promise for 3 days, as in the negotiating firm).
"""

from __future__ import annotations

from typing import Any

from econbench.agents.policy import Routine
from econbench.coffee.policies.bargaining import market
from econbench.coffee.policies.negotiating.selling import Seller, cents_up

ROUNDS = 4
GLUT_STEP = 0.97
COST_MARGIN = 1.02


class BargainSeller(Seller):
    """Mixin over the negotiating seller: ``acceptable``, ``counter_price`` and
    ``note_round`` answer from the market (see the module docstring)."""

    values: dict[str, Any]

    def glut_floor(self, item: str, floor: float, cost: float) -> float:
        """``floor`` lowered by ``GLUT_STEP`` for each morning in a row the item has been
        overstocked, never below cost × ``COST_MARGIN``: a firm whose stock piles up sells
        nearer its cost rather than watch it spoil."""
        glut = market.book(self.memory, item).get("glut", 0)
        return round(max(cost * COST_MARGIN, floor * GLUT_STEP**glut), 2)

    def least(self, buyer: str, item: str, floor: float) -> float:
        """The least it takes from ``buyer`` today: the highest of its floor, the price it
        has been selling at and what it sold to the others this week, but never more than
        its own (public) ask."""
        ask = max(self.ask(item), floor)
        entry = market.book(self.memory, item)
        others = market.parity(self.memory, item, buyer, buying=False)
        return min(ask, max(floor, entry["ref"], others if others is not None else floor))

    def acceptable(self, buyer: str, item: str, floor: float, day: int) -> float:
        return cents_up(self.least(buyer, item, floor))

    def counter_price(self, buyer: str, item: str, floor: float) -> float:
        """Its counter in the next round: from its ask toward its least price."""
        rounds_done = market.round_of(self.memory, buyer, item, self.memory["day"]) + 1
        ask = max(self.ask(item), floor)
        least = self.least(buyer, item, floor)
        return cents_up(market.concede(ask, least, rounds_done, ROUNDS, self.values["beta"]))

    def note_round(self, buyer: str, item: str, day: int) -> None:
        market.advance(self.memory, buyer, item, day)

    def handle_offers(
        self, offers: list[dict[str, Any]], stock: dict[str, Any], observation: dict[str, Any]
    ) -> Routine:
        """Count a round for every bid still waiting from an earlier day (once a day), then
        accept or counter."""
        day = observation["day"]
        if self.memory.get("seller_day") != day:
            self.memory["seller_day"] = day
            for item in self.sell_items:
                entry = market.book(self.memory, item)
                entry["glut"] = (
                    entry.get("glut", 0) + 1 if self.overstocked(item, stock[item]) else 0
                )
            waiting = sorted({(o["item_id"], o["buyer"]) for o in offers if o["day"] < day})
            for item, buyer in waiting:
                if item in self.memory["market"]:
                    market.advance(self.memory, buyer, item, day)
        yield from super().handle_offers(offers, stock, observation)
