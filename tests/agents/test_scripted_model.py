"""ScriptedModel: replies in order or from a brain, recorded requests, usage, queued errors."""

from __future__ import annotations

import asyncio
import random

import pytest

from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    TransientModelError,
    Usage,
)
from econbench.agents.models.retry import call_with_retries
from econbench.agents.models.scripted import (
    ScriptedModel,
    ScriptExhaustedError,
    estimate_usage,
    text_output,
    tool_output,
)
from econbench.agents.tools import ToolCall, ToolSpec, tool


@tool("write")
def buy(qty: int) -> dict:
    """Buy coffee.

    Args:
        qty: Kilograms to buy.
    """
    return {"status": "ok", "qty": qty}


TOOLS = [ToolSpec.from_function(buy)]


def gen(model: ModelProvider, messages=None, tools=None, config=None) -> ModelOutput:
    return asyncio.run(
        model.generate(
            messages if messages is not None else [ChatMessage("user", "go")],
            tools if tools is not None else TOOLS,
            config or GenerateConfig(),
        )
    )


def test_outputs_come_in_order_then_the_script_is_exhausted():
    model = ScriptedModel("roaster", [tool_output("buy", {"qty": 5}), text_output("done")])
    assert model.name == "scripted/roaster"
    assert isinstance(model, ModelProvider)
    first = gen(model)
    assert first.tool_calls == [ToolCall("buy", {"qty": 5})]
    assert gen(model).text == "done"
    with pytest.raises(ScriptExhaustedError, match="no reply left after 2 replies") as info:
        gen(model)
    assert isinstance(info.value, FatalModelError)
    assert model.calls == 3


def test_replies_are_copies_so_callers_can_mutate_them():
    reply = tool_output("buy", {"qty": 1})
    model = ScriptedModel("m", [reply, reply])
    out = gen(model)
    out.cost_usd = 9.0
    out.tool_calls.clear()
    assert gen(model).tool_calls == [ToolCall("buy", {"qty": 1})] and reply.cost_usd is None


def test_every_request_is_recorded_as_it_stood():
    model = ScriptedModel("m", [text_output("a"), text_output("b")])
    conversation = [ChatMessage("system", "You roast coffee."), ChatMessage("user", "Day 1")]
    config = GenerateConfig(temperature=0.3, max_tokens=99)
    gen(model, conversation, TOOLS, config)
    conversation.append(ChatMessage("assistant", "a"))
    conversation.append(ChatMessage("user", "Day 2"))
    gen(model, conversation, [], GenerateConfig())
    first, second = model.requests
    assert [m.content for m in first.messages] == ["You roast coffee.", "Day 1"]
    assert first.tool_names == ["buy"] and first.config == config
    assert first.config is not config
    assert second.last_message.content == "Day 2" and second.tools == []
    assert model.last_request is second


def test_max_recorded_bounds_memory_but_calls_still_count():
    model = ScriptedModel("m", brain=lambda messages, tools: "ok", max_recorded=2)
    for _ in range(5):
        gen(model)
    assert model.calls == 5 and len(model.requests) == 2


def test_brain_sees_the_conversation_and_may_answer_in_several_shapes():
    seen: list[tuple[int, list[str]]] = []

    def brain(messages, tools):
        seen.append((len(messages), [t.name for t in tools]))
        turn = len(seen)
        if turn == 1:
            return ToolCall("buy", {"qty": 3})
        if turn == 2:
            return [ToolCall("buy", {"qty": 1}, "c1"), ToolCall("buy", {"qty": 2}, "c2")]
        if turn == 3:
            return "nothing to do"
        if turn == 4:
            return None
        return ModelOutput(model="x", text="custom", reasoning="thought")

    model = ScriptedModel("brainy", brain=brain)
    assert gen(model).tool_calls == [ToolCall("buy", {"qty": 3})]
    assert [c.call_id for c in gen(model).tool_calls] == ["c1", "c2"]
    assert gen(model).text == "nothing to do" and gen(model).tool_calls == []
    last = gen(model)
    assert (last.text, last.reasoning) == ("custom", "thought")
    assert seen[0] == (1, ["buy"])
    assert gen(model, tools=[]).model == "x"  # brain keeps answering: no exhaustion


def test_async_brain_is_awaited():
    async def brain(messages, tools):
        await asyncio.sleep(0)
        return "async reply"

    assert gen(ScriptedModel("a", brain=brain)).text == "async reply"


def test_a_brain_returning_nonsense_fails_loudly():
    with pytest.raises(TypeError, match="must return"):
        gen(ScriptedModel("bad", brain=lambda m, t: 42))


def test_exactly_one_of_outputs_or_brain():
    with pytest.raises(ValueError):
        ScriptedModel("none")
    with pytest.raises(ValueError):
        ScriptedModel("both", [text_output("a")], brain=lambda m, t: "b")
    with pytest.raises(ValueError, match="fail_next"):
        ScriptedModel("b", brain=lambda m, t: "b").add(text_output("x"))


def test_fixed_usage_per_call_unless_a_reply_brings_its_own():
    own = Usage(input_tokens=7, output_tokens=1)
    fixed = Usage(input_tokens=1_000, cached_input_tokens=800, output_tokens=50)
    model = ScriptedModel("u", [text_output("a"), text_output("b", usage=own)], usage=fixed)
    first = gen(model)
    assert first.usage == fixed and first.usage is not fixed
    assert gen(model).usage == own
    assert gen(ScriptedModel("z", [text_output("a")])).usage == Usage()


def test_estimated_usage_counts_the_prompt_like_the_fake_servers():
    model = ScriptedModel("e", brain=lambda m, t: ToolCall("buy", {"qty": 1}), usage="estimate")
    short = gen(model, [ChatMessage("user", "x" * 400)], [])
    long = gen(model, [ChatMessage("user", "x" * 4_000)], TOOLS)
    assert short.usage.input_tokens == 100
    assert long.usage.input_tokens > 1_000 and long.usage.output_tokens >= 1
    assert short.usage == estimate_usage([ChatMessage("user", "x" * 400)], [], short)


def test_queued_exceptions_in_the_script_and_before_the_next_reply():
    overflow = ContextOverflowError("prompt is too long")
    model = ScriptedModel("f", [text_output("a"), overflow, text_output("b")])
    assert gen(model).text == "a"
    with pytest.raises(ContextOverflowError):
        gen(model)
    model.fail_next(TransientModelError("429", retry_after=1.0), FatalModelError("401"))
    with pytest.raises(TransientModelError):
        gen(model)
    with pytest.raises(FatalModelError):
        gen(model)
    assert gen(model).text == "b"
    assert model.calls == 5 and model.remaining == 0
    model.add(text_output("c"))
    assert gen(model).text == "c"


def test_with_the_retry_layer_transient_failures_are_retried():
    model = ScriptedModel("r", brain=lambda m, t: "finally")
    model.fail_next(TransientModelError("503"), TransientModelError("429", retry_after=2))
    delays: list[float] = []

    async def sleep(d: float) -> None:
        delays.append(d)

    async def call() -> ModelOutput:
        return await model.generate([ChatMessage("user", "hi")], [], GenerateConfig())

    out = asyncio.run(call_with_retries(call, rng=random.Random(3), sleep=sleep))
    assert out.text == "finally" and model.calls == 3
    assert len(delays) == 2 and delays[1] >= 2.0


def test_latency_lets_concurrent_calls_overlap():
    model = ScriptedModel("slow", brain=lambda m, t: "ok", latency_s=0.01)
    active = {"now": 0, "peak": 0}

    async def one() -> None:
        active["now"] += 1
        active["peak"] = max(active["peak"], active["now"])
        await model.generate([ChatMessage("user", "hi")], [], GenerateConfig())
        active["now"] -= 1

    async def many() -> None:
        await asyncio.gather(*(one() for _ in range(5)))

    asyncio.run(many())
    assert active["peak"] == 5 and model.calls == 5


def test_repr_is_short_and_safe():
    model = ScriptedModel("r", [text_output("a")])
    assert repr(model) == "ScriptedModel(name='scripted/r', 1 scripted, calls=0)"
