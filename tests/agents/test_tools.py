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
