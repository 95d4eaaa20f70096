"""OpenAI providers: Chat Completions, the Responses API, and every OpenAI-compatible server.

``OpenAIResponsesProvider`` is the default for ``openai/...`` models (``DEFAULT_OPENAI_API``);
``OpenAIChatProvider`` speaks Chat Completions, both for ``openai/...`` models configured for
chat and for every ``openai-compatible/NAME`` model (vLLM, SGLang, Ollama, llama.cpp,
OpenRouter, Moonshot, Zhipu). Both use the official ``openai`` SDK's ``AsyncOpenAI`` client,
on the SDK's aiohttp transport (``DefaultAioHttpClient``: less CPU a request than its default).

Design choices (each one is what a careful user of an evaluation harness expects):

- **No retries here.** Clients are built with ``max_retries=0``; SDK exceptions are mapped to
  ``TransientModelError`` (429, 408, 409, 5xx, timeouts, dropped connections; ``retry_after``
  from ``Retry-After-Ms`` / ``Retry-After``), ``ContextOverflowError`` (``context_length_exceeded``
  or the overflow messages of OpenAI, vLLM, SGLang, llama.cpp and OpenRouter) and
  ``FatalModelError`` (auth, not found, bad request, and a 429 ``insufficient_quota``, which no
  amount of waiting fixes). Messages name the model and the host, never the API key. The
  wait, the overflow patterns and the key redaction are the ones every provider shares
  (``econbench.agents.models._http``).
- **Base URL.** ``base_url=None`` is passed through, so the SDK reads ``OPENAI_BASE_URL``
  exactly as it always does; an explicit ``base_url`` overrides it.
- **Forms every server takes.** Whenever tools are offered, ``tool_choice`` is sent too
  (``"auto"`` unless configured; llama-cpp-python drops the tools without it), and an
  assistant turn that only calls tools carries ``content: ""``, never ``null`` (Ollama and
  llama-cpp-python reject it). What differs between server families (``max_tokens`` or
  ``max_completion_tokens``, ``parallel_tool_calls``, the tool choice) is a named profile in
  ``econbench.agents.models.compat``, chosen per model.
- **Conservative requests for compatible servers.** Only the model, messages, tools (when
  there are any) and the parameters that were configured are sent; ``max_tokens`` rather than
  ``max_completion_tokens`` (unless the profile says otherwise); leading system messages are
  merged into one and later ones are sent as user messages (many chat templates reject a
  system message after the first turn);
  a tool call whose arguments were not valid JSON is replayed as
  ``{"unparsed_arguments": "<raw text>"}`` because vLLM parses replayed arguments and would
  reject the whole request. ``<think>...</think>`` at the start of a reply's text is moved to
  ``reasoning`` (servers started without a reasoning parser leave it in the content).
- **Usage.** ``input_tokens`` counts every prompt token (cached ones included);
  ``output_tokens`` is what the API bills as output and so includes ``reasoning_tokens``;
  missing fields are 0; impossible ones (negative, ``1e308``) are 0 and flagged, and the
  call is left unpriced (``boundary.checked_usage``). DeepSeek's ``prompt_cache_hit_tokens``
  and Moonshot's top-level ``cached_tokens`` are read when the OpenAI field is absent.
  ``cost_usd`` is left ``None`` for the pricing module.
- **Responses API, stateless.** ``store=False`` and no ``previous_response_id``: the whole
  conversation is sent each turn. Reasoning items (with ``encrypted_content``, requested via
  ``include``) and the ids of the output items are kept in ``provider_data["openai_responses"]``
  and replayed in their original order before the turn's text and function calls. Reasoning
  summaries are requested (``summary="auto"``) for reasoning models; if the organisation is not
  allowed summaries, the request is repeated once without them and they stay off.
- **Tool calls** come back as ``ToolCall(name, arguments, call_id)``; arguments that are not a
  JSON object, or nest deeper or run longer than the harness keeps, are returned as their
  text so the toolkit answers with an error result (``untrusted.bounded_arguments``); every
  reply passes ``boundary.checked_output`` (valid Unicode, bounded arguments, sane usage). A
  call without an id gets a deterministic one derived from the response.
- **The paper's requests.** ``request_style = "paper"`` makes ``OpenAIChatProvider`` send
  exactly the body the AlloBench paper's ``RawChat`` sends (``econbench.agents.models.
  paper_wire``): the system message first, ``max_completion_tokens``, ``reasoning_effort`` by
  the paper's model-name rules and the profile's ``paper_branch``, assistant calls with their
  arguments as the model wrote them (kept in ``provider_data["openai_chat"]["arguments"]``
  under this style only), ``tool_choice`` always with tools. The Responses API has no paper
  form (the registry uses chat for such models).
- **The CoffeeBench reference's requests.** ``request_style = "coffee_paper"`` sends the
  bodies of the reference's ``OpenAIModel`` (Responses) and ``OpenRouterModel`` (Chat
  Completions, for ``openai-compatible`` models) instead (``coffee_paper_wire``); a
  Responses reply's items are kept as the reference serialises them, for replay.
- ``GenerateConfig.tool_choice``, when set, is the ``tool_choice`` sent with tools (over the
  profile's).
- ``GenerateConfig.extra["extra_body"]`` (a dict) is merged into the request body, for server
  specific fields (e.g. vLLM's ``chat_template_kwargs``); ``thinking_budget`` does not apply.
- **Bodies assembled once.** With the SDK's own ``AsyncOpenAI`` client, a request's body is
  assembled from bytes each message keeps and posted through the client, and the reply read
  as plain JSON (``openai_body``): the bytes ``create()`` sends and the data it gives back,
  for a fraction of the CPU (``benchmarks/model_path.py``). Any other client (a subclass, a
  test double, strict response validation) goes through ``create()``.
- **Event loops.** A provider may be used from several event loops (one ``asyncio.run`` per
  run); its HTTP client is rebuilt for each new loop. Call ``await provider.aclose()`` before
  a loop ends to close the connections cleanly (econbench's runs, agents and sweeps do:
  ``econbench.agents.event_loop``); aiohttp reports a session collected open on stderr.
- **Dropped connections.** The aiohttp transport reports a connection the server closed or
  reset as a timeout; it is retried as one and its message says the connection failed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import ssl
import sys
from collections import deque
from collections.abc import Callable, Hashable
from operator import is_
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai

from econbench.agents.models import coffee_paper_wire, openai_body, paper_wire
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
    json_list,
    json_object,
    reply_guard,
    token_count,
    unreadable,
)
from econbench.agents.models.compat import Compat, resolve
from econbench.agents.models.prefix_fold import PrefixFolds
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.agents.untrusted import bounded_arguments, dump_text, is_sendable_json

log = logging.getLogger(__name__)

_BULKY = ("messages", "input", "tools")
"""Request fields sent verbatim, past the SDK's slow typed-parameter transform."""

DEFAULT_OPENAI_API = "responses"
"""Which API ``openai/...`` models use unless configured otherwise: "responses" or "chat"."""

OPENAI_APIS = ("responses", "chat")
COMPATIBLE_PREFIX = "openai-compatible/"
NO_KEY_PLACEHOLDER = "not-needed"
"""Sent as the key to an OpenAI-compatible server when none is configured (local servers);
``OPENAI_API_KEY`` is never sent to one (it may be any host): pass ``api_key``, as the
registry does from the variable a model's ``api_key_env`` names."""

_TRANSIENT_STATUS = {408, 409, 425, 429}
_REASONING_MODEL = re.compile(r"^(?:o\d|gpt-5|gpt-oss|codex)", re.IGNORECASE)
_SUMMARY_REFUSED = re.compile(r"summar", re.IGNORECASE)
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)
_RESPONSES_KEY = ("openai_responses",)
"""The key a Responses assistant turn's input items are kept under (``ChatMessage.memo``)."""


# --------------------------------------------------------------------------- helpers
def _int(value: Any) -> int:
    """A token count from whatever a server sent — never a crash; a value that is not a
    count (negative, ``1e308``, text) comes back as ``INVALID_COUNT`` for the boundary
    check to flag (``boundary.checked_usage``)."""
    return token_count(value)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    """A list in a reply, or nothing (a string there must not be read item by item)."""
    return value if isinstance(value, list) else []


def parse_arguments(raw: Any) -> dict[str, Any] | str:
    """Decode tool-call arguments: a JSON object within the bounds becomes a dict; anything
    else (not JSON, not an object, too deep, too long) stays text for the toolkit to answer
    with an error (``untrusted.bounded_arguments``)."""
    return bounded_arguments(raw)


def _arguments_text(arguments: Any, *, sanitize: bool) -> str:
    """Arguments as the JSON string the wire formats carry."""
    if isinstance(arguments, str):
        if not sanitize or is_sendable_json(arguments):
            return arguments
        return json.dumps({"unparsed_arguments": arguments}, ensure_ascii=False)
    if arguments is None:
        return "{}"
    try:
        return json.dumps(arguments, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):  # kept from before the bounds: resend safely
        return json.dumps({"unparsed_arguments": dump_text(arguments)}, ensure_ascii=False)


def _synthetic_call_id(seed: str, index: int, name: str, arguments: Any) -> str:
    """A deterministic id for a tool call the server sent without one."""
    args = arguments if isinstance(arguments, str) else dump_text(arguments)
    text = f"{seed}|{index}|{name}|{args}"
    return "call_" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _content_text(content: Any) -> str:
    """Text of a message content that may be a string or a list of parts; anything else
    (a number, an object) is not text, as for the other providers."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return ""


def _host(base_url: Any) -> str:
    """The host of a base URL, without any credentials it may carry."""
    try:
        parts = urlsplit(str(base_url))
    except ValueError:
        return "the configured base URL"
    host = parts.hostname or str(base_url)
    return f"{host}:{parts.port}" if parts.port else host


def _error_fields(body: Any, fallback: str) -> tuple[str, str | None, str | None]:
    """(message, code, type) from an OpenAI-shaped error body, or the SDK's message."""
    err = _dict(body)
    if isinstance(err.get("error"), dict):
        err = err["error"]
    message = err.get("message") if isinstance(err.get("message"), str) else None
    code = err.get("code")
    etype = err.get("type")
    return (
        message or fallback,
        str(code) if code is not None else None,
        str(etype) if etype is not None else None,
    )


_SSL_CONTEXTS: dict[tuple[str | None, str | None], ssl.SSLContext] = {}


def _http_client() -> Any:
    """The SDK's client with its defaults on its aiohttp transport, and a shared TLS context.

    The transport is the SDK's own option (``openai[aiohttp]``, ``DefaultAioHttpClient``):
    the same requests and the same SDK errors as its default HTTPX transport, for ~0.35 ms
    less CPU a request (``benchmarks/model_path.py``: httpcore's HTTP/1.1 parser and anyio's
    cancel scopes are Python; aiohttp's parser is compiled). Proxies from the environment
    still go through HTTPX's rules. Building a TLS context costs ~60 ms, and a provider needs
    a fresh client for each event loop; the context (made exactly as the SDK makes it,
    honouring ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``) is shared. The client is closed by
    whoever ends the loop (``econbench.agents.event_loop``).
    """
    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    context = _SSL_CONTEXTS.get(key)
    if context is None:
        context = _SSL_CONTEXTS[key] = httpx2.create_ssl_context()
    return openai.DefaultAioHttpClient(verify=context)


def _dropped_connection(exc: BaseException) -> BaseException | None:
    """The aiohttp error behind ``exc`` when the connection failed without timing out.

    The SDK's aiohttp transport reports every ``aiohttp.ClientConnectionError`` (a server
    that hung up, a reset) as a connect timeout; the message should say what happened."""
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is None:
        return None
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, aiohttp.ClientConnectionError) and not isinstance(cause, TimeoutError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


# --------------------------------------------------------------------------- base class
class _OpenAIProvider(ModelProvider):
    """What both OpenAI APIs share: the client, its event loop, and error classification."""

    assemble_bodies = True
    """Post bodies assembled from each message's kept bytes (``openai_body``); ``False``
    sends every request through the SDK's ``create()`` (the same bytes, more CPU)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        name: str | None = None,
        context_window: int = 200_000,
        client: Any = None,
        compatible: bool | None = None,
        compat: Compat | str | None = None,
    ) -> None:
        self.model = model
        self.name = name or f"openai/{model}"
        self.context_window = context_window
        self.compatible = (
            self.name.startswith(COMPATIBLE_PREFIX) if compatible is None else compatible
        )
        self.compat = resolve(compat, compatible=self.compatible)
        self._api_key = api_key
        self._base_url = base_url
        self._external_client = client is not None
        self._client: Any = client if client is not None else self._build_client()
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._sdk_requests: dict[Hashable, openai_body.SdkRequest] = {}
        self._kept_fields: dict[str, tuple[Any, bytes]] = {}
        self._last_tools: tuple[list[ToolSpec], bool, list[dict[str, Any]]] | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r})"

    def _tools_param(
        self, tools: list[ToolSpec], strict: bool, convert: Callable[[ToolSpec], dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The tools' wire forms, the very same list while the same tools are offered in the
        same mode, so that its encoding is kept too (``openai_body.encoded_body``); a tool's
        schema is settled once offered, as a message is once sent."""
        last = self._last_tools
        if (
            last is not None
            and last[1] == strict
            and len(last[0]) == len(tools)
            and all(map(is_, last[0], tools))
        ):
            return last[2]
        wire = [convert(spec) for spec in tools]
        self._last_tools = (list(tools), strict, wire)
        return wire

    def _build_client(self) -> openai.AsyncOpenAI:
        """A client that never retries; a missing key is a clear error here, before any call."""
        api_key = self._api_key
        if api_key is None and self.compatible:
            api_key = NO_KEY_PLACEHOLDER  # never OPENAI_API_KEY: the host may be anyone's
        check_sdk_base_url(self.name, self._base_url, "OPENAI_BASE_URL")
        try:
            client = openai.AsyncOpenAI(
                api_key=api_key,
                base_url=self._base_url,
                max_retries=0,
                http_client=_http_client(),
            )
        except openai.OpenAIError as exc:
            raise FatalModelError(f"{self.name}: {self._redact(str(exc))}") from None
        if self.compatible:
            # The SDK fills these from OPENAI_ORG_ID / OPENAI_PROJECT_ID even when passed None;
            # they describe an OpenAI account and must not travel to another host.
            client.organization = None
            client.project = None
        return client

    def _client_for_loop(self) -> Any:
        """The client, rebuilt for a new event loop (its connection pool is loop-bound) or
        after ``aclose``."""
        if self._external_client:
            return self._client
        loop = asyncio.get_running_loop()
        if (
            self._client_loop is not None and self._client_loop is not loop
        ) or self._client.is_closed():
            self._client = self._build_client()
        self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the connections of a client this provider built (it reopens on next use)."""
        if self._external_client or self._client.is_closed():
            return
        if self._client_loop in (None, asyncio.get_running_loop()):
            await self._client.close()

    # ------------------------------------------------------------------ errors
    def _secrets(self) -> list[str]:
        keys = [self._api_key, getattr(getattr(self, "_client", None), "api_key", None)]
        return [k for k in keys if isinstance(k, str) and len(k) >= 6 and k != NO_KEY_PLACEHOLDER]

    def _redact(self, text: str) -> str:
        """Remove the API key (whole, or as a provider's masked echo of it) from a message."""
        return redact(text, self._secrets())

    @property
    def _where(self) -> str:
        return _host(getattr(self._client, "base_url", self._base_url or "api.openai.com"))

    def map_error(self, exc: Exception, timeout_s: float | None = None) -> ModelError:
        """Classify an SDK exception as transient, context overflow or fatal."""
        dropped = _dropped_connection(exc)
        if isinstance(exc, openai.APITimeoutError) and dropped is None:
            limit = f" after {timeout_s:g}s" if timeout_s is not None else ""
            return TransientModelError(f"{self.name}: request to {self._where} timed out{limit}")
        if isinstance(exc, openai.APIConnectionError):
            cause = dropped or exc.__cause__ or exc.__context__
            detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
            return TransientModelError(
                self._redact(f"{self.name}: connection to {self._where} failed{detail}")
            )
        if isinstance(exc, openai.APIStatusError):
            message, code, etype = _error_fields(exc.body, exc.message)
            return self._classify(exc.status_code, message, code, etype, exc.response.headers)
        if isinstance(exc, openai.OpenAIError):
            return FatalModelError(self._redact(f"{self.name}: {exc}"))
        raise exc

    def _classify(
        self,
        status: int | None,
        message: str,
        code: str | None,
        etype: str | None,
        headers: Any = None,
    ) -> ModelError:
        """One classification for HTTP errors and errors inside a 200 body."""
        message = self._redact(message)
        label = f"HTTP {status}" if status is not None else "error"
        if code and code != str(status):
            label += f" {code}"
        text = f"{self.name}: {label}: {message}"
        if is_context_overflow(status, message, code):
            return ContextOverflowError(text)
        if code == "insufficient_quota" or etype == "insufficient_quota":
            return FatalModelError(f"{text} (the account's quota is exhausted; check billing)")
        should_retry = headers.get("x-should-retry") if headers is not None else None
        if should_retry == "true":
            return TransientModelError(text, retry_after=retry_after_seconds(headers))
        if status is None:
            transient = etype in ("server_error", "rate_limit_error") or code in (
                "rate_limit_exceeded",
                "server_error",
            )
        else:
            transient = status in _TRANSIENT_STATUS or status >= 500
        if transient and should_retry != "false":
            return TransientModelError(text, retry_after=retry_after_seconds(headers))
        hint = ""
        if status in (401, 403):
            hint = " (check the API key configured for this model)"
        elif status == 404:
            hint = f" (is the model name right, and is {self._where} the right base URL?)"
        return FatalModelError(text + hint)

    def _payload_error(self, err: Any) -> ModelError:
        """An error reported inside a 200 response body (OpenRouter, failed Responses)."""
        message, code, etype = _error_fields({"error": err}, "the server reported an error")
        status = (
            int(code) if code and code.isascii() and code.isdigit() and len(code) == 3 else None
        )
        return self._classify(status, message, None if status else code, etype)

    async def _create(self, resource: Any, kwargs: dict[str, Any], timeout_s: float) -> Any:
        """One SDK call, with its exceptions mapped to ours.

        The conversation and the tools travel in ``extra_body``: the SDK sends them as they
        are, instead of walking them through its typed-parameter transform, which costs
        ~0.3 s per call on a long agent conversation and grows with its length.
        """
        light = {k: v for k, v in kwargs.items() if k not in _BULKY}
        bulky = {k: kwargs[k] for k in _BULKY if k in kwargs}
        if "messages" in bulky:
            light["messages"] = []
        if bulky:
            light["extra_body"] = {**bulky, **(light.get("extra_body") or {})}
        try:
            return await resource.create(**light, timeout=timeout_s)
        except openai.OpenAIError as exc:
            raise self.map_error(exc, timeout_s) from None

    async def _reply(
        self,
        resource: Any,
        kwargs: dict[str, Any],
        timeout_s: float,
        conversation: openai_body.Conversation | None = None,
    ) -> Any:
        """One request and its reply as plain JSON data, within ``timeout_s`` in all; a
        garbled reply (a proxy's HTML, JSON nested past reading) is a transient error.

        With the SDK's plain client the body is assembled from the bytes each message keeps
        and the reply read as plain JSON (``openai_body``: the same bytes and the same data as
        ``create()``, for a fraction of the CPU); any other client goes through ``create()``.
        """
        async with reply_guard(f"{self.name} ({self._where})", timeout_s, self._redact):
            if self.assemble_bodies and openai_body.eligible(resource._client):
                data = await self._post_assembled(resource, kwargs, timeout_s, conversation)
            else:
                data = await self._create(resource, kwargs, timeout_s)
            return self._response_dict(data)

    async def _post_assembled(
        self,
        resource: Any,
        kwargs: dict[str, Any],
        timeout_s: float,
        conversation: openai_body.Conversation | None,
    ) -> Any:
        """``_create``'s request, its body assembled as bytes (``openai_body``), and the reply
        as the data ``to_dict`` would give (``openai_body.reply_data``)."""
        light = {k: v for k, v in kwargs.items() if k not in _BULKY}
        if "messages" in kwargs:
            light["messages"] = []
        light["timeout"] = timeout_s
        sdk = await self._sdk_request(resource, light)
        options = dict(sdk.options)
        bulky = {k: kwargs[k] for k in _BULKY if k in kwargs}
        extra = {**bulky, **(options.pop("extra_json", None) or {})}
        body = openai_body.encoded_body(
            openai_body.merged(sdk.body, extra), conversation, self._kept_fields
        )
        client = resource._client
        try:
            response = await client.post(
                sdk.path, cast_to=httpx2.Response, content=body, options=options
            )
        except openai.OpenAIError as exc:
            raise self.map_error(exc, timeout_s) from None
        return openai_body.reply_data(client, response, sdk.cast_to)

    async def _sdk_request(self, resource: Any, light: dict[str, Any]) -> openai_body.SdkRequest:
        """What ``create(**light)`` would post (its typed transform of the few small
        parameters), kept per setting."""
        key = openai_body.settings_key(light)
        if key is None:
            return await openai_body.sdk_request(resource, light)
        key = (type(resource), key)
        known = self._sdk_requests.get(key)
        if known is None:
            if len(self._sdk_requests) >= 64:
                self._sdk_requests.clear()
            known = self._sdk_requests[key] = await openai_body.sdk_request(resource, light)
        return known

    async def _reference_reply(
        self,
        path: str,
        cast_to: Any,
        kwargs: dict[str, Any],
        timeout_s: float,
        body_of: Any = coffee_paper_wire.reference_body,
    ) -> dict[str, Any]:
        """``_reply`` for ``request_style = "coffee_paper"``: the body posted as the CoffeeBench
        reference's SDK writes it (``body_of``: ``coffee_paper_wire.reference_body``, or
        ``chat_body`` for Chat Completions)."""
        body, headers = body_of(kwargs)
        client = self._client_for_loop()
        async with reply_guard(f"{self.name} ({self._where})", timeout_s, self._redact):
            try:
                response = await client.post(
                    path,
                    body=body,
                    cast_to=cast_to,
                    options={"headers": headers, "timeout": timeout_s},
                )
            except openai.OpenAIError as exc:
                raise self.map_error(exc, timeout_s) from None
            return self._response_dict(response)

    def _response_dict(self, response: Any) -> dict[str, Any]:
        """The response as plain JSON data (extra fields of compatible servers included)."""
        data: Any = response
        if hasattr(response, "to_dict"):
            data = response.to_dict(mode="json", warnings=False)
        return json_object(data, f"{self.name} ({self._where})")

    async def _parsed(self, parse: Any, data: dict[str, Any]) -> ModelOutput:
        """``parse(data)``, a reply of the wrong shape an error like any garbled one."""
        async with reply_guard(self.name, None, self._redact):
            return parse(data)

    def _tool_options(self, config: GenerateConfig) -> dict[str, Any]:
        """``tool_choice`` (the config's, else the profile's) and ``parallel_tool_calls`` (if
        configured) for a request with tools: some servers (llama-cpp-python) leave tools out
        of the prompt without a tool choice."""
        options: dict[str, Any] = {}
        choice = config.tool_choice or self.compat.tool_choice
        if choice is not None:
            options["tool_choice"] = choice
        if self.compat.parallel_tool_calls is not None:
            options["parallel_tool_calls"] = self.compat.parallel_tool_calls
        return options

    @staticmethod
    def _extra_body(config: GenerateConfig) -> dict[str, Any] | None:
        extra = config.extra.get("extra_body") if config.extra else None
        return dict(extra) if isinstance(extra, dict) and extra else None


# --------------------------------------------------------------------------- chat completions
class _ChatWire:
    """``build_messages`` as a fold over the messages (``prefix_fold``): the wire messages
    of the messages added so far."""

    def __init__(self, provider: OpenAIChatProvider) -> None:
        self.provider = provider
        self.wire = openai_body.WireItems(provider._chat_key("openai_chat_json"))
        self.leading_system: list[str] = []
        self.seen_other = False
        self.pending_ids: deque[str] = deque()

    def closing(self) -> dict[str, Any] | None:
        """The system message a compatible server gets at the end of a conversation of
        system messages only (they are otherwise sent before the first other message)."""
        if self.seen_other or not self.provider.compatible or not self.leading_system:
            return None
        return {"role": "system", "content": "\n\n".join(self.leading_system)}

    def add(self, index: int, msg: ChatMessage) -> None:
        """Convert the next message."""
        provider, wire = self.provider, self.wire
        if msg.role == "system":
            if not self.seen_other:
                self.leading_system.append(msg.content)
                if not provider.compatible:
                    wire.extend([{"role": "system", "content": msg.content}], msg)
            elif provider.compatible:
                note = {"role": "user", "content": f"[System note]\n{msg.content}"}
                wire.extend([note], None)
            else:
                wire.extend([{"role": "system", "content": msg.content}], msg)
            return
        closing = self.closing()
        if closing is not None:
            wire.extend([closing], None)
        self.seen_other = True
        if msg.role == "user":
            wire.extend([{"role": "user", "content": msg.content}], msg)
        elif msg.role == "assistant":
            # converted once per message (shared by later requests, never changed)
            settled = msg.memo(provider._chat_key("openai_chat"), provider._settled_assistant)
            if settled is not None:
                wire.extend([settled], msg)
            else:
                wire.extend([provider._assistant_message(msg, index, self.pending_ids)], None)
        elif msg.role == "tool":
            if msg.tool_call_id:
                item = {"role": "tool", "tool_call_id": msg.tool_call_id, "content": msg.content}
                wire.extend([item], msg)
                return
            call_id = self.pending_ids.popleft() if self.pending_ids else None
            if call_id is None:
                label = f" {msg.name}" if msg.name else ""
                text = f"[Result of tool{label}]\n{msg.content}"
                wire.extend([{"role": "user", "content": text}], None)
            else:
                item = {"role": "tool", "tool_call_id": call_id, "content": msg.content}
                wire.extend([item], None)


class OpenAIChatProvider(_OpenAIProvider):
    """Chat Completions: ``openai/...`` configured for chat and every ``openai-compatible/``."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        name: str | None = None,
        context_window: int = 200_000,
        client: Any = None,
        compatible: bool | None = None,
        replay_reasoning: bool = False,
        compat: Compat | str | None = None,
    ) -> None:
        """``replay_reasoning`` sends a compatible server's reasoning text back on later turns
        (Kimi and GLM thinking models ask for it during tool use; most servers ignore it).
        ``compat`` names the server's quirk profile (``econbench.agents.models.compat``)."""
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            name=name,
            context_window=context_window,
            client=client,
            compatible=compatible,
            compat=compat,
        )
        self.replay_reasoning = replay_reasoning
        self._warned_effort = False
        self._wire_folds: PrefixFolds[_ChatWire] = PrefixFolds(self._new_wire)

    # ------------------------------------------------------------------ request
    def build_messages(self, messages: list[ChatMessage]) -> list[dict[str, Any]]:
        """Neutral messages to Chat Completions wire messages.

        An assistant turn whose calls all have ids converts the same wherever it stands, so
        its wire message is made once and kept with the message (``ChatMessage.memo``, under
        a key naming the settings it depends on); the rest is cheap or depends on the
        turn's place (leading system messages, ids made up for calls that had none).
        """
        return list(self._wire(messages).items)

    def _chat_key(self, tag: str) -> tuple[Any, ...]:
        """A memo key naming the settings a message's Chat Completions wire form depends on."""
        return (tag, self.compatible, self.compat.tool_call_content, self.replay_reasoning)

    def _wire(self, messages: list[ChatMessage]) -> openai_body.WireItems:
        """``build_messages``'s wire messages, each with its message where it does not depend
        on its place (so its encoding can be kept with the message: ``openai_body``); the
        messages a request repeats from an earlier one are not converted again
        (``prefix_fold``)."""
        state = self._wire_folds.fold(messages, self._chat_key("openai_chat"))
        closing = state.closing()
        if closing is None:
            return state.wire
        wire = state.wire.copy()
        wire.extend([closing], None)
        return wire

    def _new_wire(self) -> _ChatWire:
        return _ChatWire(self)

    def _settled_assistant(self, msg: ChatMessage) -> dict[str, Any] | None:
        """The wire form of an assistant turn that does not depend on its place (every call
        has an id), else ``None``."""
        if not all(call.call_id for call in msg.tool_calls):
            return None
        return self._assistant_message(msg, 0, deque())

    def _assistant_message(
        self, msg: ChatMessage, index: int, pending_ids: deque[str]
    ) -> dict[str, Any]:
        wire: dict[str, Any] = {"role": "assistant"}
        calls = []
        for i, call in enumerate(msg.tool_calls):
            call_id = call.call_id
            if not call_id:
                call_id = _synthetic_call_id(f"history-{index}", i, call.name, call.arguments)
                pending_ids.append(call_id)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": _arguments_text(call.arguments, sanitize=self.compatible),
                    },
                }
            )
        if msg.content or not calls:
            wire["content"] = msg.content
        elif self.compat.tool_call_content == "empty":
            wire["content"] = ""  # never null: Ollama and llama-cpp-python reject it
        if calls:
            wire["tool_calls"] = calls
        if self.replay_reasoning and msg.reasoning:
            data = _dict(_dict(msg.provider_data).get("openai_chat"))
            wire[data.get("reasoning_field") or "reasoning_content"] = msg.reasoning
        return wire

    def build_request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` (without the timeout)."""
        return self._request(messages, tools, config)[0]

    def _request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> tuple[dict[str, Any], openai_body.Conversation | None]:
        """``build_request``, and its conversation in chunks (``openai_body``; ``None`` for
        the paper styles, whose messages are encoded whole)."""
        if config.request_style == "paper":
            return self._paper_request(messages, tools, config), None
        if config.request_style == "coffee_paper":
            return coffee_paper_wire.chat_request(self.model, messages, tools, config), None
        folded = self._wire(messages)
        wire = list(folded.items)
        conversation = openai_body.Conversation("messages", wire, folded)
        kwargs: dict[str, Any] = {"model": self.model, "messages": wire}
        if tools:
            strict = self.compat.strict_tools
            kwargs["tools"] = self._tools_param(
                tools, strict, lambda spec: spec.openai_schema(strict=strict)
            )
            kwargs.update(self._tool_options(config))
        if config.temperature is not None:
            kwargs["temperature"] = config.temperature
        if config.max_tokens is not None:
            kwargs[self.compat.max_tokens_field] = config.max_tokens
        if config.reasoning_effort:
            kwargs["reasoning_effort"] = config.reasoning_effort
        extra = self._extra_body(config)
        if extra:
            kwargs["extra_body"] = extra
        return kwargs, conversation

    def _paper_request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]:
        """What the paper's ``RawChat`` sends (``paper_wire``), on the profile's branch."""
        kwargs, ignored = paper_wire.openai_request(
            self.model,
            self.compat.paper_branch,
            messages,
            tools,
            config,
            default_tool_choice=self.compat.tool_choice,
        )
        if ignored is not None and not self._warned_effort:
            self._warned_effort = True
            log.warning(
                "%s: reasoning_effort=%s is not sent: the paper sends %s here (its %s branch, %s)",
                self.name,
                ignored,
                repr(kwargs.get("reasoning_effort", "none of it")),
                self.compat.paper_branch,
                "with tools" if tools else "without tools",
            )
        extra = self._extra_body(config)
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    # ------------------------------------------------------------------ call
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """One Chat Completions call, normalised."""
        kwargs, conversation = self._request(messages, tools, config)
        if config.request_style == "coffee_paper":
            data = await self._reference_reply(
                "/chat/completions",
                openai.types.chat.ChatCompletion,
                kwargs,
                config.timeout_s,
                coffee_paper_wire.chat_body,
            )
            output = await self._parsed(self.parse_response, data)
            # OpenRouterModel's text: the content as sent (no think-tag split, no refusal)
            text = coffee_paper_wire.chat_text(data, coffee_paper_wire.call_options(config).call)
            if text is not None:
                output.text = text
            return output
        client = self._client_for_loop()
        data = await self._reply(client.chat.completions, kwargs, config.timeout_s, conversation)
        if config.request_style == "paper":
            return await self._parsed(self.parse_paper_response, data)
        return await self._parsed(self.parse_response, data)

    def parse_paper_response(self, data: dict[str, Any]) -> ModelOutput:
        """``parse_response``, keeping the calls' raw arguments strings for the paper style to
        replay verbatim (``provider_data["openai_chat"]["arguments"]``)."""
        return self.parse_response(data, keep_arguments=True)

    def parse_response(self, data: dict[str, Any], *, keep_arguments: bool = False) -> ModelOutput:
        """A Chat Completions response body to a ``ModelOutput``; a body without a choice
        and its message is an error (in its ``error`` field, else an unreadable reply)."""
        choices = json_list(data.get("choices"), self.name, "choices")
        if not choices and data.get("error"):
            raise self._payload_error(data["error"])
        if not choices:
            raise unreadable(self.name, "the reply has no choices")
        choice = json_object(choices[0], self.name, "choices[0]")
        if choice.get("error") and not choice.get("message"):
            raise self._payload_error(choice["error"])
        message = json_object(choice.get("message"), self.name, "choices[0].message")
        text = _content_text(message.get("content"))
        if not text and isinstance(message.get("refusal"), str):
            text = message["refusal"]
        reasoning_field = None
        reasoning = None
        for field in ("reasoning_content", "reasoning"):
            value = message.get(field)
            if isinstance(value, str) and value.strip():
                reasoning_field, reasoning = field, value
                break
        if self.compatible and reasoning is None:
            match = _THINK.match(text)
            if match:
                reasoning = match.group(1).strip() or None
                text = text[match.end() :]
        seed = str(data.get("id") or data.get("created") or "")
        calls: list[ToolCall] = []
        texts: list[Any] = []
        raw_calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else []
        for i, raw in enumerate(raw_calls):
            raw = _dict(raw)
            fn = _dict(raw.get("function"))
            name = str(fn.get("name") or raw.get("name") or "")
            texts.append(fn.get("arguments", raw.get("arguments")))
            arguments = parse_arguments(texts[-1])
            call_id = raw.get("id") or _synthetic_call_id(seed, i, name, arguments)
            calls.append(ToolCall(name, arguments, str(call_id)))
        legacy = _dict(message.get("function_call"))
        if not calls and legacy.get("name"):
            arguments = parse_arguments(legacy.get("arguments"))
            name = str(legacy["name"])
            calls.append(ToolCall(name, arguments, _synthetic_call_id(seed, 0, name, arguments)))
        provider_data: dict[str, Any] = {}
        for key in ("id", "model"):
            if data.get(key):
                provider_data["response_" + key] = str(data[key])
        if reasoning_field:
            provider_data["reasoning_field"] = reasoning_field
        # (a legacy function_call has no texts: its arguments are rebuilt when replayed)
        sent_as_text = len(texts) == len(calls) and all(isinstance(t, str) for t in texts)
        if keep_arguments and calls and sent_as_text:
            provider_data[paper_wire.RAW_ARGUMENTS] = texts
        return checked_output(
            ModelOutput(
                model=self.model,
                text=text,
                tool_calls=calls,
                reasoning=reasoning,
                usage=chat_usage(data.get("usage")),
                cost_usd=None,
                stop_reason=choice.get("finish_reason") or None,
                provider_data={"openai_chat": provider_data} if provider_data else None,
            ),
            self.name,
        )


def chat_usage(raw: Any) -> Usage:
    """Chat Completions usage (and the variants compatible servers send) normalised."""
    usage = _dict(raw)
    prompt_details = _dict(usage.get("prompt_tokens_details"))
    completion_details = _dict(usage.get("completion_tokens_details"))
    input_tokens = _int(usage.get("prompt_tokens"))
    cached = (
        _int(prompt_details.get("cached_tokens"))
        or _int(usage.get("prompt_cache_hit_tokens"))
        or _int(usage.get("cached_tokens"))
    )
    if input_tokens > 0:
        cached = min(cached, input_tokens)
    reasoning = _int(completion_details.get("reasoning_tokens")) or _int(
        usage.get("reasoning_tokens")
    )
    return Usage(
        input_tokens=input_tokens,
        cached_input_tokens=cached,
        cache_write_tokens=_int(prompt_details.get("cache_write_tokens")),
        output_tokens=_int(usage.get("completion_tokens")),
        reasoning_tokens=reasoning,
    )


# --------------------------------------------------------------------------- responses
class _ResponsesInput:
    """``build_input`` as a fold over the messages (``prefix_fold``): the instructions and
    input items of the messages added so far."""

    def __init__(self, provider: OpenAIResponsesProvider) -> None:
        self.provider = provider
        self.instructions: list[str] = []
        self.wire = openai_body.WireItems(("openai_responses_json",))
        self.seen_other = False
        self.pending_ids: deque[str] = deque()

    def instructions_text(self) -> str | None:
        return "\n\n".join(self.instructions) if self.instructions else None

    def add(self, index: int, msg: ChatMessage) -> None:
        """Convert the next message; its items go with it where they do not depend on its
        place (so their encoding is kept with the message: ``openai_body``)."""
        wire = self.wire
        if msg.role == "system":
            if not self.seen_other:
                self.instructions.append(msg.content)
            else:
                wire.extend([{"type": "message", "role": "developer", "content": msg.content}], msg)
            return
        self.seen_other = True
        if msg.role == "user":
            wire.extend([{"type": "message", "role": "user", "content": msg.content}], msg)
        elif msg.role == "assistant":
            settled = msg.memo(_RESPONSES_KEY, self.provider._settled_items)
            if settled is not None:
                wire.extend(settled, msg)
            else:
                wire.extend(self.provider._assistant_items(msg, index, self.pending_ids), None)
        elif msg.role == "tool":
            call_id = msg.tool_call_id or (self.pending_ids.popleft() if self.pending_ids else None)
            if call_id is None:
                label = f" {msg.name}" if msg.name else ""
                text = f"[Result of tool{label}]\n{msg.content}"
                wire.extend([{"type": "message", "role": "user", "content": text}], None)
            else:
                item = {"type": "function_call_output", "call_id": call_id, "output": msg.content}
                wire.extend([item], msg if msg.tool_call_id else None)


class OpenAIResponsesProvider(_OpenAIProvider):
    """The Responses API for ``openai/...`` models, stateless (``store=False``)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        name: str | None = None,
        context_window: int = 200_000,
        client: Any = None,
        reasoning_summary: str | None = "auto",
        reasoning_model: bool | None = None,
        compat: Compat | str | None = None,
    ) -> None:
        """``reasoning_model`` overrides the guess from the model name (o-series, gpt-5...),
        which decides whether reasoning summaries and encrypted reasoning are requested."""
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            name=name,
            context_window=context_window,
            client=client,
            compatible=False,
            compat=compat,
        )
        self.reasoning_summary = reasoning_summary
        self._input_folds: PrefixFolds[_ResponsesInput] = PrefixFolds(self._new_input)
        self.reasoning_model = (
            bool(_REASONING_MODEL.match(model.rsplit("/", 1)[-1]))
            if reasoning_model is None
            else reasoning_model
        )

    # ------------------------------------------------------------------ request
    def build_input(self, messages: list[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
        """Neutral messages to (instructions, input items).

        An assistant turn whose calls all have ids converts the same wherever it stands: its
        items are made once and kept with the message (``ChatMessage.memo``); and the
        messages a request repeats from an earlier one are not converted again
        (``prefix_fold``).
        """
        state = self._input_folds.fold(messages)
        return state.instructions_text(), list(state.wire.items)

    def _new_input(self) -> _ResponsesInput:
        return _ResponsesInput(self)

    def _settled_items(self, msg: ChatMessage) -> list[dict[str, Any]] | None:
        """The input items of an assistant turn that do not depend on its place (every call
        has an id), else ``None``."""
        if not all(call.call_id for call in msg.tool_calls):
            return None
        return self._assistant_items(msg, 0, deque())

    def _assistant_items(
        self, msg: ChatMessage, index: int, pending_ids: deque[str]
    ) -> list[dict[str, Any]]:
        """Replay an assistant turn: stored reasoning and item ids in order, current content."""
        calls: list[tuple[str, ToolCall]] = []
        for i, call in enumerate(msg.tool_calls):
            call_id = call.call_id
            if not call_id:
                call_id = _synthetic_call_id(f"history-{index}", i, call.name, call.arguments)
                pending_ids.append(call_id)
            calls.append((call_id, call))
        by_id = dict(calls)
        stored = _dict(_dict(msg.provider_data).get("openai_responses")).get("output")
        stored = stored if isinstance(stored, list) else []
        items: list[dict[str, Any]] = []
        reasoning: list[dict[str, Any]] = []
        text_sent = False
        sent: set[str] = set()

        def emit(item: dict[str, Any]) -> None:
            items.extend(reasoning)  # a reasoning item must be followed by its next item
            reasoning.clear()
            items.append(item)

        for raw in stored:
            item = _dict(raw)
            kind = item.get("type")
            if kind == "reasoning" and item.get("id") and item.get("encrypted_content"):
                reasoning.append(
                    {
                        "type": "reasoning",
                        "id": item["id"],
                        "summary": item.get("summary") or [],
                        "encrypted_content": item["encrypted_content"],
                    }
                )
            elif kind == "message" and msg.content and not text_sent:
                emit(self._message_item(msg.content, item))
                text_sent = True
            elif kind == "function_call" and item.get("call_id") in by_id:
                call_id = str(item["call_id"])
                if call_id not in sent:
                    emit(self._call_item(call_id, by_id[call_id], item.get("id")))
                    sent.add(call_id)
        if msg.content and not text_sent:  # the text goes before the turn's function calls
            first_call = next(
                (i for i, it in enumerate(items) if it["type"] == "function_call"), len(items)
            )
            items.insert(first_call, self._message_item(msg.content, {}))
        for call_id, call in calls:
            if call_id not in sent:
                items.append(self._call_item(call_id, call, None))
                sent.add(call_id)
        return items

    @staticmethod
    def _message_item(text: str, stored: dict[str, Any]) -> dict[str, Any]:
        if not stored.get("id"):
            return {"type": "message", "role": "assistant", "content": text}
        item: dict[str, Any] = {
            "type": "message",
            "id": stored["id"],
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        if stored.get("phase"):
            item["phase"] = stored["phase"]
        return item

    @staticmethod
    def _call_item(call_id: str, call: ToolCall, item_id: Any) -> dict[str, Any]:
        item: dict[str, Any] = {
            "type": "function_call",
            "call_id": call_id,
            "name": call.name,
            "arguments": _arguments_text(call.arguments, sanitize=False),
        }
        if item_id:
            item["id"] = str(item_id)
        return item

    @staticmethod
    def tool_param(spec: ToolSpec, *, strict: bool = False) -> dict[str, Any]:
        """A tool in the Responses function-tool format: in strict mode when ``strict`` (the
        model's ``strict_tools``) and the tool has a strict form (``agents.strict_schema``),
        else as declared, with ``strict`` false."""
        schema = spec.strict_parameters if strict else None
        return {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": schema if schema is not None else spec.parameters,
            "strict": schema is not None,
        }

    def build_request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]:
        """The keyword arguments of ``responses.create`` (without the timeout)."""
        return self._request(messages, tools, config)[0]

    def _request(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> tuple[dict[str, Any], openai_body.Conversation | None]:
        """``build_request``, and its input in chunks (``openai_body``; ``None`` for the
        reference's requests)."""
        if config.request_style == "paper":
            raise FatalModelError(
                f"{self.name}: request_style 'paper' sends Chat Completions requests, as the "
                "paper did; configure this model with api = 'chat'"
            )
        if config.request_style == "coffee_paper":
            request = coffee_paper_wire.responses_request(self.model, messages, tools, config)
            return request, None
        state = self._input_folds.fold(messages)
        instructions, items = state.instructions_text(), list(state.wire.items)
        conversation = openai_body.Conversation("input", items, state.wire)
        kwargs: dict[str, Any] = {"model": self.model, "input": items, "store": False}
        if instructions is not None:
            kwargs["instructions"] = instructions
        if tools:
            strict = self.compat.strict_tools
            kwargs["tools"] = self._tools_param(
                tools, strict, lambda spec: self.tool_param(spec, strict=strict)
            )
            kwargs.update(self._tool_options(config))
        if config.temperature is not None:
            kwargs["temperature"] = config.temperature
        if config.max_tokens is not None:
            kwargs["max_output_tokens"] = config.max_tokens
        reasoning: dict[str, Any] = {}
        if config.reasoning_effort:
            reasoning["effort"] = config.reasoning_effort
        reasons = bool(config.reasoning_effort) or self.reasoning_model
        if reasons and self.reasoning_summary:
            reasoning["summary"] = self.reasoning_summary
        if reasoning:
            kwargs["reasoning"] = reasoning
        if reasons:
            kwargs["include"] = ["reasoning.encrypted_content"]
        extra = self._extra_body(config)
        if extra:
            kwargs["extra_body"] = extra
        return kwargs, conversation

    # ------------------------------------------------------------------ call
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """One Responses call, normalised."""
        kwargs, conversation = self._request(messages, tools, config)
        client = self._client_for_loop()
        if config.request_style == "coffee_paper":
            data = await self._reference_reply(
                "/responses", openai.types.responses.Response, kwargs, config.timeout_s
            )
            output = await self._parsed(self.parse_response, data)
            output.text = coffee_paper_wire.responses_text(data)
            output.provider_data = coffee_paper_wire.with_raw(coffee_paper_wire.responses_raw(data))
            return output
        try:
            data = await self._reply(client.responses, kwargs, config.timeout_s, conversation)
        except FatalModelError as exc:
            summary = _dict(kwargs.get("reasoning")).get("summary")
            if not summary or not _SUMMARY_REFUSED.search(str(exc)) or "HTTP 400" not in str(exc):
                raise
            self.reasoning_summary = None  # e.g. an organisation not verified for summaries
            kwargs["reasoning"] = {k: v for k, v in kwargs["reasoning"].items() if k != "summary"}
            if not kwargs["reasoning"]:
                del kwargs["reasoning"]
            data = await self._reply(client.responses, kwargs, config.timeout_s, conversation)
        return await self._parsed(self.parse_response, data)

    def parse_response(self, data: dict[str, Any]) -> ModelOutput:
        """A Responses body to a ``ModelOutput``, keeping what a later turn must replay."""
        status = data.get("status")
        if status == "failed" or (data.get("error") and not data.get("output")):
            raise self._payload_error(data.get("error") or {"message": "response failed"})
        output = data.get("output")
        if not isinstance(output, list):
            raise unreadable(self.name, "the reply has no output list")
        texts: list[str] = []
        refusals: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        kept: list[dict[str, Any]] = []
        seed = str(data.get("id") or "")
        for raw in output:
            item = _dict(raw)
            kind = item.get("type")
            if kind == "message":
                for part in _list(item.get("content")):
                    part = _dict(part)
                    if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                        texts.append(part["text"])
                    elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                        refusals.append(part["refusal"])
                kept.append(
                    {k: item[k] for k in ("type", "id", "phase") if item.get(k) is not None}
                )
            elif kind == "function_call":
                name = str(item.get("name") or "")
                arguments = parse_arguments(item.get("arguments"))
                call_id = item.get("call_id") or item.get("id")
                call_id = str(call_id or _synthetic_call_id(seed, len(calls), name, arguments))
                calls.append(ToolCall(name, arguments, call_id))
                kept.append({"type": kind, "id": item.get("id"), "call_id": call_id, "name": name})
            elif kind == "reasoning":
                summary = [_dict(s) for s in _list(item.get("summary"))]
                parts = [s["text"] for s in summary if isinstance(s.get("text"), str)]
                if not parts:
                    content = [_dict(c) for c in _list(item.get("content"))]
                    parts = [c["text"] for c in content if isinstance(c.get("text"), str)]
                thoughts.extend(p for p in parts if p.strip())
                kept.append(
                    {
                        k: item[k]
                        for k in ("type", "id", "summary", "encrypted_content")
                        if item.get(k) is not None
                    }
                )
        text = "".join(texts) or "".join(refusals)
        if status == "incomplete":
            reason = _dict(data.get("incomplete_details")).get("reason")
            stop = {"max_output_tokens": "length"}.get(reason, reason) or "incomplete"
        elif calls:
            stop = "tool_calls"
        elif status in (None, "completed"):
            stop = "stop"
        else:
            stop = str(status)
        provider_data: dict[str, Any] = {"output": kept}
        for key in ("id", "model"):
            if data.get(key):
                provider_data["response_" + key] = str(data[key])
        return checked_output(
            ModelOutput(
                model=self.model,
                text=text,
                tool_calls=calls,
                reasoning="\n\n".join(thoughts) or None,
                usage=responses_usage(data.get("usage")),
                cost_usd=None,
                stop_reason=stop,
                provider_data={"openai_responses": provider_data},
            ),
            self.name,
        )


def responses_usage(raw: Any) -> Usage:
    """Responses API usage normalised."""
    usage = _dict(raw)
    input_details = _dict(usage.get("input_tokens_details"))
    output_details = _dict(usage.get("output_tokens_details"))
    input_tokens = _int(usage.get("input_tokens"))
    cached = _int(input_details.get("cached_tokens"))
    return Usage(
        input_tokens=input_tokens,
        cached_input_tokens=min(cached, input_tokens) if input_tokens > 0 else cached,
        cache_write_tokens=_int(input_details.get("cache_write_tokens")),
        output_tokens=_int(usage.get("output_tokens")),
        reasoning_tokens=_int(output_details.get("reasoning_tokens")),
    )


# --------------------------------------------------------------------------- factory
def create_openai_provider(
    name: str,
    *,
    api: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    context_window: int = 200_000,
    **options: Any,
) -> OpenAIChatProvider | OpenAIResponsesProvider:
    """The provider for ``openai/MODEL`` (Responses by default, or ``api="chat"``) or
    ``openai-compatible/NAME`` (always Chat Completions; NAME is the served model id)."""
    prefix, _, model = name.partition("/")
    if not model:
        raise ValueError(f"model name {name!r} must look like 'openai/MODEL'")
    if prefix == "openai-compatible":
        if api not in (None, "chat"):
            raise ValueError(f"{name}: OpenAI-compatible servers are reached through chat")
        return OpenAIChatProvider(
            model,
            api_key=api_key,
            base_url=base_url,
            name=name,
            context_window=context_window,
            **options,
        )
    if prefix != "openai":
        raise ValueError(f"{name!r} is not an OpenAI model name")
    api = api or DEFAULT_OPENAI_API
    if api not in OPENAI_APIS:
        raise ValueError(f"{name}: api must be one of {', '.join(OPENAI_APIS)}, not {api!r}")
    cls = OpenAIResponsesProvider if api == "responses" else OpenAIChatProvider
    return cls(
        model,
        api_key=api_key,
        base_url=base_url,
        name=name,
        context_window=context_window,
        **options,
    )
