"""The viewer's web server: the page, its three static files and a small JSON API.

It binds to a loopback address only (anything else is refused) and answers only requests
whose ``Host`` names the loopback, so neither another machine nor a web page served
elsewhere (DNS rebinding) can read the runs. Runs are addressed by the ids the scan hands
out (:mod:`econbench.runs.viewer.data`); static files come from a fixed table. Nothing in a
URL is ever joined to a path.

API (all ``GET``, all JSON):

- ``/api/runs`` — the runs under the folder, rescanned (each with the folder that holds it,
  ``group``, its ``name``, and the ``condition`` and ``actors`` the list filters by).
- ``/api/run/<id>`` — settings, metadata, summary and status of one run.
- CoffeeBench: ``/api/run/<id>/index`` (days with event counts, firms, sizes, festival days),
  ``/api/run/<id>/day/<n>[?firm=F]`` (one day's events),
  ``/api/run/<id>/transcript?firm=F&day=N`` (one firm's entries on one day),
  ``/api/run/<id>/ledger`` (deals and invoices), ``/api/run/<id>/daily?from=ROW``
  (daily snapshot rows), ``/api/run/<id>/events?from=BYTE[&max_bytes=N]`` (raw events from a
  line boundary, complete lines only; a page holds at most ``MAX_EVENTS_BYTES``).
- AlloBench: ``/api/run/<id>/episodes?from=N`` (episode figures),
  ``/api/run/<id>/episode/<n>`` (one episode with its turns and its task-stream ``strip``;
  ``n`` counts from 0, the page's labels and links from 1).
- Either, from ``record.sqlite`` (read-only): ``/api/run/<id>/calls`` (agents and their call
  counts), ``/api/run/<id>/call?agent=A&n=N[&from=I]`` (call ``N`` of agent ``A``: every
  message of the request in order, paged by ``MAX_CALL_BYTES``, the reply, usage, cache hit).
- Either: ``/api/run/<id>/search?q=TEXT`` (transcript entries or AlloBench turns whose text
  holds ``TEXT``, case-insensitive, at most ``search.MAX_HITS``).
- While a person plays a game through the server (its ``play``, :class:`PlayRoutes`): the
  game's page, ``GET /api/play/…`` and ``POST /api/play/…`` (JSON, from the loopback only).

Numbers in queries are plain ASCII digits up to ``MAX_QUERY_INT``; anything else is a 400 (a
404 in a path) with a message, never a 500.

Slow and idle clients hold little: a connection that has sent nothing waits in one selector
thread (:class:`ConnectionGate`), not a thread of its own, and is closed after
``idle_timeout`` seconds (the oldest is closed first when more than ``max_waiting`` wait);
at most ``max_threads`` requests are handled at once (the rest queue), and each must arrive
whole, and be answered, within ``idle_timeout`` seconds, so a client that trickles bytes
cannot keep a thread either.
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import json
import selectors
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from econbench.jsonio import json_line
from econbench.runs.viewer.data import Catalog, RunEntry, sweep_of
from econbench.runs.viewer.query import (
    ApiError,
    Route,
    found,
    query_int,
)
from econbench.runs.viewer.record_data import RecordData, RecordUnavailable

STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
LOOPBACK_NAMES = {"localhost"}
IDLE_TIMEOUT_S = 30.0
"""How long a client may be silent before its request, and how long the request may take
to arrive whole or its answer to be taken (a browser needs milliseconds)."""
MAX_THREADS = 32
"""Requests handled at once; more wait their turn (a page polls a few endpoints at a time)."""
MAX_WAITING = 256
"""Connections held beyond those being handled; past it the oldest idle one is closed."""


class NotLoopbackError(ValueError):
    """The viewer was asked to listen on an address other machines could reach."""


def check_loopback(host: str) -> str:
    """``host`` as an address to bind, if it is a loopback one; otherwise refuse."""
    if host in LOOPBACK_NAMES:
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise NotLoopbackError(
            f"refusing to serve on {host!r}: the viewer listens on loopback addresses only"
        ) from None
    if not address.is_loopback:
        raise NotLoopbackError(
            f"refusing to serve on {host}: the viewer listens on loopback addresses only "
            "(127.0.0.1 or ::1); use an SSH tunnel to view runs on another machine"
        )
    return str(address)


def host_header_ok(value: str | None) -> bool:
    """Whether a request's ``Host`` names the loopback (a DNS-rebinding guard)."""
    if not value:
        return False
    bracketed = value.startswith("[")  # [::1]:8000
    host = value[1:].partition("]")[0] if bracketed else value.partition(":")[0]
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _static(name: str) -> bytes:
    return resources.files("econbench.runs.viewer").joinpath("static", name).read_bytes()


def _record(read: Callable[[RecordData], Any], entry: RunEntry) -> Any:
    """``read`` applied to the run's record; a 404 saying why when there is none."""
    try:
        return read(RecordData(entry.ref.path))
    except RecordUnavailable as exc:
        raise ApiError(HTTPStatus.NOT_FOUND, str(exc)) from None


class Api:
    """Maps ``/api/...`` paths to the catalog's data."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def handle(self, parts: list[str], query: dict[str, list[str]]) -> Any:
        if parts == ["runs"]:
            return {
                "root": str(self.catalog.root),
                "sweep": sweep_of(self.catalog.root),
                "runs": [e.item() for e in self.catalog.scan()],
            }
        if len(parts) < 2 or parts[0] != "run":
            raise ApiError(HTTPStatus.NOT_FOUND, "no such endpoint")
        entry = self.catalog.get(parts[1])
        if entry is None:
            raise ApiError(HTTPStatus.NOT_FOUND, "no such run")
        rest = parts[2:]
        if not rest:
            return entry.overview()
        route = self._routes(entry).get((rest[0], len(rest)))
        if route is None:
            raise ApiError(HTTPStatus.NOT_FOUND, "no such endpoint")
        return route(entry, rest, query)

    def _routes(self, entry: RunEntry) -> dict[tuple[str, int], Route]:
        """The endpoints of every run, then those its benchmark's viewer data serves."""
        return {
            ("calls", 1): lambda e, r, q: _record(lambda d: d.agents(), e),
            ("search", 1): self._search,
            ("call", 1): self._call,
            **entry.data.routes(),
        }

    def _search(self, entry: RunEntry, rest: list[str], query: dict[str, list[str]]) -> Any:
        from econbench.runs.viewer.search import MAX_QUERY_CHARS

        text = (query.get("q") or [""])[0]
        if not text.strip():
            raise ApiError(HTTPStatus.BAD_REQUEST, "missing query parameter 'q'")
        if len(text) > MAX_QUERY_CHARS:
            raise ApiError(
                HTTPStatus.BAD_REQUEST, f"q must be at most {MAX_QUERY_CHARS} characters"
            )
        return entry.data.search(text)

    def _call(self, entry: RunEntry, rest: list[str], query: dict[str, list[str]]) -> Any:
        agent = (query.get("agent") or [""])[0]
        if not agent:
            raise ApiError(HTTPStatus.BAD_REQUEST, "missing query parameter 'agent'")
        n, start = query_int(query, "n"), query_int(query, "from", 0)
        return found(_record(lambda d: d.call(agent, n, start), entry), "call")


class _RequestReader(io.RawIOBase):
    """A connection's read side with one deadline for the whole request: each read waits
    only for what is left of it, so sending a byte now and then does not hold a thread."""

    def __init__(self, connection: socket.socket, seconds: float) -> None:
        super().__init__()
        self._connection = connection
        self._deadline = time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._connection.settimeout(left)
        return self._connection.recv_into(buffer)


class ViewerHandler(BaseHTTPRequestHandler):
    """One request: a static file or an API call."""

    server: ViewerServer
    server_version = "econbench-viewer"
    sys_version = ""

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout  # each write, too, waits at most this long
        super().setup()
        self.rfile.close()  # the socket's own reader, replaced by one with a deadline
        self.rfile = io.BufferedReader(_RequestReader(self.connection, self.timeout))

    def do_GET(self) -> None:
        self.connection.settimeout(self.timeout)  # the answer gets its own time
        if not host_header_ok(self.headers.get("Host")):
            self._send_json(HTTPStatus.FORBIDDEN, {"error": "the viewer answers loopback only"})
            return
        url = urlsplit(self.path)
        if self.server.play is not None and self._play_get(self.server.play, url.path, url.query):
            return
        if url.path in STATIC:
            name, kind = STATIC[url.path]
            self._send(HTTPStatus.OK, _static(name), kind)
            return
        if not url.path.startswith("/api/"):
            self._send_json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        parts = url.path[len("/api/") :].split("/")
        self._answer(lambda: self.server.api.handle(parts, parse_qs(url.query)))

    # ------------------------------------------------ a game a person plays (``play``)
    def _play_get(self, play: PlayRoutes, path: str, query: str) -> bool:
        """Serve ``path`` if it is the game's page or API; whether it was."""
        if path in play.static:
            folder, name, kind = play.static[path]
            data = resources.files("econbench.runs.viewer").joinpath(folder, name).read_bytes()
            self._send(HTTPStatus.OK, data, kind)
            return True
        if not path.startswith(PLAY_API):
            return False
        self._answer(lambda: play.get(path[len(PLAY_API) :].split("/"), parse_qs(query)))
        return True

    def do_POST(self) -> None:
        """A person's move in the game being played (the only thing the viewer takes): JSON,
        from a page on the loopback (a form elsewhere cannot send ``application/json``)."""
        self.connection.settimeout(self.timeout)
        play = self.server.play
        path = urlsplit(self.path).path
        if not host_header_ok(self.headers.get("Host")) or not _origin_ok(self.headers):
            self._send_json(HTTPStatus.FORBIDDEN, {"error": "the viewer answers loopback only"})
            return
        if play is None or not path.startswith(PLAY_API):
            self._send_json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        kind = (self.headers.get("Content-Type") or "").partition(";")[0].strip().lower()
        if kind != "application/json":
            self._send_json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send application/json"})
            return
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_PLAY_BODY:
            self._send_json(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                {"error": f"a move is sent with a Content-Length of at most {MAX_PLAY_BODY}"},
            )
            return
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, UnicodeDecodeError):
            self._send_json(HTTPStatus.BAD_REQUEST, {"error": "the body is not JSON"})
            return
        self._answer(lambda: play.post(path[len(PLAY_API) :].split("/"), body))

    def _answer(self, answer: Callable[[], Any]) -> None:
        """Send what ``answer()`` gives as JSON, or its error (an API error's status; any
        other exception as a 500, so that a bug does not take the server down with it)."""
        try:
            body = answer()
        except ApiError as exc:
            self._send_json(exc.status, {"error": str(exc)})
            return
        except Exception as exc:  # a bug must not take the server down with it
            self._send_json(
                HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"}
            )
            return
        self._send_json(HTTPStatus.OK, body)

    def _send_json(self, status: HTTPStatus, body: Any) -> None:
        self._send(status, json_line(body).encode("utf-8"), "application/json")

    def _send(self, status: HTTPStatus, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for key, value in SECURITY_HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        # The page may go elsewhere before the answer is sent: not an error worth a traceback.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return None  # the page polls every two seconds: no line per request


Connection = tuple[socket.socket, Any]
"""An accepted socket and the client's address."""


class ConnectionGate:
    """Holds accepted connections until they have something to read, then hands each to a
    handler thread, at most ``max_threads`` at once (the others queue in arrival order).

    An idle connection costs a socket, not a thread: one selector thread watches them all,
    closes each after ``idle_timeout`` seconds of silence, and closes the oldest first when
    more than ``max_waiting`` wait (a flood of idle connections cannot lock a page out)."""

    def __init__(
        self,
        handle: Callable[[socket.socket, Any], None],
        close: Callable[[socket.socket], None],
        *,
        idle_timeout: float,
        max_threads: int,
        max_waiting: int,
    ) -> None:
        if idle_timeout <= 0 or max_threads < 1 or max_waiting < 1:
            raise ValueError("idle_timeout must be positive, max_threads and max_waiting >= 1")
        self._handle, self._close = handle, close
        self.idle_timeout, self.max_threads, self.max_waiting = (
            idle_timeout,
            max_threads,
            max_waiting,
        )
        self._lock = threading.Lock()
        self._incoming: list[Connection] = []
        self._queued: deque[Connection] = deque()
        self._busy = 0
        self._closed = False
        self._waiting: dict[socket.socket, tuple[Any, float]] = {}
        """Owned by the gate's thread; in arrival order, which is deadline order."""
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        for end in (self._wake_r, self._wake_w):
            end.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name="econbench-viewer-gate")
        self._thread.daemon = True
        self._thread.start()

    def admit(self, connection: socket.socket, address: Any) -> None:
        """Take a connection just accepted (called from the server's thread)."""
        with self._lock:
            closed = self._closed
            if not closed:
                self._incoming.append((connection, address))
        if closed:
            self._close(connection)
        else:
            self._wake()

    def close(self) -> None:
        """Stop the gate and close every connection not being handled."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            left = [*self._incoming, *self._queued]
            self._incoming, self._queued = [], deque()
        self._wake()
        self._thread.join(timeout=5)
        for connection, _ in left:
            self._close(connection)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake-up is pending anyway) or closed
            self._wake_w.send(b"\0")

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    break
                incoming, self._incoming = self._incoming, []
            for connection, address in incoming:
                self._watch(connection, address)
            timeout = self._expire()
            for key, _ in self._selector.select(timeout):
                if key.fileobj is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                connection = key.fileobj
                assert isinstance(connection, socket.socket)
                address, _ = self._forget(connection)
                self._dispatch(connection, address)
        for connection in list(self._waiting):
            self._drop(connection)

    def _watch(self, connection: socket.socket, address: Any) -> None:
        try:
            self._selector.register(connection, selectors.EVENT_READ)
        except (OSError, ValueError):  # closed by the client already
            self._close(connection)
            return
        self._waiting[connection] = (address, time.monotonic() + self.idle_timeout)
        while len(self._waiting) > self.max_waiting:
            self._drop(next(iter(self._waiting)))

    def _expire(self) -> float | None:
        """Close the connections silent for too long; seconds until the next one is due."""
        now = time.monotonic()
        while self._waiting:
            connection, (_, deadline) = next(iter(self._waiting.items()))
            if deadline > now:
                return deadline - now
            self._drop(connection)
        return None

    def _forget(self, connection: socket.socket) -> tuple[Any, float]:
        self._selector.unregister(connection)
        return self._waiting.pop(connection)

    def _drop(self, connection: socket.socket) -> None:
        self._forget(connection)
        self._close(connection)

    def _dispatch(self, connection: socket.socket, address: Any) -> None:
        """Handle a connection with a request to read: in a new thread if one is free,
        else after the requests before it."""
        with self._lock:
            start = self._busy < self.max_threads
            queue = not start and len(self._queued) < self.max_waiting
            if start:
                self._busy += 1
            elif queue:
                self._queued.append((connection, address))
        if start:
            worker = threading.Thread(
                target=self._work, args=(connection, address), name="econbench-viewer-request"
            )
            worker.daemon = True
            worker.start()
        elif not queue:
            self._close(connection)

    def _work(self, connection: socket.socket, address: Any) -> None:
        """Handle one connection, then the queued ones, until none is left."""
        while True:
            self._handle(connection, address)
            with self._lock:
                if self._closed or not self._queued:
                    self._busy -= 1
                    return
                connection, address = self._queued.popleft()


class PlayRoutes(Protocol):
    """A game a person plays through this server (``econbench allo play``): its page's files
    and its API under ``/api/play/``. Set it as the server's ``play``."""

    static: Mapping[str, tuple[str, str, str]]
    """URL path → (folder beside this module, file name, content type)."""

    def get(self, parts: list[str], query: dict[str, list[str]]) -> Any:
        """The answer to ``GET /api/play/<parts>`` (``ApiError`` for an error status)."""
        ...

    def post(self, parts: list[str], body: Any) -> Any:
        """The answer to ``POST /api/play/<parts>`` with a JSON ``body``."""
        ...


PLAY_API = "/api/play/"
MAX_PLAY_BODY = 1_000_000
"""The largest move a page may post (a script is a few kilobytes)."""


def _origin_ok(headers: Any) -> bool:
    """A browser names the page that posts in ``Origin``: it must be on the loopback."""
    origin = headers.get("Origin")
    if origin is None:
        return True
    return host_header_ok(urlsplit(origin).netloc) if origin != "null" else False


class ViewerServer(ThreadingHTTPServer):
    """A threading HTTP server on a loopback address, serving one catalog, whose slow and
    idle clients hold bounded resources (see :class:`ConnectionGate`)."""

    daemon_threads = True
    play: PlayRoutes | None = None
    """A game being played here, whose page and API the server also serves."""
    allow_reuse_address = True
    request_queue_size = 128
    """Connections the kernel holds before they are accepted (the default 5 drops a burst)."""

    def __init__(
        self,
        catalog: Catalog,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        idle_timeout: float = IDLE_TIMEOUT_S,
        max_threads: int = MAX_THREADS,
        max_waiting: int = MAX_WAITING,
    ) -> None:
        address = check_loopback(host)
        self.address_family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self.api = Api(catalog)
        self.idle_timeout = idle_timeout
        self._gate = ConnectionGate(
            self.process_request_thread,
            self.shutdown_request,
            idle_timeout=idle_timeout,
            max_threads=max_threads,
            max_waiting=max_waiting,
        )
        try:
            super().__init__((address, port), ViewerHandler)
        except BaseException:  # the port is taken: stop the gate's thread too
            self._gate.close()
            raise

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand the connection to the gate, which starts a thread once it has a request."""
        self._gate.admit(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self._gate.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away or stalled is not worth a traceback on the terminal."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"


def serve_in_thread(server: ViewerServer) -> threading.Thread:
    """Serve from a daemon thread (tests, embedding); stop with ``server.shutdown()``."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="econbench-viewer"
    )
    thread.daemon = True
    thread.start()
    return thread
