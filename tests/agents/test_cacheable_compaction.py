"""A compaction ahead of the threshold asks for its summary at the end of the conversation, so
a provider's prefix cache serves it (issue 27, item 3).

Through each provider's real SDK and fake server: the summariser request is the previous
request's prefix (system, tools, messages) plus one instruction, and the fake's prefix cache
serves at least 90 % of it. With a scripted model: a reply with text and a tool call gives the
text as the summary and executes nothing, a reply without text falls back to the transcript
request, and a forced compaction (after an overflow) still uses the bounded transcript.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from tests.agents.test_compaction import assert_pairs_intact, conversation
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.common import BrainReply, BrainRequest, FakeServer
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.providers import FAKES

from econbench.agents.compaction import (
    SUMMARY_HEADER,
    SUMMARY_REQUEST_TAG,
    SUMMARY_RULES,
    SUMMARY_SYSTEM,
    CompactionPlan,
    cacheable_summary_request,
    is_summary_request,
    plan_compaction,
    summary_instruction,
    summary_request,
)
from econbench.agents.models.anthropic_provider import AnthropicProvider
from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    Usage,
)
from econbench.agents.models.gemini_provider import GeminiProvider
from econbench.agents.models.openai_provider import OpenAIChatProvider, OpenAIResponsesProvider
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.policy import Observation, ToolResult
from econbench.agents.react import CompactionSettings, LLMAgent
from econbench.agents.tools import ToolCall, Toolkit, ToolSpec, tool

SYSTEM = "You run roaster_A, a coffee roaster in a 90-day economy. " * 30
SUMMARY = "Bought 5 kg on each of days 0-9 (deals d0-d9); cash 1000."


class Shop(Toolkit):
    @tool("write")
    def buy(self, qty: int) -> dict:
        """Buy green coffee.

        Args:
            qty: Kilograms to buy.
        """
        return {"status": "success", "bought": qty}

    @tool()
    def check_cash(self) -> dict:
        """Show the firm's cash."""
        return {"cash": 1000.0}


TOOLS: list[ToolSpec] = Shop().specs()


# ---------------------------------------------------------------- the request itself
def test_the_summary_rules_are_the_transcript_form_s_rules() -> None:
    assert SUMMARY_SYSTEM == (
        "You compress the history of an agent's work into a factual record. Write plain prose "
        "and short lists. Keep every fact the agent may need later: numbers, ids (listings, "
        "offers, deals, invoices, messages), prices, quantities, dates, commitments made or "
        "received, open obligations, what worked and what failed. No advice, no speculation."
    )
    assert SUMMARY_SYSTEM.endswith(SUMMARY_RULES)


def test_the_instruction_names_the_part_it_replaces() -> None:
    msgs = conversation(12)  # 37 messages
    plan = plan_compaction(msgs, keep_first=5, keep_last=20)
    request = cacheable_summary_request(msgs, plan)
    assert request[:-1] == msgs, "the conversation as it stands, unchanged"
    text = request[-1].content
    assert request[-1].role == "user" and text.startswith(SUMMARY_REQUEST_TAG)
    kept_first, kept_last = plan.head_end - 1, len(msgs) - plan.tail_start
    assert f"the first {kept_first} messages after it" in text
    assert f"the last {kept_last} messages before this request" in text
    assert f"the {plan.summarised} messages between them" in text
    first, last = msgs[plan.head_end], msgs[plan.tail_start - 1]
    assert (first.content, last.content) == ("obs 2", "obs 5")
    assert 'starts with the user message that begins "obs 2"' in text
    assert 'ends with the user message that begins "obs 5"' in text
    assert SUMMARY_RULES in text and "without calling any tool" in text
    assert is_summary_request(request) and is_summary_request(summary_request(msgs, plan))
    assert not is_summary_request(msgs)


def test_calls_and_results_are_named_by_what_they_say() -> None:
    msgs = conversation(3)
    text = summary_instruction(msgs, CompactionPlan(head_end=2, tail_start=4))
    assert 'starts with your reply that calls view({"i": 0})' in text
    assert 'ends with the result of view that begins "result 0"' in text
    assert "the first 1 message after it" in text and "the 2 messages between them" in text


def test_long_messages_are_named_by_a_short_beginning() -> None:
    msgs = [ChatMessage("system", "s")] + [
        ChatMessage("user", f"observation {i}\n" + "y" * 500) for i in range(10)
    ]
    text = summary_instruction(msgs, plan_compaction(msgs, keep_first=1, keep_last=2))
    assert 'begins "observation 1 yyy' in text and "…" in text and "y" * 100 not in text


# ---------------------------------------------------------------- through the real SDKs
def _openai_chat(server: FakeServer, window: int) -> ModelProvider:
    return OpenAIChatProvider(
        "fake-model", api_key=FAKES["openai"].key, base_url=server.base_url, context_window=window
    )


def _openai_responses(server: FakeServer, window: int) -> ModelProvider:
    return OpenAIResponsesProvider(
        "fake-model", api_key=FAKES["openai"].key, base_url=server.base_url, context_window=window
    )


def _anthropic(server: FakeServer, window: int) -> ModelProvider:
    return AnthropicProvider(
        FAKES["anthropic"].model,
        api_key=FAKES["anthropic"].key,
        base_url=server.root_url,
        context_window=window,
    )


def _gemini(server: FakeServer, window: int) -> ModelProvider:
    return GeminiProvider(
        FAKES["google"].model,
        api_key=FAKES["google"].key,
        base_url=server.root_url,
        context_window=window,
    )


def _strip_cache_marks(value: Any) -> Any:
    """A body without Anthropic's ``cache_control`` breakpoints (they move to the newest
    block each request; the cache reads the content, not the marks)."""
    if isinstance(value, dict):
        return {k: _strip_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_marks(v) for v in value]
    return value


# backend: (server class, provider factory, the body's conversation list, the other fields
# that make the prefix: system prompt, tools and the settings sent with them)
BACKENDS: dict[str, tuple[type[FakeServer], Callable[..., ModelProvider], str, tuple[str, ...]]] = {
    "openai-chat": (FakeOpenAIServer, _openai_chat, "messages", ("model", "tools", "tool_choice")),
    "openai-responses": (
        FakeOpenAIServer,
        _openai_responses,
        "input",
        ("model", "instructions", "tools", "tool_choice"),
    ),
    "anthropic": (FakeAnthropicServer, _anthropic, "messages", ("model", "system", "tools")),
    "google": (
        FakeGeminiServer,
        _gemini,
        "contents",
        ("systemInstruction", "tools", "toolConfig", "generationConfig"),
    ),
}


def shop_brain(request: BrainRequest) -> BrainReply:
    """Buy 5 kg every turn; asked for a summary, write one."""
    if is_summary_request(request.messages):
        return BrainReply(text=SUMMARY)
    return BrainReply(tool_calls=[{"name": "buy", "arguments": {"qty": 5}}])


def run_until_compacted(agent: LLMAgent, steps: int = 80) -> list[dict[str, Any]]:
    """Buy-and-observe turns until the agent has compacted and asked once more."""
    events: list[dict[str, Any]] = []
    agent.bind_events(lambda kind, data: events.append(data) if kind == "compaction" else None)

    def observation(day: int) -> Observation:
        return Observation(
            {"day": day, "market": f"day {day}: green coffee at 6.{day:02d}/kg. " * 40}
        )

    async def play() -> None:
        inputs: list[Any] = [observation(0)]
        try:
            for day in range(1, steps):
                reply = await agent.arespond(inputs)
                if events:
                    return
                call = reply.tool_calls[0]
                result = {"status": "success", "bought": 5, "deal_id": f"d{day}"}
                inputs = [ToolResult(call.name, result, call.call_id), observation(day)]
        finally:
            await agent.provider.aclose()  # type: ignore[attr-defined]

    asyncio.run(play())
    return events


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_an_unforced_compaction_is_the_previous_request_plus_one_instruction(
    backend: str,
) -> None:
    server_class, make, conversation_key, prefix_fields = BACKENDS[backend]
    with server_class(shop_brain) as server:
        provider = make(server, 30_000)
        agent = LLMAgent(
            provider,
            system_prompt=SYSTEM,
            render_observation=json.dumps,
            compaction=CompactionSettings(threshold=0.8),
        )
        agent.start("roaster_A", "roaster", TOOLS)
        events = run_until_compacted(agent)
        assert len(events) == 1, "one compaction"
        bodies = [r["body"] for r in server.requests if r["method"] == "POST"]
    summariser = [
        i for i, body in enumerate(bodies) if SUMMARY_REQUEST_TAG in json.dumps(body)[-4000:]
    ]
    assert len(summariser) == 1, "the summary was asked once, in the cacheable form"
    at = summariser[0]
    previous, request, after = (_strip_cache_marks(b) for b in bodies[at - 1 : at + 2])
    # The previous request's prefix, exactly: its system prompt, tools and settings, and its
    # whole conversation at the start of this one.
    for name in prefix_fields:
        assert request.get(name) == previous.get(name), name
    assert request["tools"], "the tools are offered, as in every turn"
    turns = previous[conversation_key]
    assert request[conversation_key][: len(turns)] == turns
    assert len(request[conversation_key]) > len(turns)
    assert SUMMARY_REQUEST_TAG not in json.dumps(after), "the instruction is not kept"
    # The fake's prefix cache serves at least 90 % of it.
    event = events[0]
    usage = event["usage"]
    share = usage["cached_input_tokens"] / usage["input_tokens"]
    assert share >= 0.9, f"{backend}: {share:.1%} of the summariser's prompt cached"
    assert event["forced"] is False and event["summary"] == SUMMARY
    # The summary replaced the middle; the next request carries it, calls with their results.
    assert any(m.content.startswith("[Summary of earlier history") for m in agent.messages)
    assert SUMMARY in json.dumps(after)
    assert_pairs_intact(agent.messages)
    print(f"{backend}: {share:.1%} of the summariser's prompt cached")


# ---------------------------------------------------------------- what the reply may hold
def scripted_agent(brain: Callable[..., Any], **kwargs: Any) -> tuple[LLMAgent, list[dict]]:
    model = ScriptedModel("m", brain=brain, context_window=kwargs.pop("window", 10_000))
    agent = LLMAgent(model, system_prompt="sys", render_observation=str, **kwargs)
    agent.start("a", "r", TOOLS)
    events: list[dict] = []
    agent.bind_events(lambda kind, data: events.append(data) if kind == "compaction" else None)
    for i in range(15):
        agent.messages.append(ChatMessage("user", f"observation {i}"))
        call = ToolCall("buy", {"qty": i}, f"c{i}")
        agent.messages.append(ChatMessage("assistant", "", [call]))
        agent.messages.append(ChatMessage("tool", f"bought {i}", tool_call_id=f"c{i}", name="buy"))
    agent.messages.append(ChatMessage("user", "now decide"))
    # Past the threshold (80 % of the window): compact before the next call.
    agent._last_input_tokens = int(0.85 * model.context_window)
    return agent, events


def summaries(model: ScriptedModel) -> list[str]:
    """The form of each summariser request the model received, in order."""
    return [
        "transcript" if r.messages[0].content == SUMMARY_SYSTEM else "cacheable"
        for r in model.requests
        if is_summary_request(r.messages)
    ]


def test_a_summary_reply_s_tool_calls_are_ignored_and_its_text_kept() -> None:
    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        if is_summary_request(messages):
            assert tools == TOOLS
            return ModelOutput(
                model="m",
                text="the summary",
                tool_calls=[ToolCall("buy", {"qty": 999}, "sneaky")],
                usage=Usage(input_tokens=100, cached_input_tokens=95, output_tokens=5),
                cost_usd=0.01,
            )
        return ToolCall("check_cash", {})

    agent, events = scripted_agent(brain)
    reply = asyncio.run(agent.arespond([]))
    assert [c.name for c in reply.tool_calls] == ["check_cash"], "the turn's own call"
    assert summaries(agent.provider) == ["cacheable"]  # type: ignore[arg-type]
    assert events[0]["summary"] == "the summary" and events[0]["forced"] is False
    assert events[0]["usage"]["cached_input_tokens"] == 95 and events[0]["cost_usd"] == 0.01
    everything = json.dumps([m.to_dict() for m in agent.messages])
    assert "sneaky" not in everything and "999" not in everything, "the call never executed"
    note = SUMMARY_HEADER.format(n=events[0]["summarised_messages"]) + "the summary"
    assert [m.content for m in agent.messages].count(note) == 1
    assert_pairs_intact(agent.messages)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_a_summary_reply_without_text_falls_back_to_the_transcript(text: str) -> None:
    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        if messages[0].content == SUMMARY_SYSTEM:
            assert tools == []
            return ModelOutput(
                model="m", text="from the transcript", usage=Usage(input_tokens=50), cost_usd=0.02
            )
        if is_summary_request(messages):
            return ModelOutput(
                model="m",
                text=text,
                tool_calls=[ToolCall("buy", {"qty": 999})],
                usage=Usage(input_tokens=100, cached_input_tokens=95),
                cost_usd=0.01,
            )
        return ToolCall("check_cash", {})

    agent, events = scripted_agent(brain)
    asyncio.run(agent.arespond([]))
    assert summaries(agent.provider) == ["cacheable", "transcript"]  # type: ignore[arg-type]
    assert [e["summary"] for e in events] == ["from the transcript"]
    # The event accounts for both calls.
    assert events[0]["usage"]["input_tokens"] == 150
    assert events[0]["cost_usd"] == pytest.approx(0.03)
    assert agent.stats.llm_calls == 3 and agent.stats.compactions == 1
    assert "999" not in json.dumps([m.to_dict() for m in agent.messages])


def test_an_overflowing_cacheable_request_falls_back_to_the_transcript() -> None:
    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        if messages[0].content == SUMMARY_SYSTEM:
            return "from the transcript"
        if is_summary_request(messages):
            raise ContextOverflowError("prompt is too long")
        return ToolCall("check_cash", {})

    agent, events = scripted_agent(brain)
    asyncio.run(agent.arespond([]))
    assert summaries(agent.provider) == ["cacheable", "transcript"]  # type: ignore[arg-type]
    assert events[0]["summary"] == "from the transcript" and events[0]["forced"] is False


def test_required_tool_choice_goes_straight_to_the_transcript() -> None:
    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        return "from the transcript" if is_summary_request(messages) else ToolCall("buy", {})

    agent, events = scripted_agent(brain, tool_choice="required")
    asyncio.run(agent.arespond([]))
    assert summaries(agent.provider) == ["transcript"]  # type: ignore[arg-type]
    assert events[0]["summary"] == "from the transcript"


def test_a_cacheable_request_that_cannot_fit_is_not_sent() -> None:
    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        return "from the transcript" if is_summary_request(messages) else ToolCall("buy", {})

    agent, _ = scripted_agent(brain)
    agent._last_input_tokens = agent.provider.context_window  # no room for the instruction
    asyncio.run(agent.arespond([]))
    assert summaries(agent.provider) == ["transcript"]  # type: ignore[arg-type]


def test_the_cacheable_request_keeps_the_turn_s_settings() -> None:
    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        return "summary" if is_summary_request(messages) else ToolCall("buy", {})

    config = GenerateConfig(temperature=0.3, max_tokens=700, reasoning_effort="low")
    agent, _ = scripted_agent(brain, config=config, tool_choice="auto")
    before = copy.deepcopy(agent.messages)
    asyncio.run(agent.arespond([]))
    model: ScriptedModel = agent.provider  # type: ignore[assignment]
    summariser, turn = model.requests
    assert summariser.messages[:-1] == before and summariser.tools == TOOLS
    assert summariser.config == turn.config == agent.config


# ---------------------------------------------------------------- forced: the transcript
def test_a_forced_compaction_uses_the_bounded_transcript() -> None:
    overflowed = [False]

    def brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
        if is_summary_request(messages):
            return "from the transcript"
        if not overflowed[0]:
            overflowed[0] = True
            raise ContextOverflowError("prompt is too long")
        return ToolCall("buy", {})

    agent, events = scripted_agent(brain)
    agent._last_input_tokens = 0  # below the threshold: only the overflow compacts
    asyncio.run(agent.arespond([]))
    model: ScriptedModel = agent.provider  # type: ignore[assignment]
    assert summaries(model) == ["transcript"]
    summariser = next(r for r in model.requests if is_summary_request(r.messages))
    assert summariser.tools == [] and len(summariser.messages) == 2
    assert summariser.config.max_tokens == 4096
    assert [e["forced"] for e in events] == [True]
    assert model.requests[-1].tools == TOOLS  # the retried turn
