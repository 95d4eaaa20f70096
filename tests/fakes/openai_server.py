"""A fake OpenAI server: Chat Completions and Responses over real HTTP, for the real SDK.

``FakeOpenAIServer(brain)`` answers ``POST /v1/chat/completions``, ``POST /v1/responses`` and
``GET /v1/models``; point the SDK at ``server.root_url + "/v1"`` (``server.base_url``). Both
wire formats are translated to a ``BrainRequest`` and the ``BrainReply`` back, with usage
(cached prompt tokens from shared prefixes, reasoning tokens), tool calls with ids, and
OpenAI-shaped errors (``context_length_exceeded`` for the context-overflow fault).

Like the real API, it rejects conversations whose tool results do not answer the tool calls
before them, and (Responses, ``store=false``) reasoning items sent back without their
encrypted content, so conversion bugs fail loudly instead of passing silently. Set
``strict=False`` to turn those checks off.

Like the strictest real OpenAI-compatible servers, it also (by default) rejects any message
whose ``content`` is ``null`` (``reject_null_content``: Ollama and llama-cpp-python answer
400), and ignores the tools of a request that names no ``tool_choice`` or ``"none"``
(``require_tool_choice``: llama-cpp-python's ``chatml-function-calling`` renders the prompt
without them). A model that was shown no tools cannot call one: a reply the brain scripted
with tool calls then comes back as plain text, the way a real model writes a call it was not
offered. ``dropped_tools`` counts the requests whose tools were ignored.

Options mimic the servers behind ``openai-compatible/``: ``reasoning_field`` is the message
field that carries reasoning text in Chat Completions ("reasoning_content" like DeepSeek,
Moonshot and vLLM's older parser, "reasoning" like newer vLLM and OpenRouter, ``None`` like
OpenAI itself), ``include_usage=False`` leaves usage out (some local servers), and
``omit_call_ids=True`` sends tool calls without ids.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from .common import Brain, BrainReply, BrainRequest, FakeServer, Fault, arguments_text

_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_denied_error", None),
    404: ("invalid_request_error", "model_not_found"),
    408: ("timeout", None),
    409: ("conflict", None),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}

CONTEXT_OVERFLOW_MESSAGE = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted "
    "in 131072 tokens. Please reduce the length of the messages."
)


_FINISH = {"truncated": "length", "filtered": "content_filter"}
"""Chat Completions ``finish_reason`` of the stop faults."""
_INCOMPLETE = {"truncated": "max_output_tokens", "filtered": "content_filter"}
"""Responses ``incomplete_details.reason`` of the stop faults."""


def _kind(fault: Fault | None) -> str | None:
    return fault.kind if fault is not None else None


def _finish_reason(fault: Fault | None, calls: bool) -> str:
    return _FINISH.get(_kind(fault) or "") or ("tool_calls" if calls else "stop")


class InvalidRequest(Exception):
    """The request breaks a rule the real API enforces; answered with a 400."""


def _text(content: Any) -> str:
    """Text of a content that is a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") if isinstance(p, dict) else str(p)
            for p in content
            if isinstance(p, (dict, str))
        )
    return str(content)


def _calls_as_text(reply: BrainReply) -> BrainReply:
    """A reply whose model was offered no tools: its scripted calls become written text."""
    written = "\n".join(
        json.dumps({"name": c["name"], "arguments": c.get("arguments", {})})
        for c in reply.tool_calls
    )
    text = f"{reply.text}\n{written}" if reply.text else written
    return BrainReply(
        text=text,
        reasoning=reply.reasoning,
        input_tokens=reply.input_tokens,
        cached_input_tokens=reply.cached_input_tokens,
        output_tokens=reply.output_tokens,
        reasoning_tokens=reply.reasoning_tokens,
    )


def _decode(arguments: Any) -> Any:
    """Arguments as the brain sees them: a dict, or the raw string if it is not JSON."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):  # a hostile model's arguments, replayed
        return arguments


class FakeOpenAIServer(FakeServer):
    """Chat Completions + Responses; ``with FakeOpenAIServer(brain) as s: s.base_url``."""

    routes: ClassVar[dict[tuple[str, str], str]] = {
        ("POST", "/v1/chat/completions"): "chat_completions",
        ("POST", "/v1/responses"): "responses",
        ("GET", "/v1/models"): "list_models",
    }

    def __init__(
        self,
        brain: Brain,
        *,
        reasoning_field: str | None = "reasoning_content",
        include_usage: bool = True,
        omit_call_ids: bool = False,
        strict: bool = True,
        model_ids: tuple[str, ...] = ("fake-model",),
        reject_null_content: bool = True,
        require_tool_choice: bool = True,
    ) -> None:
        super().__init__(brain)
        self.reasoning_field = reasoning_field
        self.include_usage = include_usage
        self.omit_call_ids = omit_call_ids
        self.strict = strict
        self.reject_null_content = reject_null_content
        self.require_tool_choice = require_tool_choice
        self.dropped_tools = 0
        self.model_ids = model_ids
        self.brain_requests: list[BrainRequest] = []
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """What the SDK's ``base_url`` should be."""
        return self.root_url + "/v1"

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    # ------------------------------------------------------------ errors
    def error_body(self, status: int, message: str) -> dict[str, Any]:
        etype, code = _ERROR_KINDS.get(status, ("server_error", None))
        return {"error": {"message": message, "type": etype, "param": None, "code": code}}

    def context_overflow_body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": CONTEXT_OVERFLOW_MESSAGE,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }

    def _invalid(self, handler: BaseHTTPRequestHandler, message: str) -> None:
        self.send_json(handler, 400, self.error_body(400, message))

    def _ask(self, request: BrainRequest, fault: Fault | None) -> tuple[BrainReply, dict[str, int]]:
        with self._lock:
            self.brain_requests.append(request)
        reply, usage = self.think(request, fault)
        if reply.tool_calls and not request.tools:
            reply = _calls_as_text(reply)
        return reply, usage

    def _offered_tools(self, body: dict[str, Any], tools: list[dict[str, Any]]) -> list[Any]:
        """The tools the model sees: none without a ``tool_choice`` (or with ``"none"``)
        when the server is as strict as llama-cpp-python."""
        choice = body.get("tool_choice")
        if tools and self.require_tool_choice and choice in (None, "none"):
            with self._lock:
                self.dropped_tools += 1
            return []
        return tools

    def _check_null_content(self, messages: list[Any]) -> None:
        if not self.reject_null_content:
            return
        for msg in messages:
            if isinstance(msg, dict) and "content" in msg and msg["content"] is None:
                raise InvalidRequest("invalid message content type: <nil>")

    # ------------------------------------------------------------ GET /v1/models
    def list_models(self, handler: BaseHTTPRequestHandler, body: Any, fault: Fault | None) -> None:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.model_ids
        ]
        self.send_json(handler, 200, {"object": "list", "data": data})

    # ------------------------------------------------------------ chat completions
    def chat_request(self, body: dict[str, Any]) -> BrainRequest:
        """A Chat Completions body to the brain's view; raises InvalidRequest like the API."""
        system: list[str] = []
        messages: list[dict[str, Any]] = []
        open_calls: list[str] = []
        self._check_null_content(body.get("messages") or [])
        for msg in body.get("messages") or []:
            role = msg.get("role")
            if role in ("system", "developer"):
                system.append(_text(msg.get("content")))
                continue
            if self.strict and open_calls and role != "tool":
                raise InvalidRequest(
                    "An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not "
                    f"have response messages: {', '.join(open_calls)}"
                )
            if role == "assistant":
                calls = [
                    {
                        "id": c.get("id"),
                        "name": (c.get("function") or {}).get("name"),
                        "arguments": _decode((c.get("function") or {}).get("arguments")),
                    }
                    for c in msg.get("tool_calls") or []
                ]
                entry: dict[str, Any] = {"role": "assistant", "content": _text(msg.get("content"))}
                if calls:
                    entry["tool_calls"] = calls
                    open_calls = [c["id"] for c in calls]
                for key in ("reasoning_content", "reasoning"):
                    if msg.get(key):
                        entry["reasoning"] = msg[key]
                messages.append(entry)
            elif role == "tool":
                call_id = msg.get("tool_call_id")
                if self.strict and call_id not in open_calls:
                    raise InvalidRequest(
                        "Invalid parameter: messages with role 'tool' must be a response to a "
                        f"preceding message with 'tool_calls' (no open call {call_id!r})."
                    )
                if call_id in open_calls:
                    open_calls.remove(call_id)
                messages.append(
                    {"role": "tool", "tool_call_id": call_id, "content": _text(msg.get("content"))}
                )
            else:
                messages.append({"role": role, "content": _text(msg.get("content"))})
        tools = [
            {
                "name": (t.get("function") or {}).get("name"),
                "description": (t.get("function") or {}).get("description", ""),
                "parameters": (t.get("function") or {}).get("parameters", {}),
            }
            for t in body.get("tools") or []
        ]
        return BrainRequest(
            model=str(body.get("model")),
            system="\n\n".join(system),
            messages=messages,
            tools=self._offered_tools(body, tools),
            max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
            raw=body,
        )

    def chat_completions(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], fault: Fault | None
    ) -> None:
        try:
            request = self.chat_request(body)
        except InvalidRequest as exc:
            self._invalid(handler, str(exc))
            return
        reply, usage = self._ask(request, fault)
        calls = [
            {
                **({} if self.omit_call_ids else {"id": c.get("id") or self._next_id("call")}),
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": arguments_text(c.get("arguments", {})),
                },
            }
            for c in reply.tool_calls
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text if (reply.text or not calls) else None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        if reply.reasoning and self.reasoning_field:
            message[self.reasoning_field] = reply.reasoning
        payload: dict[str, Any] = {
            "id": self._next_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": _finish_reason(fault, bool(calls)),
                    "logprobs": None,
                }
            ],
        }
        if self.include_usage:
            payload["usage"] = {
                "prompt_tokens": usage["input"],
                "completion_tokens": usage["output"],
                "total_tokens": usage["input"] + usage["output"],
                "prompt_tokens_details": {"cached_tokens": usage["cached"], "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": usage["reasoning"],
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            }
        self.send_json(handler, 200, payload)

    # ------------------------------------------------------------ responses
    def responses_request(self, body: dict[str, Any]) -> BrainRequest:
        """A Responses body to the brain's view; raises InvalidRequest like the API."""
        system = [body["instructions"]] if body.get("instructions") else []
        messages: list[dict[str, Any]] = []
        raw_input = body.get("input")
        items = [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else []
        items += raw_input if isinstance(raw_input, list) else []
        self._check_null_content(items)
        calls_seen: set[str] = set()
        pending_reasoning: dict[str, Any] | None = None
        for item in items:
            kind = item.get("type") or ("message" if "role" in item else None)
            following = ("message", "function_call", "reasoning")
            if pending_reasoning is not None and kind not in following and self.strict:
                raise InvalidRequest(
                    f"Item '{pending_reasoning.get('id')}' of type 'reasoning' was provided "
                    "without its required following item."
                )
            if kind == "reasoning":
                if self.strict and body.get("store") is False and not item.get("encrypted_content"):
                    raise InvalidRequest(
                        f"Item with id '{item.get('id')}' not found. Items are not persisted "
                        "when `store` is set to false; send encrypted reasoning content instead."
                    )
                pending_reasoning = item
                continue
            pending_reasoning = None
            if kind == "message":
                role = item.get("role")
                text = _text(item.get("content"))
                if role in ("system", "developer"):
                    system.append(text)
                else:
                    messages.append({"role": role, "content": text})
            elif kind == "function_call":
                call = {
                    "id": item.get("call_id"),
                    "name": item.get("name"),
                    "arguments": _decode(item.get("arguments")),
                }
                calls_seen.add(str(item.get("call_id")))
                last = messages[-1] if messages else None
                if last is not None and last["role"] == "assistant":
                    last.setdefault("tool_calls", []).append(call)
                else:
                    messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            elif kind == "function_call_output":
                call_id = item.get("call_id")
                if self.strict and str(call_id) not in calls_seen:
                    raise InvalidRequest(
                        f"No tool call found for function call output with call_id {call_id}."
                    )
                output = item.get("output")
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": output if isinstance(output, str) else json.dumps(output),
                    }
                )
        if self.strict and pending_reasoning is not None:
            raise InvalidRequest(
                f"Item '{pending_reasoning.get('id')}' of type 'reasoning' was provided "
                "without its required following item."
            )
        tools = [
            {
                "name": t.get("name"),
                "description": t.get("description", ""),
                "parameters": t.get("parameters", {}),
            }
            for t in body.get("tools") or []
            if t.get("type") == "function"
        ]
        return BrainRequest(
            model=str(body.get("model")),
            system="\n\n".join(system),
            messages=messages,
            tools=self._offered_tools(body, tools),
            max_tokens=body.get("max_output_tokens"),
            raw=body,
        )

    def responses(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], fault: Fault | None
    ) -> None:
        try:
            request = self.responses_request(body)
        except InvalidRequest as exc:
            self._invalid(handler, str(exc))
            return
        reply, usage = self._ask(request, fault)
        output: list[dict[str, Any]] = []
        reasoning_cfg = body.get("reasoning") or {}
        if reply.reasoning:
            item: dict[str, Any] = {"type": "reasoning", "id": self._next_id("rs"), "summary": []}
            if reply.reasoning and reasoning_cfg.get("summary"):
                item["summary"] = [{"type": "summary_text", "text": reply.reasoning}]
            if "reasoning.encrypted_content" in (body.get("include") or []):
                secret = json.dumps({"reasoning": reply.reasoning or ""}).encode()
                item["encrypted_content"] = "gAAAA" + base64.b64encode(secret).decode()
            output.append(item)
        if reply.text:
            output.append(
                {
                    "type": "message",
                    "id": self._next_id("msg"),
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        for call in reply.tool_calls:
            call_id = self._next_id("call")
            output.append(
                {
                    "type": "function_call",
                    "id": "fc_" + call_id.split("_", 1)[1],
                    "call_id": call_id,
                    "name": call["name"],
                    "arguments": arguments_text(call.get("arguments", {})),
                    "status": "completed",
                }
            )
        incomplete = _INCOMPLETE.get(_kind(fault) or "")
        payload: dict[str, Any] = {
            "id": self._next_id("resp"),
            "object": "response",
            "created_at": time.time(),
            "status": "incomplete" if incomplete else "completed",
            "error": None,
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": body.get("instructions"),
            "model": request.model,
            "output": output,
            "parallel_tool_calls": True,
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "tool_choice": "auto",
            "tools": body.get("tools") or [],
        }
        if self.include_usage:
            payload["usage"] = {
                "input_tokens": usage["input"],
                "input_tokens_details": {"cached_tokens": usage["cached"]},
                "output_tokens": usage["output"],
                "output_tokens_details": {"reasoning_tokens": usage["reasoning"]},
                "total_tokens": usage["input"] + usage["output"],
            }
        self.send_json(handler, 200, payload)
