"""Every tool schema econbench offers a model is a valid JSON Schema that each provider takes,
and names as required only what it declares (issue 25: ``send_message`` lost its ``title``).

All tools of both benchmarks: the six CoffeeBench firms' toolkits, and AlloBench's tools for
every rung of every condition. Checked: the JSON Schema 2020-12 meta-schema; every object's
``required`` names among its ``properties``; what each provider is sent (OpenAI's function
tools, Anthropic's ``input_schema``, Gemini's function declarations) keeps every parameter;
and a model that fills exactly the schema's properties is obeyed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.coffee.conftest import make_world

from econbench.agents.models.gemini_provider import to_gemini_schema
from econbench.agents.tools import ToolSpec
from econbench.allo.conditions import CONDITIONS
from econbench.allo.sandbox import Sandbox
from econbench.allo.stream import generate_stream
from econbench.coffee.config import FIRMS
from econbench.coffee.toolkit import toolkit_for

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What OpenAI, Anthropic and Gemini all accept as a function name."""


@cache
def coffee_tools() -> dict[str, ToolSpec]:
    world, _ = make_world(seed=0, days=5)
    return {
        f"coffee/{firm}/{spec.name}": spec
        for firm in FIRMS
        for spec in toolkit_for(world, firm).specs()
    }


@cache
def allo_tools() -> dict[str, ToolSpec]:
    stream = generate_stream(2000)
    out: dict[str, ToolSpec] = {}
    for condition in CONDITIONS.values():
        for rung, setup in condition.rungs.items():
            extra = {"sandbox": Sandbox()} if setup.framing == "r3" else {}
            framing = condition.framing(rung, **extra)
            for cost in (0.0, 10.0):
                for spec in framing.episode(stream, cost, 3).tools():
                    out[f"allo/{condition.name}/{rung}/k{cost:g}/{spec.name}"] = spec
    return out


def all_tools() -> dict[str, ToolSpec]:
    return {**coffee_tools(), **allo_tools()}


def objects(schema: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema inside ``schema`` (properties, items, anyOf …, definitions)."""
    if isinstance(schema, list):
        for i, sub in enumerate(schema):
            yield from objects(sub, f"{where}[{i}]")
        return
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "object" or "properties" in schema:
        yield where or "(root)", schema
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(
            value, dict
        ):
            for name, sub in value.items():
                yield from objects(sub, f"{where}.{key}.{name}")
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            yield from objects(value, f"{where}.{key}")


def test_the_tool_sets_are_all_there() -> None:
    names = {key.rsplit("/", 1)[1] for key in coffee_tools()}
    assert {"send_message", "make_offer", "view_listings", "wait_for_next_day"} <= names
    assert len(coffee_tools()) > 60 and len(allo_tools()) > 40


@pytest.mark.parametrize("key", sorted(all_tools()))
def test_every_tool_schema_is_valid_and_requires_only_what_it_declares(key: str) -> None:
    spec = all_tools()[key]
    schema = spec.parameters
    assert TOOL_NAME.match(spec.name)
    assert spec.description.strip()
    Draft202012Validator.check_schema(schema)
    assert schema.get("type") == "object"
    for where, node in objects(schema):
        properties = node.get("properties", {})
        missing = [n for n in node.get("required", []) if n not in properties]
        assert missing == [], f"{key} {where}: required but not a property: {missing}"
    # What each provider is sent keeps every parameter and every required name.
    assert spec.openai_schema()["function"]["parameters"] == schema
    gemini = to_gemini_schema(schema)
    assert set(gemini.get("properties", {})) == set(schema.get("properties", {}))
    assert set(gemini.get("required", [])) <= set(gemini.get("properties", {}))


def test_send_message_declares_its_title() -> None:
    schema = coffee_tools()["coffee/roaster_A/send_message"].parameters
    assert schema["properties"]["title"] == {
        "description": "A short title, at most 80 characters.",
        "type": "string",
    }
    assert schema["required"] == ["recipient", "title", "body"]
    assert schema["additionalProperties"] is False


def test_a_message_with_exactly_the_schemas_properties_is_sent() -> None:
    world, _ = make_world(seed=0, days=5)
    tools = toolkit_for(world, "roaster_A")
    spec = next(s for s in tools.specs() if s.name == "send_message")
    arguments = {
        name: {"recipient": "farmer_A", "title": "Arabica", "body": "Can you do $6/kg?"}.get(name)
        for name in spec.parameters["required"]
    }
    assert set(arguments) == set(spec.parameters["required"])
    result = tools.call("send_message", arguments)
    assert result["status"] == "success", result
    inbox = toolkit_for(world, "farmer_A").call("view_messages", {})
    assert "Arabica" in str(inbox)


def test_a_property_named_title_survives_and_the_keyword_goes() -> None:
    from econbench.agents.tools import _simplify

    schema = {
        "title": "Args",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "nested": {"title": "Nested", "type": "object", "properties": {"title": {}}},
        },
        "$defs": {"title": {"title": "T", "type": "integer"}},
        "required": ["title"],
    }
    assert _simplify(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "nested": {"type": "object", "properties": {"title": {}}},
        },
        "$defs": {"title": {"type": "integer"}},
        "required": ["title"],
    }
