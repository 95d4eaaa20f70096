"""One provider wrap for a run: record every call, serve from the cache, or replay a record.

The layers, outermost first, around each model-driven agent's provider::

    RecordingProvider        every call the agent makes, into the run's record.sqlite
      CachedProvider         an identical request already answered is served free
        PricedProvider       the real model (cost from the price table)

or, when replaying::

    RecordingProvider        the replayed run gets a record of its own
      ReplayProvider         the original record's replies; the model is never asked

The recorder sits outside the cache so that cache hits are recorded too (with their zero
cost and their marker): a run served partly from the cache replays exactly. A replay
replaces the model entirely — no key, no network — so there is no cache under it.

The wrap owns the SQLite connections it opens: call ``close()`` when the run ends (or use it
as a context manager); ``run_to_dir`` and ``run_cell`` do so for any wrap with a ``close``.
Closing twice is harmless.
"""

from __future__ import annotations

from pathlib import Path

from econbench.agents.models.base import ModelProvider
from econbench.agents.models.cache import CachedProvider, ResponseCache
from econbench.agents.models.record import CallRecord, RecordingProvider, ReplayProvider


class RunProviderWrap:
    """A ``ProviderWrap`` (``wrap(provider, agent) -> provider``) with its files.

    The record and the cache are opened at the first wrapped provider, not before, so the
    wrap can be made before the run directory is prepared (a new run refuses a non-empty
    directory); the record to replay is opened at once, so a bad one fails early.
    """

    def __init__(
        self,
        *,
        record: Path | None = None,
        cache: Path | None = None,
        replay: Path | None = None,
        strict: bool = True,
    ) -> None:
        self.record_path = Path(record) if record is not None else None
        self.cache_path = Path(cache) if cache is not None and replay is None else None
        self.strict = strict
        self.replay = CallRecord(replay, readonly=True) if replay is not None else None
        self.record: CallRecord | None = None
        self.cache: ResponseCache | None = None
        self.providers: dict[str, ModelProvider] = {}

    def __call__(self, provider: ModelProvider, agent: str) -> ModelProvider:
        wrapped: ModelProvider = provider
        if self.replay is not None:
            wrapped = ReplayProvider(self.replay, agent, self.strict, like=provider)
        elif self.cache_path is not None:
            if self.cache is None:
                self.cache = ResponseCache(self.cache_path)
            wrapped = CachedProvider(wrapped, self.cache)
        if self.record_path is not None:
            if self.record is None:
                self.record = CallRecord(self.record_path)
            wrapped = RecordingProvider(wrapped, self.record, agent)
        self.providers[agent] = wrapped
        return wrapped

    def close(self) -> None:
        """Close every file this wrap opened (idempotent)."""
        for handle in (self.record, self.cache, self.replay):
            if handle is not None:
                handle.close()
        self.record = self.cache = self.replay = None

    def __enter__(self) -> RunProviderWrap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        parts = [
            f"{name}={str(path)!r}"
            for name, path in (("record", self.record_path), ("cache", self.cache_path))
            if path is not None
        ]
        if self.replay is not None:
            parts.append(f"replay={str(self.replay.path)!r}, strict={self.strict}")
        return f"RunProviderWrap({', '.join(parts)})"


def make_provider_wrap(
    *,
    record: Path | None = None,
    cache: Path | None = None,
    replay: Path | None = None,
    strict: bool = True,
) -> RunProviderWrap | None:
    """The wrap for a run, or ``None`` when none of record, cache and replay is asked for.

    ``record``: the run's ``record.sqlite`` to write; ``cache``: a response cache file
    (ignored when replaying); ``replay``: a record to serve replies from, ``strict`` as in
    ``ReplayProvider``. See the module docstring for the order of the layers.
    """
    if record is None and cache is None and replay is None:
        return None
    return RunProviderWrap(record=record, cache=cache, replay=replay, strict=strict)
