"""Every tool rejects bad input with an error result naming the problem (docs/coffeebench.md §4).

For each case the test asserts that the result is ``{"status": "error", "error": ...}``,
that the message contains the expected fragment (the field or the reason), and that the world
state is byte-for-byte unchanged. Through ``World.act`` the same error still costs the firm
30 minutes of its clock and changes nothing else but the clock and the call counters.

Two hand-built worlds serve as fixtures (shipping risk off so that every deal delivers):

* ``base`` (day 1, business hours): listings L1 (farmer_A, 10 kg green left), L2 (farmer_B,
  20 kg green left), L3 (roaster_A, sold out); offers O1, O3, O4 accepted, O2 pending
  (roaster_B → farmer_A), O5 rejected; deals D1 (farmer_A → roaster_A, 50 kg green),
  D2 (farmer_B → roaster_A, 10 kg green), D3 (roaster_A → retailer_A, 10 kg roasted), all
  delivered with invoices INV1 (open), INV2 (paid) and INV3 (open); message M1
  (farmer_A → roaster_A); roaster_A has roasted 20 kg today and holds 40 kg green; farmer_B
  has 115 kg of committed holdings (cap 120) and 5 kg of today's green cap left.
* ``late``: the same world advanced to day 16, one day past INV1's 14-day return window.
* ``bankrupt`` (day 2): both farmers went bankrupt on the morning's opex; roaster_A still
  owes farmer_B for a delivery (INV1) and farmer_B's listing L1 was closed.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from econbench.agents.tools import ToolCall
from econbench.coffee.config import (
    GREEN,
    GREEN_SPECIALTY,
    ROASTED,
    ROASTED_SPECIALTY,
    EconomyConfig,
)
from econbench.coffee.events import JsonlSink, MemorySink
from econbench.coffee.state import WorldState
from econbench.coffee.toolkit import toolkit_class
from econbench.coffee.world import World
from econbench.runs.coffee.config import RunConfig

CONFIG = RunConfig(seed=0, days=90, economy=EconomyConfig(ship_loss_prob=0.0, ship_delay_prob=0.0))

COMMON_TOOLS = (
    "post_listing",
    "view_listings",
    "make_offer",
    "withdraw_offer",
    "accept_offer",
    "view_offers",
    "view_deals",
    "send_message",
    "view_messages",
    "read_message",
    "view_payables",
    "view_receivables",
    "pay_invoice",
    "return_shipment",
    "view_trial_balance",
    "view_market_aggregate",
    "wait_for_next_day",
)
ROLE_TOOLS = {
    "farmer": ("produce_item",),
    "roaster": ("roast",),
    "retailer": ("set_retail_price", "view_consumer_sales"),
}
FIRM_OF_ROLE = {"farmer": "farmer_B", "roaster": "roaster_A", "retailer": "retailer_A"}


# --------------------------------------------------------------------------- fixtures
def ok(world: World, firm: str, tool: str, **args: Any) -> dict[str, Any]:
    result = world.toolkit(firm).call(tool, args)
    assert result["status"] == "success", (firm, tool, args, result)
    return result


def next_day(world: World) -> None:
    world.end_day()
    world.start_day()


def build_base() -> World:
    w = World(CONFIG, sink=MemorySink())
    w.start_day()  # day 0
    assert (
        ok(w, "farmer_A", "post_listing", item_id=GREEN, qty=60, asking_price=3.0)["listing"][
            "listing_id"
        ]
        == "L1"
    )
    ok(w, "farmer_B", "post_listing", item_id=GREEN, qty=30, asking_price=2.5, payment_terms_days=0)
    assert (
        ok(w, "roaster_A", "make_offer", listing_id="L1", offered_price=3.0, qty=50)["offer"][
            "offer_id"
        ]
        == "O1"
    )
    ok(w, "roaster_B", "make_offer", listing_id="L1", offered_price=2.9, qty=10)  # O2
    ok(
        w,
        "roaster_A",
        "make_offer",
        listing_id="L2",
        offered_price=2.5,
        qty=10,
        payment_terms_days=0,
    )  # O3
    assert ok(w, "farmer_A", "accept_offer", offer_id="O1")["deal"]["deal_id"] == "D1"
    assert ok(w, "farmer_B", "accept_offer", offer_id="O3")["deal"]["deal_id"] == "D2"
    ok(w, "roaster_A", "post_listing", item_id=ROASTED, qty=10, asking_price=9.0)  # L3
    ok(w, "retailer_A", "make_offer", listing_id="L3", offered_price=9.0, qty=10)  # O4
    ok(w, "retailer_B", "make_offer", listing_id="L3", offered_price=8.5, qty=5)  # O5
    assert ok(w, "roaster_A", "accept_offer", offer_id="O4")["deal"]["deal_id"] == "D3"
    ok(w, "farmer_A", "send_message", recipient="roaster_A", title="hello", body="50 kg ship")
    ok(w, "farmer_B", "produce_item", item_id=GREEN, quantity=30)
    ok(w, "farmer_B", "produce_item", item_id=GREEN_SPECIALTY, quantity=10)
    next_day(w)  # day 1: D1, D2, D3 delivered as INV1, INV2, INV3
    ok(w, "roaster_A", "pay_invoice", invoice_id="INV2")
    ok(w, "roaster_A", "roast", green_item_id=GREEN, qty_kg=20)
    ok(w, "farmer_B", "produce_item", item_id=GREEN, quantity=25)

    s = w.state
    assert s.day == 1 and s.phase == "business"
    assert s.listings["L1"].qty == 10 and s.listings["L1"].status == "open"
    assert s.listings["L2"].qty == 20 and s.listings["L3"].status == "sold_out"
    assert s.offers["O2"].status == "pending" and s.offers["O5"].status == "rejected"
    assert [s.deals[d].status for d in ("D1", "D2", "D3")] == ["delivered"] * 3
    assert s.invoices["INV1"].payer == "roaster_A" and s.invoices["INV1"].status == "open"
    assert s.invoices["INV2"].status == "paid" and s.invoices["INV3"].payer == "retailer_A"
    assert s.firms["roaster_A"].stock[GREEN].qty == 40
    assert s.firms["roaster_A"].roasted_today_kg == 20
    assert w.committed_holdings("farmer_B") == 115
    assert "M1" in s.messages
    return w


BANKRUPT_CONFIG = CONFIG.model_copy(
    update={
        "economy": CONFIG.economy.model_copy(
            update={"farmer": CONFIG.economy.farmer.model_copy(update={"cash": 50.0})}
        )
    }
)


def build_bankrupt() -> World:
    """Day 2: both farmers ($50 cash) went bankrupt on the morning's opex; roaster_A still
    owes farmer_B for 20 kg delivered on day 1 (INV1); farmer_B's listing L1 was closed."""
    w = World(BANKRUPT_CONFIG, sink=MemorySink())
    w.start_day()
    ok(w, "farmer_B", "post_listing", item_id=GREEN, qty=30, asking_price=3.0)  # L1
    ok(w, "roaster_A", "make_offer", listing_id="L1", offered_price=3.0, qty=20)  # O1
    ok(w, "farmer_B", "accept_offer", offer_id="O1")  # D1
    next_day(w)  # day 1: INV1; farmers at $0 (not bankrupt)
    next_day(w)  # day 2: farmers at -$25: bankrupt
    s = w.state
    assert s.firms["farmer_B"].bankrupt and s.firms["farmer_A"].bankrupt
    assert s.invoices["INV1"].payer == "roaster_A" and s.invoices["INV1"].status == "open"
    assert s.listings["L1"].status == "closed"
    return w


WORLD_CONFIGS = {"base": CONFIG, "late": CONFIG, "bankrupt": BANKRUPT_CONFIG}


@functools.cache
def _snapshot(kind: str) -> str:
    world = build_bankrupt() if kind == "bankrupt" else build_base()
    if kind == "late":
        while world.day < 16:
            next_day(world)
    return world.state.model_dump_json()


def fresh(kind: str = "base") -> tuple[World, MemorySink]:
    sink = MemorySink()
    state = WorldState.model_validate_json(_snapshot(kind))
    return World(WORLD_CONFIGS[kind], state=state, sink=sink), sink


# --------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Case:
    id: str
    firm: str
    tool: str
    args: Any
    fragment: str | tuple[str, ...]
    world: str = "base"


def C(id: str, firm: str, tool: str, args: Any, fragment: str | tuple[str, ...], world="base"):
    return Case(id, firm, tool, args, fragment, world)


LONG = "x" * 81
NAN, INF = math.nan, math.inf
# Type-valid argument sets for every tool, so that one bad argument is the only problem.
VALID_ARGS: dict[str, dict[str, Any]] = {
    "post_listing": {"item_id": GREEN, "qty": 5, "asking_price": 3.0, "payment_terms_days": 30},
    "view_listings": {"item_id": GREEN, "only_others": True},
    "make_offer": {
        "listing_id": "L1",
        "offered_price": 3.0,
        "qty": 5,
        "payment_terms_days": 30,
        "message": "hi",
    },
    "withdraw_offer": {"offer_id": "O2"},
    "accept_offer": {"offer_id": "O2"},
    "view_offers": {"direction": "all", "limit": 20},
    "view_deals": {"limit": 20},
    "send_message": {
        "recipient": "farmer_A",
        "title": "t",
        "body": "b",
        "ref_listing_id": "L1",
        "ref_offer_id": "O2",
    },
    "view_messages": {"counterparty": "farmer_A", "since_day": 0, "limit": 10},
    "read_message": {"message_id": "M1"},
    "view_payables": {"only_overdue": False, "counterparty": "farmer_A", "limit": 20},
    "view_receivables": {"only_overdue": False, "counterparty": "farmer_A", "limit": 20},
    "pay_invoice": {"invoice_id": "INV1"},
    "return_shipment": {"invoice_id": "INV1", "quantity_kg": 1, "reason": "r"},
    "view_trial_balance": {"period": "current"},
    "view_market_aggregate": {"days_back": 7},
    "wait_for_next_day": {},
    "produce_item": {"item_id": GREEN, "quantity": 1},
    "roast": {"green_item_id": GREEN, "qty_kg": 1},
    "set_retail_price": {"item_id": ROASTED, "price_per_unit": 20.0},
    "view_consumer_sales": {"since_day": 0},
}


def firm_for(tool: str) -> str:
    for role, tools in ROLE_TOOLS.items():
        if tool in tools:
            return FIRM_OF_ROLE[role]
    return "roaster_A"


def _with(tool: str, **change: Any) -> dict[str, Any]:
    return {**VALID_ARGS[tool], **change}


def _without(tool: str, key: str) -> dict[str, Any]:
    return {k: v for k, v in VALID_ARGS[tool].items() if k != key}


# Wrong JSON types, per declared parameter type (values a model could plausibly send).
_BAD_VALUES = {
    "int": [("str", "5"), ("float", 2.5), ("whole_float", 5.0), ("bool", True), ("list", [5])],
    "float": [("str", "3.5"), ("bool", True), ("list", [3.5]), ("dict", {"usd": 3})],
    "str": [("int", 5), ("list", ["x"]), ("bool", False)],
    "bool": [("str", "yes"), ("int", 1), ("list", [True])],
    "literal": [("other", "sideways"), ("int", 1)],
}


def _kind(annotation: Any) -> str:
    """The JSON kind of a tool parameter's annotation."""
    text = str(annotation)
    if "Literal" in text:
        return "literal"
    for name in ("bool", "int", "float", "str"):
        if name in text:
            return name
    raise AssertionError(f"unexpected annotation {annotation!r}")


def _type_cases() -> list[Case]:
    cases = []
    for tool in VALID_ARGS:
        role = next((r for r, ts in ROLE_TOOLS.items() if tool in ts), "roaster")
        spec = toolkit_class(role).tool_specs()[tool]
        for param, info in spec.validator.model_fields.items():
            kind = _kind(info.annotation)
            bads = list(_BAD_VALUES[kind])
            if info.is_required():
                bads.append(("None", None))
            for label, value in bads:
                cases.append(
                    C(
                        f"{tool}-{param}-{label}",
                        firm_for(tool),
                        tool,
                        _with(tool, **{param: value}),
                        ("invalid arguments", f"'{param}'"),
                    )
                )
            if info.is_required():
                cases.append(
                    C(
                        f"{tool}-missing-{param}",
                        firm_for(tool),
                        tool,
                        _without(tool, param),
                        f"missing required argument '{param}'",
                    )
                )
        cases.append(
            C(
                f"{tool}-extra-arg",
                firm_for(tool),
                tool,
                _with(tool, bogus=1),
                "unexpected argument 'bogus'",
            )
        )
        cases.append(
            C(f"{tool}-args-not-object", firm_for(tool), tool, ["x"], "must be a JSON object")
        )
    return cases


_PRICE_CASES = [
    ("zero", 0.0, "must be a positive number"),
    ("negative", -3.0, "must be a positive number"),
    ("nan", NAN, "finite number"),
    ("inf", INF, "finite number"),
    ("minus_inf", -INF, "finite number"),
    ("absurd", 1000.01, "above the allowed maximum"),
    ("absurd_huge", 1e12, "above the allowed maximum"),
    ("sub_cent", 0.004, "rounds to $0.00"),
]
_TERMS_CASES = [("negative", -1), ("too_long", 91), ("absurd", 10_000)]

SEMANTIC: list[Case] = [
    # ---- post_listing
    C(
        "post-unknown-item",
        "farmer_A",
        "post_listing",
        _with("post_listing", item_id="espresso"),
        ("unknown item_id", "espresso"),
    ),
    C(
        "post-qty-zero",
        "farmer_A",
        "post_listing",
        _with("post_listing", qty=0),
        ("qty", "positive"),
    ),
    C(
        "post-qty-negative",
        "farmer_A",
        "post_listing",
        _with("post_listing", qty=-4),
        ("qty", "positive"),
    ),
    C(
        "post-more-than-held",
        "farmer_A",
        "post_listing",
        _with("post_listing", qty=11),
        "you hold only 10 kg",
    ),
    C(
        "post-item-not-held",
        "farmer_A",
        "post_listing",
        _with("post_listing", item_id=ROASTED_SPECIALTY, qty=1),
        "you hold only 0 kg",
    ),
    *[
        C(
            f"post-price-{label}",
            "farmer_A",
            "post_listing",
            _with("post_listing", asking_price=price),
            ("asking_price", frag),
        )
        for label, price, frag in _PRICE_CASES
    ],
    *[
        C(
            f"post-terms-{label}",
            "farmer_A",
            "post_listing",
            _with("post_listing", payment_terms_days=days),
            ("payment_terms_days", "between 0 and 90"),
        )
        for label, days in _TERMS_CASES
    ],
    # ---- view_listings
    C(
        "view-listings-unknown-item",
        "roaster_A",
        "view_listings",
        {"item_id": "tea"},
        "unknown item_id 'tea'",
    ),
    # ---- make_offer
    C(
        "offer-unknown-listing",
        "roaster_B",
        "make_offer",
        _with("make_offer", listing_id="L99"),
        "unknown listing_id 'L99'",
    ),
    C(
        "offer-own-listing",
        "farmer_A",
        "make_offer",
        _with("make_offer", listing_id="L1"),
        "your own listing",
    ),
    C(
        "offer-closed-listing",
        "retailer_B",
        "make_offer",
        _with("make_offer", listing_id="L3", qty=1),
        ("L3", "no longer open"),
    ),
    C("offer-qty-zero", "roaster_B", "make_offer", _with("make_offer", qty=0), ("qty", "positive")),
    C(
        "offer-qty-negative",
        "roaster_B",
        "make_offer",
        _with("make_offer", qty=-1),
        ("qty", "positive"),
    ),
    C(
        "offer-qty-above-listing",
        "roaster_B",
        "make_offer",
        _with("make_offer", qty=11),
        ("qty 11", "10 kg"),
    ),
    C(
        "offer-message-too-long",
        "roaster_B",
        "make_offer",
        _with("make_offer", message="m" * 4001),
        "message is longer",
    ),
    *[
        C(
            f"offer-price-{label}",
            "roaster_B",
            "make_offer",
            _with("make_offer", offered_price=price),
            ("offered_price", frag),
        )
        for label, price, frag in _PRICE_CASES
    ],
    *[
        C(
            f"offer-terms-{label}",
            "roaster_B",
            "make_offer",
            _with("make_offer", payment_terms_days=days),
            ("payment_terms_days", "between 0 and 90"),
        )
        for label, days in _TERMS_CASES
    ],
    # ---- withdraw_offer
    C(
        "withdraw-unknown",
        "roaster_B",
        "withdraw_offer",
        {"offer_id": "O99"},
        "unknown offer_id 'O99'",
    ),
    C(
        "withdraw-others-offer-as-seller",
        "farmer_A",
        "withdraw_offer",
        {"offer_id": "O2"},
        "not yours to withdraw",
    ),
    C(
        "withdraw-others-offer-as-third",
        "roaster_A",
        "withdraw_offer",
        {"offer_id": "O2"},
        "not yours to withdraw",
    ),
    C(
        "withdraw-accepted",
        "roaster_A",
        "withdraw_offer",
        {"offer_id": "O1"},
        ("O1", "accepted, not pending"),
    ),
    C(
        "withdraw-rejected",
        "retailer_B",
        "withdraw_offer",
        {"offer_id": "O5"},
        ("O5", "rejected, not pending"),
    ),
    # ---- accept_offer
    C("accept-unknown", "farmer_A", "accept_offer", {"offer_id": "O99"}, "unknown offer_id 'O99'"),
    C("accept-others-offer", "farmer_B", "accept_offer", {"offer_id": "O2"}, "was not made to you"),
    C("accept-own-bid", "roaster_B", "accept_offer", {"offer_id": "O2"}, "was not made to you"),
    C(
        "accept-twice",
        "farmer_A",
        "accept_offer",
        {"offer_id": "O1"},
        ("O1", "accepted, not pending"),
    ),
    C(
        "accept-rejected",
        "roaster_A",
        "accept_offer",
        {"offer_id": "O5"},
        ("O5", "rejected, not pending"),
    ),
    # ---- view_offers / view_deals
    C("view-offers-limit-zero", "roaster_A", "view_offers", {"limit": 0}, "limit must be"),
    C("view-offers-limit-huge", "roaster_A", "view_offers", {"limit": 101}, "limit must be"),
    C("view-deals-limit-zero", "roaster_A", "view_deals", {"limit": 0}, "limit must be"),
    C("view-deals-limit-negative", "roaster_A", "view_deals", {"limit": -5}, "limit must be"),
    # ---- send_message
    C(
        "msg-to-self",
        "roaster_A",
        "send_message",
        _with("send_message", recipient="roaster_A"),
        "to yourself",
    ),
    C(
        "msg-unknown-firm",
        "roaster_A",
        "send_message",
        _with("send_message", recipient="farmer_C"),
        ("unknown recipient", "farmer_C"),
    ),
    C(
        "msg-title-81",
        "roaster_A",
        "send_message",
        _with("send_message", title=LONG),
        ("title", "81 characters", "80"),
    ),
    C(
        "msg-title-empty",
        "roaster_A",
        "send_message",
        _with("send_message", title=""),
        ("title", "empty"),
    ),
    C(
        "msg-title-blank",
        "roaster_A",
        "send_message",
        _with("send_message", title="   "),
        ("title", "empty"),
    ),
    C(
        "msg-body-too-long",
        "roaster_A",
        "send_message",
        _with("send_message", body="b" * 4001),
        ("body", "4001"),
    ),
    C(
        "msg-unknown-listing-ref",
        "roaster_A",
        "send_message",
        _with("send_message", ref_listing_id="L77"),
        "unknown ref_listing_id 'L77'",
    ),
    C(
        "msg-unknown-offer-ref",
        "roaster_A",
        "send_message",
        _with("send_message", ref_offer_id="O77"),
        "unknown ref_offer_id 'O77'",
    ),
    # ---- view_messages / read_message
    C(
        "view-msgs-unknown-firm",
        "roaster_A",
        "view_messages",
        {"counterparty": "bank"},
        ("unknown counterparty", "bank"),
    ),
    C("view-msgs-limit-zero", "roaster_A", "view_messages", {"limit": 0}, "limit must be"),
    C(
        "read-unknown",
        "roaster_A",
        "read_message",
        {"message_id": "M99"},
        "unknown message_id 'M99'",
    ),
    C(
        "read-others-message",
        "retailer_B",
        "read_message",
        {"message_id": "M1"},
        ("M1", "not yours"),
    ),
    # ---- payables / receivables
    C(
        "payables-unknown-firm",
        "roaster_A",
        "view_payables",
        {"counterparty": "nobody"},
        ("unknown counterparty", "nobody"),
    ),
    C("payables-limit", "roaster_A", "view_payables", {"limit": 0}, "limit must be"),
    C(
        "receivables-unknown-firm",
        "roaster_A",
        "view_receivables",
        {"counterparty": "x"},
        ("unknown counterparty", "'x'"),
    ),
    C("receivables-limit", "roaster_A", "view_receivables", {"limit": 1000}, "limit must be"),
    # ---- pay_invoice
    C(
        "pay-unknown",
        "roaster_A",
        "pay_invoice",
        {"invoice_id": "INV99"},
        "unknown invoice_id 'INV99'",
    ),
    C(
        "pay-others-invoice",
        "roaster_B",
        "pay_invoice",
        {"invoice_id": "INV1"},
        ("INV1", "not yours to pay"),
    ),
    C(
        "pay-own-receivable",
        "farmer_A",
        "pay_invoice",
        {"invoice_id": "INV1"},
        ("INV1", "not yours to pay"),
    ),
    C("pay-twice", "roaster_A", "pay_invoice", {"invoice_id": "INV2"}, ("INV2", "already paid")),
    # ---- return_shipment
    C(
        "return-unknown",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", invoice_id="I9"),
        "unknown invoice_id 'I9'",
    ),
    C(
        "return-others-invoice",
        "retailer_A",
        "return_shipment",
        _with("return_shipment", invoice_id="INV1"),
        ("INV1", "not a delivery to you"),
    ),
    C(
        "return-as-seller",
        "farmer_A",
        "return_shipment",
        _with("return_shipment", invoice_id="INV1"),
        ("INV1", "not a delivery to you"),
    ),
    C(
        "return-zero",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", quantity_kg=0),
        ("quantity_kg", "positive"),
    ),
    C(
        "return-negative",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", quantity_kg=-2),
        ("quantity_kg", "positive"),
    ),
    C(
        "return-more-than-delivered",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", quantity_kg=51),
        ("only 50 kg", "D1"),
    ),
    C(
        "return-more-than-delivered-small-deal",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", invoice_id="INV2", quantity_kg=11),
        ("only 10 kg", "D2"),
    ),
    C(
        "return-more-than-held",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", quantity_kg=45),
        ("you still hold only 33 kg", "deal D1"),  # 50 kg of a 60 kg pool, 20 kg roasted
    ),
    C(
        "return-after-window",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", quantity_kg=1),
        ("14-day return window", "INV1"),
        "late",
    ),
    # ---- view_trial_balance / view_market_aggregate
    C(
        "trial-balance-bad-period",
        "roaster_A",
        "view_trial_balance",
        {"period": "last_week"},
        ("'period'", "invalid arguments"),
    ),
    C(
        "market-days-zero",
        "roaster_A",
        "view_market_aggregate",
        {"days_back": 0},
        ("days_back", "between 1 and 90"),
    ),
    C(
        "market-days-huge",
        "roaster_A",
        "view_market_aggregate",
        {"days_back": 91},
        ("days_back", "between 1 and 90"),
    ),
    # ---- produce_item (farmer_B: 5 kg of green cap left today, 5 kg of inventory headroom)
    C(
        "produce-unknown-item",
        "farmer_B",
        "produce_item",
        _with("produce_item", item_id="cocoa"),
        "unknown item_id 'cocoa'",
    ),
    C(
        "produce-roasted",
        "farmer_B",
        "produce_item",
        _with("produce_item", item_id=ROASTED),
        "unknown item_id 'roasted_coffee_kg'",
    ),
    C(
        "produce-zero",
        "farmer_B",
        "produce_item",
        _with("produce_item", quantity=0),
        ("quantity", "positive"),
    ),
    C(
        "produce-negative",
        "farmer_B",
        "produce_item",
        _with("produce_item", quantity=-10),
        ("quantity", "positive"),
    ),
    C(
        "produce-above-daily-cap",
        "farmer_B",
        "produce_item",
        _with("produce_item", quantity=6),
        ("daily cap", "5 more kg"),
    ),
    C(
        "produce-above-daily-cap-fresh",
        "farmer_A",
        "produce_item",
        _with("produce_item", quantity=31),
        ("daily cap", "30 more kg"),
    ),
    C(
        "produce-beyond-inventory-cap",
        "farmer_B",
        "produce_item",
        _with("produce_item", item_id=GREEN_SPECIALTY, quantity=6),
        ("inventory cap", "room for 5 kg"),
    ),
    # ---- roast (roaster_A: holds 40 kg green, 30 kg of today's cap left; 0 kg specialty)
    C(
        "roast-unknown-item",
        "roaster_A",
        "roast",
        _with("roast", green_item_id="beans"),
        ("unknown green_item_id", "'beans'"),
    ),
    C(
        "roast-roasted-item",
        "roaster_A",
        "roast",
        _with("roast", green_item_id=ROASTED),
        "unknown green_item_id 'roasted_coffee_kg'",
    ),
    C("roast-zero", "roaster_A", "roast", _with("roast", qty_kg=0), ("qty_kg", "positive")),
    C("roast-negative", "roaster_A", "roast", _with("roast", qty_kg=-1), ("qty_kg", "positive")),
    C(
        "roast-above-daily-cap",
        "roaster_A",
        "roast",
        _with("roast", qty_kg=51),
        ("roasting capacity", "30 kg"),
    ),
    C(
        "roast-above-remaining-cap",
        "roaster_A",
        "roast",
        _with("roast", qty_kg=31),
        ("roasting capacity", "30 kg"),
    ),
    C(
        "roast-more-than-held",
        "roaster_A",
        "roast",
        _with("roast", green_item_id=GREEN_SPECIALTY, qty_kg=1),
        "you hold only 0 kg",
    ),
    C(
        "roast-more-than-held-other-roaster",
        "roaster_B",
        "roast",
        _with("roast", qty_kg=5),
        "you hold only 0 kg of green_coffee_kg",
    ),
    # ---- set_retail_price / view_consumer_sales
    C(
        "price-unknown-item",
        "retailer_A",
        "set_retail_price",
        _with("set_retail_price", item_id=GREEN),
        "unknown item_id 'green_coffee_kg'",
    ),
    C(
        "price-negative",
        "retailer_A",
        "set_retail_price",
        _with("set_retail_price", price_per_unit=-1.0),
        ("price_per_unit", "negative"),
    ),
    C(
        "price-nan",
        "retailer_A",
        "set_retail_price",
        _with("set_retail_price", price_per_unit=NAN),
        ("price_per_unit", "finite"),
    ),
    C(
        "price-inf",
        "retailer_A",
        "set_retail_price",
        _with("set_retail_price", price_per_unit=INF),
        ("price_per_unit", "finite"),
    ),
    C(
        "price-absurd",
        "retailer_A",
        "set_retail_price",
        _with("set_retail_price", price_per_unit=1000.5),
        ("price_per_unit", "maximum"),
    ),
    C(
        "price-sub-cent",
        "retailer_A",
        "set_retail_price",
        _with("set_retail_price", price_per_unit=0.001),
        ("price_per_unit", "$0.00"),
    ),
    # ---- dealing with a bankrupt firm (world "bankrupt")
    C(
        "return-to-bankrupt-seller",
        "roaster_A",
        "return_shipment",
        _with("return_shipment", quantity_kg=1),
        ("farmer_B is bankrupt", "returns"),
        "bankrupt",
    ),
    C(
        "msg-to-bankrupt",
        "roaster_A",
        "send_message",
        _with("send_message", recipient="farmer_B", ref_listing_id=None, ref_offer_id=None),
        ("farmer_B", "bankrupt"),
        "bankrupt",
    ),
    C(
        "offer-on-bankrupt-listing",
        "roaster_A",
        "make_offer",
        _with("make_offer", listing_id="L1", qty=1),
        ("L1", "no longer open (closed)"),
        "bankrupt",
    ),
    # ---- role tools called by the wrong role, and unknown tools
    *[
        C(f"wrong-role-{firm}-{tool}", firm, tool, VALID_ARGS[tool], f"unknown tool '{tool}'")
        for firm, tools in {
            "farmer_A": ("roast", "set_retail_price", "view_consumer_sales"),
            "roaster_A": ("produce_item", "set_retail_price", "view_consumer_sales"),
            "retailer_A": ("produce_item", "roast"),
        }.items()
        for tool in tools
    ],
    *[
        C(f"unknown-tool-{i}", "roaster_A", name, {}, f"unknown tool '{name}'")
        for i, name in enumerate(
            ["buy_coffee", "", "Post_Listing", "post_listing ", "call", "specs", "__init__"]
        )
    ],
]

ALL_CASES = _type_cases() + SEMANTIC

# A float parameter given as an integer too big for a float (json.loads("1e999") is inf, but
# json.loads("1" + "0" * 400) is an int) must be an error result, not an OverflowError.
OVERFLOW_CASES = [
    pytest.param(
        C(f"{tool}-{param}-huge-int", firm_for(tool), tool, _with(tool, **{param: 10**400}), param),
        id=f"{tool}-{param}-huge-int",
    )
    for tool, param in (
        ("post_listing", "asking_price"),
        ("make_offer", "offered_price"),
        ("set_retail_price", "price_per_unit"),
    )
]

PARAMS = [pytest.param(c, id=c.id) for c in ALL_CASES] + OVERFLOW_CASES


def test_every_tool_has_cases() -> None:
    """The table covers all 17 common tools, the 4 role tools and every parameter."""
    tools_seen = {c.tool for c in ALL_CASES}
    assert set(COMMON_TOOLS) <= tools_seen
    assert {t for ts in ROLE_TOOLS.values() for t in ts} <= tools_seen
    for role in ROLE_TOOLS:
        specs = toolkit_class(role).tool_specs()
        assert set(specs) == set(COMMON_TOOLS) | set(ROLE_TOOLS[role]), role
        for name, spec in specs.items():
            assert set(spec.validator.model_fields) == set(VALID_ARGS[name]), name
    assert len({c.id for c in ALL_CASES}) == len(ALL_CASES)


@pytest.mark.parametrize("world_kind", ["base", "late"])
def test_valid_args_table_is_accepted(world_kind: str) -> None:
    """Sanity of the table: the 'valid' argument sets succeed, so each case has one fault."""
    for tool, args in VALID_ARGS.items():
        if tool in ("return_shipment", "pay_invoice", "accept_offer", "withdraw_offer"):
            continue  # stateful: exercised as boundaries below
        world, _ = fresh(world_kind)
        result = world.toolkit(firm_for(tool)).call(tool, args)
        assert result["status"] == "success", (tool, result)


def _fragments(case: Case) -> tuple[str, ...]:
    return (case.fragment,) if isinstance(case.fragment, str) else case.fragment


@pytest.mark.parametrize("case", PARAMS)
def test_bad_input_is_an_error_result_and_changes_nothing(case: Case) -> None:
    world, sink = fresh(case.world)
    before = world.state.model_dump_json()
    result = world.toolkit(case.firm).call(case.tool, case.args)
    assert result["status"] == "error", result
    assert set(result) == {"status", "error"}
    for fragment in _fragments(case):
        assert fragment in result["error"], (fragment, result["error"])
    assert world.state.model_dump_json() == before
    assert sink.events == []


def _expected_after_act(before: str, firm: str, tool: str, minutes: int) -> WorldState:
    """The state after an erroneous call through World.act: only clock and counters move."""
    state = WorldState.model_validate_json(before)
    f = state.firms[firm]
    f.clock.minute += minutes
    f.clock.actions_today += 1
    f.clock.acted_today = True
    if tool in toolkit_class(f.role).tool_specs():
        f.tool_calls[tool] = f.tool_calls.get(tool, 0) + 1
    else:  # an unknown name, or another role's tool: counted apart
        f.unknown_tool_calls += 1
    state.counters.event += 1
    return state


@pytest.mark.parametrize("case", PARAMS)
def test_bad_input_through_act_costs_30_minutes_and_nothing_else(case: Case) -> None:
    world, sink = fresh(case.world)
    firm = world.firm(case.firm)
    assert world.can_act(firm) and firm.clock.minute == 9 * 60
    before = world.state.model_dump_json()
    result = world.act(case.firm, ToolCall(case.tool, case.args))
    assert result["status"] == "error"
    for fragment in _fragments(case):
        assert fragment in result["error"]
    minutes = WORLD_CONFIGS[case.world].economy.minutes_per_tool
    expected = _expected_after_act(before, case.firm, case.tool, minutes)
    assert json.loads(world.state.model_dump_json()) == json.loads(expected.model_dump_json())
    assert firm.clock.minute == 9 * 60 + 30 and not firm.clock.parked
    assert len(sink.events) == 1
    event = sink.events[0]
    assert event["type"] == "tool_call" and event["firm"] == case.firm
    assert event["tool"] == case.tool and event["result"] == result


def test_erroneous_wait_is_not_a_wait() -> None:
    """wait_for_next_day with a bad argument costs 30 minutes and does not park the firm."""
    world, _ = fresh()
    result = world.act("retailer_B", ToolCall("wait_for_next_day", {"days": 3}))
    assert result["status"] == "error" and "unexpected argument 'days'" in result["error"]
    clock = world.firm("retailer_B").clock
    assert (clock.minute, clock.parked, clock.actions_today) == (9 * 60 + 30, False, 1)


def test_errors_exhaust_the_day_like_any_call() -> None:
    """20 erroneous calls use the whole business day; a 21st is refused by the world."""
    world, _ = fresh()
    before = world.state.firms["farmer_A"].model_copy(deep=True)
    for _ in range(CONFIG.economy.actions_per_day):
        assert world.act("farmer_A", ToolCall("no_such_tool", {}))["status"] == "error"
    firm = world.firm("farmer_A")
    assert firm.clock.minute == 19 * 60 and firm.clock.actions_today == 20
    assert not world.can_act(firm)
    with pytest.raises(RuntimeError, match="cannot act"):
        world.act("farmer_A", ToolCall("no_such_tool", {}))
    assert firm.cash == before.cash and firm.stock == before.stock and firm.books == before.books


# --------------------------------------------------------------------------- boundaries
@pytest.mark.parametrize(
    ("firm", "tool", "args"),
    [
        ("farmer_A", "post_listing", _with("post_listing", qty=10, payment_terms_days=0)),
        ("farmer_A", "post_listing", _with("post_listing", qty=10, payment_terms_days=90)),
        ("farmer_A", "post_listing", _with("post_listing", asking_price=22.5)),  # the ceiling
        ("farmer_A", "post_listing", _with("post_listing", asking_price=3)),  # int for float
        ("roaster_B", "make_offer", _with("make_offer", qty=10, offered_price=0.01)),
        ("roaster_A", "send_message", _with("send_message", title="t" * 80)),
        ("roaster_A", "return_shipment", _with("return_shipment", quantity_kg=33)),  # all held
        ("roaster_A", "roast", _with("roast", qty_kg=30)),
        ("farmer_B", "produce_item", _with("produce_item", quantity=5)),
        ("farmer_B", "produce_item", _with("produce_item", item_id=GREEN_SPECIALTY, quantity=5)),
        ("retailer_A", "set_retail_price", _with("set_retail_price", price_per_unit=0.0)),
        ("retailer_A", "set_retail_price", _with("set_retail_price", price_per_unit=1000)),
        ("roaster_B", "withdraw_offer", {"offer_id": "O2"}),
        ("farmer_A", "accept_offer", {"offer_id": "O2"}),
        ("roaster_A", "pay_invoice", {"invoice_id": "INV1"}),
        ("roaster_A", "view_trial_balance", {"period": "yesterday"}),
    ],
)
def test_boundary_values_are_accepted(firm: str, tool: str, args: dict[str, Any]) -> None:
    world, _ = fresh()
    before = world.state.model_dump_json()
    result = world.toolkit(firm).call(tool, args)
    assert result["status"] == "success", result
    if tool.startswith("view_"):
        assert world.state.model_dump_json() == before
    else:
        assert world.state.model_dump_json() != before


def test_return_window_boundary() -> None:
    """Day 15 is the 14th day after INV1's issue (day 1): still returnable; day 16 is not."""
    world, _ = fresh()
    while world.day < 15:
        next_day(world)
    result = world.toolkit("roaster_A").call("return_shipment", _with("return_shipment"))
    assert result["status"] == "success", result
    assert result["returned_kg"] == 1 and result["credit"] == 3.0
    late, _ = fresh("late")
    result = late.toolkit("roaster_A").call("return_shipment", _with("return_shipment"))
    assert result["status"] == "error" and "window" in result["error"]


def test_no_yesterday_on_day_zero() -> None:
    world = World(CONFIG, sink=MemorySink())
    world.start_day()
    before = world.state.model_dump_json()
    result = world.toolkit("roaster_A").call("view_trial_balance", {"period": "yesterday"})
    assert result == {"status": "error", "error": "there is no yesterday yet"}
    assert world.state.model_dump_json() == before


def test_cash_shortfalls_are_errors() -> None:
    """Producing, roasting and paying beyond one's cash are errors that change nothing."""
    econ = CONFIG.economy
    poor = econ.model_copy(
        update={
            "farmer": econ.farmer.model_copy(update={"cash": 60.0}),
            "roaster": econ.roaster.model_copy(
                update={"cash": 70.0, "start_item": GREEN, "start_qty": 30, "start_unit_cost": 2.0}
            ),
            "retailer": econ.retailer.model_copy(update={"cash": 100.0}),
        }
    )
    world = World(RunConfig(seed=0, economy=poor), sink=MemorySink())
    world.start_day()
    ok(world, "farmer_A", "post_listing", item_id=GREEN, qty=30, asking_price=3.0)
    ok(world, "retailer_A", "make_offer", listing_id="L1", offered_price=3.0, qty=30)
    ok(world, "farmer_A", "accept_offer", offer_id="O1")
    for item in (ROASTED, ROASTED_SPECIALTY):  # no consumer revenue tonight
        ok(world, "retailer_A", "set_retail_price", item_id=item, price_per_unit=0)
    next_day(world)  # day 1: farmers $10, roasters $10, retailers $0 (not bankrupt)
    assert [world.firm(f).cash for f in ("farmer_B", "roaster_A", "retailer_A")] == [1000] * 2 + [0]
    assert not any(f.bankrupt for f in world.state.firms.values())
    cases = [
        ("farmer_B", "produce_item", {"item_id": GREEN, "quantity": 6}, "not enough cash"),
        ("roaster_A", "roast", {"green_item_id": GREEN, "qty_kg": 4}, "not enough cash"),
        ("retailer_A", "pay_invoice", {"invoice_id": "INV1"}, "not enough cash"),
    ]
    for firm, tool, args, fragment in cases:
        before = world.state.model_dump_json()
        result = world.toolkit(firm).call(tool, args)
        assert result["status"] == "error" and fragment in result["error"], result
        assert world.state.model_dump_json() == before
    # The same calls within the cash succeed (the shortfall was the only problem).
    ok(world, "farmer_B", "produce_item", item_id=GREEN, quantity=5)
    ok(world, "roaster_A", "roast", green_item_id=GREEN, qty_kg=3)


def test_bad_input_in_the_jsonl_event_log_is_not_fatal(tmp_path: Path) -> None:
    """A wrongly typed argument is rejected; the event log records the call as valid JSON."""
    world = World(CONFIG, sink=JsonlSink(tmp_path / "events.jsonl"))
    world.start_day()
    result = world.act("farmer_A", ToolCall("post_listing", _with("post_listing", qty="x")))
    assert result["status"] == "error"
    world.sink.close()
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["tool"] == "post_listing"


@pytest.mark.parametrize("value", [NAN, INF])
def test_non_finite_argument_through_act_with_jsonl_sink(tmp_path: Path, value: float) -> None:
    """A NaN/inf argument is an error result and a valid JSON log line, never a crash."""
    world = World(CONFIG, sink=JsonlSink(tmp_path / "events.jsonl"))
    world.start_day()
    result = world.act(
        "farmer_A", ToolCall("post_listing", _with("post_listing", asking_price=value))
    )
    assert result["status"] == "error" and "finite" in result["error"]
    world.sink.close()
    last = json.loads((tmp_path / "events.jsonl").read_text().splitlines()[-1])
    assert last["type"] == "tool_call" and last["result"] == result


def test_a_bankrupt_firm_cannot_act() -> None:
    world, _ = fresh("bankrupt")
    before = world.state.model_dump_json()
    assert not world.can_act(world.firm("farmer_B"))
    with pytest.raises(RuntimeError, match="cannot act"):
        world.act("farmer_B", ToolCall("post_listing", _with("post_listing")))
    assert world.state.model_dump_json() == before
    # Paying a bankrupt creditor is still allowed: the debt is real.
    assert ok(world, "roaster_A", "pay_invoice", invoice_id="INV1")["paid"] == 60.0
