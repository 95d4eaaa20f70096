"""econbench's model types ↔ Inspect's, so econbench's own agent can talk to an Inspect model.

The agent (``econbench.agents.react``) builds the conversation and the tool list exactly as it
does for ``coffee run`` / ``allo run``; these functions only change their shape. Two things
are worth knowing:

- Tool schemas go through Inspect's ``ToolParams`` (its JSON Schema model), as every Inspect
  provider needs. It keeps every keyword econbench's schemas use except ``"default": null``
  (Inspect serialises schemas without null values); the texts, types, enums and required
  lists are unchanged.
- Each assistant reply keeps Inspect's own message in ``provider_data["inspect"]`` (plain
  JSON, so it is recorded and checkpointed with the conversation). Sending the conversation
  back re-uses that message, so provider-specific parts (reasoning blocks and their
  signatures, OpenAI Responses items) reach the provider exactly as it returned them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage as InspectMessage,
)
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
)
from inspect_ai.model import (
    GenerateConfig as InspectConfig,
)
from inspect_ai.model import (
    ModelOutput as InspectOutput,
)
from inspect_ai.tool import ToolCall as InspectCall
from inspect_ai.tool import ToolChoice as InspectToolChoice
from inspect_ai.tool import ToolInfo, ToolParams

from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    GenerateConfig,
    ModelOutput,
    Usage,
)
from econbench.agents.tools import ToolCall, ToolSpec

PROVIDER_DATA_KEY = "inspect"
"""The key of ``provider_data`` that holds Inspect's own assistant message."""
_MEMO_KEY = "inspect_message"
"""``ChatMessage.memo`` key of a message's Inspect form (kept, so each message has one id)."""
_STOP_WORDS = {"model_length": "max_tokens"}
"""Inspect's stop words econbench's vocabulary (``agents.models.stop``) reads otherwise: a
reply cut at the context window ended for length."""
_TOOL_CHOICE: dict[str, InspectToolChoice] = {"auto": "auto", "required": "any", "none": "none"}


def inspect_messages(messages: Sequence[ChatMessage]) -> list[InspectMessage]:
    """The conversation as Inspect messages, each converted once and then re-used (the same
    message keeps the same Inspect id across calls, so the log stores it once)."""
    return [m.memo(_MEMO_KEY, _inspect_message) for m in messages]


def _inspect_message(message: ChatMessage) -> InspectMessage:
    if message.role == "system":
        return ChatMessageSystem(content=message.content)
    if message.role == "user":
        return ChatMessageUser(content=message.content)
    if message.role == "tool":
        return ChatMessageTool(
            content=message.content, tool_call_id=message.tool_call_id, function=message.name
        )
    kept = (message.provider_data or {}).get(PROVIDER_DATA_KEY)
    if isinstance(kept, dict) and _same_calls(kept, message.tool_calls):
        return ChatMessageAssistant.model_validate(kept)
    content: list[Any] | str = message.content
    if message.reasoning:
        content = [ContentReasoning(reasoning=message.reasoning)]
        if message.content:
            content.append(ContentText(text=message.content))
    return ChatMessageAssistant(
        content=content,
        tool_calls=[_inspect_call(c) for c in message.tool_calls] or None,
    )


def _same_calls(kept: dict[str, Any], calls: Sequence[ToolCall]) -> bool:
    """Whether the kept Inspect message carries exactly these calls (the agent names calls
    that came without an id; a reply the harness cut no longer matches its original)."""
    saved = kept.get("tool_calls") or []
    return [(c.get("id"), c.get("function")) for c in saved] == [(c.call_id, c.name) for c in calls]


def _inspect_call(call: ToolCall) -> InspectCall:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    error = None if isinstance(call.arguments, dict) else str(call.arguments)
    return InspectCall(
        id=call.call_id or "", function=call.name, arguments=arguments, parse_error=error
    )


def inspect_tools(tools: Sequence[ToolSpec]) -> list[ToolInfo]:
    """The tools with econbench's names, descriptions and JSON schemas."""
    return [
        ToolInfo(
            name=t.name,
            description=t.description,
            parameters=ToolParams.model_validate(t.parameters),
        )
        for t in tools
    ]


def inspect_config(config: GenerateConfig) -> InspectConfig:
    """The settings econbench sets for this call (a condition's token limit, temperature…);
    what it leaves unset stays with Inspect (``--temperature``, ``--max-tokens``, the model
    role's config)."""
    fields: dict[str, Any] = {
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "reasoning_effort": config.reasoning_effort,
        "reasoning_tokens": config.thinking_budget,
        "extra_body": dict(config.extra) or None,
    }
    return InspectConfig(**{k: v for k, v in fields.items() if v is not None})


def inspect_tool_choice(config: GenerateConfig, tools: Sequence[ToolSpec]) -> InspectToolChoice:
    """econbench's tool choice in Inspect's words (``required`` is Inspect's ``any``)."""
    if not tools or config.tool_choice is None:
        return "auto"
    return _TOOL_CHOICE[config.tool_choice]


def econbench_output(output: InspectOutput) -> ModelOutput:
    """Inspect's reply as econbench's; a prompt Inspect reports as too long for the model's
    window (``model_length`` with nothing generated) is a ``ContextOverflowError``, which makes
    the agent compact its conversation and ask again."""
    message = output.message
    calls = [_econbench_call(c) for c in message.tool_calls or []]
    text = message.text
    if output.stop_reason == "model_length" and not text and not calls:
        raise ContextOverflowError(output.error or f"{output.model}: the prompt is too long")
    reasoning = [
        part.reasoning
        for part in (message.content if isinstance(message.content, list) else [])
        if isinstance(part, ContentReasoning) and not part.redacted
    ]
    return ModelOutput(
        model=output.model,
        text=text,
        tool_calls=calls,
        reasoning="\n\n".join(reasoning) or None,
        usage=econbench_usage(output),
        cost_usd=output.usage.total_cost if output.usage is not None else None,
        stop_reason=_STOP_WORDS.get(output.stop_reason, output.stop_reason),
        provider_data={PROVIDER_DATA_KEY: message.model_dump(mode="json", exclude_none=True)},
    )


def _econbench_call(call: InspectCall) -> ToolCall:
    """A call as econbench's toolkit takes it: arguments Inspect could not parse go on as the
    parse error's text, which the toolkit answers with an error result the model reads."""
    arguments: dict[str, Any] | str = call.arguments
    if call.parse_error:
        arguments = call.parse_error
    return ToolCall(call.function, arguments, call.id or None)  # type: ignore[arg-type]


def econbench_usage(output: InspectOutput) -> Usage:
    """Inspect counts uncached input apart from cache reads and writes; econbench's
    ``input_tokens`` counts every prompt token."""
    usage = output.usage
    if usage is None:
        return Usage()
    read = usage.input_tokens_cache_read or 0
    written = usage.input_tokens_cache_write or 0
    return Usage(
        input_tokens=usage.input_tokens + read + written,
        cached_input_tokens=read,
        cache_write_tokens=written,
        output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens or 0,
    )
