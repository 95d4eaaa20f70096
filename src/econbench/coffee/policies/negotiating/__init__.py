"""The negotiating background (docs/coffeebench.md §11): scripted firms with hidden valuations that
bid below asks, counter, answer proposals by message and honour what they promise.

``negotiating`` names the farmer, roaster and retailer here; ``haggle`` is a roaster_A that
negotiates by message (for farmers and retailers it means the negotiating firm).
"""

from __future__ import annotations

from econbench.coffee.policies.negotiating.farmer import NegotiatingFarmer
from econbench.coffee.policies.negotiating.haggle import HaggleRoaster
from econbench.coffee.policies.negotiating.retailer import NegotiatingRetailer
from econbench.coffee.policies.negotiating.roaster import NegotiatingRoaster

NEGOTIATING = {
    "farmer": NegotiatingFarmer,
    "roaster": NegotiatingRoaster,
    "retailer": NegotiatingRetailer,
}
HAGGLE = {"farmer": NegotiatingFarmer, "roaster": HaggleRoaster, "retailer": NegotiatingRetailer}

__all__ = [
    "HAGGLE",
    "NEGOTIATING",
    "HaggleRoaster",
    "NegotiatingFarmer",
    "NegotiatingRetailer",
    "NegotiatingRoaster",
]
