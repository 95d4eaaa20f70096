"""Recording every model call of a run, and replaying a run from its record."""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
from pathlib import Path

import pytest

from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    TransientModelError,
    Usage,
)
from econbench.agents.models.record import (
    CallRecord,
    RecordError,
    RecordingProvider,
    ReplayProvider,
    request_key,
)
from econbench.agents.models.registry import register_scripted, unregister_scripted
from econbench.agents.models.scripted import ScriptedModel, text_output, tool_output
from econbench.agents.models.wraps import make_provider_wrap
from econbench.agents.policy import Feedback
from econbench.agents.react import LLMAgent
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.coffee.events import MemorySink
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import RunStopped, run_to_dir
from econbench.runs.layout import EVENTS, RECORD, SUMMARY

DAYS = 4
MODEL = "scripted/recorded-roaster"


def buy(qty: int) -> dict:
    """Buy coffee.

    Args:
        qty: Kilograms to buy.
    """
    return {"status": "ok", "qty": qty}


TOOLS = [ToolSpec.from_function(buy)]


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def conversation(*texts: str) -> list[ChatMessage]:
    return [ChatMessage("system", "You buy coffee."), *(ChatMessage("user", t) for t in texts)]


# --------------------------------------------------------------------------- request keys


def test_the_request_key_covers_what_shapes_the_reply_but_not_the_timeout() -> None:
    base = request_key("openai/gpt-5.5", conversation("hi"), TOOLS, GenerateConfig())
    assert base == request_key(
        "openai/gpt-5.5", conversation("hi"), TOOLS, GenerateConfig(timeout_s=5.0)
    )
    others = [
        request_key("openai/gpt-5.4", conversation("hi"), TOOLS, GenerateConfig()),
        request_key("openai/gpt-5.5", conversation("hi!"), TOOLS, GenerateConfig()),
        request_key("openai/gpt-5.5", conversation("hi"), [], GenerateConfig()),
        request_key("openai/gpt-5.5", conversation("hi"), TOOLS, GenerateConfig(temperature=0.5)),
        request_key("openai/gpt-5.5", conversation("hi"), TOOLS, GenerateConfig(max_tokens=99)),
        request_key("openai/gpt-5.5", conversation("hi"), TOOLS, GenerateConfig(extra={"seed": 1})),
    ]
    assert base not in others and len(set(others)) == len(others)


# --------------------------------------------------------------------------- round trips


def rich_output() -> ModelOutput:
    return ModelOutput(
        model="claude-sonnet-4-6",
        text="Buying.",
        tool_calls=[ToolCall("buy", {"qty": 5}, "toolu_1"), ToolCall("buy", '{"qty": ', None)],
        reasoning="Cash is fine.",
        usage=Usage(
            input_tokens=1200,
            cached_input_tokens=800,
            cache_write_tokens=100,
            output_tokens=40,
            reasoning_tokens=12,
        ),
        cost_usd=0.00123,
        stop_reason="tool_use",
        provider_data={
            "anthropic": {"content": [{"type": "thinking", "thinking": "…", "signature": "sig=="}]}
        },
    )


def test_a_recorded_reply_comes_back_whole(tmp_path) -> None:
    original = rich_output()
    model = ScriptedModel("m", outputs=[original])
    with CallRecord(tmp_path / RECORD) as record:
        recorder = RecordingProvider(model, record, "roaster_A")
        assert run(recorder.generate(conversation("buy"), TOOLS, GenerateConfig())) == original
        replayer = ReplayProvider(record, "roaster_A")
        served = run(replayer.generate(conversation("buy"), TOOLS, GenerateConfig(timeout_s=1)))
    assert served == original
    assert served.provider_data == original.provider_data  # thinking signatures survive
    assert replayer.name == "scripted/m" and replayer.provider == "scripted"


def test_each_call_is_committed_as_it_is_made(tmp_path) -> None:
    """A reader opened while the run still holds the file sees every finished call, so a
    killed process loses at most the call in flight."""
    model = ScriptedModel("m", outputs=[text_output("a"), text_output("b")])
    with CallRecord(tmp_path / RECORD) as record:
        recorder = RecordingProvider(model, record, "roaster_A")
        run(recorder.generate(conversation("1"), [], GenerateConfig()))
        run(recorder.generate(conversation("1", "2"), [], GenerateConfig()))
        other = sqlite3.connect(tmp_path / RECORD)
        rows = other.execute("SELECT agent, idx FROM calls ORDER BY idx").fetchall()
        other.close()
    assert rows == [("roaster_A", 0), ("roaster_A", 1)]


def test_history_is_stored_once(tmp_path) -> None:
    texts = [f"day {i}" for i in range(30)]
    model = ScriptedModel("m", brain=lambda messages, tools: "ok")
    with CallRecord(tmp_path / RECORD) as record:
        recorder = RecordingProvider(model, record, "a")
        for n in range(1, len(texts) + 1):
            run(recorder.generate(conversation(*texts[:n]), TOOLS, GenerateConfig()))
        sent = sum(len(c.message_hashes) for c in record.calls("a"))
        assert sent == sum(range(2, 32))
        db = sqlite3.connect(tmp_path / RECORD)
        stored = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        tools = db.execute("SELECT COUNT(*) FROM tools").fetchone()[0]
        db.close()
        assert stored == 31 and tools == 1
        last = list(record.calls("a"))[-1]
        assert record.messages_of(last) == conversation(*texts)


def test_a_redone_call_replaces_the_lost_one_after_a_resume(tmp_path) -> None:
    with CallRecord(tmp_path / RECORD) as record:
        first = RecordingProvider(
            ScriptedModel("m", outputs=[text_output(t) for t in "abc"]), record, "a"
        )
        for n in range(3):
            run(first.generate(conversation(str(n)), [], GenerateConfig()))
        assert first.state_dict() == {"index": 3}
        # The checkpoint was taken after call 0; calls 1 and 2 were lost with the crash.
        resumed = RecordingProvider(ScriptedModel("m", outputs=[text_output("B")]), record, "a")
        resumed.load_state({"index": 1})
        run(resumed.generate(conversation("1 again"), [], GenerateConfig()))
        assert [c.output["text"] for c in record.calls("a")] == ["a", "B"]
        # Writing an index again replaces the row (INSERT OR REPLACE).
        resumed.index = 0
        model = resumed.inner
        assert isinstance(model, ScriptedModel)
        model.add(text_output("A"))
        run(resumed.generate(conversation("0 again"), [], GenerateConfig()))
        assert [c.output["text"] for c in record.calls("a")] == ["A", "B"]


def test_agents_of_one_run_record_concurrently_from_one_loop(tmp_path) -> None:
    async def brain(messages, tools):
        await asyncio.sleep(0)  # let the other agents' calls interleave
        return f"{messages[-1].content} done"

    async def agent_calls(provider: RecordingProvider, agent: str) -> None:
        for n in range(20):
            await provider.generate(conversation(f"{agent} {n}"), [], GenerateConfig())

    with CallRecord(tmp_path / RECORD) as record:
        providers = {
            a: RecordingProvider(ScriptedModel("m", brain=brain), record, a) for a in ("x", "y")
        }

        async def main() -> None:
            await asyncio.gather(*(agent_calls(p, a) for a, p in providers.items()))

        run(main())
        for agent in ("x", "y"):
            calls = list(record.calls(agent))
            assert [c.idx for c in calls] == list(range(20))
            assert [c.output["text"] for c in calls] == [f"{agent} {n} done" for n in range(20)]


def test_a_record_from_another_schema_version_is_refused(tmp_path) -> None:
    path = tmp_path / RECORD
    CallRecord(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(RecordError, match="version 99"):
        CallRecord(path, readonly=True)
    with pytest.raises(RecordError, match="no such record"):
        CallRecord(tmp_path / "missing.sqlite", readonly=True)


# --------------------------------------------------------------------------- replay


def recorded(tmp_path: Path, texts: list[str]) -> CallRecord:
    """A record of agent ``a`` answering a growing conversation, one reply per call."""
    record = CallRecord(tmp_path / RECORD)
    recorder = RecordingProvider(
        ScriptedModel("m", outputs=[text_output(f"reply {i}") for i in range(len(texts))]),
        record,
        "a",
    )
    for n in range(1, len(texts) + 1):
        run(recorder.generate(conversation(*texts[:n]), [], GenerateConfig()))
    return record


def test_a_strict_replay_names_the_agent_the_call_and_the_first_differing_message(
    tmp_path,
) -> None:
    with recorded(tmp_path, ["day 1", "day 2: price 10", "day 3"]) as record:
        replayer = ReplayProvider(record, "a")
        first = run(replayer.generate(conversation("day 1"), [], GenerateConfig()))
        assert first.text == "reply 0"
        with pytest.raises(FatalModelError) as caught:
            run(replayer.generate(conversation("day 1", "day 2: price 12"), [], GenerateConfig()))
    message = str(caught.value)
    assert "agent a, call 1" in message
    assert "message 2" in message
    assert "recorded user: 'day 2: price 10'" in message
    assert "now      user: 'day 2: price 12'" in message


def test_a_strict_replay_says_when_only_the_settings_differ(tmp_path) -> None:
    with recorded(tmp_path, ["day 1"]) as record:
        replayer = ReplayProvider(record, "a")
        with pytest.raises(FatalModelError, match=r"settings differ.*'temperature': 0\.3"):
            run(replayer.generate(conversation("day 1"), [], GenerateConfig(temperature=0.3)))


def test_a_strict_replay_stops_when_the_record_runs_out(tmp_path) -> None:
    with recorded(tmp_path, ["day 1"]) as record:
        replayer = ReplayProvider(record, "a")
        run(replayer.generate(conversation("day 1"), [], GenerateConfig()))
        with pytest.raises(FatalModelError, match=r"agent a, call 1.*made 1 call"):
            run(replayer.generate(conversation("day 1", "day 2"), [], GenerateConfig()))


def test_a_lenient_replay_serves_the_record_in_order_whatever_is_asked(tmp_path) -> None:
    with recorded(tmp_path, ["day 1", "day 2"]) as record:
        replayer = ReplayProvider(record, "a", strict=False)
        texts = [
            run(replayer.generate(conversation(q), [], GenerateConfig(temperature=1.0))).text
            for q in ("something", "else")
        ]
        assert texts == ["reply 0", "reply 1"]
        with pytest.raises(FatalModelError, match="no call for agent a after call 1"):
            run(replayer.generate(conversation("more"), [], GenerateConfig()))


def test_a_replay_finds_its_place_after_a_resume_by_the_request_alone(tmp_path) -> None:
    with recorded(tmp_path, ["day 1", "day 2", "day 3"]) as record:
        fresh = ReplayProvider(record, "a")  # a resumed run's provider: no saved position
        served = run(fresh.generate(conversation("day 1", "day 2"), [], GenerateConfig()))
        assert served.text == "reply 1" and fresh.state_dict() == {"last": 1}


def test_failed_attempts_are_replayed_where_they_happened(tmp_path) -> None:
    model = ScriptedModel("m", outputs=[text_output("summary"), text_output("after")])
    model.fail_next(
        TransientModelError("rate limited (429)", retry_after=0.25),
        ContextOverflowError("prompt is too long"),
    )
    request, summary = conversation("long"), [ChatMessage("user", "summarise")]
    with CallRecord(tmp_path / RECORD) as record:
        recorder = RecordingProvider(model, record, "a")
        with pytest.raises(TransientModelError):
            run(recorder.generate(request, [], GenerateConfig()))
        with pytest.raises(ContextOverflowError):
            run(recorder.generate(request, [], GenerateConfig()))
        run(recorder.generate(summary, [], GenerateConfig()))
        run(recorder.generate(request, [], GenerateConfig()))

        replayer = ReplayProvider(record, "a")
        with pytest.raises(TransientModelError) as transient:
            run(replayer.generate(request, [], GenerateConfig()))
        assert str(transient.value) == "rate limited (429)"
        assert transient.value.retry_after == 0.25
        with pytest.raises(ContextOverflowError, match="prompt is too long"):
            run(replayer.generate(request, [], GenerateConfig()))
        assert run(replayer.generate(summary, [], GenerateConfig())).text == "summary"
        assert run(replayer.generate(request, [], GenerateConfig())).text == "after"


def test_retries_and_a_fatal_stop_replay_into_the_same_agent_events(tmp_path) -> None:
    def play(provider) -> tuple[list[tuple[str, dict]], dict]:
        events: list[tuple[str, dict]] = []
        agent = LLMAgent(
            provider,
            system_prompt="You buy coffee.",
            render_observation=json.dumps,
            on_event=lambda kind, data: events.append((kind, data)),
            retry_options={"sleep": lambda s: asyncio.sleep(0)},
            seed=7,
        )
        agent.start("roaster_A", "roaster", TOOLS)
        loop = asyncio.new_event_loop()
        with pytest.raises(FatalModelError, match="invalid api key"):
            for day in range(5):
                loop.run_until_complete(agent.adecide(Feedback(observation={"day": day})))
        return events, agent.stats.to_dict()

    model = ScriptedModel(
        "m", outputs=[tool_output("buy", {"qty": 1}), text_output("wait"), text_output("x")]
    )
    model.fail_next(TransientModelError("overloaded (529)"), TransientModelError("busy"))
    with CallRecord(tmp_path / RECORD) as record:
        original = play(_FailAfter(RecordingProvider(model, record, "roaster_A"), calls=2))
        replayed = play(ReplayProvider(record, "roaster_A"))
    kinds = [kind for kind, _ in original[0]]
    assert kinds == ["model_retry", "model_retry", "model_call", "model_call"]
    assert replayed == original


class _FailAfter:
    """Lets ``calls`` calls succeed through the recorder, then its model fails for good."""

    def __init__(self, recorder: RecordingProvider, calls: int) -> None:
        self.recorder, self.calls = recorder, calls
        self.name, self.context_window = recorder.name, recorder.context_window

    async def generate(self, messages, tools, config):
        if self.recorder.index == self.calls:
            self.recorder.inner = ScriptedModel("m", outputs=[FatalModelError("invalid api key")])
        return await self.recorder.generate(messages, tools, config)


# --------------------------------------------------------------------------- CoffeeBench


@functools.cache
def heuristic_calls() -> tuple[ToolCall, ...]:
    """What the heuristic roaster_A does over DAYS days (the scripted model replays it)."""
    sink = MemorySink()
    CoffeeRun(RunConfig(days=DAYS), sink=sink).run()
    return tuple(
        ToolCall(e["tool"], e["arguments"])
        for e in sink.events
        if e["type"] == "tool_call" and e["firm"] == "roaster_A"
    )


def heuristic_brain():
    queue = list(heuristic_calls())

    def brain(messages, tools):
        n = len(messages)
        return ModelOutput(
            model=MODEL,
            tool_calls=[queue.pop(0)] if queue else [],
            usage=Usage(input_tokens=40 * n, cached_input_tokens=30 * n, output_tokens=9),
            stop_reason="tool_use",
            provider_data={"anthropic": {"content": [{"type": "thinking", "signature": f"s{n}"}]}},
        )

    return brain


@pytest.fixture
def scripted_roaster():
    register_scripted(MODEL, heuristic_brain())
    yield RunConfig(days=DAYS, agents={"default": "scripted", "roaster_A": MODEL})
    unregister_scripted(MODEL)


def record_run(config: RunConfig, out: Path) -> dict:
    return run_to_dir(config, out, provider_wrap=make_provider_wrap(record=out / RECORD))


def test_a_coffee_run_replays_byte_for_byte(tmp_path, scripted_roaster) -> None:
    config = scripted_roaster
    summary = record_run(config, tmp_path / "original")
    assert summary["firms"]["roaster_A"]["llm_calls"] == len(heuristic_calls())
    unregister_scripted(MODEL)  # the replay needs no model at all...
    register_scripted(MODEL, lambda messages, tools: pytest.fail("the model was asked"))
    wrap = make_provider_wrap(replay=tmp_path / "original" / RECORD)
    replayed = run_to_dir(config, tmp_path / "replay", provider_wrap=wrap)
    original_events = (tmp_path / "original" / EVENTS).read_bytes()
    assert (tmp_path / "replay" / EVENTS).read_bytes() == original_events
    assert replayed == summary  # usage and cost as recorded
    # The history went in once: far fewer stored messages than messages sent.
    with CallRecord(tmp_path / "original" / RECORD, readonly=True) as record:
        sent = sum(len(c.message_hashes) for c in record.calls())
        stored = sqlite3.connect(tmp_path / "original" / RECORD)
        count = stored.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        stored.close()
        assert record.agents() == ["roaster_A"]
    assert count < sent / 5


def test_a_replay_under_another_config_stops_cleanly_at_the_divergence(
    tmp_path, scripted_roaster
) -> None:
    record_run(scripted_roaster, tmp_path / "original")
    changed = scripted_roaster.model_copy(update={"prompts": {"roaster_A": "revenue_pressure"}})
    wrap = make_provider_wrap(replay=tmp_path / "original" / RECORD)
    with pytest.raises(RunStopped, match=r"replay diverged: agent roaster_A, call 0") as caught:
        run_to_dir(changed, tmp_path / "strict", provider_wrap=wrap)
    assert "first difference at message 0" in str(caught.value)
    assert "recorded system:" in str(caught.value)
    summary = json.loads((tmp_path / "strict" / SUMMARY).read_text())
    assert summary["status"] == "stopped"
    assert summary["stopped"]["error_type"] == "FatalModelError"
    # Leniently, the same replies are served in order: the system prompt does not show in
    # the log, so the run comes out identical.
    lenient = make_provider_wrap(replay=tmp_path / "original" / RECORD, strict=False)
    run_to_dir(changed, tmp_path / "lenient", provider_wrap=lenient)
    assert (tmp_path / "lenient" / EVENTS).read_bytes() == (
        tmp_path / "original" / EVENTS
    ).read_bytes()


def test_a_stopped_then_resumed_run_keeps_a_record_that_replays_it(tmp_path) -> None:
    """The fatal error and anything after the checkpoint are dropped from the record when
    the run resumes, so the record holds exactly the calls of the finished run."""
    from econbench.runs.coffee.run import resume_to_dir
    from econbench.runs.replay import replay_run

    asked = [0]

    def flaky(messages, tools):
        asked[0] += 1
        if asked[0] == 5:
            raise FatalModelError("invalid api key")
        if messages[-1].role == "tool":
            return ToolCall("wait_for_next_day", {})
        return ToolCall("view_listings", {})

    register_scripted(MODEL, flaky)
    try:
        config = RunConfig(days=DAYS, agents={"default": "scripted", "roaster_A": MODEL})
        out = tmp_path / "run"
        with pytest.raises(RunStopped, match="invalid api key"):
            run_to_dir(config, out, provider_wrap=make_provider_wrap(record=out / RECORD))
        summary = resume_to_dir(out, provider_wrap=make_provider_wrap(record=out / RECORD))
    finally:
        unregister_scripted(MODEL)
    with CallRecord(out / RECORD, readonly=True) as record:
        indices = [c.idx for c in record.calls("roaster_A")]
        assert record.failure_at("roaster_A", 4, 0) is None
    assert indices == list(range(summary["firms"]["roaster_A"]["llm_calls"]))
    outcome = replay_run(out, tmp_path / "replay")
    assert outcome.identical and outcome.stopped is None


def test_a_run_fed_hostile_replies_records_them_stops_resumes_and_replays(tmp_path) -> None:
    """Arguments nested 5,000 levels deep, lone surrogates and an impossible token count:
    each costs one tool error or one unpriced call. The record takes them, the run stops
    and resumes (its conversation re-sent with them inside), and the record replays it."""
    from econbench.runs.coffee.run import resume_to_dir
    from econbench.runs.replay import replay_run

    deep: object = 1
    for _ in range(5000):
        deep = [deep]
    asked = [0]

    def hostile(messages, tools):
        asked[0] += 1
        if asked[0] == 1:
            return ToolCall("make_offer", {"listing_id": deep, "offered_price": 1, "qty": 1})
        if asked[0] == 2:
            message = {"recipient": "roaster_B", "title": "hi \udc00", "body": "x \ud83d"}
            return ModelOutput(
                model="m",
                text="caf\ud800",
                tool_calls=[ToolCall("send_message", message)],
                usage=Usage(input_tokens=10**20, output_tokens=3),
            )
        if asked[0] == 6:
            raise FatalModelError("invalid api key")
        if messages[-1].role == "tool":
            return ToolCall("wait_for_next_day", {})
        return ToolCall("view_listings", {})

    register_scripted(MODEL, hostile)
    try:
        config = RunConfig(days=DAYS, agents={"default": "scripted", "roaster_A": MODEL})
        out = tmp_path / "run"
        with pytest.raises(RunStopped, match="invalid api key"):
            run_to_dir(config, out, provider_wrap=make_provider_wrap(record=out / RECORD))
        summary = resume_to_dir(out, provider_wrap=make_provider_wrap(record=out / RECORD))
    finally:
        unregister_scripted(MODEL)
    firm = summary["firms"]["roaster_A"]
    assert firm["invalid_usage_calls"] == 1 and firm["cost_usd"] is None
    events = [json.loads(line) for line in (out / EVENTS).open(encoding="utf-8")]
    calls = [e for e in events if e["type"] == "tool_call" and e["firm"] == "roaster_A"]
    assert "nested more than 32 levels deep" in calls[0]["result"]["error"]
    assert calls[1]["result"]["status"] == "success"
    sent = next(e for e in events if e["type"] == "message")
    assert (sent["title"], sent["body"]) == ("hi \ufffd", "x \ufffd")
    outcome = replay_run(out, tmp_path / "replay")
    assert outcome.identical and outcome.stopped is None
