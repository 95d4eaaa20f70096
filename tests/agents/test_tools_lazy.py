"""A tool's pydantic validator and JSON schema are built on first use, and the exact path
derived from the signature alone is the one pydantic's model of it implies.

Scripted actors call well-typed tools thousands of times and never ask for a schema, so the
pydantic model is not built until a schema is requested or an argument needs pydantic.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from econbench.agents.tools import (
    _EXACT_TYPES,
    Toolkit,
    ToolSpec,
    _exact_types,
    _ExactArguments,
    tool,
)
from econbench.coffee.toolkit import FarmerTools, RetailerTools, RoasterTools


def exact_from_model(model: Any) -> _ExactArguments | None:
    """The exact path as read off a built pydantic model (the derivation before laziness)."""
    fields = []
    for name, info in model.model_fields.items():
        accepted = _exact_types(info.annotation)
        if accepted is None or info.metadata or info.default_factory is not None:
            return None
        types_, members = accepted
        required = info.is_required()
        if not required and not isinstance(info.default, (*_EXACT_TYPES, type(None))):
            return None
        fields.append((name, types_, members, required, None if required else info.default))
    return _ExactArguments(tuple(fields), frozenset(model.model_fields))


def fresh_toolkit() -> type[Toolkit]:
    class Counter(Toolkit):
        @tool("write")
        def add(self, n: int, label: Literal["a", "b"] = "a", note: str | None = None) -> dict:
            """Add to the counter.

            Args:
                n: How much.
                label: Which counter.
                note: A note.
            """
            return {"n": n}

        @tool()
        def show(self, rows: list[int] | None = None) -> dict:
            """Show rows.

            Args:
                rows: Which rows.
            """
            return {}

    return Counter


def all_specs() -> list[ToolSpec]:
    kits = [fresh_toolkit(), FarmerTools, RoasterTools, RetailerTools]
    return [spec for kit in kits for spec in kit.tool_specs().values()]


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.name)
def test_exact_path_from_the_signature_matches_the_pydantic_model(spec: ToolSpec) -> None:
    assert _ExactArguments.of(spec.signature) == exact_from_model(spec.validator)


def test_no_pydantic_model_is_built_until_needed() -> None:
    kit = fresh_toolkit()
    specs = kit.tool_specs()
    assert all("validator" not in vars(s) and "parameters" not in vars(s) for s in specs.values())
    assert kit().call("add", {"n": 2}) == {"status": "success", "n": 2}
    assert "validator" not in vars(specs["add"])  # the exact path: no model
    assert kit().call("add", {"n": 2.0})["status"] == "error"  # pydantic judges it
    assert "validator" in vars(specs["add"])
    assert "parameters" not in vars(specs["show"])
    assert specs["show"].openai_schema()["function"]["parameters"]["additionalProperties"] is False
    assert "parameters" in vars(specs["show"])


def test_schema_is_built_once_per_tool() -> None:
    spec = fresh_toolkit().tool_specs()["add"]
    assert spec.parameters is spec.parameters
    assert spec.validator is spec.validator
    assert spec.parameters["required"] == ["n"]
    assert list(spec.parameters["properties"]) == ["n", "label", "note"]
