"""A model whose window cannot hold the usual kept tail (small local models) still gets a
summary and an answer: each further overflow compacts keeping less, and the summariser's
transcript is bounded."""

from __future__ import annotations

import asyncio

import pytest
from tests.agents.test_compaction import assert_pairs_intact, conversation

from econbench.agents.compaction import (
    SUMMARY_SYSTEM,
    fallback_plans,
    is_summary_request,
    plan_compaction,
    summary_request,
)
from econbench.agents.models.base import ChatMessage, ContextOverflowError, FatalModelError
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.react import LLMAgent
from econbench.agents.tools import ToolCall


def test_fallback_plans_keep_less_and_never_split_a_call_from_its_result() -> None:
    msgs = conversation(8)  # 25 messages: the usual 5 + 20 leaves nothing to summarise
    assert plan_compaction(msgs, keep_first=5, keep_last=20) is None
    plans = fallback_plans(msgs, keep_first=5, keep_last=20)
    assert plans, "a smaller plan exists"
    kept = [p.head_end + len(msgs) - p.tail_start for p in plans]
    assert kept == sorted(kept, reverse=True), "each fallback keeps less"
    assert plans[-1].head_end == 1, "the last keeps only the system prompt at the head"
    for plan in plans:
        from econbench.agents.compaction import apply_compaction

        assert_pairs_intact(apply_compaction(msgs, plan, "s"))


def test_the_summariser_transcript_is_bounded() -> None:
    msgs = [ChatMessage("system", "s")] + [ChatMessage("user", "x" * 1000) for _ in range(30)]
    plan = plan_compaction(msgs, keep_first=1, keep_last=1)
    bounded = summary_request(msgs, plan, max_chars=2000)[1].content
    assert len(bounded) < 2200
    assert "characters left out" in bounded
    assert len(summary_request(msgs, plan)[1].content) > 28_000


def small_window_model(limit_chars: int) -> ScriptedModel:
    def brain(messages, tools):
        size = sum(len(m.content) for m in messages)
        if size > limit_chars:
            raise ContextOverflowError(f"prompt of {size} chars is too long")
        if messages[0].content == SUMMARY_SYSTEM:
            return "summary of earlier work"
        return ToolCall("view", {})

    # The window as the agent believes it: large enough that only the provider's overflow
    # error (not the agent's own estimate) triggers the compactions.
    return ScriptedModel("small-window", brain=brain, context_window=1_500)


def long_conversation_agent(model: ScriptedModel) -> LLMAgent:
    agent = LLMAgent(model, system_prompt="sys", render_observation=str)
    agent.start("a", "r", [])
    events: list[tuple[str, dict]] = []
    agent.bind_events(lambda kind, data: events.append((kind, data)))
    agent.events = events  # type: ignore[attr-defined]
    for i in range(30):  # long observations: the last 20 messages alone overflow the window
        agent.messages.append(ChatMessage("user", f"observation {i}: " + "y" * 400))
        agent.messages.append(ChatMessage("assistant", "ok"))
    agent.messages.append(ChatMessage("user", "now decide"))
    return agent


def test_an_agent_with_a_tiny_window_recovers_by_keeping_less() -> None:
    agent = long_conversation_agent(small_window_model(limit_chars=3000))
    output = asyncio.run(agent.advance())
    assert output.tool_calls and output.tool_calls[0].name == "view"
    compactions = [data for kind, data in agent.events if kind == "compaction"]
    assert len(compactions) >= 2, "the usual plan was not enough; a smaller one followed"
    afters = [c["messages_after"] for c in compactions]
    assert afters == sorted(afters, reverse=True)
    assert all(c["forced"] for c in compactions)
    # A forced compaction never resends the conversation: every summary came from the
    # bounded transcript.
    summarisers = [r for r in agent.provider.requests if is_summary_request(r.messages)]
    assert len(summarisers) >= len(compactions)  # the overflowing ones too
    assert all(r.messages[0].content == SUMMARY_SYSTEM and not r.tools for r in summarisers)


def test_a_window_too_small_for_anything_still_fails_cleanly() -> None:
    agent = long_conversation_agent(small_window_model(limit_chars=10))
    with pytest.raises(FatalModelError, match="overflows"):
        asyncio.run(agent.advance())
