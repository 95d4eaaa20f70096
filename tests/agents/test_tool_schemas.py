"""Every tool schema econbench offers a model is a valid JSON Schema that each provider takes,
and names as required only what it declares (issue 25: ``send_message`` lost its ``title``).

All tools of both benchmarks: the six CoffeeBench firms' toolkits under both conditions
(``hardened`` and the reference's, ``paper``), and AlloBench's tools for every rung of every
condition. Checked: the JSON Schema 2020-12 meta-schema; every object's
``required`` names among its ``properties``; what each provider is sent (OpenAI's function
tools, Anthropic's ``input_schema``, Gemini's function declarations) keeps every parameter;
and a model that fills exactly the schema's properties is obeyed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.coffee.conftest import make_world

from econbench.agents.models.anthropic_provider import AnthropicProvider
from econbench.agents.models.base import ChatMessage, GenerateConfig
from econbench.agents.models.gemini_provider import to_gemini_schema
from econbench.agents.strict_schema import strict_problems
from econbench.agents.tools import ToolSpec
from econbench.allo.game.stream import generate_stream
from econbench.allo.paper.conditions import CONDITIONS
from econbench.allo.sandbox.core import Sandbox
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


@cache
def coffee_paper_tools() -> dict[str, ToolSpec]:
    """The reference's tools (condition ``paper``): its schemas as it builds them, types only."""
    from econbench.coffee.paper.economy import build_economy
    from econbench.coffee.paper.tools import tool_specs

    economy = build_economy(0, 5)
    return {
        f"coffee-paper/{firm}/{spec.name}": spec
        for firm, books in economy.business_apps.items()
        for spec in tool_specs(books)
    }


def all_tools() -> dict[str, ToolSpec]:
    return {**coffee_tools(), **coffee_paper_tools(), **allo_tools()}


@cache
def anthropic() -> AnthropicProvider:
    """A provider that only builds requests (nothing is sent)."""
    return AnthropicProvider("claude-test", api_key="k", base_url="http://127.0.0.1:9")


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
    paper = {key.rsplit("/", 1)[1] for key in coffee_paper_tools()}
    assert paper == names  # the same 21 tools under both conditions


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
    request = anthropic().build_request([ChatMessage("user", "hi")], [spec], GenerateConfig())
    assert request["tools"][0]["input_schema"] == schema
    gemini = to_gemini_schema(schema)
    assert set(gemini.get("properties", {})) == set(schema.get("properties", {}))
    assert set(gemini.get("required", [])) <= set(gemini.get("properties", {}))


def test_send_message_declares_its_title() -> None:
    schema = coffee_tools()["coffee/roaster_A/send_message"].parameters
    assert schema["properties"]["title"] == {
        "description": (
            "REQUIRED short subject line (≤80 chars hard cap, ≤60 recommended). Must summarize "
            "the message intent — empty or whitespace-only titles are rejected; line breaks are "
            "folded into one line."
        ),
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


# -- OpenAI's strict mode (``strict_tools``) ---------------------------------------------------


@pytest.mark.parametrize("key", sorted(all_tools()))
def test_every_tool_has_a_strict_form_unless_an_argument_is_free_form(key: str) -> None:
    spec = all_tools()[key]
    strict = spec.strict_parameters
    if strict is None:
        # Only a free-form object (R3's inputs, or the paper's own schemas, which do not forbid
        # other keys) has none; such a tool is offered as declared, with strict false.
        assert any("additionalProperties" in p for p in strict_problems(spec.parameters))
        return
    assert strict_problems(strict) == []
    Draft202012Validator.check_schema(strict)
    assert list(strict["properties"]) == list(spec.parameters.get("properties", {}))


def test_every_coffeebench_tool_can_be_strict() -> None:
    assert all(spec.strict_parameters is not None for spec in coffee_tools().values())


def test_null_for_an_optional_argument_is_the_argument_left_out() -> None:
    world, _ = make_world(seed=0, days=5)
    tools = toolkit_for(world, "roaster_A")
    spec = next(s for s in tools.specs() if s.name == "view_offers")
    filled = {name: None for name in spec.strict_parameters["properties"]}
    assert set(filled) == set(spec.strict_parameters["required"])
    assert tools.call("view_offers", filled) == tools.call("view_offers", {})
    sent = tools.call(
        "send_message",
        {
            "recipient": "farmer_A",
            "title": "Hi",
            "body": "Beans?",
            "ref_listing_id": None,
            "ref_offer_id": None,
        },
    )
    assert sent["status"] == "success", sent


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_strict_tools_sends_the_strict_form_through_the_sdk(api: str) -> None:
    from tests.fakes.openai_server import BrainReply, FakeOpenAIServer

    from econbench.agents.models.openai_provider import (
        OpenAIChatProvider,
        OpenAIResponsesProvider,
    )

    specs = [coffee_tools()["coffee/roaster_A/send_message"]]
    specs.append(allo_tools()["allo/frontier/r3/k0/run_script"])  # free-form inputs

    def bodies(strict: bool | None) -> dict[str, Any]:
        with FakeOpenAIServer(lambda request: BrainReply(text="ok")) as server:
            kind = OpenAIChatProvider if api == "chat" else OpenAIResponsesProvider
            provider = kind(
                "gpt-5.5", api_key="k", base_url=server.base_url, compat=_compat(strict)
            )

            async def call() -> None:
                try:
                    await provider.generate([ChatMessage("user", "hello")], specs, GenerateConfig())
                finally:
                    await provider.aclose()

            asyncio.run(call())
        return server.requests[0]["body"]

    def offered(body: dict[str, Any]) -> list[dict[str, Any]]:
        return [t.get("function", t) for t in body["tools"]]

    message, script = offered(bodies(True))
    assert message["strict"] is True and strict_problems(message["parameters"]) == []
    assert script.get("strict", False) is False  # no strict form: as declared
    default = offered(bodies(None))
    assert all(t.get("strict", False) is False for t in default)
    assert default[0]["parameters"] == specs[0].parameters


def _compat(strict: bool | None) -> Any:
    from econbench.agents.models.settings import ModelSettings

    return ModelSettings(strict_tools=strict).compat_profile(compatible=False)


def test_under_paper_a_message_with_exactly_the_schemas_properties_is_sent() -> None:
    from econbench.coffee.paper.economy import build_economy
    from econbench.coffee.paper.tools import execute, tool_specs

    economy = build_economy(0, 5)
    books = economy.business_apps["roaster_A"]
    spec = next(s for s in tool_specs(books) if s.name == "send_message")
    values = {"recipient": "farmer_A", "title": "Arabica", "body": "Can you do $6/kg?"}
    arguments = {name: values[name] for name in spec.parameters["required"]}
    economy.start()
    economy.next_wakes()
    result = execute(books, "send_message", arguments)
    assert result["status"] == "success", result
    assert [m.title for m in economy.marketplace.messages] == ["Arabica"]
