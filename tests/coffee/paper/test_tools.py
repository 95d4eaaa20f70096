"""The paper tools as the model meets them (the reference's ``util.py``, ``ToolSpec.from_function``,
``main._collect_tools`` and ``Agent._execute_tool`` / ``_coerce_input`` /
``_stringify_tool_result``).

Catalogues, schemas and description digests were captured from the reference itself
(CoffeeBench 71442fb on Python 3.12): ``ToolSpec.from_function(bound_method)`` for every tool
of every role.
"""

import hashlib
from typing import Any

import pytest

from econbench.coffee.paper.books import TOOL_METHOD_NAMES, FirmBooks
from econbench.coffee.paper.economy import build_economy
from econbench.coffee.paper.tools import (
    COMMON_TOOL_NAMES,
    ROLE_TOOL_NAMES,
    coerce_input,
    description,
    execute,
    parameters_schema,
    result_text,
    tool_names,
    tool_specs,
)

REFERENCE_CATALOGUES = {
    "farmer": [
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
        "produce_item",
    ],
    "roaster": [
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
        "roast",
    ],
    "retailer": [
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
        "set_retail_price",
        "view_consumer_sales",
    ],
}

REFERENCE_SCHEMAS = {
    "post_listing": {
        "type": "object",
        "properties": {
            "item_id": {
                "type": "string",
            },
            "qty": {
                "type": "integer",
            },
            "asking_price": {
                "type": "number",
            },
            "payment_terms_days": {
                "type": "integer",
            },
        },
        "required": [
            "item_id",
            "qty",
            "asking_price",
        ],
    },
    "view_listings": {
        "type": "object",
        "properties": {
            "item_id": {
                "type": "string",
            },
            "only_others": {
                "type": "boolean",
            },
        },
        "required": [],
    },
    "make_offer": {
        "type": "object",
        "properties": {
            "listing_id": {
                "type": "string",
            },
            "offered_price": {
                "type": "number",
            },
            "qty": {
                "type": "integer",
            },
            "payment_terms_days": {
                "type": "integer",
            },
            "message": {
                "type": "string",
            },
        },
        "required": [
            "listing_id",
            "offered_price",
            "qty",
        ],
    },
    "withdraw_offer": {
        "type": "object",
        "properties": {
            "offer_id": {
                "type": "string",
            },
        },
        "required": [
            "offer_id",
        ],
    },
    "accept_offer": {
        "type": "object",
        "properties": {
            "offer_id": {
                "type": "string",
            },
        },
        "required": [
            "offer_id",
        ],
    },
    "view_offers": {
        "type": "object",
        "properties": {
            "direction": {
                "type": "string",
            },
        },
        "required": [],
    },
    "view_deals": {
        "type": "object",
        "properties": {},
        "required": [],
    },
    "send_message": {
        "type": "object",
        "properties": {
            "recipient": {
                "type": "string",
            },
            "title": {
                "type": "string",
            },
            "body": {
                "type": "string",
            },
            "ref_listing_id": {
                "type": "string",
            },
            "ref_offer_id": {
                "type": "string",
            },
        },
        "required": [
            "recipient",
            "title",
            "body",
        ],
    },
    "view_messages": {
        "type": "object",
        "properties": {
            "counterparty": {
                "type": "string",
            },
            "since_day": {
                "type": "integer",
            },
            "limit": {
                "type": "integer",
            },
        },
        "required": [],
    },
    "read_message": {
        "type": "object",
        "properties": {
            "message_id": {
                "type": "string",
            },
        },
        "required": [
            "message_id",
        ],
    },
    "view_payables": {
        "type": "object",
        "properties": {
            "only_overdue": {
                "type": "boolean",
            },
            "counterparty": {
                "type": "string",
            },
            "limit": {
                "type": "integer",
            },
        },
        "required": [],
    },
    "view_receivables": {
        "type": "object",
        "properties": {
            "only_overdue": {
                "type": "boolean",
            },
            "counterparty": {
                "type": "string",
            },
            "limit": {
                "type": "integer",
            },
        },
        "required": [],
    },
    "pay_invoice": {
        "type": "object",
        "properties": {
            "invoice_id": {
                "type": "string",
            },
        },
        "required": [
            "invoice_id",
        ],
    },
    "return_shipment": {
        "type": "object",
        "properties": {
            "invoice_id": {
                "type": "string",
            },
            "quantity_kg": {
                "type": "integer",
            },
            "reason": {
                "type": "string",
            },
        },
        "required": [
            "invoice_id",
            "quantity_kg",
        ],
    },
    "view_trial_balance": {
        "type": "object",
        "properties": {
            "period": {
                "type": "string",
            },
        },
        "required": [],
    },
    "view_market_aggregate": {
        "type": "object",
        "properties": {
            "days_back": {
                "type": "integer",
            },
        },
        "required": [],
    },
    "wait_for_next_day": {
        "type": "object",
        "properties": {},
        "required": [],
    },
    "produce_item": {
        "type": "object",
        "properties": {
            "item_id": {
                "type": "string",
            },
            "quantity": {
                "type": "integer",
            },
        },
        "required": [
            "item_id",
            "quantity",
        ],
    },
    "roast": {
        "type": "object",
        "properties": {
            "green_item_id": {
                "type": "string",
            },
            "qty_kg": {
                "type": "integer",
            },
        },
        "required": [
            "green_item_id",
            "qty_kg",
        ],
    },
    "set_retail_price": {
        "type": "object",
        "properties": {
            "item_id": {
                "type": "string",
            },
            "price_per_unit": {
                "type": "number",
            },
        },
        "required": [
            "item_id",
            "price_per_unit",
        ],
    },
    "view_consumer_sales": {
        "type": "object",
        "properties": {
            "since_day": {
                "type": "integer",
            },
        },
        "required": [],
    },
}

REFERENCE_DESCRIPTION_SHA256 = {
    "post_listing": "b473063fd27186cea5f0d5a1dc490f52aabee2f521162ea6b6532b594c01b587",
    "view_listings": "1d3cc32101e6b2627068178548131b8462999a276dd93e5612423e9ddccad778",
    "make_offer": "af2fc9af927fc53ac2b4f621b655e0a6672a681780e08734db38128663cec613",
    "withdraw_offer": "0f66ecde098d1799140be2051e4145e758df70f5fdd71ea08b8798f6a9a31c26",
    "accept_offer": "8aacbe3372891db97a531bc0da6a8308e7c3e04fc946965d32f8bec47a2e0224",
    "view_offers": "1139bab8f694b36538e9aac260317010b9060ce1d1c638b663470c4ae74855aa",
    "view_deals": "bccc5dc71e5dd91d49d0cdaec18166234527ce84960876c0fbe86ce2f5b66f13",
    "send_message": "e2d08e90cab3acc288ed12f75b2fdf098c7a122e07e6beda82d8b62c26b51929",
    "view_messages": "c37b9cba2c921f042bb4dcaa5d45cdc4dd3a4983656790dcc00147fbb1779b7e",
    "read_message": "4a60b6235decc31ca50fb5e732be60a4fb16bd266d0f4ca0bbd08c771ad3f988",
    "view_payables": "3beb8186109e91caec790a4704002f21410077ae61eb50f702d49f6c8183fb5a",
    "view_receivables": "7ba48f6693ead808e826ad4c2b4fdd7fba4897338b9e1e631e0cf7dc193dbf30",
    "pay_invoice": "fec1a1cfda30232bc3e4e4236bff4303a9ae9238f8e09f9959052521e6e33402",
    "return_shipment": "24e54f67c652dd0e034b8f89b104e42fddabb800556b4c66c6176ca76ee15d84",
    "view_trial_balance": "d32f9261fa687f4fdc8871f033ada72d38d4d3f01ebe9f15943e01fd02034622",
    "view_market_aggregate": "1258bcbd15c315119e08b686b7930b600770b23ee43650b4d851f8a14577d987",
    "wait_for_next_day": "9b8877028fa2b9645b02c2b863e8bacfa6e5e9a211c5ce5c5c187e35a3fe6a01",
    "produce_item": "c58c5785b3656e472a5e5f000ca872263e058c3299044414fbd69fff0cc3542b",
    "roast": "94cce2036e3afb2344444922e0377a4e6cc6c1675ec93906ea834449b706e72b",
    "set_retail_price": "44fcc48eded52896e70c9d66c01900eb6278337f96bd3cd594a9626638f3c897",
    "view_consumer_sales": "16f7fe55a845afd1da93087b2978494daa23912a71a7951d1b9a92f03179e980",
}

WAIT_DESCRIPTION = (
    "Signal you have nothing more to do right now and want to\n        sleep u"
    "ntil something happens for you.\n\n        You will be woken automatically"
    " when an external event lands\n        for you within today's business ho"
    "urs: a new direct message\n        arrives, "
    "a counterparty accepts one of your offers, "
    "a shipment\n        you are expecting is delivered, "
    "or your in-flight production\n        completes. If no event fires for yo"
    "u, "
    "you stay asleep until\n        tomorrow's morning observation. This is th"
    "e cost-efficient way\n        to end your turn — you spend zero LLM calls"
    " while sleeping."
)

ACCEPT_DESCRIPTION = (
    "Accept an offer made on YOUR listing. Creates a binding deal: inventory "
    "transfers next day, "
    "an invoice is issued (your AR / buyer's AP) with the agreed payment term"
    "s.\n\n        Args:\n            offer_id: pending offer on a listing you o"
    "wn."
)


@pytest.fixture(scope="module")
def economy_books() -> dict[str, FirmBooks]:
    return build_economy(7, 10).business_apps


def test_catalogue_per_role_is_the_references(economy_books: dict[str, FirmBooks]) -> None:
    for aid in ("farmer_A", "roaster_A", "retailer_A"):
        books = economy_books[aid]
        assert tool_names(books.role) == REFERENCE_CATALOGUES[books.role]
        assert [s.name for s in tool_specs(books)] == REFERENCE_CATALOGUES[books.role]
    assert tool_names("ceo") == list(COMMON_TOOL_NAMES)
    offered = set(COMMON_TOOL_NAMES).union(*ROLE_TOOL_NAMES.values())
    assert offered == set(TOOL_METHOD_NAMES)


def test_specs_carry_the_reference_schema_and_description(
    economy_books: dict[str, FirmBooks],
) -> None:
    seen = set()
    for aid in ("farmer_A", "roaster_A", "retailer_A"):
        for spec in tool_specs(economy_books[aid]):
            seen.add(spec.name)
            assert spec.parameters == REFERENCE_SCHEMAS[spec.name], spec.name
            # Nothing added or reordered: the same JSON text as the reference's schema.
            assert list(spec.parameters) == ["type", "properties", "required"]
            assert list(spec.parameters["properties"]) == list(
                REFERENCE_SCHEMAS[spec.name]["properties"]
            )
            digest = hashlib.sha256(spec.description.encode()).hexdigest()
            assert digest == REFERENCE_DESCRIPTION_SHA256[spec.name], spec.name
            function = spec.openai_schema()["function"]
            assert function["parameters"] == REFERENCE_SCHEMAS[spec.name]
            assert function["description"] == spec.description
    assert seen == set(REFERENCE_SCHEMAS)


def test_descriptions_keep_the_docstring_layout() -> None:
    """``(func.__doc__ or "").strip()``: continuation lines keep their eight spaces."""
    assert description(FirmBooks.wait_for_next_day) == WAIT_DESCRIPTION
    assert description(FirmBooks.accept_offer) == ACCEPT_DESCRIPTION
    assert description(FirmBooks.withdraw_offer) == (
        "Withdraw an offer YOU previously made (only while it's still pending)."
    )


def test_schema_of_unannotated_and_union_parameters() -> None:
    def f(a, b: int | None = None, c: list[int] = None, *args: Any, **kw: Any) -> None:  # noqa: RUF013
        """Doc."""

    assert parameters_schema(f) == {
        "type": "object",
        # The first argument of any generic counts, as in the reference: list[int] is "integer".
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
        "required": ["a"],
    }


def test_coercion_of_numeric_strings() -> None:
    books = FirmBooks.__new__(FirmBooks)
    assert coerce_input(books.post_listing, {"qty": "5", "asking_price": "5", "item_id": "7"}) == {
        "qty": 5,
        "asking_price": 5.0,
        "item_id": "7",
    }
    assert coerce_input(books.post_listing, {"qty": "5.5", "asking_price": "x"}) == {
        "qty": "5.5",
        "asking_price": "x",
    }
    assert coerce_input(books.view_messages, {"since_day": "3", "limit": " 4 ", "zz": "1"}) == {
        "since_day": 3,
        "limit": 4,
        "zz": "1",
    }
    assert coerce_input(books.view_listings, {"only_others": "false", "item_id": 3}) == {
        "only_others": "false",
        "item_id": 3,
    }


def test_execute_failures_read_as_the_references(economy_books: dict[str, FirmBooks]) -> None:
    farmer = economy_books["farmer_A"]
    assert execute(farmer, "roast", {}) == {
        "status": "error",
        "message": "Unknown action 'roast'. Pick one of the registered tools.",
    }
    assert execute(farmer, "_today", {})["message"] == (
        "Unknown action '_today'. Pick one of the registered tools."
    )
    assert execute(farmer, "post_listing", {"item_id": "green_coffee_kg"})["message"] == (
        "Tool call failed: TypeError: BusinessApp.post_listing() missing 2 required positional "
        "arguments: 'qty' and 'asking_price'. Check the tool's required parameters and types, "
        "then try again."
    )
    assert execute(farmer, "view_deals", {"x": 1})["message"] == (
        "Tool call failed: TypeError: BusinessApp.view_deals() got an unexpected keyword "
        "argument 'x'. Check the tool's required parameters and types, then try again."
    )
    assert execute(farmer, "view_listings", None)["status"] == "success"
    assert execute(farmer, "read_message", {"message_id": ["a"]})["message"] == (
        "Message '['a']' not visible to you or unknown id."
    )
    assert execute(farmer, "post_listing", {"item_id": ["a"], "qty": 1, "asking_price": 1}) == {
        "status": "error",
        "message": "Tool call failed: TypeError: unhashable type: 'list'. Check the tool's "
        "required parameters and types, then try again.",
    }


def test_result_text_is_the_references() -> None:
    assert [
        result_text(x) for x in ["plain", {"a": {1}}, {"é": "—", "n": None, "f": 1.0}, [1, "x"], 3]
    ] == ["plain", '{"a": "{1}"}', '{"\\u00e9": "\\u2014", "n": null, "f": 1.0}', '[1, "x"]', "3"]
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert result_text(loop) == "{'self': {...}}"
