"""Small helpers the scripted routines share: reading their own tool results."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from econbench.agents.tools import ToolCall


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments)


def ok(result: dict[str, Any]) -> bool:
    return result.get("status") == "success"


def is_morning(observation: dict[str, Any]) -> bool:
    return "morning" in observation.get("wake_reasons", [])


def accept_offers(
    offers: list[dict[str, Any]],
    stock: dict[str, Any],
    observation: dict[str, Any],
    floor: Callable[[str], float | None],
) -> Generator[ToolCall, dict[str, Any], None]:
    """Accept, best price first, every offer at or above ``floor(item)`` (None: never) that
    the firm's stock and its open listing can still fill; keeps ``stock`` up to date."""
    listed = {lst["listing_id"]: lst["qty"] for lst in observation["my_open_listings"]}
    for offer in sorted(offers, key=lambda o: (-o["offered_price"], o["offer_id"])):
        item = offer["item_id"]
        minimum = floor(item)
        if minimum is None or stock[item]["on_hand"] < offer["qty"]:
            continue
        if listed.get(offer["listing_id"], 0) < offer["qty"]:
            continue
        if offer["offered_price"] >= minimum:
            result = yield call("accept_offer", offer_id=offer["offer_id"])
            if ok(result):
                stock[item]["on_hand"] -= offer["qty"]
                listed[offer["listing_id"]] -= offer["qty"]
