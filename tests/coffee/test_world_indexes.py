"""The world's per-firm indexes (offers, deals, open invoices) and the consumer-sales tail
always equal a scan of the state, day by day and after a restore from JSON.

Tools and observations read these indexes instead of scanning every record; a stale or
misordered index would change what an agent sees."""

from __future__ import annotations

import pytest

from econbench.coffee.observation import offer_view, sales_since
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.state import Invoice, WorldState, total_outstanding
from econbench.coffee.world import World
from econbench.runs.coffee.config import RunConfig


def scanned(world: World) -> dict[str, object]:
    """Every index, as a scan of the state gives it (the order of the state's collections)."""
    s = world.state
    out: dict[str, object] = {}
    for f in s.firms:
        out[f"offers {f}"] = [o.id for o in s.offers.values() if f in (o.buyer, o.seller)]
        out[f"offers in {f}"] = [o.id for o in s.offers.values() if o.seller == f]
        out[f"offers out {f}"] = [o.id for o in s.offers.values() if o.buyer == f]
        out[f"deals {f}"] = [d.id for d in s.deals.values() if f in (d.buyer, d.seller)]
        opened = [i for i in s.invoices.values() if i.status == "open"]
        out[f"receivables {f}"] = [i.id for i in opened if i.issuer == f]
        out[f"payables {f}"] = [i.id for i in opened if i.payer == f]
        out[f"firm {f}"] = id(s.firms[f])
    for first in (s.day - 8, s.day - 1, s.day, 0):
        out[f"sales {first}"] = [id(x) for x in s.consumer_sales if x.day >= first]
    return out


def indexed(world: World) -> dict[str, object]:
    s = world.state
    out: dict[str, object] = {}
    for f in s.firms:
        out[f"offers {f}"] = [o.id for o in world.offers_of(f)]
        out[f"offers in {f}"] = [o.id for o in world.offers_of(f, "incoming")]
        out[f"offers out {f}"] = [o.id for o in world.offers_of(f, "outgoing")]
        out[f"deals {f}"] = [d.id for d in world.deals_of(f)]
        out[f"receivables {f}"] = [i.id for i in world.receivables(f)]
        out[f"payables {f}"] = [i.id for i in world.payables(f)]
        out[f"firm {f}"] = id(world.firm(f))
    for first in (s.day - 8, s.day - 1, s.day, 0):
        out[f"sales {first}"] = [id(x) for x in sales_since(world, first)]
    return out


@pytest.mark.parametrize("agents", [{"default": "scripted"}, {"default": "negotiating"}])
def test_indexes_follow_the_state_and_survive_a_restore(agents: dict[str, str]) -> None:
    sim = CoffeeRun(RunConfig(seed=3, days=30, agents=agents))
    checked = 0
    while not sim.finished:
        sim.step_day()
        world = sim.world
        assert indexed(world) == scanned(world)
        checked += 1
        if checked % 10 == 0:
            copy = WorldState.model_validate_json(world.state.model_dump_json())
            world.restore(copy, world.now)
            assert indexed(world) == scanned(world)
    assert checked == 30
    state = sim.world.state
    assert state.offers and state.deals and state.invoices  # the run traded: indexes were used


def view_offers_by_scan(world: World, firm_id: str, direction: str, limit: int) -> dict:
    """``view_offers`` as a scan and sort of every offer (the definition it must match)."""
    offers = [
        o
        for o in world.state.offers.values()
        if (direction in ("incoming", "all") and o.seller == firm_id)
        or (direction in ("outgoing", "all") and o.buyer == firm_id)
    ]
    offers.sort(key=lambda o: (o.status != "pending", -int(o.id[1:])))
    return {
        "status": "success",
        "offers": [offer_view(o) for o in offers[:limit]],
        "pending": sum(1 for o in offers if o.status == "pending"),
        "total": len(offers),
    }


@pytest.mark.parametrize("agents", [{"default": "scripted"}, {"default": "negotiating"}])
def test_view_offers_equals_a_scan_of_every_offer(agents: dict[str, str]) -> None:
    sim = CoffeeRun(RunConfig(seed=5, days=25, agents=agents))
    pending_seen = 0
    while not sim.finished:
        sim.step_day()
        world = sim.world
        for firm_id in world.state.firms:
            for direction in ("incoming", "outgoing", "all"):
                for limit in (1, 2, 5, 20, 100):
                    got = world.toolkit(firm_id).call(
                        "view_offers", {"direction": direction, "limit": limit}
                    )
                    assert got == view_offers_by_scan(world, firm_id, direction, limit)
                    pending_seen += got["pending"]
    assert pending_seen > 0


def test_ready_firms_are_the_firms_that_can_act(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = CoffeeRun(RunConfig(seed=1, days=4, agents={"default": "scripted"}))
    world, sizes = sim.world, []
    ready_firms = world.ready_firms

    def checked() -> list:
        ready = ready_firms()
        assert ready == [f for f in world.state.firms.values() if world.can_act(f)]
        sizes.append(len(ready))
        return ready

    monkeypatch.setattr(world, "ready_firms", checked)
    sim.run()
    assert 0 in sizes and max(sizes) == len(world.state.firms)


def test_total_outstanding_is_the_sum_of_outstanding() -> None:
    """``total_outstanding`` (the balance sheet's AR and AP) applies ``Invoice.outstanding``
    field by field; over a whole run, with fees and credits, both give the same cents."""
    sim = CoffeeRun(RunConfig(seed=3, days=30, agents={"default": "negotiating"}))
    sums = 0
    while not sim.finished:
        sim.step_day()
        world = sim.world
        invoices = list(world.state.invoices.values())
        assert total_outstanding(invoices) == sum(i.outstanding for i in invoices)
        for f in world.state.firms:
            for mine in (world.receivables(f), world.payables(f)):
                assert total_outstanding(mine) == sum(i.outstanding for i in mine)
                sums += len(mine)
    assert sums > 0
    with_fees_and_credits = [
        Invoice(
            id=f"INV{n}",
            issuer="farmer_A",
            payer="roaster_A",
            principal=p,
            fees=fee,
            credits=credit,
            issue_day=0,
            due_day=30,
        )
        for n, (p, fee, credit) in enumerate([(1000, 0, 0), (2500, 37, 0), (900, 12, 400)])
    ]
    assert total_outstanding(with_fees_and_credits) == 1000 + 2537 + 512
