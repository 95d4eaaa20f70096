"""``StateJson`` writes exactly ``model_dump_json()``'s text, however the state changed.

The checkpoint of a run serialises the world through ``StateJson``, which keeps the text of
unchanged records between calls. These tests change a state in every way a rule could (and
some no rule should) and compare with pydantic's own text after each change.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable

import pytest
from pydantic_core import PydanticSerializationError

from econbench.coffee import state as state_module
from econbench.coffee.events import NullSink
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.state import (
    Books,
    ConsumerSale,
    Deal,
    Firm,
    Hidden,
    Invoice,
    Listing,
    Message,
    StateJson,
    Stock,
    WorldState,
)
from econbench.runs.coffee.config import RunConfig


def deal(n: int) -> Deal:
    return Deal(
        id=f"D{n}", seq=n, offer_id=f"O{n}", listing_id="L1", seller="farmer_A",
        buyer="roaster_A", item="green_coffee_kg", qty=10 + n, price=400 + n, terms=7, day=n,
        minute=540, reserved_value=300, ship_day=n + 1,
    )  # fmt: skip


def small_state(deals: int = 100) -> WorldState:
    firm = Firm(
        id="roaster_A", role="roaster", cash=100_000, inventory_cap=5000, opex_per_day=1000,
        stock={"green_coffee_kg": Stock(qty=5, value=50, lots={"D1": 2.5})},
        books_by_day=[Books(revenue=i) for i in range(40)],
    )  # fmt: skip
    return WorldState(
        seed=0,
        firms={"roaster_A": firm},
        listings={"L1": Listing(id="L1", seller="farmer_A", item="green_coffee_kg", qty=9,
                                price=450, terms=7, day=0, minute=540)},
        deals={f"D{n}": deal(n) for n in range(1, deals + 1)},
        invoices={"INV1": Invoice(id="INV1", issuer="farmer_A", payer="roaster_A",
                                  principal=4000, issue_day=1, due_day=8)},
        consumer_sales=[ConsumerSale(day=d, firm="retailer_A", item="x", qty=d, price=900)
                        for d in range(70)],
        hidden=Hidden(loyalty={"retailer_A": 1.0}, demand_noise={"x": [0.5, -0.25]}),
    )  # fmt: skip


def replace_deal(s: WorldState) -> None:
    s.deals["D5"] = s.deals["D5"].model_copy()


def equal_but_other_spelling(s: WorldState) -> None:
    s.deals["D6"] = s.deals["D6"].model_copy(update={"spoil_carry": -0.0})


def reorder(s: WorldState) -> None:
    s.deals["D3"] = s.deals.pop("D3")


def rename(s: WorldState) -> None:
    s.deals["D99x"] = s.deals.pop("D99")


def same_record_twice(s: WorldState) -> None:
    s.deals["D2"] = s.deals["D1"]


def move_then_change(s: WorldState) -> None:
    moved = s.deals.pop("D10")
    moved.qty = 1
    s.deals["D10"] = moved


def change_a_removed_record_then_put_it_back(s: WorldState) -> None:
    gone = s.deals.pop("D20")
    s.deals["D20b"] = deal(20)
    gone.status = "lost"
    s.deals["D20"] = gone


CHANGES: list[tuple[str, Callable[[WorldState], None]]] = [
    ("nothing", lambda s: None),
    ("a field of an old record", lambda s: setattr(s.deals["D2"], "status", "delivered")),
    ("the same value again", lambda s: setattr(s.deals["D2"], "status", "delivered")),
    ("an int where a float was", lambda s: setattr(s.deals["D7"], "spoil_carry", 0)),
    ("a float that reads like the int", lambda s: setattr(s.deals["D7"], "spoil_carry", 0.0)),
    ("minus zero", lambda s: setattr(s.deals["D7"], "spoil_carry", -0.0)),
    ("a record replaced by its copy", replace_deal),
    ("a record replaced by an equal one spelt otherwise", equal_but_other_spelling),
    ("a new record", lambda s: s.deals.update({"D200": deal(200)})),
    ("a record removed", lambda s: s.deals.pop("D50")),
    ("a record moved to the end", reorder),
    ("a key renamed", rename),
    ("one record under two keys", same_record_twice),
    ("a record moved and changed", move_then_change),
    ("a record changed while out of the state", change_a_removed_record_then_put_it_back),
    ("a day's books appended", lambda s: s.firms["roaster_A"].books_by_day.append(Books(cogs=3))),
    ("a past day's books changed", lambda s: setattr(s.firms["roaster_A"].books_by_day[3],
                                                     "revenue", -7)),
    ("the books in place", lambda s: setattr(s.firms["roaster_A"].books, "cogs", 11)),
    ("a nested dict (not a record)", lambda s: s.firms["roaster_A"].stock["green_coffee_kg"]
     .lots.update({"D2": 1.5})),
    ("a list element replaced", lambda s: s.consumer_sales.__setitem__(
        5, ConsumerSale(day=5, firm="retailer_B", item="x", qty=1, price=1))),
    ("a list element removed", lambda s: s.consumer_sales.pop(0)),
    ("a message with text to escape", lambda s: s.messages.update({"M1": Message(
        id="M1", sender="a", recipient="b", title='"quoted" \\ é', body="line\nnext\t☕",
        day=1, minute=600)})),
    ("a whole collection replaced", lambda s: setattr(s, "deals", dict(reversed(
        list(s.deals.items()))))),
    ("the whole firm replaced", lambda s: s.firms.update(
        {"roaster_A": s.firms["roaster_A"].model_copy(deep=True)})),
    ("plain fields", lambda s: (setattr(s, "day", 3), setattr(s.counters, "deal", 9))),
]  # fmt: skip


def test_every_change_gives_pydantics_text() -> None:
    state = small_state()
    encode = StateJson()
    assert encode(state) == state.model_dump_json()
    for label, change in CHANGES:
        change(state)
        assert encode(state) == state.model_dump_json(), label
        assert encode(state) == state.model_dump_json(), f"{label} (called again)"


def test_two_encoders_of_one_state_each_see_every_change() -> None:
    state = small_state()
    first, second = StateJson(), StateJson()
    for label, change in CHANGES:
        change(state)
        assert first(state) == state.model_dump_json(), label
        if len(label) % 2:  # the second one skips some calls: changes pile up for it
            assert second(state) == state.model_dump_json(), label
    assert second(state) == state.model_dump_json()


def test_a_value_of_another_type_falls_back_to_pydantic() -> None:
    state = small_state()
    encode = StateJson()
    encode(state)
    state.deals["D4"] = {"not": "a deal"}  # type: ignore[assignment]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns about the dict
        assert encode(state) == state.model_dump_json()
    del state.deals["D4"]
    assert encode(state) == state.model_dump_json()


def test_a_lone_surrogate_fails_as_pydantic_fails_and_leaves_nothing_stale() -> None:
    state = small_state()
    encode = StateJson()
    encode(state)
    state.messages["M1"] = Message(
        id="M1", sender="a", recipient="b", title="t", body="\ud83d", day=1, minute=600
    )
    with pytest.raises(PydanticSerializationError):
        state.model_dump_json()
    with pytest.raises(PydanticSerializationError):
        encode(state)
    state.messages["M1"].body = "fine"
    state.deals["D1"].qty = 77
    assert encode(state) == state.model_dump_json()


def test_an_encoder_that_is_gone_stops_watching() -> None:
    gc.collect()  # encoders of earlier tests, waiting in reference cycles, go first
    before = len(state_module._watches)
    encode = StateJson()
    encode(small_state(deals=5))
    assert len(state_module._watches) == before + 1
    del encode
    gc.collect()
    assert len(state_module._watches) == before


@pytest.mark.parametrize("agents", ["scripted", "negotiating"])
def test_state_json_writes_pydantics_text_every_day(agents: str) -> None:
    encode = StateJson()
    days: list[int] = []
    config = RunConfig(seed=3, days=25, agents={"default": agents})
    run = CoffeeRun(config, sink=NullSink())

    def check(day: int) -> None:
        assert encode(run.world.state) == run.world.state.model_dump_json(), day
        days.append(day)

    run.run(on_day=check)
    assert days == list(range(1, 26))
    assert encode(run.world.state) == run.world.state.model_dump_json()


def test_a_scripted_run_checkpoints_every_30th_day_and_its_last() -> None:
    """No model plays, so a day costs milliseconds to redo (SCRIPTED_DAYS_PER_CHECKPOINT)."""
    days: list[int] = []
    run = CoffeeRun(
        RunConfig(seed=3, days=65),
        sink=NullSink(),
        on_checkpoint=lambda r: days.append(r.world.day),
    )
    run.run()
    assert days == [30, 60, 65]
