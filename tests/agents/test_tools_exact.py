"""The exact-argument path of tool validation gives what pydantic gives, or steps aside.

Scripted policies call tools with values of exactly the declared types, and those calls skip
pydantic (``_ExactArguments``). Every argument dict here is validated both ways — by the spec
as built, and by the same spec without the exact path — and the two must agree on the values
or on the error message, whatever the input.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Literal

import pytest

from econbench.agents.tools import ToolError, Toolkit, ToolSpec, tool


class Desk(Toolkit):
    @tool("write")
    def post(
        self,
        item: str,
        qty: int,
        price: float,
        side: Literal["buy", "sell"] = "sell",
        note: str | None = None,
        urgent: bool = False,
    ) -> dict:
        """Post an order.

        Args:
            item: What to trade.
            qty: How many kg.
            price: Dollars per kg.
            side: Buy or sell.
            note: A free-text note, if any.
            urgent: Whether to put it first.
        """
        return {}

    @tool()
    def look(self, rows: list[int] | None = None) -> dict:
        """Look at the desk.

        Args:
            rows: Which rows to show.
        """
        return {}


def outcome(spec: ToolSpec, arguments: Any) -> tuple[str, Any]:
    try:
        values = spec.validate(arguments)
    except ToolError as exc:
        return "error", str(exc)
    return "ok", [(k, type(v), v) for k, v in values.items()]


_WITHOUT_EXACT: dict[int, tuple[ToolSpec, ToolSpec]] = {}


def without_exact(spec: ToolSpec) -> ToolSpec:
    """``spec`` with its exact path removed, built once per spec: the copy builds its pydantic
    validator on first use, and a fresh copy per call would build it every time."""
    kept = _WITHOUT_EXACT.get(id(spec))
    if kept is None or kept[0] is not spec:
        kept = _WITHOUT_EXACT[id(spec)] = (spec, dataclasses.replace(spec, exact=None))
    return kept[1]


def both_ways(spec: ToolSpec, arguments: Any) -> tuple[tuple[str, Any], tuple[str, Any]]:
    slow = without_exact(spec)
    assert slow.exact is None
    return outcome(spec, arguments), outcome(slow, arguments)


def test_plain_scalar_tools_have_an_exact_path_and_others_do_not() -> None:
    specs = Desk.tool_specs()
    assert specs["post"].exact is not None
    assert specs["look"].exact is None  # a list parameter: pydantic judges every call


def test_well_typed_arguments_take_the_exact_path_with_defaults_filled() -> None:
    spec = Desk.tool_specs()["post"]
    assert spec.exact is not None
    values = spec.exact.values({"item": "green", "qty": 3, "price": 4.5})
    assert values == {
        "item": "green",
        "qty": 3,
        "price": 4.5,
        "side": "sell",
        "note": None,
        "urgent": False,
    }
    assert list(values) == list(spec.validator.model_fields)


@pytest.mark.parametrize(
    "arguments",
    [
        {"qty": 3, "price": 4.5},  # missing item
        {"item": "g", "qty": 3, "price": 4},  # an int for a float: pydantic makes it 4.0
        {"item": "g", "qty": True, "price": 4.5},  # a bool is not an int
        {"item": "g", "qty": 3.0, "price": 4.5},
        {"item": "g", "qty": 3, "price": float("nan")},
        {"item": "g", "qty": 3, "price": float("inf")},
        {"item": "g", "qty": 3, "price": 4.5, "side": "hold"},
        {"item": "g", "qty": 3, "price": 4.5, "colour": "red"},
        {"item": 7, "qty": 3, "price": 4.5},
        {"item": "g" * 10_000, "qty": 3, "price": 4.5},
        {"item": "x" * 300_000, "qty": 3, "price": 4.5},  # longer than argument_problem allows
        {"item": "g\ud800", "qty": 10**40, "price": 1e300},
        {1: "g", "qty": 3, "price": 4.5},
        "not a dict",
        None,
        [1, 2],
    ],
)
def test_the_exact_path_agrees_with_pydantic(arguments: Any) -> None:
    fast, slow = both_ways(Desk.tool_specs()["post"], arguments)
    assert fast == slow


def test_the_exact_path_agrees_with_pydantic_across_value_kinds() -> None:
    spec = Desk.tool_specs()["post"]
    kinds: list[Any] = ["g", "", 0, 5, -1, 2.5, 0.0, True, None, [1], {"a": 1}]
    sides: list[Any] = ["buy", "sell", "BUY", 1]
    checked = 0
    for item, qty, price, side, note in itertools.product(kinds, kinds, kinds, sides, kinds):
        arguments = {"item": item, "qty": qty, "price": price, "side": side, "note": note}
        fast, slow = both_ways(spec, arguments)
        assert fast == slow, arguments
        checked += 1
    assert checked == len(kinds) ** 4 * len(sides)


def test_a_str_subclass_is_left_to_pydantic() -> None:
    class Name(str):
        pass

    spec = Desk.tool_specs()["post"]
    assert spec.exact is not None
    assert spec.exact.values({"item": Name("g"), "qty": 1, "price": 1.0}) is None
    fast, slow = both_ways(spec, {"item": Name("g"), "qty": 1, "price": 1.0})
    assert fast == slow
