"""``loggable`` (a tool call's arguments made safe for the JSON log) gives what the plain
recursive definition gives, its fast path for flat dicts of plain values included."""

from __future__ import annotations

import math
from typing import Any

import pytest

from econbench.coffee.world import loggable


def loggable_by_definition(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): loggable_by_definition(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [loggable_by_definition(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


class Name(str):
    pass


class Count(int):
    pass


class Table(dict):
    pass


VALUES: list[Any] = [
    None,
    True,
    3,
    2.5,
    math.nan,
    -math.inf,
    "x",
    Name("n"),
    Count(4),
    object,
    {"a": 1, "b": math.inf, 3: "k", Name("s"): Count(2), "c": None},
    {"nested": {"x": [1, math.nan, (2, "y")], "z": {1: object}}},
    Table(a=math.nan),
    [math.inf, {"q": 1.5}],
    (),
    {},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_loggable_matches_its_definition(value: Any) -> None:
    got, want = loggable(value), loggable_by_definition(value)
    assert repr(got) == repr(want)
    assert [type(x) for x in _leaves(got)] == [type(x) for x in _leaves(want)]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [k for k in value] + [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]
