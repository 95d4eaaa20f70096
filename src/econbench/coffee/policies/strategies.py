"""Simple roaster strategies for measuring the benchmark (``--agent roaster_A=NAME``).

Each is the ScriptedRoaster's morning routine (view books, listings, offers and payables;
accept offers; pay invoices; roast; list roasted stock; make one offer per green item;
wait; accept offers on other wakes) with its pricing, listing and buying changed. "Cost" is
the firm's own average cost of the item (the paper's basis, $5.88 / $18.30, when it holds
none); every asking price is clamped to the item's ceiling of the default economy ($30
regular / $80 specialty), above which B2B prices are rejected.

- ``markup:X`` — lists all roasted stock at X × cost (X ≥ 1; ``markup:ceiling`` lists at
  the ceiling); accepts offers at ≥ min(1.2 × cost, its asking price), like the heuristic.
  ``markup:X:firm`` accepts only offers at ≥ its asking price. Buys green like ScriptedRoaster.
- ``undercut`` / ``undercut:P`` — lists each roasted item P % (default 1) below the rival
  roaster's open asking price for it, and always at least $0.01 below, but never below
  1.2 × cost; at 1.5 × cost when the rival lists none. Accepts and buys like ScriptedRoaster.
- ``hoard`` — a deliberately bad strategy: offers the asking price on the cheapest listing of
  each green item for as much as its inventory-cap headroom and cash allow, whatever the
  price; roasts at full capacity (as every roaster here does); lists only a fifth of its
  roasted stock, at 2.5 × cost, and accepts only offers at ≥ that price.

These names are for roasters only: ``make_policy`` rejects them for any other role.
"""

from __future__ import annotations

import math
from typing import Any

from econbench.coffee.config import (
    GREEN,
    GREEN_SPECIALTY,
    ROASTED,
    ROASTED_SPECIALTY,
    EconomyConfig,
)
from econbench.coffee.policies.heuristic import (
    ACCEPT_MARKUP,
    LIST_MARKUP,
    PAPER_COST_BASIS,
    ScriptedRoaster,
)

CEILING: dict[str, float] = {
    item: EconomyConfig().writedown_ceiling[item] for item in (ROASTED, ROASTED_SPECIALTY)
}
UNDERCUT_PCT = 1.0
MAX_UNDERCUT_PCT = 50.0
HOARD_LIST_SHARE = 0.2
HOARD_MARKUP = 2.5
HOARD_BUY_KG = 1_000  # no limit of its own: the cap's headroom and cash decide


class StrategyError(ValueError):
    """A strategy name with a missing or malformed parameter."""


def own_cost(item: str, stock: dict[str, Any]) -> float:
    """The firm's average cost of ``item``; the paper's basis when it holds none."""
    cost = float(stock.get("avg_cost") or 0.0)
    return cost if cost > 0 else PAPER_COST_BASIS[item]


def clamp(item: str, price: float) -> float:
    """``price`` rounded to cents and clamped to the item's ceiling."""
    return round(min(price, CEILING.get(item, math.inf)), 2)


class StrategyRoaster(ScriptedRoaster):
    """Base of the strategies: ScriptedRoaster with its own cost basis (actual cost)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def cost_basis(self, item: str, stock: dict[str, Any]) -> float:
        return own_cost(item, stock)


class MarkupRoaster(StrategyRoaster):
    """``markup:X[:firm]``: a fixed markup on its own cost, clamped to the ceiling."""

    def __init__(self, name: str, markup: float, firm: bool = False) -> None:
        super().__init__(name)
        self.markup, self.firm = markup, firm

    def list_price(self, item: str, stock: dict[str, Any], listings: list[dict[str, Any]]) -> float:
        return clamp(item, self.markup * own_cost(item, stock))

    def accept_floor(self, item: str, stock: dict[str, Any]) -> float | None:
        ask = self.list_price(item, stock, [])
        return ask if self.firm else min(ACCEPT_MARKUP * own_cost(item, stock), ask)


class UndercutRoaster(StrategyRoaster):
    """``undercut[:P]``: just below the rival roaster's ask, never below 1.2 × cost."""

    def __init__(self, name: str, pct: float = UNDERCUT_PCT) -> None:
        super().__init__(name)
        self.pct = pct

    def list_price(self, item: str, stock: dict[str, Any], listings: list[dict[str, Any]]) -> float:
        cost = own_cost(item, stock)
        rival = [
            lst["asking_price"]
            for lst in listings
            if lst["item_id"] == item
            and lst["seller"].startswith("roaster")
            and lst["seller"] != self.actor_id
        ]
        if not rival:
            return clamp(item, LIST_MARKUP * cost)
        ask = min(rival)
        below = min(ask - 0.01, math.floor(round(ask * (100 - self.pct), 6)) / 100)
        return clamp(item, max(below, math.ceil(round(ACCEPT_MARKUP * cost * 100, 6)) / 100))


class HoardRoaster(StrategyRoaster):
    """``hoard``: buys all the green it can, sells a fifth of its stock at a high price."""

    def list_qty(self, item: str, stock: dict[str, Any]) -> int:
        on_hand = int(stock["on_hand"])
        return max(1, int(on_hand * HOARD_LIST_SHARE)) if on_hand > 0 else 0

    def list_price(self, item: str, stock: dict[str, Any], listings: list[dict[str, Any]]) -> float:
        return clamp(item, HOARD_MARKUP * own_cost(item, stock))

    def accept_floor(self, item: str, stock: dict[str, Any]) -> float | None:
        return self.list_price(item, stock, [])

    def _green_to_buy(self) -> list[tuple[str, int]]:
        return [(GREEN_SPECIALTY, HOARD_BUY_KG), (GREEN, HOARD_BUY_KG)]

    def _worth_buying(self, green: str, price: float) -> bool:
        return True


STRATEGY_NAMES: tuple[str, ...] = ("markup", "undercut", "hoard")
USAGE = {
    "markup": "markup:X (X >= 1, e.g. markup:1.5) or markup:ceiling, optionally followed by "
    ":firm (accept only at the asking price)",
    "undercut": "undercut or undercut:P (P = percent below the rival's ask, 0 to 50)",
    "hoard": "hoard (no parameters)",
}


def is_strategy(name: str) -> bool:
    return name.partition(":")[0] in STRATEGY_NAMES


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise StrategyError(f"'{text}' is not a number") from None
    if not math.isfinite(value):
        raise StrategyError(f"'{text}' is not a finite number")
    return value


def make_strategy(name: str) -> StrategyRoaster:
    """The roaster strategy ``name`` (see the module docstring); ``StrategyError`` with the
    usage when a parameter is missing or malformed."""
    base, _, rest = name.partition(":")
    params = rest.split(":") if rest else []
    try:
        if base == "markup":
            return _markup(name, params)
        if base == "undercut":
            if len(params) > 1:
                raise StrategyError("too many parameters")
            pct = _number(params[0]) if params else UNDERCUT_PCT
            if not 0 <= pct <= MAX_UNDERCUT_PCT:
                raise StrategyError(f"P must be between 0 and {MAX_UNDERCUT_PCT:g} (got {pct:g})")
            return UndercutRoaster(name, pct)
        if base == "hoard":
            if params:
                raise StrategyError("hoard takes no parameters")
            return HoardRoaster(name)
    except StrategyError as exc:
        raise StrategyError(f"bad strategy '{name}': {exc}; use {USAGE[base]}") from None
    raise StrategyError(f"unknown strategy '{name}'; choose one of: {', '.join(STRATEGY_NAMES)}")


def _markup(name: str, params: list[str]) -> MarkupRoaster:
    if not params or not params[0]:
        raise StrategyError("the markup is missing")
    if len(params) > 2 or (len(params) == 2 and params[1] != "firm"):
        raise StrategyError(f"unexpected parameter(s) {':'.join(params[1:])!r}")
    if params[0] == "ceiling":
        markup = math.inf
    else:
        markup = _number(params[0])
        if markup < 1:
            raise StrategyError(f"X must be at least 1 (got {markup:g})")
    return MarkupRoaster(name, markup, firm=len(params) == 2)
