"""Per provider reached over HTTP, its fake server and what the contract tests need to drive it.

``tests/agents/test_provider_contract.py`` is parametrised from the provider records
(``econbench.agents.models.providers.PROVIDERS``) and ``FAKES``, so a new provider's fake is one
server module and one entry here. It lives apart from ``tests/fakes/__init__`` so that the network
guard every test imports (``tests.fakes.network``) does not load every server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .anthropic_server import FakeAnthropicServer
from .common import FakeServer
from .gemini_server import FakeGeminiServer
from .openai_server import FakeOpenAIServer


@dataclass(frozen=True)
class Fake:
    """A provider's fake server, and how the contract tests drive it."""

    server: type[FakeServer]
    key: str
    """A key in the provider's own format: the tests hunt for its traces in errors."""
    model: str
    """The model the provider asks for (and the server echoes)."""
    raw_stops: Mapping[str, str]
    """The provider's own stop word for: text, tool (a tool call), truncated, filtered."""
    url: Callable[[FakeServer], str]
    """The base URL its SDK is pointed at."""


_OPENAI = Fake(
    FakeOpenAIServer,
    "sk-proj-OPEN0123456789abcdefghQ7zX",
    "fake-model",
    {"text": "stop", "tool": "tool_calls", "truncated": "length", "filtered": "content_filter"},
    lambda server: server.base_url,
)

FAKES: dict[str, Fake] = {
    "openai": _OPENAI,
    "openai-compatible": _OPENAI,
    "anthropic": Fake(
        FakeAnthropicServer,
        "sk-ant-api03-ANTH0123456789abcdefQ7zX",
        "claude-sonnet-4-6",
        {"text": "end_turn", "tool": "tool_use", "truncated": "max_tokens", "filtered": "refusal"},
        lambda server: server.root_url,
    ),
    "google": Fake(
        FakeGeminiServer,
        "AIzaSyGEMI0123456789abcdefghijklmnoQ7zX",
        "gemini-3.1-pro",
        {"text": "stop", "tool": "stop", "truncated": "max_tokens", "filtered": "safety"},
        lambda server: server.root_url,
    ),
}
