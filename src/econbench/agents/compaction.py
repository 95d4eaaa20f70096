"""Context compaction: replace the middle of a long conversation by a factual summary.

Kept: the system prompt, the first ``keep_first`` messages and the last ``keep_last``
messages; a tool call is never separated from its results (the cut points move so that a
kept assistant message keeps every tool result that answers it, and a kept tool result keeps
the call it answers). The same model writes the summary.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from econbench.agents.models.base import ChatMessage

SUMMARY_SYSTEM = (
    "You compress the history of an agent's work into a factual record. Write plain prose "
    "and short lists. Keep every fact the agent may need later: numbers, ids (listings, "
    "offers, deals, invoices, messages), prices, quantities, dates, commitments made or "
    "received, open obligations, what worked and what failed. No advice, no speculation."
)
SUMMARY_HEADER = "[Summary of earlier history — it replaces {n} older messages]\n"


@dataclass(frozen=True)
class CompactionPlan:
    """Where to cut: messages[:head_end] and messages[tail_start:] are kept."""

    head_end: int
    tail_start: int

    @property
    def summarised(self) -> int:
        return self.tail_start - self.head_end


def plan_compaction(
    messages: list[ChatMessage], keep_first: int = 5, keep_last: int = 20
) -> CompactionPlan | None:
    """Cut points that keep tool calls with their results, or None if nothing can go."""
    if not messages or messages[0].role != "system":
        raise ValueError("the conversation must start with its system message")
    head_end = min(len(messages), 1 + keep_first)
    # A kept assistant tool call keeps all of its results.
    while head_end < len(messages) and messages[head_end].role == "tool":
        head_end += 1
    tail_start = max(head_end, len(messages) - keep_last)
    # A kept tool result keeps the assistant message that made the call.
    while tail_start > head_end and messages[tail_start].role == "tool":
        tail_start -= 1
    if tail_start - head_end < 2:
        return None
    return CompactionPlan(head_end, tail_start)


def transcript(messages: list[ChatMessage]) -> str:
    """The messages to summarise, as plain text the summariser can read."""
    lines = []
    for msg in messages:
        if msg.role == "assistant":
            if msg.content:
                lines.append(f"ASSISTANT: {msg.content}")
            for call in msg.tool_calls:
                args = (
                    call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(call.arguments)
                )
                lines.append(f"ASSISTANT CALLS {call.name}({args})")
        elif msg.role == "tool":
            lines.append(f"TOOL RESULT ({msg.name or msg.tool_call_id}): {msg.content}")
        else:
            lines.append(f"{msg.role.upper()}: {msg.content}")
    return "\n".join(lines)


def fallback_plans(
    messages: list[ChatMessage], keep_first: int, keep_last: int
) -> list[CompactionPlan]:
    """Plans that keep less than asked, for a window so small that the usual plan finds
    nothing to summarise (small local models): the kept head and tail shrink step by step
    down to the system prompt and the latest message."""
    plans = []
    for first, last in ((2, 10), (1, 4), (0, 2), (0, 1)):
        if first < keep_first or last < keep_last:
            plan = plan_compaction(messages, min(first, keep_first), min(last, keep_last))
            if plan is not None:
                plans.append(plan)
    return plans


def summary_request(
    messages: list[ChatMessage], plan: CompactionPlan, max_chars: int | None = None
) -> list[ChatMessage]:
    """The summariser's prompt. ``max_chars`` bounds the transcript for small windows: its
    start and end are kept and the middle is marked as left out."""
    text = transcript(messages[plan.head_end : plan.tail_start])
    if max_chars is not None and len(text) > max_chars:
        half = max(max_chars // 2, 1)
        omitted = len(text) - 2 * half
        text = f"{text[:half]}\n[… {omitted} characters left out …]\n{text[-half:]}"
    return [
        ChatMessage("system", SUMMARY_SYSTEM),
        ChatMessage("user", "Summarise this part of the agent's history factually:\n\n" + text),
    ]


def apply_compaction(
    messages: list[ChatMessage], plan: CompactionPlan, summary: str
) -> list[ChatMessage]:
    """The compacted conversation: head, one summary message, tail."""
    note = SUMMARY_HEADER.format(n=plan.summarised) + summary.strip()
    return [
        *messages[: plan.head_end],
        ChatMessage("user", note),
        *messages[plan.tail_start :],
    ]
