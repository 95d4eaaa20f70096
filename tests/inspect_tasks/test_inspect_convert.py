"""The bridge's conversions between econbench's model types and Inspect's, and the pooling
of AlloBench episodes across samples and epochs."""

from __future__ import annotations

import math
from typing import Any

import pytest
from inspect_ai.model import ChatMessageAssistant, ContentReasoning, ModelOutput, ModelUsage
from inspect_ai.scorer import SampleScore, Score
from inspect_ai.tool import ToolCall as InspectCall

from econbench.agents.models.base import ChatMessage, ContextOverflowError, GenerateConfig
from econbench.agents.tools import ToolCall
from econbench.allo.game import EpisodeResult
from econbench.allo.game.core import Commit
from econbench.allo.game.metrics import summarize
from econbench.coffee.toolkit import toolkit_class
from econbench.inspect_tasks.convert import (
    econbench_output,
    inspect_config,
    inspect_messages,
    inspect_tool_choice,
    inspect_tools,
)
from econbench.inspect_tasks.metrics import (
    first_sight_rate,
    pool_episodes,
    pooled_score,
)


def without_null_defaults(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: without_null_defaults(v)
            for k, v in schema.items()
            if not (k == "default" and v is None)
        }
    if isinstance(schema, list):
        return [without_null_defaults(v) for v in schema]
    return schema


@pytest.mark.parametrize("role", ["farmer", "roaster", "retailer"])
def test_tools_keep_their_names_texts_and_schemas(role: str) -> None:
    specs = list(toolkit_class(role).tool_specs().values())
    infos = inspect_tools(specs)
    assert [i.name for i in infos] == [s.name for s in specs]
    assert [i.description for i in infos] == [s.description for s in specs]
    for spec, info in zip(specs, infos, strict=True):
        sent = info.parameters.model_dump(exclude_none=True)
        assert sent == without_null_defaults(spec.parameters)


def reply(**fields: Any) -> ModelOutput:
    message = ChatMessageAssistant(
        content=[ContentReasoning(reasoning="think", signature="sig-1"), *fields.pop("text", [])],
        tool_calls=fields.pop("calls", None),
        model="m",
    )
    return ModelOutput.from_message(message, **fields)


def test_a_reply_goes_back_to_inspect_exactly_as_it_came() -> None:
    call = InspectCall(id="c1", function="roast", arguments={"qty_kg": 5})
    output = reply(calls=[call], stop_reason="tool_calls")
    output.usage = ModelUsage(
        input_tokens=10, output_tokens=4, input_tokens_cache_read=90, input_tokens_cache_write=5
    )
    mine = econbench_output(output)
    assert mine.tool_calls == [ToolCall("roast", {"qty_kg": 5}, "c1")]
    assert mine.reasoning == "think"
    assert mine.usage.input_tokens == 105 and mine.usage.cached_input_tokens == 90
    assert mine.stop == "tool_calls"
    conversation = [
        ChatMessage("system", "rules"),
        ChatMessage("user", "day 0"),
        mine.as_message(),
        ChatMessage("tool", '{"status":"success"}', tool_call_id="c1", name="roast"),
    ]
    system, user, assistant, tool = inspect_messages(conversation)
    assert (system.role, system.text, user.text) == ("system", "rules", "day 0")
    assert assistant.model_dump(exclude={"id"}) == output.message.model_dump(exclude={"id"})
    assert (tool.tool_call_id, tool.function, tool.text) == ("c1", "roast", '{"status":"success"}')
    again = inspect_messages(conversation)
    assert [m.id for m in again] == [m.id for m in inspect_messages(conversation)]


def test_a_conversation_without_inspect_replies_is_built_from_its_fields() -> None:
    message = ChatMessage(
        "assistant", "ok", tool_calls=[ToolCall("wait_for_next_day", {}, "x1")], reasoning="r"
    )
    [converted] = inspect_messages([message])
    assert converted.text == "ok"
    assert [(c.id, c.function) for c in converted.tool_calls or []] == [("x1", "wait_for_next_day")]


def test_unparseable_arguments_reach_the_toolkit_as_text() -> None:
    call = InspectCall(id="c", function="roast", arguments={}, parse_error="bad JSON: {qty")
    assert econbench_output(reply(calls=[call])).tool_calls[0].arguments == "bad JSON: {qty"


def test_a_prompt_too_long_is_a_context_overflow() -> None:
    output = ModelOutput.from_content("m", "", stop_reason="model_length")
    output.choices[0].message.content = ""
    with pytest.raises(ContextOverflowError):
        econbench_output(output)


def test_only_what_econbench_sets_overrides_inspects_config() -> None:
    assert inspect_config(GenerateConfig()).model_dump(exclude_none=True) == {}
    set_ = inspect_config(GenerateConfig(max_tokens=512, temperature=0.0, thinking_budget=99))
    assert (set_.max_tokens, set_.temperature, set_.reasoning_tokens) == (512, 0.0, 99)
    spec = toolkit_class("roaster").tool_specs()["roast"]
    assert inspect_tool_choice(GenerateConfig(tool_choice="required"), [spec]) == "any"
    assert inspect_tool_choice(GenerateConfig(tool_choice="required"), []) == "auto"


def episode(seed: int, utility: float, opt: float, first: list[bool]) -> dict[str, Any]:
    commits = [Commit(i, i, 1, f, False, 5) for i, f in enumerate(first)]
    return EpisodeResult(seed, 0.0, 3, 60, 0, commits, utility, opt, 0, 0, 0).to_dict()


def test_epochs_pool_every_episode_as_econbench_summarises_them() -> None:
    first, second = episode(1, 10, 40, [True, False]), episode(1, 30, 40, [True])
    epochs = [Score(value=0.25, metadata={"episode": first})]
    epochs.append(Score(value=0.75, metadata={"episode": second}))
    reduced = pool_episodes()(epochs)
    assert reduced.value == 0.5
    other = Score(value=math.nan, metadata={"episode": episode(2, 0, 20, [])})
    scores = [SampleScore(score=reduced, sample_id=1), SampleScore(score=other, sample_id=2)]
    results = [EpisodeResult.from_dict(e) for e in (first, second, other.metadata["episode"])]
    expected = summarize(results, n_boot=1)
    assert pooled_score()(scores) == pytest.approx(expected["score"]) == 40 / 100
    assert first_sight_rate()(scores) == pytest.approx(expected["first_sight_rate"]) == 2 / 3
