"""The rules that keep the score from being gamed (docs/coffeebench.md §6, §8): returns undo
purchases only, per-receipt ceilings, the closing valuation and unpaid-opex line, no last-day deals,
spoilage in transit and roast output rounded on the running total.

Each test replays an attack found on the earlier rules and checks that it now earns nothing.
"""

from __future__ import annotations

import math

from test_mechanics import call, next_day, sell
from typer.testing import CliRunner

from conftest import make_world
from econbench.agents.tools import ToolCall
from econbench.coffee.config import EconomyConfig
from econbench.coffee.events import MemorySink
from econbench.coffee.metrics import run_summary
from econbench.coffee.rules.closing import economy_unit_cost
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.world import World
from econbench.runs.coffee.cli import app
from econbench.runs.coffee.config import RunConfig

GREEN, ROASTED = "green_coffee_kg", "roasted_coffee_kg"
SAFE = {"ship_loss_prob": 0.0, "ship_delay_prob": 0.0}


def fails(world: World, firm: str, name: str, **args) -> str:
    before = world.state.model_dump_json()
    result = world.toolkit(firm).call(name, args)
    assert result["status"] == "error", result
    assert world.state.model_dump_json() == before, "an error result must change nothing"
    return result["error"]


def short_of_cash(role: str, cash: float) -> EconomyConfig:
    """The default economy with one role's firms starting on ``cash`` dollars."""
    econ = EconomyConfig()
    return econ.model_copy(update={role: econ.role(role).model_copy(update={"cash": cash})})


def invoice_of(world: World, deal_id: str) -> str:
    return world.state.deals[deal_id].invoice_id


# ------------------------------------------------------------------------------ returns
def test_return_substitution_is_refused_and_earns_nothing() -> None:
    """The issue's probe: bid the ceiling, roast it, buy cheap, return 'the expensive lot'
    with the cheap kg. Before: +$585 for roaster_A from nothing. Now the expensive kg are
    gone from the pool (roasted), so nothing of that delivery can be returned."""
    world, _ = make_world(**SAFE)
    roaster = world.firm("roaster_A")
    dear = sell(world, "farmer_A", "roaster_A", GREEN, 30, 22.50)
    next_day(world)
    call(world, "roaster_A", "roast", green_item_id=GREEN, qty_kg=30)
    cheap = sell(world, "farmer_B", "roaster_A", GREEN, 30, 3.0)
    next_day(world)
    assert roaster.stock[GREEN].qty == 30 - 0  # the cheap 30 kg (spoilage aside)
    income = roaster.books.net_income
    error = fails(
        world,
        "roaster_A",
        "return_shipment",
        invoice_id=invoice_of(world, dear["deal_id"]),
        quantity_kg=30,
    )
    assert "you still hold only 0 kg of what deal" in error
    assert roaster.books.net_income == income
    # The cheap delivery itself can be returned: that undoes it, at no gain.
    held = roaster.stock[GREEN].qty
    call(
        world,
        "roaster_A",
        "return_shipment",
        invoice_id=invoice_of(world, cheap["deal_id"]),
        quantity_kg=held,
    )
    assert roaster.books.net_income == income
    assert roaster.books.writedowns == 0


def test_a_partial_return_from_a_mixed_pool_leaves_the_rest_at_its_true_cost() -> None:
    world, _ = make_world(**SAFE)
    roaster = world.firm("roaster_A")
    dear = sell(world, "farmer_A", "roaster_A", GREEN, 30, 22.50)
    sell(world, "farmer_B", "roaster_A", GREEN, 30, 3.0)
    next_day(world)
    stock = roaster.stock[GREEN]
    assert stock.qty == 60 and stock.value == 30 * 2250 + 30 * 300
    call(world, "roaster_A", "roast", green_item_id=GREEN, qty_kg=30)  # half of each lot
    assert stock.lots == {dear["deal_id"]: 15.0, "D2": 15.0}
    income = roaster.books.net_income
    inv = invoice_of(world, dear["deal_id"])
    assert "only 15 kg" in fails(
        world, "roaster_A", "return_shipment", invoice_id=inv, quantity_kg=16
    )
    call(world, "roaster_A", "return_shipment", invoice_id=inv, quantity_kg=15)
    assert roaster.books.net_income == income  # a return books no gain
    assert stock.qty == 15 and stock.value == 15 * 300  # the cheap kg, at what they cost
    assert roaster.books.writedowns >= 0


def test_returns_never_raise_income_over_a_random_day_of_trades() -> None:
    """Buy from both farms at different prices, roast, spoil, sell some on; every return the
    rules allow leaves the buyer's net income where it was (to the cent)."""
    world, _ = make_world(**SAFE)
    roaster = world.firm("roaster_A")
    deals = [
        sell(world, "farmer_A", "roaster_A", GREEN, 20, 21.0),
        sell(world, "farmer_B", "roaster_A", GREEN, 25, 2.1),
    ]
    next_day(world)
    call(world, "roaster_A", "roast", green_item_id=GREEN, qty_kg=17)
    deals.append(sell(world, "farmer_A", "roaster_A", GREEN, 9, 12.34))
    next_day(world)
    for _ in range(3):
        next_day(world)
    for deal in deals:
        inv = invoice_of(world, deal["deal_id"])
        d = world.state.deals[deal["deal_id"]]
        held = int(roaster.stock[GREEN].lots.get(d.id, 0.0) + 1e-9)
        if held == 0:
            continue
        income = roaster.books.net_income
        call(world, "roaster_A", "return_shipment", invoice_id=inv, quantity_kg=held)
        assert abs(roaster.books.net_income - income) <= 2, (deal, income)


# ---------------------------------------------------------------- the closing valuation
def _run(days: int, moves) -> World:
    """Step a world for ``days`` days; ``moves(world, day)`` trades during each day."""
    config = RunConfig(days=days, economy=EconomyConfig(**SAFE))
    world = World(config, sink=MemorySink())
    for day in range(days):
        world.start_day()
        moves(world, day)
        world.end_day()
    return world


def _nothing(world: World, day: int) -> None:
    return None


def test_a_round_trip_at_the_ceiling_earns_neither_firm_anything() -> None:
    """The issue's probe: roaster_A sells 30 kg roasted to roaster_B at $30 and buys it back
    at $30. Before: A +$723.60, B +$361.80 against doing nothing. Now: nothing."""

    def round_trip(world: World, day: int) -> None:
        if day == 1:
            sell(world, "roaster_A", "roaster_B", ROASTED, 30, 30.0)
        if day == 2:
            held = world.firm("roaster_B").stock[ROASTED].qty
            sell(world, "roaster_B", "roaster_A", ROASTED, min(30, held), 30.0)

    base, trip = _run(6, _nothing), _run(6, round_trip)
    for firm in ("roaster_A", "roaster_B"):
        gain = trip.firm(firm).books.net_income - base.firm(firm).books.net_income
        assert gain <= 5, (firm, gain)  # cents of rounding
    a = trip.firm("roaster_A").books
    assert a.net_income_before_closing > base.firm("roaster_A").books.net_income + 50_000
    assert a.closing_writedown > 50_000  # the paper profit, taken back at the close


def test_a_one_way_sale_on_long_terms_earns_the_pair_nothing() -> None:
    def sale(world: World, day: int) -> None:
        if day == 0:
            sell(world, "roaster_A", "roaster_B", ROASTED, 30, 30.0, terms=90)

    base, trip = _run(5, _nothing), _run(5, sale)
    pair = ("roaster_A", "roaster_B")
    gain = sum(trip.firm(f).books.net_income - base.firm(f).books.net_income for f in pair)
    assert gain <= 5
    assert trip.firm("roaster_A").books.net_income > base.firm("roaster_A").books.net_income


def test_the_closing_line_is_in_the_summary_the_trial_balance_and_the_last_daily_row() -> None:
    rows: list[dict] = []
    # The negotiating background leaves retailer_A holding roasted stock on day 12, which
    # is what a closing line needs.
    cfg = RunConfig(days=12, agents={"default": "negotiating", "roaster_A": "heuristic"})
    run = CoffeeRun(cfg, sink=MemorySink(), daily_sink=rows.append)
    world = run.run()
    summary = run_summary(world, {f: "scripted" for f in world.state.firms}, rows)
    retailer = summary["firms"]["retailer_A"]
    assert retailer["closing_writedown"] > 0  # it holds roasted bought above $5.88
    assert retailer["net_income"] == round(
        retailer["net_income_before_closing"]
        - retailer["closing_writedown"]
        - retailer["closing_opex"],
        2,
    )
    last = next(r for r in rows if r["day"] == 11 and r["firm"] == "retailer_A")
    assert last["closing_adjustment"] == -retailer["closing_writedown"]
    assert last["net_income_cum"] == retailer["net_income"]
    assert all(r["closing_adjustment"] == 0 for r in rows if r["day"] < 11)
    income = world.toolkit("retailer_A").view_trial_balance()["income"]
    assert income["closing_writedown"] == retailer["closing_writedown"]
    assert income["net_income"] == retailer["net_income"]
    assert income["net_income_before_closing"] == retailer["net_income_before_closing"]


def test_the_economy_cost_of_making_each_item() -> None:
    econ = EconomyConfig()
    assert economy_unit_cost(econ, GREEN) == 200
    assert economy_unit_cost(econ, "green_specialty_kg") == 1000
    assert economy_unit_cost(econ, ROASTED) == 588  # (2 + 3) / 0.85
    assert economy_unit_cost(econ, "roasted_specialty_kg") == 1829  # (10 + 5) / 0.82


def test_the_passive_floor_is_unchanged() -> None:
    config = RunConfig(agents={"default": "passive"})
    world = CoffeeRun(config).run()
    assert world.firm("roaster_A").books.net_income == -276_468
    assert world.firm("roaster_A").books.closing == 0


def test_leaving_the_market_or_ending_the_run_early_saves_no_fixed_costs() -> None:
    econ = short_of_cash("farmer", 50.0)
    world = CoffeeRun(RunConfig(days=10, agents={"default": "passive"}, economy=econ)).run()
    farmer = world.firm("farmer_A")
    assert farmer.bankrupt and farmer.bankrupt_day == 2
    assert farmer.books.opex_fixed == 3 * 2500  # days 0-2 (day 2's charge made it fail)
    assert farmer.books.closing_opex == 7 * 2500  # days 3-9, when it paid nothing
    assert world.firm("roaster_A").books.closing_opex == 0


def test_the_evaluated_firm_going_bankrupt_charges_everyone_the_rest_of_the_horizon() -> None:
    econ = short_of_cash("roaster", 40.0)
    world = CoffeeRun(RunConfig(days=20, agents={"default": "passive"}, economy=econ)).run()
    assert world.state.ended and world.day == 2  # roaster_A failed on day 1's opex
    assert world.firm("retailer_A").books.closing_opex == 18 * 5000
    assert world.firm("roaster_A").books.closing_opex == 18 * 3000


# ---------------------------------------------------------------------- edge days
def test_no_deal_can_be_made_or_accepted_when_it_could_not_be_delivered() -> None:
    world, _ = make_world(days=3, **SAFE)
    listing = call(world, "farmer_A", "post_listing", item_id=GREEN, qty=10, asking_price=3.0)
    lid = listing["listing"]["listing_id"]
    next_day(world)  # day 1: a deal now is delivered on day 2, the last day
    offer = call(world, "roaster_A", "make_offer", listing_id=lid, offered_price=3.0, qty=5)
    late = call(world, "roaster_B", "make_offer", listing_id=lid, offered_price=3.0, qty=5)
    call(world, "farmer_A", "accept_offer", offer_id=offer["offer"]["offer_id"])
    next_day(world)  # day 2, the last
    assert world.state.deals["D1"].status == "delivered"
    error = fails(world, "roaster_A", "make_offer", listing_id=lid, offered_price=3.0, qty=1)
    assert "the last day" in error and "after it ends" in error
    error = fails(world, "farmer_A", "accept_offer", offer_id=late["offer"]["offer_id"])
    assert "the last day" in error


# ---------------------------------------------------------------- spoilage in transit
def test_stock_kept_on_the_road_spoils_as_it_would_on_hand() -> None:
    """Before: two firms shipping their stock back and forth so that it is always in transit
    at 19:00 never lost a kg. Now it spoils on the road at the same rate."""

    def shuttle(world: World, day: int) -> None:
        if day == days - 1:
            return
        holder, other = ("roaster_A", "roaster_B") if day % 2 == 0 else ("roaster_B", "roaster_A")
        qty = world.firm(holder).stock[ROASTED].qty - (30 if holder == "roaster_B" else 0)
        if qty > 0:
            sell(world, holder, other, ROASTED, qty, 5.88)

    days = 40
    base, trip = _run(days, _nothing), _run(days, shuttle)
    base_kg = base.firm("roaster_A").spoiled_kg.get(ROASTED, 0)
    trip_kg = sum(trip.firm(f).spoiled_kg.get(ROASTED, 0) for f in ("roaster_A", "roaster_B"))
    base_kg += base.firm("roaster_B").spoiled_kg.get(ROASTED, 0)
    assert trip.state.counters.deal >= days - 1
    assert trip_kg >= base_kg - 1  # whole-kg rounding at most
    pair = ("roaster_A", "roaster_B")
    gain = sum(trip.firm(f).books.net_income - base.firm(f).books.net_income for f in pair)
    assert gain <= 600  # at most a kg of rounding ($5.88)
    assert any(e.get("deal_id") for e in trip.sink.events if e["type"] == "spoilage"), (
        "some spoilage must have happened on the road"
    )


# ----------------------------------------------------------------------- roasting
def test_roasting_in_small_lots_never_beats_the_yield() -> None:
    """Before: 1 kg of green roasted on its own rounded to 1 kg roasted (100 % yield)."""
    world, _ = make_world()
    roaster = world.firm("roaster_A")
    roaster.stock[GREEN].qty, roaster.stock[GREEN].value = 40, 8000
    out = green = 0
    for qty in (1, 1, 1, 1, 1, 3, 2, 1, 7, 1, 1, 2):
        result = world.toolkit("roaster_A").call("roast", {"green_item_id": GREEN, "qty_kg": qty})
        if result["status"] == "success":
            out += result["roasted_qty"]
            green += qty
        else:
            assert "adds 0 kg" in result["error"]
    assert green >= 15
    assert out == math.floor(green * 0.85 + 0.5)  # the yield of the total, however split
    assert out <= green * 0.85 + 0.5
    # A big first roast still gives what round(qty × yield) gives.
    fresh, _ = make_world()
    fresh.firm("roaster_A").stock[GREEN].qty = 50
    fresh.firm("roaster_A").stock[GREEN].value = 10_000
    assert call(fresh, "roaster_A", "roast", green_item_id=GREEN, qty_kg=50)["roasted_qty"] == 43


# ------------------------------------------------------------------------ accounting
def test_unknown_tools_are_counted_apart_from_real_ones() -> None:
    world, _ = make_world()
    world.act("roaster_A", ToolCall("hack_the_ledger", {}))
    world.act("roaster_A", ToolCall("produce_item", {"item_id": GREEN, "quantity": 1}))
    world.act("roaster_A", ToolCall("view_listings", {}))
    firm = world.firm("roaster_A")
    assert firm.tool_calls == {"view_listings": 1}
    assert firm.unknown_tool_calls == 2


def test_a_written_off_batch_says_what_and_how_much() -> None:
    econ = short_of_cash("farmer", 50.0)
    sink = MemorySink()
    world = World(RunConfig(days=5, economy=econ), sink=sink)
    world.start_day()
    call(world, "farmer_A", "produce_item", item_id=GREEN, quantity=10)
    next_day(world)
    events = [e for e in sink.events if e["type"] == "batch_written_off"]
    assert events and events[0]["item"] == GREEN and events[0]["qty"] == 10
    assert events[0]["kind"] == "production" and events[0]["value"] == 20.0


def test_headroom_compares_with_the_paper_only_for_its_90_day_economy() -> None:
    runner = CliRunner()
    paper = runner.invoke(app, ["headroom"])
    assert paper.exit_code == 0 and "The best model in the paper" in paper.output
    short = runner.invoke(app, ["headroom", "--days", "30"])
    assert short.exit_code == 0 and "The best model in the paper" not in short.output
    assert "no comparison is made" in short.output
