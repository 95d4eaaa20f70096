"""The local-model tool-call parser on recorded-style replies of small models.

``data/hf_replies.jsonl`` holds one reply per line with the expected parse: the prose, the
calls (name and arguments) and whether an error is reported. A reply whose calls cannot be
read must come back with no calls and an error, never an exception.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from econbench.agents.models.hf.toolcall import (
    EXAMPLE_CALL,
    ParsedReply,
    parse_tool_calls,
    render_calls,
    render_tool_result,
    tools_system_prompt,
)
from econbench.agents.tools import ToolSpec, tool

DATA = Path(__file__).parent / "data" / "hf_replies.jsonl"
CASES = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_recorded_reply(case: dict) -> None:
    parsed = parse_tool_calls(case["reply"])
    expect = case["expect"]
    got = [{"name": c.name, "arguments": c.arguments} for c in parsed.calls]
    assert got == expect["calls"]
    assert all(c.call_id is None for c in parsed.calls)
    assert (parsed.error is not None) == expect["error"], parsed.error
    if "text" in expect:
        assert parsed.text == expect["text"]
    else:  # nothing readable: the whole reply stays as the text, for the record
        assert parsed.text == case["reply"].strip()


def test_fixture_covers_the_required_shapes() -> None:
    names = {c["case"] for c in CASES}
    required = {
        "well_formed",
        "single_object",
        "missing_closing_tag",
        "fenced",
        "trailing_commas",
        "prose_only",
        "garbage_in_block",
        "two_calls_one_list",
        "two_blocks",
        "nested_arguments",
        "unicode",
        "arguments_as_json_string",
        "python_literals",
    }
    assert required <= names


@pytest.mark.parametrize(
    ("reply", "unreadable"),
    [
        ("", False),
        ("<tool_call>", True),
        ("</tool_call><tool_call>", True),
        ("<tool_call>[[[[[[[[</tool_call>", True),
        ("<tool_call>" + "[" * 5000 + "</tool_call>", True),
        ('<tool_call>{"name": "x", "arguments": ' + "[" * 3000 + "}</tool_call>", True),
        ("<tool_call>__import__('os').system('true')</tool_call>", True),
        ("<tool_call>f(*args)</tool_call>", True),
        ("<tool_call>{'name': 'x', 'arguments': {1: {2, 3}}}</tool_call>", True),
        ("```", False),
        ("\x00\x01<tool_call>\udcff</tool_call>", True),
    ],
)
def test_never_raises_on_hostile_text(reply: str, unreadable: bool) -> None:
    parsed = parse_tool_calls(reply)
    assert isinstance(parsed, ParsedReply) and isinstance(parsed.text, str)
    assert parsed.calls == []
    assert (parsed.error is not None) == unreadable


def test_python_code_is_never_evaluated() -> None:
    parsed = parse_tool_calls("<tool_call>__import__('os').getcwd()</tool_call>")
    assert parsed.calls == [] and parsed.error is not None


def test_rendered_calls_parse_back_identically() -> None:
    from econbench.agents.tools import ToolCall

    calls = [
        ToolCall("make_offer", {"listing_id": "L-1", "price": 2.5, "note": "café"}),
        ToolCall("wait_for_next_day", {}),
    ]
    parsed = parse_tool_calls("Two steps.\n" + render_calls(calls))
    assert parsed.calls == calls and parsed.text == "Two steps." and parsed.error is None


@tool("write")
def make_offer(listing_id: str, price: float) -> dict:
    """Offer a price for a listing.

    Args:
        listing_id: The listing to bid on.
        price: Price per kilogram in dollars.
    """
    return {}


@tool("read")
def view_listings() -> dict:
    """Show the open listings."""
    return {}


def test_tools_prompt_lists_schemas_format_and_example() -> None:
    tools = [ToolSpec.from_function(make_offer), ToolSpec.from_function(view_listings)]
    text = tools_system_prompt(tools)
    schemas = text.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0].splitlines()
    assert [json.loads(s)["name"] for s in schemas] == ["make_offer", "view_listings"]
    assert json.loads(schemas[0])["parameters"] == tools[0].parameters
    assert "Price per kilogram in dollars." in schemas[0]
    assert "<tool_call>" in text and "</tool_call>" in text
    assert "one of: make_offer, view_listings" in text
    assert EXAMPLE_CALL in text
    # the worked example itself parses with the parser the replies go through
    example = parse_tool_calls(EXAMPLE_CALL)
    assert [(c.name, c.arguments) for c in example.calls] == [("lookup_city", {"city": "Lyon"})]


def test_tool_result_rendering_keeps_json_and_plain_text() -> None:
    as_json = render_tool_result("make_offer", '{"status": "success", "offer_id": 3}')
    body = as_json.removeprefix("<tool_response>\n").removesuffix("\n</tool_response>")
    assert json.loads(body) == {
        "name": "make_offer",
        "result": {"status": "success", "offer_id": 3},
    }
    plain = render_tool_result(None, "not json")
    assert json.loads(plain.splitlines()[1]) == {"name": "", "result": "not json"}
