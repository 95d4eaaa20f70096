"""The tool catalogue: 17 common tools, 4 role tools, documented schemas."""

from __future__ import annotations

import pytest

from econbench.coffee.toolkit import FirmTools, toolkit_class

COMMON = {
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
}
ROLE = {
    "farmer": {"produce_item"},
    "roaster": {"roast"},
    "retailer": {"set_retail_price", "view_consumer_sales"},
}


def test_common_tools_are_the_seventeen_of_the_spec() -> None:
    assert set(FirmTools.tool_specs()) == COMMON
    assert len(COMMON) == 17


@pytest.mark.parametrize("role", sorted(ROLE))
def test_each_role_adds_exactly_its_tools(role: str) -> None:
    assert set(toolkit_class(role).tool_specs()) == COMMON | ROLE[role]


@pytest.mark.parametrize("role", sorted(ROLE))
def test_every_parameter_of_every_tool_is_described(role: str) -> None:
    for spec in toolkit_class(role).tool_specs().values():
        assert spec.description, spec.name
        assert spec.undocumented == [], f"{spec.name}: undocumented {spec.undocumented}"
        schema = spec.openai_schema()["function"]["parameters"]
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{name}"


def test_tools_are_tagged_read_or_write() -> None:
    specs = toolkit_class("retailer").tool_specs()
    assert specs["view_listings"].kind == "read"
    assert specs["accept_offer"].kind == "write"
    assert specs["set_retail_price"].kind == "write"


def test_schemas_have_types_defaults_and_enums() -> None:
    specs = FirmTools.tool_specs()
    offer = specs["make_offer"].openai_schema()["function"]["parameters"]
    assert offer["required"] == ["listing_id", "offered_price", "qty"]
    assert offer["properties"]["qty"]["type"] == "integer"
    assert offer["properties"]["offered_price"]["type"] == "number"
    assert offer["properties"]["payment_terms_days"]["default"] == 30
    direction = specs["view_offers"].openai_schema()["function"]["parameters"]
    assert direction["properties"]["direction"]["enum"] == ["incoming", "outgoing", "all"]
