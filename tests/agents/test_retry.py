"""The retry layer (backoff, jitter, Retry-After, what is never retried) and the limiter."""

from __future__ import annotations

import asyncio
import logging
import pickle
import random

import pytest

from econbench.agents.models.base import (
    ContextOverflowError,
    FatalModelError,
    ModelError,
    TransientModelError,
)
from econbench.agents.models.retry import (
    ConcurrencyLimiter,
    RetriesExhaustedError,
    RetryEvent,
    backoff_cap,
    call_with_retries,
)


class Flaky:
    """Fails with the given errors in turn, then answers ``"ok"``."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class FakeSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def retry(fn, **kwargs):
    sleep = kwargs.pop("sleep", None) or FakeSleep()
    events: list[RetryEvent] = []
    result = asyncio.run(call_with_retries(fn, sleep=sleep, on_retry=events.append, **kwargs))
    return result, sleep.delays, events


def transient(n: int, message: str = "503 overloaded", retry_after: float | None = None):
    return [TransientModelError(message, retry_after=retry_after) for _ in range(n)]


def test_success_first_time_never_sleeps():
    result, delays, events = retry(Flaky(), rng=random.Random(0))
    assert result == "ok" and delays == [] and events == []


def test_without_jitter_delays_double_and_are_capped():
    fn = Flaky(*transient(5))
    result, delays, events = retry(fn, jitter=0.0, base_delay=1.0, max_delay=5.0)
    assert result == "ok" and fn.calls == 6
    assert delays == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert [e.attempt for e in events] == [1, 2, 3, 4, 5]
    assert [e.delay_s for e in events] == delays


def test_full_jitter_stays_within_the_growing_cap_and_is_reproducible():
    fn = Flaky(*transient(5))
    _, delays, _ = retry(fn, rng=random.Random(42), base_delay=0.5, max_delay=4.0)
    caps = [backoff_cap(n, 0.5, 4.0) for n in range(1, 6)]
    assert caps == [0.5, 1.0, 2.0, 4.0, 4.0]
    for delay, cap in zip(delays, caps, strict=True):
        assert 0.0 <= delay <= cap
    assert len(set(delays)) == 5  # jittered, not a fixed ladder
    # The same seed gives the same schedule; the formula is cap * (1 - U[0, 1)).
    expected_rng = random.Random(42)
    assert delays == [cap * (1.0 - expected_rng.random()) for cap in caps]
    _, again, _ = retry(Flaky(*transient(5)), rng=random.Random(42), base_delay=0.5, max_delay=4.0)
    assert again == delays


def test_partial_jitter_keeps_a_floor():
    _, delays, _ = retry(Flaky(*transient(4)), rng=random.Random(1), jitter=0.5, max_delay=100)
    for n, delay in enumerate(delays, start=1):
        cap = backoff_cap(n, 1.0, 100)
        assert cap / 2 <= delay <= cap


def test_retry_after_is_honoured_when_longer():
    errors = [
        TransientModelError("429 rate limited", retry_after=7.5),
        TransientModelError("429 rate limited", retry_after=0.1),  # shorter than backoff
        TransientModelError("429 rate limited", retry_after=5_000),  # absurd: bounded
    ]
    _, delays, events = retry(Flaky(*errors), jitter=0.0, base_delay=1.0, max_retry_after=600)
    assert delays == [7.5, 2.0, 600.0]
    assert events[0].reason == "429 rate limited"
    _, unbounded, _ = retry(
        Flaky(TransientModelError("x", retry_after=5_000)), jitter=0.0, max_retry_after=None
    )
    assert unbounded == [5_000]


@pytest.mark.parametrize(
    "error",
    [
        ContextOverflowError("prompt is too long"),
        FatalModelError("401 invalid key"),
        ValueError("a bug"),
    ],
)
def test_non_transient_errors_propagate_at_once(error):
    fn = Flaky(error)
    sleep = FakeSleep()
    events: list[RetryEvent] = []
    with pytest.raises(type(error)) as info:
        asyncio.run(call_with_retries(fn, sleep=sleep, on_retry=events.append))
    assert info.value is error
    assert fn.calls == 1 and sleep.delays == [] and events == []


def test_exhaustion_says_how_many_attempts_and_the_last_reason():
    errors = [*transient(2, "500 internal error"), TransientModelError("timed out after 30s")]
    fn = Flaky(*errors)
    sleep = FakeSleep()
    events: list[RetryEvent] = []
    with pytest.raises(RetriesExhaustedError) as info:
        asyncio.run(
            call_with_retries(
                fn, max_attempts=3, rng=random.Random(0), sleep=sleep, on_retry=events.append
            )
        )
    err = info.value
    assert fn.calls == 3 and len(sleep.delays) == 2 and len(events) == 2
    assert "3 attempts" in str(err) and "timed out after 30s" in str(err)
    assert "TransientModelError" in str(err)
    assert isinstance(err, ModelError) and isinstance(err, FatalModelError)
    assert err.attempts == 3 and err.last_error is errors[-1]
    assert err.__cause__ is errors[-1]
    assert pickle.loads(pickle.dumps(err)).attempts == 3


def test_single_attempt_means_no_retry():
    with pytest.raises(RetriesExhaustedError, match="1 attempt;"):
        retry(Flaky(*transient(1)), max_attempts=1)


def test_event_fields_name_the_error_type():
    class RateLimited(TransientModelError):
        pass

    _, _, events = retry(Flaky(RateLimited("429 slow down")), jitter=0.0)
    assert events == [
        RetryEvent(attempt=1, delay_s=1.0, reason="429 slow down", error_type="RateLimited")
    ]


def test_without_a_callback_each_retry_is_logged(caplog):
    caplog.set_level(logging.WARNING, logger="econbench.agents.models.retry")
    sleep = FakeSleep()
    result = asyncio.run(
        call_with_retries(Flaky(*transient(2, "502 bad gateway")), sleep=sleep, jitter=0.0)
    )
    assert result == "ok"
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2 and "502 bad gateway" in messages[0]
    assert "attempt 1 of 6" in messages[0]


@pytest.mark.parametrize(
    "kwargs", [{"max_attempts": 0}, {"jitter": 1.5}, {"jitter": -0.1}, {"base_delay": -1}]
)
def test_bad_arguments_are_rejected(kwargs):
    with pytest.raises(ValueError):
        asyncio.run(call_with_retries(Flaky(), **kwargs))


def test_real_sleep_is_used_by_default_and_short_delays_work():
    result = asyncio.run(call_with_retries(Flaky(*transient(2)), base_delay=0.001, max_delay=0.002))
    assert result == "ok"


# ------------------------------------------------------------------------ the limiter


async def _crowd(limiter: ConcurrencyLimiter, keys: list[str]) -> dict[str, int]:
    """Start every request at once; return the most simultaneous holders seen per provider."""
    current: dict[str, int] = {}
    peak: dict[str, int] = {}
    total = {"now": 0, "peak": 0}

    async def request(key: str) -> None:
        provider = ConcurrencyLimiter.key_for(key)
        async with limiter.slot(key):
            current[provider] = current.get(provider, 0) + 1
            total["now"] += 1
            peak[provider] = max(peak.get(provider, 0), current[provider])
            total["peak"] = max(total["peak"], total["now"])
            assert limiter.in_flight(key) == current[provider]
            for _ in range(3):
                await asyncio.sleep(0)
            current[provider] -= 1
            total["now"] -= 1

    await asyncio.gather(*(request(k) for k in keys))
    return {**peak, "_all": total["peak"]}


def test_limiter_bounds_simultaneous_requests_per_provider():
    limiter = ConcurrencyLimiter(default_limit=3)
    peak = asyncio.run(_crowd(limiter, ["openai/gpt-5.5"] * 10 + ["openai/gpt-5"] * 10))
    assert peak["openai"] == 3  # both OpenAI models share OpenAI's limit, and reach it
    assert limiter.in_flight("openai") == 0


def test_limiter_keeps_providers_independent_with_their_own_limits():
    limiter = ConcurrencyLimiter(default_limit=2, limits={"anthropic": 4})
    keys = ["anthropic/claude-sonnet-4-6"] * 12 + ["google/gemini-3.1-pro"] * 12 + ["openai"] * 3
    peak = asyncio.run(_crowd(limiter, keys))
    assert peak["anthropic"] == 4 and peak["google"] == 2 and peak["openai"] == 2
    assert peak["_all"] == 8  # the providers did run side by side
    assert limiter.limit("anthropic/claude-opus-4-7") == 4
    assert limiter.limit("openai-compatible/x") == 2


def test_limiter_survives_a_new_event_loop_and_a_changed_limit():
    limiter = ConcurrencyLimiter(default_limit=1)
    assert asyncio.run(_crowd(limiter, ["openai"] * 5))["openai"] == 1
    limiter.set_limit("openai", 2)
    assert asyncio.run(_crowd(limiter, ["openai"] * 5))["openai"] == 2
    with pytest.raises(ValueError):
        limiter.set_limit("openai", 0)
    with pytest.raises(ValueError):
        ConcurrencyLimiter(default_limit=0)


def test_a_slot_is_released_when_the_request_fails():
    limiter = ConcurrencyLimiter(default_limit=1)

    async def scenario() -> str:
        with pytest.raises(TransientModelError):
            async with limiter.slot("openai"):
                raise TransientModelError("500")
        assert limiter.in_flight("openai") == 0
        async with limiter.slot("openai"):  # would hang if the slot had leaked
            return "free"

    assert asyncio.run(asyncio.wait_for(scenario(), timeout=2)) == "free"


def test_retries_wait_outside_the_slot():
    """The loop's pattern: a slot per attempt, so a sleeping retry frees it for others."""
    limiter = ConcurrencyLimiter(default_limit=1)
    seen: list[int] = []

    async def scenario() -> None:
        fn = Flaky(*transient(2))

        async def once() -> str:
            async with limiter.slot("openai"):
                return await fn()

        async def sleep(_: float) -> None:
            seen.append(limiter.in_flight("openai"))

        await call_with_retries(once, sleep=sleep, rng=random.Random(0))

    asyncio.run(scenario())
    assert seen == [0, 0]


# --------------------------------------------------------------------------- per-model policy


def _with_policy(fn, settings, **kwargs):
    """Retry ``fn`` the way an ``LLMAgent`` built from ``settings`` does."""
    policy = settings.retry_policy()
    return retry(fn, max_attempts=policy.max_attempts, jitter=0.0, **policy.options(), **kwargs)


def test_a_models_max_retries_sets_the_number_of_attempts():
    from econbench.agents.models.registry import ModelSettings

    fn = Flaky(*transient(5))
    with pytest.raises(RetriesExhaustedError) as info:
        _with_policy(fn, ModelSettings(max_retries=2))
    assert fn.calls == 3 and info.value.attempts == 3
    fn = Flaky(*transient(1))
    with pytest.raises(RetriesExhaustedError):
        _with_policy(fn, ModelSettings(max_retries=0))
    assert fn.calls == 1


def test_a_models_max_backoff_caps_every_wait():
    from econbench.agents.models.registry import ModelSettings

    fn = Flaky(*transient(4))
    result, delays, _ = _with_policy(fn, ModelSettings(max_backoff_s=2.5))
    assert result == "ok" and delays == [1.0, 2.0, 2.5, 2.5]


def test_unset_retry_settings_keep_the_defaults_and_the_config_unchanged():
    from econbench.agents.models.registry import ModelSettings
    from econbench.agents.models.retry import RetryPolicy

    settings = ModelSettings()
    assert settings.retry_policy() == RetryPolicy(max_retries=5, max_backoff_s=60.0)
    assert settings.retry_policy().max_attempts == 6
    assert "max_retries" not in settings.model_dump()
    assert "max_backoff_s" not in settings.model_dump()
    dumped = ModelSettings(max_retries=9).model_dump()
    assert dumped["max_retries"] == 9 and "max_backoff_s" not in dumped


@pytest.mark.parametrize(
    "bad",
    [{"max_retries": -1}, {"max_retries": 101}, {"max_backoff_s": 0}, {"max_backoff_s": 1e9}],
)
def test_retry_settings_outside_their_range_are_refused(bad):
    from pydantic import ValidationError

    from econbench.agents.models.registry import ModelSettings

    with pytest.raises(ValidationError):
        ModelSettings(**bad)
