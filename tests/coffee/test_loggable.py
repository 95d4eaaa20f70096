"""A tool call's arguments reach the event log as strict JSON, whatever the agent sent:
non-finite numbers as their names, tuples as lists, keys as text, other objects as their
``repr`` (``econbench.jsonio`` cleans a line that strict JSON cannot hold)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from econbench.agents.tools import ToolCall
from econbench.coffee.events import JsonlSink
from econbench.coffee.world import World
from econbench.runs.coffee.config import RunConfig


class Name(str):
    pass


class Count(int):
    pass


class Table(dict):
    pass


CASES: list[tuple[dict[Any, Any], dict[str, Any]]] = [
    ({"item_id": "green_coffee_kg", "qty": 3}, {"item_id": "green_coffee_kg", "qty": 3}),
    ({"qty": math.nan, "price": -math.inf}, {"qty": "nan", "price": "-inf"}),
    ({3: "k", Name("s"): Count(2), "c": None}, {"3": "k", "s": 2, "c": None}),
    ({"nested": {"x": [1, math.inf, (2, "y")], "z": {1: object}}},
     {"nested": {"x": [1, "inf", [2, "y"]], "z": {"1": repr(object)}}}),
    (Table(a=math.nan), {"a": "nan"}),
    ({"title": "hi \ud83d", "pair": ()}, {"title": "hi \\ud83d", "pair": []}),
]  # fmt: skip


@pytest.mark.parametrize(("arguments", "logged"), CASES, ids=repr)
def test_arguments_are_logged_as_strict_json(
    tmp_path: Path, arguments: dict[Any, Any], logged: dict[str, Any]
) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    world = World(RunConfig(days=2), sink=sink)
    world.start_day()
    world.act("roaster_A", ToolCall("post_listing", arguments))
    sink.close()
    last = path.read_bytes().decode("utf-8").splitlines()[-1]
    line = json.loads(last, parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert line["type"] == "tool_call" and line["firm"] == "roaster_A"
    assert line["arguments"] == logged
