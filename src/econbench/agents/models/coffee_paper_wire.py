"""The request bodies of the CoffeeBench reference's model classes, built from econbench's
messages.

``request_style = "coffee_paper"`` makes the providers send exactly what the CoffeeBench
paper's harness (``coffeebench/models/*_model.py``) sends through the same SDKs, for the
conversation ``econbench.agents.reference_agent.ReferenceAgent`` keeps in the reference's
shape. The agent gives the provider its messages with the system prompt first (Anthropic
and Gemini carry it out of band, OpenAI as a ``developer`` item, OpenRouter as a ``system``
message, as the reference's ``Agent.init`` routes it) and a ``GenerateConfig`` whose
``extra[COFFEE_KEY]`` (:class:`CallOptions` as a dict) says which of the reference's calls
this is (``query`` or ``summarize``) and which fall-backs the reference's model object has
taken so far (``_skip_temperature`` …, state the agent keeps).

An assistant turn is replayed from ``provider_data[COFFEE_KEY]["raw"]``, the reference's
``ModelResponse.raw`` (what :func:`anthropic_raw` / :func:`responses_raw` keep of a reply);
an assistant turn without it (the compactor's "(context summary follows)" bridge) is rebuilt
from its text and calls as the reference rebuilds one.

Anthropic (``AnthropicModel.query``): ``model``, ``messages``, ``max_tokens`` (4096; 8192
with thinking, 4096 for claude-opus-4-7), ``temperature`` 0.0 unless skipped (always
skipped with thinking), ``thinking`` when on, ``system`` as ONE text block with
``cache_control``, ``tools`` as name/description/input_schema and ``tool_choice`` ``{"type":
"auto", "disable_parallel_tool_use": true}``. A tool result is a user message of one
``tool_result`` block, a user text a plain string, and the last message's last block gets
``cache_control`` (a string last message becomes one text block). ``summarize``: a
plain-string ``system``, one user message, ``max_tokens``, ``temperature`` unless skipped;
no tools, no cache breakpoints. The SDK the reference locked (anthropic 0.75.0) sends
``anthropic-version: 2023-06-01``; so do these requests (:data:`ANTHROPIC_VERSION`), since
later API versions refuse the ``temperature`` the reference sends.

OpenAI (``OpenAIModel``, the Responses API): ``model``, ``input`` (``developer`` / ``user``
messages as ``{"role", "content"}``, ``function_call_output`` items, a reply's output items
replayed as the reference serialises them), ``max_output_tokens`` 4096, ``temperature`` 0.0
unless skipped, ``reasoning`` ``{"effort", "summary": "auto"}`` unless skipped (effort
"low", "high" with thinking), ``tools`` as ``{"type": "function", name, description,
parameters}`` and ``parallel_tool_calls`` false; no ``tool_choice``, ``store`` or
``include``. ``summarize``: developer + user, ``max_output_tokens``, ``temperature`` and
``reasoning`` ``{"effort"}`` unless skipped.

OpenRouter (``OpenRouterModel``, Chat Completions, ``openai-compatible`` providers):
``model``, ``messages`` (system kept as ``system``; an assistant turn ``{"role",
"content": text or null, "tool_calls"}`` with ``json.dumps`` arguments), ``max_tokens``
4096, ``temperature`` unless skipped, ``reasoning_effort`` only with thinking, ``tools`` in
the chat form and ``parallel_tool_calls`` false (left out of one call, and its retries,
when the server refused it: ``CallOptions.drop_parallel_tool_calls``). ``summarize``:
system + user, ``max_tokens`` 8192, ``temperature`` unless skipped; its text is the
message's ``content``, else its ``reasoning``. A reply's text is its ``content`` as sent.

On the wire the Anthropic and Responses bodies' top-level fields come in alphabetical order,
as the reference's locked SDKs (anthropic 0.75.0, openai 2.14.0) write them; later SDKs write
them in another order, so these requests are posted through the SDK's own client with the
body as :func:`reference_body` orders it (``AnthropicProvider`` and the OpenAI providers do
this), and the bytes equal the reference's (``tests/coffee/paper/test_conformance.py``).
openai 2.14.0 writes a Chat Completions body in the order of ``create``'s parameters
(``messages``, ``model``, ``max_tokens``, ``parallel_tool_calls``, ``reasoning_effort``,
``temperature``, ``tools``): :func:`chat_body`. Both SDKs serialise as httpx does (compact,
UTF-8, not ASCII-escaped), so the bytes are the reference's
(``tests/agents/test_coffee_paper_wire.py`` compares them with the recorded ones).

Gemini (``GeminiModel``, google-genai 1.56.0, ``POST v1beta/models/{model}:generateContent``):
the body is built here in the order and spelling that client writes (:func:`gemini_request`)
and posted as it is through econbench's own google-genai client, which serialises it with
``json.dumps`` as 1.56.0 did (ASCII-escaped, ``", "`` / ``": "`` separators). ``contents``
(a user text one text part; a tool result a user turn of one ``functionResponse``
``{"name", "response": {"output": text}}``, no id; an assistant turn its thought parts, then
its text, then its calls ``{"args", "name"}`` with the call's thought signature; no
merging of turns), ``systemInstruction`` (a user content of one text part) when the system
prompt is set, ``tools`` (one tool of ``functionDeclarations`` ``{"description", "name",
"parameters"}``, the schema as the client's ``Schema`` dumps it: upper-case types, fields in
its field order) and ``toolConfig`` ``AUTO``, then ``generationConfig`` (``temperature`` 0.0,
``maxOutputTokens`` 4096, ``thinkingConfig`` ``{"include_thoughts", "thinking_budget": -1}``
in snake case). Thought signatures go back URL-safe base64 encoded (pydantic's bytes).
``summarize``: one user content, the instructions as ``systemInstruction``, no tools, thoughts
off; its text is the reply's first non-empty text part.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from econbench.agents.models.base import ChatMessage, GenerateConfig
from econbench.agents.tools import ToolCall, ToolSpec

COFFEE_KEY = "coffee_paper"
"""Key of the call options in ``GenerateConfig.extra`` and of the replay data in a turn's
``provider_data``."""
ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header of the reference's locked SDK (anthropic 0.75.0)."""
MAX_TOKENS = 4096
"""Every reference model class's ``max_tokens`` (and ``summarize``'s default)."""
THINKING_BUDGET = 4096
"""``AnthropicModel``'s ``thinking_budget_tokens``."""
OPENROUTER_SUMMARY_MAX_TOKENS = 8192
TEMPERATURE = 0.0
_CACHE = {"type": "ephemeral"}
_OPUS_ADAPTIVE = "claude-opus-4-7"


@dataclass(frozen=True)
class CallOptions:
    """Which reference call a request is and the fall-backs its model object has taken."""

    call: str = "query"
    """``"query"`` (a turn, with tools) or ``"summarize"`` (the compactor's summary)."""
    thinking: bool = False
    """The model was made with ``enable_thinking`` (a ``-thinking`` name)."""
    skip_temperature: bool = False
    skip_thinking: bool = True
    """Anthropic: thinking is not sent (off, or refused once)."""
    skip_reasoning: bool = False
    """OpenAI: ``reasoning`` is not sent (refused once); OpenRouter: ``reasoning_effort``."""
    drop_parallel_tool_calls: bool = False
    """OpenRouter: ``parallel_tool_calls`` is left out of this call only (the server refused
    it; the reference pops it from the one call's keyword arguments)."""

    def to_config(self, timeout_s: float) -> GenerateConfig:
        """The ``GenerateConfig`` a provider reads these options from."""
        return GenerateConfig(
            temperature=TEMPERATURE,
            max_tokens=MAX_TOKENS,
            timeout_s=timeout_s,
            extra={COFFEE_KEY: asdict(self)},
            request_style="coffee_paper",
        )


def call_options(config: GenerateConfig) -> CallOptions:
    """The options a ``coffee_paper`` config carries (defaults when it carries none)."""
    data = (config.extra or {}).get(COFFEE_KEY)
    return CallOptions(**data) if isinstance(data, dict) else CallOptions()


def split_system(messages: list[ChatMessage]) -> tuple[str | None, list[ChatMessage]]:
    """The leading system message's text (the reference's ``system_prompt``) and the rest."""
    if messages and messages[0].role == "system":
        return messages[0].content, messages[1:]
    return None, messages


def raw_of(msg: ChatMessage) -> Any:
    """A turn's ``ModelResponse.raw`` (``None`` when it has none, as the bridge turn)."""
    data = (msg.provider_data or {}).get(COFFEE_KEY)
    return data.get("raw") if isinstance(data, dict) else None


def with_raw(raw: Any) -> dict[str, Any]:
    """``provider_data`` carrying a reply's replay data."""
    return {COFFEE_KEY: {"raw": raw}}


def _tool_input(arguments: Any) -> Any:
    return arguments if isinstance(arguments, dict) else {}


# --------------------------------------------------------------------------- anthropic
def anthropic_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """``AnthropicModel._to_anthropic_messages``: a pure shape translation, no merging."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            out.append({"role": "user", "content": [block]})
        elif m.role == "assistant":
            raw = raw_of(m)
            if raw is not None:
                out.append({"role": "assistant", "content": [dict(b) for b in raw]})
                continue
            blocks: list[dict[str, Any]] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for call in m.tool_calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.call_id,
                        "name": call.name,
                        "input": _tool_input(call.arguments),
                    }
                )
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        else:
            out.append({"role": "user", "content": m.content})
    return out


def _mark_last(turns: list[dict[str, Any]]) -> None:
    """``query``'s one message breakpoint: the last block of the last message."""
    if not turns:
        return
    last = turns[-1]
    content = last["content"]
    if isinstance(content, str):
        turns[-1] = {
            "role": last["role"],
            "content": [{"type": "text", "text": content, "cache_control": dict(_CACHE)}],
        }
    elif isinstance(content, list) and content:
        blocks = [dict(b) for b in content]
        blocks[-1]["cache_control"] = dict(_CACHE)
        turns[-1] = {"role": last["role"], "content": blocks}


def anthropic_request(
    model: str, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` that ``query`` / ``summarize`` pass."""
    opts = call_options(config)
    system, rest = split_system(messages)
    if opts.call == "summarize":
        user = rest[-1].content if rest else ""
        request: dict[str, Any] = {
            "model": model,
            "system": system or "",
            "messages": [{"role": "user", "content": user}],
            "max_tokens": MAX_TOKENS,
        }
        if not opts.skip_temperature:
            request["temperature"] = TEMPERATURE
        return request
    turns = anthropic_messages(rest)
    _mark_last(turns)
    opus = model == _OPUS_ADAPTIVE
    max_tokens = MAX_TOKENS
    if not opts.skip_thinking and not opus:
        max_tokens = MAX_TOKENS + THINKING_BUDGET
    request = {"model": model, "messages": turns, "max_tokens": max_tokens}
    if not opts.skip_temperature:
        request["temperature"] = 1.0 if not opts.skip_thinking else TEMPERATURE
    if not opts.skip_thinking:
        if opus:
            request["thinking"] = {"type": "adaptive"}
            request["extra_body"] = {"output_config": {"effort": "high"}}
        else:
            request["thinking"] = {"type": "enabled", "budget_tokens": THINKING_BUDGET}
    if system:
        request["system"] = [{"type": "text", "text": system, "cache_control": dict(_CACHE)}]
    if tools:
        request["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in tools
        ]
        request["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
    return request


def anthropic_raw(data: dict[str, Any]) -> list[dict[str, Any]]:
    """``query``'s ``raw_blocks``: the reply's text, thinking and tool_use blocks, replayed."""
    raw: list[dict[str, Any]] = []
    for block in data.get("content") or []:
        block = block if isinstance(block, dict) else {}
        kind = block.get("type")
        if kind == "text":
            raw.append({"type": "text", "text": block.get("text")})
        elif kind == "thinking":
            raw.append(
                {
                    "type": "thinking",
                    "thinking": block.get("thinking", ""),
                    "signature": block.get("signature", ""),
                }
            )
        elif kind == "redacted_thinking":
            raw.append({"type": "redacted_thinking", "data": block.get("data", "")})
        elif kind == "tool_use":
            raw.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": block.get("input") or {},
                }
            )
    return raw


# --------------------------------------------------------------------------- openai responses
def responses_input(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """``OpenAIModel._to_responses_input`` (a leading system message is the developer one)."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role in ("system", "user"):
            role = "developer" if m.role == "system" else "user"
            items.append({"role": role, "content": m.content})
        elif m.role == "tool":
            items.append(
                {"type": "function_call_output", "call_id": m.tool_call_id, "output": m.content}
            )
        else:
            raw = raw_of(m)
            if raw is not None:
                items.extend(dict(item) for item in raw)
                continue
            if m.content:
                items.append({"role": "assistant", "content": m.content})
            for call in m.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.call_id,
                        "name": call.name,
                        "arguments": json.dumps(_tool_input(call.arguments)),
                    }
                )
    return items


def responses_request(
    model: str, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
) -> dict[str, Any]:
    """The keyword arguments of ``responses.create`` that ``query`` / ``summarize`` pass."""
    opts = call_options(config)
    effort = "high" if opts.thinking else "low"
    if opts.call == "summarize":
        system, rest = split_system(messages)
        request: dict[str, Any] = {
            "model": model,
            "input": [
                {"role": "developer", "content": system or ""},
                {"role": "user", "content": rest[-1].content if rest else ""},
            ],
            "max_output_tokens": MAX_TOKENS,
        }
        if not opts.skip_temperature:
            request["temperature"] = TEMPERATURE
        if not opts.skip_reasoning:
            request["reasoning"] = {"effort": effort}
        return request
    request = {"model": model, "input": responses_input(messages), "max_output_tokens": MAX_TOKENS}
    if not opts.skip_temperature:
        request["temperature"] = TEMPERATURE
    if not opts.skip_reasoning:
        request["reasoning"] = {"effort": effort, "summary": "auto"}
    if tools:
        request["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
            }
            for t in tools
        ]
        request["parallel_tool_calls"] = False
    return request


def responses_raw(data: dict[str, Any]) -> list[dict[str, Any]]:
    """``query``'s ``raw_items``: the message, function_call and reasoning items of the reply
    as ``_serialize_responses_item`` writes them (other items are not kept)."""
    raw: list[dict[str, Any]] = []
    for item in data.get("output") or []:
        item = item if isinstance(item, dict) else {}
        kind = item.get("type")
        if kind == "function_call":
            raw.append(
                {
                    "type": "function_call",
                    "id": item.get("id"),
                    "call_id": item.get("call_id"),
                    "name": item.get("name"),
                    "arguments": item.get("arguments") or "",
                }
            )
        elif kind == "message":
            parts = [
                {"type": "output_text", "text": p.get("text") or ""}
                for p in item.get("content") or []
                if isinstance(p, dict) and p.get("type") == "output_text"
            ]
            raw.append(
                {
                    "type": "message",
                    "id": item.get("id"),
                    "role": item.get("role", "assistant"),
                    "content": parts,
                }
            )
        elif kind == "reasoning":
            summary = [
                {"type": "summary_text", "text": s.get("text") or ""}
                for s in item.get("summary") or []
                if isinstance(s, dict)
            ]
            raw.append({"type": "reasoning", "id": item.get("id"), "summary": summary})
    return raw


def responses_text(data: dict[str, Any]) -> str:
    """``response.output_text``: the output_text parts of the reply's message items."""
    return "".join(
        p.get("text") or ""
        for item in data.get("output") or []
        if isinstance(item, dict) and item.get("type") == "message"
        for p in item.get("content") or []
        if isinstance(p, dict) and p.get("type") == "output_text"
    )


# --------------------------------------------------------------------------- openrouter
def chat_messages(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """``OpenRouterModel._to_chat_messages`` (the system message stays ``system``)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": json.dumps(_tool_input(c.arguments)),
                        },
                    }
                    for c in m.tool_calls
                ]
            out.append(msg)
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def chat_request(
    model: str, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` that ``OpenRouterModel`` passes."""
    opts = call_options(config)
    if opts.call == "summarize":
        system, rest = split_system(messages)
        request: dict[str, Any] = {
            "model": model,
            "messages": [
                {"role": "system", "content": system or ""},
                {"role": "user", "content": rest[-1].content if rest else ""},
            ],
            "max_tokens": OPENROUTER_SUMMARY_MAX_TOKENS,
        }
        if not opts.skip_temperature:
            request["temperature"] = TEMPERATURE
        return request
    request = {"model": model, "messages": chat_messages(messages), "max_tokens": MAX_TOKENS}
    if not opts.skip_temperature:
        request["temperature"] = TEMPERATURE
    if opts.thinking and not opts.skip_reasoning:
        request["reasoning_effort"] = "high"
    if tools:
        request["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in tools
        ]
        if not opts.drop_parallel_tool_calls:
            request["parallel_tool_calls"] = False
    return request


CHAT_FIELDS = (
    "messages",
    "model",
    "max_tokens",
    "parallel_tool_calls",
    "reasoning_effort",
    "temperature",
    "tool_choice",
    "tools",
)
"""The order openai 2.14.0's ``chat.completions.create`` writes these fields in (its
parameters' order)."""


def chat_body(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A Chat Completions request's body as the reference's SDK writes it (:data:`CHAT_FIELDS`
    order, ``extra_body`` last), and its extra headers."""
    headers = dict(request.get("extra_headers") or {})
    rest = {k: v for k, v in request.items() if k not in ("extra_headers", "extra_body")}
    body = {k: rest[k] for k in CHAT_FIELDS if k in rest}
    body.update({k: v for k, v in rest.items() if k not in body})
    body.update(request.get("extra_body") or {})
    return body, headers


def chat_text(data: dict[str, Any], call: str) -> str | None:
    """The reply's text as ``OpenRouterModel`` reads it: ``message.content or ""`` (a
    ``summarize`` falls back on ``message.reasoning``); ``None`` for a reply of no shape."""
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if not text and call == "summarize":
        reasoning = message.get("reasoning")
        text = reasoning if isinstance(reasoning, str) else ""
    return text


# --------------------------------------------------------------------------- gemini
GEMINI_API_VERSION = "v1beta"
"""The API version google-genai 1.56.0 posts to (later clients default to ``v1``)."""
GEMINI_THINKING_BUDGET = -1
"""``GeminiModel.thinking_budget``: dynamic, also with thinking off."""
_SCHEMA_FIELDS = (
    "any_of",
    "default",
    "description",
    "enum",
    "example",
    "format",
    "items",
    "max_items",
    "max_length",
    "max_properties",
    "maximum",
    "min_items",
    "min_length",
    "min_properties",
    "minimum",
    "nullable",
    "pattern",
    "properties",
    "property_ordering",
    "required",
    "title",
    "type",
)
"""google-genai 1.56.0's ``Schema`` fields in their order (``model_dump`` writes them so)."""
_SCHEMA_ALIASES = {
    "anyOf": "any_of",
    "maxItems": "max_items",
    "maxLength": "max_length",
    "maxProperties": "max_properties",
    "minItems": "min_items",
    "minLength": "min_length",
    "minProperties": "min_properties",
    "propertyOrdering": "property_ordering",
}


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's JSON schema as the reference's client sends it: validated into its
    ``Schema`` (types upper-case, nested schemas converted) and dumped without the unset
    fields, in the model's field order. The reference's schemas only carry ``type``,
    ``properties`` and ``required``; a keyword the client has no field for is refused."""
    fields: dict[str, Any] = {}
    for key, value in schema.items():
        name = _SCHEMA_ALIASES.get(key, key)
        if name not in _SCHEMA_FIELDS:
            raise ValueError(f"coffee_paper: schema keyword {key!r} has no Gemini field")
        if value is None:
            continue
        if name == "type":
            value = str(value).upper()
        elif name == "properties":
            value = {k: gemini_schema(v) for k, v in value.items()}
        elif name == "items":
            value = gemini_schema(value)
        elif name == "any_of":
            value = [gemini_schema(v) for v in value]
        fields[name] = value
    return {k: fields[k] for k in _SCHEMA_FIELDS if k in fields}


def _signature_out(signature: str) -> str:
    """A stored (standard base64) thought signature as the client writes bytes: URL-safe."""
    return base64.urlsafe_b64encode(base64.b64decode(signature)).decode()


def gemini_contents(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """``GeminiModel._to_genai_contents`` as the client writes them (no system message)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            response = {"name": str(m.name or ""), "response": {"output": m.content}}
            out.append({"parts": [{"functionResponse": response}], "role": "user"})
        elif m.role == "assistant":
            raw = raw_of(m)
            raw = raw if isinstance(raw, dict) else {}
            parts: list[dict[str, Any]] = []
            for block in raw.get("thought_parts") or []:
                part: dict[str, Any] = {"text": block.get("text", ""), "thought": True}
                if block.get("thought_signature"):
                    part["thoughtSignature"] = _signature_out(block["thought_signature"])
                parts.append(part)
            if m.content:
                parts.append({"text": m.content})
            signatures = raw.get("thought_signatures") or {}
            for call in m.tool_calls:
                part = {
                    "functionCall": {"args": dict(_tool_input(call.arguments)), "name": call.name}
                }
                if signatures.get(call.call_id):
                    part["thoughtSignature"] = _signature_out(signatures[call.call_id])
                parts.append(part)
            out.append({"parts": parts or [{"text": ""}], "role": "model"})
        else:
            out.append({"parts": [{"text": str(m.content)}], "role": "user"})
    return out


def _generation_config(include_thoughts: bool) -> dict[str, Any]:
    return {
        "temperature": TEMPERATURE,
        "maxOutputTokens": MAX_TOKENS,
        "thinkingConfig": {
            "include_thoughts": include_thoughts,
            "thinking_budget": GEMINI_THINKING_BUDGET,
        },
    }


def _system_content(text: str) -> dict[str, Any]:
    return {"parts": [{"text": text}], "role": "user"}


def gemini_request(
    model: str, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
) -> dict[str, Any]:
    """The ``generateContent`` body of ``GeminiModel.query`` / ``summarize``, in the order
    google-genai 1.56.0 writes it (``contents``, ``systemInstruction``, ``tools``,
    ``toolConfig``, ``generationConfig``)."""
    opts = call_options(config)
    system, rest = split_system(messages)
    if opts.call == "summarize":
        user = rest[-1].content if rest else ""
        return {
            "contents": [{"parts": [{"text": str(user)}], "role": "user"}],
            "systemInstruction": _system_content(system or ""),
            "generationConfig": _generation_config(False),
        }
    body: dict[str, Any] = {"contents": gemini_contents(rest)}
    if system:
        body["systemInstruction"] = _system_content(system)
    if tools:
        declarations = [
            {
                "description": t.description,
                "name": t.name,
                "parameters": gemini_schema(t.parameters),
            }
            for t in tools
        ]
        body["tools"] = [{"functionDeclarations": declarations}]
        body["toolConfig"] = {"functionCallingConfig": {"mode": "AUTO"}}
    body["generationConfig"] = _generation_config(opts.thinking)
    return body


@dataclass
class GeminiReply:
    """What ``GeminiModel.query`` / ``summarize`` read of a reply."""

    text: str
    thinking: str
    calls: list[ToolCall]
    raw: dict[str, Any] | None
    finish_reason: str
    prompt_tokens: int
    summary: str
    """``summarize``'s text: the first non-empty text part."""


def _b64_standard(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    text = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64encode(base64.b64decode(text + "=" * (-len(text) % 4))).decode()
    except ValueError:
        return None


def _field(obj: Any, camel: str) -> Any:
    if not isinstance(obj, dict):
        return None
    if camel in obj:
        return obj[camel]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return obj.get(snake)


def gemini_reply(data: dict[str, Any]) -> GeminiReply:
    """A ``generateContent`` reply as ``GeminiModel.query`` reads it: the text parts joined,
    the thought parts (kept with their signatures for replay), each call with an id made
    like the reference's (``{name}_{8 hex}``, here from the reply's id, not a uuid) and its
    thought signature; ``raw`` is ``None`` when it keeps nothing."""
    candidates = _field(data, "candidates")
    candidate = candidates[0] if isinstance(candidates, list) and candidates else None
    content = _field(candidate, "content")
    parts = _field(content, "parts")
    texts: list[str] = []
    thoughts: list[str] = []
    thought_parts: list[dict[str, Any]] = []
    signatures: dict[str, str] = {}
    calls: list[ToolCall] = []
    summary = ""
    seed = str(_field(data, "responseId") or "")
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        fc = _field(part, "functionCall")
        text = part.get("text")
        signature = _b64_standard(_field(part, "thoughtSignature"))
        if not summary and isinstance(text, str) and text:
            summary = text
        if isinstance(fc, dict):
            name = str(fc.get("name") or "")
            digest = hashlib.sha256(f"{seed}/{len(calls)}/{name}".encode()).hexdigest()[:8]
            call_id = f"{name}_{digest}"
            args = fc.get("args")
            calls.append(ToolCall(name, dict(args) if isinstance(args, dict) else {}, call_id))
            if signature:
                signatures[call_id] = signature
        elif part.get("thought") is True:
            thoughts.append(text if isinstance(text, str) else "")
            block: dict[str, Any] = {"text": text if isinstance(text, str) else ""}
            if signature:
                block["thought_signature"] = signature
            thought_parts.append(block)
        elif isinstance(text, str) and text:
            texts.append(text)
    raw: dict[str, Any] = {}
    if signatures:
        raw["thought_signatures"] = signatures
    if thought_parts:
        raw["thought_parts"] = thought_parts
    usage = _field(data, "usageMetadata")
    prompt = _field(usage, "promptTokenCount")
    finish = _field(candidate, "finishReason")
    return GeminiReply(
        text="".join(texts),
        thinking="".join(thoughts),
        calls=calls,
        raw=raw or None,
        finish_reason=str(finish) if finish else "",
        prompt_tokens=prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else 0,
        summary=summary,
    )


def with_reply(raw: Any, prompt_tokens: int) -> dict[str, Any]:
    """``provider_data`` of a reply: its replay data and the prompt tokens the reference's
    model object keeps as ``last_input_tokens`` (Gemini: ``prompt_token_count``)."""
    return {COFFEE_KEY: {"raw": raw, "prompt_tokens": prompt_tokens}}


def prompt_tokens_of(provider_data: dict[str, Any] | None) -> int | None:
    """The prompt tokens :func:`with_reply` kept, ``None`` when the provider kept none."""
    data = (provider_data or {}).get(COFFEE_KEY)
    value = data.get("prompt_tokens") if isinstance(data, dict) else None
    return value if isinstance(value, int) else None


# --------------------------------------------------------------------------- fall-backs
def fallback(provider: str, call: str, message: str, opts: CallOptions) -> CallOptions | None:
    """The options after the reference's one in-call fall-back for an error ``message``
    (its ``_do_call`` drops a refused ``thinking`` / ``temperature`` / ``reasoning`` and
    sends again, for good), or ``None`` when the reference would let the error stand."""
    msg = message.lower()

    def says(*words: str) -> bool:
        return any(w in msg for w in words)

    def drop(flag: str) -> CallOptions:
        return CallOptions(**{**asdict(opts), flag: True})

    temperature = not opts.skip_temperature and "temperature" in msg
    reasoning = not opts.skip_reasoning and "reasoning" in msg
    if provider == "anthropic":
        thinking = call == "query" and not opts.skip_thinking and "thinking" in msg
        if thinking and says("not supported", "unrecognized", "invalid"):
            return drop("skip_thinking")
        if temperature and says("deprecated", "not supported", "invalid"):
            return drop("skip_temperature")
        return None
    if provider == "openai":
        if call == "summarize":  # summarize's looser rule: the word alone
            if temperature:
                return drop("skip_temperature")
            return drop("skip_reasoning") if reasoning else None
        if temperature and says("not supported", "deprecated", "unsupported"):
            return drop("skip_temperature")
        if reasoning and says("not supported", "unrecognized", "unknown", "invalid"):
            return drop("skip_reasoning")
        return None
    if provider == "openai-compatible":
        if temperature:
            return drop("skip_temperature")
        if reasoning and call == "query" and opts.thinking:  # reasoning_effort was sent
            return drop("skip_reasoning")
        parallel = call == "query" and not opts.drop_parallel_tool_calls
        if parallel and "parallel_tool_calls" in msg:  # sent with tools: one call only
            return drop("drop_parallel_tool_calls")
        return None
    return None


def reference_body(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A request's body as the reference's SDK writes it, and its extra headers: every field
    (``extra_body``'s included) at the top level, in alphabetical order."""
    headers = dict(request.get("extra_headers") or {})
    body = {k: v for k, v in request.items() if k not in ("extra_headers", "extra_body")}
    body.update(request.get("extra_body") or {})
    return dict(sorted(body.items())), headers
