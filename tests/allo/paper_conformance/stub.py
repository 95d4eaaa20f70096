"""A loopback stand-in for the Anthropic and OpenAI(-compatible) HTTP APIs that records every
request body exactly as it arrived and answers with the scripted player's reply.

The capture of the fixture used the same replies (ids, usage, wire forms): a conversation
econbench continues therefore carries the same tool-call ids as the paper's did. Unlike
``tests/fakes`` it checks nothing about the request (the fakes refuse, for example, sampling
parameters the paper's RL rollouts send): what arrives is what is compared.

    with RecordingStub() as stub:
        stub.begin(Player("urn", classes))
        ...  # play one episode against stub.anthropic_url / stub.openai_url
        requests, errors = stub.take()
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.allo.paper_conformance.player import Player, wire_response

API_OF_PATH = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "openai",
    "/v1/responses": "responses",
}


@dataclass
class Recorded:
    """One request as it arrived, with the player's answer."""

    path: str
    api: str
    raw: bytes
    body: dict[str, Any]
    task: int
    attempt: int
    reply: dict[str, Any]


class RecordingStub:
    """The server; ``begin`` hands it the player of the next episode."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._player: Player | None = None
        self._records: list[Recorded] = []
        self.errors: list[str] = []
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> RecordingStub:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without TCP_NODELAY the client's delayed
            # ACK holds each reply about 40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    status, payload = 200, stub._answer(self.path, raw)
                except Exception as exc:  # the client fails loudly: 400 is never retried
                    stub.errors.append(f"{self.path}: {type(exc).__name__}: {exc}")
                    status = 400
                    message = f"conformance stub: {exc}"
                    payload = {"error": {"type": "invalid_request_error", "message": message}}
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
            raise RuntimeError("the stub is not running")
        return int(self._httpd.server_address[1])

    @property
    def anthropic_url(self) -> str:
        """The base URL of the Anthropic SDK (it appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The base URL of the OpenAI SDK (it appends ``/chat/completions``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def begin(self, player: Player) -> None:
        """The next requests belong to a new episode, answered by ``player``."""
        with self._lock:
            self._player = player
            self._records = []
            self.errors = []

    def take(self) -> tuple[list[Recorded], list[str]]:
        """The requests of the episode so far and the stub's errors (requests it refused); the
        stub then refuses requests until the next ``begin``."""
        with self._lock:
            out, errors = self._records, self.errors
            self._records, self.errors, self._player = [], [], None
            return out, errors

    def _answer(self, path: str, raw: bytes) -> dict[str, Any]:
        tail = path.split("?", 1)[0].rstrip("/")
        api = API_OF_PATH.get(tail)
        if api is None:
            raise ValueError(f"no such endpoint {tail!r}")
        body = json.loads(raw)
        with self._lock:
            if self._player is None:
                raise RuntimeError("a request outside any episode")
            n, k, reply = self._player.reply(api, body)
            self._records.append(Recorded(tail, api, raw, body, n, k, reply.to_dict()))
        return wire_response(api, str(body.get("model", "model")), n, k, reply)
