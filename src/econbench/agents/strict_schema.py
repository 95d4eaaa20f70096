"""OpenAI's strict function schemas: the form a tool's schema takes there, and what rules it out.

With ``strict: true`` OpenAI constrains a model's arguments to the schema, but takes only a
subset of JSON Schema (its Structured Outputs rules): every object lists all its properties in
``required`` and sets ``additionalProperties: false``, an optional argument is expressed as a
required one that may be ``null``, and only some keywords are understood (``default`` is not).
:func:`strict_form` turns a tool's schema into that form (``None`` where it cannot be: a
free-form object such as R3's ``inputs``); :func:`strict_problems` lists what keeps a schema
out of strict mode, for tests and for checking a schema given by hand. A model's ``null`` for
an optional argument means "not given" (``ToolSpec.validate`` drops it), so the tool behaves
exactly as when the argument is left out.
"""

from __future__ import annotations

import copy
import json
from typing import Any

SUPPORTED: frozenset[str] = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "title",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)
"""The keywords a strict schema may use (OpenAI's Structured Outputs "supported schemas")."""
MAX_DEPTH = 10
"""OpenAI's limit on object nesting in a strict schema."""
_NAMED = ("properties", "$defs")


def accepts_null(schema: dict[str, Any]) -> bool:
    """Whether ``schema`` lets ``null`` through (a ``null`` type, or an ``anyOf`` branch of it)."""
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(o, dict) and accepts_null(o) for o in schema.get("anyOf") or [])


def strict_form(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` in OpenAI's strict form, or None when it has no such form (a free-form object,
    an extra-properties schema, a keyword strict mode does not take)."""
    try:
        return _strict(copy.deepcopy(schema))
    except _NoStrictForm:
        return None


class _NoStrictForm(Exception):
    pass


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "default":
            continue
        if key not in SUPPORTED:
            raise _NoStrictForm(key)
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = _strict(value)
        else:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        extra = out.get("additionalProperties")
        if extra is not False and (extra not in (None,) or not out.get("properties")):
            raise _NoStrictForm("a free-form object")  # any keys allowed: no strict form
        given = set(out.get("required") or [])
        properties = out.setdefault("properties", {})
        for name, sub in list(properties.items()):
            if name not in given:
                properties[name] = _nullable(sub, node["properties"][name].get("default"))
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def _nullable(schema: dict[str, Any], default: Any) -> dict[str, Any]:
    """An optional property as a required one that may be ``null`` (null: the default)."""
    description = schema.get("description")
    if default is not None:
        said = json.dumps(default, ensure_ascii=False)
        description = f"{description} Null for the default, {said}." if description else None
    if accepts_null(schema):
        return {**schema, "description": description} if description else schema
    inner = {k: v for k, v in schema.items() if k != "description"}
    out: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if description:
        out["description"] = description
    return out


def strict_problems(schema: Any, where: str = "", depth: int = 0) -> list[str]:
    """What keeps ``schema`` out of OpenAI's strict mode (empty: it qualifies)."""
    problems: list[str] = []
    if isinstance(schema, list):
        for i, sub in enumerate(schema):
            problems += strict_problems(sub, f"{where}[{i}]", depth)
        return problems
    if not isinstance(schema, dict):
        return problems
    here = where or "(root)"
    problems += [f"{here}: keyword {k!r}" for k in schema if k not in SUPPORTED]
    if schema.get("type") == "object" or "properties" in schema:
        if depth > MAX_DEPTH:
            problems.append(f"{here}: nested deeper than {MAX_DEPTH} objects")
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            problems.append(f"{here}: additionalProperties is not false")
        if set(schema.get("required") or []) != set(properties):
            problems.append(f"{here}: required is not every property")
        depth += 1
    for key, value in schema.items():
        if key in _NAMED and isinstance(value, dict):
            for name, sub in value.items():
                problems += strict_problems(sub, f"{where}.{key}.{name}", depth)
        elif key in ("items", "anyOf"):
            problems += strict_problems(value, f"{where}.{key}", depth)
    return problems
