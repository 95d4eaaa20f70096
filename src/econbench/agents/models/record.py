"""Every model request and response of a run, in one SQLite file, and a model that replays it.

``CallRecord`` is ``record.sqlite`` in the run directory. History is stored once: each
distinct message and each distinct tool list is kept a single time under the hash of its
canonical JSON, and a call stores only the list of its messages' hashes (a 90-day
conversation re-sends the same messages thousands of times). Tables:

- ``messages(hash, body)`` and ``tools(hash, body)``: content-addressed bodies;
- ``calls(agent, idx, request_key, model, message_hashes, tools_hash, config, output)``, one
  row per successful call, keyed by the agent (a firm id, an AlloBench ``seed-N``) and the
  call's index within that agent; ``output`` holds everything of the reply, ``provider_data``
  (thinking signatures, item ids) included, with its usage, cost and cache marker.
  ``message_hashes`` is the request's list of message hashes, in full every
  ``FULL_LIST_EVERY``-th call of an agent and otherwise as what changed since the agent's
  previous call (``{"keep": n, "add": [...]}``: its first n hashes, then these) — schema 2;
  a record of schema 1 holds every list in full and is read as before;
- ``failures(agent, idx, seq, ...)``: failed attempts (rate limits, context overflows, a
  fatal error) made while waiting for call ``idx``, so a replay raises them again at the same
  points and the agent retries, compacts or stops exactly as it did;
- ``agents(agent, model, context_window, settings)``: what a replay needs to rebuild the
  agent without the original configuration's model settings at hand.

Rows are written with ``INSERT OR REPLACE`` and committed one call at a time in WAL mode, so
a killed process loses at most the call in flight and a call redone after a resume replaces
the lost one. One connection is shared by every agent of a run (calls are awaited on one
event loop; a lock makes it safe from threads too).

A database problem is one readable line, never a traceback or a long hang: another process
holding the file locked is waited for :data:`BUSY_TIMEOUT_S` only, and it, a full disk or
an I/O error is a ``RecordStorageError`` (an ``OSError``: the run layer stops the run
cleanly, and a resume continues it); a file that is not a record is a ``RecordError``.

A run's checkpoint records what the record held (:meth:`CallRecord.seal`); a resume checks
the file still holds it and drops what came after (:func:`restore_to_seal`), so a record
that was deleted, emptied, cut or swapped is refused instead of silently continued.

``RecordingProvider`` wraps a provider and writes each call; ``ReplayProvider`` serves a
record's replies instead of asking a model, so a run can be re-driven for re-scoring,
debugging and regression tests without API keys or network.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from operator import is_
from pathlib import Path
from typing import Any

from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelProvider,
    TransientModelError,
    Usage,
    WrappedProvider,
)
from econbench.agents.models.canonical import canonical_json, sha256_hex
from econbench.agents.models.prefix_fold import PrefixFolds
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.agents.untrusted import kept_arguments, valid_text

SCHEMA_VERSION = 2
READABLE_VERSIONS = ("1", "2")
"""Schema 2 stores a call's message hashes as a change from the previous call's; schema 1
(every list in full) is still read, and a schema-1 record being continued stays schema 1."""
PAGE_SIZE = 1024
"""The page size of a new record file (an existing one keeps its own). A call commits a few
pages (the new messages, their hash index, the call row and its two indexes), each written
to the WAL and then to the file: at SQLite's default 4 KiB that was ~30 MB written for a
3 MB record over a 90-day run (``benchmarks/model_path.py``)."""
FULL_LIST_EVERY = 50
"""Every 50th call of an agent stores its request's message hashes in full, so a list is
read back from at most 50 rows. Storing every list in full made the record quadratic in a
conversation's length (31 MB for a 90-day run, and twice that written); as changes it grows
by the new messages only."""
_EXCERPT = 200
BUSY_TIMEOUT_S = 2.0
"""How long an operation waits for another process that holds the file locked before it
gives up with a ``RecordStorageError``: a reader (the viewer, a replay) holds it for
milliseconds; anything longer is a program that keeps it open (an ``sqlite3`` shell)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages(hash TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tools(hash TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS agents(
    agent TEXT PRIMARY KEY, model TEXT NOT NULL, context_window INTEGER, settings TEXT
);
CREATE TABLE IF NOT EXISTS calls(
    agent TEXT NOT NULL,
    idx INTEGER NOT NULL,
    request_key TEXT NOT NULL,
    model TEXT NOT NULL,
    message_hashes TEXT NOT NULL,
    tools_hash TEXT NOT NULL,
    config TEXT NOT NULL,
    output TEXT NOT NULL,
    PRIMARY KEY(agent, idx)
);
CREATE INDEX IF NOT EXISTS calls_by_key ON calls(agent, request_key, idx);
CREATE TABLE IF NOT EXISTS failures(
    agent TEXT NOT NULL,
    idx INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    request_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    error_type TEXT NOT NULL,
    message TEXT NOT NULL,
    retry_after REAL,
    PRIMARY KEY(agent, idx, seq)
);
"""


class RecordError(ValueError):
    """The record file cannot be used (missing, damaged, written by another schema version,
    or not what the run's checkpoint sealed); the message is one line."""


class RecordStorageError(OSError):
    """The record cannot be read or written right now: another process holds it locked,
    the disk is full, an I/O error. ``errno`` says which (``EBUSY``, ``ENOSPC``, ``EROFS``,
    ``EIO``) and ``strerror`` says it in words, naming the file."""


_STORAGE_ERRNO = {
    "SQLITE_BUSY": errno.EBUSY,
    "SQLITE_LOCKED": errno.EBUSY,
    "SQLITE_FULL": errno.ENOSPC,
    "SQLITE_READONLY": errno.EROFS,
    "SQLITE_PERM": errno.EACCES,
    "SQLITE_CANTOPEN": errno.EIO,
}
_DAMAGE = ("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_SCHEMA", "SQLITE_FORMAT")
_RESTORE = "restore the file from a copy, or start the run over (run it again with --overwrite)"


def _mapped(path: Path, exc: sqlite3.Error) -> Exception:
    """A readable one-line error for an SQLite failure on ``path``."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    code = next((v for k, v in _STORAGE_ERRNO.items() if name.startswith(k)), None)
    if code is None and name.startswith("SQLITE_IOERR"):
        code = errno.EIO
    if code == errno.EBUSY:
        text = (
            f"{path} is locked by another process (it waited {BUSY_TIMEOUT_S:g} s); close "
            "the program that holds it open (an sqlite3 shell, a database browser)"
        )
        return RecordStorageError(code, text)
    if code is not None:
        return RecordStorageError(code, f"{os.strerror(code)} ({path}: {exc})")
    if name.startswith(_DAMAGE) or isinstance(exc, sqlite3.DatabaseError):
        return RecordError(
            f"{path} is not a readable call record ({exc}): it is damaged; {_RESTORE}"
        )
    return RecordStorageError(errno.EIO, f"{path}: {exc}")


@contextlib.contextmanager
def _sqlite_errors(path: Path) -> Iterator[None]:
    """Turn an SQLite failure inside the block into :func:`_mapped`'s error."""
    try:
        yield
    except sqlite3.Error as exc:
        raise _mapped(path, exc) from None


# --------------------------------------------------------------------------- canonical forms


_sha256 = sha256_hex


def message_body(message: ChatMessage) -> str:
    """A message's canonical JSON as valid UTF-8 (a lone surrogate that reached a message
    some other way than a model's reply, which is cleaned on arrival, becomes U+FFFD); the
    message computes it once and keeps it (``ChatMessage.canonical``)."""
    return message.canonical


def tools_body(tools: Sequence[ToolSpec]) -> str:
    """What of a tool reaches the model: name, description and parameter schema."""
    return canonical_json(
        [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]
    )


_UNSET_CONFIG = (("tool_choice", None), ("request_style", "econbench"))
"""Config fields left out of keys and records at these values, so the requests of configs
that do not use them keep their keys (recordings and caches made before them still match)."""


def config_dict(config: GenerateConfig) -> dict[str, Any]:
    """The settings that shape a reply; ``timeout_s`` only bounds the wait, so it is left out.
    (Read, never changed: ``extra``'s values are the config's own, not copies.)"""
    data = {f.name: getattr(config, f.name) for f in fields(config)}
    data["extra"] = dict(config.extra)
    data.pop("timeout_s", None)
    for field, unset in _UNSET_CONFIG:
        if data.get(field) == unset:
            del data[field]
    return data


def _key(model: str, message_hashes: Sequence[str], tools_hash: str, config: dict) -> str:
    """SHA-256 of ``canonical_json({"model", "messages", "tools", "config"})``, the message
    list spelled by :func:`_plain_strings_json` (its part of the text, written by
    ``json.dumps``, was most of a call's recording CPU on a long conversation: issue 27)."""
    config_part = canonical_json({"config": config})[:-1]  # '{"config":{…}'
    rest = canonical_json({"model": model, "tools": tools_hash})[1:]  # '"model":…,"tools":…}'
    return _sha256(f'{config_part},"messages":{_plain_strings_json(message_hashes)},{rest}')


def _plain_strings_json(items: Sequence[str]) -> str:
    """``canonical_json(list(items))``: strings of ASCII letters and digits (digests) need no
    escaping, so they are quoted and joined; anything else is left to ``json.dumps``."""
    if "".join(items).encode().translate(None, _ASCII_ALNUM):  # a character to escape, maybe
        return canonical_json(list(items))
    return '["' + '","'.join(items) + '"]' if items else "[]"


_ASCII_ALNUM = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def request_key(
    model_name: str,
    messages: Sequence[ChatMessage],
    tools: Sequence[ToolSpec],
    config: GenerateConfig,
) -> str:
    """SHA-256 over everything that determines the reply: the model, the messages, the tool
    schemas and the generation settings (not the timeout). Messages and tools enter through
    the hashes of their canonical JSON, the same hashes the record stores them under (each
    message's computed once, ``ChatMessage.digest``)."""
    return _key(
        model_name,
        [m.digest for m in messages],
        _sha256(tools_body(tools)),
        config_dict(config),
    )


class _Digests:
    """The digests of the messages of the calls recorded (``prefix_fold``: a call's repeated
    messages are not looked up again)."""

    def __init__(self) -> None:
        self.hashes: list[str] = []

    def add(self, _index: int, message: ChatMessage) -> None:
        self.hashes.append(message.digest)


def common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading items ``a`` and ``b`` share."""
    if len(a) <= len(b) and list(a) == list(b[: len(a)]):  # the usual case, compared at once
        return len(a)
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def message_hashes_of(
    db: sqlite3.Connection,
    agent: str,
    idx: int,
    stored: str,
    known: tuple[int, list[str]] | None = None,
) -> list[str]:
    """The full list of message hashes of call ``idx`` of ``agent``, from its stored form
    (a list, or a change from the previous call's; see the module docstring), reading back
    through ``db`` to the nearest list in full; ``known``: an already resolved (idx, list)
    of the same agent that may end the walk early."""
    changes: list[dict[str, Any]] = []
    at, data = idx, json.loads(stored)
    while not isinstance(data, list):
        if not isinstance(data, dict) or not isinstance(data.get("add"), list):
            raise RecordError(f"call {idx} of {agent} has unreadable message hashes")
        changes.append(data)
        at -= 1
        if known is not None and known[0] == at:
            data = known[1]
            break
        row = db.execute(
            "SELECT message_hashes FROM calls WHERE agent = ? AND idx = ?", (agent, at)
        ).fetchone()
        if row is None:
            raise RecordError(
                f"call {idx} of {agent} is stored as a change from call {at}, which is missing"
            )
        data = json.loads(row[0])
    hashes = list(data)
    for change in reversed(changes):
        hashes = hashes[: int(change["keep"])] + list(change["add"])
    return hashes


def output_to_dict(output: ModelOutput) -> dict[str, Any]:
    """A reply as JSON, ``provider_data`` and usage included (the marker only when set)."""
    data: dict[str, Any] = {
        "model": output.model,
        "text": output.text,
        "tool_calls": [
            {"name": c.name, "arguments": c.arguments, "call_id": c.call_id}
            for c in output.tool_calls
        ],
        "reasoning": output.reasoning,
        "usage": output.usage.to_dict(),
        "cost_usd": output.cost_usd,
        "stop_reason": output.stop_reason,
        "provider_data": output.provider_data,
    }
    if output.cache_hit:
        data["cache_hit"] = True
    if output.truncated:  # a reply cut to what the harness keeps (boundary.cap_reply)
        data["truncated"] = output.truncated
    return data


def output_from_dict(data: dict[str, Any]) -> ModelOutput:
    return ModelOutput(
        model=data.get("model", ""),
        text=data.get("text", ""),
        tool_calls=[
            ToolCall(c["name"], kept_arguments(c.get("arguments", {})), c.get("call_id"))
            for c in data.get("tool_calls", [])
        ],
        reasoning=data.get("reasoning"),
        usage=Usage(**data.get("usage", {})),
        cost_usd=data.get("cost_usd"),
        stop_reason=data.get("stop_reason"),
        provider_data=data.get("provider_data"),
        cache_hit=bool(data.get("cache_hit", False)),
        truncated=data.get("truncated") or None,
    )


# --------------------------------------------------------------------------- failures

_KINDS: dict[str, type[ModelError]] = {
    "transient": TransientModelError,
    "overflow": ContextOverflowError,
    "fatal": FatalModelError,
}


def _kind_of(exc: ModelError) -> str:
    for kind, base in _KINDS.items():
        if isinstance(exc, base):
            return kind
    return "fatal"  # a bare ModelError stops the run, as a fatal one does


def _error_class(kind: str, name: str) -> type[ModelError]:
    """The loaded class of that name under the kind's base (so a replayed error reads the
    same in the event log), else a subclass of the base with that name."""
    base = _KINDS[kind]
    stack: list[type[ModelError]] = [base]
    while stack:
        cls = stack.pop()
        if cls.__name__ == name:
            return cls
        stack.extend(cls.__subclasses__())
    return type(name, (base,), {"__module__": __name__})


@dataclass(frozen=True)
class RecordedFailure:
    """A failed attempt: raised again, as recorded, when a replay reaches it."""

    agent: str
    idx: int
    seq: int
    request_key: str
    kind: str
    error_type: str
    message: str
    retry_after: float | None

    def exception(self) -> ModelError:
        cls = _error_class(self.kind, self.error_type)
        exc = cls.__new__(cls)
        ModelError.__init__(exc, self.message)
        if isinstance(exc, TransientModelError):
            exc.retry_after = self.retry_after
        return exc


# --------------------------------------------------------------------------- the record


@dataclass(frozen=True)
class RecordedCall:
    """One recorded call; its messages are read on demand (``CallRecord.messages_of``)."""

    agent: str
    idx: int
    request_key: str
    model: str
    message_hashes: list[str]
    tools_hash: str
    config: dict[str, Any]
    output: dict[str, Any]

    def model_output(self) -> ModelOutput:
        """A fresh ``ModelOutput`` (the caller may change it freely)."""
        return output_from_dict(self.output)


@dataclass(frozen=True)
class AgentInfo:
    agent: str
    model: str
    context_window: int | None
    settings: dict[str, Any] | None


class CallRecord:
    """``record.sqlite``: a run's model calls. Use as a context manager, or ``close()``.

    ``readonly=True`` opens an existing record for replay and never writes to it.
    """

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._lock = threading.Lock()
        self._known: set[str] = set()
        self._digests: PrefixFolds[_Digests] = PrefixFolds(_Digests, slots=16)
        self._last_tools: tuple[list[ToolSpec], str, str] | None = None
        self._lists: dict[str, tuple[int, list[str]]] = {}  # per agent: its last list read
        self._deltas = False  # set once the file is known to be schema 2
        self._identity: tuple[int, int] | None = None
        if readonly:
            if not self.path.is_file():
                raise RecordError(f"{self.path}: no such record file")
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            with _sqlite_errors(self.path):
                self._db = _connect(uri, uri=True)
            self._check_version()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _sqlite_errors(self.path):
            self._db = _connect(self.path)
        try:
            with self._lock, _sqlite_errors(self.path), self._db:
                # Before the first table: small pages, as each commit writes every page it
                # touches (a few per call) to the WAL and again to the file.
                self._db.execute(f"PRAGMA page_size={PAGE_SIZE}")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: survives kill -9
                self._db.executescript(_SCHEMA)
                self._db.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
        except Exception:
            self._db.close()
            raise
        self._check_version()
        self._identity = _identity(self.path)

    def _check_version(self) -> None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.Error as exc:
            self._db.close()
            error = _mapped(self.path, exc)
            if isinstance(error, RecordError):
                error = RecordError(f"{self.path} is not a call record: {exc}")
            raise error from None
        if row is None or row[0] not in READABLE_VERSIONS:
            self._db.close()
            found = row[0] if row else "none"
            raise RecordError(
                f"{self.path} has record schema version {found}; this econbench reads "
                f"versions {', '.join(READABLE_VERSIONS)}"
            )
        self._deltas = row[0] == str(SCHEMA_VERSION)

    # ------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the file. A writer leaves it in rollback-journal mode, one self-contained
        file at rest (no ``-wal``/``-shm`` beside it, none made by a later read-only open)."""
        with self._lock:
            if not self.readonly:
                # Fails (harmlessly: the file stays in WAL mode) while another connection
                # still has it open, or when the disk is full.
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("PRAGMA journal_mode=DELETE")
            with contextlib.suppress(sqlite3.Error):
                self._db.close()

    def __enter__(self) -> CallRecord:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CallRecord({str(self.path)!r})"

    # ------------------------------------------------------------ writing
    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One transaction, committed at the end (rolled back on an error, mapped to a
        readable one by :func:`_sqlite_errors`)."""
        with self._lock, _sqlite_errors(self.path), self._db:
            yield self._db

    def register_agent(
        self,
        agent: str,
        model: str,
        context_window: int | None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        with self._writing():
            self._db.execute(
                "INSERT OR REPLACE INTO agents(agent, model, context_window, settings) "
                "VALUES (?, ?, ?, ?)",
                (agent, model, context_window, None if settings is None else json.dumps(settings)),
            )

    def add_call(
        self,
        agent: str,
        idx: int,
        model: str,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        config: GenerateConfig,
        output: ModelOutput,
    ) -> str:
        """Store one successful call (replacing any older row at that index); its key."""
        with self._lock:
            hashes = list(self._digests.fold(messages).hashes)  # each message's, computed once
        tool_text, tools_hash = self._tools_text(tools)
        settings = config_dict(config)
        key = _key(model, hashes, tools_hash, settings)
        known = self._known
        start = self._stored_before(agent, idx, hashes)
        fresh = {
            h: m.canonical
            for h, m in zip(hashes[start:], messages[start:], strict=True)
            if h not in known
        }
        output_text = json.dumps(output_to_dict(output), ensure_ascii=False)
        with self._writing():
            stored = self._stored_hashes(agent, idx, hashes)
            if fresh:
                self._db.executemany(
                    "INSERT OR IGNORE INTO messages(hash, body) VALUES (?, ?)", fresh.items()
                )
            if tools_hash not in self._known:
                self._db.execute(
                    "INSERT OR IGNORE INTO tools(hash, body) VALUES (?, ?)", (tools_hash, tool_text)
                )
            self._db.execute(
                "INSERT OR REPLACE INTO calls(agent, idx, request_key, model, message_hashes, "
                "tools_hash, config, output) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    agent,
                    idx,
                    key,
                    model,
                    stored,
                    tools_hash,
                    canonical_json(settings),
                    output_text,
                ),
            )
        known.update(fresh)
        known.add(tools_hash)
        self._lists[agent] = (idx, hashes)
        return key

    def _stored_before(self, agent: str, idx: int, hashes: list[str]) -> int:
        """How many leading messages of call ``idx`` the agent's previous call recorded (so
        they are stored already)."""
        cached = self._lists.get(agent)
        if cached is None or cached[0] != idx - 1:
            return 0
        return common_prefix(cached[1], hashes)

    def _tools_text(self, tools: Sequence[ToolSpec]) -> tuple[str, str]:
        """``tools_body(tools)`` and its hash, kept while the same tools are offered (a tool's
        schema is settled once offered, as a message is once sent)."""
        last = self._last_tools
        if last is not None and len(last[0]) == len(tools) and all(map(is_, last[0], tools)):
            return last[1], last[2]
        text = tools_body(tools)
        self._last_tools = (list(tools), text, _sha256(text))
        return text, self._last_tools[2]

    def _stored_hashes(self, agent: str, idx: int, hashes: list[str]) -> str:
        """How call ``idx`` stores its hashes: a change from call ``idx - 1``, or in full
        (every ``FULL_LIST_EVERY``-th call, the first, a schema-1 file). A call recorded
        after it that is stored as a change from it is first stored in full, so replacing
        this call cannot change how that one reads."""
        cached = self._lists.get(agent)
        if cached is not None and cached[0] >= idx:  # a call rewritten: its list may change
            del self._lists[agent]
        following = self._db.execute(
            "SELECT message_hashes FROM calls WHERE agent = ? AND idx = ?", (agent, idx + 1)
        ).fetchone()
        if following is not None and not isinstance(json.loads(following[0]), list):
            whole = message_hashes_of(self._db, agent, idx + 1, following[0])
            self._db.execute(
                "UPDATE calls SET message_hashes = ? WHERE agent = ? AND idx = ?",
                (json.dumps(whole), agent, idx + 1),
            )
        if not self._deltas or idx % FULL_LIST_EVERY == 0:
            return json.dumps(hashes)
        previous = self._list_at(self._db, agent, idx - 1)
        if previous is None:
            return json.dumps(hashes)
        keep = common_prefix(previous, hashes)
        return json.dumps({"keep": keep, "add": hashes[keep:]})

    def _list_at(self, db: sqlite3.Connection, agent: str, idx: int) -> list[str] | None:
        """Call ``idx``'s message hashes (``None`` when there is no such call)."""
        cached = self._lists.get(agent)
        if cached is not None and cached[0] == idx:
            return cached[1]
        row = db.execute(
            "SELECT message_hashes FROM calls WHERE agent = ? AND idx = ?", (agent, idx)
        ).fetchone()
        if row is None:
            return None
        resolved = message_hashes_of(db, agent, idx, row[0], self._lists.get(agent))
        self._lists[agent] = (idx, resolved)
        return resolved

    def add_failure(self, agent: str, idx: int, seq: int, key: str, exc: ModelError) -> None:
        retry_after = exc.retry_after if isinstance(exc, TransientModelError) else None
        with self._writing():
            self._db.execute(
                "INSERT OR REPLACE INTO failures(agent, idx, seq, request_key, kind, error_type, "
                "message, retry_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    agent,
                    idx,
                    seq,
                    key,
                    _kind_of(exc),
                    type(exc).__name__,
                    valid_text(str(exc)),  # a server's error text may hold anything
                    retry_after,
                ),
            )

    def truncate(self, agent: str, idx: int) -> None:
        """Forget ``agent``'s calls and failures from ``idx`` on (a resume redoes them)."""
        with self._writing():
            self._db.execute("DELETE FROM calls WHERE agent = ? AND idx >= ?", (agent, idx))
            self._db.execute("DELETE FROM failures WHERE agent = ? AND idx >= ?", (agent, idx))

    # ------------------------------------------------------------ reading
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock, _sqlite_errors(self.path):
            return self._db.execute(sql, args).fetchall()

    def agents(self) -> list[str]:
        """Every agent with calls or an entry of its own, sorted."""
        rows = self._query("SELECT agent FROM agents UNION SELECT agent FROM calls ORDER BY agent")
        return [r[0] for r in rows]

    def agent_info(self, agent: str) -> AgentInfo | None:
        rows = self._query(
            "SELECT model, context_window, settings FROM agents WHERE agent = ?", (agent,)
        )
        if not rows:
            return None
        model, window, settings = rows[0]
        return AgentInfo(agent, model, window, None if settings is None else json.loads(settings))

    _CALL = (
        "SELECT agent, idx, request_key, model, message_hashes, tools_hash, config, output "
        "FROM calls "
    )

    def _call(self, row: tuple[Any, ...]) -> RecordedCall:
        agent, idx, key, model, stored, tools_hash, config, output = row
        with self._lock, _sqlite_errors(self.path):
            hashes = message_hashes_of(self._db, agent, idx, stored, self._lists.get(agent))
        self._lists[agent] = (idx, hashes)
        return RecordedCall(
            agent, idx, key, model, hashes, tools_hash, json.loads(config), json.loads(output)
        )

    def call_at(self, agent: str, idx: int) -> RecordedCall | None:
        rows = self._query(self._CALL + "WHERE agent = ? AND idx = ?", (agent, idx))
        return self._call(rows[0]) if rows else None

    def find_call(self, agent: str, key: str, after: int) -> RecordedCall | None:
        """The first call of ``agent`` with this request key and an index above ``after``."""
        rows = self._query(
            self._CALL + "WHERE agent = ? AND request_key = ? AND idx > ? ORDER BY idx LIMIT 1",
            (agent, key, after),
        )
        return self._call(rows[0]) if rows else None

    def next_call(self, agent: str, after: int) -> RecordedCall | None:
        rows = self._query(
            self._CALL + "WHERE agent = ? AND idx > ? ORDER BY idx LIMIT 1", (agent, after)
        )
        return self._call(rows[0]) if rows else None

    def calls(self, agent: str | None = None) -> Iterator[RecordedCall]:
        """Every call (of one agent, or all), in agent then index order."""
        if agent is None:
            rows = self._query(self._CALL + "ORDER BY agent, idx")
        else:
            rows = self._query(self._CALL + "WHERE agent = ? ORDER BY idx", (agent,))
        return (self._call(r) for r in rows)

    def spent_usd(self) -> float:
        """What the recorded calls cost in all: their priced dollars, cache hits and
        unpriced calls counting nothing (as ``--cost-limit`` counts them)."""
        total = 0.0
        for (text,) in self._query("SELECT output FROM calls"):
            output = json.loads(text)
            cost = output.get("cost_usd") if isinstance(output, dict) else None
            if isinstance(cost, int | float) and not output.get("cache_hit"):
                total += float(cost)
        return total

    def count_calls(self, agent: str | None = None) -> int:
        if agent is None:
            return int(self._query("SELECT COUNT(*) FROM calls")[0][0])
        return int(self._query("SELECT COUNT(*) FROM calls WHERE agent = ?", (agent,))[0][0])

    def failure_at(self, agent: str, idx: int, seq: int) -> RecordedFailure | None:
        rows = self._query(
            "SELECT request_key, kind, error_type, message, retry_after FROM failures "
            "WHERE agent = ? AND idx = ? AND seq = ?",
            (agent, idx, seq),
        )
        return RecordedFailure(agent, idx, seq, *rows[0]) if rows else None

    def has_message(self, digest: str) -> bool:
        """Whether the record holds the message (committed: a checkpoint may name it)."""
        if digest in self._known:
            return True
        found = bool(self._query("SELECT 1 FROM messages WHERE hash = ?", (digest,)))
        if found:
            self._known.add(digest)
        return found

    def message(self, digest: str) -> ChatMessage:
        rows = self._query("SELECT body FROM messages WHERE hash = ?", (digest,))
        if not rows:
            raise RecordError(f"{self.path}: message {digest[:12]} is missing")
        return ChatMessage.from_dict(json.loads(rows[0][0]))

    def messages_of(self, call: RecordedCall) -> list[ChatMessage]:
        """The request's conversation, rebuilt from the stored messages."""
        return [self.message(h) for h in call.message_hashes]

    def tools_of(self, call: RecordedCall) -> list[dict[str, Any]]:
        rows = self._query("SELECT body FROM tools WHERE hash = ?", (call.tools_hash,))
        return json.loads(rows[0][0]) if rows else []

    # ------------------------------------------------------------ seals
    def seal(self) -> dict[str, Any]:
        """What the record holds now, for a checkpoint to record (:func:`restore_to_seal`
        checks a file against it): the number of calls, and per agent its calls (numbered
        from 0), the request key of its last one and its failed attempts before it.

        A writer first checks its file is still the one it opened: a record deleted or
        replaced while the run writes it would lose every call from then on, so that is a
        ``RecordStorageError`` (the run stops) rather than a seal of a file no one can read.
        """
        if not self.readonly and _identity(self.path) != self._identity:
            raise RecordStorageError(
                errno.ENOENT,
                f"{self.path} was deleted or replaced while the run was writing it, so the "
                "calls recorded since are in no file",
            )
        with self._lock, _sqlite_errors(self.path):
            return _seal_of(self._db)


# --------------------------------------------------------------------------- seals


def _connect(target: Path | str, *, uri: bool = False) -> sqlite3.Connection:
    return sqlite3.connect(target, uri=uri, check_same_thread=False, timeout=BUSY_TIMEOUT_S)


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's device and inode (which file a name refers to), ``None`` when missing."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _holding(db: sqlite3.Connection, agent: str, calls: int) -> dict[str, Any]:
    """What ``db`` holds of ``agent``'s first ``calls`` calls: how many, the request key of
    the last one, and the failed attempts made while waiting for them."""
    held = db.execute(
        "SELECT COUNT(*) FROM calls WHERE agent = ? AND idx < ?", (agent, calls)
    ).fetchone()[0]
    last = db.execute(
        "SELECT request_key FROM calls WHERE agent = ? AND idx = ?", (agent, calls - 1)
    ).fetchone()
    failures = db.execute(
        "SELECT COUNT(*) FROM failures WHERE agent = ? AND idx < ?", (agent, calls)
    ).fetchone()[0]
    return {"calls": int(held), "failures": int(failures), "last_key": last[0] if last else None}


def _seal_of(db: sqlite3.Connection) -> dict[str, Any]:
    counts = db.execute("SELECT agent, COUNT(*) FROM calls GROUP BY agent ORDER BY agent")
    agents = {agent: _holding(db, agent, int(n)) for agent, n in counts.fetchall()}
    return {"calls": sum(a["calls"] for a in agents.values()), "agents": agents}


EMPTY_SEAL: dict[str, Any] = {"calls": 0, "agents": {}}
"""The seal of a record that holds no call (or does not exist yet)."""


def seal_file(path: Path | str) -> dict[str, Any]:
    """The seal (:meth:`CallRecord.seal`) of the record at ``path`` when no connection to it
    is open (``EMPTY_SEAL`` when there is no file yet)."""
    path = Path(path)
    if not path.exists():
        return dict(EMPTY_SEAL)
    with _sqlite_errors(path):
        db = _connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
        try:
            return _seal_of(db)
        finally:
            db.close()


def _sealed_agents(path: Path, seal: Any) -> dict[str, dict[str, Any]]:
    """The per-agent entries of ``seal``, checked for shape (a ``RecordError`` if not)."""
    agents = seal.get("agents") if isinstance(seal, Mapping) else None
    if not isinstance(agents, Mapping) or not all(
        isinstance(a, Mapping)
        and isinstance(a.get("calls"), int)
        and a["calls"] > 0
        and isinstance(a.get("failures"), int)
        and isinstance(a.get("last_key"), str)
        for a in agents.values()
    ):
        raise RecordError(f"the checkpoint has no valid record of what {path.name} held")
    return {str(k): dict(v) for k, v in agents.items()}


def restore_to_seal(path: Path | str, seal: Any, *, cut: bool = True) -> None:
    """Check that the record at ``path`` still holds what a checkpoint sealed (``seal``, from
    :meth:`CallRecord.seal`), then, with ``cut``, drop what was recorded after it: the calls
    of the tick or episode that was in flight, which the resume makes again.

    A record missing, emptied, cut short or holding other calls than the sealed ones is a
    ``RecordError`` that says so (resuming over it would leave a record that cannot replay
    the run). The one rebuild that loses nothing: when the checkpoint sealed no call, a
    missing record is simply made anew by the run.
    """
    path = Path(path)
    agents = _sealed_agents(path, seal)
    total = sum(a["calls"] for a in agents.values())
    try:
        info = path.lstat()
    except FileNotFoundError:
        if total:
            raise RecordError(
                f"{path} is missing, but the run's checkpoint sealed {total} model call(s) in "
                f"it: it was deleted after they were made, and the run cannot be resumed "
                f"without them; {_RESTORE}"
            ) from None
        if cut:
            for sidecar in (f"{path}-wal", f"{path}-shm", f"{path}-journal"):
                Path(sidecar).unlink(missing_ok=True)  # of a deleted file: not its own
        return
    if not stat.S_ISREG(info.st_mode):
        raise RecordError(f"{path} is not a regular file; {_RESTORE}")
    if info.st_size == 0 and total:
        raise RecordError(
            f"{path} is empty, but the run's checkpoint sealed {total} model call(s) in it: "
            f"it was emptied after they were made; {_RESTORE}"
        )
    with _sqlite_errors(path):
        db = _connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    try:
        with _sqlite_errors(path):
            _check_seal(path, db, agents)
            if cut:
                with db:
                    _cut(db, agents)
    finally:
        db.close()


def _check_seal(path: Path, db: sqlite3.Connection, agents: Mapping[str, Any]) -> None:
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if version is None or version[0] not in READABLE_VERSIONS:
        raise RecordError(f"{path} is not a call record of this econbench; {_RESTORE}")
    for agent, want in sorted(agents.items()):
        held = _holding(db, agent, want["calls"])
        if held["calls"] != want["calls"]:
            raise RecordError(
                f"{path} holds {held['calls']} of the {want['calls']} model calls of {agent} "
                f"that the run's checkpoint sealed: it was emptied, cut or replaced after "
                f"they were made; {_RESTORE}"
            )
        if held["last_key"] != want["last_key"]:
            differs = f"{agent}'s call {want['calls'] - 1} is another request"
        elif held["failures"] != want["failures"]:
            differs = f"{agent} has {held['failures']} failed attempts, not {want['failures']}"
        else:
            continue
        raise RecordError(
            f"{path} does not hold the model calls the run's checkpoint sealed ({differs}): "
            f"it was replaced, perhaps by another run's record; {_RESTORE}"
        )


def _cut(db: sqlite3.Connection, agents: Mapping[str, Any]) -> None:
    """Drop the calls and failed attempts beyond the sealed ones (every one of an agent
    the seal does not name)."""
    for table in ("calls", "failures"):
        recorded = [r[0] for r in db.execute(f"SELECT DISTINCT agent FROM {table}")]
        for agent in recorded:
            keep = agents[agent]["calls"] if agent in agents else 0
            db.execute(f"DELETE FROM {table} WHERE agent = ? AND idx >= ?", (agent, keep))


# --------------------------------------------------------------------------- providers


def _limiter_key(provider: ModelProvider) -> str:
    return str(getattr(provider, "provider", provider.name.partition("/")[0]))


class RecordingProvider(WrappedProvider):
    """Forwards to ``inner`` and records each call at ``index`` (then the next index).

    Failed attempts are recorded too, against the index of the call they delayed. The
    index is checkpointed through ``state_dict``/``load_state`` (the agent's checkpoint calls
    them), so after a resume the next call lands at the right index and what the record
    holds from there on — calls lost with the crash — is dropped, to be redone.
    """

    def __init__(self, inner: ModelProvider, record: CallRecord, agent: str) -> None:
        super().__init__(inner)
        self.record = record
        self.agent = agent
        self.index = 0
        self._failed = 0
        settings = getattr(inner, "settings", None)
        dump = getattr(settings, "model_dump", None)
        record.register_agent(
            agent, self.name, self.context_window, dump(mode="json") if callable(dump) else None
        )

    def __repr__(self) -> str:
        return f"RecordingProvider({self.inner!r}, agent={self.agent!r}, index={self.index})"

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        try:
            output = await self.inner.generate(messages, tools, config)
        except ModelError as exc:
            key = request_key(self.name, messages, tools, config)
            self.record.add_failure(self.agent, self.index, self._failed, key, exc)
            self._failed += 1
            raise
        self.record.add_call(self.agent, self.index, self.name, messages, tools, config, output)
        self.index += 1
        self._failed = 0
        return output

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"index": self.index}
        inner_state = getattr(self.inner, "state_dict", None)
        if callable(inner_state):
            state["inner"] = inner_state()
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        self.index = int(state["index"])
        self._failed = 0
        self.record.truncate(self.agent, self.index)
        load = getattr(self.inner, "load_state", None)
        if state.get("inner") is not None and callable(load):
            load(state["inner"])


def _excerpt(message: ChatMessage | None) -> str:
    if message is None:
        return "(no message)"
    text = message.content
    if message.tool_calls:
        text += " " + " ".join(
            f"{c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in message.tool_calls
        )
    text = text.strip()
    cut = text[:_EXCERPT] + ("…" if len(text) > _EXCERPT else "")
    return f"{message.role}: {cut!r}"


class ReplayProvider(ModelProvider):
    """Serves one agent's recorded replies; never asks a model, needs no key or network.

    Strict (the default): each request is looked up by its request key among the agent's
    calls after the last one served — so it needs no saved position after a resume — and a
    request the record does not hold raises ``FatalModelError`` naming the agent, the call
    index that diverged and the first message that differs from the recorded request.
    Lenient (``strict=False``): the next recorded call is served whatever was asked.

    Failed attempts recorded before a call are raised again first (in strict mode when the
    request matches the failed one), so retries, forced compactions and a fatal stop happen
    where they did. Usage, cost and the cache marker are served as recorded, so a replayed
    run's event log and summary match the original's.

    ``like`` is the provider the configuration would have used; it is never called, only
    its name (the model the key is computed for) and context window are taken when the
    record does not say.
    """

    def __init__(
        self,
        record: CallRecord,
        agent: str,
        strict: bool = True,
        *,
        like: ModelProvider | None = None,
    ) -> None:
        self.record = record
        self.agent = agent
        self.strict = strict
        info = record.agent_info(agent)
        if like is not None:
            self.name = like.name
        elif info is not None:
            self.name = info.model
        else:
            self.name = "replay/unknown"
        if info is not None and info.context_window:
            self.context_window = int(info.context_window)
        elif like is not None:
            self.context_window = getattr(like, "context_window", ModelProvider.context_window)
        self._like = like
        self.last = -1
        self._raised = 0

    def __repr__(self) -> str:
        mode = "strict" if self.strict else "lenient"
        return f"ReplayProvider({self.record!r}, agent={self.agent!r}, {mode}, last={self.last})"

    @property
    def provider(self) -> str:
        return _limiter_key(self._like) if self._like is not None else self.name.partition("/")[0]

    @property
    def settings(self) -> Any:
        return getattr(self._like, "settings", None)

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        key = request_key(self.name, messages, tools, config)
        expected = self.last + 1
        failure = self.record.failure_at(self.agent, expected, self._raised)
        if failure is not None and (not self.strict or failure.request_key == key):
            self._raised += 1
            raise failure.exception()
        if self.strict:
            call = self.record.find_call(self.agent, key, self.last)
            if call is None:
                raise FatalModelError(self._divergence(expected, messages, tools, config))
        else:
            call = self.record.next_call(self.agent, self.last)
            if call is None:
                raise FatalModelError(
                    f"replay: the record holds no call for agent {self.agent} after call "
                    f"{self.last} (the original run made {self.last + 1})"
                )
        self.last = call.idx
        self._raised = 0
        return call.model_output()

    def _divergence(
        self,
        idx: int,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        config: GenerateConfig,
    ) -> str:
        """Why the request is not the recorded call ``idx``: the first differing message,
        else the tools, the settings or the model."""
        head = f"replay diverged: agent {self.agent}, call {idx}: the request is not in the record"
        recorded = self.record.call_at(self.agent, idx)
        if recorded is None:
            total = self.record.count_calls(self.agent)
            return f"{head} (the original run made {total} call(s) for this agent)"
        old = recorded.message_hashes
        new = [m.digest for m in messages]
        for i in range(max(len(old), len(new))):
            if i >= len(old) or i >= len(new) or old[i] != new[i]:
                was = self.record.message(old[i]) if i < len(old) else None
                now = messages[i] if i < len(new) else None
                return (
                    f"{head}; first difference at message {i} (recorded request: {len(old)} "
                    f"messages, this one: {len(new)}):\n"
                    f"  recorded {_excerpt(was)}\n  now      {_excerpt(now)}"
                )
        if recorded.tools_hash != _sha256(tools_body(tools)):
            was_names = [t["name"] for t in self.record.tools_of(recorded)]
            now_names = [t.name for t in tools]
            return f"{head}; the tools differ: recorded {was_names}, now {now_names}"
        if recorded.config != config_dict(config):
            return (
                f"{head}; the settings differ: recorded {recorded.config}, "
                f"now {config_dict(config)}"
            )
        if recorded.model != self.name:
            return f"{head}; the model differs: recorded {recorded.model}, now {self.name}"
        return f"{head}; the same request was already served at an earlier call"

    def state_dict(self) -> dict[str, Any]:
        return {"last": self.last}

    def load_state(self, state: dict[str, Any]) -> None:
        self.last = int(state["last"])
        self._raised = 0
