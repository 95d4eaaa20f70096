"""Gemini provider (official ``google-genai`` SDK, async API, Gemini Developer API).

Why it looks the way it does:

- **Function calling.** Tools become ``function_declarations`` whose ``parameters`` are
  our JSON schemas converted to Gemini's OpenAPI-style schema subset (``$ref`` inlined,
  ``anyOf [X, null]`` → ``X`` + ``nullable``, ``additionalProperties`` / ``default`` /
  exclusive bounds dropped, a dropped constraint restated in the description so the model
  still reads it). Tool results go back as ``function_response`` parts matched to their
  calls by id, else by name and order; Gemini's own call ids are kept and sent back, ids
  we had to invent are not.
- **Thinking.** ``thinking_budget`` → ``thinking_config.thinking_budget``,
  ``reasoning_effort`` → ``thinking_config.thinking_level``; thought summaries are always
  requested. A model turn is replayed part by part as received, so every thought
  signature goes back where Gemini put it (Gemini 3 rejects a function call turn without
  its signature).
- **A malformed function call** (finish reason ``MALFORMED_FUNCTION_CALL``) becomes a
  ``ToolCall`` whose arguments are the raw text Gemini reports, so the toolkit answers
  the model with an error instead of the turn silently counting as a wait.
- **No retries here.** The SDK's retry options are set to a single attempt; SDK and
  transport errors are mapped onto our three error classes for the retry layer above; the
  wait a server asks for (a header, else ``RetryInfo``), the overflow patterns and the key
  redaction are shared with the other providers (``econbench.agents.models._http``).
- **The reply is read from its JSON.** The SDK is asked for the raw HTTP response
  (``should_return_http_response``) and the body is normalised here, as the OpenAI and
  Anthropic replies are: the SDK's own validation would stop a run on arguments sent as an
  array or usage sent as text, which the other providers answer with a tool error and an
  unpriced call. A reply cut at the per-request token limit (``CONTINUATION`` with a
  ``continuationToken``) is continued, as the SDK would, up to ``MAX_CONTINUATIONS`` times.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import re
import sys
from typing import Any

import httpx2
import pydantic
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from econbench.agents.models import coffee_paper_wire
from econbench.agents.models._http import (
    check_sdk_base_url,
    is_context_overflow,
    redact,
    retry_after_seconds,
    retry_info_seconds,
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
    json_list,
    json_object,
    reply_guard,
    token_count,
    total_count,
    unreadable,
)
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.agents.untrusted import bounded_arguments, tool_name

log = logging.getLogger(__name__)

#: reasoning_effort → Gemini thinking level ("none" turns thinking off via a zero budget).
THINKING_LEVELS = {
    "minimal": "MINIMAL",
    "low": "LOW",
    "medium": "MEDIUM",
    "high": "HIGH",
    "xhigh": "XHIGH",
    "max": "XHIGH",
}
_MISSING_RESULT = "No result was recorded for this tool call."
#: Follow-up requests a reply cut at the per-request token limit gets (the SDK has no bound).
MAX_CONTINUATIONS = 16
_USAGE_FIELDS = (
    "promptTokenCount",
    "toolUsePromptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
)
_TRANSIENT_STATUS = {408, 409, 429, 499}
_MALFORMED_NAME = re.compile(r"default_api\.([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*)\s*\(")
#: Gemini schema formats per type; other formats are restated in the description.
_FORMATS = {
    "STRING": {"enum", "date-time"},
    "NUMBER": {"float", "double"},
    "INTEGER": {"int32", "int64"},
}


def _aiohttp_errors(*names: str) -> tuple[type[BaseException], ...]:
    """aiohttp's exception classes of these names, when google-genai sends with aiohttp (it
    does whenever aiohttp is installed, e.g. beside Inspect AI); none otherwise."""
    aiohttp = sys.modules.get("aiohttp")
    return tuple(getattr(aiohttp, name) for name in names) if aiohttp is not None else ()


class GeminiProvider(ModelProvider):
    """Gemini through ``client.aio.models.generate_content``."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        name: str | None = None,
        context_window: int = 1_000_000,
        client: genai.Client | None = None,
        api_version: str | None = None,
    ) -> None:
        self.model = model
        self.name = name or f"google/{model}"
        self.context_window = context_window
        options: dict[str, Any] = {"retry_options": {"attempts": 1}}
        if base_url:
            options["base_url"] = base_url
        if api_version:
            options["api_version"] = api_version
        self._client_args: dict[str, Any] = {"api_key": api_key, "http_options": options}
        self._owns_client = client is None
        if client is None:
            check_sdk_base_url(self.name, base_url, "GOOGLE_GEMINI_BASE_URL")
        try:
            self.client = client or genai.Client(**self._client_args)
        except ValueError as exc:  # e.g. "No API key was provided"
            raise FatalModelError(f"{self.name}: {exc}") from None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._api_key = api_key or getattr(
            getattr(self.client, "_api_client", None), "api_key", None
        )
        self._seq = 0
        self._warned_both = False
        self._declarations: dict[tuple[str, str, str], types.FunctionDeclaration] = {}

    async def aclose(self) -> None:
        """Close the async HTTP connection pool (from the loop that used the provider); a
        client passed in is the caller's to close."""
        if self._owns_client:
            await self.client.aio.aclose()

    def _loop_client(self) -> genai.Client:
        """The client for the running event loop (a connection pool belongs to one loop)."""
        loop = asyncio.get_running_loop()
        if self._owns_client and self._client_loop is not None and self._client_loop is not loop:
            self.client = genai.Client(**self._client_args)
        self._client_loop = loop
        return self.client

    # ------------------------------------------------------------------ call
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """One generateContent call (continued while Gemini says the reply goes on), its
        JSON normalised; errors come out as our three error classes."""
        if config.request_style == "coffee_paper":
            return await self._coffee_paper(messages, tools, config)
        contents, gen_config = self.build_request(messages, tools, config)
        hops = [await self._hop(contents, gen_config, config.timeout_s)]
        while len(hops) <= MAX_CONTINUATIONS:
            token = self._continuation_token(hops[-1])
            if token is None:
                break
            gen_config = gen_config.model_copy(update={"continuation_token": token})
            hops.append(await self._hop(contents, gen_config, config.timeout_s))
        async with reply_guard(self.name, None, self._clean):
            return self.parse_response(_merged(hops))

    async def _hop(
        self, contents: list[types.Content], config: types.GenerateContentConfig, timeout_s: float
    ) -> dict[str, Any]:
        """One request, within ``timeout_s`` in all, and its reply's JSON."""

        async def send(client: genai.Client) -> Any:
            response = await client.aio.models.generate_content(
                model=self.model, contents=contents, config=config
            )
            return response.sdk_http_response

        return await self._send(send, timeout_s)

    async def _coffee_paper(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """``request_style = "coffee_paper"``: the body the CoffeeBench reference's
        ``GeminiModel`` sends (``coffee_paper_wire.gemini_request``), posted as it is through
        the client's own HTTP layer (serialised with ``json.dumps``, as the reference's
        google-genai 1.56.0 does) to the API version that client used; the reply read as
        ``GeminiModel`` reads it (``coffee_paper_wire.gemini_reply``)."""
        try:
            body = coffee_paper_wire.gemini_request(self.model, messages, tools, config)
        except ValueError as exc:
            raise FatalModelError(f"{self.name}: {exc}") from None
        model = self.model if self.model.startswith("models/") else f"models/{self.model}"
        options = types.HttpOptions(
            api_version=coffee_paper_wire.GEMINI_API_VERSION,
            timeout=max(1, int(config.timeout_s * 1000)),
            retry_options=types.HttpRetryOptions(attempts=1),
        )

        async def send(client: genai.Client) -> Any:
            return await client.aio._api_client.async_request(
                "post", f"{model}:generateContent", body, options
            )

        data = await self._send(send, config.timeout_s)
        async with reply_guard(self.name, None, self._clean):
            output = self.parse_response(data)
            reply = coffee_paper_wire.gemini_reply(data)
        summarize = coffee_paper_wire.call_options(config).call == "summarize"
        output.text = reply.summary if summarize else reply.text
        output.reasoning = reply.thinking or None
        output.tool_calls = [] if summarize else reply.calls
        output.provider_data = coffee_paper_wire.with_reply(reply.raw, reply.prompt_tokens)
        return output

    async def _send(self, send: Any, timeout_s: float) -> dict[str, Any]:
        """``send(client)``'s HTTP response, within ``timeout_s`` in all, as the reply's JSON;
        errors come out as our three error classes."""
        async with reply_guard(self.name, timeout_s, self._clean):
            try:
                raw = await send(self._loop_client())
            except genai_errors.APIError as exc:
                raise self._map_api_error(exc) from None
            except genai_errors.UnknownApiResponseError as exc:
                raise TransientModelError(
                    self._clean(f"{self.name}: unreadable reply: {exc}")
                ) from None
            except (httpx2.TimeoutException, *_aiohttp_errors("ServerTimeoutError")):
                raise TransientModelError(f"{self.name}: request timed out") from None
            except (
                httpx2.NetworkError,
                httpx2.RemoteProtocolError,
                httpx2.ProxyError,
                *_aiohttp_errors("ClientConnectionError", "ClientPayloadError"),
            ) as exc:
                message = self._clean(f"{self.name}: connection error: {type(exc).__name__}: {exc}")
                raise TransientModelError(message) from None
            except (httpx2.HTTPError, *_aiohttp_errors("ClientError")) as exc:
                raise FatalModelError(self._clean(f"{self.name}: HTTP error: {exc}")) from None
            except pydantic.ValidationError as exc:  # the request, never the (raw) reply
                problem = str(exc).splitlines()[0]
                raise FatalModelError(
                    f"{self.name}: the SDK refused the request: {problem}"
                ) from None
            data = json_object(json.loads(raw.body or "null") if raw else None, self.name)
            if "error" in data and "candidates" not in data:  # a proxy's error, sent with a 200
                raise self._payload_error(data["error"])
            return data

    def _continuation_token(self, data: dict[str, Any]) -> bytes | None:
        """The token to continue a reply with, when Gemini cut it at the per-request token
        limit (finish reason ``CONTINUATION``, or none, with a token: the SDK's rule)."""
        candidates = get(data, "candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(first, dict) or get(first, "finishReason") not in (None, "CONTINUATION"):
            return None
        token = get(first, "continuationToken")
        if not token:
            return None
        decoded = _base64(token)
        if decoded is None:
            raise unreadable(self.name, "the continuation token is not base64")
        return decoded

    # --------------------------------------------------------------- request
    def build_request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> tuple[list[types.Content], types.GenerateContentConfig]:
        """The ``contents`` and ``config`` of one ``generate_content`` call."""
        system_text, contents = _convert_messages(messages)
        settings: dict[str, Any] = {
            "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
            "should_return_http_response": True,  # the JSON is read here (module docstring)
            "thinking_config": self._thinking(config),
            "http_options": types.HttpOptions(
                timeout=max(1, int(config.timeout_s * 1000)),
                retry_options=types.HttpRetryOptions(attempts=1),
                extra_body=dict(config.extra) if config.extra else None,
            ),
        }
        if system_text:
            settings["system_instruction"] = system_text
        if tools:
            settings["tools"] = [
                types.Tool(function_declarations=[self._declaration(t) for t in tools])
            ]
        if config.temperature is not None:
            settings["temperature"] = config.temperature
        if config.max_tokens is not None:
            settings["max_output_tokens"] = config.max_tokens
        return contents, types.GenerateContentConfig(**settings)

    def _declaration(self, spec: ToolSpec) -> types.FunctionDeclaration:
        """Converted once per tool: the agent sends the same tools on every step."""
        key = (spec.name, spec.description, json.dumps(spec.parameters, sort_keys=True))
        declaration = self._declarations.get(key)
        if declaration is None:
            declaration = self._declarations[key] = function_declaration(spec)
        return declaration

    def _thinking(self, config: GenerateConfig) -> types.ThinkingConfig:
        if config.thinking_budget is not None:
            if config.reasoning_effort is not None and not self._warned_both:
                self._warned_both = True
                log.warning(
                    "%s: both thinking_budget and reasoning_effort are set; Gemini takes one, "
                    "sending thinking_budget=%s",
                    self.name,
                    config.thinking_budget,
                )
            return types.ThinkingConfig(
                include_thoughts=True, thinking_budget=int(config.thinking_budget)
            )
        if config.reasoning_effort is not None:
            effort = config.reasoning_effort.lower()
            if effort == "none":
                return types.ThinkingConfig(thinking_budget=0)
            level = THINKING_LEVELS.get(effort)
            if level is None:
                raise FatalModelError(
                    f"{self.name}: reasoning_effort={config.reasoning_effort!r} is not one of "
                    f"none, {', '.join(THINKING_LEVELS)}"
                )
            return types.ThinkingConfig(include_thoughts=True, thinking_level=level)
        return types.ThinkingConfig(include_thoughts=True)

    # -------------------------------------------------------------- response
    def parse_response(self, data: dict[str, Any]) -> ModelOutput:
        """Normalise a reply's JSON: text, function calls, thought summaries, usage.

        An ``error`` object where the reply belongs is classified like the HTTP error it
        names; a reply with neither a candidate nor prompt feedback is unreadable.
        """
        self._seq += 1
        data = json_object(data, self.name)
        if "error" in data and "candidates" not in data:
            raise self._payload_error(data["error"])
        candidates = json_list(get(data, "candidates"), self.name, "candidates")
        feedback = get(data, "promptFeedback")
        if not candidates and not isinstance(feedback, dict):
            raise unreadable(self.name, "the reply has no candidates")
        candidate = json_object(candidates[0], self.name, "candidates[0]") if candidates else {}
        content = get(candidate, "content")
        content = {} if content is None else json_object(content, self.name, "content")
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        raw_parts: list[dict[str, Any]] = []
        synthetic: list[str] = []
        for part in json_list(get(content, "parts"), self.name, "content.parts"):
            part = part if isinstance(part, dict) else {}
            raw: dict[str, Any] = {}
            signature = self._signature(get(part, "thoughtSignature"))
            if signature:
                raw["thought_signature"] = signature
            function_call = get(part, "functionCall")
            text = get(part, "text")
            if function_call is not None:
                fc = function_call if isinstance(function_call, dict) else {}
                wire_id = fc.get("id") if isinstance(fc.get("id"), str) and fc["id"] else None
                call_id = wire_id or f"gemini-{self._seq}-{len(calls)}"
                if wire_id is None:
                    synthetic.append(call_id)
                name = tool_name(fc.get("name"))
                # An object within the bounds stays one; anything else (an array, a string)
                # is kept as text for the toolkit to answer, as for the other providers.
                args = bounded_arguments(fc.get("args"))
                calls.append(ToolCall(name, args, call_id))
                raw["function_call"] = {"id": wire_id, "name": name, "args": args}
            elif isinstance(text, str):
                thought = get(part, "thought") is True
                (thoughts if thought else texts).append(text)
                raw["text"] = text
                if thought:
                    raw["thought"] = True
            elif not raw:
                continue  # a part kind an agent never gets (inline data, code results, ...)
            raw_parts.append(raw)
        finish = _text_or_none(get(candidate, "finishReason"))
        if finish == "MALFORMED_FUNCTION_CALL" and not calls:
            calls.append(self._malformed_call(_text_or_none(get(candidate, "finishMessage")) or ""))
        if not candidates:
            finish = _text_or_none(get(feedback, "blockReason")) or "blocked"
        meta = get(data, "usageMetadata")
        meta = meta if isinstance(meta, dict) else {}
        prompt, tool_prompt, cached, answer, thinking = (
            token_count(get(meta, field)) for field in _USAGE_FIELDS
        )
        kept: dict[str, Any] = {"parts": raw_parts, "call_ids": [c.call_id for c in calls]}
        if synthetic:
            kept["synthetic_ids"] = synthetic
        response_id = get(data, "responseId")
        if isinstance(response_id, str) and response_id:
            kept["response_id"] = response_id
        return checked_output(
            ModelOutput(
                model=self.model,
                text="".join(texts),
                tool_calls=calls,
                reasoning="\n\n".join(t for t in thoughts if t) or None,
                usage=Usage(
                    input_tokens=total_count(prompt, tool_prompt),
                    cached_input_tokens=cached,
                    output_tokens=total_count(answer, thinking),
                    reasoning_tokens=thinking,
                ),
                stop_reason=finish.lower() if finish else None,
                provider_data={"gemini": kept},
            ),
            self.name,
        )

    def _signature(self, value: Any) -> str | None:
        """A thought signature as standard base64, as it is stored and replayed; one that is
        not base64 is dropped (with a warning): replayed, it would break the next request."""
        if value is None or value == "":
            return None
        decoded = _base64(value)
        if decoded is None:
            log.warning("%s: ignoring a thought signature that is not base64", self.name)
            return None
        return base64.b64encode(decoded).decode()

    def _malformed_call(self, message: str) -> ToolCall:
        """Gemini could not parse the model's call: hand what it said to the toolkit.

        The name is read from Gemini's ``finishMessage`` when the SDK passes it on (the
        Developer API converter drops it); otherwise the call is named
        ``malformed_function_call`` and the toolkit answers with an unknown-tool error.
        """
        raw = message.split(":", 1)[1].strip() if message.startswith("Malformed") else message
        names = [a or b for a, b in _MALFORMED_NAME.findall(raw) if (a or b) != "print"]
        name = names[0] if names else "malformed_function_call"
        if not raw:  # google-genai drops finishMessage on the Developer API
            raw = (
                "Gemini could not parse this function call (finish reason MALFORMED_FUNCTION_CALL)"
            )
        return ToolCall(name, raw, f"gemini-{self._seq}-malformed")

    # ---------------------------------------------------------------- errors
    def _map_api_error(self, exc: genai_errors.APIError) -> ModelError:
        """Classify by HTTP status; the message never contains the API key."""
        status = int(exc.code or 0)
        detail = exc.message or str(exc.details)[:500]
        label = f"HTTP {status} {exc.status or ''}"
        return self._classify(status, label, detail, lambda: _retry_after(exc))

    def _classify(
        self, status: int, label: str, detail: str, retry_after: Any = lambda: None
    ) -> ModelError:
        """One classification for HTTP errors and the error objects of 200 bodies."""
        message = self._clean(f"{self.name}: {label}: {detail}")
        if is_context_overflow(status, detail):
            return ContextOverflowError(message)
        if status in _TRANSIENT_STATUS or status >= 500:
            return TransientModelError(message, retry_after=retry_after())
        return FatalModelError(message)

    def _payload_error(self, error: Any) -> ModelError:
        """A ``google.rpc.Status`` sent with a 200 (a proxy): classified by its code, one
        that is not an HTTP status as a server error (retried)."""
        error = error if isinstance(error, dict) else {"message": str(error)[:500]}
        code = error.get("code")
        status = code if isinstance(code, int) and 100 <= code <= 599 else 500
        detail = error.get("message") if isinstance(error.get("message"), str) else ""
        label = f"HTTP 200 with an error, {str(error.get('status') or status)[:40]}"
        return self._classify(status, label, detail[:500], lambda: retry_info_seconds(error))

    def _clean(self, message: str) -> str:
        """The message without the key, whole or echoed masked (``_http.redact``)."""
        return redact(message, [self._api_key])


# ---------------------------------------------------------------- conversion
def _convert_messages(messages: list[ChatMessage]) -> tuple[str, list[types.Content]]:
    """Our messages as (system instruction, contents with roles user/model), merged."""
    system_parts: list[str] = []
    index = 0
    while index < len(messages) and messages[index].role == "system":
        if messages[index].content:
            system_parts.append(messages[index].content)
        index += 1
    # [role, parts, merged]: each turn's Content is made once, at the end
    turns: list[list[Any]] = []
    pending: list[dict[str, Any]] = []  # calls of the last model turn still without a result

    def add(role: str, parts: list[types.Part]) -> None:
        if not parts:
            return
        if turns and turns[-1][0] == role:
            turn = turns[-1]
            if not turn[2]:  # a list of its own (the first one may be a message's, kept)
                turn[1], turn[2] = list(turn[1]), True
            turn[1].extend(parts)
        else:
            turns.append([role, parts, False])

    def close_pending() -> None:
        if pending:
            log.warning("tool calls without a result: %s", [p["name"] for p in pending])
            missing = json.dumps({"error": _MISSING_RESULT})
            add(
                "user",
                [
                    types.Part(text=f"[result of {p['name']}] {missing}")
                    if p["as_text"]
                    else _response_part(p, missing)
                    for p in pending
                ],
            )
            pending.clear()

    # A message's parts are made once and kept with it (``ChatMessage.memo``), under a key
    # naming what else they depend on (the call a result answers); they are shared by later
    # requests and never changed.
    for msg in messages[index:]:
        if msg.role == "tool":
            call = _take_call(pending, msg)
            if call is None or call["as_text"]:
                label = call["name"] if call else (msg.name or "tool")
                part = msg.memo(
                    ("gemini_result_text", label),
                    lambda m, label=label: types.Part(text=f"[result of {label}] {m.content}"),
                )
            else:
                part = msg.memo(
                    ("gemini_response", call["wire_id"], call["name"]),
                    lambda m, call=call: _response_part(call, m.content),
                )
            add("user", [part])
            continue
        close_pending()
        if msg.role == "assistant":
            parts, calls = msg.memo(_MODEL_KEY, _model_parts)
            add("model", parts)
            pending.extend(calls)
        else:
            add("user", [msg.memo(_USER_KEY, _user_part)])
    close_pending()
    contents: list[types.Content] = []
    for role, parts, merged in turns:
        if merged and role == "user":  # function responses first, then any text (stable)
            parts.sort(key=_not_a_response)
        contents.append(types.Content(role=role, parts=parts))
    return "\n\n".join(system_parts), contents


def _not_a_response(part: types.Part) -> bool:
    return part.function_response is None


_MODEL_KEY = ("gemini_model",)
_USER_KEY = ("gemini_user",)


def _user_part(msg: ChatMessage) -> types.Part:
    return types.Part(text=msg.content or "(empty message)")


def _model_parts(msg: ChatMessage) -> tuple[list[types.Part], list[dict[str, Any]]]:
    """A model turn: replayed part by part when it is ours, rebuilt otherwise."""
    data = (msg.provider_data or {}).get("gemini") or {}
    raw: list[dict[str, Any]] = data.get("parts") or []
    synthetic = set(data.get("synthetic_ids") or [])
    calls = [
        {
            "id": c.call_id,
            "wire_id": None if (not c.call_id or c.call_id in synthetic) else c.call_id,
            "name": c.name,
            "as_text": not isinstance(c.arguments, dict),
        }
        for c in msg.tool_calls
    ]
    if raw and _consistent(raw, msg) and not any(c["as_text"] for c in calls):
        wire_ids = iter(c["wire_id"] for c in calls)
        parts = [_part_from_raw(p, next(wire_ids) if "function_call" in p else None) for p in raw]
        return _drop_if_silent(parts), calls
    # Rebuilt: thought parts first, then the text, then the calls (signatures re-attached).
    signatures = {
        (p["function_call"]["name"], json.dumps(p["function_call"]["args"], sort_keys=True)): p[
            "thought_signature"
        ]
        for p in raw
        if "function_call" in p and "thought_signature" in p
    }
    parts = [_part_from_raw(p) for p in raw if p.get("thought")]
    text = msg.content
    for call, spec in zip(msg.tool_calls, calls, strict=True):
        if spec["as_text"]:
            text += f"\n[called {call.name} with unparseable arguments: {call.arguments}]"
    if text.strip():
        parts.append(types.Part(text=text.strip()))
    for call, spec in zip(msg.tool_calls, calls, strict=True):
        if spec["as_text"]:
            continue
        signature = signatures.get((call.name, json.dumps(call.arguments, sort_keys=True)))
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=spec["wire_id"], name=call.name, args=call.arguments
                ),
                thought_signature=base64.b64decode(signature) if signature else None,
            )
        )
    return _drop_if_silent(parts), calls


def _consistent(raw: list[dict[str, Any]], msg: ChatMessage) -> bool:
    """Does the stored turn still say what the message says (text and calls)?"""
    text = "".join(p["text"] for p in raw if "text" in p and not p.get("thought"))
    stored = [
        (p["function_call"]["name"], p["function_call"]["args"])
        for p in raw
        if "function_call" in p
    ]
    return text == msg.content and stored == [(c.name, c.arguments) for c in msg.tool_calls]


def _part_from_raw(raw: dict[str, Any], wire_id: str | None = None) -> types.Part:
    """A stored part back as a ``Part``, its thought signature restored byte for byte."""
    signature = raw.get("thought_signature")
    fields: dict[str, Any] = {}
    if signature:
        fields["thought_signature"] = base64.b64decode(signature)
    if "function_call" in raw:
        fc = raw["function_call"]
        fields["function_call"] = types.FunctionCall(id=wire_id, name=fc["name"], args=fc["args"])
    else:
        fields["text"] = raw.get("text", "")
        if raw.get("thought"):
            fields["thought"] = True
    return types.Part(**fields)


def _drop_if_silent(parts: list[types.Part]) -> list[types.Part]:
    """A turn with neither text nor a call (an empty reply) is left out entirely."""
    if any(p.function_call is not None or (p.text and not p.thought) for p in parts):
        return parts
    return []


def _take_call(pending: list[dict[str, Any]], msg: ChatMessage) -> dict[str, Any] | None:
    """The call a tool result answers: by id, else by name, else the oldest one."""
    for match in (
        lambda p: msg.tool_call_id is not None and p["id"] == msg.tool_call_id,
        lambda p: msg.name is not None and p["name"] == msg.name,
        lambda p: True,
    ):
        for i, call in enumerate(pending):
            if match(call):
                return pending.pop(i)
    return None


def _response_part(call: dict[str, Any], content: str) -> types.Part:
    """A function response; a JSON object result is sent as is, anything else wrapped."""
    try:
        value = json.loads(content) if content else {}
    except json.JSONDecodeError:
        value = content
    response = value if isinstance(value, dict) else {"output": value}
    return types.Part(
        function_response=types.FunctionResponse(
            id=call["wire_id"], name=call["name"], response=response
        )
    )


# ---------------------------------------------------------------- schemas
def function_declaration(spec: ToolSpec) -> types.FunctionDeclaration:
    """A tool as a Gemini function declaration (no ``parameters`` when it takes none)."""
    schema = to_gemini_schema(spec.parameters)
    declaration: dict[str, Any] = {"name": spec.name, "description": spec.description}
    if schema.get("properties"):
        declaration["parameters"] = types.Schema.model_validate(schema)
    return types.FunctionDeclaration(**declaration)


def to_gemini_schema(
    schema: dict[str, Any], defs: dict[str, Any] | None = None, depth: int = 0
) -> dict[str, Any]:
    """A JSON schema in Gemini's schema subset (snake_case field names, upper-case types).

    What the subset cannot say is dropped, and a constraint that matters to the model is
    restated in the description; the toolkit still validates against the full schema.
    """
    if defs is None:
        defs = schema.get("$defs") or schema.get("definitions") or {}
    if depth > 12:  # a recursive model: stop expanding rather than loop
        return {"type": "OBJECT", "description": "A nested JSON object."}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1], {})
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return to_gemini_schema(merged, defs, depth + 1)
    notes: list[str] = []
    out: dict[str, Any] = {}
    options = schema.get("anyOf") or schema.get("oneOf")
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and not options:
        merged = {**all_of[0], **{k: v for k, v in schema.items() if k != "allOf"}}
        return to_gemini_schema(merged, defs, depth + 1)
    if isinstance(options, list):
        non_null = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        nullable = len(non_null) < len(options)
        if len(non_null) == 1:
            out = to_gemini_schema(non_null[0], defs, depth + 1)
        else:
            out = {"any_of": [to_gemini_schema(o, defs, depth + 1) for o in non_null]}
        if nullable:
            out["nullable"] = True
    else:
        kind = schema.get("type")
        if isinstance(kind, list):
            non_null_types = [t for t in kind if t != "null"]
            if len(non_null_types) < len(kind):
                out["nullable"] = True
            if len(non_null_types) == 1:
                kind = non_null_types[0]
            else:
                out["any_of"] = [{"type": str(t).upper()} for t in non_null_types]
                kind = None
        if isinstance(kind, str):
            out["type"] = kind.upper()
        _copy_constraints(schema, out, notes, defs, depth)
    if isinstance(schema.get("description"), str):
        out["description"] = schema["description"]
    if schema.get("default") is not None:
        notes.append(f"default: {json.dumps(schema['default'])}")
    if notes:
        text = out.get("description", "")
        out["description"] = f"{text} ({'; '.join(notes)})".strip()
    return out


def _copy_constraints(
    schema: dict[str, Any],
    out: dict[str, Any],
    notes: list[str],
    defs: dict[str, Any],
    depth: int,
) -> None:
    kind = out.get("type")
    if "const" in schema:
        schema = {**schema, "enum": [schema["const"]]}
    if "enum" in schema:
        values = schema["enum"]
        if kind in (None, "STRING") and all(isinstance(v, str) for v in values):
            out["type"] = "STRING"
            out["enum"] = list(values)
            out["format"] = "enum"
        else:
            notes.append("one of: " + ", ".join(json.dumps(v) for v in values))
    fmt = schema.get("format")
    if isinstance(fmt, str) and "format" not in out:
        if fmt in _FORMATS.get(kind or "", set()):
            out["format"] = fmt
        else:
            notes.append(f"format: {fmt}")
    for source, target in (
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("minItems", "min_items"),
        ("maxItems", "max_items"),
        ("minLength", "min_length"),
        ("maxLength", "max_length"),
        ("minProperties", "min_properties"),
        ("maxProperties", "max_properties"),
        ("pattern", "pattern"),
    ):
        if source in schema:
            out[target] = schema[source]
    if "exclusiveMinimum" in schema:
        notes.append(f"must be > {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema:
        notes.append(f"must be < {schema['exclusiveMaximum']}")
    if "multipleOf" in schema:
        notes.append(f"a multiple of {schema['multipleOf']}")
    if isinstance(schema.get("items"), dict):
        out["items"] = to_gemini_schema(schema["items"], defs, depth + 1)
    elif kind == "ARRAY":
        out["items"] = {"type": "STRING"}
        notes.append("items of any type")
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        out["properties"] = {
            key: to_gemini_schema(value, defs, depth + 1) for key, value in properties.items()
        }
        out["property_ordering"] = list(properties)
        required = [r for r in schema.get("required") or [] if r in properties]
        if required:
            out["required"] = required
    extra = schema.get("additionalProperties")
    if kind == "OBJECT" and isinstance(extra, dict):
        inner = to_gemini_schema(extra, defs, depth + 1).get("type", "any").lower()
        notes.append(f"an object mapping string keys to {inner} values")


# ---------------------------------------------------------------- helpers
def get(obj: Any, camel: str) -> Any:
    """A field of a reply's JSON in either spelling (proto JSON is camelCase; a parser
    must accept snake_case too), ``None`` when absent or when ``obj`` is not an object."""
    if not isinstance(obj, dict):
        return None
    if camel in obj:
        return obj[camel]
    return obj.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel))


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _base64(value: Any) -> bytes | None:
    """Proto JSON bytes (standard or URL-safe base64, padded or not), or ``None``."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _merged(hops: list[dict[str, Any]]) -> dict[str, Any]:
    """The replies of a continued call as one: the parts in order, the last hop's finish,
    the usage counts summed (as the SDK merges them)."""
    if len(hops) == 1:
        return hops[0]
    parts: list[Any] = []
    for hop in hops:
        candidates = get(hop, "candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else {}
        hop_parts = get(get(first, "content"), "parts")
        parts.extend(hop_parts if isinstance(hop_parts, list) else [])
    last_candidates = get(hops[-1], "candidates")
    last = last_candidates[0] if isinstance(last_candidates, list) and last_candidates else {}
    candidate = {**(last if isinstance(last, dict) else {}), "content": {"parts": parts}}
    usage = {
        field: total_count(*(token_count(get(get(hop, "usageMetadata"), field)) for hop in hops))
        for field in _USAGE_FIELDS
    }
    return {**hops[0], "candidates": [candidate], "usageMetadata": usage}


def _retry_after(exc: genai_errors.APIError) -> float | None:
    """Seconds from a Retry-After header, else from a ``google.rpc.RetryInfo`` detail."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    seconds = retry_after_seconds(headers)
    return seconds if seconds is not None else retry_info_seconds(exc.details)
