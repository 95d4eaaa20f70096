"""The request bodies of the AlloBench paper's model client, built from econbench's messages.

``request_style = "paper"`` in a model's settings makes the Anthropic and OpenAI(-compatible)
providers send exactly what the paper's ``scripts/session/raw_chat.py`` sends through the same
SDKs: ``RawChat.chat`` when no tools are offered, ``RawChat.chat_tools`` when some are. The
conversation is first put in the form the paper's scripts keep it in (OpenAI chat messages:
``{"role", "content"}``; an assistant turn with calls adds ``tool_calls`` of ``{"id", "type":
"function", "function": {"name", "arguments"}}``, the arguments string exactly as the model
returned it; one ``{"role": "tool", "tool_call_id", "content"}`` per result, its content the
caller's text unchanged), then converted as ``RawChat`` converts it.

Anthropic (``messages.create``):

- ``system`` a plain string; ``max_tokens`` the configured value (the paper's default 1200
  when none); no ``temperature``, thinking or effort (the paper sends none: a configured
  ``reasoning_effort`` is ignored, as the paper ignores it for Claude).
- Without tools, every message is ``{"role", "content": <str>}``. With tools, as
  ``_oai_msgs_to_anthropic`` does: a user text stays a plain string; an assistant turn is a
  list of a text block (only when it has text) and then one ``tool_use`` block per call
  (``input`` the parsed arguments, ``{}`` when they are not JSON), or ``""`` when it has
  neither; the results of one reply become ONE user message of ``tool_result`` blocks
  (``content`` always present, a string); the user text that follows is a SEPARATE user
  message; nothing else is merged.
- The last message only is turned into blocks (a string becomes one text block) and its last
  block gets ``cache_control: {"type": "ephemeral"}``.
- With tools: ``tools`` as ``[{"name", "description", "input_schema"}]`` and always a
  ``tool_choice``: ``{"type": "any"}`` for "required", ``{"type": "none"}`` for "none",
  else ``{"type": "auto"}`` (the paper's default "auto").

OpenAI and OpenAI-compatible (``chat.completions.create``): the system message first, then
the messages above; ``max_completion_tokens`` always (the configured value, else 1200);
``temperature`` only when set; with tools, ``tools`` as given and always a ``tool_choice``
(the configured one, else the compat profile's, "auto" by default). Which of the paper's
branches applies is the compat profile's ``paper_branch`` (``econbench.agents.models.compat``:
``openai`` for ``openai/`` models and ``compat = "openai"``, ``ollama`` for ``compat =
"ollama"``, ``vllm`` for every other OpenAI-compatible profile):

- without tools: ``ollama`` sends ``reasoning_effort: "none"``; otherwise a reasoning model
  (the paper's ``_is_reasoning``: a name starting gpt-5, o1, o3, gemini-2.5 or gemini-3)
  gets ``max_completion_tokens`` of at least 4000 and ``reasoning_effort`` = the configured
  one, else "low";
- with tools: only the ``openai`` branch and a reasoning model get the 4000 floor and the
  effort; ``ollama`` and ``vllm`` send no effort.

Anything else the paper does not send is not sent (no ``parallel_tool_calls``, no
``max_tokens``); a configured ``reasoning_effort`` the paper's rules do not send is ignored
with a warning. The paper reads ``OPENAI_REASONING_EFFORT`` from the environment where no
effort is given; econbench does not (set ``reasoning_effort``).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from econbench.agents.models.base import ChatMessage, GenerateConfig
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.agents.untrusted import bounded_arguments

log = logging.getLogger(__name__)

PaperBranch = Literal["openai", "ollama", "vllm"]
PAPER_DEFAULT_MAX_TOKENS = 1200
"""``RawChat.chat``'s and ``chat_tools``' ``max_tokens`` when the caller gives none."""
REASONING_MIN_TOKENS = 4000
"""The floor the paper raises a reasoning model's token limit to."""
DEFAULT_REASONING_EFFORT = "low"
_REASONING_PREFIXES = ("gpt-5", "o1", "o3", "gemini-2.5", "gemini-3")
_CACHE = {"type": "ephemeral"}
RAW_ARGUMENTS = "arguments"
"""Key, in a Chat Completions turn's ``provider_data["openai_chat"]``, of the raw arguments
strings of its calls (kept only under the paper style, which replays them verbatim)."""


def is_reasoning_model(model: str) -> bool:
    """The paper's ``_is_reasoning``: the model names whose hidden reasoning needs headroom."""
    return model.lower().startswith(_REASONING_PREFIXES)


# --------------------------------------------------------------------------- conversation
def paper_messages(messages: list[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system text, the conversation as the paper's scripts keep it: OpenAI chat messages).

    Leading system messages are the system text (joined by a blank line); a later one (none
    in the paper) is sent as a user message.
    """
    index = 0
    system: list[str] = []
    while index < len(messages) and messages[index].role == "system":
        system.append(messages[index].content)
        index += 1
    out: list[dict[str, Any]] = []
    open_ids: list[str] = []
    for position, msg in enumerate(messages[index:], start=index):
        if msg.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": msg.content or ""}
            if msg.tool_calls:
                ids = [_call_id(c, position, j) for j, c in enumerate(msg.tool_calls)]
                raw = _raw_arguments(msg)
                entry["tool_calls"] = [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": text},
                    }
                    for call_id, call, text in zip(ids, msg.tool_calls, raw, strict=True)
                ]
                open_ids = list(ids)
            else:
                open_ids = []
            out.append(entry)
        elif msg.role == "tool":
            call_id = msg.tool_call_id
            if call_id is None and open_ids:
                call_id = open_ids[0]
            if call_id in open_ids:
                open_ids.remove(call_id)
            out.append({"role": "tool", "tool_call_id": call_id, "content": msg.content})
        else:  # user, or a system message after the first turn
            out.append({"role": "user", "content": msg.content})
    return ("\n\n".join(system) if system else None), out


def _call_id(call: ToolCall, position: int, index: int) -> str:
    return call.call_id or f"call_eb_{position}_{index}"


def _raw_arguments(msg: ChatMessage) -> list[str]:
    """Each call's arguments as the model wrote them: the raw strings a Chat Completions reply
    kept (when they still say what the calls say), else the arguments as the paper writes an
    Anthropic reply's (``json.dumps`` with its default separators), text as it is."""
    data = (msg.provider_data or {}).get("openai_chat")
    raw = data.get(RAW_ARGUMENTS) if isinstance(data, dict) else None
    if (
        isinstance(raw, list)
        and len(raw) == len(msg.tool_calls)
        and all(
            isinstance(text, str) and _same_arguments(text, call.arguments)
            for text, call in zip(raw, msg.tool_calls, strict=True)
        )
    ):
        return list(raw)
    return [_arguments_text(call.arguments) for call in msg.tool_calls]


def _same_arguments(text: str, arguments: Any) -> bool:
    if isinstance(arguments, str):
        return text == arguments
    return bool(text.strip()) and bounded_arguments(text) == arguments


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments if arguments is not None else {})
    except (TypeError, ValueError, RecursionError):
        return "{}"


# --------------------------------------------------------------------------- anthropic
def anthropic_request(
    model: str, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` that ``RawChat`` passes."""
    system, conversation = paper_messages(messages)
    structured = any(m["role"] == "tool" or "tool_calls" in m for m in conversation)
    if tools or structured:
        turns = anthropic_messages(conversation)
    else:  # RawChat.chat: the messages as they are
        turns = [dict(m) for m in conversation]
    _mark_last(turns)
    max_tokens = config.max_tokens if config.max_tokens is not None else PAPER_DEFAULT_MAX_TOKENS
    request: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    if system is not None:
        request["system"] = system
    request["messages"] = turns
    if tools:
        request["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in tools
        ]
        request["tool_choice"] = anthropic_tool_choice(config.tool_choice)
    return request


def anthropic_tool_choice(choice: str | None) -> dict[str, str]:
    """``_oai_tool_choice_to_anthropic``, with Anthropic's ``none`` for "none"."""
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    return {"type": "auto"}


def anthropic_messages(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``_oai_msgs_to_anthropic``: consecutive tool results become one user message of
    ``tool_result`` blocks; user texts stay strings; nothing else is merged."""
    out: list[dict[str, Any]] = []
    i, n = 0, len(conversation)
    while i < n:
        m = conversation[i]
        if m["role"] == "tool":
            blocks = []
            while i < n and conversation[i]["role"] == "tool":
                t = conversation[i]
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": t["tool_call_id"],
                        "content": str(t["content"]),
                    }
                )
                i += 1
            out.append({"role": "user", "content": blocks})
            continue
        if m["role"] == "assistant":
            content: list[dict[str, Any]] = []
            if m.get("content"):
                content.append({"type": "text", "text": m["content"]})
            for tc in m.get("tool_calls") or []:
                content.append(
                    {
                        "type": "tool_use",
                        "id": tc["id"],
                        "name": tc["function"]["name"],
                        "input": _input(tc["function"]["arguments"]),
                    }
                )
            out.append({"role": "assistant", "content": content or ""})
        else:
            out.append({"role": "user", "content": m["content"]})
        i += 1
    return out


def _input(arguments: str) -> Any:
    """A call's ``input`` as the paper recovers it from the arguments string."""
    if not arguments:
        return {}
    try:
        return json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return {}


def _mark_last(turns: list[dict[str, Any]]) -> None:
    """The paper's one cache breakpoint: the last block of the last message."""
    if not turns:
        return
    last = turns[-1]
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    if blocks:
        blocks[-1] = {**blocks[-1], "cache_control": dict(_CACHE)}
    last["content"] = blocks


# --------------------------------------------------------------------------- openai
def openai_request(
    model: str,
    branch: PaperBranch,
    messages: list[ChatMessage],
    tools: list[ToolSpec],
    config: GenerateConfig,
    *,
    default_tool_choice: str | None = "auto",
) -> tuple[dict[str, Any], str | None]:
    """The keyword arguments of ``chat.completions.create`` that ``RawChat`` passes, and the
    configured ``reasoning_effort`` when the paper's rules leave it out (for a warning).

    The SDK writes the body's keys in its own order (model, messages, max_completion_tokens,
    reasoning_effort, temperature, tool_choice, tools), whatever order they are passed in.
    """
    system, conversation = paper_messages(messages)
    wire = ([{"role": "system", "content": system}] if system is not None else []) + conversation
    max_tokens = config.max_tokens if config.max_tokens is not None else PAPER_DEFAULT_MAX_TOKENS
    reasoning = is_reasoning_model(model)
    kwargs: dict[str, Any] = {"model": model, "messages": wire}
    effort: str | None = None
    if tools:
        kwargs["tools"] = [spec.openai_schema() for spec in tools]
        kwargs["tool_choice"] = config.tool_choice or default_tool_choice or "auto"
        if branch == "openai" and reasoning:
            max_tokens = max(max_tokens, REASONING_MIN_TOKENS)
            effort = config.reasoning_effort or DEFAULT_REASONING_EFFORT
    else:
        if reasoning:
            max_tokens = max(max_tokens, REASONING_MIN_TOKENS)
        if branch == "ollama":
            effort = "none"
        elif reasoning:
            effort = config.reasoning_effort or DEFAULT_REASONING_EFFORT
    if config.temperature is not None:
        kwargs["temperature"] = config.temperature
    if effort is not None:
        kwargs["reasoning_effort"] = effort
    kwargs["max_completion_tokens"] = max_tokens
    ignored = config.reasoning_effort if effort != config.reasoning_effort else None
    return kwargs, ignored
