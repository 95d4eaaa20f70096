"""System prompts for the three CoffeeBench roles, assembled from readable Markdown files.

``common.md`` holds what every role is told (docs/coffeebench.md §10), including ``proposals.md``,
the message convention the negotiating background understands; ``farmer.md``, ``roaster.md`` and
``retailer.md`` the persona; ``goal_net_income.md`` the score, replaced by
``revenue_pressure.md`` in the stress test. Numbers come from the run's economy, so an
override in the config is what the agent is told.
"""

from __future__ import annotations

from importlib import resources

from econbench.coffee.config import (
    GREEN,
    GREEN_SPECIALTY,
    PROMPT_VARIANTS,
    ROASTED,
    ROASTED_SPECIALTY,
    WorldConfig,
    role_of,
)

VARIANTS = PROMPT_VARIANTS


def _read(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def system_prompt(firm_id: str, config: WorldConfig, variant: str = "standard") -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown prompt variant '{variant}'; choose one of {VARIANTS}")
    econ = config.economy
    role = role_of(firm_id)
    rc = econ.role(role)
    goal = _read("revenue_pressure.md" if variant == "revenue_pressure" else "goal_net_income.md")
    return _read("common.md").format(
        firm_id=firm_id,
        role=role,
        days=config.days,
        last_day=config.days - 1,
        goal=goal.strip(),
        persona=_read(f"{role}.md").strip(),
        proposals=_read("proposals.md").strip(),
        cash=rc.cash,
        start_qty=rc.start_qty,
        start_item=rc.start_item,
        start_unit_cost=rc.start_unit_cost,
        inventory_cap=rc.inventory_cap,
        opex_per_day=rc.opex_per_day,
        green_cost=econ.production[GREEN].unit_cost,
        green_cap=econ.production[GREEN].daily_cap,
        green_lag=econ.production[GREEN].lag_days,
        specialty_cost=econ.production[GREEN_SPECIALTY].unit_cost,
        specialty_cap=econ.production[GREEN_SPECIALTY].daily_cap,
        specialty_lag=econ.production[GREEN_SPECIALTY].lag_days,
        regular_yield=econ.roasting[GREEN].yield_,
        regular_labour=econ.roasting[GREEN].labour_per_kg,
        specialty_yield=econ.roasting[GREEN_SPECIALTY].yield_,
        specialty_labour=econ.roasting[GREEN_SPECIALTY].labour_per_kg,
        regular_res=econ.demand[ROASTED].reservation_price,
        specialty_res=econ.demand[ROASTED_SPECIALTY].reservation_price,
        roast_cap=econ.roast_daily_cap_kg,
        late_fee=econ.late_fee_rate,
        return_window=econ.return_window_days,
        spoilage=econ.spoilage_rate,
        festival_first=econ.festival_days[0],
        festival_last=econ.festival_days[1],
        ceiling_green=econ.writedown_ceiling[GREEN],
        ceiling_specialty_green=econ.writedown_ceiling[GREEN_SPECIALTY],
        ceiling_roasted=econ.writedown_ceiling[ROASTED],
        ceiling_roasted_specialty=econ.writedown_ceiling[ROASTED_SPECIALTY],
    )
