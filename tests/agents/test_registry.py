"""Model names, settings, keys from the environment and .env, base URLs, the factory, secrets.

Tests that hold for every provider loop over the records (``providers.PROVIDERS``), so a new
provider is checked here without an edit; the explicit cases pin today's texts and defaults."""

from __future__ import annotations

import asyncio
import importlib
import sys
import types
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from econbench.agents.models import providers
from econbench.agents.models.base import (
    ChatMessage,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    TransientModelError,
    Usage,
)
from econbench.agents.models.pricing import Price, clear_registered_prices, register_price
from econbench.agents.models.providers import PROVIDERS
from econbench.agents.models.registry import (
    VALID_FORMS,
    MissingKeyError,
    ModelConfigError,
    ModelSettings,
    PricedProvider,
    build_provider,
    check_keys,
    is_model_name,
    key_variables,
    make_limiter,
    parse_model_name,
    register_scripted,
    resolve_api_key,
    resolve_base_url,
    unregister_scripted,
)
from econbench.agents.models.scripted import ScriptedModel, text_output

SECRET = "sk-test-SECRET-0123456789abcdef"
ENV_VARS = [
    *(var for info in PROVIDERS for var in info.key_env),
    *(info.base_url_env for info in PROVIDERS if info.base_url_env),
    "MOONSHOT_API_KEY",
]
REMOTE = [info for info in PROVIDERS if not info.local]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No real key or .env of the developer's leaks into a test."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    clear_registered_prices()
    yield
    clear_registered_prices()


# ------------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("openai/gpt-5.5", ("openai", "gpt-5.5")),
        ("anthropic/claude-sonnet-4-6", ("anthropic", "claude-sonnet-4-6")),
        ("google/gemini-3.1-pro", ("google", "gemini-3.1-pro")),
        ("openai-compatible/my-model", ("openai-compatible", "my-model")),
        ("openai-compatible/Qwen/Qwen3-8B", ("openai-compatible", "Qwen/Qwen3-8B")),
        ("  OpenAI/gpt-5  ", ("openai", "gpt-5")),
    ],
)
def test_parse_good_names(name, parsed):
    assert parse_model_name(name) == parsed
    assert is_model_name(name)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("gpt-5.5", "Did you mean openai/gpt-5.5?"),
        ("claude-opus-4-7", "Did you mean anthropic/claude-opus-4-7?"),
        ("gemini-3.1-pro", "Did you mean google/gemini-3.1-pro?"),
        ("my-local-model", "Did you mean openai-compatible/my-local-model?"),
        ("azure/gpt-5", "unknown provider 'azure'"),
        ("openai/", "no model"),
        ("", "no provider"),
        ("scripted/roaster", "registered in code"),
    ],
)
def test_bad_names_are_clear_errors_listing_the_valid_forms(name, needle):
    with pytest.raises(ModelConfigError) as info:
        parse_model_name(name)
    assert needle in str(info.value)
    if needle != "no model":
        assert "openai-compatible/MODEL" in str(info.value)
    assert not is_model_name(name)
    assert isinstance(info.value, ValueError)


def test_policy_names_are_not_model_names():
    assert not is_model_name("passive")
    assert not is_model_name("heuristic")
    assert not is_model_name(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ settings


def test_settings_defaults_and_generate_config():
    s = ModelSettings()
    assert s.max_concurrency == 8
    assert s.compaction_threshold == 0.8
    assert s.api is None and s.base_url is None
    s = ModelSettings(
        temperature=0.2,
        max_tokens=2048,
        reasoning_effort="High",
        thinking_budget=4096,
        timeout_s=30,
    )
    config = s.generate_config()
    assert config == GenerateConfig(
        temperature=0.2,
        max_tokens=2048,
        reasoning_effort="high",
        thinking_budget=4096,
        timeout_s=30.0,
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"temperature": 3},
        {"max_tokens": 0},
        {"api": "completions"},
        {"compaction_threshold": 1.5},
        {"max_concurrency": 0},
        {"base_url": "127.0.0.1:8000"},
        {"unknown_field": 1},
    ],
)
def test_settings_are_validated(bad):
    with pytest.raises(ValidationError):
        ModelSettings(**bad)


def test_settings_never_hold_or_echo_a_key():
    with pytest.raises(ValidationError) as info:
        ModelSettings(api_key=SECRET)  # type: ignore[call-arg]
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    with pytest.raises(ValidationError) as info:
        ModelSettings(api_key_env=SECRET)
    assert SECRET not in str(info.value)
    assert "NAME of an environment variable" in str(info.value)


# ------------------------------------------------------------------------ keys


def test_keys_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("GEMINI_API_KEY", "gem")
    assert resolve_api_key("openai/gpt-5.5") == "sk-openai"
    assert resolve_api_key("anthropic/claude-haiku-4-5") == "sk-ant"
    assert resolve_api_key("google/gemini-3.1-pro") == "gem"
    check_keys(["openai/gpt-5.5", "anthropic/claude-haiku-4-5", "google/gemini-3.1-pro"])


def test_google_falls_back_to_google_api_key(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "goog")
    assert resolve_api_key("google/gemini-2.5-pro") == "goog"
    monkeypatch.setenv("GEMINI_API_KEY", "gem")
    assert resolve_api_key("google/gemini-2.5-pro") == "gem"


def test_keys_come_from_a_dotenv_file_without_overriding_the_environment(monkeypatch, tmp_path):
    (tmp_path / ".env").write_text(
        "# a comment\nANTHROPIC_API_KEY=sk-ant-from-file\nOPENAI_API_KEY='sk-openai-file'\n"
        "OPENAI_BASE_URL=http://127.0.0.1:8000/v1\n"
    )
    import os

    before = dict(os.environ)
    assert resolve_api_key("anthropic/claude-sonnet-4-6") == "sk-ant-from-file"
    assert resolve_api_key("openai/gpt-5") == "sk-openai-file"
    assert resolve_base_url("openai-compatible/m") == "http://127.0.0.1:8000/v1"
    assert dict(os.environ) == before, ".env must not be written into os.environ"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-env")
    assert resolve_api_key("openai/gpt-5") == "sk-real-env"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # empty counts as unset
    assert resolve_api_key("anthropic/claude-sonnet-4-6") == "sk-ant-from-file"


def test_dotenv_is_found_from_a_subdirectory(monkeypatch, tmp_path):
    (tmp_path / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-parent\n")
    sub = tmp_path / "runs" / "x"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert resolve_api_key("anthropic/claude-sonnet-4-6") == "sk-ant-parent"


def test_missing_keys_fail_before_the_run_naming_every_variable(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with pytest.raises(MissingKeyError) as info:
        check_keys(
            [
                "openai/gpt-5.5",
                "anthropic/claude-sonnet-4-6",
                "google/gemini-3.1-pro",
                "anthropic/claude-sonnet-4-6",
            ]
        )
    message = str(info.value)
    assert "ANTHROPIC_API_KEY" in message
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in message
    assert message.count("anthropic/claude-sonnet-4-6") == 1
    assert "OPENAI_API_KEY" not in message
    assert info.value.variables == ["ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"]
    assert SECRET not in message
    with pytest.raises(ModelConfigError, match="unknown provider"):
        check_keys(["bogus/model"])


def test_api_key_env_names_the_variable(monkeypatch):
    settings = ModelSettings(api_key_env="MOONSHOT_API_KEY", base_url="https://api.moonshot.ai/v1")
    with pytest.raises(MissingKeyError, match="MOONSHOT_API_KEY"):
        check_keys(["openai-compatible/kimi-k2.6"], {"openai-compatible/kimi-k2.6": settings})
    monkeypatch.setenv("MOONSHOT_API_KEY", "ms-key")
    assert resolve_api_key("openai-compatible/kimi-k2.6", settings) == "ms-key"
    check_keys(["openai-compatible/kimi-k2.6"], settings)
    # A custom variable on a first-party provider replaces the default one.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "default")
    custom = ModelSettings(api_key_env="MOONSHOT_API_KEY")
    assert resolve_api_key("anthropic/claude-haiku-4-5", custom) == "ms-key"


def test_openai_compatible_never_gets_the_openai_key_only_the_one_it_names(monkeypatch):
    """The server may be any host a config names: OPENAI_API_KEY must not travel there."""
    assert resolve_api_key("openai-compatible/llama") == "EMPTY"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    remote = ModelSettings(base_url="https://llm.example.net/v1")
    assert resolve_api_key("openai-compatible/llama") == "EMPTY"
    assert resolve_api_key("openai-compatible/llama", remote) == "EMPTY"
    assert key_variables("openai-compatible/llama", remote) == ()
    check_keys(["openai-compatible/llama"], remote)  # no key needed, none sent
    named = ModelSettings(base_url="https://llm.example.net/v1", api_key_env="LLM_KEY")
    with pytest.raises(MissingKeyError, match="LLM_KEY"):
        resolve_api_key("openai-compatible/llama", named)
    monkeypatch.setenv("LLM_KEY", "sk-llm")
    assert resolve_api_key("openai-compatible/llama", named) == "sk-llm"
    assert resolve_api_key("openai/gpt-5.5") == "sk-openai"  # its own provider still does


# ------------------------------------------------------------------------ base URLs


def test_openai_compatible_needs_a_base_url(monkeypatch):
    with pytest.raises(MissingKeyError) as info:
        check_keys(["openai-compatible/my-model"])
    assert "OPENAI_BASE_URL" in str(info.value) and "base_url" in str(info.value)
    with pytest.raises(MissingKeyError):
        resolve_base_url("openai-compatible/my-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    assert resolve_base_url("openai-compatible/my-model") == "http://127.0.0.1:8000/v1"
    check_keys(["openai-compatible/my-model"])
    own = ModelSettings(base_url="http://127.0.0.1:11434/v1")
    assert resolve_base_url("openai-compatible/my-model", own) == "http://127.0.0.1:11434/v1"


def test_first_party_base_urls_default_to_the_sdk(monkeypatch):
    assert resolve_base_url("openai/gpt-5.5") is None
    assert resolve_base_url("anthropic/claude-opus-4-7") is None
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999")
    assert resolve_base_url("anthropic/claude-opus-4-7") == "http://127.0.0.1:9999"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    assert resolve_base_url("openai/gpt-5.5") == "http://127.0.0.1:8000/v1"
    own = ModelSettings(base_url="https://proxy.example/v1")
    assert resolve_base_url("openai/gpt-5.5", own) == "https://proxy.example/v1"


def test_api_setting_applies_to_openai_only(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    with pytest.raises(ModelConfigError, match="OpenAI models"):
        check_keys(["anthropic/claude-haiku-4-5"], ModelSettings(api="chat"))
    with pytest.raises(ModelConfigError, match="Chat Completions"):
        check_keys(["openai-compatible/m"], ModelSettings(api="responses"))
    check_keys(["openai-compatible/m"], ModelSettings(api="chat"))


# ------------------------------------------------------------------------ the factory


class Recorder(ModelProvider):
    """Stands in for a concrete provider: records how it was built, answers a fixed usage."""

    built: ClassVar[list[Recorder]] = []

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        name: str | None = None,
        context_window: int = 200_000,
        client: Any = None,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.name = name or model
        self.context_window = context_window
        self.client = client
        self.fail_with: Exception | None = None
        self.cost: float | None = None
        Recorder.built.append(self)

    def __repr__(self) -> str:
        return f"Recorder({self.name!r})"

    async def generate(self, messages, tools, config):
        if self.fail_with is not None:
            raise self.fail_with
        return ModelOutput(
            model=self.model, usage=Usage(100_000, 0, 0, 100_000), cost_usd=self.cost
        )


@pytest.fixture
def fake_providers(monkeypatch):
    """Replace the module of every class a remote provider's record names by a fake one
    holding a ``Recorder`` subclass of that name (their real code is tested elsewhere)."""
    classes: dict[str, type[Recorder]] = {}
    modules: dict[str, types.ModuleType] = {}
    for info in REMOTE:
        for _, target in info.factories:
            module_name, _, class_name = target.partition(":")
            module = modules.setdefault(module_name, types.ModuleType(module_name))
            if class_name not in classes:
                classes[class_name] = type(class_name, (Recorder,), {})
            setattr(module, class_name, classes[class_name])
    for module in modules.values():
        monkeypatch.setitem(sys.modules, module.__name__, module)
        parent, _, short = module.__name__.rpartition(".")
        monkeypatch.setattr(importlib.import_module(parent), short, module, raising=False)
    Recorder.built = []
    return classes


def run(coro):
    return asyncio.run(coro)


def test_factory_picks_the_class_and_passes_key_url_and_window(monkeypatch, fake_providers):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-a")
    monkeypatch.setenv("GOOGLE_API_KEY", "g")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")

    p = build_provider("openai/gpt-5.5")
    assert isinstance(p, PricedProvider)
    assert type(p.inner).__name__ == "OpenAIResponsesProvider"
    assert (p.inner.model, p.inner.api_key, p.inner.name) == ("gpt-5.5", "sk-o", "openai/gpt-5.5")
    assert p.inner.base_url == "http://127.0.0.1:8000/v1"
    assert p.name == "openai/gpt-5.5" and p.provider == "openai"

    chat = build_provider("openai/gpt-5.5", ModelSettings(api="chat", context_window=400_000))
    assert type(chat.inner).__name__ == "OpenAIChatProvider"
    assert chat.context_window == 400_000 and chat.inner.context_window == 400_000

    compat = build_provider("openai-compatible/Qwen/Qwen3-8B")
    assert type(compat.inner).__name__ == "OpenAIChatProvider"
    assert compat.inner.model == "Qwen/Qwen3-8B"
    assert compat.inner.name == "openai-compatible/Qwen/Qwen3-8B"
    assert compat.inner.base_url == "http://127.0.0.1:8000/v1"

    ant = build_provider("anthropic/claude-sonnet-4-6", client="CLIENT")
    assert type(ant.inner).__name__ == "AnthropicProvider"
    assert ant.inner.client == "CLIENT" and ant.inner.base_url is None
    assert ant.context_window == 200_000

    gem = build_provider("google/gemini-3.1-pro")
    assert type(gem.inner).__name__ == "GeminiProvider" and gem.inner.api_key == "g"


def test_factory_without_a_key_or_url_is_a_clear_error(fake_providers):
    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
        build_provider("anthropic/claude-opus-4-7")
    with pytest.raises(MissingKeyError, match="OPENAI_BASE_URL"):
        build_provider("openai-compatible/llama")
    assert Recorder.built == []


def test_every_output_gets_its_cost_from_the_price_table(monkeypatch, fake_providers):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    p = build_provider("openai/gpt-5.5")
    out = run(p.generate([ChatMessage("user", "hi")], [], GenerateConfig()))
    assert out.cost_usd == pytest.approx(100_000 * 5 / 1e6 + 100_000 * 30 / 1e6)
    # Unknown model: cost stays None (and a provider's own figure is kept).
    unknown = build_provider("openai-compatible/my-model")
    assert run(unknown.generate([], [], GenerateConfig())).cost_usd is None
    unknown.inner.cost = 0.42
    assert run(unknown.generate([], [], GenerateConfig())).cost_usd == 0.42
    register_price("openai-compatible/my-model", Price(1, 1, 1, 1))
    assert run(unknown.generate([], [], GenerateConfig())).cost_usd == pytest.approx(0.2)


def test_keys_never_appear_in_repr_str_or_errors(monkeypatch, fake_providers):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    settings = ModelSettings(temperature=0.0)
    p = build_provider("anthropic/claude-sonnet-4-6", settings)
    assert p.inner.api_key == SECRET  # the provider holds it ...
    for text in (repr(p), str(p), repr(settings), str(settings), settings.model_dump_json()):
        assert SECRET not in text  # ... nothing else shows it
    # A provider error that quotes the key (e.g. an SDK echoing a header) is redacted.
    p.inner.fail_with = FatalModelError(f"401 invalid x-api-key {SECRET}")
    with pytest.raises(FatalModelError) as info:
        run(p.generate([], [], GenerateConfig()))
    assert SECRET not in str(info.value) and "[redacted]" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None
    p.inner.fail_with = TransientModelError(f"429 for key {SECRET}", retry_after=3.0)
    with pytest.raises(TransientModelError) as info:
        run(p.generate([], [], GenerateConfig()))
    assert SECRET not in str(info.value) and info.value.retry_after == 3.0
    # An error without the key passes through untouched (same object).
    original = FatalModelError("404 model not found")
    p.inner.fail_with = original
    with pytest.raises(FatalModelError) as info:
        run(p.generate([], [], GenerateConfig()))
    assert info.value is original


# ------------------------------------------------------------------------ scripted names


def test_scripted_names_exist_only_when_registered_in_code():
    assert not is_model_name("scripted/roaster")
    name = register_scripted("roaster", lambda messages, tools: "waiting")
    try:
        assert name == "scripted/roaster"
        assert parse_model_name("scripted/roaster") == ("scripted", "roaster")
        check_keys(["scripted/roaster"])  # no key needed
        a = build_provider("scripted/roaster")
        b = build_provider("scripted/roaster", ModelSettings(context_window=1_000))
        assert isinstance(a.inner, ScriptedModel) and a.inner is not b.inner  # fresh per build
        assert b.context_window == 1_000
        out = run(a.generate([ChatMessage("user", "day 1")], [], GenerateConfig()))
        assert out.text == "waiting" and out.cost_usd is None
    finally:
        unregister_scripted("scripted/roaster")
    assert not is_model_name("scripted/roaster")


def test_a_registered_scripted_instance_is_returned_and_priced():
    model = ScriptedModel("demo", [text_output("a", usage=Usage(1_000_000, 0, 0, 0))])
    register_scripted("scripted/demo", model)
    register_price("scripted/demo", Price(2, 2, 2, 2))
    try:
        p = build_provider("scripted/demo")
        assert p.inner is model
        out = run(p.generate([], [], GenerateConfig()))
        assert out.cost_usd == pytest.approx(2.0)
    finally:
        unregister_scripted("demo")


# ------------------------------------------------------------------------ real providers


@pytest.mark.parametrize("info", REMOTE, ids=lambda info: info.name)
def test_real_providers_construct_without_network(monkeypatch, info):
    for other in REMOTE:
        for var in other.key_env:
            monkeypatch.setenv(var, SECRET)
    name = f"{info.name}/my-model"
    settings = ModelSettings(base_url="http://127.0.0.1:9/v1", context_window=123_456)
    p = build_provider(name, settings)
    assert type(p.inner) is info.provider_class()
    assert p.inner.name == name
    assert p.context_window == 123_456
    for text in (repr(p), str(p), repr(p.inner), str(p.inner)):
        assert SECRET not in text


def test_the_default_openai_api_is_the_provider_modules():
    from econbench.agents.models.openai_provider import DEFAULT_OPENAI_API

    assert providers.get("openai").apis[0] == DEFAULT_OPENAI_API


def test_make_limiter_takes_each_providers_smallest_limit():
    settings = {
        "openai/gpt-5.5": ModelSettings(max_concurrency=4),
        "openai/gpt-5-mini": ModelSettings(max_concurrency=16),
        "anthropic/claude-sonnet-4-6": ModelSettings(max_concurrency=2),
    }
    limiter = make_limiter(
        [
            "openai/gpt-5.5",
            "openai/gpt-5-mini",
            "anthropic/claude-sonnet-4-6",
            "google/gemini-3.1-pro",
        ],
        settings,
    )
    assert limiter.limit("openai/gpt-5.5") == 4
    assert limiter.limit("anthropic") == 2
    assert limiter.limit("google/gemini-3.1-pro") == 8


@pytest.mark.parametrize(
    "field, value",
    [
        ("timeout_s", float("inf")),
        ("timeout_s", float("nan")),
        ("max_tokens", 10**12),
        ("thinking_budget", 10**12),
        ("context_window", 10**12),
        ("max_concurrency", 10**6),
        ("seed", 2**64),
        ("temperature", float("nan")),
    ],
)
def test_model_settings_numbers_have_finite_ranges(field: str, value: float) -> None:
    with pytest.raises(ValidationError):
        ModelSettings(**{field: value})


# ------------------------------------------------------------------------ every record


@pytest.mark.parametrize("info", PROVIDERS, ids=lambda info: info.name)
def test_every_provider_parses_and_is_a_valid_form(info):
    assert parse_model_name(f"{info.name}/some/model") == (info.name, "some/model")
    assert f"{info.form} ({info.example})" in VALID_FORMS
    with pytest.raises(ModelConfigError) as error:
        parse_model_name(f"{info.name}x/model")
    assert f"(did you mean '{info.name}'?)" in str(error.value)
    for prefix in info.name_prefixes:
        with pytest.raises(ModelConfigError, match=f"Did you mean {info.name}/{prefix}-9"):
            parse_model_name(f"{prefix}-9")


@pytest.mark.parametrize("info", REMOTE, ids=lambda info: info.name)
def test_every_remote_provider_needs_its_key_and_url(monkeypatch, info):
    name = f"{info.name}/m"
    wanted = list(info.key_env) if info.key_required else []
    if info.base_url_required:
        wanted.append(info.base_url_env)
    if wanted:
        with pytest.raises(MissingKeyError) as error:
            check_keys([name])
        assert error.value.variables == wanted
        assert " or ".join(info.key_env) in str(error.value)
    for var in info.key_env[:1]:
        monkeypatch.setenv(var, "k-env")
    if info.base_url_env:
        monkeypatch.setenv(info.base_url_env, "http://127.0.0.1:8000/v1")
        assert resolve_base_url(name) == "http://127.0.0.1:8000/v1"
    check_keys([name])
    assert resolve_api_key(name) == ("k-env" if info.key_required else "EMPTY")


def test_every_key_and_url_variable_is_cleared_by_the_network_guard():
    from tests.fakes.network import PROVIDER_ENV

    assert set(ENV_VARS) <= set(PROVIDER_ENV)


@pytest.mark.parametrize(
    ("module", "command", "option"),
    [("econbench.runs.coffee.cli", "run", "agent"), ("econbench.runs.allo.cli", "run", "policy")],
)
def test_the_command_line_lists_every_model_form(module, command, option):
    import typer

    app = importlib.import_module(module).app
    cli = typer.main.get_command(app)
    [param] = [p for p in cli.commands[command].params if p.name == option]
    assert all(info.form in param.help for info in PROVIDERS)
    assert providers.help_forms() in param.help
