"""Anthropic Messages API provider (official ``anthropic`` SDK, API version 2026-10-21).

Why it looks the way it does:

- **Prompt caching.** A long agent conversation re-sends the same prefix on every step, so
  two cache breakpoints are set: one on the system prompt (tools + system) and one on the
  last content block of the latest turn. The API looks back up to 20 blocks from a
  breakpoint for an earlier cache entry, so each step reads the previous step's prefix
  from the cache and writes only the new tail.
- **Tool turns.** Consecutive tool results are folded into one user message of
  ``tool_result`` blocks (they must come first in that message, text after); assistant
  tool calls become ``tool_use`` blocks. Every ``tool_use`` gets a ``tool_result`` (a
  missing one is filled in and logged) because the API rejects a dangling call.
- **Thinking.** Thinking blocks, with their signatures, are kept in ``provider_data`` and
  the assistant turn is replayed exactly as received, as the API requires.
- **Sampling parameters.** API version 2026-10-21 (the SDK's default) rejects
  ``temperature`` / ``top_p`` / ``top_k`` with a 400, and the SDK no longer has them, so
  ``GenerateConfig.temperature`` is *not sent* (a warning is logged once). A server that
  still accepts it (an Anthropic-compatible proxy) can get it via ``config.extra``.
- **Tool choice.** Sent only when ``GenerateConfig.tool_choice`` is set and tools are
  offered: "auto", "required" (Anthropic's ``any``) or "none".
- **The paper's requests.** ``request_style = "paper"`` sends exactly the body the AlloBench
  paper's ``RawChat`` sends instead (``econbench.agents.models.paper_wire``): a plain-string
  system, plain-string texts, one cache breakpoint on the last block, tool results and the
  next text as separate user messages, ``tool_choice`` always with tools.
- **The CoffeeBench reference's requests.** ``request_style = "coffee_paper"`` sends the
  bodies of the CoffeeBench reference's ``AnthropicModel`` (``coffee_paper_wire``), with
  its SDK's ``anthropic-version`` header, and keeps each reply's blocks for replay.
- **No retries here.** The client has ``max_retries=0``; SDK errors are mapped onto
  ``TransientModelError`` / ``ContextOverflowError`` / ``FatalModelError`` and the retry
  layer above decides what to do; the wait a server asks for, the overflow patterns and the
  key redaction are shared with the other providers (``econbench.agents.models._http``).
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import anthropic

from econbench.agents.models import coffee_paper_wire, paper_wire
from econbench.agents.models._http import (
    check_sdk_base_url,
    is_context_overflow,
    redact,
    retry_after_seconds,
)
from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelProvider,
    TransientModelError,
    Usage,
)
from econbench.agents.models.boundary import (
    checked_output,
    json_object,
    reply_guard,
    token_count,
    total_count,
    unreadable,
)
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.agents.untrusted import bounded_arguments, dump_text, tool_name

log = logging.getLogger(__name__)

#: ``max_tokens`` is mandatory in the Messages API; this is sent when the config has none.
DEFAULT_MAX_TOKENS = 4096
#: The API's lower bound for a manual thinking budget.
MIN_THINKING_BUDGET = 1024
#: ``output_config.effort`` values the API accepts; "minimal" maps to "low".
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
_EFFORT_ALIASES = {"minimal": "low"}

_CACHE = {"type": "ephemeral"}
_ID_OK = re.compile(r"[^a-zA-Z0-9_-]")
_MISSING_RESULT = "No result was recorded for this tool call."
_TRANSIENT_STATUS = {408, 409, 429, 499, 529}
#: The HTTP status each documented error type comes with, for an error sent in a 200 body.
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider(ModelProvider):
    """Claude through the Messages API, with prompt caching and extended thinking."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        name: str | None = None,
        context_window: int = 200_000,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self.model = model
        self.name = name or f"anthropic/{model}"
        self.context_window = context_window
        self._client_args: dict[str, Any] = {
            "api_key": api_key,
            "base_url": base_url,  # None lets the SDK read ANTHROPIC_BASE_URL, as it documents
            "max_retries": 0,
        }
        self._owns_client = client is None
        if client is None:
            check_sdk_base_url(self.name, base_url, "ANTHROPIC_BASE_URL")
        self.client = client or anthropic.AsyncAnthropic(**self._client_args)
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._api_key = api_key or getattr(self.client, "api_key", None)
        self._warned_temperature = False
        self._warned_effort = False

    def _loop_client(self) -> anthropic.AsyncAnthropic:
        """The client for the running event loop.

        An async HTTP connection pool belongs to the loop that opened it; a provider used
        from a second ``asyncio.run`` would otherwise fail every call with a connection
        error. A client passed in by the caller is used as is.
        """
        loop = asyncio.get_running_loop()
        if self._owns_client and self._client_loop is not None and self._client_loop is not loop:
            self.client = anthropic.AsyncAnthropic(**self._client_args)
        self._client_loop = loop
        return self.client

    async def aclose(self) -> None:
        """Close the HTTP connection pool (call from the loop that used the provider); a
        client passed in is the caller's to close."""
        if self._owns_client:
            await self.client.close()

    # ------------------------------------------------------------------ call
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """One Messages API call; SDK errors come out as our three error classes."""
        request = self.build_request(messages, tools, config)
        async with reply_guard(self.name, config.timeout_s, self._clean):
            try:
                client = self._loop_client()
                if config.request_style == "coffee_paper":
                    body, headers = coffee_paper_wire.reference_body(request)
                    response = await client.post(
                        "/v1/messages",
                        body=body,
                        cast_to=anthropic.types.Message,
                        options={"headers": headers, "timeout": config.timeout_s},
                    )
                else:
                    response = await client.messages.create(**request, timeout=config.timeout_s)
            except anthropic.AnthropicError as exc:
                raise self._map_error(exc) from None
            except TypeError as exc:  # the SDK's "could not resolve authentication method"
                if "authentication" in str(exc).lower():
                    raise FatalModelError(f"{self.name}: no Anthropic API key: {exc}") from None
                raise
            if config.request_style == "coffee_paper":
                return self._coffee_paper_output(response)
            return self.parse_response(response)

    def _coffee_paper_output(self, response: Any) -> ModelOutput:
        """``parse_response``, with the reply's blocks kept as the CoffeeBench reference keeps
        them for replay (``coffee_paper_wire.anthropic_raw``)."""
        data: Any = response
        if hasattr(response, "to_dict"):
            data = response.to_dict(mode="json", warnings=False)
        data = json_object(data, self.name)
        output = self.parse_response(data)
        output.provider_data = coffee_paper_wire.with_raw(coffee_paper_wire.anthropic_raw(data))
        return output

    # --------------------------------------------------------------- request
    def build_request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` (everything but the timeout)."""
        if config.request_style == "paper":
            return self._paper_request(messages, tools, config)
        if config.request_style == "coffee_paper":
            request = coffee_paper_wire.anthropic_request(self.model, messages, tools, config)
            # The reference's locked SDK sends this version, which takes its temperature; this
            # SDK has no ``temperature`` argument, so it travels in the body.
            request["extra_headers"] = {"anthropic-version": coffee_paper_wire.ANTHROPIC_VERSION}
            if "temperature" in request:
                extra = {"temperature": request.pop("temperature")}
                request["extra_body"] = extra | request.get("extra_body", {})
            return request
        system_text, turns = _convert_messages(messages)
        request: dict[str, Any] = {"model": self.model, "messages": turns}
        if system_text:
            request["system"] = [{"type": "text", "text": system_text, "cache_control": _CACHE}]
        _mark_last_block(turns)
        if tools:
            request["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]
        max_tokens = config.max_tokens
        if config.thinking_budget is not None:
            budget = int(config.thinking_budget)
            if budget < MIN_THINKING_BUDGET:
                raise FatalModelError(
                    f"{self.name}: thinking_budget={budget} is below Anthropic's minimum "
                    f"of {MIN_THINKING_BUDGET} tokens"
                )
            if max_tokens is None:
                max_tokens = budget + DEFAULT_MAX_TOKENS
            elif max_tokens <= budget:
                raise FatalModelError(
                    f"{self.name}: max_tokens={max_tokens} must exceed thinking_budget={budget} "
                    "(thinking tokens count towards max_tokens)"
                )
            request["thinking"] = {"type": "enabled", "budget_tokens": budget}
        request["max_tokens"] = max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS
        if config.reasoning_effort is not None:
            request["output_config"] = {"effort": self._effort(config.reasoning_effort)}
        if tools and config.tool_choice is not None:
            request["tool_choice"] = paper_wire.anthropic_tool_choice(config.tool_choice)
        self._warn_temperature(config)
        if config.extra:
            request["extra_body"] = dict(config.extra)
        return request

    def _paper_request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]:
        """What the paper's ``RawChat`` sends (``paper_wire``); it has no thinking."""
        if config.thinking_budget is not None:
            raise FatalModelError(
                f"{self.name}: request_style 'paper' has no extended thinking; drop thinking_budget"
            )
        if config.reasoning_effort is not None and not self._warned_effort:
            self._warned_effort = True
            log.warning(
                "%s: reasoning_effort=%s is not sent: the paper's Anthropic requests carry none",
                self.name,
                config.reasoning_effort,
            )
        request = paper_wire.anthropic_request(self.model, messages, tools, config)
        self._warn_temperature(config)
        if config.extra:
            request["extra_body"] = dict(config.extra)
        return request

    def _warn_temperature(self, config: GenerateConfig) -> None:
        if config.temperature is not None and not self._warned_temperature:
            self._warned_temperature = True
            log.warning(
                "%s: temperature=%s is not sent: the Anthropic API (2026-10-21) rejects "
                "sampling parameters; put it in `extra` for a server that accepts it",
                self.name,
                config.temperature,
            )

    def _effort(self, effort: str) -> str:
        value = _EFFORT_ALIASES.get(effort.lower(), effort.lower())
        if value not in EFFORT_LEVELS:
            raise FatalModelError(
                f"{self.name}: reasoning_effort={effort!r} is not one of {', '.join(EFFORT_LEVELS)}"
            )
        return value

    # -------------------------------------------------------------- response
    def parse_response(self, response: Any) -> ModelOutput:
        """Normalise a ``Message`` (or its JSON): text, tool calls, thinking, usage, replay
        data. The SDK builds a ``Message`` from any JSON without checking it, so the JSON is
        read here: an error object in a 200 body is classified like the HTTP error it names,
        and a body without a ``content`` list is an unreadable reply."""
        data: Any = response
        if hasattr(response, "to_dict"):
            data = response.to_dict(mode="json", warnings=False)
        data = json_object(data, self.name)
        if data.get("type") == "error" or ("error" in data and "content" not in data):
            raise self._payload_error(data.get("error"))
        if not isinstance(data.get("content"), list):
            raise unreadable(self.name, "the reply has no content list")
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        raw_blocks: list[dict[str, Any]] = []
        ignored: list[str] = []
        for block in data["content"]:
            block = block if isinstance(block, dict) else {}
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                raw_blocks.append({"type": "text", "text": block["text"]})
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                thoughts.append(block["thinking"])
                raw_blocks.append(
                    {
                        "type": "thinking",
                        "thinking": block["thinking"],
                        "signature": block.get("signature"),
                    }
                )
            elif kind == "redacted_thinking":
                raw_blocks.append({"type": "redacted_thinking", "data": block.get("data")})
            elif kind == "tool_use":
                # Bounded here, and stored bounded: the raw block is replayed and recorded.
                arguments = bounded_arguments(block.get("input"))
                name, call_id = tool_name(block.get("name")), _string(block.get("id"))
                calls.append(ToolCall(name, arguments, call_id))
                raw_blocks.append(
                    {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
                )
            else:
                ignored.append(str(kind)[:40])
        if ignored:
            log.warning(
                "%s: ignoring %d unexpected content block(s): %s",
                self.name,
                len(ignored),
                ", ".join(sorted(set(ignored))[:5]),
            )
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        details = usage.get("output_tokens_details")
        details = details if isinstance(details, dict) else {}
        read = token_count(usage.get("cache_read_input_tokens"))
        write = token_count(usage.get("cache_creation_input_tokens"))
        uncached = token_count(usage.get("input_tokens"))
        stop = data.get("stop_reason")
        return checked_output(
            ModelOutput(
                model=self.model,
                text="".join(texts),
                tool_calls=calls,
                reasoning="\n\n".join(t for t in thoughts if t) or None,
                usage=Usage(
                    # One part not a count makes the total unknown (flagged, not summed).
                    input_tokens=total_count(uncached, read, write),
                    cached_input_tokens=read,
                    cache_write_tokens=write,
                    output_tokens=token_count(usage.get("output_tokens")),
                    reasoning_tokens=token_count(details.get("thinking_tokens")),
                ),
                stop_reason=stop if isinstance(stop, str) else None,
                provider_data={"anthropic": {"content": raw_blocks}},
            ),
            self.name,
        )

    # ---------------------------------------------------------------- errors
    def _map_error(self, exc: anthropic.AnthropicError) -> Exception:
        """Classify an SDK exception; the message never contains the API key."""
        if isinstance(exc, anthropic.APITimeoutError):
            return TransientModelError(self._clean(f"{self.name}: request timed out"))
        if isinstance(exc, anthropic.APIConnectionError):
            return TransientModelError(self._clean(f"{self.name}: connection error: {exc}"))
        if isinstance(exc, anthropic.APIStatusError):
            kind = getattr(exc, "type", None) or "error"
            detail = getattr(exc, "api_message", None) or _short(exc.body)
            headers = getattr(exc.response, "headers", None)
            code = getattr(exc, "error_code", None)
            return self._classify(exc.status_code, kind, detail, code, headers)
        return FatalModelError(self._clean(f"{self.name}: {type(exc).__name__}: {exc}"))

    def _classify(
        self,
        status: int,
        kind: str,
        detail: str,
        code: Any = None,
        headers: Any = None,
        label: str | None = None,
    ) -> ModelError:
        """One classification for HTTP errors and the error objects of 200 bodies."""
        message = self._clean(f"{self.name}: {label or f'HTTP {status}'} {kind}: {detail}")
        if is_context_overflow(status, detail, code):
            return ContextOverflowError(message)
        if status in _TRANSIENT_STATUS or status >= 500:
            return TransientModelError(message, retry_after=retry_after_seconds(headers))
        return FatalModelError(message)

    def _payload_error(self, error: Any) -> ModelError:
        """An error object sent with a 200 status (a proxy, or an error event where a
        message belongs): classified by its type as the status that type comes with, an
        unknown type as a server error (retried)."""
        error = error if isinstance(error, dict) else {"message": _short(error)}
        kind = str(error.get("type") or "error")[:80]
        detail = error.get("message")
        detail = detail if isinstance(detail, str) else _short(error)
        status = _ERROR_STATUS.get(kind, 500)
        return self._classify(status, kind, detail[:500], label="HTTP 200 with an error,")

    def _clean(self, message: str) -> str:
        """The message without the key, whole or echoed masked (``_http.redact``)."""
        return redact(message, [self._api_key])


# ---------------------------------------------------------------- conversion
def _convert_messages(messages: list[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """Our messages as (system text, Messages-API turns), merged so roles alternate."""
    system_parts: list[str] = []
    index = 0
    while index < len(messages) and messages[index].role == "system":
        if messages[index].content:
            system_parts.append(messages[index].content)
        index += 1
    turns: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # unanswered tool calls of the last assistant turn
    text_ids: set[str] = set()  # calls rendered as text (non-object arguments)

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            prev = turns[-1]["content"]
            if role == "user":
                results = [b for b in prev + blocks if b["type"] == "tool_result"]
                others = [b for b in prev + blocks if b["type"] != "tool_result"]
                turns[-1]["content"] = results + others
            else:
                prev.extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})

    def close_pending() -> None:
        if pending:
            log.warning("tool calls without a result: %s", [p["name"] for p in pending])
            add(
                "user",
                [
                    {"type": "tool_result", "tool_use_id": p["id"], "content": _MISSING_RESULT}
                    for p in pending
                ],
            )
            pending.clear()

    for position, msg in enumerate(messages[index:], start=index):
        if msg.role == "tool":
            call = _take_call(pending, msg)
            if call is None:
                label = msg.name or "tool"
                add("user", [_text(f"[result of {label}] {msg.content}")])
            elif call["id"] in text_ids:
                add("user", [_text(f"[result of {call['name']}] {msg.content}")])
            else:
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call["id"]}
                if msg.content:
                    block["content"] = msg.content
                add("user", [block])
            continue
        close_pending()
        if msg.role == "assistant":
            settled = msg.memo(_ASSISTANT_KEY, _settled_blocks)
            if settled is None:
                blocks, calls = _assistant_blocks(msg, position, text_ids)
            else:  # converted once per message (shared by later requests, never changed)
                blocks, calls, as_text = settled
                text_ids.update(as_text)
            add("assistant", blocks)
            pending.extend(calls)
        else:  # user, or a system message after the first turn
            add("user", [_text(msg.content or "(empty message)")])
    close_pending()
    return "\n\n".join(system_parts), turns


_ASSISTANT_KEY = ("anthropic",)
"""The key an assistant turn's converted blocks are kept under (``ChatMessage.memo``)."""


def _settled_blocks(
    msg: ChatMessage,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], frozenset[str]] | None:
    """``_assistant_blocks`` of a turn whose conversion does not depend on its place (every
    call has an id), with the ids of the calls it renders as text; else ``None``."""
    if not all(call.call_id for call in msg.tool_calls):
        return None
    as_text: set[str] = set()
    blocks, calls = _assistant_blocks(msg, 0, as_text)
    return blocks, calls, frozenset(as_text)


def _assistant_blocks(
    msg: ChatMessage, position: int, text_ids: set[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An assistant turn: replayed verbatim when it is ours, rebuilt otherwise."""
    ids = [_tool_id(c.call_id, position, j) for j, c in enumerate(msg.tool_calls)]
    calls = [{"id": i, "name": c.name} for i, c in zip(ids, msg.tool_calls, strict=True)]
    raw = ((msg.provider_data or {}).get("anthropic") or {}).get("content")
    if raw and _consistent(raw, msg) and all(isinstance(c.arguments, dict) for c in msg.tool_calls):
        blocks = [dict(b) for b in raw if b.get("type") != "text" or b.get("text")]
        for block, call_id in zip((b for b in blocks if b["type"] == "tool_use"), ids, strict=True):
            block["id"] = call_id
        return _drop_if_silent(blocks), calls
    blocks = [
        dict(b)
        for b in raw or []
        if b.get("type") in ("thinking", "redacted_thinking")  # thinking first, unmodified
    ]
    text = msg.content
    for call, call_id in zip(msg.tool_calls, ids, strict=True):
        if not isinstance(call.arguments, dict):
            text_ids.add(call_id)
            text += f"\n[called {call.name} with unparseable arguments: {_raw(call.arguments)}]"
    if text.strip():
        blocks.append(_text(text.strip()))
    for call, call_id in zip(msg.tool_calls, ids, strict=True):
        if isinstance(call.arguments, dict):
            blocks.append(
                {"type": "tool_use", "id": call_id, "name": call.name, "input": call.arguments}
            )
    return _drop_if_silent(blocks), calls


def _drop_if_silent(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A turn with neither text nor a tool call (an empty reply) is left out entirely."""
    if any(b["type"] in ("text", "tool_use") for b in blocks):
        return blocks
    return []


def _consistent(raw: list[dict[str, Any]], msg: ChatMessage) -> bool:
    """Does the stored turn still say what the message says (text and calls)?"""
    text = "".join(b.get("text", "") for b in raw if b.get("type") == "text")
    uses = [(b.get("name"), b.get("input")) for b in raw if b.get("type") == "tool_use"]
    return text == msg.content and uses == [(c.name, c.arguments) for c in msg.tool_calls]


def _take_call(pending: list[dict[str, Any]], msg: ChatMessage) -> dict[str, Any] | None:
    """The call a tool result answers: by id, else by name, else the oldest one."""
    if not pending:
        return None
    for match in (
        lambda p: msg.tool_call_id is not None and p["id"] == _ID_OK.sub("_", msg.tool_call_id),
        lambda p: msg.name is not None and p["name"] == msg.name,
        lambda p: True,
    ):
        for i, call in enumerate(pending):
            if match(call):
                return pending.pop(i)
    return None


def _tool_id(call_id: str | None, position: int, index: int) -> str:
    if not call_id:
        return f"toolu_eb_{position}_{index}"
    return _ID_OK.sub("_", call_id)


def _mark_last_block(turns: list[dict[str, Any]]) -> None:
    """The second cache breakpoint: the last content block of the latest turn (marked on a
    copy: a turn's blocks are kept with its message for later requests)."""
    for turn in reversed(turns):
        content = turn["content"]
        for i in range(len(content) - 1, -1, -1):
            block = content[i]
            if block.get("type") in ("text", "tool_result", "tool_use"):
                content[i] = {**block, "cache_control": _CACHE}
                return


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _raw(value: Any) -> str:
    return value if isinstance(value, str) else dump_text(value)


def _short(body: Any, limit: int = 500) -> str:
    text = body if isinstance(body, str) else dump_text(body, limit)
    return text[:limit]


def _string(value: Any) -> str | None:
    """An id from a reply as text (``None`` stays ``None``)."""
    return None if value is None else str(value)
