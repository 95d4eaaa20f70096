"""``json_line`` writes one strict JSON line whatever the data: the log's last line of
defence against values a model put there (non-finite numbers, lone surrogates, nesting too
deep, cycles)."""

from __future__ import annotations

import json
from typing import Any

from econbench.jsonio import MAX_DEPTH, json_line


def strict(text: str) -> Any:
    """Parse ``text`` as strict JSON (no NaN or infinities) from valid UTF-8."""

    def refuse(name: str) -> None:
        raise ValueError(name)

    assert "\n" not in text
    return json.loads(text.encode("utf-8"), parse_constant=refuse)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def test_plain_data_is_written_compactly_in_its_key_order() -> None:
    assert json_line({"b": 1, "a": [1.5, "é", None, True]}) == '{"b":1,"a":[1.5,"é",null,true]}'
    assert json_line({"b": 1, "a": 2}, sort_keys=True) == '{"a":2,"b":1}'


def test_non_finite_numbers_and_lone_surrogates_are_cleaned() -> None:
    line = strict(json_line({"price": float("nan"), "qty": float("-inf"), "note": "a\ud800b"}))
    assert line == {"price": "nan", "qty": "-inf", "note": "a\\ud800b"}


def test_a_cycle_is_cut_at_the_depth_limit() -> None:
    loop: dict[str, Any] = {"name": "loop"}
    loop["self"] = loop
    line = strict(json_line({"arguments": loop}))
    assert depth(line) == MAX_DEPTH
    inner = line["arguments"]
    while isinstance(inner.get("self"), dict):
        inner = inner["self"]
    assert inner["self"].startswith("[cut: nested more than")


def test_nesting_deeper_than_the_interpreter_allows_is_cut() -> None:
    deep: Any = 1
    for _ in range(50_000):
        deep = [deep]
    assert depth(strict(json_line({"deep": deep}))) == MAX_DEPTH
