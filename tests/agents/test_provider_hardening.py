"""Whatever a server sends, a call ends as a reply or a model error (issue 22, items 9-14).

One table of malformed replies runs against every provider through its real SDK and fake
server: a body that is not a reply at all (not JSON, JSON nested 100,000 deep, an array,
no choices, an object where the list of candidates belongs) is an ``unreadable`` transient
error, retried, then a clean stop; an error object in a 200 body is classified like the
HTTP error it names; and what the harness already has a soft path for (arguments that are
an array, usage counts given as text, text that is a number) is handled the same way by all
four. Then: a server trickling bytes meets the call's one deadline, a reply larger than the
harness keeps is cut and says so in its event, a run whose model never answers stops with
one line and resumes, and a base URL that does not parse is one configuration error.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.agents.test_provider_contract import BACKENDS, TOOLS, Backend, Shop
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.common import BrainReply, BrainRequest, Fault
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.harness import ProviderHarness, shop_brain
from tests.fakes.openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from econbench.agents.models import boundary
from econbench.agents.models.base import (
    ChatMessage,
    FatalModelError,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelProvider,
    TransientModelError,
)
from econbench.agents.models.errors import ModelConfigError
from econbench.agents.models.record import output_from_dict, output_to_dict
from econbench.agents.models.retry import RetriesExhaustedError, call_with_retries
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.models.settings import ModelSettings
from econbench.agents.react import LLMAgent
from econbench.agents.tools import ToolCall
from econbench.cli import app

runner = CliRunner()
BY_ID = {b.id: b for b in BACKENDS}
IDS = [b.id for b in BACKENDS]
DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000


# --------------------------------------------------------------------------- bodies
def reply_body(backend: str, *, text: Any = None, arguments: Any = None, usage: Any = None):
    """A 200 body in ``backend``'s wire format: a text, or one call to ``buy`` with
    ``arguments`` as they are, and ``usage`` in the API's own field names."""
    call = arguments is not None
    if backend == "openai-chat":
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if call:
            fn = {"name": "buy", "arguments": arguments}
            message["tool_calls"] = [{"id": "call_1", "type": "function", "function": fn}]
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return {"id": "chatcmpl_1", "choices": [choice], "usage": usage or {}}
    if backend == "openai-responses":
        if call:
            item = {"type": "function_call", "call_id": "call_1", "name": "buy"}
            output = [{**item, "arguments": arguments}]
        else:
            part = {"type": "output_text", "text": text}
            output = [{"type": "message", "id": "msg_1", "content": [part]}]
        return {"id": "resp_1", "status": "completed", "output": output, "usage": usage or {}}
    if backend == "anthropic":
        block = (
            {"type": "tool_use", "id": "toolu_1", "name": "buy", "input": arguments}
            if call
            else {"type": "text", "text": text}
        )
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": "end_turn",
            "usage": usage or {},
        }
    part = {"functionCall": {"name": "buy", "args": arguments}} if call else {"text": text}
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}
    return {"candidates": [candidate], "usageMetadata": usage or {}}


def each(body: Any) -> dict[str, Any]:
    return {b: body for b in IDS}


USAGE_AS_TEXT = {
    "openai-chat": {"prompt_tokens": "lots", "completion_tokens": "12"},
    "openai-responses": {"input_tokens": "lots", "output_tokens": "12"},
    "anthropic": {"input_tokens": "lots", "output_tokens": "12"},
    "google": {"promptTokenCount": "lots", "candidatesTokenCount": "12"},
}


@dataclass(frozen=True)
class Bad:
    """A malformed reply: its body per backend, the status it comes with, and what the call
    must end as: ``unreadable`` (a transient error, retried), ``transient`` or ``fatal``
    (an error object, classified), or ``reply`` (handled; ``check`` says how)."""

    name: str
    bodies: dict[str, Any]
    outcome: str
    status: int = 200


UNREADABLE = [
    Bad("not-json", each(b"<html>Bad gateway</html>"), "unreadable"),
    Bad("json-100k-deep-array", each(DEEP_ARRAY), "unreadable"),
    Bad("json-100k-deep-object", each(DEEP_OBJECT), "unreadable"),
    Bad("json-100k-deep-error-body", each(DEEP_ARRAY), "unreadable", status=500),
    Bad("an-array", each([1, 2, 3]), "unreadable"),
    Bad("an-empty-object", each({}), "unreadable"),
    Bad(
        "no-reply-in-it",
        {
            "openai-chat": {"id": "chatcmpl_1", "choices": []},
            "openai-responses": {"id": "resp_1", "status": "completed", "output": None},
            "anthropic": {"id": "msg_1", "type": "message", "content": None},
            "google": {"candidates": []},
        },
        "unreadable",
    ),
    Bad(
        "an-object-where-the-list-belongs",
        {
            "openai-chat": {"choices": {"0": {}}},
            "openai-responses": {"status": "completed", "output": {"0": {}}},
            "anthropic": {"type": "message", "content": {"0": {}}},
            "google": {"candidates": {"0": {}}},
        },
        "unreadable",
    ),
    Bad(
        "a-transient-error-in-a-200",
        {
            "openai-chat": {"error": {"message": "upstream overloaded", "code": 502}},
            "openai-responses": {
                "status": "failed",
                "error": {"code": "server_error", "message": "upstream overloaded"},
            },
            "anthropic": {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "upstream overloaded"},
            },
            "google": {"error": {"code": 503, "message": "upstream overloaded"}},
        },
        "transient",
    ),
    Bad(
        "a-fatal-error-in-a-200",
        {
            "openai-chat": {"error": {"message": "no such model", "code": 404}},
            "openai-responses": {
                "status": "failed",
                "error": {"code": "invalid_prompt", "message": "no such model"},
            },
            "anthropic": {
                "type": "error",
                "error": {"type": "not_found_error", "message": "no such model"},
            },
            "google": {"error": {"code": 404, "message": "no such model"}},
        },
        "fatal",
    ),
]
HANDLED = [
    Bad(
        "arguments-an-array",
        {b: reply_body(b, arguments=[1, 2]) for b in IDS},
        "reply",
    ),
    Bad(
        "usage-as-text",
        {b: reply_body(b, text="hello", usage=USAGE_AS_TEXT[b]) for b in IDS},
        "reply",
    ),
    Bad("text-a-number", {b: reply_body(b, text=123) for b in IDS}, "reply"),
]


# --------------------------------------------------------------------------- fixtures
@dataclass
class Case:
    backend: Backend
    server: Any
    harness: ProviderHarness
    provider: ModelProvider

    def call(self, config: GenerateConfig | None = None) -> ModelOutput:
        return self.harness.call(self.provider, convo(), config)

    def with_retries(self, attempts: int) -> ModelOutput:
        async def attempt() -> ModelOutput:
            return await self.provider.generate(convo(), TOOLS, GenerateConfig())

        async def no_wait(seconds: float) -> None:
            return None

        return self.harness.loop.run_until_complete(
            call_with_retries(attempt, max_attempts=attempts, rng=random.Random(0), sleep=no_wait)
        )


@pytest.fixture(params=BACKENDS, ids=IDS)
def case(request: pytest.FixtureRequest) -> Iterator[Case]:
    backend: Backend = request.param
    harness = ProviderHarness(lambda server: backend.make(server, backend.key), TOOLS)
    with backend.server(shop_brain) as server:
        try:
            yield Case(backend, server, harness, harness.make(server))
        finally:
            harness.close()


def convo(text: str = "hello") -> list[ChatMessage]:
    return [ChatMessage("system", "You run roaster_A."), ChatMessage("user", text)]


# --------------------------------------------------------------------------- the table
@pytest.mark.parametrize("bad", UNREADABLE, ids=[b.name for b in UNREADABLE])
def test_a_reply_that_is_not_one_is_a_model_error_retried_then_a_clean_stop(
    case: Case, bad: Bad
) -> None:
    body = bad.bodies[case.backend.id]
    case.server.faults.extend([Fault("body", body=body, body_status=bad.status)] * 2)
    with pytest.raises(ModelError) as info:
        case.with_retries(attempts=2)
    error = info.value
    message = str(error)
    assert "\n" not in message and len(message) < 1000 and "Traceback" not in message
    if bad.outcome == "fatal":
        assert isinstance(error, FatalModelError) and not isinstance(error, RetriesExhaustedError)
        assert "no such model" in message and len(case.server.requests) == 1
        return
    assert isinstance(error, RetriesExhaustedError), "retried like a 5xx, then a stop"
    assert isinstance(error.last_error, TransientModelError)
    assert len(case.server.requests) == 2
    if bad.outcome == "unreadable" and bad.status == 200:
        assert "unreadable reply" in message
    if bad.outcome == "transient":
        assert "upstream overloaded" in message
    assert case.call().text == "echo: hello", "the provider still works after it"


@pytest.mark.parametrize("bad", HANDLED, ids=[b.name for b in HANDLED])
def test_what_the_harness_can_handle_is_handled_alike_by_every_provider(
    case: Case, bad: Bad
) -> None:
    case.server.faults.append(Fault("body", body=bad.bodies[case.backend.id]))
    out = case.call()
    if bad.name == "arguments-an-array":
        [call] = out.tool_calls
        assert call.name == "buy" and isinstance(call.arguments, str)
        result = Shop().call(call.name, call.arguments)
        assert result["status"] == "error" and "JSON array" in result["error"]
    elif bad.name == "usage-as-text":
        assert out.text == "hello"
        assert out.usage.invalid == ("input_tokens",) and out.usage.output_tokens == 12
        assert out.cost_usd is None
    else:
        assert out.text == "" and out.tool_calls == []


# --------------------------------------------------------------------------- the deadline
def test_a_server_trickling_bytes_meets_the_calls_one_deadline(case: Case) -> None:
    """A byte every 0.3 s never trips a per-read timeout of 1 s; the call's deadline does."""
    case.server.faults.append(Fault("trickle", seconds=0.3))
    started = time.monotonic()
    with pytest.raises(TransientModelError, match="timed out after 1s"):
        case.call(GenerateConfig(timeout_s=1.0))
    assert time.monotonic() - started < 6, "bounded by the deadline, not by the reply's length"
    assert case.call().text == "echo: hello", "the next call gets a fresh connection"


# --------------------------------------------------------------------------- the size cap
def test_a_reply_too_large_to_keep_is_cut_marked_and_still_replays(case: Case) -> None:
    big = "x" * 600_000

    def brain(request: BrainRequest) -> BrainReply:
        last = request.messages[-1]
        return BrainReply(text=big if last["content"] == "hello" else "ok")

    case.server.brain = brain
    out = case.call()
    assert len(out.text.encode()) <= boundary.MAX_REPLY_TEXT_BYTES
    assert out.text.startswith("xxx") and out.text.endswith("bytes, the rest not kept]")
    assert out.truncated is not None and "text" in out.truncated["parts"]
    assert out.truncated["original_bytes"] >= 600_000 > out.truncated["kept_bytes"]
    stored = json.dumps(output_to_dict(out))
    assert len(stored) < 600_000, "no uncut copy in provider_data either"
    again = case.harness.call(
        case.provider, [*convo(), out.as_message(), ChatMessage("user", "next")]
    )
    assert again.text == "ok" and again.truncated is None
    assert big not in json.dumps(case.server.requests[-1]["body"]), "the cut text is resent"


def test_the_cap_bounds_text_reasoning_calls_and_provider_data_and_is_idempotent() -> None:
    calls = [ToolCall("buy", {"qty": i, "note": "n" * 10_000}, f"c{i}") for i in range(100)]
    output = ModelOutput(
        model="m",
        text="é" * 300_000,  # two bytes each: the limit counts bytes
        reasoning="r" * 300_000,
        tool_calls=calls,
        provider_data={"p": {"signature": "s" * 2_000_000}},
    )
    out = boundary.checked_output(output, "p/m")
    assert len(out.text.encode()) <= boundary.MAX_REPLY_TEXT_BYTES
    assert len(out.reasoning.encode()) <= boundary.MAX_REPLY_TEXT_BYTES
    assert out.tool_calls[0] == calls[0] and len(out.tool_calls) < boundary.MAX_REPLY_CALLS
    assert out.provider_data is None, "a signed value is dropped whole, never cut"
    assert out.truncated["parts"] == ["text", "reasoning", "tool_calls", "provider_data"]
    assert out.truncated["original_bytes"] > 3_000_000 > out.truncated["kept_bytes"]
    before = output_to_dict(out) | {"truncated": dict(out.truncated)}
    again = boundary.checked_output(out, "p/m")
    assert output_to_dict(again) == before, "checking again changes nothing"
    assert output_from_dict(output_to_dict(out)).truncated == out.truncated, "kept in records"


def test_a_reply_within_the_limits_is_left_as_it_is() -> None:
    output = ModelOutput(model="m", text="t" * 60_000, provider_data={"x": {"text": "t"}})
    assert boundary.checked_output(output, "p/m").truncated is None
    assert output.text == "t" * 60_000


def test_the_event_recording_a_cut_call_says_so() -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    model = ScriptedModel("big", outputs=[ModelOutput(model="big", text="x" * 1_000_000)])
    agent = LLMAgent(model, system_prompt="s", render_observation=str, on_event=_collect(events))
    agent.start("roaster_A", "roaster", [])
    asyncio.run(agent.advance())
    [(kind, event)] = events
    assert kind == "model_call" and event["truncated"]["original_bytes"] == 1_000_000
    assert len(event["text"]) <= boundary.MAX_REPLY_TEXT_BYTES


def test_allobench_keeps_the_note_of_a_cut_reply_in_the_reply_record() -> None:
    from econbench.agents.policy import UserText
    from econbench.runs.allo.llm_actor import LLMActor

    model = ScriptedModel("big", outputs=[ModelOutput(model="big", text="x" * 1_000_000)])
    loop = asyncio.new_event_loop()
    try:
        actor = LLMActor(
            LLMAgent(model, system_prompt="s", render_observation=str), loop, ModelSettings()
        )
        actor.start("seed-1", "allocator", [], system_prompt="s")
        reply = actor.respond([UserText("go")])
    finally:
        loop.close()
    [note] = reply.events
    assert note["type"] == "reply_truncated" and note["original_bytes"] == 1_000_000
    assert note["parts"] == ["text"]


def _collect(events: list[tuple[str, dict[str, Any]]]) -> Any:
    return lambda kind, data: events.append((kind, data))


# --------------------------------------------------------------------------- Gemini hops
def test_a_gemini_reply_cut_at_the_per_request_limit_is_continued() -> None:
    backend = BY_ID["google"]
    harness = ProviderHarness(lambda server: backend.make(server, backend.key), TOOLS)
    with FakeGeminiServer(shop_brain) as server:
        try:
            server.faults.append(Fault("continuation"))
            out = harness.call(harness.make(server), convo())
        finally:
            harness.close()
    assert out.text == "echo: hello" and out.stop_reason == "stop"
    assert len(server.requests) == 2 and "continuationToken" in server.requests[1]["body"]
    meta = server.usages[0]
    assert out.usage.output_tokens == meta["candidatesTokenCount"]  # both hops, summed
    assert out.usage.input_tokens == meta["promptTokenCount"]


# --------------------------------------------------------------------------- whole runs
RUNS = {
    # name: (model, server, base-URL variable, URL suffix, the body every attempt gets)
    "json-100k-deep": ("openai/gpt-5.5", FakeOpenAIServer, "OPENAI_BASE_URL", "/v1", DEEP_ARRAY),
    "no-choices": (
        "openai-compatible/m",
        FakeOpenAIServer,
        "OPENAI_BASE_URL",
        "/v1",
        {"id": "chatcmpl_1", "choices": []},
    ),
    "anthropic-error-in-a-200": (
        "anthropic/claude-sonnet-4-6",
        FakeAnthropicServer,
        "ANTHROPIC_BASE_URL",
        "",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ),
}


def _wait_brain(request: BrainRequest) -> BrainReply:
    if not request.tools:
        return BrainReply(text="Summary.")
    return BrainReply(tool_calls=[{"name": "wait_for_next_day", "arguments": {}}])


def _run_args(model: str, out: Path, config: Path) -> list[str]:
    return [
        "coffee", "run", "--days", "2", "--agent", f"roaster_A={model}",
        "--config", str(config), "--out", str(out), "--quiet",
    ]  # fmt: skip


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_a_run_whose_model_never_replies_stops_with_one_line_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    model, server_class, url_var, suffix, body = RUNS[kind]
    config = tmp_path / "run.toml"
    config.write_text(f'[models."{model}"]\nmax_retries = 1\nmax_backoff_s = 0.01\n')
    out = tmp_path / "run"
    with server_class(_wait_brain) as server:
        monkeypatch.setenv(url_var, server.root_url + suffix)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123456789")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key-0123456789")
        server.faults.extend([Fault("body", body=body)] * 2)
        first = runner.invoke(app, _run_args(model, out, config))
        assert first.exit_code != 0 and "Traceback" not in first.output, first.output
        assert "gave up after 2 attempts" in first.output, first.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["status"] == "stopped"
        assert "\n" not in summary["stopped"]["error"]
        second = runner.invoke(app, ["resume", str(out), "--quiet"])
        assert second.exit_code == 0, second.output
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"


def test_a_ten_megabyte_reply_does_not_grow_the_run_directory_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = "y" * 10_000_000
    asked = [0]

    def brain(request: BrainRequest) -> BrainReply:
        if not request.tools:
            return BrainReply(text="Summary.")
        asked[0] += 1
        call = {"name": "wait_for_next_day", "arguments": {}}
        return BrainReply(text=huge if asked[0] == 1 else "", tool_calls=[call])

    out, config = tmp_path / "run", tmp_path / "run.toml"
    config.write_text("")
    with FakeOpenAIServer(brain) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.root_url + "/v1")
        result = runner.invoke(app, _run_args("openai-compatible/m", out, config))
    assert result.exit_code == 0, result.output
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert size < 4_000_000, f"the run directory holds {size:,} bytes"
    events = [json.loads(line) for line in (out / "events.jsonl").open()]
    [cut] = [e for e in events if e["type"] == "model_call" and "truncated" in e]
    assert cut["truncated"]["original_bytes"] >= 10_000_000
    assert cut["truncated"]["kept_bytes"] < boundary.MAX_REPLY_TEXT_BYTES + 10_000


# --------------------------------------------------------------------------- base URLs
BASE_URL_VARS = [
    ("openai/gpt-5.5", "OPENAI_BASE_URL"),
    ("openai-compatible/m", "OPENAI_BASE_URL"),
    ("anthropic/claude-sonnet-4-6", "ANTHROPIC_BASE_URL"),
    ("google/gemini-3.1-pro", "GOOGLE_GEMINI_BASE_URL"),
]
BAD_URLS = ["http://[::1", "http://127.0.0.1:99999/v1", "127.0.0.1:8000/v1", "http://"]


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize(("model", "var"), BASE_URL_VARS)
def test_a_base_url_variable_that_does_not_parse_is_one_configuration_error(
    monkeypatch: pytest.MonkeyPatch, model: str, var: str, url: str
) -> None:
    from econbench.agents.models.registry import build_provider, check_keys

    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(key, "sk-test-not-a-real-key-0123456789")
    monkeypatch.setenv(var, url)
    for attempt in (lambda: check_keys([model]), lambda: build_provider(model)):
        with pytest.raises(ModelConfigError) as info:
            attempt()
        message = str(info.value)
        assert var in message and "\n" not in message and "http(s) URL" in message


@pytest.mark.parametrize(
    ("backend", "var"),
    [(b.id, b.info.base_url_env) for b in BACKENDS if b.info.base_url_env],
)
def test_a_provider_built_directly_checks_the_variable_its_sdk_reads(
    monkeypatch: pytest.MonkeyPatch, backend: str, var: str
) -> None:
    monkeypatch.setenv(var, "http://[::1")
    server = type("NoServer", (), {"base_url": None, "root_url": None})()
    with pytest.raises(ModelConfigError, match=var):
        BY_ID[backend].make(server, "sk-test-not-a-real-key-0123456789")


def test_a_base_url_setting_that_does_not_parse_is_refused_when_read() -> None:
    with pytest.raises(ValueError, match="base_url must be an http"):
        ModelSettings(base_url="http://[::1")
    assert ModelSettings(base_url="http://[::1]:8000/v1").base_url == "http://[::1]:8000/v1"


def test_the_cli_says_so_in_one_line_before_any_run_directory_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://[::1")
    out = tmp_path / "run"
    args = ["coffee", "run", "--days", "1", "--agent", "roaster_A=openai/gpt-5.5"]
    result = runner.invoke(app, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "OPENAI_BASE_URL" in result.output and len(result.output.strip().splitlines()) == 1
    assert not out.exists()
