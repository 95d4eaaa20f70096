"""One actor protocol for both benchmarks: every actor speaks it, a caller answers tool calls
through it, and the same LLM agent plays a coffee-style and an allo-style loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from econbench.agents.models.base import ChatMessage
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.policy import (
    Actor,
    Decider,
    Feedback,
    Observation,
    Reply,
    ToolResult,
    UserText,
)
from econbench.agents.react import IGNORED, LLMAgent
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.allo.episodes.actors import FunctionActor, PolicyActor, result_text
from econbench.allo.episodes.runner import play_episode
from econbench.allo.framings import get_framing
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.allo.solvers.policies import make_policy as make_allo_policy
from econbench.coffee.policies import make_policy as make_coffee_policy
from econbench.runs.allo.llm_actor import LLMActor


def look(n: int = 0) -> dict[str, Any]:
    """Look around.

    Args:
        n: Which way to look.
    """
    return {"n": n}


TOOLS = [ToolSpec.from_function(look)]


def _agent(brain: Any, **kwargs: Any) -> LLMAgent:
    return LLMAgent(
        ScriptedModel("actor", brain=brain),
        system_prompt="coffee prompt",
        render_observation=lambda obs: f"day {obs['day']}",
        **kwargs,
    )


def _two_calls(messages: list[ChatMessage], tools: list[ToolSpec]) -> list[ToolCall]:
    return [ToolCall("look", {"n": 1}), ToolCall("look", {"n": 2})]


def test_every_actor_of_both_benchmarks_speaks_the_one_protocol() -> None:
    config = StreamConfig()
    framing = get_framing("r1")
    loop = asyncio.new_event_loop()
    try:
        actors: list[Any] = [
            make_coffee_policy("passive", "roaster"),
            _agent(_two_calls),
            FunctionActor(lambda inputs, history: Reply()),
            PolicyActor(
                make_allo_policy("eager", config), framing, config=config, cost=0, budget=3, seed=0
            ),
            LLMActor(_agent(_two_calls), loop, settings=_settings()),
        ]
        for actor in actors:
            assert isinstance(actor, Actor), type(actor).__name__
            actor.start("firm", "role", TOOLS, system_prompt="p", max_tokens=64)
    finally:
        loop.close()


def _settings() -> Any:
    from econbench.agents.models.registry import ModelSettings

    return ModelSettings()


def test_a_caller_answers_every_call_itself() -> None:
    agent = _agent(_two_calls, render_result=result_text)
    agent.start("a", "r", TOOLS)
    first = agent.respond([Observation({"day": 1})])
    assert [c.arguments["n"] for c in first.tool_calls] == [1, 2]
    ids = [c.call_id for c in first.tool_calls]
    agent.respond(
        [ToolResult("look", {"b": 2, "a": 1}, ids[0]), ToolResult("look", {"x": 0}, ids[1])]
    )
    tool_messages = [m for m in agent.messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == ids
    assert tool_messages[0].content == '{"a": 1, "b": 2}'  # the caller's own rendering
    assert tool_messages[1].content == '{"x": 0}'  # not the "ignored" answer
    assert not set(agent.state_dict()["open_calls"]) & set(ids)  # the answered calls are closed


def test_calls_a_caller_leaves_unanswered_are_answered_as_not_executed() -> None:
    agent = _agent(_two_calls)
    agent.start("a", "r", TOOLS)
    agent.respond([Observation({"day": 1})])
    agent.respond([ToolResult("", {"status": "success", "b": 2, "a": 1})])
    first, second = [m for m in agent.messages if m.role == "tool"]
    assert first.content == '{"status":"success","b":2,"a":1}'  # the executed call's result
    assert first.name == "look"
    assert json.loads(second.content) == {"status": "error", "error": IGNORED}


def test_feedback_and_inputs_are_the_same_thing() -> None:
    feedback = Feedback(observation={"day": 3}, result={"ok": True}, notes=["n"])
    assert Feedback.from_inputs(feedback.inputs()) == feedback
    assert Feedback(notes=["a", "b"]).inputs() == [UserText("a\nb")]


def test_a_decider_answers_with_its_one_call() -> None:
    class OneCall(Decider):
        def decide(self, feedback: Feedback) -> ToolCall | None:
            return ToolCall("look", {"day": feedback.observation["day"]})

    actor = OneCall()
    actor.start("x", "r", TOOLS)
    reply = actor.respond([Observation({"day": 7})])
    assert reply.first_call == ToolCall("look", {"day": 7})
    assert reply.tool_calls == [ToolCall("look", {"day": 7})]


def _counting_brain(messages: list[ChatMessage], tools: list[ToolSpec]) -> Any:
    turns = sum(1 for m in messages if m.role == "assistant")
    if tools:
        return ToolCall(tools[0].name, {}) if turns % 2 == 0 else None
    return "DECISION: KEEP" if turns < 2 else "DECISION: PASS"


def test_one_agent_plays_a_coffee_loop_and_an_allo_loop() -> None:
    coffee = _agent(_counting_brain)
    coffee.start("roaster_A", "roaster", TOOLS)
    calls = [coffee.decide(Feedback(observation={"day": 1}))]
    calls.append(coffee.decide(Feedback(result={"status": "success"})))
    assert [c.name if c else None for c in calls] == ["look", None]
    assert [m.role for m in coffee.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert coffee.messages[1].content == "day 1"

    loop = asyncio.new_event_loop()
    try:
        allo = LLMActor(_agent(_counting_brain), loop, settings=_settings())
        episode = play_episode(get_framing("r0"), lambda info: allo, generate_stream(0))
    finally:
        loop.close()
    decisions = [t["decision"] for t in episode.record["turns"] if t["kind"] == "decision"]
    assert decisions[:2] == ["commit", "commit"] and "pass" in decisions[2:]
    assert allo.agent.messages[0].content == episode.record.get("system", allo.agent.system_prompt)
    assert all(m.role != "tool" for m in allo.agent.messages)
