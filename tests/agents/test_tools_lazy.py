"""A tool's pydantic validator and JSON schema are built on first use, once.

A run calls a few of the tools and scripted actors never ask for a schema, so a tool's
pydantic model is built when the tool is first called or its schema first requested.
"""

from __future__ import annotations

from typing import Literal

from econbench.agents.tools import Toolkit, tool


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


def test_no_pydantic_model_is_built_until_needed() -> None:
    kit = fresh_toolkit()
    specs = kit.tool_specs()
    assert all("validator" not in vars(s) and "parameters" not in vars(s) for s in specs.values())
    assert kit().call("add", {"n": 2}) == {"status": "success", "n": 2}
    assert "validator" in vars(specs["add"])
    assert "validator" not in vars(specs["show"])
    assert kit().call("add", {"n": 2.0})["status"] == "error"
    assert "parameters" not in vars(specs["show"])
    assert specs["show"].openai_schema()["function"]["parameters"]["additionalProperties"] is False
    assert "parameters" in vars(specs["show"])


def test_schema_is_built_once_per_tool() -> None:
    spec = fresh_toolkit().tool_specs()["add"]
    assert spec.parameters is spec.parameters
    assert spec.validator is spec.validator
    assert spec.parameters["required"] == ["n"]
    assert list(spec.parameters["properties"]) == ["n", "label", "note"]


def test_validated_values_are_the_arguments_with_defaults_filled_in_signature_order() -> None:
    spec = fresh_toolkit().tool_specs()["add"]
    values = spec.validate({"note": "hi", "n": 3})
    assert values == {"n": 3, "label": "a", "note": "hi"}
    assert list(values) == ["n", "label", "note"]
