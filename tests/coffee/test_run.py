"""Whole runs: determinism, per-run files, the summary's shape, and no leaks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FnPolicy
from econbench.coffee.config import FIRMS, EconomyConfig
from econbench.coffee.events import MemorySink
from econbench.coffee.policies import make_policy
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.state import WorldState
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir

SUMMARY_FIRM_KEYS = {
    "policy",
    "net_income",
    "revenue",
    "cogs",
    "opex",
    "interest_expense",
    "interest_income",
    "tool_calls",
    "tool_calls_by_name",
    "idle_days",
    "messages_sent",
    "messages_sent_by_recipient",
    "bankrupt",
    "bankrupt_day",
}


@pytest.fixture(scope="module")
def default_run(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("run") / "seed0"
    summary = run_to_dir(RunConfig(), out)
    return out, summary


def test_the_all_scripted_economy_really_trades(default_run) -> None:
    out, summary = default_run
    assert summary["seed"] == 0 and summary["days"] == 90 and summary["deals"] > 100
    firms = summary["firms"]
    assert set(firms) == set(FIRMS)
    for row in firms.values():
        assert set(row) >= SUMMARY_FIRM_KEYS
        assert not row["bankrupt"]
    # Farms sell both greens, roasters roast and sell, retailers sell to consumers, bills get paid.
    events = [json.loads(line) for line in (out / "events.jsonl").open()]
    deals = [e for e in events if e["type"] == "deal"]
    assert {e["item"] for e in deals if e["seller"].startswith("farmer")} == {
        "green_coffee_kg",
        "green_specialty_kg",
    }
    assert {e["item"] for e in deals if e["seller"].startswith("roaster")} == {
        "roasted_coffee_kg",
        "roasted_specialty_kg",
    }
    assert {e["firm"] for e in events if e["type"] == "consumer_sale"} == {
        "retailer_A",
        "retailer_B",
    }
    assert {e["payer"] for e in events if e["type"] == "payment"} >= {
        "roaster_A",
        "roaster_B",
        "retailer_A",
        "retailer_B",
    }
    assert firms["roaster_A"]["policy"] == "heuristic"
    assert firms["retailer_A"]["revenue"] > 0 and firms["roaster_B"]["revenue"] > 0


def test_run_files_and_daily_rows(default_run) -> None:
    out, summary = default_run
    assert {p.name for p in out.iterdir()} == {
        "config.json",
        "meta.json",
        "events.jsonl",
        "daily.jsonl",
        "summary.json",
        "checkpoint.json",
        "progress.json",
        ".lock",
    }
    assert json.loads((out / "summary.json").read_text()) == summary
    config = json.loads((out / "config.json").read_text())
    assert RunConfig.model_validate(config) == RunConfig()
    rows = [json.loads(line) for line in (out / "daily.jsonl").open()]
    assert len(rows) == 90 * 6
    last = {r["firm"]: r for r in rows if r["day"] == 89}
    for firm, row in summary["firms"].items():
        assert last[firm]["net_income_cum"] == pytest.approx(row["net_income"])
        assert set(row) >= SUMMARY_FIRM_KEYS
        assert {"cash", "inventory", "ar", "ap", "equity", "revenue_cum"} <= set(last[firm])
    # Net income equals the change in equity (no owner flows in this economy).
    first_equity = {"farmer": 15000 + 120, "roaster": 15000 + 176.4, "retailer": 15000 + 250}
    for firm, row in last.items():
        start = first_equity[firm.split("_")[0]]
        assert row["equity"] - start == pytest.approx(row["net_income_cum"], abs=0.005)


def test_same_seed_same_log_and_different_seed_different_log(tmp_path, default_run) -> None:
    out, _ = default_run
    again = tmp_path / "again"
    run_to_dir(RunConfig(), again)
    assert (again / "events.jsonl").read_bytes() == (out / "events.jsonl").read_bytes()
    assert (again / "daily.jsonl").read_bytes() == (out / "daily.jsonl").read_bytes()
    other = tmp_path / "other"
    run_to_dir(RunConfig(seed=1), other)
    assert (other / "events.jsonl").read_bytes() != (out / "events.jsonl").read_bytes()


def test_an_existing_run_dir_is_not_overwritten_silently(default_run) -> None:
    from econbench.runs.store import RunDirError

    out, _ = default_run
    with pytest.raises(RunDirError, match="already holds files"):
        run_to_dir(RunConfig(days=1), out)


def test_passive_roaster_only_waits() -> None:
    world = CoffeeRun(RunConfig(days=5, agents={"roaster_A": "passive"})).run()
    firm = world.firm("roaster_A")
    assert firm.tool_calls == {"wait_for_next_day": 5}
    assert firm.idle_days == 5
    # Only opex and spoilage touch its books.
    assert firm.books.revenue == 0 and firm.books.opex_fixed == 5 * 3000


def test_state_round_trips_through_json_mid_run() -> None:
    config = RunConfig(days=12)
    run = CoffeeRun(config)
    for _ in range(6):
        run.step_day()
    text = run.world.state.model_dump_json()
    restored = WorldState.model_validate_json(text)
    assert restored == run.world.state
    assert restored.model_dump_json() == text


def test_heuristic_roaster_follows_the_paper_rules() -> None:
    sink = MemorySink()
    CoffeeRun(RunConfig(days=3), sink=sink).run()
    calls = [e for e in sink.events if e["type"] == "tool_call" and e["firm"] == "roaster_A"]
    day0 = [e["tool"] for e in calls if e["day"] == 0]
    assert day0[:4] == ["view_trial_balance", "view_listings", "view_offers", "view_payables"]
    assert day0[-1] == "wait_for_next_day"
    listings = [e for e in calls if e["tool"] == "post_listing"]
    assert listings and all(
        e["arguments"]["asking_price"] == 8.82
        for e in listings
        if e["arguments"]["item_id"] == "roasted_coffee_kg"
    )
    offers = [e for e in calls if e["tool"] == "make_offer"]
    assert all(e["arguments"]["qty"] <= 30 for e in offers)
    assert {e["day"] for e in offers} <= {0, 1, 2} and len(offers) <= 3
    assert not any(e["tool"] == "send_message" for e in calls)


FORBIDDEN_KEYS = {
    "loyalty",
    "reserved_value",
    "seller_cost",
    "base_demand",
    "demand_noise",
    "ship_loss_prob",
    "ship_delay_prob",
    "pool",
    "market_share",
}


def _walk(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield f"{path}.{k}", k, v
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{path}[{i}]")


def test_no_tool_output_or_observation_reveals_private_facts() -> None:
    config = RunConfig(days=20)
    recorders = {}

    def spy(firm):
        inner = make_policy(config.policy_for(firm), firm.split("_")[0])
        rec = FnPolicy(lambda f, fb, step: inner.decide(fb))
        recorders[firm] = rec
        return rec

    sink = MemorySink()
    run = CoffeeRun(config, sink=sink, policies={f: spy(f) for f in FIRMS})
    world = run.run()
    loyalty = [f"{v:.6f}"[:7] for v in world.state.hidden.loyalty.values()]
    for firm, rec in recorders.items():
        seen = rec.observations + rec.results
        assert seen
        for doc in seen:
            text = json.dumps(doc)
            assert not any(token in text for token in loyalty)
            for path, key, _value in _walk(doc):
                assert key not in FORBIDDEN_KEYS, (firm, path)
                if key == "cash":
                    # The only cash figures an agent sees are its own.
                    assert path in (".cash", ".balances.cash"), (firm, path)
                if key == "avg_cost":
                    assert path.startswith((".stock.", ".inventory_by_item.")), (firm, path)
    # The buyer's view of a deal never shows what the goods cost the seller.
    deal_views = [d for rec in recorders.values() for o in rec.observations for d in o["new_deals"]]
    deal_views += world.toolkit("retailer_A").call("view_deals", {"limit": 100})["deals"]
    assert deal_views and all("cost" not in json.dumps(d) for d in deal_views)


def test_economy_overrides_change_the_world() -> None:
    econ = EconomyConfig(spoilage_rate=0.0, ship_delay_prob=0.0, ship_loss_prob=0.0)
    sink = MemorySink()
    CoffeeRun(RunConfig(days=15, economy=econ), sink=sink).run()
    types = {e["type"] for e in sink.events}
    assert "spoilage" not in types and "shipment_delayed" not in types
    assert "delivery" in types


def test_junk_arguments_are_logged_without_breaking_the_log(tmp_path) -> None:
    from econbench.agents.tools import ToolCall
    from econbench.coffee.events import JsonlSink
    from econbench.coffee.world import World

    sink = JsonlSink(tmp_path / "events.jsonl")
    world = World(RunConfig(), sink=sink)
    world.start_day()
    junk = {"listing_id": "L1", "offered_price": float("nan"), "qty": [1, {"x": float("inf")}]}
    result = world.act("roaster_A", ToolCall("make_offer", junk))
    world.act("roaster_A", ToolCall("view_listings", "not a dict"))  # type: ignore[arg-type]
    sink.close()
    assert result["status"] == "error"
    logged = [json.loads(line) for line in (tmp_path / "events.jsonl").open()]
    calls = [e for e in logged if e["type"] == "tool_call"]
    assert calls[0]["arguments"]["offered_price"] == "nan"
    assert calls[1]["arguments"] == "not a dict"
    assert calls[1]["result"]["status"] == "error"
