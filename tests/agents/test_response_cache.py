"""The response cache: an identical request is served free, anything else goes to the model."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.openai_server import FakeOpenAIServer

from econbench.agents.models.base import ChatMessage, GenerateConfig, ModelOutput, Usage
from econbench.agents.models.cache import (
    CachedProvider,
    ResponseCache,
    cache_identity,
    cache_path_from_option,
    default_cache_path,
)
from econbench.agents.models.registry import ModelSettings, PricedProvider
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.models.wraps import make_provider_wrap
from econbench.agents.policy import Feedback
from econbench.agents.react import LLMAgent
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.coffee.events import MemorySink
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.layout import EVENTS, RECORD, SUMMARY
from econbench.runs.replay import replay_run


def sell(price: float) -> dict:
    """List coffee for sale.

    Args:
        price: Price per kilogram.
    """
    return {"status": "ok"}


TOOLS = [ToolSpec.from_function(sell)]


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def priced_model(**kwargs) -> PricedProvider:
    """A scripted model priced as gpt-5.5, answering from its brain, counting its calls."""
    reply = ModelOutput(
        model="gpt-5.5",
        text="Listing.",
        tool_calls=[ToolCall("sell", {"price": 9.5}, "call_1")],
        usage=Usage(input_tokens=2000, cached_input_tokens=500, output_tokens=30),
        stop_reason="tool_calls",
        provider_data={"openai_responses": {"output": [{"type": "reasoning", "id": "rs_1"}]}},
    )
    inner = ScriptedModel("m", brain=lambda messages, tools: reply)
    return PricedProvider(inner, name="openai/gpt-5.5", **kwargs)


def ask(provider, text: str = "price?", **config) -> ModelOutput:
    messages = [ChatMessage("system", "You sell coffee."), ChatMessage("user", text)]
    return run(provider.generate(messages, TOOLS, GenerateConfig(**config)))


def test_an_identical_request_is_a_free_hit_with_the_same_reply_and_usage(tmp_path) -> None:
    model = priced_model()
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cached = CachedProvider(model, cache)
        first = ask(cached)
        second = ask(cached, timeout_s=3.0)  # the timeout does not shape the reply
        assert model.inner.calls == 1
        assert first.cost_usd and first.cost_usd > 0 and not first.cache_hit
        assert second.cache_hit and second.cost_usd == 0.0
        assert second.usage == first.usage
        assert (second.text, second.tool_calls, second.provider_data) == (
            first.text,
            first.tool_calls,
            first.provider_data,
        )
        assert cached.stats.hits == 1 and cached.stats.misses == 1


def test_a_cached_hostile_reply_is_stored_and_served_cleaned_the_same_every_time(
    tmp_path,
) -> None:
    """A reply with lone surrogates and deep arguments once made the cache (UTF-8 SQLite)
    raise, and, served again after a resume, crash the run again."""
    deep: object = 0
    for _ in range(40):  # parses and copies; deeper than the harness keeps (32)
        deep = [deep]
    reply = ModelOutput(
        model="gpt-5.5",
        text="caf\ud800",
        reasoning="\udfff",
        tool_calls=[ToolCall("sell", {"price": deep, "\ud83dnote": "x"}, "call_\udc00")],
        usage=Usage(input_tokens=2000, output_tokens=30),
        provider_data={"openai_chat": {"response_id": "r\ud800"}},
    )
    inner = ScriptedModel("m", brain=lambda messages, tools: reply)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        first = ask(CachedProvider(PricedProvider(inner, name="openai/gpt-5.5"), cache))
    with ResponseCache(tmp_path / "cache.sqlite") as cache:  # a resumed run, another process
        again = ask(CachedProvider(PricedProvider(inner, name="openai/gpt-5.5"), cache))
    assert inner.calls == 1 and again.cache_hit
    assert (again.text, again.reasoning, again.tool_calls) == (
        first.text,
        first.reasoning,
        first.tool_calls,
    )
    assert again.text == "caf\ufffd" and again.reasoning == "\ufffd"
    [call] = again.tool_calls
    assert call.call_id == "call_\ufffd" and isinstance(call.arguments, str)
    assert again.provider_data == {"openai_chat": {"response_id": "r\ufffd"}}


def test_any_change_to_the_request_is_a_miss(tmp_path) -> None:
    model = priced_model()
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cached = CachedProvider(model, cache)
        ask(cached)
        ask(cached, temperature=0.7)
        ask(cached, max_tokens=100)
        ask(cached, text="price now?")
        run(cached.generate([ChatMessage("user", "price?")], [], GenerateConfig()))
        assert model.inner.calls == 5 and cached.stats.hits == 0
        assert len(cache) == 5
        later = CachedProvider(priced_model(), cache)  # another run, the same model
        ask(later, max_tokens=100)
        assert later.stats.hits == 1 and later.inner.inner.calls == 0


def test_the_same_model_on_another_server_is_another_model(tmp_path) -> None:
    local = priced_model(settings=ModelSettings(base_url="http://127.0.0.1:8001/v1"))
    remote = priced_model(settings=ModelSettings(base_url="http://127.0.0.1:8002/v1"))
    assert cache_identity(local) != cache_identity(remote)
    assert cache_identity(priced_model()) == "openai/gpt-5.5"
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        ask(CachedProvider(local, cache))
        ask(CachedProvider(remote, cache))
    assert local.inner.calls == remote.inner.calls == 1


def test_the_model_call_event_marks_a_hit_and_only_a_hit(tmp_path) -> None:
    events: list[dict] = []
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        for _ in range(2):
            agent = LLMAgent(
                CachedProvider(priced_model(), cache),
                system_prompt="You sell coffee.",
                render_observation=json.dumps,
                on_event=lambda kind, data: events.append(data),
            )
            agent.start("roaster_A", "roaster", TOOLS)
            agent.decide(Feedback(observation={"day": 1}))
            stats = agent.stats.to_dict()
    assert "cache_hit" not in events[0] and events[0]["cost_usd"] > 0
    assert events[1]["cache_hit"] is True and events[1]["cost_usd"] == 0.0
    assert events[1]["usage"] == events[0]["usage"]
    assert stats["cost_usd"] == 0.0 and stats["input_tokens"] == 2000


def test_the_cache_location_option(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "econbench" / "responses.sqlite"
    assert cache_path_from_option(None) is None
    assert cache_path_from_option("") == default_cache_path()
    assert cache_path_from_option("default") == default_cache_path()
    assert cache_path_from_option("runs/c.sqlite") == Path("runs/c.sqlite")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_path_from_option("~/c.sqlite") == tmp_path / "home" / "c.sqlite"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_path() == tmp_path / "home" / ".cache" / "econbench" / "responses.sqlite"


def test_a_file_that_is_not_a_cache_is_refused(tmp_path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database, just text that is long enough to have a header" * 20)
    with pytest.raises(ValueError, match="not a response cache"):
        ResponseCache(path)


def _entry(n: int) -> ModelOutput:
    return ModelOutput(model="m", text=f"reply {n}", usage=Usage(input_tokens=n))


def test_threads_sharing_a_cache_file_do_not_corrupt_it(tmp_path) -> None:
    path = tmp_path / "cache.sqlite"
    shared = ResponseCache(path)
    errors: list[BaseException] = []

    def worker(w: int) -> None:
        try:
            own = ResponseCache(path)  # its own connection, as another run would have
            for n in range(50):
                for cache in (own, shared):
                    key = f"k{(w * 50 + n) % 120}"  # overlapping keys: concurrent inserts
                    cache.put(key, "m", _entry(int(key[1:])))
                    got = cache.get(key)
                    assert got is not None and got.text == f"reply {key[1:]}"
            own.close()
        except BaseException as exc:  # reported below, with the thread's traceback
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(shared) == 120
    shared.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


WRITER = """
import sys
from econbench.agents.models.base import ModelOutput, Usage
from econbench.agents.models.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
for n in range(int(sys.argv[2]), int(sys.argv[3])):
    cache.put(f"k{n}", "m", ModelOutput(model="m", text=f"reply {n}", usage=Usage(n)))
    assert cache.get(f"k{n // 2}") is None or cache.get(f"k{n // 2}").text == f"reply {n // 2}"
cache.close()
"""


def test_processes_sharing_a_cache_file_do_not_corrupt_it(tmp_path) -> None:
    path = tmp_path / "cache.sqlite"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(lo), str(lo + 150)])
        for lo in (0, 100)  # 100-149 written by both
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    with ResponseCache(path) as cache:
        assert len(cache) == 250
        assert all(cache.get(f"k{n}").text == f"reply {n}" for n in range(250))  # type: ignore[union-attr]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


# --------------------------------------------------------------------------- end to end

DAYS = 2
MODEL = "openai/gpt-5.5"


class HeuristicBrain:
    """Answers roaster_A's requests with what the heuristic roaster did, in order."""

    def __init__(self) -> None:
        sink = MemorySink()
        CoffeeRun(RunConfig(days=DAYS), sink=sink).run()
        self.calls = [
            {"name": e["tool"], "arguments": e["arguments"]}
            for e in sink.events
            if e["type"] == "tool_call" and e["firm"] == "roaster_A"
        ]
        self.lock = threading.Lock()

    def __call__(self, request: BrainRequest) -> BrainReply:
        with self.lock:
            call = self.calls.pop(0) if self.calls else None
        return BrainReply(reasoning="Following the plan.", tool_calls=[call] if call else [])


def test_a_second_identical_run_makes_no_request_and_still_replays(tmp_path, monkeypatch) -> None:
    config = RunConfig(days=DAYS, agents={"default": "scripted", "roaster_A": MODEL})
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(HeuristicBrain()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.root_url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123456789")
        outs = [tmp_path / "first", tmp_path / "second"]
        asked = []
        for out in outs:
            wrap = make_provider_wrap(record=out / RECORD, cache=cache)
            run_to_dir(config, out, provider_wrap=wrap)
            asked.append(len(server.requests))
    assert asked[0] > 0 and asked[1] == asked[0]  # the second run made no request at all
    first, second = ([json.loads(x) for x in (o / EVENTS).open()] for o in outs)
    calls = [e for e in second if e["type"] == "model_call"]
    assert calls and all(e["cache_hit"] is True and e["cost_usd"] == 0.0 for e in calls)
    assert all(
        "cache_hit" not in e and e["cost_usd"] > 0 for e in first if e["type"] == "model_call"
    )
    strip = {"cache_hit", "cost_usd"}
    assert [{k: v for k, v in e.items() if k not in strip} for e in first] == [
        {k: v for k, v in e.items() if k not in strip} for e in second
    ]
    summaries = [json.loads((o / SUMMARY).read_text())["firms"]["roaster_A"] for o in outs]
    assert summaries[1]["cost_usd"] == 0.0 < summaries[0]["cost_usd"]
    assert summaries[1]["input_tokens"] == summaries[0]["input_tokens"]
    # The cached run replays exactly, without a key or a server.
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    outcome = replay_run(outs[1], tmp_path / "replay")
    assert outcome.identical and outcome.stopped is None
