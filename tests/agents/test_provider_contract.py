"""One contract every HTTP provider keeps, checked against each fake server via the real SDK.

Each case runs for every provider class a record of ``econbench.agents.models.providers``
names (OpenAI Responses and Chat Completions, the latter shared with OpenAI-compatible servers,
Anthropic Messages and Gemini), against the fake server ``tests.fakes.providers.FAKES`` names
for the provider (one fake OpenAI server speaks both OpenAI APIs). What a single API does
differently (request shapes, prompt-cache breakpoints, thought signatures, its own environment
variables) stays in that provider's test file; what every provider must do the same way is
here, once: a text reply, a tool call answered and continued, usage with cached tokens, a 429
whose Retry-After the retry layer honours, 5xx retried (``Retry-After-Ms`` included), timeouts
and dropped connections retried, client errors fatal at once and without a trace of the key
(masked echoes included), a context overflow classified as such, and stop reasons normalised
while the provider's own word is kept.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from tests.fakes.common import FakeServer, Fault
from tests.fakes.harness import ProviderHarness, shop_brain
from tests.fakes.providers import FAKES

from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
)
from econbench.agents.models.providers import PROVIDERS, ProviderInfo
from econbench.agents.models.retry import RetryEvent, call_with_retries
from econbench.agents.tools import Toolkit, ToolSpec, tool

SYSTEM = "You run roaster_A, a coffee roaster in a 90-day economy. " * 30  # a cacheable prefix


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


@dataclass(frozen=True)
class Backend:
    """One provider class and the fake server that speaks its wire protocol."""

    id: str
    server: type[FakeServer]
    key: str
    make: Callable[[Any, str], ModelProvider]
    model: str
    raw_stops: Mapping[str, str]
    """The provider's own stop word for: text, tool (a tool call), truncated, filtered."""
    info: ProviderInfo
    """The record of the (first) provider that names the class."""


def backends() -> list[Backend]:
    """One backend per provider class the records name (a class two providers share, such as
    OpenAI's Chat Completions one, once), each built from its record's class."""
    found: list[Backend] = []
    seen: set[str] = set()
    for info in PROVIDERS:
        fake = FAKES.get(info.name)
        if info.local or fake is None:  # the test below names a missing fake
            continue
        for api, target in info.factories:
            if target in seen:
                continue
            seen.add(target)
            cls = info.provider_class(api)

            def make(server: Any, key: str, cls: Any = cls, fake: Any = fake) -> ModelProvider:
                return cls(fake.model, api_key=key, base_url=fake.url(server))

            # the wire's name: openai-responses, openai-chat, anthropic, google
            label = f"{info.name}-{api}" if len(info.factories) > 1 else info.name
            found.append(
                Backend(label, fake.server, fake.key, make, fake.model, fake.raw_stops, info)
            )
    return found


BACKENDS = backends()


def test_every_provider_reached_over_http_has_a_fake() -> None:
    assert {info.name for info in PROVIDERS if not info.local} <= set(FAKES)


@dataclass
class Case:
    """A backend's server running, one event loop, and a provider built for it."""

    backend: Backend
    server: Any
    harness: ProviderHarness
    provider: ModelProvider

    def call(self, messages: list[ChatMessage], config: GenerateConfig | None = None) -> Any:
        return self.harness.call(self.provider, messages, config)

    def with_retries(self, messages: list[ChatMessage], config: GenerateConfig | None = None):
        """The call through the retry layer, with a recorded instead of a real sleep."""
        delays: list[float] = []
        events: list[RetryEvent] = []

        async def sleep(seconds: float) -> None:
            delays.append(seconds)

        async def attempt() -> ModelOutput:
            return await self.provider.generate(messages, TOOLS, config or GenerateConfig())

        result = self.harness.loop.run_until_complete(
            call_with_retries(
                attempt,
                base_delay=0.5,
                jitter=0.0,
                rng=random.Random(0),
                sleep=sleep,
                on_retry=events.append,
            )
        )
        return result, delays, events

    def raises(self, messages: list[ChatMessage]) -> BaseException:
        """The exception the retry layer lets out for this call."""
        with pytest.raises(Exception) as info:
            self.with_retries(messages)
        return info.value


@pytest.fixture(params=BACKENDS, ids=[b.id for b in BACKENDS])
def case(request: pytest.FixtureRequest) -> Iterator[Case]:
    backend: Backend = request.param
    harness = ProviderHarness(lambda server: backend.make(server, backend.key), TOOLS)
    with backend.server(shop_brain) as server:
        try:
            yield Case(backend, server, harness, harness.make(server))
        finally:
            harness.close()


def convo(*texts: str) -> list[ChatMessage]:
    return [ChatMessage("system", SYSTEM), *(ChatMessage("user", t) for t in texts)]


# --------------------------------------------------------------------------- replies
def test_text_reply(case: Case) -> None:
    out = case.call(convo("hello"))
    assert out.text == "echo: hello" and out.tool_calls == []
    assert (out.stop, out.stop_reason) == ("end", case.backend.raw_stops["text"])
    assert out.model == case.backend.model and out.cost_usd is None
    assert out.usage.input_tokens > 0 and out.usage.output_tokens > 0


def test_tool_call_round_trip(case: Case) -> None:
    messages = convo("please buy")
    first = case.call(messages)
    [call] = first.tool_calls
    assert (call.name, call.arguments) == ("buy", {"qty": 5}) and call.call_id
    assert (first.stop, first.stop_reason) == ("tool_calls", case.backend.raw_stops["tool"])
    result = json.dumps(Shop().call(call.name, call.arguments))
    messages += [
        first.as_message(),
        ChatMessage("tool", result, tool_call_id=call.call_id, name=call.name),
    ]
    second = case.call(messages)
    assert second.text == f"tool said {result}" and second.tool_calls == []
    assert second.stop == "end"


def test_usage_and_cached_tokens(case: Case) -> None:
    first = case.call(convo("hello"))
    second = case.call(
        [*convo("hello"), ChatMessage("assistant", first.text), ChatMessage("user", "next")]
    )
    assert first.usage.cached_input_tokens == 0
    assert 0 < second.usage.cached_input_tokens <= second.usage.input_tokens
    assert second.usage.input_tokens > first.usage.input_tokens
    assert second.usage.output_tokens > 0 and not second.usage.invalid


# --------------------------------------------------------------------------- retried
def test_rate_limit_waits_as_long_as_retry_after_then_succeeds(case: Case) -> None:
    case.server.faults.append(Fault("status", status=429, retry_after=7, message="slow down"))
    out, delays, events = case.with_retries(convo("hello"))
    assert out.text == "echo: hello"
    assert delays == [7.0]  # the server's wait, not the 0.5 s backoff
    assert len(case.server.requests) == 2  # the SDK itself never retries
    [event] = events
    assert event.error_type == "TransientModelError"
    assert "429" in event.reason and "slow down" in event.reason


def test_server_errors_are_retried_with_backoff_or_retry_after_ms(case: Case) -> None:
    case.server.faults.extend(
        [
            Fault("status", status=500),
            Fault("status", status=503, headers={"Retry-After-Ms": "1500"}),
        ]
    )
    out, delays, events = case.with_retries(convo("hello"))
    assert out.text == "echo: hello"
    assert delays == [0.5, 1.5]  # backoff after the 500; the 503 asked for 1.5 s
    assert ["500" in events[0].reason, "503" in events[1].reason] == [True, True]
    assert len(case.server.requests) == 3


def test_timeouts_and_dropped_connections_are_retried(case: Case) -> None:
    case.server.faults.extend([Fault("delay", seconds=1.0), Fault("drop")])
    out, _, events = case.with_retries(convo("hello"), GenerateConfig(timeout_s=0.2))
    assert out.text == "echo: hello"
    assert [e.error_type for e in events] == ["TransientModelError"] * 2
    assert "timed out" in events[0].reason and "connection" in events[1].reason


# --------------------------------------------------------------------------- not retried
@pytest.mark.parametrize("status", [401, 403, 404, 400])
def test_client_errors_are_fatal_and_leave_no_trace_of_the_key(case: Case, status: int) -> None:
    key = case.backend.key
    echo = (
        f"Incorrect API key provided: {key[:8]}**********{key[-4:]} "
        f"(also shown as {key[:3]}…{key[-4:]}; sent: {key})"
    )
    case.server.faults.append(Fault("status", status=status, message=echo))
    error = case.raises(convo("hello"))
    assert isinstance(error, FatalModelError)
    assert len(case.server.requests) == 1
    text = f"{error} {error.args!r}"
    assert f"HTTP {status}" in text and "Incorrect API key provided" in text
    for trace in (key, key[8:20], key[-6:], key[-4:]):
        assert trace not in text


def test_context_overflow_is_classified_and_not_retried(case: Case) -> None:
    case.server.faults.append(Fault("context_overflow"))
    error = case.raises(convo("hello"))
    assert isinstance(error, ContextOverflowError)
    assert len(case.server.requests) == 1


# --------------------------------------------------------------------------- stop reasons
@pytest.mark.parametrize(
    ("fault", "stop"), [("truncated", "length"), ("filtered", "content_filter")]
)
def test_stop_reason_is_normalised_and_the_raw_one_kept(case: Case, fault: str, stop: str) -> None:
    case.server.faults.append(Fault(fault))
    out = case.call(convo("hello"))
    assert out.stop == stop
    assert out.stop_reason == case.backend.raw_stops[fault]
