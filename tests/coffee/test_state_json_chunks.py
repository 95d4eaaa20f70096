"""``StateJson``'s shortcuts: a chunk that only grew keeps its text, and a dict key that
needs no escape is only quoted — each still gives pydantic's own bytes."""

from __future__ import annotations

import pytest
from pydantic_core import to_json

from econbench.coffee import state as state_module
from econbench.coffee.state import Books, ConsumerSale, Deal, Hidden, StateJson, WorldState


def deal(n: int) -> Deal:
    return Deal(
        id=f"D{n}", seq=n, offer_id=f"O{n}", listing_id="L1", seller="farmer_A",
        buyer="roaster_A", item="green_coffee_kg", qty=n, price=400, terms=7, day=n,
        minute=540, reserved_value=300, ship_day=n + 1,
    )  # fmt: skip


def state(deals: int) -> WorldState:
    return WorldState(
        seed=0,
        firms={},
        deals={f"D{n}": deal(n) for n in range(deals)},
        consumer_sales=[ConsumerSale(day=d, firm="r", item="x", qty=d, price=9) for d in range(5)],
        hidden=Hidden(loyalty={}, demand_noise={}),
    )


@pytest.mark.parametrize("kept", [1, 5, StateJson.CHUNK - 1, StateJson.CHUNK + 3])
def test_a_growing_collection_gives_pydantics_text(kept: int) -> None:
    world = state(kept)
    encode = StateJson()
    assert encode(world) == world.model_dump_json()
    for n in range(kept, kept + 2 * StateJson.CHUNK + 1, 3):
        world.deals[f"D{n}"] = deal(n)
        world.consumer_sales.append(ConsumerSale(day=n, firm="r", item="x", qty=n, price=9))
        assert encode(world) == world.model_dump_json(), n


def test_a_grown_chunk_whose_old_part_changed_gives_pydantics_text() -> None:
    world = state(4)
    encode = StateJson()
    encode(world)
    world.deals["D1"].status = "delivered"  # in the part the chunk held
    world.deals["D4"] = deal(4)
    assert encode(world) == world.model_dump_json()
    world.deals["D5"] = deal(5)
    world.deals["D0"] = deal(0)  # an equal copy in place of a held record: not the same one
    assert encode(world) == world.model_dump_json()
    world.deals["D0"].qty = 99  # the copy is watched from now on
    assert encode(world) == world.model_dump_json()


def test_a_grown_chunk_whose_keys_changed_gives_pydantics_text() -> None:
    world = state(3)
    encode = StateJson()
    encode(world)
    records = list(world.deals.values())
    world.deals = {"X0": records[0], "D1": records[1], "D2": records[2], "D3": deal(3)}
    assert encode(world) == world.model_dump_json()


def test_records_appended_to_a_firms_books_give_pydantics_text() -> None:
    from econbench.coffee.state import Firm

    world = state(2)
    world.firms["a"] = Firm(id="a", role="farmer", cash=1, stock={}, inventory_cap=1,
                            opex_per_day=1)  # fmt: skip
    encode = StateJson()
    for day in range(40):
        world.firms["a"].books_by_day.append(Books(revenue=day))
        world.firms["a"].books.revenue += 1
        assert encode(world) == world.model_dump_json(), day


@pytest.mark.parametrize(
    "key", [chr(c) for c in range(128)] + ["D12", "roaster_A", "a/b", "é", "☕", "x\u2028y", ""]
)
def test_a_key_is_written_as_pydantic_writes_it(key: str) -> None:
    assert state_module._key_json(key) == to_json(key).decode()
