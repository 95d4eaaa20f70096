"""A CoffeeBench firm's live panels: what a person sees beside the conversation.

Each panel is the result of one of the firm's own *read* tools, called on its toolkit
directly — not through ``World.act`` — so it is logged nowhere and moves no clock: looking
costs the person no action and changes nothing in the run (a test compares the world's
state before and after). ``read_message`` is left out: it marks a message read. A message's
body is taken from the same state that tool reads, without marking it. The panels show only
what the firm's tools would show it; nothing of another firm's books.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from econbench.coffee.observation import hhmm

if TYPE_CHECKING:
    from econbench.coffee.world import World

PANELS = ("books", "stock", "listings", "offers", "invoices", "messages")
"""The panels, in the order the page and ``show`` list them."""
ROWS = 100
"""The most rows a panel's tool returns (the tools' own cap)."""


class CoffeePanels:
    """Reads one firm's panels and clock from a live world (see the module docstring)."""

    def __init__(self, world: World, firm_id: str) -> None:
        self.world = world
        self.firm_id = firm_id

    def __call__(self) -> dict[str, Any]:
        """The clock and every panel, read now."""
        return {"firm": self.firm_id, "clock": self.clock(), "panels": self.panels()}

    def clock(self) -> dict[str, Any]:
        """The day, the firm's time, and the actions it has left today."""
        world, firm = self.world, self.world.firm(self.firm_id)
        econ = world.econ
        left = max(0, (econ.day_end_minute - firm.clock.minute) // econ.minutes_per_tool)
        return {
            "day": world.day,
            "days": world.config.days,
            "time": hhmm(firm.clock.minute),
            "actions_today": firm.clock.actions_today,
            "actions_left": left,
            "actions_per_day": econ.actions_per_day,
            "bankrupt": firm.bankrupt,
        }

    def panels(self) -> dict[str, Any]:
        read = self._read
        books = read("view_trial_balance")
        stock = books.pop("inventory_by_item", {})
        return {
            "books": books,
            "stock": {"items": stock},
            "listings": read("view_listings", only_others=False),
            "offers": read("view_offers", limit=ROWS),
            "invoices": {
                "payables": read("view_payables", limit=ROWS),
                "receivables": read("view_receivables", limit=ROWS),
            },
            "messages": self._messages(read("view_messages", limit=ROWS)),
        }

    def _read(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """One read tool's result, without its ``status``."""
        result = dict(self.world.toolkit(self.firm_id).call(tool, arguments))
        result.pop("status", None)
        return result

    def _messages(self, inbox: dict[str, Any]) -> dict[str, Any]:
        """The inbox with each message's body (read from state, not marked read)."""
        stored = self.world.state.messages
        for row in inbox.get("messages", []):
            message = stored.get(row["message_id"])
            row["body"] = message.body if message is not None else ""
        return inbox
