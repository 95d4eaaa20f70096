"""The paper's scripted baselines decide exactly as the reference's models.

``EXPECTED_CALLS`` was produced by the reference's ``HeuristicRoasterModel`` (CoffeeBench
71442fb, Python 3.12) queried on the same message histories: each batch of ``SCENARIO``
appended as its ``Agent`` and ``Environment`` would (tool results via
``agent._stringify_tool_result`` under the previous call's name, observations as user
messages), then ``query(messages)``, then the assistant turn appended.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from econbench.agents.policy import Observation, Reply, ToolResult, UserText
from econbench.coffee.paper.policies import HeuristicRoasterReference, PassiveReference
from econbench.coffee.paper.prompts import INITIAL_OBSERVATION


def tb(cash: float, inv: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": "success",
        "period_label": "Q1",
        "days_range": [0, 0],
        "as_of": 0,
        "complete": False,
        "accounts": {"cash": {"balance": cash, "kind": "snapshot"}},
        "inventory_by_item": inv,
        "bs_source": "live",
    }


OK = {"status": "success", "message": "ok"}
SLEEP = {"status": "success", "message": "Sleeping until next event or tomorrow's morning."}

SCENARIO = [
    [
        ("user", INITIAL_OBSERVATION),
        ("user", "=== Day 0, 09:00 — morning observation ===\ncash $15000.00"),
    ],
    [
        (
            "tool",
            tb(
                15000.0,
                {"roasted_coffee_kg": 30, "green_coffee_kg": 40.7, "green_specialty_kg": 12},
            ),
        )
    ],
    [
        (
            "tool",
            {
                "status": "success",
                "listings": [
                    {"id": "lst_a1", "item_id": "green_coffee_kg", "qty": 50, "asking_price": 3.5},
                    {"id": "lst_a2", "item_id": "green_coffee_kg", "qty": 0, "asking_price": 1.0},
                    {"id": "lst_a3", "item_id": "green_coffee_kg", "qty": 20, "asking_price": 2.75},
                    {
                        "id": "lst_a4",
                        "item_id": "green_specialty_kg",
                        "qty": 10,
                        "asking_price": 1.5,
                    },
                    {"id": "lst_a5", "item_id": "green_coffee_kg", "qty": 45, "asking_price": 2.75},
                ],
            },
        )
    ],
    [
        (
            "tool",
            {
                "status": "success",
                "offers": [
                    {
                        "id": "off_x1",
                        "listing_id": "lst_zz",
                        "offered_price": 100.0,
                        "status": "pending",
                    },
                ],
            },
        )
    ],
    [
        (
            "tool",
            {
                "status": "success",
                "rows": [
                    {"id": "inv1", "outstanding": 120.5},
                    {"id": "inv2", "outstanding": 0.0},
                    {"id": "inv3", "outstanding": 7},
                ],
            },
        )
    ],
    [("tool", OK)],
    [("tool", {"status": "error", "message": "no such invoice"})],
    [("tool", OK)],
    [("tool", OK)],
    [("tool", {"status": "success", "listing_id": "lst_mine1"})],
    [("tool", OK)],
    [("tool", SLEEP), ("user", "=== Day 0, 13:30 ===\n[Wake reason: offer_received]")],
    [("tool", SLEEP), ("user", "=== Day 1, 09:00 — morning observation ===")],
    [("tool", tb(15000.0, {"roasted_coffee_kg": 12, "roasted_specialty_kg": 9}))],
    [
        (
            "tool",
            {
                "status": "success",
                "listings": [
                    {"id": "lst_b1", "item_id": "green_coffee_kg", "qty": 25, "asking_price": 4.0},
                ],
            },
        )
    ],
    [
        (
            "tool",
            {
                "status": "success",
                "offers": [
                    {
                        "id": "off_1",
                        "listing_id": "lst_mine1",
                        "offered_price": 7.0,
                        "status": "pending",
                    },
                    {
                        "id": "off_2",
                        "listing_id": "lst_mine1",
                        "offered_price": 7.06,
                        "status": "pending",
                    },
                    {
                        "id": "off_3",
                        "listing_id": "lst_mine1",
                        "offered_price": 9.0,
                        "status": "accepted",
                    },
                    {
                        "id": "off_4",
                        "listing_id": "lst_mine1",
                        "offered_price": 8.0,
                        "status": None,
                    },
                    {
                        "id": "off_5",
                        "listing_id": "lst_mine1",
                        "offered_price": 8.0,
                        "status": "open",
                    },
                ],
            },
        )
    ],
    [("tool", {"status": "success", "rows": []})],
    [("tool", OK), ("user", "=== Day 1, 11:00 ===\n[Wake reason: delivery]")],
    [("tool", OK)],
    [("tool", OK)],
    [("tool", {"status": "success", "listing_id": "lst_mine2"})],
    [("tool", {"status": "error", "message": "nope"})],
    [("tool", OK)],
    [("tool", SLEEP), ("user", "=== Day 2, 09:00 ===")],
    # The trial balance is followed by a wake in the same batch: never read (cash stays 15000).
    [
        ("tool", tb(10.0, {"roasted_coffee_kg": 3})),
        ("user", "=== Day 2, 09:30 ===\n[Wake reason: message]"),
    ],
    [
        (
            "tool",
            {
                "status": "success",
                "listings": [
                    {"id": "lst_c1", "item_id": "green_coffee_kg", "qty": 40, "asking_price": 2.5},
                ],
            },
        )
    ],
    [
        (
            "tool",
            {
                "status": "success",
                "offers": [
                    {
                        "id": "off_6",
                        "listing_id": "lst_mine2",
                        "offered_price": 21.96,
                        "status": "pending",
                    },
                    {
                        "id": "off_7",
                        "listing_id": "lst_mine2",
                        "offered_price": 21.95,
                        "status": "pending",
                    },
                ],
            },
        )
    ],
    [("tool", {"status": "success", "rows": [{"id": "inv9", "outstanding": "5.5"}]})],
    [("tool", OK)],
    [("tool", OK)],
    [("tool", OK)],
    [("tool", OK)],
    [("tool", SLEEP), ("user", "=== Day 3, 09:00 ===")],
    [("tool", tb(100.0, {"green_coffee_kg": 70}))],
    [
        (
            "tool",
            {
                "status": "success",
                "listings": [
                    {"id": "lst_d1", "item_id": "green_coffee_kg", "qty": 40, "asking_price": 4.0},
                ],
            },
        )
    ],
    [("tool", {"status": "success", "offers": []})],
    [("tool", {"status": "success", "rows": []})],
    [("tool", OK)],
    [("tool", OK)],
]

EXPECTED_CALLS = [
    ("heur_0001", "view_trial_balance", {}),
    ("heur_0002", "view_listings", {}),
    ("heur_0003", "view_offers", {}),
    ("heur_0004", "view_payables", {}),
    ("heur_0005", "pay_invoice", {"invoice_id": "inv1"}),
    ("heur_0006", "pay_invoice", {"invoice_id": "inv3"}),
    ("heur_0007", "roast", {"green_item_id": "green_specialty_kg", "qty_kg": 12}),
    ("heur_0008", "roast", {"green_item_id": "green_coffee_kg", "qty_kg": 40}),
    (
        "heur_0009",
        "post_listing",
        {"item_id": "roasted_coffee_kg", "qty": 30, "asking_price": 8.82},
    ),
    ("heur_0010", "make_offer", {"listing_id": "lst_a3", "offered_price": 2.75, "qty": 20}),
    ("heur_0011", "wait_for_next_day", {}),
    ("heur_0012", "wait_for_next_day", {}),
    ("heur_0013", "view_trial_balance", {}),
    ("heur_0014", "view_listings", {}),
    ("heur_0015", "view_offers", {}),
    ("heur_0016", "view_payables", {}),
    ("heur_0017", "accept_offer", {"offer_id": "off_2"}),
    ("heur_0018", "accept_offer", {"offer_id": "off_4"}),
    ("heur_0019", "accept_offer", {"offer_id": "off_5"}),
    (
        "heur_0020",
        "post_listing",
        {"item_id": "roasted_specialty_kg", "qty": 9, "asking_price": 27.45},
    ),
    (
        "heur_0021",
        "post_listing",
        {"item_id": "roasted_coffee_kg", "qty": 12, "asking_price": 8.82},
    ),
    ("heur_0022", "make_offer", {"listing_id": "lst_b1", "offered_price": 4.0, "qty": 25}),
    ("heur_0023", "wait_for_next_day", {}),
    ("heur_0024", "view_trial_balance", {}),
    ("heur_0025", "view_listings", {}),
    ("heur_0026", "view_offers", {}),
    ("heur_0027", "view_payables", {}),
    ("heur_0028", "accept_offer", {"offer_id": "off_6"}),
    ("heur_0029", "pay_invoice", {"invoice_id": "inv9"}),
    (
        "heur_0030",
        "post_listing",
        {"item_id": "roasted_specialty_kg", "qty": 9, "asking_price": 27.45},
    ),
    (
        "heur_0031",
        "post_listing",
        {"item_id": "roasted_coffee_kg", "qty": 12, "asking_price": 8.82},
    ),
    ("heur_0032", "make_offer", {"listing_id": "lst_c1", "offered_price": 2.5, "qty": 30}),
    ("heur_0033", "view_trial_balance", {}),
    ("heur_0034", "view_listings", {}),
    ("heur_0035", "view_offers", {}),
    ("heur_0036", "view_payables", {}),
    ("heur_0037", "roast", {"green_item_id": "green_coffee_kg", "qty_kg": 50}),
    ("heur_0038", "wait_for_next_day", {}),
    ("heur_0039", "wait_for_next_day", {}),
]


def _inputs(batch: list[tuple[str, Any]], last_call: Any, *, named: bool = True) -> list[Any]:
    out: list[Any] = []
    for kind, payload in batch:
        if kind == "user":
            out.append(UserText(payload))
        else:
            name = last_call.name if named else ""
            out.append(ToolResult(name, payload, last_call.call_id))
    return out


def _drive(actor: Any, batches: list[Any], last_call: Any = None, **kw: Any) -> list[Any]:
    calls = []
    for batch in batches:
        reply = actor.respond(_inputs(batch, last_call, **kw))
        assert reply.text == "(heuristic baseline)"
        assert len(reply.tool_calls) == 1
        last_call = reply.tool_calls[0]
        calls.append(last_call)
    return calls


def _as_tuples(calls: list[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(c.call_id, c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("named", [True, False])
def test_heuristic_matches_reference(named: bool) -> None:
    """Unnamed results fall back to the name of the call they answer, as the reference's
    history names every tool message after its call."""
    actor = HeuristicRoasterReference()
    actor.start("roaster_A", "roaster", [])
    assert _as_tuples(_drive(actor, SCENARIO, named=named)) == EXPECTED_CALLS


def test_heuristic_argument_types_match_reference() -> None:
    """Quantities are ints and prices floats, as the reference sends them."""
    actor = HeuristicRoasterReference()
    calls = _drive(actor, SCENARIO)
    offer = next(c for c in calls if c.name == "make_offer")
    assert type(offer.arguments["qty"]) is int and type(offer.arguments["offered_price"]) is float
    roast = next(c for c in calls if c.name == "roast")
    assert type(roast.arguments["qty_kg"]) is int


def test_heuristic_history_is_the_reference_shape() -> None:
    actor = HeuristicRoasterReference()
    _drive(actor, SCENARIO[:3])
    roles = [m["role"] for m in actor.messages]
    assert roles == ["user", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    tool = actor.messages[3]
    assert tool["name"] == "view_trial_balance" and tool["tool_call_id"] == "heur_0001"
    assert json.loads(tool["content"]) == SCENARIO[1][0][1]
    assert actor.messages[2]["tool_calls"] == [
        {"id": "heur_0001", "name": "view_trial_balance", "input": {}}
    ]


@pytest.mark.parametrize("cut", [1, 9, 12, 17, 25, 30])
def test_heuristic_state_round_trip(cut: int) -> None:
    """A restored actor (from JSON) continues exactly as the uninterrupted one."""
    actor = HeuristicRoasterReference()
    first = _drive(actor, SCENARIO[:cut])
    state = json.loads(json.dumps(actor.state_dict()))
    restored = HeuristicRoasterReference()
    restored.load_state(state)
    rest = _drive(restored, SCENARIO[cut:], last_call=first[-1])
    assert _as_tuples(first + rest) == EXPECTED_CALLS
    assert restored.messages[: len(actor.messages)] == actor.messages


def test_heuristic_refuses_structured_observations() -> None:
    actor = HeuristicRoasterReference()
    with pytest.raises(TypeError):
        actor.respond([Observation({"day": 0})])


def test_passive_never_calls_a_tool() -> None:
    actor = PassiveReference()
    actor.start("roaster_A", "roaster", [])
    replies: list[Reply] = [
        actor.respond([UserText(INITIAL_OBSERVATION), UserText("=== Day 0, 09:00 ===")]),
        actor.respond(
            [
                ToolResult("wait_for_next_day", {"status": "success", "message": "zzz"}),
                UserText("=== Day 1, 09:00 ==="),
            ]
        ),
    ]
    for reply in replies:
        assert reply.text == "(passive baseline: sleeping until next event)"
        assert reply.tool_calls == [] and reply.first_call is None
    state = json.loads(json.dumps(actor.state_dict()))
    assert state["n_calls"] == 2
    restored = PassiveReference()
    restored.load_state(state)
    assert restored.messages == actor.messages
    assert [m["role"] for m in actor.messages] == ["user", "user", "assistant", "user", "assistant"]
