"""Mechanics of docs/coffeebench.md §2, §5, §6, §8 and §9 through the tools and the phases."""

from __future__ import annotations

from collections import Counter

import pytest

from conftest import FnPolicy, make_world
from econbench.agents.tools import ToolCall
from econbench.coffee.config import EconomyConfig, RoleConfig
from econbench.coffee.events import MemorySink
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.world import World, shipping_outcome
from econbench.runs.coffee.config import RunConfig


def call(world: World, firm: str, name: str, **args):
    result = world.toolkit(firm).call(name, args)
    assert result["status"] == "success", result
    return result


def next_day(world: World) -> None:
    world.end_day()
    world.start_day()


def sell(world: World, seller: str, buyer: str, item: str, qty: int, price: float, terms=30):
    listing = call(world, seller, "post_listing", item_id=item, qty=qty, asking_price=price)
    offer = call(
        world,
        buyer,
        "make_offer",
        listing_id=listing["listing"]["listing_id"],
        offered_price=price,
        qty=qty,
        payment_terms_days=terms,
    )
    return call(world, seller, "accept_offer", offer_id=offer["offer"]["offer_id"])["deal"]


def test_shipping_risk_frequencies() -> None:
    econ = EconomyConfig()
    n = 40_000
    counts = Counter(shipping_outcome(7, seq, 3, econ) for seq in range(1, n + 1))
    for outcome, p in (("lost", 0.015), ("delayed", 0.07)):
        sd = (p * (1 - p) / n) ** 0.5
        assert abs(counts[outcome] / n - p) < 4 * sd, (outcome, counts[outcome] / n)


def test_a_delayed_shipment_redraws_and_a_lost_one_is_written_off() -> None:
    world, _sink = make_world(ship_loss_prob=0.0, ship_delay_prob=1.0)
    deal = sell(world, "farmer_A", "roaster_A", "green_coffee_kg", 10, 3.0)
    next_day(world)
    assert world.state.deals[deal["deal_id"]].status == "delayed"
    assert world.state.deals[deal["deal_id"]].ship_day == world.day + 1
    world.econ.ship_delay_prob = 0.0
    world.econ.ship_loss_prob = 1.0
    cost = world.state.deals[deal["deal_id"]].reserved_value
    next_day(world)
    assert world.state.deals[deal["deal_id"]].status == "lost"
    assert world.firm("farmer_A").books.shipment_writeoffs == cost == 2000
    assert not world.state.invoices, "a lost shipment is never invoiced"
    obs = world.observe("roaster_A")
    assert any("lost in transit" in n for n in obs["notices"])
    assert world.firm("roaster_A").stock["green_coffee_kg"].qty == 0


def test_delivery_issues_an_invoice_with_net_terms_and_weighted_average_cost() -> None:
    world, _ = make_world(ship_loss_prob=0.0, ship_delay_prob=0.0)
    sell(world, "farmer_A", "retailer_A", "green_coffee_kg", 10, 4.0, terms=7)
    next_day(world)
    inv = next(iter(world.state.invoices.values()))
    assert (inv.issuer, inv.payer, inv.principal) == ("farmer_A", "retailer_A", 4000)
    assert (inv.issue_day, inv.due_day) == (1, 8)
    farmer = world.firm("farmer_A")
    assert farmer.books.revenue == 4000 and farmer.books.cogs == 2000
    # Retailer: 25 kg @ $10 + 10 kg @ $4 of another item; the green is its own average.
    assert world.firm("retailer_A").stock["green_coffee_kg"].value == 4000


def test_late_fees_accrue_daily_on_outstanding_principal_after_the_due_day() -> None:
    world, _ = make_world(ship_loss_prob=0.0, ship_delay_prob=0.0)
    sell(world, "farmer_A", "roaster_A", "green_coffee_kg", 50, 3.0, terms=0)
    next_day(world)  # delivered day 1, due day 1
    inv = next(iter(world.state.invoices.values()))
    world.end_day()  # day 1 evening: not yet past due
    assert inv.fees == 0
    world.start_day()
    world.end_day()  # day 2 evening: 0.1 % of $150
    world.start_day()
    world.end_day()
    assert inv.fees == 2 * 15  # cents, simple interest, not compounding
    assert world.firm("farmer_A").books.interest_income == 30
    assert world.firm("roaster_A").books.interest_expense == 30
    world.start_day()
    cash = world.firm("roaster_A").cash
    call(world, "roaster_A", "pay_invoice", invoice_id=inv.id)
    assert world.firm("roaster_A").cash == cash - 15030
    assert inv.status == "paid"


def test_returns_credit_the_deal_price_and_restock_the_seller_at_its_cost() -> None:
    world, _ = make_world(ship_loss_prob=0.0, ship_delay_prob=0.0)
    sell(world, "roaster_A", "retailer_A", "roasted_coffee_kg", 10, 9.0)
    next_day(world)
    inv = next(iter(world.state.invoices.values()))
    seller = world.firm("roaster_A")
    before = seller.stock["roasted_coffee_kg"].qty
    result = call(world, "retailer_A", "return_shipment", invoice_id=inv.id, quantity_kg=4)
    assert result["credit"] == 36.0
    assert inv.credits == 3600 and inv.outstanding == 5400
    assert seller.books.returns == 3600
    assert seller.stock["roasted_coffee_kg"].qty == before + 4
    assert seller.books.cogs == 6 * 588  # 10 kg at $5.88 booked, 4 kg reversed
    # Returning the rest closes the invoice.
    call(world, "retailer_A", "return_shipment", invoice_id=inv.id, quantity_kg=6)
    assert inv.status == "closed"


def test_a_paid_return_becomes_a_refund_invoice() -> None:
    world, _ = make_world(ship_loss_prob=0.0, ship_delay_prob=0.0)
    sell(world, "roaster_A", "retailer_A", "roasted_coffee_kg", 10, 9.0)
    next_day(world)
    inv = next(iter(world.state.invoices.values()))
    call(world, "retailer_A", "pay_invoice", invoice_id=inv.id)
    result = call(world, "retailer_A", "return_shipment", invoice_id=inv.id, quantity_kg=2)
    refund = world.state.invoices[result["refund_invoice_id"]]
    assert (refund.issuer, refund.payer, refund.principal) == ("retailer_A", "roaster_A", 1800)


def test_b2b_prices_above_the_ceiling_are_refused_with_the_ceiling_named() -> None:
    world, _ = make_world(ship_loss_prob=0.0, ship_delay_prob=0.0)
    result = world.toolkit("farmer_A").call(
        "post_listing", {"item_id": "green_coffee_kg", "qty": 10, "asking_price": 22.51}
    )
    assert result["status"] == "error" and "ceiling of $22.50/kg" in result["error"]
    listing = call(
        world, "farmer_A", "post_listing", item_id="green_coffee_kg", qty=10, asking_price=22.5
    )
    offer = world.toolkit("roaster_A").call(
        "make_offer",
        {"listing_id": listing["listing"]["listing_id"], "offered_price": 400.0, "qty": 10},
    )
    assert offer["status"] == "error" and "ceiling of $22.50/kg" in offer["error"]


def test_the_write_down_applies_to_each_receipt_before_it_is_pooled() -> None:
    world, _ = make_world()
    roaster = world.firm("roaster_A")
    # 30 kg roasted at $5.88 already held; 2 kg come in at $400/kg (e.g. a lowered ceiling).
    world.add_stock(roaster, "roasted_coffee_kg", 2, 80_000, why="purchase")
    stock = roaster.stock["roasted_coffee_kg"]
    assert stock.value == 30 * 588 + 2 * 3000
    assert roaster.books.writedowns == 80_000 - 2 * 3000


def test_production_lands_after_the_lag_and_roasting_next_morning() -> None:
    world, _ = make_world()
    call(world, "farmer_A", "produce_item", item_id="green_specialty_kg", quantity=10)
    assert world.firm("farmer_A").cash == 1_500_000 - 2_500 - 10_000  # opex, then 10 kg @ $10
    next_day(world)
    assert world.firm("farmer_A").stock["green_specialty_kg"].qty == 0
    next_day(world)
    assert world.firm("farmer_A").stock["green_specialty_kg"].qty == 10
    roaster = world.firm("roaster_A")
    roaster.stock["green_coffee_kg"].qty, roaster.stock["green_coffee_kg"].value = 20, 4000
    result = call(world, "roaster_A", "roast", green_item_id="green_coffee_kg", qty_kg=20)
    assert result["roasted_qty"] == 17  # round(20 × 0.85)
    next_day(world)
    stock = roaster.stock["roasted_coffee_kg"]
    assert stock.qty == 30 + 17
    assert stock.value == 30 * 588 + 4000 + 6000


def test_spoilage_carries_fractions_to_the_next_day() -> None:
    world, _ = make_world()
    # 60 kg green at 0.5 %: 0.3 kg a day → nothing, nothing, nothing, then 1 kg on day 3.
    spoiled = []
    for _ in range(4):
        world.end_day()
        spoiled.append(60 - world.firm("farmer_A").stock["green_coffee_kg"].qty)
        world.start_day()
    assert spoiled == [0, 0, 0, 1]


def _borrow_then_never_pay(firm_id, feedback, step):
    if feedback.observation is not None and feedback.observation["day"] == 0 and step == 1:
        return ToolCall("view_listings", {"item_id": "green_coffee_kg"})
    if feedback.result is not None and "listings" in feedback.result:
        if not feedback.result["listings"]:
            return ToolCall("view_listings", {"item_id": "green_coffee_kg"})
        lst = feedback.result["listings"][0]
        return ToolCall(
            "make_offer", {"listing_id": lst["listing_id"], "offered_price": 3.0, "qty": 30}
        )
    return ToolCall("wait_for_next_day")


def _poor(role: str, cash: float) -> RoleConfig:
    base = EconomyConfig().role(role)
    return base.model_copy(update={"cash": cash})


def test_bankruptcy_removes_the_firm_books_bad_debt_and_ends_the_run_for_roaster_a() -> None:
    econ = EconomyConfig(roaster=_poor("roaster", 100.0), ship_loss_prob=0.0, ship_delay_prob=0.0)
    config = RunConfig(days=30, agents={"default": "scripted"}, economy=econ)
    sink = MemorySink()
    daily: list[dict] = []
    run = CoffeeRun(
        config,
        sink=sink,
        daily_sink=daily.append,
        policies={"roaster_A": FnPolicy(_borrow_then_never_pay)},
    )
    world = run.run()
    roaster = world.firm("roaster_A")
    # $100 − $30 opex a day: 70, 40, 10, then −20 on the morning of day 3.
    assert roaster.bankrupt and roaster.bankrupt_day == 3
    assert world.state.day == 4, "the run ends after the day of the bankruptcy"
    assert {r["day"] for r in daily if r["firm"] == "roaster_A"} == {0, 1, 2, 3}
    seller = next(d.seller for d in world.state.deals.values() if d.buyer == "roaster_A")
    assert world.firm(seller).books.bad_debt == 9000
    assert all(
        i.status == "bad_debt" for i in world.state.invoices.values() if i.payer == "roaster_A"
    )
    # roaster_B has the same $100 endowment and fails the same morning.
    assert [e["firm"] for e in sink.events if e["type"] == "bankruptcy"] == [
        "roaster_A",
        "roaster_B",
    ]
    assert not any(
        e["type"] == "tool_call" and e["firm"] == "roaster_A" and e["day"] >= 3 for e in sink.events
    )


def test_a_background_bankruptcy_does_not_end_the_run() -> None:
    econ = EconomyConfig(retailer=_poor("retailer", 10.0))
    config = RunConfig(days=6, economy=econ)
    world = CoffeeRun(config).run()
    assert world.firm("retailer_A").bankrupt and world.firm("retailer_B").bankrupt
    assert world.state.day == 6 and not world.state.ended
    assert world.firm("retailer_A").bankrupt_day == 0
    assert world.state.consumer_sales == [], "a bankrupt shop sells nothing"


@pytest.mark.parametrize("firm", ["farmer_A", "retailer_B"])
def test_opex_is_charged_every_morning(firm) -> None:
    world, _ = make_world()
    opex = world.firm(firm).opex_per_day
    assert world.firm(firm).cash == 1_500_000 - opex
    next_day(world)
    assert world.firm(firm).books.opex_fixed == 2 * opex
