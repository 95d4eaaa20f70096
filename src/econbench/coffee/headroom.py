"""Headroom analysis (docs/coffeebench.md §16, the paper's Appendix G): a rough upper bound on what
the evaluated roaster could earn.

Assumptions, as in the paper: no spoilage and no late fees; farms sell at zero margin (green
at its production cost); wholesale at half the consumer reservation price; the roaster
roasts its full daily capacity every day; specialty green is bought at both farms' combined
daily cap and regular green fills the rest of the capacity. Roast yields are applied to the
totals (fractional kg), as the paper does. Two regimes: the roaster alone, with the whole
capacity, and a symmetric duopoly in which it gets half of everything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from econbench.coffee.config import (
    GREEN,
    GREEN_SPECIALTY,
    ROASTED,
    ROASTED_SPECIALTY,
    EconomyConfig,
)

FARMS = 2


@dataclass(frozen=True)
class Headroom:
    regime: str
    share: float
    specialty_green_kg: float
    regular_green_kg: float
    roasted_specialty_kg: float
    roasted_regular_kg: float
    wholesale_specialty: float
    wholesale_regular: float
    revenue: float
    green_cost: float
    labour: float
    opex: float
    net_income: float

    def as_dict(self) -> dict[str, float | str]:
        return asdict(self)


def headroom(econ: EconomyConfig, days: int, regime: str, share: float) -> Headroom:
    capacity = econ.roast_daily_cap_kg * days
    specialty_supply = FARMS * econ.production[GREEN_SPECIALTY].daily_cap * days
    specialty = min(specialty_supply, capacity) * share
    regular = capacity * share - specialty
    roasted_specialty = specialty * econ.roasting[GREEN_SPECIALTY].yield_
    roasted_regular = regular * econ.roasting[GREEN].yield_
    price_specialty = econ.demand[ROASTED_SPECIALTY].reservation_price / 2
    price_regular = econ.demand[ROASTED].reservation_price / 2
    revenue = roasted_specialty * price_specialty + roasted_regular * price_regular
    green_cost = (
        specialty * econ.production[GREEN_SPECIALTY].unit_cost
        + regular * econ.production[GREEN].unit_cost
    )
    labour = (
        specialty * econ.roasting[GREEN_SPECIALTY].labour_per_kg
        + regular * econ.roasting[GREEN].labour_per_kg
    )
    opex = econ.roaster.opex_per_day * days
    return Headroom(
        regime=regime,
        share=share,
        specialty_green_kg=specialty,
        regular_green_kg=regular,
        roasted_specialty_kg=roasted_specialty,
        roasted_regular_kg=roasted_regular,
        wholesale_specialty=price_specialty,
        wholesale_regular=price_regular,
        revenue=revenue,
        green_cost=green_cost,
        labour=labour,
        opex=opex,
        net_income=revenue - green_cost - labour - opex,
    )


def both_regimes(econ: EconomyConfig, days: int) -> list[Headroom]:
    return [
        headroom(econ, days, "alone", 1.0),
        headroom(econ, days, "symmetric duopoly", 0.5),
    ]
