"""A fake Gemini API (``POST /{version}/models/{model}:generateContent``) for the real SDK.

Point the SDK at ``server.root_url`` with ``http_options={"base_url": ...}``; any API
version in the path is accepted (the SDK defaults to ``v1``, older ones used ``v1beta``).
Field names are read in both spellings the real API accepts (``maxOutputTokens`` and
``max_output_tokens``), because the SDK sends some nested objects in snake_case.

Like the real API it answers with a 400 when a request breaks a rule: a function
declaration schema with a field outside Gemini's schema subset (``additionalProperties``,
``$ref``, ``const``, ...), ``enum`` on a non-string, an object parameter list with no
properties, a function call turn not followed by as many function responses, a response
id that answers no call, and a function call that this server issued with a thought
signature replayed without it (or with another one).

Replies carry thought summaries when ``includeThoughts`` is set, a thought signature on the
first function call (or on the text when there is none), function call ids unless
``issue_call_ids`` is off, and usage in ``usageMetadata`` with implicit caching from the
shared-prefix model of ``FakeServer``. The ``malformed_tool_json`` fault answers with finish
reason ``MALFORMED_FUNCTION_CALL``, as Gemini does when it cannot parse the model's call.
The ``continuation`` fault cuts the reply's text in two at the per-request token limit:
the first half comes with finish reason ``CONTINUATION`` and a ``continuationToken``, and the
request that sends the token back gets the rest.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from .common import BrainRequest, FakeServer, Fault, arguments_text

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
SCHEMA_FIELDS = {
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "default",
    "example",
    "items",
    "properties",
    "required",
    "minimum",
    "maximum",
    "pattern",
    "anyOf",
    "any_of",
    "minItems",
    "min_items",
    "maxItems",
    "max_items",
    "minLength",
    "min_length",
    "maxLength",
    "max_length",
    "minProperties",
    "min_properties",
    "maxProperties",
    "max_properties",
    "propertyOrdering",
    "property_ordering",
}
SCHEMA_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
_FINISH = {"truncated": "MAX_TOKENS", "filtered": "SAFETY"}
"""``finishReason`` of the stop faults."""
_ROUTE = re.compile(r"^/(v1(?:alpha|beta)?\d*)/models/([^/:]+):generateContent$")


def get(obj: dict[str, Any] | None, camel: str, default: Any = None) -> Any:
    """A field in either spelling the API accepts (camelCase or snake_case)."""
    if not obj:
        return default
    if camel in obj:
        return obj[camel]
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return obj.get(snake, default)


class FakeGeminiServer(FakeServer):
    """Answers ``generateContent`` like the Gemini Developer API (non-streaming)."""

    routes: ClassVar[dict[tuple[str, str], str]] = {}
    #: Gemini 3 gives every function call an id; older models sent none.
    issue_call_ids: bool = True
    #: A 429 body carries a ``google.rpc.RetryInfo`` with this delay (e.g. "12s") when set.
    retry_info_delay: str | None = None

    def __init__(self, brain: Any, *, signing_key: bytes = b"fake-gemini") -> None:
        super().__init__(brain)
        self._signing_key = signing_key
        self._issued: dict[str, str] = {}  # function call key -> its thought signature
        self._counter = 0
        #: The usageMetadata of every successful response, in order.
        self.usages: list[dict[str, Any]] = []
        self._continued: dict[str, dict[str, Any]] = {}  # token -> the rest of a reply

    def match_route(self, method: str, path: str) -> str | None:
        return "handle_generate" if method == "POST" and _ROUTE.match(path) else None

    # ------------------------------------------------------------ errors
    def error_body(self, status: int, message: str) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": STATUS_NAMES.get(status, "UNKNOWN"),
        }
        if status == 429 and self.retry_info_delay:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": self.retry_info_delay,
                }
            ]
        return {"error": error}

    def context_overflow_body(self) -> dict[str, Any]:
        return self.error_body(
            400,
            "The input token count (1048577) exceeds the maximum number of tokens allowed "
            "(1048576).",
        )

    # ------------------------------------------------------------ signing
    def sign(self, part: dict[str, Any]) -> str:
        """The thought signature this server attaches to a part (checked on replay)."""
        digest = hmac.new(self._signing_key, _part_key(part).encode(), hashlib.sha256).digest()
        return base64.b64encode(digest).decode()

    # ------------------------------------------------------------ the route
    def handle_generate(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], fault: Fault | None
    ) -> None:
        model = _ROUTE.match(handler.path.split("?", 1)[0]).group(2)  # type: ignore[union-attr]
        token = get(body, "continuationToken") or get(
            get(body, "generationConfig"), "continuationToken"
        )
        if token is not None:
            rest = self._continued.pop(base64.b64encode(_bytes(token) or b"").decode(), None)
            if rest is None:
                self.send_json(handler, 400, self.error_body(400, "unknown continuation token"))
            else:
                self.send_json(handler, 200, rest)
            return
        problem = self.validate(body)
        if problem:
            self.send_json(handler, 400, self.error_body(400, problem))
            return
        request = to_brain_request(model, body)
        thinking = get(get(body, "generationConfig"), "thinkingConfig") or {}
        show_thoughts = bool(get(thinking, "includeThoughts"))
        thinking_off = get(thinking, "thinkingBudget") == 0
        reply, usage = self.think(request, fault)
        if thinking_off:
            usage["output"] -= usage["reasoning"]
            usage["reasoning"] = 0
        self._counter += 1
        finish = _FINISH.get(fault.kind if fault else "", "STOP")
        candidate: dict[str, Any] = {"index": 0, "finishReason": finish}
        if fault is not None and fault.kind == "malformed_tool_json" and reply.tool_calls:
            call = reply.tool_calls[0]
            candidate["finishReason"] = "MALFORMED_FUNCTION_CALL"
            candidate["finishMessage"] = (
                f"Malformed function call: print(default_api.{call['name']}"
                f"({arguments_text(call.get('arguments'))}))"
            )
        else:
            parts: list[dict[str, Any]] = []
            if reply.reasoning and show_thoughts and not thinking_off:
                parts.append({"text": reply.reasoning, "thought": True})
            if reply.text:
                parts.append({"text": reply.text})
            for i, call in enumerate(reply.tool_calls):
                arguments = call.get("arguments") or {}
                if isinstance(arguments, str):
                    arguments = json.loads(arguments)
                function_call: dict[str, Any] = {"name": call["name"], "args": arguments}
                if self.issue_call_ids:
                    function_call["id"] = call.get("id") or f"call_{self._counter:04d}_{i}"
                parts.append({"functionCall": function_call})
            self._attach_signature(parts)
            candidate["content"] = {"role": "model", "parts": parts} if parts else {"role": "model"}
        answer = usage["output"] - usage["reasoning"]
        meta: dict[str, Any] = {
            "promptTokenCount": usage["input"],
            "candidatesTokenCount": answer,
            "totalTokenCount": usage["input"] + usage["output"],
        }
        if usage["cached"]:
            meta["cachedContentTokenCount"] = usage["cached"]
        if usage["reasoning"]:
            meta["thoughtsTokenCount"] = usage["reasoning"]
        self.usages.append(meta)
        payload = {
            "candidates": [candidate],
            "usageMetadata": meta,
            "modelVersion": model,
            "responseId": f"resp-{self._counter:06d}",
        }
        if fault is not None and fault.kind == "continuation":
            payload = self._first_hop(payload)
        self.send_json(handler, 200, payload)

    def _first_hop(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The first half of a text reply, cut at the per-request limit; the rest is kept
        for the request that sends the token back (usage is split between the hops)."""
        candidate = payload["candidates"][0]
        parts = candidate["content"]["parts"]
        [text_part] = [p for p in parts if "text" in p and not p.get("thought")]
        cut = len(text_part["text"]) // 2
        token = base64.b64encode(f"continue-{self._counter}".encode()).decode()
        meta = payload["usageMetadata"]
        second = {**meta, "promptTokenCount": 0, "candidatesTokenCount": 1}
        first = {**meta, "candidatesTokenCount": meta["candidatesTokenCount"] - 1}
        rest_part = {**text_part, "text": text_part["text"][cut:]}
        self._continued[token] = {
            **payload,
            "candidates": [{**candidate, "content": {"role": "model", "parts": [rest_part]}}],
            "usageMetadata": second,
        }
        head = {"text": text_part["text"][:cut]}
        return {
            **payload,
            "candidates": [
                {
                    **candidate,
                    "content": {"role": "model", "parts": [head]},
                    "finishReason": "CONTINUATION",
                    "continuationToken": token,
                }
            ],
            "usageMetadata": first,
        }

    def _attach_signature(self, parts: list[dict[str, Any]]) -> None:
        calls = [p for p in parts if "functionCall" in p]
        texts = [p for p in parts if "text" in p and not p.get("thought")]
        target = calls[0] if calls else (texts[-1] if texts else None)
        if target is None:
            return
        target["thoughtSignature"] = self.sign(target)
        if "functionCall" in target:
            with self._lock:
                self._issued[_part_key(target)] = target["thoughtSignature"]

    # ------------------------------------------------------------ validation
    def validate(self, body: dict[str, Any]) -> str | None:
        """The first rule of the real API that this request breaks, as its 400 message."""
        contents = body.get("contents") or []
        if not contents:
            return "* GenerateContentRequest.contents: contents is not specified"
        for t, tool in enumerate(body.get("tools") or []):
            for d, declaration in enumerate(get(tool, "functionDeclarations") or []):
                schema = declaration.get("parameters")
                if schema is None:
                    continue
                where = f"tools[{t}].function_declarations[{d}].parameters"
                problem = _check_schema(schema, where)
                if problem:
                    return problem
                if str(schema.get("type", "")).upper() == "OBJECT" and not schema.get("properties"):
                    return (
                        f"* GenerateContentRequest.{where}.properties: should be non-empty "
                        "for OBJECT type"
                    )
        previous_calls: list[dict[str, Any]] = []
        for n, content in enumerate(contents):
            role = content.get("role")
            if role not in ("user", "model"):
                return f"Please use a valid role: user, model. (contents[{n}].role={role!r})"
            parts = content.get("parts") or []
            responses = [get(p, "functionResponse") for p in parts if get(p, "functionResponse")]
            if previous_calls and len(responses) != len(previous_calls):
                return (
                    "Please ensure that the number of function response parts is equal to the "
                    "number of function call parts of the function call turn."
                )
            if responses and not previous_calls:
                return (
                    f"contents[{n}]: a function response turn must come immediately after a "
                    "function call turn."
                )
            call_ids = {c.get("id") for c in previous_calls if c.get("id")}
            for response in responses:
                if response.get("id") and response["id"] not in call_ids:
                    return f"contents[{n}]: function response id {response['id']!r} matches no call"
            calls = [p for p in parts if get(p, "functionCall")]
            if role == "model" and calls:
                first = calls[0]
                issued = self._issued.get(_part_key(first))
                if issued is not None and _bytes(get(first, "thoughtSignature")) != _bytes(issued):
                    name = get(first, "functionCall").get("name")
                    return (
                        "Function call is missing a thought_signature in functionCall parts. "
                        "This is required for tools to work correctly, and missing "
                        "thought_signature may lead to degraded model performance. Additional "
                        f"data, function call `default_api:{name}` , position {n + 1}. Please "
                        "refer to https://ai.google.dev/gemini-api/docs/thought-signatures for "
                        "more details."
                    )
            previous_calls = [get(p, "functionCall") for p in calls] if role == "model" else []
        return None


def _check_schema(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return f"Invalid JSON payload received. Invalid value at '{where}'"
    for key in schema:
        if key not in SCHEMA_FIELDS:
            return (
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': "
                "Cannot find field."
            )
    kind = schema.get("type")
    if kind is not None and (not isinstance(kind, str) or kind.upper() not in SCHEMA_TYPES):
        return f"Invalid JSON payload received. Invalid value at '{where}.type' ({kind!r})"
    if "enum" in schema and str(kind).upper() != "STRING":
        return f"* GenerateContentRequest.{where}.enum: only allowed for STRING type"
    for key, value in (schema.get("properties") or {}).items():
        problem = _check_schema(value, f"{where}.properties[{key}].value")
        if problem:
            return problem
    if "items" in schema:
        problem = _check_schema(schema["items"], f"{where}.items")
        if problem:
            return problem
    for i, option in enumerate(get(schema, "anyOf") or []):
        problem = _check_schema(option, f"{where}.any_of[{i}]")
        if problem:
            return problem
    return None


def _bytes(value: Any) -> bytes | None:
    """Proto JSON bytes: standard or URL-safe base64, padded or not (the SDK sends URL-safe)."""
    if not isinstance(value, str):
        return None
    text = value.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _part_key(part: dict[str, Any]) -> str:
    """What a signature covers: the call (name and arguments) or the text."""
    call = get(part, "functionCall")
    if call:
        return "call:" + json.dumps([call.get("name"), call.get("args") or {}], sort_keys=True)
    return "text:" + str(part.get("text", ""))


def to_brain_request(model: str, body: dict[str, Any]) -> BrainRequest:
    """The generateContent request as the protocol-neutral request a brain reads."""
    system = get(body, "systemInstruction") or {}
    messages: list[dict[str, Any]] = []
    for content in body.get("contents") or []:
        parts = content.get("parts") or []
        texts = [p.get("text", "") for p in parts if "text" in p and not p.get("thought")]
        text = "\n\n".join(t for t in texts if t)
        if content.get("role") == "model":
            calls = [
                {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("args") or {}}
                for c in (get(p, "functionCall") for p in parts)
                if c
            ]
            messages.append({"role": "assistant", "content": text, "tool_calls": calls})
            continue
        for p in parts:
            response = get(p, "functionResponse")
            if response:
                messages.append(
                    {
                        "role": "tool",
                        "content": json.dumps(response.get("response")),
                        "tool_call_id": response.get("id") or response.get("name"),
                    }
                )
        if text:
            messages.append({"role": "user", "content": text})
    tools = [
        {
            "name": d.get("name"),
            "description": d.get("description", ""),
            "parameters": d.get("parameters") or get(d, "parametersJsonSchema") or {},
        }
        for tool in body.get("tools") or []
        for d in get(tool, "functionDeclarations") or []
    ]
    return BrainRequest(
        model=model,
        system="".join(p.get("text", "") for p in system.get("parts") or []),
        messages=messages,
        tools=tools,
        max_tokens=get(get(body, "generationConfig"), "maxOutputTokens"),
        raw=body,
    )
