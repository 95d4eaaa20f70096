"""Why a reply ended, in one small vocabulary shared by every provider.

Each API names its stop reasons in its own words (OpenAI ``"length"``, Anthropic and Gemini
``"max_tokens"``; Gemini says ``"STOP"`` even when the reply is a function call). The raw
word stays in ``ModelOutput.stop_reason``, which recordings and run logs store unchanged;
``ModelOutput.stop`` is the normalised one that code should branch on. It is computed from
the raw word each time it is read, so recorded, cached and replayed replies get it too,
and nothing new is ever written to a file.
"""

from __future__ import annotations

from typing import Literal

StopReason = Literal["end", "length", "tool_calls", "content_filter", "other"]
"""``end``: the model finished its turn; ``length``: cut at the output-token limit (or the
context window); ``tool_calls``: the turn asks the harness to run tools; ``content_filter``:
the provider withheld or stopped the output (safety, refusal, recitation); ``other``: any
reason outside these (a provider's new word, a local model's repetition stop)."""

STOP_REASONS: tuple[StopReason, ...] = ("end", "length", "tool_calls", "content_filter", "other")

RAW_STOP_REASONS: dict[str, dict[str, StopReason]] = {
    # Chat Completions ``finish_reason`` (OpenAI and the compatible servers), and the words
    # the Responses provider derives from ``status`` / ``incomplete_details.reason``.
    "openai": {
        "stop": "end",
        "length": "length",
        "tool_calls": "tool_calls",
        "function_call": "tool_calls",
        "content_filter": "content_filter",
        "max_output_tokens": "length",
    },
    # Messages API ``stop_reason``.
    "anthropic": {
        "end_turn": "end",
        "stop_sequence": "end",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "tool_use": "tool_calls",
        "refusal": "content_filter",
    },
    # ``finishReason`` and ``promptFeedback.blockReason``, lower-cased by the provider.
    "gemini": {
        "stop": "end",
        "max_tokens": "length",
        "malformed_function_call": "tool_calls",  # handed to the toolkit as a raw call
        "safety": "content_filter",
        "recitation": "content_filter",
        "blocklist": "content_filter",
        "prohibited_content": "content_filter",
        "spii": "content_filter",
        "image_safety": "content_filter",
        "image_prohibited_content": "content_filter",
        "image_recitation": "content_filter",
        "blocked": "content_filter",
    },
    # Local transformers models and the scripted models (Anthropic's words).
    "local": {
        "end_turn": "end",
        "max_tokens": "length",
        "tool_use": "tool_calls",
    },
}


def _merged() -> dict[str, StopReason]:
    """One lookup table; a raw word two providers share must mean the same to both."""
    merged: dict[str, StopReason] = {}
    for provider, table in RAW_STOP_REASONS.items():
        for raw, stop in table.items():
            if merged.setdefault(raw, stop) != stop:
                raise ValueError(f"stop reason {raw!r} of {provider} is ambiguous")
    return merged


_BY_RAW = _merged()


def normalised_stop(raw: str | None, has_tool_calls: bool) -> StopReason:
    """The normalised reason for a raw one.

    A turn that carries tool calls and ended normally (or for a reason outside the table)
    is ``tool_calls``: Gemini and some compatible servers say "stop" for those. A missing
    reason is read as a finished turn.
    """
    stop = _BY_RAW.get(raw.strip().lower(), "other") if raw else "end"
    if has_tool_calls and stop in ("end", "other"):
        return "tool_calls"
    return stop
