"""``ReferenceAgent`` sends, through the real SDKs, the bodies the CoffeeBench reference sends.

The expected bodies (``data/coffee_paper/{anthropic,openai}.json``) were recorded by running
the reference's own ``Agent``, ``ContextCompactor`` and model classes (its locked SDKs:
anthropic 0.75.0, openai 2.14.0) against these same fake servers and scripted brain
(``data/coffee_paper/record_reference.py``). The scenario covers a first turn, a turn after a
tool result, a turn after a reply without a call and a wake observation, a tool result then
a wake, and a compaction (the summary request and the compacted conversation's request).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from tests.agents.coffee_paper_scenario import DATA, SCENARIO, ScriptedBrain, tool_result
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.common import BrainReply, Fault
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models.anthropic_provider import AnthropicProvider
from econbench.agents.models.base import ContextOverflowError, FatalModelError
from econbench.agents.models.openai_provider import OpenAIResponsesProvider
from econbench.agents.models.registry import ModelSettings, build_provider
from econbench.agents.policy import Input, ToolResult, UserText
from econbench.agents.reference_agent import (
    BRIDGE_TEXT,
    ReferenceAgent,
    reference_model,
    stringify_tool_result,
)
from econbench.agents.tools import ToolSpec


def check_balance(account_id: int) -> dict[str, Any]:
    """Checks the balance of the given account ID."""
    return tool_result("check_balance")


def get_weather(location: str) -> dict[str, Any]:
    """Gets the weather for the given location."""
    return tool_result("get_weather")


def scenario_tools() -> list[ToolSpec]:
    specs = []
    for fn, data in zip((check_balance, get_weather), SCENARIO["tools"], strict=True):
        spec = ToolSpec.from_function(fn).with_schema(data["input_schema"])
        specs.append(dataclasses.replace(spec, description=data["description"]))
    return specs


def expected(kind: str) -> list[dict[str, Any]]:
    return json.loads((DATA / f"{kind}.json").read_text(encoding="utf-8"))["requests"]


def anthropic_agent(server: FakeAnthropicServer, **kwargs: Any) -> ReferenceAgent:
    provider = AnthropicProvider(
        "claude-sonnet-4-6", api_key="sk-ant-fake", base_url=server.root_url
    )
    return ReferenceAgent(
        provider,
        system_prompt=SCENARIO["system_prompt"],
        initial_observation=SCENARIO["initial_observation"],
        max_attempts=1,
        **kwargs,
    )


def openai_agent(server: FakeOpenAIServer, **kwargs: Any) -> ReferenceAgent:
    provider = OpenAIResponsesProvider("gpt-5.5", api_key="sk-fake", base_url=server.base_url)
    return ReferenceAgent(
        provider,
        system_prompt=SCENARIO["system_prompt"],
        initial_observation=SCENARIO["initial_observation"],
        max_attempts=1,
        **kwargs,
    )


async def play(agent: ReferenceAgent, steps: list[dict[str, Any]]) -> list[Any]:
    """The environment's side: the executed call's result, then any wake, per turn."""
    agent.start("roaster_A", "roaster", scenario_tools())
    replies = []
    call = None
    for step in steps:
        inputs: list[Input] = []
        if call is not None:
            inputs.append(ToolResult(call.name, tool_result(call.name)))
        if step["wake"] is not None:
            inputs.append(UserText(step["wake"]))
        reply = await agent.arespond(inputs)
        replies.append(reply)
        call = reply.first_call
    return replies


def anthropic_server(brain: Any = None) -> FakeAnthropicServer:
    server = FakeAnthropicServer(brain or ScriptedBrain())
    server.reject_sampling_params = False  # the reference's API version takes temperature
    return server


# ------------------------------------------------------------------ the recorded bodies
def test_anthropic_bodies_are_the_references() -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    with anthropic_server() as server:
        agent = anthropic_agent(server, on_event=lambda k, d: events.append((k, d)))
        asyncio.run(play(agent, SCENARIO["steps"]))
        sent = [r["body"] for r in server.requests]
        versions = [h.get("anthropic-version") for h in server.headers]
    want = expected("anthropic")
    assert len(sent) == len(want) == 17
    # first turn; after a tool result; after a reply without a call and a wake
    assert sent[0] == want[0]["body"]
    assert sent[1] == want[1]["body"]
    assert sent[2] == want[2]["body"]
    # the summary request (plain-string system, no tools) and the compacted conversation
    assert sent[15] == want[15]["body"]
    assert isinstance(sent[15]["system"], str) and "tools" not in sent[15]
    assert sent[16] == want[16]["body"]
    assert sent == [w["body"] for w in want]
    assert versions == [w["headers"]["anthropic-version"] for w in want] == ["2023-06-01"] * 17
    kinds = [k for k, _ in events]
    assert kinds.count("model_call") == 16 and kinds.count("compaction") == 1
    compaction = next(d for k, d in events if k == "compaction")
    assert (compaction["middle_start"], compaction["middle_end"]) == (5, 14)
    assert compaction["triggered_at_tokens"] == 160_000
    assert agent.stats.compactions == 1 and agent.stats.llm_calls == 17


def test_openai_responses_bodies_are_the_references() -> None:
    with FakeOpenAIServer(ScriptedBrain(), require_tool_choice=False) as server:
        agent = openai_agent(server)
        asyncio.run(play(agent, SCENARIO["steps"]))
        sent = [r["body"] for r in server.requests]
        paths = [r["path"] for r in server.requests]
    want = expected("openai")
    assert len(sent) == len(want) == 17
    assert paths == [w["path"] for w in want]
    for i in (0, 1, 2, 15, 16):
        assert sent[i] == want[i]["body"], i
    assert sent == [w["body"] for w in want]
    assert sent[0]["input"][0] == {"role": "developer", "content": SCENARIO["system_prompt"]}
    assert "tool_choice" not in sent[0] and sent[0]["parallel_tool_calls"] is False
    assert agent.compactions[0].middle_start == 6


def test_tool_message_is_json_dumps_with_default_str() -> None:
    assert stringify_tool_result({"a": 1, "b": "café"}) == '{"a": 1, "b": "caf\\u00e9"}'
    assert stringify_tool_result("as is") == "as is"
    assert stringify_tool_result({"d": {1, 2}.__class__}) == '{"d": "<class \'set\'>"}'


def test_plain_names_have_thinking_off() -> None:
    assert reference_model("claude-sonnet-4-6") == ("claude-sonnet-4-6", False)
    assert reference_model("gpt-5.5-thinking") == ("gpt-5.5", True)
    assert reference_model("gpt-5.5-no-thinking") == ("gpt-5.5", False)


# ------------------------------------------------------------------ compaction rules
def short_brain(summary: str = "S", trigger: int = 160_000) -> Any:
    """Every turn calls check_balance and reports ``trigger`` prompt tokens; a request
    without tools (the summary) gets ``summary``."""

    def brain(request: Any) -> BrainReply:
        if not request.tools and "TRANSCRIPT" in json.dumps(request.messages):
            return BrainReply(text=summary, input_tokens=10, cached_input_tokens=0)
        return BrainReply(
            tool_calls=[{"name": "check_balance", "arguments": {"account_id": 1}}],
            input_tokens=trigger,
            cached_input_tokens=0,
        )

    return brain


def test_threshold_is_160k_of_the_last_prompt() -> None:
    with anthropic_server(short_brain(trigger=159_999)) as server:
        agent = anthropic_agent(server)
        asyncio.run(play(agent, [{"wake": None}] * 30))
        assert agent.threshold_tokens == 160_000
        assert agent.stats.compactions == 0 and len(server.requests) == 30
    with anthropic_server(short_brain(trigger=160_000)) as server:
        agent = anthropic_agent(server)
        asyncio.run(play(agent, [{"wake": None}] * 30))
        assert agent.stats.compactions > 0


def test_no_valid_middle_leaves_the_conversation() -> None:
    with anthropic_server(short_brain()) as server:
        agent = anthropic_agent(server)
        asyncio.run(play(agent, [{"wake": None}] * 5))
        # every turn after the first was over the threshold, but no middle exists yet
        assert agent.stats.compactions == 0 and len(server.requests) == 5
        assert all(r["body"].get("tools") for r in server.requests)


def test_empty_summary_leaves_the_conversation() -> None:
    with anthropic_server(short_brain(summary="  ")) as server:
        agent = anthropic_agent(server)

        async def run() -> int:
            await play(agent, [{"wake": None}] * 16)
            before = len(agent.messages)
            await agent.arespond([ToolResult("check_balance", {"ok": 1})])
            return before

        before = asyncio.run(run())
        assert agent.stats.compactions == 0
        assert len(agent.messages) == before + 2  # the tool message and the reply only
        summaries = [r for r in server.requests if "tools" not in r["body"]]
        assert summaries  # it was asked, and its empty answer ignored


def test_overflow_compacts_and_retries_once() -> None:
    with anthropic_server(short_brain(trigger=1000)) as server:
        agent = anthropic_agent(server)

        async def run() -> None:
            await play(agent, [{"wake": None}] * 16)
            server.faults.append(Fault("context_overflow"))
            await agent.arespond([ToolResult("check_balance", {"ok": 1})])
            assert agent.stats.compactions == 1
            bodies = [r["body"] for r in server.requests[-3:]]
            assert "tools" in bodies[0] and "tools" not in bodies[1] and "tools" in bodies[2]
            assert bodies[2]["messages"][5]["content"] == [{"type": "text", "text": BRIDGE_TEXT}]
            # the query, the summary (its failure leaves the conversation) and the one retry
            # overflow: the reference's ContextOverflowError reaches the caller
            server.faults.extend([Fault("context_overflow")] * 3)
            with pytest.raises(ContextOverflowError):
                await agent.arespond([ToolResult("check_balance", {"ok": 1})])
            assert agent.stats.compactions == 1

        asyncio.run(run())


def test_a_refused_temperature_is_dropped_for_good() -> None:
    with anthropic_server(short_brain(trigger=1000)) as server:
        agent = anthropic_agent(server)
        server.faults.append(
            Fault("status", status=400, message="temperature is deprecated for this model")
        )
        asyncio.run(play(agent, [{"wake": None}] * 3))
        bodies = [r["body"] for r in server.requests]
        assert bodies[0]["temperature"] == 0.0
        assert all("temperature" not in b for b in bodies[1:]) and len(bodies) == 4
    with anthropic_server(short_brain(trigger=1000)) as server:
        agent = anthropic_agent(server)
        server.faults.append(Fault("status", status=400, message="max_tokens: too large"))
        with pytest.raises(FatalModelError):
            asyncio.run(play(agent, [{"wake": None}]))


def test_extra_calls_are_ignored_and_no_call_adds_only_the_reply() -> None:
    def brain(request: Any) -> BrainReply:
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if turn == 0:
            calls = [
                {"name": "check_balance", "arguments": {"account_id": 1}, "id": "toolu_a"},
                {"name": "get_weather", "arguments": {"location": "X"}, "id": "toolu_b"},
            ]
            return BrainReply(tool_calls=calls)
        return BrainReply(text="done")

    with anthropic_server(brain) as server:
        server.validate = lambda body: None  # the reference leaves the extra call unanswered
        agent = anthropic_agent(server)
        agent.start("roaster_A", "roaster", scenario_tools())

        async def run() -> Any:
            reply = await agent.arespond([])
            results = [ToolResult("check_balance", {"x": 1}), ToolResult("get_weather", {"y": 2})]
            await agent.arespond(results)
            return reply

        reply = asyncio.run(run())
        assert [c.call_id for c in reply.tool_calls] == ["toolu_a", "toolu_b"]
        roles = [m.role for m in agent.messages]
        assert roles == ["user", "assistant", "tool", "assistant"]
        assert agent.messages[2].tool_call_id == "toolu_a"


def test_state_round_trips() -> None:
    with anthropic_server() as server:
        agent = anthropic_agent(server)
        asyncio.run(play(agent, SCENARIO["steps"][:3]))
        state = json.loads(json.dumps(agent.state_dict()))
        other = anthropic_agent(server)
        other.start("roaster_A", "roaster", scenario_tools())
        other.load_state(state)
        assert other.state_dict() == state
        assert [m.to_dict() for m in other.messages] == [m.to_dict() for m in agent.messages]


def test_registry_builds_coffee_paper_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    settings = ModelSettings(request_style="coffee_paper")
    openai = build_provider("openai/gpt-5.5", settings)
    assert isinstance(openai.inner, OpenAIResponsesProvider)
    assert isinstance(
        build_provider("anthropic/claude-sonnet-4-6", settings).inner, AnthropicProvider
    )
    with pytest.raises(Exception, match="coffee_paper"):
        build_provider("openai/gpt-5.5", ModelSettings(request_style="coffee_paper", api="chat"))
    # google/ is built too (tests/agents/test_coffee_paper_wire.py)
