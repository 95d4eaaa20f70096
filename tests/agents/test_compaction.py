"""Compaction planning keeps the system prompt, the first and last messages, and never
separates a tool call from its results."""

from __future__ import annotations

import pytest

from econbench.agents.compaction import apply_compaction, plan_compaction, transcript
from econbench.agents.models.base import ChatMessage
from econbench.agents.tools import ToolCall


def conversation(turns: int) -> list[ChatMessage]:
    """system, then per turn: user observation, assistant tool call, tool result."""
    msgs = [ChatMessage("system", "sys")]
    for i in range(turns):
        msgs.append(ChatMessage("user", f"obs {i}"))
        msgs.append(ChatMessage("assistant", "", [ToolCall("view", {"i": i}, f"c{i}")]))
        msgs.append(ChatMessage("tool", f"result {i}", tool_call_id=f"c{i}", name="view"))
    return msgs


def assert_pairs_intact(msgs: list[ChatMessage]) -> None:
    open_ids: set[str] = set()
    for msg in msgs:
        if msg.role == "tool":
            assert msg.tool_call_id in open_ids, f"orphan result {msg.tool_call_id}"
            open_ids.discard(msg.tool_call_id)
        else:
            assert not open_ids, f"unanswered calls {open_ids}"
        if msg.role == "assistant":
            open_ids = {c.call_id for c in msg.tool_calls}


@pytest.mark.parametrize("turns", [10, 11, 12, 30])
def test_plan_keeps_head_and_tail_and_pairs(turns: int) -> None:
    msgs = conversation(turns)
    plan = plan_compaction(msgs, keep_first=5, keep_last=20)
    assert plan is not None
    assert plan.head_end >= 6 and len(msgs) - plan.tail_start >= 20
    compacted = apply_compaction(msgs, plan, "the summary")
    assert compacted[0].content == "sys"
    assert compacted[1:6] == msgs[1:6]
    assert compacted[-20:] == msgs[-20:]
    assert "the summary" in compacted[plan.head_end].content
    assert len(compacted) == len(msgs) - plan.summarised + 1
    assert_pairs_intact(compacted)


def test_cut_points_move_off_tool_results() -> None:
    msgs = conversation(12)  # 37 messages
    plan = plan_compaction(msgs, keep_first=5, keep_last=20)
    # Head: 1 + 5 = 6 would end right after an assistant call; its result joins the head.
    assert msgs[plan.head_end - 1].role != "assistant" or not msgs[plan.head_end - 1].tool_calls
    assert msgs[plan.tail_start].role != "tool"


def test_several_results_of_one_call_stay_together() -> None:
    msgs = [ChatMessage("system", "s"), ChatMessage("user", "u")]
    for i in range(15):
        calls = [ToolCall("a", {}, f"x{i}"), ToolCall("b", {}, f"y{i}")]
        msgs.append(ChatMessage("assistant", "", calls))
        msgs.append(ChatMessage("tool", "ra", tool_call_id=f"x{i}"))
        msgs.append(ChatMessage("tool", "rb", tool_call_id=f"y{i}"))
    plan = plan_compaction(msgs, keep_first=5, keep_last=20)
    assert_pairs_intact(apply_compaction(msgs, plan, "s"))


def test_short_conversations_are_not_compacted() -> None:
    assert plan_compaction(conversation(8), keep_first=5, keep_last=20) is None


def test_transcript_shows_calls_and_results() -> None:
    text = transcript(conversation(1)[1:])
    assert "USER: obs 0" in text
    assert 'ASSISTANT CALLS view({"i": 0})' in text
    assert "TOOL RESULT (view): result 0" in text
