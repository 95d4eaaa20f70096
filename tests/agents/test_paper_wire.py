"""``request_style = "paper"``: econbench sends, byte for byte, the bodies the paper's RawChat sent.

The test data (``data/paper_bodies.json``) are request bodies of the conformance fixture
(``tests/allo/data/paper_requests``), each exactly as the paper's code sent it through the
real SDKs: Anthropic without and with tools (replies with text only, one call, two calls;
tool results then the next problem; tool results last; a reply after tool results with no
text between), OpenAI (GPT-5 family, effort "none") and Ollama (effort "none" without tools,
none with; a re-ask after a pruned reply). For each, the same conversation is played through
``LLMAgent`` and the real SDK against the fake servers, the model's replies being the
assistant turns of the body, and the last request must arrive as the same bytes.

No difference had to be allowed: both SDKs write the body's keys in their own fixed order
(Anthropic: max_tokens, messages, model, system, tool_choice, tools; OpenAI: model, messages,
max_completion_tokens, reasoning_effort, temperature, tool_choice, tools), whatever order the
caller passes them in, and serialise with ``separators=(",", ":"), ensure_ascii=False``.

Below them: the paper's rules that no fixture body shows (a reasoning model without an
explicit effort, a non-reasoning OpenAI model, the vLLM branch, temperature), and that the
econbench style is unchanged (its tool choice is new and sent only when set).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models.base import ChatMessage, GenerateConfig
from econbench.agents.models.errors import ModelConfigError
from econbench.agents.models.record import config_dict
from econbench.agents.models.registry import ModelSettings, build_provider
from econbench.agents.policy import Input, ToolResult, UserText
from econbench.agents.react import LLMAgent
from econbench.agents.tools import ToolCall, ToolParameter, ToolSpec

DATA = json.loads((Path(__file__).parent / "data" / "paper_bodies.json").read_text("utf-8"))
BODIES = {entry["name"]: entry for entry in DATA["bodies"]}


def wire(body: dict[str, Any]) -> bytes:
    """A body as the SDKs put it on the wire (and as the fixture's raw_sha256 hashes it)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


# --------------------------------------------------------------------------- the body, read back
@dataclass
class Turn:
    kind: str  # "user" | "tool" | "assistant"
    text: str = ""
    call_id: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Assistant turns: id, name, arguments (Anthropic: the input dict; OpenAI: the raw text)."""


def _read_anthropic(body: dict[str, Any]) -> tuple[str, list[Turn], list[tuple[str, str, dict]]]:
    turns: list[Turn] = []
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if message["role"] == "assistant":
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
            calls = [
                {"id": b["id"], "name": b["name"], "arguments": b["input"]}
                for b in blocks
                if b["type"] == "tool_use"
            ]
            turns.append(Turn("assistant", text, calls=calls))
            continue
        for block in blocks:
            if block["type"] == "tool_result":
                turns.append(Turn("tool", block["content"], call_id=block["tool_use_id"]))
            else:
                turns.append(Turn("user", block["text"]))
    tools = [(t["name"], t["description"], t["input_schema"]) for t in body.get("tools", [])]
    return body["system"], turns, tools


def _read_openai(body: dict[str, Any]) -> tuple[str, list[Turn], list[tuple[str, str, dict]]]:
    system, *messages = body["messages"]
    assert system["role"] == "system"
    turns: list[Turn] = []
    for message in messages:
        if message["role"] == "assistant":
            calls = [
                {
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "arguments": c["function"]["arguments"],
                }
                for c in message.get("tool_calls", [])
            ]
            turns.append(Turn("assistant", message["content"], calls=calls))
        elif message["role"] == "tool":
            turns.append(Turn("tool", message["content"], call_id=message["tool_call_id"]))
        else:
            turns.append(Turn("user", message["content"]))
    tools = [
        (t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in body.get("tools", [])
    ]
    return system["content"], turns, tools


def spec_for(name: str, description: str, schema: dict[str, Any]) -> ToolSpec:
    """A tool taking exactly the schema's properties, shown to the model with that schema."""
    required = schema.get("required", [])
    signature = tuple(
        ToolParameter(p, Any, ... if p in required else None, None)
        for p in schema.get("properties", {})
    )
    spec = ToolSpec(name, "write", description, [], lambda **kw: {}, signature)
    return spec.with_schema(schema)


class Script:
    """The model: answers each request with the next assistant turn of the body."""

    def __init__(self, turns: list[Turn]) -> None:
        self.replies = [t for t in turns if t.kind == "assistant"]

    def __call__(self, request: BrainRequest) -> BrainReply:
        if not self.replies:
            return BrainReply(text="(the end)")
        turn = self.replies.pop(0)
        return BrainReply(text=turn.text, tool_calls=[dict(c) for c in turn.calls])


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test")


def play(entry: dict[str, Any], server: Any, url: str) -> list[bytes]:
    """Play the body's conversation through ``LLMAgent``; the raw bodies the server got."""
    anthropic = entry["model"].startswith("anthropic/")
    system, turns, tool_rows = (_read_anthropic if anthropic else _read_openai)(entry["body"])
    server.brain = Script(turns)
    settings = ModelSettings(
        request_style="paper", base_url=url, max_retries=0, **entry["settings"]
    )
    provider = build_provider(entry["model"], settings)
    agent = LLMAgent(
        provider,
        system_prompt="",
        render_observation=str,
        render_result=lambda result: result["content"],
        config=settings.generate_config(),
        tool_choice=entry["tool_choice"],
    )
    tools = [spec_for(*row) for row in tool_rows]
    agent.start("seed-2000", "player", tools, system_prompt=system, max_tokens=entry["max_tokens"])
    names: dict[str, str] = {}
    inputs: list[Input] = []
    loop = asyncio.new_event_loop()
    try:
        for turn in turns:
            if turn.kind == "assistant":
                reply = loop.run_until_complete(agent.arespond(inputs))
                inputs = []
                assert reply.text == turn.text
                assert [c.call_id for c in reply.tool_calls] == [c["id"] for c in turn.calls]
                names.update({c["id"]: c["name"] for c in turn.calls})
            elif turn.kind == "tool":
                assert turn.call_id is not None
                result = {"content": turn.text}
                inputs.append(ToolResult(names[turn.call_id], result, call_id=turn.call_id))
            else:
                inputs.append(UserText(turn.text))
        loop.run_until_complete(agent.arespond(inputs))
        loop.run_until_complete(provider.inner.aclose())
    finally:
        loop.close()
    return list(server.raw_bodies)


@contextlib.contextmanager
def _server(entry: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    if entry["model"].startswith("anthropic/"):
        with FakeAnthropicServer(Script([])) as server:
            yield server, server.root_url
    else:
        with FakeOpenAIServer(Script([])) as server:
            yield server, server.base_url


# --------------------------------------------------------------------------- byte for byte
@pytest.mark.parametrize("name", sorted(BODIES))
def test_the_paper_style_sends_the_papers_body_byte_for_byte(name: str, keys: None) -> None:
    entry = BODIES[name]
    expected = wire(entry["body"])
    with _server(entry) as (server, url):
        sent = play(entry, server, url)
    assert len(sent) == 1 + sum(1 for m in entry["body"]["messages"] if m["role"] == "assistant"), (
        "one request per reply, then the last one"
    )
    assert sent[-1] == expected, _first_difference(sent[-1], expected)


def _first_difference(sent: bytes, expected: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(sent, expected, strict=False)) if a != b), None)
    at = min(len(sent), len(expected)) if at is None else at
    near = slice(max(at - 80, 0), at + 80)
    return f"first difference at byte {at}: sent {sent[near]!r}, paper {expected[near]!r}"


def test_the_test_data_are_the_fixtures_bytes() -> None:
    """Each body re-serialises to the bytes the paper's server received (their sha256)."""
    import hashlib

    for entry in DATA["bodies"]:
        assert hashlib.sha256(wire(entry["body"])).hexdigest() == entry["raw_sha256"]


def test_the_covered_shapes_are_there() -> None:
    """The data hold what the brief asks for: text-only replies, one call, two calls, tool
    results then a user text, tool results last, and each provider form."""
    r1 = BODIES["anthropic_r1_tools"]["body"]["messages"]
    kinds = [
        (
            m["role"],
            tuple(b["type"] for b in m["content"]) if isinstance(m["content"], list) else "str",
        )
        for m in r1
    ]
    assert ("assistant", ("text",)) in kinds
    assert ("assistant", ("text", "tool_use")) in kinds
    assert ("assistant", ("text", "tool_use", "tool_use")) in kinds
    follows = [kinds[i + 1] for i, k in enumerate(kinds[:-1]) if k[1] == ("tool_result",)]
    assert ("user", "str") in follows  # the next problem: a separate user message
    last = BODIES["anthropic_r3_last_result"]["body"]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result"]
    assert "cache_control" in last[-1] and "cache_control" not in last[0]
    gpt = BODIES["openai_r3_last_results"]["body"]["messages"]
    assert [m["role"] for m in gpt[-3:]] == ["assistant", "tool", "tool"]
    reask = [m["role"] for m in BODIES["ollama_r1_reask"]["body"]["messages"]]
    assert ["user", "user"] in [reask[i : i + 2] for i in range(len(reask) - 1)]


# --------------------------------------------------------------------------- rules, one by one
def _request(model: str, settings: dict[str, Any], tools: list[ToolSpec], **config: Any) -> Any:
    """The body the provider sends for a tiny conversation (read back from a fake server)."""
    with FakeOpenAIServer(lambda r: BrainReply(text="ok")) as server:
        full = ModelSettings(base_url=server.base_url, request_style="paper", **settings)
        provider = build_provider(model, full)
        messages = [ChatMessage("system", "S"), ChatMessage("user", "U")]
        cfg = replace(full.generate_config(), **config)
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(provider.generate(messages, tools, cfg))
            loop.run_until_complete(provider.inner.aclose())
        finally:
            loop.close()
        return server.raw_bodies[-1]


NOOP = spec_for("noop", "Do nothing.", {"type": "object", "properties": {}})
MSGS = '"messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}]'
TOOLS = (
    '"tools":[{"type":"function","function":{"name":"noop","description":"Do nothing.",'
    '"parameters":{"type":"object","properties":{}}}}]'
)


def test_a_reasoning_model_without_an_effort_gets_low_and_4000_tokens(keys: None) -> None:
    gpt = "openai/gpt-5.4-mini-2026-03-17"
    body = _request(gpt, {}, [], max_tokens=512)
    assert (
        body
        == (
            '{"model":"gpt-5.4-mini-2026-03-17",' + MSGS + ',"max_completion_tokens":4000,'
            '"reasoning_effort":"low"}'
        ).encode()
    )
    body = _request(gpt, {"reasoning_effort": "medium"}, [NOOP], max_tokens=6000)
    assert (
        body
        == (
            '{"model":"gpt-5.4-mini-2026-03-17",' + MSGS + ',"max_completion_tokens":6000,'
            '"reasoning_effort":"medium","tool_choice":"auto",' + TOOLS + "}"
        ).encode()
    )


def test_a_model_that_does_not_reason_gets_no_effort_and_its_own_limit(
    keys: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        body = _request("openai/gpt-4.1", {"reasoning_effort": "high"}, [NOOP], max_tokens=700)
    assert (
        body
        == (
            '{"model":"gpt-4.1",'
            + MSGS
            + ',"max_completion_tokens":700,"tool_choice":"auto",'
            + TOOLS
            + "}"
        ).encode()
    )
    assert "reasoning_effort=high is not sent" in caplog.text


def test_the_temperature_is_sent_only_when_set_in_the_sdks_place(keys: None) -> None:
    body = _request("openai/gpt-4.1", {}, [NOOP], max_tokens=100, temperature=0.0)
    assert (
        body
        == (
            '{"model":"gpt-4.1",' + MSGS + ',"max_completion_tokens":100,"temperature":0.0,'
            '"tool_choice":"auto",' + TOOLS + "}"
        ).encode()
    )


def test_ollama_and_vllm_branches(keys: None) -> None:
    qwen = "openai-compatible/qwen2.5:7b"
    ollama, vllm = {"compat": "ollama"}, {"compat": "vllm"}
    head = '{"model":"qwen2.5:7b",' + MSGS + ',"max_completion_tokens":1200'
    # without tools Ollama gets effort "none" whatever was configured; with tools none at all
    assert _request(qwen, ollama, []) == (head + ',"reasoning_effort":"none"}').encode()
    assert (
        _request(qwen, ollama, [NOOP], tool_choice="required")
        == (head + ',"tool_choice":"required",' + TOOLS + "}").encode()
    )
    # vLLM (and every other compatible profile): no effort for a local name
    assert _request(qwen, vllm, []) == (head + "}").encode()
    assert _request(qwen, {}, [NOOP]) == (head + ',"tool_choice":"auto",' + TOOLS + "}").encode()
    # a reasoning name on the vLLM branch: the paper's chat() rule applies by name
    body = _request("openai-compatible/o3-mini", vllm, [])
    assert b'"max_completion_tokens":4000,"reasoning_effort":"low"' in body


def test_anthropic_paper_rules(keys: None, caplog: pytest.LogCaptureFixture) -> None:
    """No effort, no thinking, the paper's 1200 default, the tool-choice mapping."""
    with FakeAnthropicServer(lambda r: BrainReply(text="ok")) as server:
        settings = ModelSettings(
            base_url=server.root_url, request_style="paper", reasoning_effort="high"
        )
        provider = build_provider("anthropic/claude-haiku-4-5-20251001", settings)
        messages = [ChatMessage("system", "S"), ChatMessage("user", "U")]
        loop = asyncio.new_event_loop()
        try:
            with caplog.at_level(logging.WARNING):
                loop.run_until_complete(provider.generate(messages, [], settings.generate_config()))
            cfg = replace(settings.generate_config(), tool_choice="required", max_tokens=99)
            loop.run_until_complete(provider.generate(messages, [NOOP], cfg))
            loop.run_until_complete(provider.inner.aclose())
        finally:
            loop.close()
    first, second = server.raw_bodies
    assert first == (
        b'{"max_tokens":1200,"messages":[{"role":"user","content":[{"type":"text","text":"U",'
        b'"cache_control":{"type":"ephemeral"}}]}],"model":"claude-haiku-4-5-20251001",'
        b'"system":"S"}'
    )
    assert (
        b'"tool_choice":{"type":"any"},"tools":[{"name":"noop","description":"Do nothing.",'
        in second
    )
    assert b'"max_tokens":99,' in second
    assert "reasoning_effort=high is not sent" in caplog.text
    with pytest.raises(ModelConfigError, match="thinking"):
        build_provider(
            "anthropic/claude-haiku-4-5-20251001",
            ModelSettings(request_style="paper", thinking_budget=2048),
        )


def test_replayed_arguments_are_the_models_text(keys: None) -> None:
    """An OpenAI model's arguments go back as it wrote them (spacing, key order, escapes),
    not re-serialised; an edited call falls back to the paper's json.dumps."""
    written = '{ "b":1,"a" : "\\u00e9" }'
    replies = [
        BrainReply(tool_calls=[{"id": "c1", "name": "pick", "arguments": written}]),
        BrainReply(text="done"),
        BrainReply(text="done again"),
    ]
    pick = spec_for("pick", "Pick.", {"type": "object", "properties": {"a": {}, "b": {}}})
    with FakeOpenAIServer(lambda r: replies.pop(0)) as server:
        settings = ModelSettings(base_url=server.base_url, request_style="paper")
        provider = build_provider("openai/gpt-4.1", settings)
        agent = LLMAgent(
            provider, system_prompt="S", render_observation=str, config=settings.generate_config()
        )
        agent.start("a", "r", [pick])
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(agent.arespond([UserText("go")]))
            loop.run_until_complete(agent.arespond([ToolResult("pick", {"ok": True}, "c1")]))
            edited = ChatMessage(
                "assistant", "", tool_calls=[ToolCall("pick", {"b": 2, "a": "x"}, "c2")]
            )
            edited.provider_data = agent.messages[2].provider_data  # stale: says b=1
            loop.run_until_complete(
                provider.generate(
                    [
                        ChatMessage("system", "S"),
                        edited,
                        ChatMessage("tool", "r", tool_call_id="c2"),
                    ],
                    [pick],
                    settings.generate_config(),
                )
            )
            loop.run_until_complete(provider.inner.aclose())
        finally:
            loop.close()
    second = json.loads(server.raw_bodies[1])
    assert second["messages"][2]["tool_calls"][0]["function"]["arguments"] == written
    assert second["messages"][2]["content"] == ""
    assert second["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": '{"ok":true}'}
    third = json.loads(server.raw_bodies[2])
    assert third["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"b": 2, "a": "x"}'


def test_retract_last_prunes_the_same_messages_under_the_paper_style(keys: None) -> None:
    """A reply without a call and its prompt are forgotten; the re-ask is sent as the paper's
    efr re-ask is: results, then the reminder as its own user message."""
    replies = [
        BrainReply(text="t", tool_calls=[{"id": "toolu_1", "name": "noop", "arguments": {}}]),
        BrainReply(text="thinking..."),
        BrainReply(text="ok"),
    ]
    with FakeAnthropicServer(lambda r: replies.pop(0)) as server:
        settings = ModelSettings(base_url=server.root_url, request_style="paper")
        provider = build_provider("anthropic/claude-haiku-4-5-20251001", settings)
        agent = LLMAgent(
            provider,
            system_prompt="S",
            render_observation=str,
            render_result=lambda r: json.dumps(r),
            config=settings.generate_config(),
        )
        agent.start("a", "r", [NOOP], max_tokens=10)
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(agent.arespond([UserText("P1")]))
            result = ToolResult("noop", {"ok": True}, "toolu_1")
            loop.run_until_complete(agent.arespond([result, UserText("P2")]))
            assert agent.retract_last(0)  # the reply without a call goes, P2 stays
            loop.run_until_complete(agent.arespond([UserText("Remember: call a tool.")]))
            loop.run_until_complete(provider.inner.aclose())
        finally:
            loop.close()
    last = json.loads(server.raw_bodies[-1])["messages"]
    assert last == [
        {"role": "user", "content": "P1"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "t"},
                {"type": "tool_use", "id": "toolu_1", "name": "noop", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"ok": true}'}
            ],
        },
        {"role": "user", "content": "P2"},
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "Remember: call a tool.",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        },
    ]


# --------------------------------------------------------------------------- settings
def test_request_style_is_written_only_when_paper() -> None:
    assert "request_style" not in ModelSettings().model_dump()
    assert "request_style" not in ModelSettings(request_style="econbench").model_dump()
    assert ModelSettings(request_style="paper").model_dump()["request_style"] == "paper"
    assert ModelSettings(request_style="paper").generate_config().request_style == "paper"
    with pytest.raises(ValueError):
        ModelSettings(request_style="raw")  # type: ignore[arg-type]


def test_new_config_fields_leave_old_keys_alone() -> None:
    """Recordings and caches made before ``tool_choice`` and ``request_style`` still match."""
    assert config_dict(GenerateConfig(max_tokens=5)) == {
        "temperature": None,
        "max_tokens": 5,
        "reasoning_effort": None,
        "thinking_budget": None,
        "extra": {},
    }
    assert config_dict(GenerateConfig(tool_choice="required"))["tool_choice"] == "required"
    assert config_dict(GenerateConfig(request_style="paper"))["request_style"] == "paper"


def test_paper_style_applies_where_the_paper_has_a_form(keys: None) -> None:
    with pytest.raises(ModelConfigError, match="applies only to"):
        build_provider("google/gemini-2.5-flash", ModelSettings(request_style="paper"))
    with pytest.raises(ModelConfigError, match="Chat Completions"):
        build_provider("openai/gpt-4.1", ModelSettings(request_style="paper", api="responses"))
    chat = build_provider("openai/gpt-4.1", ModelSettings(request_style="paper"))
    assert type(chat.inner).__name__ == "OpenAIChatProvider"
    default = build_provider("openai/gpt-4.1", ModelSettings())
    assert type(default.inner).__name__ == "OpenAIResponsesProvider"


# --------------------------------------------------------------------------- econbench style
def test_econbench_style_sends_tool_choice_only_when_set(keys: None) -> None:
    """Anthropic: no tool_choice unless configured (as before), then Anthropic's form."""
    with FakeAnthropicServer(lambda r: BrainReply(text="ok")) as server:
        provider = build_provider(
            "anthropic/claude-haiku-4-5-20251001", ModelSettings(base_url=server.root_url)
        )
        messages = [ChatMessage("system", "S"), ChatMessage("user", "U")]
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(provider.generate(messages, [NOOP], GenerateConfig()))
            loop.run_until_complete(
                provider.generate(messages, [NOOP], GenerateConfig(tool_choice="required"))
            )
            loop.run_until_complete(provider.inner.aclose())
        finally:
            loop.close()
    plain, chosen = (json.loads(raw) for raw in server.raw_bodies)
    assert "tool_choice" not in plain
    assert chosen["tool_choice"] == {"type": "any"}
    assert isinstance(plain["system"], list)  # econbench's own form, unchanged
