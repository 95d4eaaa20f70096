"""A scripted loopback model server for the CoffeeBench ``paper`` conformance fixture.

One threaded HTTP server on 127.0.0.1 stands in for both providers the fixture uses: the
Anthropic Messages API (``POST …/v1/messages``) and the OpenAI Responses API
(``POST …/v1/responses``), both non-streaming and complete enough for the official SDKs. The
first path segment names the firm (``http://127.0.0.1:PORT/farmer_A/v1/messages``), so a
request says whose it is whatever the SDK. Every request body is kept as it arrived (raw
bytes, with its path), per firm, in arrival order; each firm's requests are sequential in the
reference (one call in flight per agent), so that order is deterministic even though two firms
query concurrently.

Replies come from a scenario, not from the request: per firm an ordered list of turns (a text
and at most one tool call, with the usage to report) and an ordered list of compaction
summaries. A request whose instructions are the reference's compaction prompt takes the next
summary; any other request takes the next turn; once the turns are used up the firm answers
with text only and no tool call. The server checks nothing about a request: what arrives is
what a test compares.

    with ScriptedServer(scenario) as server:
        client = OpenAI(base_url=server.base_url("roaster_A"), api_key="x")
        ...
        server.requests("roaster_A")  # [Recorded(path, raw, kind, reply_index), ...]
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMPACTION_PROMPT_PREFIX = (
    "You are summarizing a transcript of an LLM agent's turns in a multi-day business simulation."
)
"""How the reference's ``COMPACTION_SYSTEM_PROMPT`` begins: a request whose system prompt
(Anthropic) or first developer message (OpenAI) starts so is a compaction's summary request."""

APIS = ("anthropic", "openai")
ENDPOINTS = {"anthropic": ("/v1/messages",), "openai": ("/v1/responses", "/responses")}


@dataclass(frozen=True)
class ScriptedCall:
    """The one tool call of a scripted turn.

    ``arguments`` is a dict (sent as the provider sends parsed JSON: Anthropic's ``input``,
    OpenAI's ``arguments`` string as ``json.dumps(arguments)``) or a str sent verbatim as
    OpenAI's ``arguments`` (e.g. malformed JSON).
    """

    name: str
    arguments: dict[str, Any] | str
    call_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments, "call_id": self.call_id}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScriptedCall:
        return cls(name=d["name"], arguments=d["arguments"], call_id=d["call_id"])


@dataclass(frozen=True)
class Usage:
    """The token counts a reply reports. The reference compacts before an agent's next query
    once the last reply's prompt size (Anthropic: input + cache write + cache read; OpenAI:
    input) reaches 160,000 tokens (0.8 × 200,000)."""

    input_tokens: int = 1000
    output_tokens: int = 50
    cached_tokens: int = 0  # OpenAI input_tokens_details.cached_tokens
    cache_creation_input_tokens: int = 0  # Anthropic
    cache_read_input_tokens: int = 0  # Anthropic

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Usage:
        return cls(**(d or {}))


@dataclass(frozen=True)
class Reply:
    """One scripted turn. ``reasoning`` (OpenAI only) adds a reasoning item with that summary
    text; ``note`` is for the reader of the scenario and never sent."""

    text: str = ""
    tool_call: ScriptedCall | None = None
    usage: Usage = field(default_factory=Usage)
    reasoning: str | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text}
        out["tool_call"] = None if self.tool_call is None else self.tool_call.to_dict()
        out["usage"] = self.usage.to_dict()
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reply:
        call = d.get("tool_call")
        return cls(
            text=d.get("text", ""),
            tool_call=None if call is None else ScriptedCall.from_dict(call),
            usage=Usage.from_dict(d.get("usage")),
            reasoning=d.get("reasoning"),
            note=d.get("note", ""),
        )


@dataclass(frozen=True)
class FirmScript:
    """What one firm's model answers: ``api`` is "anthropic" or "openai"."""

    api: str
    model: str
    replies: tuple[Reply, ...]
    summaries: tuple[Reply, ...] = ()
    exhausted_text: str = "Nothing further to do right now."

    def to_dict(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "model": self.model,
            "replies": [r.to_dict() for r in self.replies],
            "summaries": [s.to_dict() for s in self.summaries],
            "exhausted_text": self.exhausted_text,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FirmScript:
        if d["api"] not in APIS:
            raise ValueError(f"unknown api {d['api']!r}")
        return cls(
            api=d["api"],
            model=d["model"],
            replies=tuple(Reply.from_dict(r) for r in d["replies"]),
            summaries=tuple(Reply.from_dict(s) for s in d.get("summaries", ())),
            exhausted_text=d.get("exhausted_text", "Nothing further to do right now."),
        )


@dataclass(frozen=True)
class Scenario:
    """The scripted firms plus the run parameters (free-form, for the capture and the test)."""

    firms: dict[str, FirmScript]
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "firms": {name: f.to_dict() for name, f in self.firms.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scenario:
        return cls(
            firms={name: FirmScript.from_dict(f) for name, f in d["firms"].items()},
            params=dict(d.get("params", {})),
        )


@dataclass(frozen=True)
class Recorded:
    """One request as it arrived. ``kind`` is "turn" or "summary"; ``reply_index`` indexes the
    firm's replies (turn) or summaries (summary), None for an answer past the script."""

    path: str
    raw: bytes
    kind: str
    reply_index: int | None

    @property
    def body(self) -> dict[str, Any]:
        return json.loads(self.raw)


def is_summary_request(api: str, body: dict[str, Any]) -> bool:
    """Whether ``body`` is the reference's compaction summary request (by its instructions)."""
    if api == "anthropic":
        system = body.get("system")
        return isinstance(system, str) and system.startswith(COMPACTION_PROMPT_PREFIX)
    items = body.get("input")
    if isinstance(items, list) and items and isinstance(items[0], dict):
        first = items[0]
        content = first.get("content")
        return (
            first.get("role") == "developer"
            and isinstance(content, str)
            and content.startswith(COMPACTION_PROMPT_PREFIX)
        )
    return False


def _item_ids(firm: str, tag: str) -> dict[str, str]:
    """The provider-side ids of a reply (OpenAI replays them in the next request's input), a
    pure function of firm and the reply's tag (``t007``: turn 7, ``s000``: summary 0,
    ``x031``: past the script, the firm's request 31) so the fixture and a replay agree."""
    return {
        "response": f"resp_{firm}_{tag}",
        "message": f"msg_{firm}_{tag}",
        "function_call": f"fc_{firm}_{tag}",
        "reasoning": f"rs_{firm}_{tag}",
    }


def anthropic_response(model: str, ids: dict[str, str], reply: Reply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text, "citations": None})
    call = reply.tool_call
    if call is not None:
        if not isinstance(call.arguments, dict):
            raise ValueError("an Anthropic tool call's arguments must be a dict")
        content.append(
            {"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments}
        )
    u = reply.usage
    return {
        "id": ids["message"],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if call is not None else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
        },
    }


def openai_response(model: str, ids: dict[str, str], reply: Reply) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        output.append(
            {
                "type": "reasoning",
                "id": ids["reasoning"],
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
            }
        )
    if reply.text:
        output.append(
            {
                "type": "message",
                "id": ids["message"],
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    call = reply.tool_call
    if call is not None:
        args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        output.append(
            {
                "type": "function_call",
                "id": ids["function_call"],
                "call_id": call.call_id,
                "name": call.name,
                "arguments": args,
                "status": "completed",
            }
        )
    u = reply.usage
    return {
        "id": ids["response"],
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": u.input_tokens,
            "input_tokens_details": {"cached_tokens": u.cached_tokens},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u.input_tokens + u.output_tokens,
        },
    }


class ScriptedServer:
    """The server. Use as a context manager; ``base_url(firm)`` is what the firm's SDK client
    takes, ``requests(firm)`` what it sent, ``errors`` the requests refused (answered 400,
    which the SDKs never retry)."""

    def __init__(self, scenario: Scenario | dict[str, Any]) -> None:
        if isinstance(scenario, dict):
            scenario = Scenario.from_dict(scenario)
        self.scenario = scenario
        self._lock = threading.Lock()
        self._records: dict[str, list[Recorded]] = {f: [] for f in scenario.firms}
        self._next_turn: dict[str, int] = {f: 0 for f in scenario.firms}
        self._next_summary: dict[str, int] = {f: 0 for f in scenario.firms}
        self.errors: list[str] = []
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> ScriptedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without TCP_NODELAY the client's
            # delayed ACK holds each reply about 40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    status, payload = 200, server._answer(self.path, raw)
                except Exception as exc:
                    server.errors.append(f"{self.path}: {type(exc).__name__}: {exc}")
                    status = 400
                    message = f"scripted server: {exc}"
                    payload = {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": message},
                    }
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    def base_url(self, firm: str) -> str:
        """The base URL of ``firm``'s SDK client: the Anthropic SDK appends ``/v1/messages``,
        the OpenAI SDK ``/responses`` (so its base carries the ``/v1``)."""
        api = self.scenario.firms[firm].api
        root = f"http://127.0.0.1:{self.port}/{firm}"
        return root if api == "anthropic" else f"{root}/v1"

    def requests(self, firm: str) -> list[Recorded]:
        """``firm``'s requests so far, in arrival order."""
        with self._lock:
            return list(self._records[firm])

    def bodies(self, firm: str) -> list[str]:
        """``firm``'s request bodies as text, in arrival order."""
        return [r.raw.decode("utf-8") for r in self.requests(firm)]

    def _answer(self, path: str, raw: bytes) -> dict[str, Any]:
        clean = path.split("?", 1)[0].rstrip("/")
        _, firm, endpoint = [*clean.split("/", 2), "", ""][:3]
        endpoint = "/" + endpoint
        script = self.scenario.firms.get(firm)
        if script is None:
            raise ValueError(f"no firm {firm!r} in the scenario")
        if endpoint not in ENDPOINTS[script.api]:
            raise ValueError(f"{firm} speaks {script.api}, not {endpoint!r}")
        body = json.loads(raw)
        summary = is_summary_request(script.api, body)
        with self._lock:
            position = len(self._records[firm])
            if summary:
                index: int | None = self._next_summary[firm]
                self._next_summary[firm] += 1
                if index >= len(script.summaries):
                    raise ValueError(f"{firm}: no scripted summary #{index}")
                reply = script.summaries[index]
            else:
                index = self._next_turn[firm]
                self._next_turn[firm] += 1
                if index < len(script.replies):
                    reply = script.replies[index]
                else:
                    index, reply = None, Reply(text=script.exhausted_text)
            kind = "summary" if summary else "turn"
            self._records[firm].append(Recorded(path, raw, kind, index))
        tag = f"x{position:03d}" if index is None else f"{kind[0]}{index:03d}"
        ids = _item_ids(firm, tag)
        model = str(body.get("model", script.model))
        if script.api == "anthropic":
            return anthropic_response(model, ids, reply)
        return openai_response(model, ids, reply)
