"""The paper's tools as the model meets them: which it is offered, how each is described,
and how a call is run and answered.

Ports the reference's ``main._collect_tools`` (the catalogue per role), ``util.py`` with
``models.types.ToolSpec.from_function`` (name, description, JSON schema), and the tool
execution of ``agent.py`` (``Agent._execute_tool``, ``Agent._coerce_input``,
``_stringify_tool_result``). Descriptions, schemas, error messages and result texts are
the reference's, byte for byte.
"""

import contextlib
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from econbench.agents.tools import ToolSpec
from econbench.coffee.paper.books import FirmBooks

COMMON_TOOL_NAMES: tuple[str, ...] = (
    "post_listing",
    "view_listings",
    "make_offer",
    "withdraw_offer",
    "accept_offer",
    "view_offers",
    "view_deals",
    "send_message",
    "view_messages",
    "read_message",
    "view_payables",
    "view_receivables",
    "pay_invoice",
    "return_shipment",
    "view_trial_balance",
    "view_market_aggregate",
    "wait_for_next_day",
)
"""Tools every role gets, in the order the reference offers them."""

ROLE_TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "farmer": ("produce_item",),
    "roaster": ("roast",),
    "retailer": ("set_retail_price", "view_consumer_sales"),
}
"""Tools a role gets after the common ones (a role not listed gets none more)."""

_TYPE_MAP: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}


def tool_names(role: str) -> list[str]:
    """The names of the tools a role is offered, in order (the reference's
    ``_collect_tools``)."""
    return list(COMMON_TOOL_NAMES) + list(ROLE_TOOL_NAMES.get(role, ()))


def collect_tools(books: FirmBooks) -> list[Callable[..., dict]]:
    """The bound tool methods of one firm, in the order offered (``main._collect_tools``)."""
    out = []
    for name in tool_names(books.role):
        attr = getattr(books, name, None)
        if callable(attr):
            out.append(attr)
    return out


def _annotation_type(annotation: Any) -> str:
    """As the reference's ``util._annotation_to_jsonschema``: the first non-None member of
    a union, anything unknown (or no annotation) a ``string``."""
    args = getattr(annotation, "__args__", None)
    if args:
        for a in args:
            if a is type(None):
                continue
            return _TYPE_MAP.get(a, "string")
    return _TYPE_MAP.get(annotation, "string")


def parameters_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """As the reference's ``util._function_parameters_schema``: one ``{"type": ...}`` per
    parameter, ``required`` those without a default, and no other keyword."""
    signature = inspect.signature(fn, eval_str=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.name == "self":
            continue
        properties[param.name] = {"type": _annotation_type(param.annotation)}
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    return {"type": "object", "properties": properties, "required": required}


def description(fn: Callable[..., Any]) -> str:
    """As the reference's ``ToolSpec.from_function``: ``(func.__doc__ or "").strip()``.

    The reference ran on Python 3.12, where a method's ``__doc__`` keeps the source's
    indentation; Python 3.13 strips it when compiling. Under 3.13 the eight spaces of a
    method body are put back on every non-blank line after the first, so the text sent is
    the same on either interpreter (every tool docstring of ``FirmBooks`` is indented by
    exactly eight).
    """
    doc = fn.__doc__ or ""
    if sys.version_info >= (3, 13):
        first, *rest = doc.split("\n")
        doc = "\n".join([first, *(("        " + line) if line else line for line in rest)])
    return doc.strip()


def tool_specs(books: FirmBooks) -> list[ToolSpec]:
    """The firm's tools as econbench ``ToolSpec``s carrying the reference's name,
    description and schema verbatim (``with_schema``: sent as given, never rebuilt)."""
    specs = []
    for fn in collect_tools(books):
        spec = ToolSpec.from_function(fn).with_schema(parameters_schema(fn))
        specs.append(replace(spec, description=description(fn)))
    return specs


def coerce_input(tool: Callable[..., Any], action_input: dict[str, Any]) -> dict[str, Any]:
    """As the reference's ``Agent._coerce_input``: a string given for a parameter whose
    annotation includes ``float`` (else ``int``) becomes that number when it parses; every
    other value, and every unknown key, passes through unchanged."""
    sig = inspect.signature(tool, eval_str=True)
    coerced: dict[str, Any] = {}
    for key, value in action_input.items():
        if key in sig.parameters and isinstance(value, str):
            annotation = sig.parameters[key].annotation
            target_types = getattr(annotation, "__args__", (annotation,))
            if float in target_types:
                with contextlib.suppress(ValueError):
                    value = float(value)
            elif int in target_types:
                with contextlib.suppress(ValueError):
                    value = int(value)
        coerced[key] = value
    return coerced


def execute(books: FirmBooks, name: str, arguments: dict[str, Any] | None) -> dict:
    """As the reference's ``Agent._execute_tool``: run one call of the firm's tool.

    A tool the firm is not offered answers "Unknown action"; any exception the call
    raises (a missing or unexpected argument included) becomes an error result naming it,
    so the model can correct itself. Coercion runs outside that guard, as in the
    reference (arguments are always a JSON object there).
    """
    tool = getattr(books, name, None) if name in tool_names(books.role) else None
    if tool is None:
        return {
            "status": "error",
            "message": f"Unknown action '{name}'. Pick one of the registered tools.",
        }
    coerced = coerce_input(tool, arguments or {})
    try:
        return tool(**coerced)
    except Exception as e:
        return {
            "status": "error",
            "message": (
                f"Tool call failed: {type(e).__name__}: {e}. "
                "Check the tool's required parameters and types, then try again."
            ),
        }


def result_text(result: Any) -> str:
    """As the reference's ``_stringify_tool_result``: a string as it is, anything else as
    ``json.dumps(result, default=str)``, or ``str(result)`` when that fails."""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, default=str)
    except (TypeError, ValueError):
        return str(result)
