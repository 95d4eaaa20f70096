"""A response cache: a request identical to one already answered costs nothing.

``ResponseCache`` is one SQLite file shared by every run and process that points at it
(sweeps run several processes at once: WAL mode and a busy timeout let them read and write
together). Entries are keyed by ``request_key`` — the model, the messages, the tool schemas
and the generation settings — so any change to any of them is a miss. For a provider built
from settings that name an ``api`` or a ``base_url``, those join the model name in the key:
the same model name behind two servers, or two APIs, is two models.

``CachedProvider`` answers a hit with the stored reply: the same text, calls, reasoning,
``provider_data`` and the same usage (the agent's context bookkeeping relies on it), with
``cost_usd = 0.0`` and ``cache_hit = True`` (the agent's ``model_call`` event then says
``"cache_hit": true``). A miss asks the wrapped provider and stores its reply. The cache
holds replies for as long as the file exists; delete it to start afresh.

Enable it from the command line with ``--cache`` (the default location,
``$XDG_CACHE_HOME/econbench/responses.sqlite`` or ``~/.cache/econbench/responses.sqlite``) or
``--cache PATH``; :func:`cache_path_from_option` parses the option for every command.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from econbench.agents.models.base import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    WrappedProvider,
)
from econbench.agents.models.record import output_from_dict, output_to_dict, request_key
from econbench.agents.tools import ToolSpec

CACHE_FILE = Path("econbench") / "responses.sqlite"
BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses(
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    output TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/econbench/responses.sqlite``, else under ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / CACHE_FILE


def cache_path_from_option(value: str | None) -> Path | None:
    """A ``--cache`` option's value: ``None`` → no cache; ``""`` or ``"default"`` → the
    default location; anything else → that path (``~`` expanded)."""
    if value is None:
        return None
    text = value.strip()
    path = default_cache_path() if text in ("", "default") else Path(text).expanduser()
    if path.exists() and not path.is_file():
        raise ValueError(f"--cache {path} is a directory; give a file path")
    return path


class ResponseCache:
    """The cache file; one connection, usable from several threads (a lock serialises it).

    Use as a context manager, or call ``close()``.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"cache path {self.path} is not a file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        # Switching to WAL does not wait for a busy database, so two processes creating
        # the same cache at once retry here until the busy timeout.
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                with self._lock, self._db:
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute("PRAGMA synchronous=NORMAL")
                    self._db.executescript(_SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                self._db.close()
                raise ValueError(f"{self.path} is not a response cache: {exc}") from None
            except sqlite3.DatabaseError as exc:
                self._db.close()
                raise ValueError(f"{self.path} is not a response cache: {exc}") from None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get(self, key: str) -> ModelOutput | None:
        """The stored reply (a fresh object), or ``None``."""
        with self._lock:
            row = self._db.execute("SELECT output FROM responses WHERE key = ?", (key,)).fetchone()
        return output_from_dict(json.loads(row[0])) if row else None

    def put(self, key: str, model: str, output: ModelOutput) -> None:
        """Store a reply; the first one stored under a key stays (identical requests)."""
        data = output_to_dict(output)
        data.pop("cache_hit", None)
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO responses(key, model, output, created_at) "
                "VALUES (?, ?, ?, ?)",
                (key, model, json.dumps(data, ensure_ascii=False), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def cache_identity(provider: ModelProvider) -> str:
    """The model part of a cache key: the name, plus the ``api`` and ``base_url`` its
    settings name (servers chosen by environment variable are not told apart)."""
    settings = getattr(provider, "settings", None)
    extra = {
        field: value
        for field in ("api", "base_url")
        if (value := getattr(settings, field, None)) is not None
    }
    if not extra:
        return provider.name
    return provider.name + " " + json.dumps(extra, sort_keys=True)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0


class CachedProvider(WrappedProvider):
    """Serves identical requests from ``cache``; asks ``inner`` (and stores) otherwise."""

    def __init__(self, inner: ModelProvider, cache: ResponseCache) -> None:
        super().__init__(inner)
        self.cache = cache
        self.stats = CacheStats()
        self._identity = cache_identity(inner)

    def __repr__(self) -> str:
        return f"CachedProvider({self.inner!r}, {self.cache!r})"

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        key = request_key(self._identity, messages, tools, config)
        hit = self.cache.get(key)
        if hit is not None:
            self.stats.hits += 1
            hit.cost_usd = 0.0
            hit.cache_hit = True
            return hit
        output = await self.inner.generate(messages, tools, config)
        self.stats.misses += 1
        self.cache.put(key, self.name, output)
        return output
