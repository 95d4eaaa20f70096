"""The paper's clock: minutes since the start of the run, business hours, tool costs, and
the names of events and wake reasons.

Ports the reference's ``time_manager.py`` and the constants of ``event_loop.py`` (the
``EventLoop`` itself is ``paper.schedule``) and the business hours of ``environment.py``.
Wake reasons are texts the model reads in its observations, so they are the reference's.
"""

from dataclasses import dataclass

MINUTES_PER_DAY: int = 24 * 60

BUSINESS_HOURS_START: int = 9 * 60
"""09:00: agents wake, deliveries land (a deal's ``delivery_at`` carries this offset)."""
BUSINESS_HOURS_END: int = 19 * 60
"""19:00: an agent's day ends when its clock crosses this."""

TOOL_TIME_COST_MIN: dict[str, int] = {
    "view_listings": 30,
    "view_offers": 30,
    "view_deals": 30,
    "view_messages": 30,
    "view_payables": 30,
    "view_receivables": 30,
    "view_trial_balance": 30,
    "view_consumer_sales": 30,
    "read_message": 30,
    "post_listing": 30,
    "make_offer": 30,
    "accept_offer": 30,
    "withdraw_offer": 30,
    "send_message": 30,
    "produce_item": 30,
    "roast": 30,
    "set_retail_price": 30,
    "pay_invoice": 30,
    "return_shipment": 30,
    "view_market_aggregate": 30,
    "wait_for_next_day": 0,
}
"""Virtual minutes a tool call costs (the reference's table; ``wait_for_next_day`` is
handled by the economy, which jumps the agent to its next wake)."""

DEFAULT_TOOL_COST_MIN: int = 30


def tool_cost_minutes(tool_name: str) -> int:
    """As the reference's ``event_loop.tool_cost_minutes``: unknown tools cost the default."""
    return TOOL_TIME_COST_MIN.get(tool_name, DEFAULT_TOOL_COST_MIN)


def min_to_day_hour_minute(m: int) -> tuple[int, int, int]:
    """As the reference's ``event_loop.min_to_day_hour_minute``: (day, hour, minute)."""
    day, rem = divmod(int(m), MINUTES_PER_DAY)
    hour, minute = divmod(rem, 60)
    return day, hour, minute


def format_min(m: int) -> str:
    """As the reference's ``event_loop.format_min``: ``Day N, HH:MM``, as models see it."""
    day, hour, minute = min_to_day_hour_minute(m)
    return f"Day {day}, {hour:02d}:{minute:02d}"


EVENT_AGENT_WAKE: str = "agent_wake"
EVENT_MORNING_OPEN: str = "morning_open"
EVENT_EOD_MECHANICS: str = "eod_mechanics"
AGENT_STEP = "agent_step"
"""The reference's event for one applied turn (logged as it is; the run layer reads it)."""

WAKE_MORNING: str = "morning_heartbeat"
WAKE_DEAL_ACCEPTED: str = "deal_accepted"
WAKE_DELIVERY_ARRIVED: str = "delivery_arrived"
WAKE_PRODUCTION_READY: str = "production_ready"
WAKE_DM_RECEIVED: str = "dm_received"
WAKE_OFFER_RECEIVED: str = "offer_received"
WAKE_INVOICE_PAID: str = "invoice_paid"
WAKE_RETURN_RECEIVED: str = "return_received"


@dataclass
class TimeManager:
    """As the reference's ``time_manager.TimeManager``: one integer, minutes since the
    start of the run, from which the day is derived."""

    virtual_min: int = 0

    def get_current_day(self) -> int:
        return self.virtual_min // MINUTES_PER_DAY

    def advance_day(self, days: int = 1) -> None:
        """Jump to midnight of the day ``days`` after today."""
        target_day = self.get_current_day() + int(days)
        self.virtual_min = target_day * MINUTES_PER_DAY

    def reset(self) -> None:
        self.virtual_min = 0

    def get_virtual_min(self) -> int:
        return self.virtual_min

    def advance_minutes(self, minutes: int) -> None:
        if minutes < 0:
            raise ValueError(f"minutes must be non-negative, got {minutes}")
        self.virtual_min += int(minutes)
