"""Retries with exponential backoff and full jitter, and a per-provider concurrency limit.

Providers never retry by themselves (their SDK clients run with ``max_retries=0``): they
classify each failure once, and this module decides. Only ``TransientModelError`` (rate
limits, 5xx, timeouts, dropped connections) is retried; a context overflow goes back to the
agent, which compacts, and a fatal error stops the run at once. Every retry is reported
through ``on_retry`` so the caller writes it to the run's event log with its reason.

Backoff is "full jitter": before retry *n* the wait is uniform in ``[0, min(max_delay,
base_delay * 2**(n-1))]`` (``jitter=1.0``; ``jitter=0`` waits the full cap). A server's
``Retry-After`` is honoured when it asks for longer. Tests pass a seeded ``random.Random``
and a fake ``sleep``, so a schedule is reproducible to the microsecond.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from econbench.agents.models.base import FatalModelError, TransientModelError
from econbench.agents.models.settings import (  # the settings' defaults and bounds
    DEFAULT_MAX_BACKOFF_S,
    DEFAULT_MAX_RETRIES,
    MAX_BACKOFF_LIMIT_S,
    MAX_RETRIES_LIMIT,
)

T = TypeVar("T")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """How one model's transient failures are retried (``max_retries`` and ``max_backoff_s``
    in its settings, as Inspect's ``max_retries`` and tau2's retry settings): a flaky local
    server can get more attempts, a rate-limited API a longer cap, a test none."""

    max_retries: int = DEFAULT_MAX_RETRIES
    max_backoff_s: float = DEFAULT_MAX_BACKOFF_S

    def __post_init__(self) -> None:
        if not 0 <= self.max_retries <= MAX_RETRIES_LIMIT:
            raise ValueError(f"max_retries must be from 0 to {MAX_RETRIES_LIMIT}")
        if not 0 < self.max_backoff_s <= MAX_BACKOFF_LIMIT_S:
            raise ValueError(f"max_backoff_s must be above 0 and at most {MAX_BACKOFF_LIMIT_S:g}")

    @property
    def max_attempts(self) -> int:
        """The first attempt plus the retries (``call_with_retries``' ``max_attempts``)."""
        return self.max_retries + 1

    def options(self) -> dict[str, float]:
        """The ``call_with_retries`` keywords besides ``max_attempts`` (an ``LLMAgent``'s
        ``retry_options``): the backoff cap."""
        return {"max_delay": self.max_backoff_s}


@dataclass(frozen=True)
class RetryEvent:
    """One retry about to happen: which attempt failed, how long we wait, and why."""

    attempt: int
    """The 1-based number of the attempt that just failed."""
    delay_s: float
    reason: str
    error_type: str

    def payload(self, firm: str, model: str) -> dict[str, Any]:
        """The ``model_retry`` event of ``firm``'s agent (the run's event log)."""
        return {
            "firm": firm,
            "model": model,
            "attempt": self.attempt,
            "delay_s": round(self.delay_s, 3),
            "reason": self.reason,
            "error_type": self.error_type,
        }


class RetriesExhaustedError(FatalModelError):
    """Every attempt failed with a transient error; the run stops cleanly (resumable).

    A ``FatalModelError`` (hence a ``ModelError``) so callers that stop on fatal errors stop
    on this one too; ``last_error`` is the final transient failure.
    """

    def __init__(self, attempts: int, last_error: TransientModelError) -> None:
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(
            f"gave up after {attempts} attempt{'s' if attempts != 1 else ''}; last error: "
            f"{type(last_error).__name__}: {last_error}"
        )

    def __reduce__(self) -> tuple[type[RetriesExhaustedError], tuple[int, TransientModelError]]:
        return (type(self), (self.attempts, self.last_error))


def backoff_cap(attempt: int, base_delay: float, max_delay: float) -> float:
    """The longest wait after failed attempt ``attempt`` (1-based): exponential, capped."""
    exponent = min(attempt - 1, 62)  # 2**62 seconds is already past any cap
    return min(max_delay, base_delay * (2.0**exponent))


def retry_delay(
    attempt: int,
    *,
    base_delay: float,
    max_delay: float,
    jitter: float,
    rng: random.Random,
    retry_after: float | None = None,
    max_retry_after: float | None = None,
) -> float:
    """The wait before the next attempt; ``retry_after`` wins when it asks for longer."""
    cap = backoff_cap(attempt, base_delay, max_delay)
    delay = cap * (1.0 - jitter * rng.random())
    if retry_after is not None and retry_after > 0:
        asked = retry_after if max_retry_after is None else min(retry_after, max_retry_after)
        delay = max(delay, asked)
    return max(0.0, delay)


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    *,
    max_attempts: int = 6,
    base_delay: float = 1.0,
    max_delay: float = 60.0,
    jitter: float = 1.0,
    max_retry_after: float | None = 600.0,
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    on_retry: Callable[[RetryEvent], None] | None = None,
) -> T:
    """Await ``fn()``; on ``TransientModelError`` wait and try again, up to ``max_attempts``.

    ``ContextOverflowError``, ``FatalModelError`` and any other exception propagate at once.
    After the last attempt: ``RetriesExhaustedError`` saying how many attempts and why.
    ``max_retry_after`` bounds how long a server's ``Retry-After`` can park a run (``None``:
    no bound). Without ``on_retry`` each retry is logged at WARNING level instead.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    if not 0.0 <= jitter <= 1.0:
        raise ValueError("jitter must be between 0 (none) and 1 (full jitter)")
    if base_delay < 0 or max_delay < 0:
        raise ValueError("delays must be non-negative")
    rng = rng if rng is not None else random.Random()
    attempt = 0
    while True:
        attempt += 1
        try:
            return await fn()
        except TransientModelError as exc:
            if attempt >= max_attempts:
                raise RetriesExhaustedError(attempt, exc) from exc
            delay = retry_delay(
                attempt,
                base_delay=base_delay,
                max_delay=max_delay,
                jitter=jitter,
                rng=rng,
                retry_after=exc.retry_after,
                max_retry_after=max_retry_after,
            )
            event = RetryEvent(
                attempt=attempt,
                delay_s=delay,
                reason=str(exc) or type(exc).__name__,
                error_type=type(exc).__name__,
            )
            if on_retry is not None:
                on_retry(event)
            else:
                logger.warning(
                    "model call failed (attempt %d of %d, %s: %s); retrying in %.2fs",
                    attempt,
                    max_attempts,
                    event.error_type,
                    event.reason,
                    delay,
                )
            await sleep(delay)


class ConcurrencyLimiter:
    """Bounds concurrent requests per provider: a registry of semaphores keyed by provider.

    ``slot("openai")`` and ``slot("openai/gpt-5.5")`` share one semaphore: a model name is
    keyed by its provider part, so every OpenAI model of a run shares OpenAI's limit. The
    limit of a key is ``limits[key]``, else ``default_limit``. Semaphores belong to an event
    loop, so a limiter reused under a new loop (a second ``asyncio.run``) starts fresh ones.
    """

    def __init__(self, default_limit: int = 8, limits: Mapping[str, int] | None = None) -> None:
        if default_limit < 1:
            raise ValueError("a concurrency limit must be at least 1")
        self.default_limit = default_limit
        self._limits: dict[str, int] = {}
        self._semaphores: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] = {}
        self._in_flight: dict[str, int] = {}
        for key, value in (limits or {}).items():
            self.set_limit(key, value)

    @staticmethod
    def key_for(name: str) -> str:
        """``openai/gpt-5.5`` -> ``openai``; a bare provider name is its own key."""
        return name.partition("/")[0].strip().lower()

    def set_limit(self, key: str, limit: int) -> None:
        """Set a provider's limit; takes effect for semaphores created afterwards."""
        if limit < 1:
            raise ValueError("a concurrency limit must be at least 1")
        key = self.key_for(key)
        self._limits[key] = limit
        entry = self._semaphores.get(key)
        if entry is not None and self._in_flight.get(key, 0) == 0:
            del self._semaphores[key]  # idle: rebuild with the new limit on next use

    def limit(self, key: str) -> int:
        return self._limits.get(self.key_for(key), self.default_limit)

    def semaphore(self, key: str) -> asyncio.Semaphore:
        """The semaphore of ``key``'s provider in the running event loop."""
        key = self.key_for(key)
        loop = asyncio.get_running_loop()
        entry = self._semaphores.get(key)
        if entry is None or entry[0] is not loop:
            entry = (loop, asyncio.Semaphore(self.limit(key)))
            self._semaphores[key] = entry
            self._in_flight[key] = 0
        return entry[1]

    def in_flight(self, key: str) -> int:
        """Requests of ``key``'s provider holding a slot right now."""
        return self._in_flight.get(self.key_for(key), 0)

    @asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """``async with limiter.slot("anthropic"):`` one request of that provider."""
        semaphore = self.semaphore(key)
        provider = self.key_for(key)
        async with semaphore:
            self._in_flight[provider] = self._in_flight.get(provider, 0) + 1
            try:
                yield
            finally:
                self._in_flight[provider] -= 1
