"""The per-agent clock, wakes and the 20-actions-a-day budget (docs/coffeebench.md §3)."""

from __future__ import annotations

from collections import Counter

from conftest import FnPolicy
from econbench.agents.tools import ToolCall
from econbench.coffee.config import FIRMS
from econbench.coffee.events import MemorySink
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig


def test_tool_calls_cost_30_minutes_and_waiting_costs_nothing(world) -> None:
    firm = world.firm("roaster_A")
    assert firm.clock.minute == 9 * 60
    world.act("roaster_A", ToolCall("view_listings"))
    assert firm.clock.minute == 9 * 60 + 30
    world.act("roaster_A", ToolCall("no_such_tool"))
    assert firm.clock.minute == 10 * 60, "an error result still costs 30 minutes"
    world.act("roaster_A", ToolCall("wait_for_next_day"))
    assert firm.clock.minute == 10 * 60 and firm.clock.parked


def test_a_parked_agent_is_woken_after_the_action_and_a_busy_one_only_queues(world) -> None:
    world.act("roaster_B", ToolCall("wait_for_next_day"))
    for _ in range(3):
        world.act("farmer_A", ToolCall("view_listings"))
    world.act(
        "farmer_A",
        ToolCall("send_message", {"recipient": "roaster_B", "title": "hi", "body": "x"}),
    )
    b = world.firm("roaster_B").clock
    assert not b.parked and b.needs_observation
    assert b.minute == 9 * 60 + 4 * 30, "woken at the end of the sender's action"
    # roaster_A is busy (not parked): the message is only queued.
    world.observe("roaster_A")
    world.act("roaster_A", ToolCall("view_listings"))
    world.act(
        "farmer_A", ToolCall("send_message", {"recipient": "roaster_A", "title": "t", "body": "y"})
    )
    a = world.firm("roaster_A").clock
    assert a.minute == 9 * 60 + 30 and not a.needs_observation
    assert [r for r in a.reasons if "message" in r] == ['message M2 from farmer_A: "t"']


def _message_every_turn(target: dict[str, str]):
    def fn(firm_id, feedback, step):
        return ToolCall(
            "send_message", {"recipient": target[firm_id], "title": f"ping {step}", "body": "."}
        )

    return fn


def _ping_then_wait(target: dict[str, str]):
    def fn(firm_id, feedback, step):
        if feedback.observation is not None:
            return ToolCall(
                "send_message", {"recipient": target[firm_id], "title": "ping", "body": "."}
            )
        return ToolCall("wait_for_next_day")

    return fn


def _run_pair(fn_factory) -> Counter:
    pair = {"roaster_A": "roaster_B", "roaster_B": "roaster_A"}
    sink = MemorySink()
    policies = {f: FnPolicy(fn_factory(pair)) for f in pair}
    config = RunConfig(days=3, agents={"default": "passive"})
    CoffeeRun(config, sink=sink, policies=policies).run()
    per_day = Counter(
        (e["day"], e["firm"])
        for e in sink.events
        if e["type"] == "tool_call" and e["tool"] not in ("wait_for_next_day", None)
    )
    assert per_day, "the firms did act"
    return per_day


def test_mutual_wakes_cannot_exceed_twenty_actions_a_day() -> None:
    per_day = _run_pair(_message_every_turn)
    assert max(per_day.values()) == 20
    assert all(count <= 20 for count in per_day.values())


def test_ping_pong_wakes_advance_the_clock_and_stay_within_budget() -> None:
    per_day = _run_pair(_ping_then_wait)
    assert all(count <= 20 for count in per_day.values())
    # Each wake moves the woken clock 30 minutes past the sender's action: the exchange
    # runs until 19:00 and no longer.
    assert per_day[(0, "roaster_A")] + per_day[(0, "roaster_B")] <= 40


def test_same_minute_agents_decide_on_the_same_state_and_apply_in_firm_order() -> None:
    seen: dict[str, int] = {}

    def fn(firm_id, feedback, step):
        if step == 1:
            return ToolCall("view_listings", {"item_id": "green_coffee_kg"})
        if step == 2:
            seen[firm_id] = feedback.result["count"]
            return ToolCall(
                "post_listing", {"item_id": "green_coffee_kg", "qty": 10, "asking_price": 3.0}
            )
        return None

    policies = {f: FnPolicy(fn) for f in ("farmer_A", "farmer_B")}
    sink = MemorySink()
    CoffeeRun(RunConfig(days=1, agents={"default": "passive"}), sink=sink, policies=policies).run()
    listings = [e for e in sink.events if e["type"] == "listing"]
    assert [e["firm"] for e in listings] == ["farmer_A", "farmer_B"]
    assert seen == {"farmer_A": 0, "farmer_B": 0}
    assert set(FIRMS) >= set(policies)
