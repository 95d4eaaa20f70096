"""Consumer demand (docs/coffeebench.md §7) against hand-computed cases."""

from __future__ import annotations

import pytest

from econbench.coffee.demand import Shop, market_pool, round_half_up, shop_sales

REGULAR = {"base_demand": 80.0, "reservation_price": 30.0, "floor_kg": 5}
SPECIALTY = {"base_demand": 15.0, "reservation_price": 80.0, "floor_kg": 1}


def sales(shops, festival=1.0, noise=0.0, item=REGULAR):
    return shop_sales(shops, festival_factor=festival, noise=noise, **item)


def test_two_shops_split_the_pool_by_attractiveness() -> None:
    # p̄ = 21 → M = 80·(1 − 21/30) = 24; a = 0.4 and 0.2 → shares 2/3 and 1/3.
    result = sales([Shop("A", 18, 100, 1.0), Shop("B", 24, 100, 1.0)])
    assert result == {"A": 16 + 5, "B": 8 + 5}


def test_loyalty_tilts_the_shares() -> None:
    # Equal prices 20: M = 80/3 = 26.67; shares 0.55 / 0.45 → 14.67 → 15 and 12.
    result = sales([Shop("A", 20, 100, 1.1), Shop("B", 20, 100, 0.9)])
    assert result == {"A": 15 + 5, "B": 12 + 5}


def test_festival_triples_base_demand() -> None:
    # f = 3, one shop at 15: M = 240·0.5 = 120.
    assert sales([Shop("A", 15, 1000, 1.0)], festival=3.0) == {"A": 125}
    assert sales([Shop("A", 15, 1000, 1.0)], festival=1.0) == {"A": 45}


def test_pool_is_capped() -> None:
    # Huge noise: 280·(1 − 1/30) = 270.7, capped at 130·80/80 = 130.
    assert (
        market_pool([1.0], base_demand=80, reservation_price=30, festival_factor=1.0, noise=200.0)
        == 130.0
    )
    assert (
        market_pool([1.0], base_demand=80, reservation_price=30, festival_factor=3.0, noise=600.0)
        == 390.0
    )


def test_negative_noise_cannot_make_demand_negative() -> None:
    assert (
        market_pool([10.0], base_demand=80, reservation_price=30, festival_factor=1.0, noise=-500.0)
        == 0.0
    )


def test_floor_applies_only_at_or_below_the_reservation_price() -> None:
    # A prices above p_res: attractiveness 0 and no floor; B gets the whole pool.
    # p̄ = 27.5 → M = 80·(1 − 27.5/30) = 6.67 → 7, plus B's floor.
    result = sales([Shop("A", 35, 100, 1.0), Shop("B", 20, 100, 1.0)])
    assert result == {"A": 0, "B": 12}
    assert sales([Shop("A", 30, 100, 1.0)]) == {"A": 5}


def test_sales_never_exceed_stock_and_inactive_shops_sell_nothing() -> None:
    assert sales([Shop("A", 18, 3, 1.0)]) == {"A": 3}
    assert sales([Shop("A", 0, 50, 1.0), Shop("B", 18, 0, 1.0)]) == {}


def test_specialty_rounds_half_up_with_its_floor() -> None:
    # M = 15·(1 − 40/80) = 7.5 → 8, plus the 1 kg floor.
    assert sales([Shop("A", 40, 100, 1.0)], item=SPECIALTY) == {"A": 9}


@pytest.mark.parametrize(("x", "expected"), [(0.5, 1), (1.5, 2), (2.5, 3), (2.49, 2), (0.0, 0)])
def test_round_half_up(x: float, expected: int) -> None:
    assert round_half_up(x) == expected
