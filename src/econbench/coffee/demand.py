"""Consumer demand (docs/coffeebench.md §7): a pure function from shop prices and stock to kg sold.

Kept free of world state so it can be tested against hand-computed cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def round_half_up(x: float) -> int:
    """Round to the nearest integer, halves up (Python's round() is banker's rounding)."""
    return math.floor(x + 0.5)


@dataclass(frozen=True)
class Shop:
    firm: str
    price: float
    stock: int
    loyalty: float


def market_pool(
    prices: list[float],
    *,
    base_demand: float,
    reservation_price: float,
    festival_factor: float,
    noise: float,
    cap_per_80: float = 130.0,
) -> float:
    """M = max(0, f·d0 + ε) · max(0, 1 − p̄/p_res), capped at f · cap · d0/80."""
    if not prices:
        return 0.0
    mean_price = sum(prices) / len(prices)
    pool = max(0.0, festival_factor * base_demand + noise) * max(
        0.0, 1.0 - mean_price / reservation_price
    )
    return min(pool, festival_factor * cap_per_80 * base_demand / 80.0)


def shop_sales(
    shops: list[Shop],
    *,
    base_demand: float,
    reservation_price: float,
    festival_factor: float,
    noise: float,
    floor_kg: int,
    cap_per_80: float = 130.0,
) -> dict[str, int]:
    """kg sold per shop this evening. ``shops`` are the active ones (price > 0, stock > 0)."""
    active = [s for s in shops if s.price > 0 and s.stock > 0]
    if not active:
        return {}
    pool = market_pool(
        [s.price for s in active],
        base_demand=base_demand,
        reservation_price=reservation_price,
        festival_factor=festival_factor,
        noise=noise,
        cap_per_80=cap_per_80,
    )
    attract = {s.firm: max(0.0, 1.0 - s.price / reservation_price) * s.loyalty for s in active}
    total = sum(attract.values())
    sales: dict[str, int] = {}
    for s in active:
        share = attract[s.firm] / total if total > 0 else 0.0
        floor = floor_kg if s.price <= reservation_price else 0
        sales[s.firm] = min(round_half_up(pool * share) + floor, s.stock)
    return sales
