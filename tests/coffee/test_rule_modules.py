"""The rule modules of ``coffee/rules/`` applied on their own, without the tools or a day.

Each rule is a function of the world; these tests call one directly on a small world and
check what it books and logs (docs/coffeebench.md §2, §5, §6, §8, §9, §10).
"""

from __future__ import annotations

import pytest

from conftest import make_world
from econbench.coffee import observation
from econbench.coffee.rules import (
    bankruptcy,
    invoices,
    late_fees,
    ledger,
    production,
    roasting,
    shipping,
)
from econbench.coffee.state import Books, Invoice, Listing, Offer
from econbench.coffee.world import World


def open_deal(world: World, seller: str, buyer: str, item: str, qty: int, price: int):
    """A deal put straight on the road by ``shipping.dispatch``, as ``accept_offer`` does."""
    listing = Listing(
        id="L1", seller=seller, item=item, qty=qty, price=price, terms=0, day=0, minute=540
    )
    world.add_listing(listing)
    offer = Offer(
        id="O1",
        listing_id="L1",
        buyer=buyer,
        seller=seller,
        item=item,
        qty=qty,
        price=price,
        terms=0,
        day=0,
        minute=540,
    )
    world.add_offer(offer)
    return shipping.dispatch(world, world.firm(seller), offer, listing), listing, offer


def test_dispatch_reserves_the_goods_and_delivery_books_the_sale_and_the_invoice() -> None:
    world, sink = make_world(ship_loss_prob=0.0, ship_delay_prob=0.0)
    farmer = world.firm("farmer_A")
    held = farmer.stock["green_coffee_kg"].qty
    deal, listing, offer = open_deal(world, "farmer_A", "roaster_A", "green_coffee_kg", 10, 400)
    assert (offer.status, listing.qty) == ("accepted", 0)
    assert farmer.stock["green_coffee_kg"].qty == held - 10 and deal.reserved_value == 2000
    assert world.balance_sheet("farmer_A")["in_transit"] == 2000
    world.state.day = deal.ship_day
    shipping.process_due(world)
    invoice = world.state.invoices[deal.invoice_id]
    assert (deal.status, invoice.principal, invoice.due_day) == ("delivered", 4000, deal.ship_day)
    assert (farmer.books.revenue, farmer.books.cogs) == (4000, 2000)
    assert world.firm("roaster_A").stock["green_coffee_kg"].qty == 10
    assert [e["type"] for e in sink.events[-2:]] == ["delivery", "invoice"]


@pytest.mark.parametrize(
    ("loss", "delay", "status", "event"),
    [(1.0, 0.0, "lost", "shipment_lost"), (0.0, 1.0, "delayed", "shipment_delayed")],
)
def test_a_due_shipment_is_lost_or_delayed_by_its_roll(loss, delay, status, event) -> None:
    world, sink = make_world(ship_loss_prob=loss, ship_delay_prob=delay)
    deal, _, _ = open_deal(world, "farmer_A", "roaster_A", "green_coffee_kg", 10, 400)
    world.state.day = deal.ship_day
    shipping.process_due(world)
    assert deal.status == status and sink.events[-1]["type"] == event
    assert not world.state.invoices
    writeoff = world.firm("farmer_A").books.shipment_writeoffs
    assert writeoff == (2000 if status == "lost" else 0)
    assert deal.ship_day == (world.day + 1 if status == "delayed" else world.day)


def test_the_world_re_exports_the_one_shipping_roll() -> None:
    from econbench.coffee.world import shipping_outcome

    assert shipping_outcome is shipping.shipping_outcome


def test_the_income_statement_lays_out_the_one_formula_of_books() -> None:
    books = Books(
        revenue=10_000,
        returns=500,
        cogs=4_000,
        opex_fixed=1_000,
        spoilage=30,
        shipment_writeoffs=20,
        production_writeoffs=10,
        bad_debt=200,
        writedowns=40,
        interest_expense=7,
        interest_income=3,
        closing_writedown=100,
        closing_opex=50,
    )
    lines = ledger.income_statement(books)
    assert lines["opex_total"] == pytest.approx(sum(lines["opex"].values()))
    by_hand = (
        lines["net_revenue"]
        - lines["cogs"]
        - lines["opex_total"]
        - lines["interest_expense"]
        + lines["interest_income"]
        - lines["closing_writedown"]
        - lines["closing_opex"]
    )
    assert lines["net_income"] == pytest.approx(by_hand) == books.net_income / 100
    assert lines["net_income"] == 10_000 / 100 - 5 - 40 - 13 - 0.07 + 0.03 - 1.5


def test_period_books_are_the_differences_of_the_day_start_books() -> None:
    world, _ = make_world()
    firm = world.firm("roaster_A")
    assert ledger.period_books(firm, "yesterday") is None  # one day start only
    world.end_day()
    world.start_day()
    yesterday = ledger.period_books(firm, "yesterday")
    assert yesterday is not None and yesterday.opex_fixed == firm.opex_per_day
    assert ledger.period_books(firm, "today").opex_fixed == firm.opex_per_day
    assert ledger.period_books(firm, "current").opex_fixed == 2 * firm.opex_per_day


def test_a_receipt_above_the_ceiling_is_written_down_before_it_joins_the_pool() -> None:
    world, sink = make_world()
    firm = world.firm("retailer_A")
    booked = ledger.write_down_to_ceiling(world, firm, "green_coffee_kg", 2, 10_000, "purchase")
    assert booked == 2 * 2250 and firm.books.writedowns == 10_000 - 4500
    assert sink.events[-1]["type"] == "writedown" and sink.events[-1]["cause"] == "purchase"
    assert ledger.write_down_to_ceiling(world, firm, "green_coffee_kg", 2, 4500, "x") == 4500


def overdue_invoice(world: World, due_day: int = 0) -> Invoice:
    invoice = Invoice(
        id="INV1",
        deal_id=None,
        issuer="farmer_A",
        payer="roaster_A",
        item="green_coffee_kg",
        qty=50,
        price=300,
        principal=15_000,
        issue_day=0,
        due_day=due_day,
    )
    world.add_invoice(invoice)
    return invoice


def test_late_fees_charge_overdue_invoices_only_and_never_a_bankrupt_party() -> None:
    world, _ = make_world()
    invoice = overdue_invoice(world)
    late_fees.apply(world)  # day 0: due today, not late
    assert invoice.fees == 0
    world.state.day = 1
    late_fees.apply(world)
    assert invoice.fees == 15 and world.firm("roaster_A").books.interest_expense == 15
    assert world.firm("farmer_A").books.interest_income == 15
    world.firm("farmer_A").bankrupt = True
    late_fees.apply(world)
    assert invoice.fees == 15


def test_paying_moves_the_outstanding_amount_and_settles_the_invoice() -> None:
    world, sink = make_world()
    invoice = overdue_invoice(world, due_day=5)
    payer, issuer = world.firm("roaster_A"), world.firm("farmer_A")
    cash = (payer.cash, issuer.cash)
    invoices.pay(world, payer, invoice)
    assert (payer.cash, issuer.cash) == (cash[0] - 15_000, cash[1] + 15_000)
    assert invoice.status == "paid" and "INV1" not in world.open_invoices
    assert sink.events[-1]["type"] == "payment"


def test_a_harvest_is_paid_now_and_lands_at_its_cost_after_the_lag() -> None:
    world, _ = make_world()
    farm = world.firm("farmer_A")
    cash, held = farm.cash, farm.stock["green_specialty_kg"].qty
    batch = production.produce(world, farm, "green_specialty_kg", 10)
    cost = production.harvest_cost(world, "green_specialty_kg", 10)
    assert farm.cash == cash - cost and world.balance_sheet("farmer_A")["work_in_process"] == cost
    production.land_batches(world)  # not ready yet
    assert batch.id in world.state.batches
    world.state.day = batch.ready_day
    production.land_batches(world)
    assert batch.id not in world.state.batches
    assert farm.stock["green_specialty_kg"].qty == held + 10


def test_a_roast_pays_labour_and_carries_green_cost_plus_labour() -> None:
    world, _ = make_world()
    roaster = world.firm("roaster_A")
    roaster.stock["green_coffee_kg"].qty, roaster.stock["green_coffee_kg"].value = 100, 20_000
    out = roasting.roast_output(roaster, "green_coffee_kg", 100, 0.85)
    labour = roasting.labour_cost(world, "green_coffee_kg", 100)
    cash = roaster.cash
    batch = roasting.start_roast(world, roaster, "green_coffee_kg", 100, out)
    assert (batch.item, batch.qty, batch.value) == ("roasted_coffee_kg", out, 20_000 + labour)
    assert roaster.cash == cash - labour and roaster.roasted_today_kg == 100
    assert roaster.stock["green_coffee_kg"].qty == 0


def test_bankruptcy_cancels_deals_writes_off_batches_and_books_bad_debt() -> None:
    world, sink = make_world()
    deal, _, _ = open_deal(world, "farmer_A", "roaster_A", "green_coffee_kg", 10, 400)
    overdue_invoice(world)
    roaster = world.firm("roaster_A")
    roaster.stock["green_coffee_kg"].qty, roaster.stock["green_coffee_kg"].value = 10, 2000
    batch = roasting.start_roast(world, roaster, "green_coffee_kg", 10, 9)
    roaster.cash = -1
    bankruptcy.apply(world)
    assert roaster.bankrupt and deal.status == "cancelled"
    assert batch.id not in world.state.batches
    assert roaster.books.production_writeoffs == batch.value
    assert world.firm("farmer_A").books.bad_debt == 15_000
    assert world.firm("farmer_A").stock["green_coffee_kg"].qty >= 10  # the goods came back
    assert sink.events[-1]["type"] == "bankruptcy"
    assert any("roaster_A went bankrupt" in n for n in world.firm("farmer_B").notices)


def test_the_observation_marks_deals_seen_and_hides_the_sellers_cost() -> None:
    world, _ = make_world()
    deal, _, _ = open_deal(world, "farmer_A", "roaster_A", "green_coffee_kg", 10, 400)
    obs = observation.observe(world, "roaster_A")
    assert [d["deal_id"] for d in obs["new_deals"]] == [deal.id]
    assert obs["new_deals"][0]["role"] == "buyer" and "reserved_value" not in obs["new_deals"][0]
    assert obs["stock"]["green_coffee_kg"]["inbound"] == 10
    assert observation.observe(world, "roaster_A")["new_deals"] == []
    assert observation.hhmm(9 * 60 + 5) == "09:05"
