"""The shared tool-schema module: schemas from signatures and docstrings, and validation."""

from __future__ import annotations

import pytest

from econbench.agents.tools import Toolkit, ToolSpec, parse_docstring, tool


class Shop(Toolkit):
    def __init__(self) -> None:
        self.stock = 3

    @tool("write")
    def sell(self, qty: int, price: float, note: str = "") -> dict:
        """Sell some units.

        Args:
            qty: How many units to sell; must be positive.
            price (float): Price per unit in dollars, which may be
                written over two lines.
            note: A free-text note.
        """
        if qty > self.stock:
            from econbench.agents.tools import ToolError

            raise ToolError(f"only {self.stock} in stock")
        self.stock -= qty
        return {"sold": qty, "revenue": qty * price}


def test_docstring_parser_reads_summary_and_multiline_args() -> None:
    doc = parse_docstring(Shop.sell.__doc__)
    assert doc.summary == "Sell some units."
    assert doc.args["price"] == "Price per unit in dollars, which may be written over two lines."
    assert set(doc.args) == {"qty", "price", "note"}


def test_schema_is_openai_function_format() -> None:
    spec = Shop.tool_specs()["sell"]
    schema = spec.openai_schema()
    assert schema["type"] == "function"
    params = schema["function"]["parameters"]
    assert params["required"] == ["qty", "price"]
    assert params["properties"]["qty"]["type"] == "integer"
    assert params["properties"]["price"]["type"] == "number"
    assert params["properties"]["note"]["description"] == "A free-text note."
    assert params["additionalProperties"] is False
    assert spec.kind == "write"


def test_undocumented_parameter_is_detected() -> None:
    def bare(x: int, y: int) -> None:
        """Do something.

        Args:
            x: Documented.
        """

    assert ToolSpec.from_function(bare).undocumented == ["y"]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"qty": "two", "price": 1.0}, "'qty'"),
        ({"qty": 1.5, "price": 1.0}, "'qty'"),
        ({"qty": True, "price": 1.0}, "'qty'"),
        ({"qty": 1}, "missing required argument 'price'"),
        ({"qty": 1, "price": 1.0, "colour": "red"}, "unexpected argument 'colour'"),
        ({"qty": 1, "price": float("nan")}, "'price'"),
        ({"qty": 1, "price": float("inf")}, "'price'"),
        ([1, 2], "must be a JSON object"),
        ({"qty": 9, "price": 1.0}, "only 3 in stock"),
    ],
)
def test_invalid_calls_are_error_results_and_change_nothing(arguments, fragment) -> None:
    shop = Shop()
    result = shop.call("sell", arguments)
    assert result["status"] == "error"
    assert fragment in result["error"]
    assert shop.stock == 3


def test_unknown_tool_is_an_error_result() -> None:
    result = Shop().call("steal", {})
    assert result["status"] == "error" and "unknown tool 'steal'" in result["error"]


def test_valid_call_accepts_int_for_float() -> None:
    shop = Shop()
    assert shop.call("sell", {"qty": 2, "price": 3}) == {
        "status": "success",
        "sold": 2,
        "revenue": 6.0,
    }
    assert shop.stock == 1


# -- arguments no model should be able to break the harness with ------------------------


def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"qty": nested(10_000), "price": 1.0}, "nested more than 32 levels deep"),
        ('{"qty": ' + "[" * 50_000 + "]" * 50_000 + "}", "nested more than 32 levels deep"),
        ('{"qty": 1, "price": NaN}', "NaN is not a finite number"),
        ('{"qty": 1, "price": 1e400}', "1e400 is not a finite number"),
        ('{"qty": 1,,', "not valid JSON"),
        ('"just text"', "they are a JSON string"),
        ({"qty": 1, "price": 1.0, "note": "x" * 300_000}, "longer than 262,144 characters"),
    ],
)
def test_arguments_too_deep_too_long_or_not_json_are_a_short_error_and_change_nothing(
    arguments, fragment
) -> None:
    shop = Shop()
    result = shop.call("sell", arguments)
    assert result["status"] == "error"
    assert fragment in result["error"] and "must be a JSON object" in result["error"]
    assert len(result["error"]) < 600, "the model reads the reason, not its arguments back"
    assert shop.stock == 3


def test_a_long_bad_value_is_quoted_short_in_the_error() -> None:
    result = Shop().call("sell", {"qty": "x" * 100_000, "price": 1.0})
    assert result["status"] == "error" and "'qty'" in result["error"]
    assert len(result["error"]) < 600


def test_bounded_arguments_keep_sound_objects_and_turn_the_rest_into_text() -> None:
    from econbench.agents.untrusted import CUT_MARK, bounded_arguments, kept_arguments

    assert bounded_arguments('{"a": [1, {"b": "c"}]}') == {"a": [1, {"b": "c"}]}
    assert bounded_arguments('"{\\"a\\": 1}"') == {"a": 1}  # double-encoded
    assert bounded_arguments("") == {} and bounded_arguments(None) == {}
    assert bounded_arguments("null") == {}
    assert bounded_arguments("[1, 2]") == "[1, 2]"
    assert bounded_arguments({"k": "\ud800"}) == {"k": "\ufffd"}
    deep = {"a": nested(5_000)}
    text = bounded_arguments(deep)
    assert isinstance(text, str) and text.startswith('{"a":[[[') and text.endswith("]]]}")
    assert text.count("[") == 5_000
    huge = bounded_arguments({"a": "x" * 1_000_000})
    assert isinstance(huge, str) and huge.endswith(CUT_MARK) and len(huge) < 263_000
    # Read back from a run file: sound data untouched, an unbounded dict made text.
    sound = {"qty": 1}
    assert kept_arguments(sound) is sound and kept_arguments("raw") == "raw"
    assert isinstance(kept_arguments(deep), str)


def test_valid_text_joins_pairs_and_replaces_lone_surrogates() -> None:
    from econbench.agents.untrusted import valid_text

    assert valid_text("plain") == "plain" and valid_text("café ☕") == "café ☕"
    assert valid_text("\ud83d\ude00") == "\U0001f600"
    assert valid_text("a\ud83db\udc00") == "a\ufffdb\ufffd"
    assert valid_text("x\ud800").encode("utf-8") == "x\ufffd".encode()


def test_dump_text_spells_json_like_json_dumps_without_recursing() -> None:
    import json

    from econbench.agents.untrusted import dump_text

    for value in ({"a": [1, 2.5, None, True, "é"]}, [], {}, [[]], "s", {"k": {"l": []}}):
        assert dump_text(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert dump_text(nested(100_000)) == "[" * 100_000 + "1" + "]" * 100_000
