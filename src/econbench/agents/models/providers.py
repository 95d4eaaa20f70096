"""One record per model provider: everything the harness knows about a ``provider/`` prefix.

The registry's name parsing, key and base-URL look-ups and settings checks, the settings'
per-provider lists, the command line's help and the provider contract tests all read
``PROVIDERS``, so adding a provider is one ``ProviderInfo`` here, its class and its fake
server (``docs/guides/add_a_provider.md``). Standard library only, and factories are
``module:Class`` strings: ``econbench --help`` and a scripted run import no provider SDK.

What is the same for every provider is not a field: each provider's concurrency limit is
keyed by its name (``ConcurrencyLimiter.key_for``), and prices are looked up by the bare
model name, the prefix stripped (``pricing.PriceTable.get``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal

RequestStyle = Literal["econbench", "paper", "coffee_paper"]

API_NAMES = {"chat": "Chat Completions", "responses": "Responses API"}
"""What each value of a model's ``api`` setting sends, for error messages."""


@dataclass(frozen=True)
class ProviderInfo:
    """A provider: its name, how its key and URL are found, its classes and what it accepts."""

    name: str
    """The prefix of its model names (``openai`` in ``openai/gpt-5.5``)."""
    label: str
    """Its name in prose (error messages): ``OpenAI``, ``OpenAI-compatible``."""
    form: str
    """Its model form in help texts and errors: ``openai/MODEL``, ``hf/PATH``."""
    example: str
    """Shown after ``form`` in the list of valid forms: an example or what MODEL is."""
    factories: tuple[tuple[str, str], ...]
    """(API, ``module:Class``) per API the provider speaks, its default first. The class is
    imported only when a model is built; where a provider has several, the model's ``api``
    setting picks one."""
    key_env: tuple[str, ...] = ()
    """The variables its key is read from, in order, unless settings name ``api_key_env``."""
    key_required: bool = True
    """False: without ``api_key_env`` the SDK gets a dummy key (a local server needs none),
    and no default variable is read (its host is whatever ``base_url`` names)."""
    key_hosts: tuple[str, ...] = ()
    """The hosts (besides this machine) a default-variable key may be sent to: a
    ``base_url`` naming another must come with ``api_key_env``. Empty: any host."""
    base_url_env: str | None = None
    """The variable its SDK reads the base URL from (honoured from ``.env`` too)."""
    base_url_required: bool = False
    """True: the SDK has no default server, so a base URL must be given."""
    request_styles: tuple[tuple[RequestStyle, str | None], ...] = (("econbench", None),)
    """The request styles it can send, each with the API that style requires (``None``: any)."""
    compat_default: Literal["openai", "generic"] | None = None
    """The OpenAI wire-form profile it starts from (``compat``); ``None``: the wire-form
    settings (``OPENAI_ONLY_SETTINGS``) do not apply to it."""
    local: bool = False
    """A model run in-process: no key, no base URL, free unless prices are given."""
    name_prefixes: tuple[str, ...] = ()
    """How its bare model names start, to suggest ``provider/NAME`` for a name without one."""
    help_note: str = ""
    """Said after ``form`` in the command line's short list of model forms."""

    @property
    def apis(self) -> tuple[str, ...]:
        """The APIs it speaks, the default first."""
        return tuple(api for api, _ in self.factories)

    def styles(self) -> tuple[str, ...]:
        return tuple(style for style, _ in self.request_styles)

    def style_api(self, style: str) -> str | None:
        """The API a request style sends for this provider (``None``: whichever is set)."""
        return dict(self.request_styles).get(style)

    def provider_class(self, api: str | None = None) -> Any:
        """The class that speaks ``api`` (the default when ``None``), imported now."""
        target = dict(self.factories)[api or self.apis[0]]
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)


_MODELS = "econbench.agents.models"
_ALL_STYLES: tuple[tuple[RequestStyle, str | None], ...] = (
    ("econbench", None),
    ("paper", "chat"),
    ("coffee_paper", None),
)

PROVIDERS: tuple[ProviderInfo, ...] = (
    ProviderInfo(
        name="openai",
        label="OpenAI",
        form="openai/MODEL",
        example="e.g. openai/gpt-5.5",
        factories=(
            ("responses", f"{_MODELS}.openai_provider:OpenAIResponsesProvider"),
            ("chat", f"{_MODELS}.openai_provider:OpenAIChatProvider"),
        ),
        key_env=("OPENAI_API_KEY",),
        key_hosts=("api.openai.com",),
        base_url_env="OPENAI_BASE_URL",
        # The CoffeeBench reference's OpenAI class speaks the Responses API.
        request_styles=(("econbench", None), ("paper", "chat"), ("coffee_paper", "responses")),
        compat_default="openai",
        name_prefixes=("gpt-", "o1", "o3", "o4", "chatgpt"),
    ),
    ProviderInfo(
        name="anthropic",
        label="Anthropic",
        form="anthropic/MODEL",
        example="e.g. anthropic/claude-sonnet-4-6",
        factories=(("messages", f"{_MODELS}.anthropic_provider:AnthropicProvider"),),
        key_env=("ANTHROPIC_API_KEY",),
        base_url_env="ANTHROPIC_BASE_URL",
        request_styles=_ALL_STYLES,
        name_prefixes=("claude",),
    ),
    ProviderInfo(
        name="google",
        label="Gemini",
        form="google/MODEL",
        example="e.g. google/gemini-3.1-pro",
        factories=(("gemini", f"{_MODELS}.gemini_provider:GeminiProvider"),),
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        base_url_env="GOOGLE_GEMINI_BASE_URL",
        # The paper's RawChat had no Gemini backend; the CoffeeBench reference's GeminiModel.
        request_styles=(("econbench", None), ("coffee_paper", None)),
        name_prefixes=("gemini",),
    ),
    ProviderInfo(
        name="openai-compatible",
        label="OpenAI-compatible",
        form="openai-compatible/MODEL",
        example="any OpenAI-compatible server at OPENAI_BASE_URL or the model's base_url",
        factories=(("chat", f"{_MODELS}.openai_provider:OpenAIChatProvider"),),
        # OPENAI_API_KEY must never travel to whatever host base_url names: a server that needs
        # a key gets it only from the variable its api_key_env names.
        key_required=False,
        base_url_env="OPENAI_BASE_URL",
        base_url_required=True,
        request_styles=_ALL_STYLES,
        compat_default="generic",
    ),
    ProviderInfo(
        name="hf",
        label="local",
        form="hf/PATH",
        example="a local transformers model folder, e.g. hf/models/smollm2 from "
        "`econbench models prepare smollm2`",
        factories=(("local", f"{_MODELS}.hf.provider:HFProvider"),),
        key_required=False,
        local=True,
        help_note="(a local model folder)",
    ),
)

BY_NAME: dict[str, ProviderInfo] = {info.name: info for info in PROVIDERS}
NAMES: tuple[str, ...] = tuple(BY_NAME)

GUESS_FALLBACK = "openai-compatible"
"""Suggested for a bare model name no provider's ``name_prefixes`` match."""


def get(name: str) -> ProviderInfo:
    """The record of a provider (a name from ``NAMES``)."""
    return BY_NAME[name]


def guess(model: str) -> str:
    """The provider a bare model name most likely belongs to (for "did you mean")."""
    low = model.lower()
    for info in PROVIDERS:
        if info.name_prefixes and low.startswith(info.name_prefixes):
            return info.name
    return GUESS_FALLBACK


def with_style(style: str) -> tuple[str, ...]:
    """The providers that can send request style ``style``."""
    return tuple(info.name for info in PROVIDERS if style in info.styles())


def with_wire_forms() -> tuple[str, ...]:
    """The providers the OpenAI wire-form settings apply to."""
    return tuple(info.name for info in PROVIDERS if info.compat_default is not None)


def valid_forms() -> str:
    """Every model form with its example, for error messages."""
    return ", ".join(f"{info.form} ({info.example})" for info in PROVIDERS)


def help_forms() -> str:
    """The model forms in a command's help: ``openai/MODEL, …, hf/PATH (a local model folder)``."""
    return ", ".join(" ".join(filter(None, (info.form, info.help_note))) for info in PROVIDERS)
