"""Context compaction: replace the middle of a long conversation by a factual summary.

Kept: the system prompt, the first ``keep_first`` messages and the last ``keep_last``
messages; a tool call is never separated from its results (the cut points move so that a
kept assistant message keeps every tool result that answers it, and a kept tool result keeps
the call it answers). The same model writes the summary.

The summary is asked for in one of two forms:

- **At the end of the conversation** (``cacheable_summary_request``): the agent's next
  request as it is (same system prompt, messages, tools and settings) followed by one user
  message, ``summary_instruction``, that names the part to be replaced and carries the
  summary's rules. Its prefix is the conversation's previous request, so a provider's
  automatic prefix cache serves almost all of it. The agent uses it for a compaction ahead
  of the threshold.
- **As a transcript** (``summary_request``): a system prompt of its own and the part to be
  replaced as plain text, bounded for small windows. Nothing of it is cached, but it fits
  where the conversation no longer does: the agent uses it after a context overflow, and
  whenever the first form gives no text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from econbench.agents.models.base import ChatMessage

SUMMARY_RULES = (
    "Write plain prose and short lists. Keep every fact the agent may need later: numbers, "
    "ids (listings, offers, deals, invoices, messages), prices, quantities, dates, "
    "commitments made or received, open obligations, what worked and what failed. No "
    "advice, no speculation."
)
"""What a summary keeps and how it reads, in both request forms."""
SUMMARY_SYSTEM = (
    "You compress the history of an agent's work into a factual record. " + SUMMARY_RULES
)
"""The transcript form's system prompt."""
TRANSCRIPT_PROMPT = "Summarise this part of the agent's history factually:\n\n"
"""How the transcript form's user message begins (the transcript follows)."""
SUMMARY_REQUEST_TAG = "[Compaction request]"
"""How the cacheable form's final user message begins."""
SUMMARY_HEADER = "[Summary of earlier history — it replaces {n} older messages]\n"
_SNIPPET = 80


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
                lines.append(f"ASSISTANT CALLS {call.name}({_arguments(call.arguments)})")
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
    return [ChatMessage("system", SUMMARY_SYSTEM), ChatMessage("user", TRANSCRIPT_PROMPT + text)]


def summary_instruction(messages: list[ChatMessage], plan: CompactionPlan) -> str:
    """The final user message of the cacheable form: which messages the summary replaces
    (by count, and by how the first and the last of them begin), the summary's rules, and
    "text only, no tool call"."""
    kept_first = plan.head_end - 1  # messages[0] is the system prompt
    kept_last = len(messages) - plan.tail_start
    head = (
        f"the system prompt and the first {_count(kept_first)} after it"
        if kept_first
        else "the system prompt"
    )
    tail = f"the last {_count(kept_last)} before this request" if kept_last else "this request"
    first, last = messages[plan.head_end], messages[plan.tail_start - 1]
    return (
        f"{SUMMARY_REQUEST_TAG} This is not a turn of the task: call no tool and do not "
        "continue the work. The conversation above is about to be shortened: "
        f"{head} and {tail} stay as they are; the {_count(plan.summarised)} between them "
        "will be replaced by the summary you write now (each user message, each of your "
        "replies and each tool result counts as one message). That part starts with "
        f"{_describe(first)} and ends with {_describe(last)}.\n\n"
        "Summarise that part, and only that part (an earlier summary in it included), as a "
        f"factual record of the work. {SUMMARY_RULES}\n\n"
        "Answer with the summary as plain text only, without calling any tool."
    )


def cacheable_summary_request(
    messages: list[ChatMessage], plan: CompactionPlan
) -> list[ChatMessage]:
    """The cacheable form: the conversation as it stands, then ``summary_instruction``.
    Sent with the conversation's own tools and settings, it shares its whole prefix with
    the previous request."""
    return [*messages, ChatMessage("user", summary_instruction(messages, plan))]


def is_summary_request(messages: list[ChatMessage] | list[dict]) -> bool:
    """Whether a request (its messages: ``ChatMessage`` objects or dicts with ``content``)
    asks for a compaction summary, in either form: its last message carries the cacheable
    form's instruction (a provider may fold it into the turn before, so anywhere in that
    message) or is the transcript form's prompt."""
    if not messages:
        return False
    last = messages[-1]
    text = last.get("content") if isinstance(last, dict) else last.content
    text = text if isinstance(text, str) else ""
    return SUMMARY_REQUEST_TAG in text or text.startswith(TRANSCRIPT_PROMPT)


def _count(n: int) -> str:
    return f"{n} message" if n == 1 else f"{n} messages"


def _describe(msg: ChatMessage) -> str:
    """A message as the model can find it: who wrote it and how it begins."""
    if msg.role == "tool":
        return f'the result of {msg.name or "a tool call"} that begins "{_snippet(msg.content)}"'
    if msg.role == "assistant":
        if msg.content.strip():
            return f'your reply that begins "{_snippet(msg.content)}"'
        calls = ", ".join(
            f"{c.name}({_snippet(_arguments(c.arguments))})" for c in msg.tool_calls[:3]
        )
        return f"your reply that calls {calls}" if calls else "an empty reply of yours"
    if msg.role == "user":
        return f'the user message that begins "{_snippet(msg.content)}"'
    return f'the message that begins "{_snippet(msg.content)}"'


def _arguments(arguments: object) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[:_SNIPPET].rstrip() + "…"


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
