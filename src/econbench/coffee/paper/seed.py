"""The paper's world at day 0: its four items and six firms' endowments.

As the reference's ``main._seed_world`` (CoffeeBench commit 71442fb). The item names and
descriptions reach the model through the system prompt's catalog and the personas through its
profile paragraph, so every text here is the reference's, byte for byte; the numbers are the
economy's starting point (production costs and caps, reservation prices, starter stock at its
cost basis, the retailers' starting shelf prices).

The economy's own constants (``ROLE_INVENTORY_CAP_KG``, ``ROAST_RECIPES``, the demand model) are
not here: the reference keeps them in ``environment.py`` (ported in ``paper/economy.py``); nor
are ``main.COMMON_TOOL_NAMES`` / ``ROLE_TOOL_NAMES`` (in ``paper/tools.py``).
"""

from __future__ import annotations

from econbench.coffee.paper.records import AgentEndowment, Item

GREEN = "green_coffee_kg"
ROASTED = "roasted_coffee_kg"
GREEN_SPECIALTY = "green_specialty_kg"
ROASTED_SPECIALTY = "roasted_specialty_kg"

STARTING_CASH = 15000.0

_GREEN_DESCRIPTION = (
    "Raw, unroasted commodity coffee beans. CANNOT be retailed "
    "to consumers (green beans aren't drinkable); the roaster "
    "role converts green → roasted via the `roast` action. "
    "Real-world farm cost ~$1-3/kg, wholesale market $2-5/kg."
)
_ROASTED_DESCRIPTION = (
    "Roasted commodity beans for retail. Roasters produce this "
    "via `roast(green_kg)` (consumes green + $3/kg labor, yields "
    "0.85 kg roasted per 1 kg green at 15% weight loss, 1-day "
    "lag) and sell to retailers B2B. Retailers then sell to "
    "consumers per kg via `set_retail_price`. Effective COGS "
    "~$5-6/kg; typical wholesale $8-15/kg, retail $15-25/kg."
)
_GREEN_SPECIALTY_DESCRIPTION = (
    "Premium single-origin / specialty-grade green beans (e.g. "
    "high-altitude microlots, top cupping scores). CANNOT be "
    "retailed; the roaster converts these via "
    '`roast("green_specialty_kg", qty)` into '
    "`roasted_specialty_kg`. Real-world specialty green "
    "$8-15/kg."
)
_ROASTED_SPECIALTY_DESCRIPTION = (
    "Premium roasted specialty beans for retail. Roasters "
    'produce this via `roast("green_specialty_kg", qty)` '
    "(consumes premium green + $5/kg labor, yields 0.82 kg "
    "roasted per 1 kg green at 18% weight loss, 1-day lag, "
    "shares the 50 kg/day input cap with the commodity "
    "recipe). Retailers then sell to consumers per kg via "
    "`set_retail_price`. Effective COGS ~$18/kg (specialty "
    "green @ $10 + labor $5, /0.82 yield); consumer "
    "reservation price $80/kg — much higher margin than "
    "commodity, but also much smaller daily market demand "
    "pool."
)

FARMER_PERSONA = (
    "You are a coffee farm cooperative producing TWO grades of "
    "green coffee:\n"
    '- Commodity green via `produce_item("green_coffee_kg", '
    "quantity)`: $2/kg cash cost, 30 kg/day cap per farmer, 2-day "
    "production lag.\n"
    "- Specialty / single-origin green via "
    '`produce_item("green_specialty_kg", quantity)`: $10/kg cash '
    "cost, 10 kg/day cap per farmer, 2-day lag — premium grade for "
    "the high-margin specialty roast tier downstream.\n"
    "Sell either grade B2B to roasters."
)
ROASTER_PERSONA = (
    "You are a coffee roaster operating TWO product lines, both "
    "via the unified `roast(green_item_id, qty_kg)` action:\n"
    '- `roast("green_coffee_kg", qty)` — commodity: $3/kg labor, '
    "yield 0.85, 1-day lag → `roasted_coffee_kg`.\n"
    '- `roast("green_specialty_kg", qty)` — premium: $5/kg labor, '
    "yield 0.82, 1-day lag → `roasted_specialty_kg`.\n"
    "Both recipes share a single 50 kg/day total green-input cap "
    "(one set of equipment). Sell roasted B2B to retailers. "
    "Consumer reservation prices: $30/kg commodity, $80/kg "
    "specialty — the specialty tier is much higher margin but "
    "also a smaller daily market."
)
RETAILER_PERSONA = (
    "You operate a coffee retail shop. Source roasted beans B2B "
    "from roasters and set per-kg consumer prices via "
    "`set_retail_price(item_id, price_per_kg)`. You can stock and "
    "price BOTH consumer-facing items: `roasted_coffee_kg` "
    "(commodity, p_res $30/kg, starter $18/kg) and "
    "`roasted_specialty_kg` (premium, p_res $80/kg, starter "
    "$50/kg). Daily consumer service is gated by on-hand inventory; "
    "the env auto-runs the consumer-demand model each day. You "
    "CANNOT see consumer demand or competitor pricing directly — "
    "discover them empirically. The premium tier is a much smaller "
    "daily market but carries far higher margin."
)
PERSONAS: dict[str, str] = {
    "farmer": FARMER_PERSONA,
    "roaster": ROASTER_PERSONA,
    "retailer": RETAILER_PERSONA,
}

# Starter stock per role: (item, kg, cost basis per kg). The cost bases put every firm's
# initial equity a little above its $15,000 cash.
_STARTER: dict[str, tuple[str, int, float]] = {
    "farmer": (GREEN, 60, 2.0),
    "roaster": (ROASTED, 30, 5.88),
    "retailer": (ROASTED, 25, 10.0),
}
# Retailers open with both consumer items on the shelf, so day-0 consumer sales can happen.
_RETAILER_OPENING_PRICES: dict[str, float] = {ROASTED: 18.0, ROASTED_SPECIALTY: 50.0}

# The six firms in the reference's order (the order of the prompt's participant list and of
# every per-agent loop in the economy).
AGENT_IDS: tuple[str, ...] = (
    "farmer_A",
    "farmer_B",
    "roaster_A",
    "roaster_B",
    "retailer_A",
    "retailer_B",
)


def _items() -> list[Item]:
    """The four-item chain: commodity and specialty tiers, green (farmed) and roasted."""
    return [
        Item(
            id=GREEN,
            name="Green coffee beans (per kg)",
            description=_GREEN_DESCRIPTION,
            retail_reservation_price=None,
            produced_by_role="farmer",
            production_cost_per_unit=2.0,
            daily_production_cap=30,
            production_lag_days=2,
            delivery_lag_days=1,
        ),
        Item(
            id=ROASTED,
            name="Roasted coffee beans (per kg)",
            description=_ROASTED_DESCRIPTION,
            retail_reservation_price=30.0,
            consumer_demand_floor=5.0,
            produced_by_role=None,
            production_cost_per_unit=0.0,
            daily_production_cap=0,
            delivery_lag_days=1,
        ),
        Item(
            id=GREEN_SPECIALTY,
            name="Specialty green coffee beans (per kg)",
            description=_GREEN_SPECIALTY_DESCRIPTION,
            retail_reservation_price=None,
            produced_by_role="farmer",
            production_cost_per_unit=10.0,
            daily_production_cap=10,
            production_lag_days=2,
            delivery_lag_days=1,
        ),
        Item(
            id=ROASTED_SPECIALTY,
            name="Roasted specialty coffee beans (per kg)",
            description=_ROASTED_SPECIALTY_DESCRIPTION,
            retail_reservation_price=80.0,
            consumer_demand_base=15.0,
            consumer_demand_floor=1.0,
            produced_by_role=None,
            production_cost_per_unit=0.0,
            daily_production_cap=0,
            delivery_lag_days=1,
        ),
    ]


def _endowment(agent_id: str) -> AgentEndowment:
    """One firm's day-0 state; ids end in ``_A``/``_B`` and start with the role."""
    role, letter = agent_id.rsplit("_", 1)
    item, kg, cost = _STARTER[role]
    return AgentEndowment(
        agent_id=agent_id,
        display_name=f"{role.capitalize()} {letter}",
        role=role,
        persona=PERSONAS[role],
        initial_cash=STARTING_CASH,
        initial_inventory={item: kg},
        initial_cost_basis={item: cost},
        initial_retail_prices=dict(_RETAILER_OPENING_PRICES) if role == "retailer" else {},
    )


def seed_world(*, p_res: float | None = None) -> tuple[list[Item], list[AgentEndowment]]:
    """Fresh items and endowments, as the reference's ``main._seed_world``.

    ``p_res`` is the reference's ``economy.p_res`` config override (applied in
    ``main.build_run``): it replaces the reservation price of every consumer-facing item.
    """
    items = _items()
    if p_res is not None:
        for item in items:
            if item.retail_reservation_price is not None:
                item.retail_reservation_price = float(p_res)
    return items, [_endowment(agent_id) for agent_id in AGENT_IDS]
