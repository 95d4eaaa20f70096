"""The bargaining farmer, roaster and retailer: the negotiating firms' routines, priced by
their market (``buying``, ``selling``, ``market``) rather than by a hidden number.

What changes against ``negotiating`` (docs/coffeebench.md §11):

- answers to proposals and bids follow the firm's own concession schedule toward a price
  set by the market it sees (its recent deals weighted by kg, what it paid or charged
  everyone else, the season), never "yes at your price" up to a private cap;
- a proposal is filled for at most what is still needed once standing bids are counted;
- concessions belong to one negotiation and start again from the firm's target after a
  deal or three quiet days;
- roaster_B's expected wholesale price moves by kg, like every price memory here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.policy import Routine
from econbench.coffee.policies.bargaining import market
from econbench.coffee.policies.bargaining.buying import BargainBuyer, standing_elsewhere
from econbench.coffee.policies.bargaining.selling import BargainSeller
from econbench.coffee.policies.bargaining.valuations import bargaining_values
from econbench.coffee.policies.negotiating.farmer import STOCK_TARGET, NegotiatingFarmer
from econbench.coffee.policies.negotiating.retailer import NegotiatingRetailer
from econbench.coffee.policies.negotiating.roaster import (
    LABOUR,
    OUTPUT,
    ROASTED_STOCK_LIMIT,
    YIELD,
    NegotiatingRoaster,
)
from econbench.coffee.policies.negotiating.valuations import (
    PRODUCTION_COST,
    farmer_values,
    retailer_values,
    roaster_values,
)

if TYPE_CHECKING:
    import numpy as np

# Where a seller's price memory starts: this share of the way from its floor to its ask.
SELLER_REF_START = 0.5


def _seller_start(floor: float, ask: float) -> float:
    return floor + (ask - floor) * SELLER_REF_START


def _buyer_start(top: float, share: float) -> float:
    """Where a buyer's price memory starts: ``share`` of its maximum; its urgency raises it
    while nobody sells at it."""
    return top * share


class MarketFirm:
    """Mixin: every wake first takes in the deals the observation reports (``market.record``),
    whatever the routine then does."""

    memory: dict[str, Any]

    def routine(self, observation: dict[str, Any]) -> Routine:
        self.take_in(observation)
        yield from super().routine(observation)  # type: ignore[misc]

    def take_in(self, observation: dict[str, Any]) -> None:
        market.record(self.memory, observation)


class BargainingFarmer(MarketFirm, BargainSeller, NegotiatingFarmer):
    name = "bargaining-farmer"

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:
        return farmer_values(rng) | bargaining_values(rng)

    def init_levels(self) -> None:
        super().init_levels()
        refs = {
            item: _seller_start(self.values["floor"][item], self.values["ask"][item])
            for item in self.sell_items
        }
        self.memory["market"] = market.fresh(self.sell_items, refs)
        self.memory["talks"] = {}

    def overstocked(self, item: str, row: dict[str, Any]) -> bool:
        return row["on_hand"] > STOCK_TARGET[item]

    def floor(self, item: str, stock: dict[str, Any]) -> float | None:
        base = self.values["floor"].get(item)
        if base is None:
            return None
        seasonal = base * market.seasonal(self.values, self.memory["day"])
        return self.glut_floor(item, seasonal, PRODUCTION_COST[item])


class BargainingRoaster(MarketFirm, BargainSeller, BargainBuyer, NegotiatingRoaster):
    name = "bargaining-roaster"

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:
        return roaster_values(rng) | bargaining_values(rng)

    def init_levels(self) -> None:
        super().init_levels()
        levels = self.memory["levels"]
        refs = {
            item: _seller_start(
                levels["cost"][item] * self.values["floor_mult"], levels["ask"][item]
            )
            for item in self.sell_items
        }
        for green in self.buy_items:
            top = self.green_value(green) or 0.0
            # halfway from its opening share to its maximum: a roaster that waits for green
            # would leave the retailers to roaster_A alone for the first weeks
            refs[green] = _buyer_start(top, (1 + self.values["bid_start"]) / 2)
        self.memory["market"] = market.fresh((*self.sell_items, *self.buy_items), refs)
        self.memory["talks"] = {}

    def overstocked(self, item: str, row: dict[str, Any]) -> bool:
        return row["on_hand"] > ROASTED_STOCK_LIMIT[item]

    def floor(self, item: str, stock: dict[str, Any]) -> float | None:
        base = super().floor(item, stock)
        if base is None:
            return None
        return self.glut_floor(item, base, self.cost(item, stock))

    def max_price(self, item: str) -> float | None:
        """The most it pays for green: what its roasted coffee is expected to fetch, less
        labour, less a third of its drawn margin (the negotiating roaster keeps all of it and
        so buys nothing, for weeks on some seeds, while roaster_A alone supplies the shops)."""
        value = self.green_value(item)
        if value is None:
            return None
        return round(value * market.seasonal(self.values, self.memory["day"]), 2)

    def green_value(self, item: str) -> float | None:
        """What a kg of green ``item`` is worth to it, before the season's drift."""
        if item not in YIELD:
            return None
        expected = self.memory["levels"]["expected"][OUTPUT[item]]
        value = (expected * YIELD[item] - LABOUR[item]) * (1 - self.values["margin"] / 2)
        return value if value > 0 else None

    def short_of(self, item: str, observation: dict[str, Any]) -> bool:
        return self.green_need(observation["stock"], item) > 0

    def learn_prices(self, observation: dict[str, Any]) -> None:
        """Nothing in the morning: ``take_in`` learns from every wake's deals."""

    def take_in(self, observation: dict[str, Any]) -> None:
        super().take_in(observation)
        self.learn_expected(observation)

    def learn_expected(self, observation: dict[str, Any]) -> None:
        """The expected wholesale price moves toward each sale by its kg (``market.weighted``):
        a few 1-kg sales at an odd price cannot move what the firm would pay for green."""
        expected = self.memory["levels"]["expected"]
        for deal in observation.get("new_deals", []):
            item = deal["item_id"]
            if deal["role"] == "seller" and item in expected:
                new = market.weighted(
                    expected[item], deal["price"], deal["qty"], market.DEPTH_KG[item]
                )
                expected[item] = round(new, 4)

    def green_for(
        self, sender: str, green: str, stock: dict[str, Any], observation: dict[str, Any]
    ) -> int:
        """What it still needs once its bids with the other sellers are counted (item 2)."""
        return max(
            0, self.green_need(stock, green) - standing_elsewhere(observation, green, sender)
        )


class BargainingRetailer(MarketFirm, BargainBuyer, NegotiatingRetailer):
    name = "bargaining-retailer"

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:
        return retailer_values(rng) | bargaining_values(rng)

    def init_levels(self) -> None:
        super().init_levels()
        refs = {
            item: _buyer_start(self.values["max"][item], self.values["bid_start"])
            for item in self.buy_items
        }
        self.memory["market"] = market.fresh(self.buy_items, refs)
        self.memory["talks"] = {}

    def max_price(self, item: str) -> float | None:
        base = self.values["max"].get(item)
        if base is None:
            return None
        return round(base * market.seasonal(self.values, self.memory["day"]), 2)

    def short_of(self, item: str, observation: dict[str, Any]) -> bool:
        """Short if what it needed yesterday morning is more than it has bought since."""
        bought = sum(
            d["qty"]
            for d in observation.get("new_deals", [])
            if d["role"] == "buyer" and d["item_id"] == item
        )
        return self.memory["need"].get(item, 0) > bought

    def need_for(
        self, sender: str, item: str, stock: dict[str, Any], observation: dict[str, Any]
    ) -> int:
        """What it still needs once its bids with the other sellers are counted (item 2)."""
        need = self.memory["need"].get(item, 0) - standing_elsewhere(observation, item, sender)
        return max(0, need)


BARGAINING = {
    "farmer": BargainingFarmer,
    "roaster": BargainingRoaster,
    "retailer": BargainingRetailer,
}
__all__ = ["BARGAINING", "BargainingFarmer", "BargainingRetailer", "BargainingRoaster"]
