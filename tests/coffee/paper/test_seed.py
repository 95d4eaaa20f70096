"""The paper world's day-0 state is the reference's ``main._seed_world``.

The digest was computed from the reference (CoffeeBench 71442fb, Python 3.12) as the sha256 of
``json.dumps({"items": [asdict(i) ...], "endowments": [asdict(e) ...]}, sort_keys=True,
ensure_ascii=False)``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from econbench.coffee.paper.seed import AGENT_IDS, seed_world

WORLD_SHA256 = "b83c591a4a19848452ae4f9c0f175dd9805e89bfe04e11892f68dbec2c23e211"


def _world_json(p_res: float | None = None) -> str:
    items, endowments = seed_world(p_res=p_res)
    return json.dumps(
        {"items": [asdict(i) for i in items], "endowments": [asdict(e) for e in endowments]},
        sort_keys=True,
        ensure_ascii=False,
    )


def test_world_matches_reference() -> None:
    assert hashlib.sha256(_world_json().encode("utf-8")).hexdigest() == WORLD_SHA256


def test_world_spot_checks() -> None:
    items, endowments = seed_world()
    assert [i.id for i in items] == [
        "green_coffee_kg",
        "roasted_coffee_kg",
        "green_specialty_kg",
        "roasted_specialty_kg",
    ]
    by_id = {i.id: i for i in items}
    assert by_id["green_specialty_kg"].production_cost_per_unit == 10.0
    assert by_id["green_specialty_kg"].daily_production_cap == 10
    assert by_id["roasted_specialty_kg"].consumer_demand_base == 15.0
    assert by_id["roasted_coffee_kg"].consumer_demand_base is None
    assert [e.agent_id for e in endowments] == list(AGENT_IDS)
    roaster = endowments[2]
    assert (roaster.display_name, roaster.initial_inventory, roaster.initial_cost_basis) == (
        "Roaster A",
        {"roasted_coffee_kg": 30},
        {"roasted_coffee_kg": 5.88},
    )
    assert endowments[5].initial_retail_prices == {
        "roasted_coffee_kg": 18.0,
        "roasted_specialty_kg": 50.0,
    }
    assert endowments[0].initial_retail_prices == {}


def test_worlds_are_fresh_objects() -> None:
    """A caller mutating its world (the economy does) cannot change the next one."""
    items, endowments = seed_world()
    items[0].production_cost_per_unit = 99.0
    endowments[4].initial_retail_prices["roasted_coffee_kg"] = 1.0
    assert hashlib.sha256(_world_json().encode("utf-8")).hexdigest() == WORLD_SHA256


def test_reservation_price_override() -> None:
    """As the reference's ``economy.p_res`` override: every consumer item, nothing else."""
    items, _ = seed_world(p_res=42)
    assert [i.retail_reservation_price for i in items] == [None, 42.0, None, 42.0]
