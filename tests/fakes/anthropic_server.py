"""A fake Anthropic Messages API (``POST /v1/messages``) for tests through the real SDK.

Point the SDK at ``server.root_url``. Besides answering in the Messages wire format, it
checks what the real API checks and answers with the same 400s when a request breaks a
rule: ``max_tokens`` missing, sampling parameters (rejected since API version 2026-10-21),
a thinking budget under 1024 or not below ``max_tokens``, more than four cache breakpoints,
empty text blocks or messages, a ``tool_use`` without its ``tool_result`` in the next
message (or the reverse), tool results after text in a user message, and a thinking block
whose signature is not the one this server issued (thinking must be replayed unmodified).

Prompt caching follows the ``cache_control`` breakpoints it receives: the prompt is the
sequence tools → system blocks → message blocks; at each breakpoint the server looks back
up to 20 blocks for a prefix it cached earlier (a cache read) and caches the prefix up to
the last breakpoint (the part not read is a cache write). Everything else is plain input.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from .common import BrainReply, BrainRequest, FakeServer, Fault, estimate_tokens

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
SAMPLING_PARAMS = ("temperature", "top_p", "top_k")
_STOPS = {"truncated": "max_tokens", "filtered": "refusal"}
"""``stop_reason`` of the stop faults."""
CACHE_LOOKBACK = 20
MAX_BREAKPOINTS = 4


class FakeAnthropicServer(FakeServer):
    """Answers ``POST /v1/messages`` like the Anthropic API (non-streaming)."""

    routes: ClassVar[dict[tuple[str, str], str]] = {("POST", "/v1/messages"): "handle_messages"}
    #: API version 2026-10-21 rejects temperature/top_p/top_k; False mimics an older server.
    reject_sampling_params: bool = True
    #: Prefixes shorter than this are never cached (the real minimum is model dependent).
    min_cacheable_tokens: int = 0

    def __init__(self, brain: Any, *, signing_key: bytes = b"fake-anthropic") -> None:
        super().__init__(brain)
        self._signing_key = signing_key
        self._cache: set[str] = set()
        self._counter = 0
        #: The usage object of every successful response, in order.
        self.usages: list[dict[str, Any]] = []

    # ------------------------------------------------------------ errors
    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": "req_fake",
        }

    def context_overflow_body(self) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 215321 tokens > 200000 maximum",
            },
            "request_id": "req_fake",
        }

    def _reject(self, handler: BaseHTTPRequestHandler, message: str) -> None:
        self.send_json(handler, 400, self.error_body(400, message))

    # ------------------------------------------------------------ signing
    def sign(self, thinking: str) -> str:
        """The signature this server attaches to a thinking block (checked on replay)."""
        return hmac.new(self._signing_key, thinking.encode(), hashlib.sha256).hexdigest()

    # ------------------------------------------------------------ the route
    def handle_messages(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], fault: Fault | None
    ) -> None:
        problem = self.validate(body)
        if problem:
            self._reject(handler, problem)
            return
        thinking = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
        request = to_brain_request(body)
        reply, usage = self.think(request, fault)
        if not thinking:
            usage["output"] -= usage["reasoning"]
            usage["reasoning"] = 0
        content = self._content(reply, thinking)
        read, write, total = self._cache_usage(body)
        if reply.input_tokens is not None:
            total = reply.input_tokens
        if reply.cached_input_tokens is not None:
            read, write = reply.cached_input_tokens, 0
        read = min(read, total)
        write = min(write, total - read)
        wire_usage: dict[str, Any] = {
            "input_tokens": total - read - write,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": usage["output"],
        }
        if thinking:
            wire_usage["output_tokens_details"] = {"thinking_tokens": usage["reasoning"]}
        self.usages.append(wire_usage)
        self._counter += 1
        self.send_json(
            handler,
            200,
            {
                "id": f"msg_fake{self._counter:06d}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", ""),
                "content": content,
                "stop_reason": _STOPS.get(fault.kind if fault else "")
                or ("tool_use" if reply.tool_calls else "end_turn"),
                "stop_sequence": None,
                "usage": wire_usage,
            },
        )

    def _content(self, reply: BrainReply, thinking: bool) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if thinking and reply.reasoning:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": reply.reasoning,
                    "signature": self.sign(reply.reasoning),
                }
            )
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for i, call in enumerate(reply.tool_calls):
            arguments = call.get("arguments", {})
            if isinstance(arguments, str):
                # A well-formed JSON string is sent as the object it encodes; a broken one
                # verbatim, as a sloppy Anthropic-compatible server might.
                with contextlib.suppress(json.JSONDecodeError):
                    arguments = json.loads(arguments)
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id") or f"toolu_fake{self._counter:04d}{i:02d}",
                    "name": call["name"],
                    "input": arguments,
                }
            )
        return blocks

    # ------------------------------------------------------------ validation
    def validate(self, body: dict[str, Any]) -> str | None:
        """The first rule of the real API that this request breaks, as its 400 message."""
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        if self.reject_sampling_params:
            for name in SAMPLING_PARAMS:
                if name in body:
                    return f"{name}: Extra inputs are not permitted"
        thinking = body.get("thinking") or {}
        if thinking.get("type") == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                return (
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                )
            if budget >= body["max_tokens"]:
                return "`max_tokens` must be greater than `thinking.budget_tokens`"
        breakpoints = sum(1 for block in _all_blocks(body) if block.get("cache_control"))
        if breakpoints > MAX_BREAKPOINTS:
            return (
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {breakpoints}."
            )
        messages = body.get("messages") or []
        if not messages:
            return "messages: at least one message is required"
        previous_uses: list[str] = []
        for n, message in enumerate(messages):
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            final_assistant = n == len(messages) - 1 and message.get("role") == "assistant"
            if not blocks and not final_assistant:
                return (
                    f"messages.{n}: all messages must have non-empty content except for the "
                    "optional final assistant message"
                )
            for m, block in enumerate(blocks or []):
                if block.get("type") == "text" and not block.get("text"):
                    return f"messages.{n}.content.{m}: text content blocks must be non-empty"
                if block.get("type") == "tool_use" and not isinstance(block.get("input"), dict):
                    return (
                        f"messages.{n}.content.{m}.tool_use.input: Input should be a valid "
                        "dictionary"
                    )
                if block.get("type") == "thinking" and block.get("signature") != self.sign(
                    block.get("thinking", "")
                ):
                    return f"messages.{n}.content.{m}: Invalid `signature` in `thinking` block"
            results = [b.get("tool_use_id") for b in blocks or [] if b.get("type") == "tool_result"]
            kinds = [b.get("type") for b in blocks or []]
            if results and kinds[: len(results)] != ["tool_result"] * len(results):
                return (
                    f"messages.{n}: tool_result blocks must come first in the user message, "
                    "before any other content"
                )
            missing = [i for i in previous_uses if i not in results]
            if missing:
                return (
                    f"messages.{n}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
            unexpected = [i for i in results if i not in previous_uses]
            if unexpected:
                return (
                    f"messages.{n}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{', '.join(map(str, unexpected))}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
            previous_uses = [b["id"] for b in blocks or [] if b.get("type") == "tool_use"]
        if previous_uses:
            return (
                f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(previous_uses)}"
            )
        return None

    # ------------------------------------------------------------ caching
    def _cache_usage(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(cache read, cache write, total) tokens from the request's breakpoints."""
        blocks = _all_blocks(body)
        digest = hashlib.sha256()
        hashes: list[str] = []
        cumulative: list[int] = []
        running = 0
        breakpoints: list[int] = []
        for i, block in enumerate(blocks):
            if block.get("cache_control"):
                breakpoints.append(i)
            canonical = json.dumps(
                {k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True
            )
            digest.update(canonical.encode())
            hashes.append(digest.copy().hexdigest())
            running += estimate_tokens(canonical)
            cumulative.append(running)
        total = running
        read = 0
        with self._lock:
            for b in breakpoints:
                for k in range(b, max(-1, b - CACHE_LOOKBACK - 1), -1):
                    if hashes[k] in self._cache:
                        read = max(read, cumulative[k])
                        break
            write = 0
            if breakpoints:
                last = breakpoints[-1]
                if cumulative[last] >= self.min_cacheable_tokens:
                    write = max(0, cumulative[last] - read)
            for b in breakpoints:
                if cumulative[b] >= self.min_cacheable_tokens:
                    self._cache.add(hashes[b])
        return read, write, total


def _all_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt in cache order: tools, then system blocks, then every message block."""
    blocks: list[dict[str, Any]] = [dict(t) for t in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str):
        blocks.append({"type": "text", "text": system})
    elif isinstance(system, list):
        blocks.extend(system)
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content, "role": message.get("role")})
        else:
            blocks.extend({**b, "role": message.get("role")} for b in content or [])
    return blocks


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def to_brain_request(body: dict[str, Any]) -> BrainRequest:
    """The Messages request as the protocol-neutral request a brain reads."""
    system = body.get("system")
    messages: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if message.get("role") == "assistant":
            calls = [
                {"id": b["id"], "name": b["name"], "arguments": b.get("input")}
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            messages.append({"role": "assistant", "content": _text_of(blocks), "tool_calls": calls})
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                messages.append(
                    {
                        "role": "tool",
                        "content": _text_of(b.get("content", "")),
                        "tool_call_id": b.get("tool_use_id"),
                    }
                )
        text = _text_of(blocks)
        if text:
            messages.append({"role": "user", "content": text})
    return BrainRequest(
        model=body.get("model", ""),
        system=_text_of(system) if system else "",
        messages=messages,
        tools=[
            {
                "name": t.get("name"),
                "description": t.get("description", ""),
                "parameters": t.get("input_schema", {}),
            }
            for t in body.get("tools") or []
        ],
        max_tokens=body.get("max_tokens"),
        raw=body,
    )
