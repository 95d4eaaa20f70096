"""What every CoffeeBench tool stands on: the firm's toolkit bound to the world, and its checks.

Each tool is written beside the rule it belongs to (``coffee/rules/``) as a function whose
``self`` is a ``FirmToolkit``; ``coffee/toolkit.py`` assembles them into each role's toolkit.
Every tool checks all of its inputs before it changes anything, so an error result always
leaves the state exactly as it was. Tool results are the only window an agent has on the
world; they never show another firm's cash, costs, loyalty, the demand constants or the
shipping probabilities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.agents.tools import ToolError, Toolkit
from econbench.coffee.config import FIRMS, ITEMS
from econbench.coffee.state import to_cents

if TYPE_CHECKING:
    from econbench.coffee.world import World


class FirmToolkit(Toolkit):
    """One firm's toolkit, bound to the world; the checks its tools share."""

    def __init__(self, world: World, firm_id: str) -> None:
        self.world = world
        self.firm_id = firm_id

    @property
    def me(self) -> Any:
        return self.world.firm(self.firm_id)

    def _item(self, item_id: str, allowed: tuple[str, ...] = ITEMS, name: str = "item_id") -> str:
        if item_id not in allowed:
            raise ToolError(f"unknown {name} '{item_id}'; use one of: {', '.join(allowed)}")
        return item_id

    @staticmethod
    def _qty(qty: int, name: str = "qty") -> int:
        if qty <= 0:
            raise ToolError(f"{name} must be a positive whole number of kg (got {qty})")
        return qty

    def _price(self, price: float, name: str) -> int:
        if price <= 0:
            raise ToolError(f"{name} must be a positive number of dollars per kg (got {price})")
        limit = self.world.econ.max_price_per_kg
        if price > limit:
            raise ToolError(f"{name} {price} is above the allowed maximum of ${limit:,.2f} per kg")
        cents = to_cents(price)
        if cents <= 0:
            raise ToolError(f"{name} rounds to $0.00; prices are in whole cents")
        return cents

    def _terms(self, days: int) -> int:
        limit = self.world.econ.max_payment_terms_days
        if not 0 <= days <= limit:
            raise ToolError(f"payment_terms_days must be between 0 and {limit} (got {days})")
        return days

    def _firm(self, firm_id: str, name: str) -> str:
        if firm_id not in FIRMS:
            raise ToolError(f"unknown {name} '{firm_id}'; firms are: {', '.join(FIRMS)}")
        return firm_id

    def _limit(self, limit: int, top: int = 100) -> int:
        if not 1 <= limit <= top:
            raise ToolError(f"limit must be between 1 and {top} (got {limit})")
        return limit

    def _lookup(self, table: dict[str, Any], key: str, what: str) -> Any:
        obj = table.get(key)
        if obj is None:
            raise ToolError(f"unknown {what} '{key}'")
        return obj
