"""A run's ``--cost-limit``, enforced where the money is spent: at each model call.

``coffee run --cost-limit USD`` and ``allo run --cost-limit USD`` wrap their run's providers
in a :class:`CostGuard` (a ``ProviderWrap`` around the run's own recording wrap). It adds up
the dollars of every call the model answers (cache hits and replayed calls cost nothing and
never reach it), and once the spent total has reached the limit the next call is refused
with :class:`CostLimitReached` before it is sent. That is a ``FatalModelError``, so the run
stops the way a model failure beyond retries stops it: everything written so far stays, the
summary says ``stopped``, and ``econbench resume RUN_DIR`` continues it from its checkpoint
(the calls made since then are served from its record, not paid again). Calls already in
flight when the limit is reached finish, so the spend can pass the limit by those calls.

The guard sits under the recorder (``Recording(Cached(Guarded(model)))``): the run's record
and its replay of a resumed tail see the provider they always saw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from econbench.agents.models.base import (
    ChatMessage,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    ProviderWrap,
    WrappedProvider,
)
from econbench.agents.tools import ToolSpec

EXIT_COST_LIMIT = 3
"""The exit status of a command that ``--cost-limit`` stopped (as a sweep left incomplete)."""


class CostLimitReached(FatalModelError):
    """The run's ``--cost-limit`` is spent; the call was not sent."""

    def __init__(self, spent: float, limit: float) -> None:
        super().__init__(f"cost limit reached: ${spent:,.4f} spent of ${limit:,.2f} (--cost-limit)")
        self.spent = spent
        self.limit = limit


class CostGuard:
    """A ``ProviderWrap`` that refuses model calls once ``limit`` dollars are spent.

    ``inner`` is the run's own wrap (record, cache), applied outside the guard; ``spent``
    is what the run had spent before this process started (a continued cell's finished
    episodes). Attributes other than the guard's are the inner wrap's (``record``,
    ``close``), so the run layer treats the guard as the wrap it wraps.
    """

    def __init__(self, inner: ProviderWrap | None, limit: float, spent: float = 0.0) -> None:
        self.inner = inner
        self.limit = limit
        self.spent = spent

    def __call__(self, provider: ModelProvider, agent: str) -> ModelProvider:
        guarded = GuardedProvider(provider, self)
        return self.inner(guarded, agent) if self.inner is not None else guarded

    def __getattr__(self, name: str) -> Any:
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)

    def check(self) -> None:
        """Refuse the next call once the limit is spent."""
        if self.spent >= self.limit:
            raise CostLimitReached(self.spent, self.limit)

    def add(self, output: ModelOutput) -> None:
        """Count one answered call (an unpriced call adds nothing: its cost is unknown)."""
        if output.cost_usd is not None and not output.cache_hit:
            self.spent += output.cost_usd


class GuardedProvider(WrappedProvider):
    """The model, asked only while its run's :class:`CostGuard` has money left."""

    def __init__(self, inner: ModelProvider, guard: CostGuard) -> None:
        super().__init__(inner)
        self.guard = guard

    def generate_config(self) -> GenerateConfig:
        make = getattr(self.inner, "generate_config", None)
        return make() if callable(make) else GenerateConfig()

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        self.guard.check()
        output = await self.inner.generate(messages, tools, config)
        self.guard.add(output)
        return output


def resume_guard(run_dir: Path, cache: Path | None, limit: float | None) -> CostGuard | None:
    """``econbench resume --cost-limit``: the wrap that stops the resumed run once the run
    as a whole has cost ``limit`` — what its recorded calls cost, plus what its new calls
    cost (the calls replayed from its record are not paid again). A run that has already
    cost the limit stops at its first new call."""
    if limit is None:
        return None
    from econbench.agents.models.record import CallRecord
    from econbench.agents.models.wraps import make_provider_wrap
    from econbench.runs.layout import RECORD

    spent = 0.0
    if (run_dir / RECORD).is_file():
        with CallRecord(run_dir / RECORD, readonly=True) as record:
            spent = record.spent_usd()
    return CostGuard(make_provider_wrap(record=run_dir / RECORD, cache=cache), limit, spent)


def stopped_by_limit(exc: BaseException) -> CostLimitReached | None:
    """The ``CostLimitReached`` that stopped a run (the cause of its ``RunStopped`` or
    ``CellStopped``), or ``None`` when something else stopped it."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, CostLimitReached):
            return seen
        seen = seen.__cause__
    return None
