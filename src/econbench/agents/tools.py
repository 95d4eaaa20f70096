"""Tools: typed functions whose JSON schema comes from the signature and the docstring.

Every actor in every environment acts only through tools. A tool is a plain (method or)
function with type hints and a Google-style docstring; ``@tool`` marks it and records
whether it reads or writes state. ``ToolSpec`` derives the OpenAI function-calling schema
and a pydantic validator from it, so schema and validation can never drift apart.

Expected failures are tool results, not crashes: a tool raises ``ToolError`` and the
``Toolkit`` dispatcher turns that, a validation failure or an unknown tool name into
``{"status": "error", "error": "..."}``. Any other exception propagates and fails loudly.

A tool whose schema must be someone else's, byte for byte (the AlloBench paper's), gets it
with ``ToolSpec.with_schema`` (or a toolkit's ``schemas``): that schema is sent as it is, and
calls are still validated against the function's signature (see ``with_schema``).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import ConfigDict, Field, ValidationError, create_model

from econbench.agents.strict_schema import strict_form
from econbench.agents.untrusted import argument_problem, dump_text, excerpt

ToolKind = Literal["read", "write"]
_TOOL_ATTR = "__econbench_tool__"


class ToolError(Exception):
    """An expected failure reported back to the caller as an error result."""


@dataclass(frozen=True)
class ToolCall:
    """One call an actor wants to make: a tool name and its (unvalidated) arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None


def tool(kind: ToolKind = "read") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a function or method as a tool that reads or writes environment state."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, _TOOL_ATTR, kind)
        return fn

    return mark


def is_tool(obj: Any) -> bool:
    return callable(obj) and hasattr(obj, _TOOL_ATTR)


@dataclass(frozen=True)
class Docstring:
    """The parts of a Google-style docstring a tool schema needs."""

    summary: str
    args: dict[str, str]


_SECTION = re.compile(r"^(Args|Arguments|Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google-style docstring into its description and its ``Args:`` entries."""
    text = inspect.cleandoc(doc or "")
    summary_lines: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for raw in text.splitlines():
        stripped = raw.strip()
        header = _SECTION.match(stripped)
        if header and (len(raw) - len(raw.lstrip())) == 0:
            section, current, arg_indent = header.group(1), None, None
            continue
        if section is None:
            summary_lines.append(stripped)
            continue
        if section not in ("Args", "Arguments") or not stripped:
            continue
        indent = len(raw) - len(raw.lstrip())
        match = _ARG_LINE.match(stripped)
        if match and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current = match.group(1).lstrip("*")
            args[current] = match.group(3).strip()
        elif current is not None:
            args[current] = (args[current] + " " + stripped).strip()
    summary = " ".join(" ".join(summary_lines).split())
    return Docstring(summary=summary, args=args)


class _ArgsConfig:
    """Validation settings shared by every tool's argument model."""

    config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
"""Keywords whose value maps names (a parameter's, a definition's) to schemas: a name there is
data, never the ``title`` keyword, however it is spelled."""


def _simplify(schema: Any) -> Any:
    """Drop pydantic's ``title`` keywords so the schema is what a model provider expects. Only
    the keyword goes: a parameter called ``title`` (``send_message``'s) stays a property."""
    if isinstance(schema, list):
        return [_simplify(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {name: _simplify(sub) for name, sub in value.items()}
        else:
            out[key] = _simplify(value)
    return out


@dataclass(frozen=True)
class ToolParameter:
    """One parameter of a tool as its signature and docstring declare it."""

    name: str
    annotation: Any
    default: Any
    """``...`` when the parameter is required."""
    description: str | None

    @property
    def required(self) -> bool:
        return self.default is ...


@dataclass
class ToolSpec:
    """A tool's name, kind, description, JSON schema and argument validator.

    The pydantic validator and the JSON schema are built on first use and kept: a run calls
    a few of the 55 tools and a scripted actor never asks for a schema.
    """

    name: str
    kind: ToolKind
    description: str
    undocumented: list[str]
    fn: Callable[..., Any]
    signature: tuple[ToolParameter, ...] = ()
    schema: dict[str, Any] | None = None
    """The JSON schema sent verbatim instead of the derived one (``with_schema``)."""

    @classmethod
    def from_function(cls, fn: Callable[..., Any], name: str | None = None) -> ToolSpec:
        doc = parse_docstring(fn.__doc__)
        hints = get_type_hints(fn)
        signature: list[ToolParameter] = []
        undocumented: list[str] = []
        for pname, param in inspect.signature(fn).parameters.items():
            if pname == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            annotation = hints.get(pname, Any)
            default = ... if param.default is inspect.Parameter.empty else param.default
            description = doc.args.get(pname)
            if not description:
                undocumented.append(pname)
            signature.append(ToolParameter(pname, annotation, default, description))
        return cls(
            name=name or fn.__name__,
            kind=getattr(fn, _TOOL_ATTR, "read"),
            description=doc.summary,
            undocumented=undocumented,
            fn=fn,
            signature=tuple(signature),
        )

    @cached_property
    def validator(self) -> Any:
        """The pydantic model of the arguments (strict, no extra keys)."""
        fields = {
            p.name: (p.annotation, Field(p.default, description=p.description))
            for p in self.signature
        }
        return create_model(f"{self.name}_args", __config__=_ArgsConfig.config, **fields)

    def with_schema(self, parameters: dict[str, Any]) -> ToolSpec:
        """A copy whose JSON schema is exactly ``parameters`` (key order kept), sent verbatim
        by every provider under either request style (Gemini still converts any schema to
        its own format).

        What the copy validates: calls are checked against the function's signature as
        always (types, required parameters, finite numbers), with one difference: unless the
        schema says ``"additionalProperties": false``, an argument the function does not take
        is dropped instead of refused, as JSON Schema allows extra properties by default. The
        schema must agree with the signature where both speak: each of its ``properties`` is a
        parameter of the function, and each required parameter is among its ``properties``
        and its ``required`` (else ``ValueError``: a model following the schema would be
        refused). Types inside the schema are not compared with the annotations.
        """
        if not isinstance(parameters, dict):
            raise ValueError(f"{self.name}: a tool schema must be a JSON object (a dict)")
        properties = parameters.get("properties", {})
        required = parameters.get("required", [])
        if not isinstance(properties, dict) or not isinstance(required, list):
            raise ValueError(
                f"{self.name}: the schema's properties must be an object and required a list"
            )
        names = {p.name for p in self.signature}
        unknown = [k for k in properties if k not in names]
        if unknown:
            raise ValueError(
                f"{self.name}: the schema names {', '.join(map(repr, unknown))}, which the "
                "function does not take"
            )
        needed = [p.name for p in self.signature if p.required]
        missing = [n for n in needed if n not in properties or n not in required]
        if missing:
            raise ValueError(
                f"{self.name}: the function requires {', '.join(map(repr, missing))}, which the "
                "schema does not require"
            )
        return dataclasses.replace(self, schema=copy.deepcopy(parameters))

    @property
    def ignores_extra_arguments(self) -> bool:
        """Whether arguments the function does not take are dropped (a given schema that does
        not forbid them) rather than refused."""
        return self.schema is not None and self.schema.get("additionalProperties") is not False

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as a model provider expects it (the one given to
        ``with_schema``, unchanged, when there is one)."""
        if self.schema is not None:
            return self.schema
        parameters = _simplify(self.validator.model_json_schema())
        parameters.setdefault("properties", {})
        parameters.setdefault("required", [])
        parameters["additionalProperties"] = False
        return parameters

    @cached_property
    def strict_parameters(self) -> dict[str, Any] | None:
        """The schema in OpenAI's strict form (``agents.strict_schema``), or None when the tool
        has none (a free-form object argument)."""
        return strict_form(self.parameters)

    @cached_property
    def null_means_absent(self) -> frozenset[str]:
        """Optional parameters whose type has no ``None``: a ``null`` for one of them is taken as
        "not given" (the strict form says so), so its default applies."""
        return frozenset(
            p.name for p in self.signature if not p.required and not _allows_none(p.annotation)
        )

    def openai_schema(self, *, strict: bool = False) -> dict[str, Any]:
        """The tool in OpenAI function-calling format; ``strict``: in strict mode where the
        tool has a strict form."""
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if strict and self.strict_parameters is not None:
            function.update(parameters=self.strict_parameters, strict=True)
        return {"type": "function", "function": function}

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Validate raw arguments; raise ToolError naming every problem."""
        if arguments is None:
            arguments = {}
        if self.ignores_extra_arguments and type(arguments) is dict:
            known = {p.name for p in self.signature}
            arguments = {k: v for k, v in arguments.items() if k in known}
        if type(arguments) is dict and self.null_means_absent and None in arguments.values():
            absent = self.null_means_absent
            arguments = {k: v for k, v in arguments.items() if not (v is None and k in absent)}
        problem = argument_problem(arguments)
        if problem is not None:
            shown = arguments if isinstance(arguments, str) else dump_text(arguments, 200)
            raise ToolError(f"{self.name}: {problem}; got {excerpt(shown)}")
        try:
            model = self.validator.model_validate(_coerce_ints_to_floats(self, arguments))
        except ValidationError as exc:
            raise ToolError(f"{self.name}: invalid arguments: {_describe(exc)}") from None
        values = {k: getattr(model, k) for k in self.validator.model_fields}
        for key, value in values.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ToolError(f"{self.name}: {key} must be a finite number")
        return values


def _allows_none(annotation: Any) -> bool:
    """Whether a parameter's annotation takes ``None`` (``X | None``, ``Optional``, ``Any``)."""
    if annotation is Any or annotation is None or annotation is type(None):
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_allows_none(arg) for arg in get_args(annotation))
    return False


def _coerce_ints_to_floats(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """Let an integer stand for a float (JSON has one number type); bools stay wrong."""
    out = dict(arguments)
    for key, value in arguments.items():
        info = spec.validator.model_fields.get(key)
        if info is None or isinstance(value, bool) or not isinstance(value, int):
            continue
        if _accepts_float(info.annotation):
            try:
                out[key] = float(value)
            except OverflowError:
                raise ToolError(f"{spec.name}: {key} must be a finite number") from None
    return out


def _accepts_float(annotation: Any) -> bool:
    if annotation is float:
        return True
    args = getattr(annotation, "__args__", ())
    return float in args and int not in args


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            parts.append(f"unexpected argument '{loc}'")
        elif err["type"] == "missing":
            parts.append(f"missing required argument '{loc}'")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 200 else got[:200] + "…"
            parts.append(f"'{loc}': {err['msg']} (got {got})")
    return "; ".join(parts)


def error_result(message: str) -> dict[str, Any]:
    return {"status": "error", "error": message}


class Toolkit:
    """A set of tools bound to one object; dispatches calls by name.

    Subclasses define tool methods with ``@tool``; ``specs()`` lists them in definition
    order and ``call()`` validates, runs and wraps the result. A subclass may give some tools'
    JSON schemas verbatim in ``schemas`` (tool name → schema): their specs carry it
    (``ToolSpec.with_schema``), so what the model is shown and how its calls are validated
    come from one place.
    """

    schemas: ClassVar[dict[str, dict[str, Any]]] = {}
    _spec_cache: ClassVar[dict[type, dict[str, ToolSpec]]] = {}

    @classmethod
    def tool_specs(cls) -> dict[str, ToolSpec]:
        cached = Toolkit._spec_cache.get(cls)
        if cached is None:
            cached = {}
            for klass in reversed(cls.__mro__):
                for attr, value in vars(klass).items():
                    if is_tool(value):
                        cached[attr] = ToolSpec.from_function(value, name=attr)
            for name, schema in cls.schemas.items():
                if name in cached:  # a base class may name the tools of its subclasses
                    cached[name] = cached[name].with_schema(schema)
            Toolkit._spec_cache[cls] = cached
        return cached

    def specs(self) -> list[ToolSpec]:
        return list(self.tool_specs().values())

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        spec = self.tool_specs().get(name)
        if spec is None:
            known = ", ".join(self.tool_specs())
            return error_result(f"unknown tool '{name}'. Available tools: {known}")
        try:
            values = spec.validate(arguments)
            result = spec.fn(self, **values)
        except ToolError as exc:
            return error_result(str(exc))
        if result is None:
            result = {}
        return {"status": "success", **result}
