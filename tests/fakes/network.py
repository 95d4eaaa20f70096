"""The test guard: no network beyond this machine, no real provider key.

Tests talk to fake provider servers on 127.0.0.1; a test that would reach a real host (a
forgotten base URL, an SDK's default endpoint) must fail instead of spending money or
hanging on an offline machine. Connections to loopback and Unix-domain sockets go through;
any other address raises ``NetworkBlockedError``, and the test fails at teardown even when
the code under test swallowed that error (SDKs wrap and retry connection errors).

Provider keys and base URLs are removed from the environment for every test, so a
developer's real key is never sent or written into a run directory; a test that needs one
sets it with ``monkeypatch.setenv``.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

#: Variables that carry a provider's key, or point a provider at a server.
PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "MOONSHOT_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "ZHIPUAI_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
)


class NetworkBlockedError(ConnectionRefusedError):
    """A test tried to connect beyond loopback.

    A ``ConnectionRefusedError`` so that code under test sees what an offline machine
    would show it; the teardown check makes the attempt fail the test regardless.
    """


def _is_local(family: int, address: Any) -> bool:
    """Whether ``address`` (as given to ``socket.connect``) stays on this machine."""
    if family == getattr(socket, "AF_UNIX", None) or family not in (
        socket.AF_INET,
        socket.AF_INET6,
    ):
        return True
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, bytes):
        host = host.decode()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # a name: connect() resolves it, and it may be anywhere


class NetworkGuard:
    """Patches ``socket.socket.connect``/``connect_ex``; records what it refused."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex

        def connect(sock: socket.socket, address: Any) -> None:
            self.check(sock, address)
            return real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            self.check(sock, address)
            return real_connect_ex(sock, address)

        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)

    def check(self, sock: socket.socket, address: Any) -> None:
        if not _is_local(sock.family, address):
            self.blocked.append(repr(address))
            raise NetworkBlockedError(f"tests may not connect to {address!r} (not loopback)")
