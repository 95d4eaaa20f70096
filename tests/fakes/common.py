"""The shared machinery of the fake provider servers.

A fake server is a real HTTP server on 127.0.0.1 (a random free port, a background thread)
that the official SDKs talk to through their normal base-URL setting. Each protocol module
translates its wire format to a neutral ``BrainRequest``, asks a *brain* (a plain function)
for a ``BrainReply``, and translates that back. Faults queued on the server are consumed one
per request, so a test can script "429, then 500, then a slow reply, then success".

Usage is realistic: prompt tokens are estimated from the request (4 characters a token),
and the longest prefix shared with an earlier request of the same server counts as cached
input, the way automatic prompt caching behaves.
"""

from __future__ import annotations

import bisect
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


@dataclass
class BrainRequest:
    """A model call, protocol-neutral: what the model would see."""

    model: str
    system: str
    messages: list[dict[str, Any]]
    """Each: role (user|assistant|tool), content (str), tool_calls [{id,name,arguments}],
    tool_call_id."""
    tools: list[dict[str, Any]]
    """Each: name, description, parameters (JSON schema)."""
    max_tokens: int | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class BrainReply:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Each: name, arguments (dict, or a str sent verbatim — e.g. malformed JSON), and
    optionally the id to send (else the server makes one)."""
    reasoning: str | None = None
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None


Brain = Callable[[BrainRequest], BrainReply]


@dataclass
class Fault:
    """One injected failure, consumed by the next request.

    kind: "status" (reply ``status`` with an error body and optional Retry-After),
    "delay" (sleep ``seconds`` before answering normally), "malformed_tool_json" (the reply's
    first tool call carries unparseable arguments), "unknown_tool" (call a tool that does
    not exist), "empty" (no text, no tool call), "context_overflow" (the provider's
    prompt-too-long error), "drop" (close the connection without answering), "truncated"
    (the reply ends at the output-token limit) and "filtered" (the provider stopped it on
    content grounds), each reported in the provider's own stop-reason words.
    """

    kind: str
    status: int = 500
    retry_after: float | None = None
    seconds: float = 0.0
    message: str = "injected fault"
    headers: dict[str, str] = field(default_factory=dict)
    """More headers of a "status" fault (e.g. ``Retry-After-Ms``)."""
    body: Any = None
    """What a "body" fault sends: bytes as they are, anything else as JSON."""
    body_status: int = 200
    """The status a "body" fault answers with (a broken reply usually comes with a 200)."""


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (a timeout test) is expected, not an error to print."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeServer:
    """Base class: run with ``with SomeServer(brain) as server: server.base_url``."""

    #: Set by subclasses: {(method, path-prefix): handler-method-name}
    routes: ClassVar[dict[tuple[str, str], str]] = {}

    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self.faults: deque[Fault] = deque()
        self.requests: list[dict[str, Any]] = []
        #: Each request's body as the bytes that arrived (``requests`` holds it parsed).
        self.raw_bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self._prefixes: list[str] = []  # every earlier prompt, sorted
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle
    def __enter__(self) -> FakeServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; without TCP_NODELAY the client's
            # delayed ACK adds ~40 ms to every keep-alive request.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                server._dispatch(self, "GET")

            def do_POST(self) -> None:
                server._dispatch(self, "POST")

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------ plumbing
    def _dispatch(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        with self._lock:
            self.requests.append({"method": method, "path": handler.path, "body": body})
            self.raw_bodies.append(raw)
            self.headers.append({k.lower(): v for k, v in handler.headers.items()})
            fault = self.faults.popleft() if self.faults else None
        path = handler.path.split("?", 1)[0]
        route = next(
            (
                name
                for (m, prefix), name in self.routes.items()
                if m == method and path.startswith(prefix)
            ),
            None,
        )
        if route is None:
            route = self.match_route(method, path)
        # Per request: a keep-alive connection reuses its handler for the next one.
        handler.trickle_s = fault.seconds if fault and fault.kind == "trickle" else 0.0  # type: ignore[attr-defined]
        if route is None:
            self.send_json(handler, 404, {"error": {"message": f"no route {method} {path}"}})
            return
        if fault is not None:
            if fault.kind == "drop":
                handler.close_connection = True
                handler.wfile.flush()
                handler.connection.close()
                return
            if fault.kind == "status":
                headers = dict(fault.headers)
                if fault.retry_after is not None:
                    headers["Retry-After"] = str(fault.retry_after)
                self.send_json(
                    handler, fault.status, self.error_body(fault.status, fault.message), headers
                )
                return
            if fault.kind == "body":
                self.send_body(handler, fault.body_status, fault.body)
                return
            if fault.kind == "context_overflow":
                self.send_json(handler, 400, self.context_overflow_body())
                return
            if fault.kind == "delay":
                time.sleep(fault.seconds)
        getattr(self, route)(handler, body, fault)

    def match_route(self, method: str, path: str) -> str | None:
        """Subclasses with templated paths (e.g. Gemini's /models/{m}:generateContent)."""
        return None

    @staticmethod
    def send_json(
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
    ) -> None:
        FakeServer.send_body(handler, status, payload, headers)

    @staticmethod
    def send_body(
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer with ``payload`` (bytes as they are, anything else as JSON); a "trickle"
        fault on this request sends the body one byte at a time."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        pause = getattr(handler, "trickle_s", 0.0)
        if not pause:
            handler.wfile.write(data)
            return
        handler.wfile.flush()
        for i in range(len(data)):  # each byte well within any per-read timeout
            time.sleep(pause)
            handler.wfile.write(data[i : i + 1])
            handler.wfile.flush()

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "server_error", "code": status}}

    def context_overflow_body(self) -> dict[str, Any]:
        return {"error": {"message": "prompt is too long", "type": "invalid_request_error"}}

    # ------------------------------------------------------------ the brain
    def think(
        self, request: BrainRequest, fault: Fault | None
    ) -> tuple[BrainReply, dict[str, int]]:
        """Ask the brain, apply reply-shaping faults, and compute realistic usage."""
        if fault is not None and fault.kind == "empty":
            reply = BrainReply()
        else:
            reply = self.brain(request)
            if fault is not None and fault.kind == "malformed_tool_json" and reply.tool_calls:
                reply.tool_calls[0] = {**reply.tool_calls[0], "arguments": '{"qty": 5,,'}
            if fault is not None and fault.kind == "unknown_tool":
                reply.tool_calls = [{"name": "teleport_coffee", "arguments": {}}]
        # In prompt order (tools and system first, then the conversation), so a conversation
        # that grows at its end shares a long prefix with the previous request, as cached.
        prompt = json.dumps(
            {"tools": request.tools, "system": request.system, "messages": request.messages}
        )
        with self._lock:
            shared = _longest_shared_prefix(self._prefixes, prompt)
        input_tokens = (
            reply.input_tokens if reply.input_tokens is not None else estimate_tokens(prompt)
        )
        cached = (
            reply.cached_input_tokens
            if reply.cached_input_tokens is not None
            else min(input_tokens, (shared // 4 // 64) * 64)  # caches work in blocks
        )
        text_out = reply.text + json.dumps(reply.tool_calls)
        output = (
            reply.output_tokens if reply.output_tokens is not None else estimate_tokens(text_out)
        )
        reasoning = (
            reply.reasoning_tokens
            if reply.reasoning_tokens is not None
            else (estimate_tokens(reply.reasoning) if reply.reasoning else 0)
        )
        usage = {
            "input": input_tokens,
            "cached": cached,
            "output": output + reasoning,
            "reasoning": reasoning,
        }
        return reply, usage


def _longest_shared_prefix(earlier: list[str], prompt: str) -> int:
    """The longest prefix ``prompt`` shares with any of ``earlier`` (kept sorted; ``prompt``
    is inserted).

    Among sorted strings the longest common prefix with a newcomer is found at its two
    neighbours in the order, so two comparisons stand for one per earlier prompt (a long
    run's requests made that quadratic: ~375,000 comparisons over a 90-day run).
    """
    at = bisect.bisect_left(earlier, prompt)
    shared = max((_common_prefix(prompt, p) for p in earlier[max(at - 1, 0) : at + 1]), default=0)
    earlier.insert(at, prompt)
    return shared


def _common_prefix(a: str, b: str) -> int:
    """Length of the shared prefix, by bisection on slice comparisons (C speed).

    A character loop costs ~18 ms per 100 kB prompt and runs against every earlier
    prompt, which made long runs through the fakes quadratic in Python time.
    """
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)
