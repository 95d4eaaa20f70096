"""The simple roaster strategies (``markup:X``, ``undercut``, ``hoard``): they run cleanly,
list at the prices they promise, and their names parse (or fail with a clear message)."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import pytest

from econbench.coffee.config import ROASTED, ROASTED_SPECIALTY
from econbench.coffee.events import MemorySink
from econbench.coffee.policies import UnknownPolicyError, make_policy
from econbench.coffee.policies.strategies import (
    CEILING,
    HoardRoaster,
    MarkupRoaster,
    UndercutRoaster,
)
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.agents import validate_agents
from econbench.runs.coffee.config import RunConfig

FOCAL = "roaster_A"
DAYS = 20


@cache
def run_events(strategy: str, seed: int = 0) -> tuple[dict[str, Any], ...]:
    sink = MemorySink()
    config = RunConfig(seed=seed, days=DAYS, agents={"default": "scripted", FOCAL: strategy})
    CoffeeRun(config, sink=sink).run()
    return tuple(sink.events)


def focal(events: tuple[dict[str, Any], ...], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind and e.get("firm") == FOCAL]


def last_result(events: tuple[dict[str, Any], ...], listing: dict[str, Any], tool: str) -> dict:
    """The result of the focal firm's last ``tool`` call before ``listing``, the same day."""
    before = [
        e
        for e in events
        if e["seq"] < listing["seq"]
        and e["day"] == listing["day"]
        and e["type"] == "tool_call"
        and e.get("firm") == FOCAL
        and e["tool"] == tool
    ]
    assert before, f"no {tool} before the listing of day {listing['day']}"
    return before[-1]["result"]


def morning_cost(events: tuple[dict[str, Any], ...], listing: dict[str, Any]) -> float:
    books = last_result(events, listing, "view_trial_balance")
    return books["inventory_by_item"][listing["item"]]["avg_cost"]


def expected(item: str, price: float) -> float:
    return round(min(price, CEILING[item]), 2)


STRATEGIES = ["markup:1.2", "markup:2", "markup:3:firm", "markup:ceiling", "undercut", "hoard"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_runs_with_few_errors(strategy: str) -> None:
    events = run_events(strategy)
    calls = focal(events, "tool_call")
    errors = [e for e in calls if e["result"]["status"] != "success"]
    assert len(calls) > 5 * DAYS
    # The heuristic's own races (a listing that shrank or sold out between viewing it and
    # bidding) cost a few calls per run; nothing systematic.
    assert len(errors) <= 8, [e["result"] for e in errors]
    assert focal(events, "listing"), "the strategy never listed anything"


@pytest.mark.parametrize("markup", [1.2, 1.5, 2.0, 3.0])
def test_markup_lists_at_markup_times_own_cost(markup: float) -> None:
    events = run_events(f"markup:{markup:g}")
    listings = focal(events, "listing")
    assert listings
    for lst in listings:
        cost = morning_cost(events, lst)
        assert lst["price"] == expected(lst["item"], markup * cost), lst


def test_markup_at_the_ceiling_is_clamped() -> None:
    events = run_events("markup:ceiling")
    listings = focal(events, "listing")
    assert {lst["price"] for lst in listings if lst["item"] == ROASTED} == {CEILING[ROASTED]}
    tools = {e["tool"] for e in focal(events, "tool_call") if e["result"]["status"] == "error"}
    assert "post_listing" not in tools
    # A large markup is clamped the same way, per item.
    policy = make_policy("markup:10", "roaster")
    stock = {"on_hand": 5, "avg_cost": 18.3}
    assert policy.list_price(ROASTED_SPECIALTY, stock, []) == CEILING[ROASTED_SPECIALTY] == 80.0
    assert policy.list_price(ROASTED, {"on_hand": 5, "avg_cost": 5.88}, []) == 30.0


def test_markup_accept_floors() -> None:
    stock = {"on_hand": 10, "avg_cost": 6.0}
    soft = make_policy("markup:2", "roaster")
    firm = make_policy("markup:2:firm", "roaster")
    thin = make_policy("markup:1.1", "roaster")
    assert soft.accept_floor(ROASTED, stock) == pytest.approx(7.2)
    assert firm.accept_floor(ROASTED, stock) == 12.0
    assert thin.accept_floor(ROASTED, stock) == 6.6  # never above its own ask
    ceiling = make_policy("markup:ceiling:firm", "roaster")
    assert ceiling.accept_floor(ROASTED, stock) == 30.0
    # no stock: the paper's cost basis
    assert soft.list_price(ROASTED, {"on_hand": 0, "avg_cost": 0.0}, []) == 11.76


def test_undercut_lists_below_the_rival_and_above_its_floor() -> None:
    events = run_events("undercut")
    undercuts = 0
    for lst in focal(events, "listing"):
        cost = morning_cost(events, lst)
        seen = last_result(events, lst, "view_listings")["listings"]
        rival = [
            x["asking_price"]
            for x in seen
            if x["item_id"] == lst["item"] and x["seller"] == "roaster_B"
        ]
        floor = math.ceil(round(1.2 * cost * 100, 6)) / 100
        if not rival:
            assert lst["price"] == expected(lst["item"], 1.5 * cost)
            continue
        ask = min(rival)
        target = min(round(ask - 0.01, 2), math.floor(round(ask * 99, 6)) / 100)
        assert lst["price"] == expected(lst["item"], max(target, floor)), (lst, ask, cost)
        assert lst["price"] >= floor
        undercuts += lst["price"] < ask
    assert undercuts > 0


def test_undercut_prices() -> None:
    policy = make_policy("undercut:5", "roaster")
    policy.start(FOCAL, "roaster", [])
    stock = {"on_hand": 10, "avg_cost": 5.0}

    def rival(price: float, seller: str = "roaster_B", item: str = ROASTED) -> dict[str, Any]:
        return {"item_id": item, "seller": seller, "asking_price": price}

    assert policy.list_price(ROASTED, stock, [rival(10.0)]) == 9.5
    assert policy.list_price(ROASTED, stock, [rival(6.1)]) == 6.0  # 1.2 × cost
    assert policy.list_price(ROASTED, stock, []) == 7.5  # 1.5 × cost
    assert policy.list_price(ROASTED, stock, [rival(9.0, seller="farmer_A")]) == 7.5
    assert policy.list_price(ROASTED, stock, [rival(9.0, item=ROASTED_SPECIALTY)]) == 7.5
    assert make_policy("undercut:0", "roaster").list_price(ROASTED, stock, [rival(10.0)]) == 9.99
    one = make_policy("undercut", "roaster")
    assert one.list_price(ROASTED, stock, [rival(10.0)]) == 9.9


def test_hoard_buys_to_the_cap_and_lists_a_fifth_at_a_high_price() -> None:
    events = run_events("hoard")
    for lst in focal(events, "listing"):
        cost = morning_cost(events, lst)
        books = last_result(events, lst, "view_trial_balance")
        assert lst["price"] == expected(lst["item"], 2.5 * cost)
        assert lst["qty"] <= max(1, books["inventory_by_item"][lst["item"]]["qty"] // 5)
    bought = [
        e["arguments"]["qty"]
        for e in focal(events, "tool_call")
        if e["tool"] == "make_offer" and e["result"]["status"] == "success"
    ]
    assert max(bought) > 30  # more than the scripted roaster's 30 kg per offer
    held = [
        sum(row["qty"] for row in e["result"]["inventory_by_item"].values())
        for e in focal(events, "tool_call")
        if e["tool"] == "view_trial_balance"
    ]
    assert max(held) >= 115  # the inventory cap is 120 kg


@pytest.mark.parametrize(
    ("name", "cls", "attrs"),
    [
        ("markup:1.5", MarkupRoaster, {"markup": 1.5, "firm": False}),
        ("markup:2:firm", MarkupRoaster, {"markup": 2.0, "firm": True}),
        ("markup:ceiling", MarkupRoaster, {"markup": math.inf, "firm": False}),
        ("undercut", UndercutRoaster, {"pct": 1.0}),
        ("undercut:2.5", UndercutRoaster, {"pct": 2.5}),
        ("hoard", HoardRoaster, {}),
    ],
)
def test_names_parse(name: str, cls: type, attrs: dict[str, Any]) -> None:
    policy = make_policy(name, "roaster")
    assert isinstance(policy, cls)
    assert policy.name == name
    for key, value in attrs.items():
        assert getattr(policy, key) == value


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("markup", "markup is missing"),
        ("markup:", "markup is missing"),
        ("markup:abc", "'abc' is not a number"),
        ("markup:nan", "not a finite number"),
        ("markup:inf", "not a finite number"),
        ("markup:0.5", "at least 1"),
        ("markup:2:soft", "unexpected parameter"),
        ("markup:2:firm:x", "unexpected parameter"),
        ("undercut:x", "'x' is not a number"),
        ("undercut:80", "between 0 and 50"),
        ("undercut:1:2", "too many parameters"),
        ("hoard:3", "no parameters"),
    ],
)
def test_malformed_names_are_clear_errors(name: str, needle: str) -> None:
    with pytest.raises(UnknownPolicyError, match="use ") as info:
        make_policy(name, "roaster")
    assert needle in str(info.value)
    assert f"'{name}'" in str(info.value)


def test_unknown_names_mention_the_strategies() -> None:
    with pytest.raises(UnknownPolicyError, match="markup, undercut, hoard"):
        make_policy("markdown:2", "roaster")


@pytest.mark.parametrize("role", ["farmer", "retailer"])
def test_strategies_are_for_roasters_only(role: str) -> None:
    with pytest.raises(UnknownPolicyError, match="roaster strategy"):
        make_policy("markup:2", role)


def test_default_strategy_fails_validation() -> None:
    with pytest.raises(UnknownPolicyError, match="roaster strategy"):
        validate_agents(RunConfig(agents={"default": "markup:2"}))
    validate_agents(RunConfig(agents={"default": "scripted", "roaster_B": "undercut"}))


def test_strategy_runs_are_deterministic() -> None:
    assert run_events("undercut", 1) == run_events.__wrapped__("undercut", 1)
