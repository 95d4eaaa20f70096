"""Model names, API keys and the provider factory; per-model settings (``ModelSettings``, from
``econbench.agents.models.settings``) are importable from here too.

A model is named ``provider/model``: ``openai/gpt-5.5``, ``anthropic/claude-sonnet-4-6``,
``google/gemini-3.1-pro`` or ``openai-compatible/NAME`` (any server speaking OpenAI Chat
Completions: vLLM, SGLang, Ollama, llama.cpp, OpenRouter, Moonshot, Zhipu) or ``hf/PATH`` (a
local transformers model folder run in-process, ``econbench.agents.models.hf``; PATH may be
relative or absolute and contain slashes; it needs the ``train`` extra and no key).
``scripted/NAME`` exists only when code registers it (``register_scripted``), never from the
command line. What each provider is (its key and URL variables, classes, request styles) is
one record in ``econbench.agents.models.providers``; this module applies the records.

Keys come from the environment, then from a ``.env`` file (found from the working directory
upwards; it never overrides a real environment variable and is never written back into
``os.environ``). ``check_keys`` runs before a run starts so a missing key is one clear error
naming the variable to set, not a crash an hour in. Keys are held only by the provider
objects; no repr, str, error message or log line of this module ever contains one.
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from econbench.agents.models import providers
from econbench.agents.models._http import checked_base_url, redact
from econbench.agents.models.base import (
    ChatMessage,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelProvider,
    TransientModelError,
)
from econbench.agents.models.boundary import checked_output
from econbench.agents.models.errors import ModelConfigError
from econbench.agents.models.pricing import DEFAULT_PRICES, PriceTable
from econbench.agents.models.providers import API_NAMES, ProviderInfo
from econbench.agents.models.retry import ConcurrencyLimiter
from econbench.agents.models.settings import (
    LOCAL_ONLY_SETTINGS,
    OPENAI_ONLY_SETTINGS,
    ModelSettings,
    SettingsArg,
    settings_for,
)
from econbench.agents.tools import ToolSpec
from econbench.suggest import did_you_mean

PROVIDERS: tuple[str, ...] = providers.NAMES
SCRIPTED = "scripted"
#: Local OpenAI-compatible servers (vLLM, Ollama, llama.cpp) accept any key; the SDK needs one.
DUMMY_KEY = "EMPTY"

VALID_FORMS = providers.valid_forms()


class MissingKeyError(ModelConfigError):
    """An API key (or a base URL) a run needs is not set; the message says what to set."""

    def __init__(self, message: str, variables: list[str] | None = None) -> None:
        super().__init__(message)
        self.variables = variables or []


# --------------------------------------------------------------------------- names

ScriptedSource = Any  # a ScriptedModel instance, or a brain: (messages, tools) -> output
_SCRIPTED_MODELS: dict[str, ScriptedSource] = {}


def _is_local(provider: str) -> bool:
    """Whether a parsed provider runs its models in-process (``hf``): no key, URL or price."""
    return provider != SCRIPTED and providers.get(provider).local


def parse_model_name(name: str) -> tuple[str, str]:
    """``"openai/gpt-5.5"`` -> ``("openai", "gpt-5.5")``; a bad name is a clear error.

    The model part may itself contain slashes (``openai-compatible/Qwen/Qwen3-8B``, as vLLM
    serves it). ``scripted/NAME`` parses only once code has registered it.
    """
    if not isinstance(name, str):
        raise ModelConfigError(f"a model name must be a string; valid forms: {VALID_FORMS}")
    text = name.strip()
    provider, sep, model = text.partition("/")
    provider = provider.strip().lower()
    model = model.strip()
    if not sep:
        hint = f" Did you mean {providers.guess(text)}/{text}?" if text else ""
        raise ModelConfigError(
            f"model name {text!r} has no provider; valid forms: {VALID_FORMS}.{hint}"
        )
    if not model:
        raise ModelConfigError(f"model name {text!r} has no model after the '/'")
    if provider == SCRIPTED:
        if model in _SCRIPTED_MODELS:
            return SCRIPTED, model
        raise ModelConfigError(
            f"{text!r}: scripted models exist only when registered in code "
            f"(register_scripted); valid forms: {VALID_FORMS}"
        )
    if provider not in PROVIDERS:
        raise ModelConfigError(
            f"unknown provider {provider!r} in {text!r}{did_you_mean(provider, PROVIDERS)}; "
            f"valid forms: {VALID_FORMS}"
        )
    return provider, model


def is_model_name(name: str) -> bool:
    """Whether ``name`` parses as a model (as opposed to, say, a scripted policy's name)."""
    try:
        parse_model_name(name)
    except ModelConfigError:
        return False
    return True


def register_scripted(name: str, source: ScriptedSource) -> str:
    """Make ``scripted/NAME`` buildable: a ``ScriptedModel`` (returned as is) or a brain
    (a fresh ``ScriptedModel`` per ``build_provider`` call). Returns the full name."""
    model = name.removeprefix(f"{SCRIPTED}/").strip()
    if not model:
        raise ModelConfigError("register_scripted needs a name")
    _SCRIPTED_MODELS[model] = source
    return f"{SCRIPTED}/{model}"


def unregister_scripted(name: str) -> None:
    _SCRIPTED_MODELS.pop(name.removeprefix(f"{SCRIPTED}/").strip(), None)


@contextlib.contextmanager
def scripted_models_kept() -> Iterator[None]:
    """Put the registered scripted models back as they were when the block ends (a sweep
    worker plays many runs in one process, and a run may register its own)."""
    kept = dict(_SCRIPTED_MODELS)
    try:
        yield
    finally:
        _SCRIPTED_MODELS.clear()
        _SCRIPTED_MODELS.update(kept)


# --------------------------------------------------------------------------- environment


def _dotenv(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The ``.env`` file's values (nearest one from the working directory up), unapplied."""
    from dotenv import dotenv_values, find_dotenv  # only when a key or URL is looked up

    found = os.fspath(path) if path is not None else find_dotenv(usecwd=True)
    if not found or not os.path.isfile(found):
        return {}
    return {k: v for k, v in dotenv_values(found).items() if v}


def env_value(var: str, *, dotenv_path: str | os.PathLike[str] | None = None) -> str | None:
    """A variable from the real environment, else from ``.env``; empty counts as unset."""
    value = os.environ.get(var)
    if value:
        return value
    return _dotenv(dotenv_path).get(var) or None


def key_variables(name: str, settings: ModelSettings | None = None) -> tuple[str, ...]:
    """The variables a model's key is read from, in order."""
    provider, _ = parse_model_name(name)
    settings = settings or ModelSettings()
    if provider == SCRIPTED:
        return ()
    if settings.api_key_env:
        return (settings.api_key_env,)
    return providers.get(provider).key_env


def resolve_api_key(
    name: str,
    settings: ModelSettings | None = None,
    *,
    dotenv_path: str | os.PathLike[str] | None = None,
) -> str:
    """The key for ``name``; ``MissingKeyError`` (naming the variables) when there is none.

    A provider whose key is optional (``openai-compatible``) sends the dummy key ``"EMPTY"``
    (local servers need none; the SDK needs something) unless ``api_key_env`` names a
    variable, which is then required: it reads no default variable, so ``OPENAI_API_KEY``
    cannot reach a host a config names.
    """
    provider, _ = parse_model_name(name)
    settings = settings or ModelSettings()
    if provider == SCRIPTED or _is_local(provider):
        return DUMMY_KEY
    variables = key_variables(name, settings)
    for var in variables:
        value = env_value(var, dotenv_path=dotenv_path)
        if value:
            return value
    if not providers.get(provider).key_required and not settings.api_key_env:
        return DUMMY_KEY
    wanted = " or ".join(variables)
    raise MissingKeyError(
        f"{name} needs an API key: set {wanted} in the environment or in a .env file",
        list(variables),
    )


def resolve_base_url(
    name: str,
    settings: ModelSettings | None = None,
    *,
    dotenv_path: str | os.PathLike[str] | None = None,
) -> str | None:
    """The base URL: the model's settings, else the SDK's variable, else the SDK default.

    A provider with no default server (``openai-compatible``) needs ``base_url`` or its
    variable (``OPENAI_BASE_URL``). A variable's value that is not a URL the SDK can use is
    a ``ModelConfigError`` naming the variable (the settings' ``base_url`` is checked when
    they are read).
    """
    provider, _ = parse_model_name(name)
    settings = settings or ModelSettings()
    if _is_local(provider):
        return None
    if settings.base_url:
        return settings.base_url
    if provider == SCRIPTED:
        return None
    info = providers.get(provider)
    var = info.base_url_env
    value = env_value(var, dotenv_path=dotenv_path) if var else None
    if var and value:
        return checked_base_url(name, value.strip(), var)
    if info.base_url_required:
        wanted = f"set {var} (e.g. http://127.0.0.1:8000/v1) or " if var else ""
        raise MissingKeyError(
            f"{name} needs the URL of its server: {wanted}give the model a base_url in its "
            "settings",
            [var] if var else [],
        )
    return None


_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _check_key_target(name: str, info: ProviderInfo, settings: ModelSettings) -> None:
    """A default-variable key goes only to its provider's hosts (or this machine): e.g. an
    ``openai/`` model whose ``base_url`` names another host must say which key to send there
    (``api_key_env``)."""
    if not info.key_hosts or not settings.base_url or settings.api_key_env:
        return
    host = (urlsplit(settings.base_url).hostname or "").lower()
    if host in info.key_hosts or host in _LOOPBACK_HOSTS:
        return
    raise ModelConfigError(
        f"{name}: base_url names {host}, which would be sent {' or '.join(info.key_env)}; set "
        "api_key_env to the variable holding that host's key (or use openai-compatible/ for "
        "another server)"
    )


_STYLE_SOURCES = {
    "paper": ("the paper's request forms", "the paper"),
    "coffee_paper": ("the CoffeeBench reference's request forms", "the CoffeeBench reference"),
}
"""Per reproduced request style: whose forms it sends, and who sent them."""


def _check_request_style(name: str, info: ProviderInfo, settings: ModelSettings) -> None:
    """A reproduced request style (``paper``: the AlloBench paper's ``RawChat``;
    ``coffee_paper``: the CoffeeBench reference's model classes) only where its source has a
    form to send, and through the API that form uses."""
    style = settings.request_style
    if style == "econbench":
        return
    forms, source = _STYLE_SOURCES[style]
    if style not in info.styles():
        raise ModelConfigError(
            f"{name}: request_style {style!r} applies only to "
            f"{', '.join(providers.with_style(style))} models ({forms})"
        )
    needed = info.style_api(style)
    if needed is not None and settings.api not in (None, needed):
        raise ModelConfigError(
            f"{name}: request_style {style!r} sends {API_NAMES[needed]} requests, as {source} "
            f"did; drop api or set it to {needed!r}"
        )
    if style == "paper" and info.name == "anthropic" and settings.thinking_budget is not None:
        raise ModelConfigError(
            f"{name}: request_style 'paper' has no extended thinking (the paper's Anthropic "
            "requests carry none); drop thinking_budget"
        )


def _labels(names: Iterable[str]) -> str:
    return " and ".join(providers.get(n).label for n in names)


def _check_settings(name: str, provider: str, settings: ModelSettings) -> None:
    """The settings a provider's record says it accepts; scripted models accept all but
    ``api``."""
    if provider == SCRIPTED:
        _check_api(name, SCRIPTED, (), settings.api)
        return
    info = providers.get(provider)
    _check_request_style(name, info, settings)
    wire = [f for f in OPENAI_ONLY_SETTINGS if getattr(settings, f) is not None]
    if wire and info.compat_default is None:
        raise ModelConfigError(
            f"{name}: {', '.join(wire)} appl{'ies' if len(wire) == 1 else 'y'} only to "
            f"{_labels(providers.with_wire_forms())} models"
        )
    _check_key_target(name, info, settings)
    if info.compat_default is not None:
        try:  # a value the named server refuses is an error now, not a failed request later
            settings.compat_profile(compatible=info.compat_default == "generic")
        except ModelConfigError as exc:
            raise ModelConfigError(f"{name}: {exc}") from None
    if info.local:
        for field in ("api", "base_url", "api_key_env", "reasoning_effort", "thinking_budget"):
            if getattr(settings, field) is not None:
                raise ModelConfigError(f"{name}: {field!r} does not apply to a local model")
        return
    local = [f for f in LOCAL_ONLY_SETTINGS if getattr(settings, f) is not None]
    if local:
        raise ModelConfigError(
            f"{name}: {', '.join(local)} appl{'ies' if len(local) == 1 else 'y'} only to local "
            f"models ({_local_forms()})"
        )
    _check_api(name, info.label, info.apis, settings.api)


def _local_forms() -> str:
    return ", ".join(info.form for info in providers.PROVIDERS if info.local)


def _check_api(name: str, label: str, apis: tuple[str, ...], api: str | None) -> None:
    """The ``api`` setting names one of the APIs the provider speaks."""
    if api is None or api in apis:
        return
    settable = [a for a in apis if a in API_NAMES]
    if settable:
        raise ModelConfigError(
            f"{name}: {label} servers are reached through {API_NAMES[settable[0]]}; "
            f"drop api or set it to {settable[0]!r}"
        )
    choosers = [p.name for p in providers.PROVIDERS if len(set(p.apis) & set(API_NAMES)) > 1]
    raise ModelConfigError(
        f"{name}: 'api' ({' or '.join(API_NAMES)}) applies only to {_labels(choosers)} models"
    )


def check_keys(
    names: Iterable[str],
    settings: SettingsArg = None,
    *,
    dotenv_path: str | os.PathLike[str] | None = None,
) -> None:
    """Before a run: every model name parses, has its key and (if needed) its base URL.

    Collects every problem and raises one ``MissingKeyError`` listing the variables to set,
    so a user fixes them all at once. Bad names raise ``ModelConfigError``.
    """
    problems: list[str] = []
    variables: list[str] = []
    for name in dict.fromkeys(names):
        own = settings_for(name, settings)
        provider, model = parse_model_name(name)
        _check_settings(name, provider, own)
        if _is_local(provider):
            _check_local(model, own)
            continue
        for resolve in (resolve_api_key, resolve_base_url):
            try:
                resolve(name, own, dotenv_path=dotenv_path)
            except MissingKeyError as exc:
                problems.append(str(exc))
                variables.extend(v for v in exc.variables if v not in variables)
    if problems:
        raise MissingKeyError("cannot start the run:\n  - " + "\n  - ".join(problems), variables)


def _check_local(path: str, settings: ModelSettings) -> None:
    """A local model's folder (and adapter) exist and the ``train`` extra is installed;
    cheap: nothing is loaded."""
    from econbench.agents.models.hf.loading import (
        check_adapter_folder,
        check_model_folder,
        require_extra,
    )

    check_model_folder(path)
    if settings.adapter:
        check_adapter_folder(settings.adapter)
    require_extra(adapter=bool(settings.adapter))


def make_limiter(names: Iterable[str], settings: SettingsArg = None) -> ConcurrencyLimiter:
    """One limiter for a run: each provider's limit is the smallest ``max_concurrency``
    among its models (the safe reading when two models of one provider disagree)."""
    limits: dict[str, int] = {}
    for name in names:
        provider, _ = parse_model_name(name)
        own = settings_for(name, settings).max_concurrency
        limits[provider] = min(own, limits.get(provider, own))
    return ConcurrencyLimiter(default_limit=ModelSettings().max_concurrency, limits=limits)


# --------------------------------------------------------------------------- providers


def _redact(text: str, secret: str | None) -> str:
    """The shared redaction (``_http.redact``), for providers that do none of their own."""
    return redact(text, [secret] if secret != DUMMY_KEY else [])


class PricedProvider(ModelProvider):
    """A concrete provider plus what the harness adds: cost from the price table (or from
    the price the model's settings give it, which comes first), the model's settings, and a
    last guard that no error message carries its key."""

    def __init__(
        self,
        inner: ModelProvider,
        *,
        name: str,
        settings: ModelSettings | None = None,
        prices: PriceTable | None = None,
        secret: str | None = None,
    ) -> None:
        self.inner = inner
        self.name = name
        self.settings = settings or ModelSettings()
        self.context_window = self.settings.context_window or getattr(
            inner, "context_window", ModelProvider.context_window
        )
        self._prices = configured_prices(self.settings, prices or DEFAULT_PRICES, name)
        self._secret = secret

    def __repr__(self) -> str:
        return f"PricedProvider(name={self.name!r}, inner={type(self.inner).__name__})"

    __str__ = __repr__

    @property
    def provider(self) -> str:
        """The provider part of the name (``openai``, ``anthropic``…), the limiter's key."""
        return self.name.partition("/")[0]

    def generate_config(self) -> GenerateConfig:
        return self.settings.generate_config()

    async def aclose(self) -> None:
        """Close the concrete provider's HTTP client (it reopens on next use)."""
        close = getattr(self.inner, "aclose", None)
        if callable(close):
            await close()

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        safe: ModelError | None = None
        try:
            output = await self.inner.generate(messages, tools, config)
        except ModelError as exc:
            text = str(exc)
            clean = _redact(text, self._secret)
            if clean == text:
                raise
            safe = copy.copy(exc)
            safe.args = (clean,)
            if isinstance(exc, TransientModelError):
                safe.retry_after = exc.retry_after
        if safe is not None:
            # Raised outside the handler so the original (with the key) is not even chained.
            raise safe
        output = checked_output(output, self.name)  # whatever the provider (local, custom)
        if output.usage.invalid:
            return output  # impossible counts: unpriced, not priced as if they were 0
        cost = self._prices.cost(self.name, output.usage)
        if cost is None and output.model:
            cost = self._prices.cost(output.model, output.usage)
        if cost is not None or output.cost_usd is None:
            output.cost_usd = cost
        return output


def configured_prices(settings: ModelSettings, prices: PriceTable, name: str) -> PriceTable:
    """``prices`` with the price ``settings`` give model ``name``, if they give one."""
    own = settings.price()
    return prices if own is None else prices.overlay({name: own})


def build_provider(
    name: str,
    settings: ModelSettings | None = None,
    *,
    client: Any = None,
    prices: PriceTable | None = None,
    dotenv_path: str | os.PathLike[str] | None = None,
) -> PricedProvider:
    """The provider for ``name`` with its key, base URL and settings, priced per call.

    ``client`` (an SDK client) is passed through for tests and custom transports.
    """
    provider, model = parse_model_name(name)
    settings = settings or ModelSettings()
    full_name = f"{provider}/{model}"
    _check_settings(full_name, provider, settings)
    if provider == SCRIPTED:
        from econbench.agents.models.scripted import ScriptedModel

        source = _SCRIPTED_MODELS[model]
        inner = (
            source if isinstance(source, ModelProvider) else ScriptedModel(full_name, brain=source)
        )
        if settings.context_window:
            inner.context_window = settings.context_window
        return PricedProvider(inner, name=full_name, settings=settings, prices=prices)
    info = providers.get(provider)
    if info.local:
        return _local_provider(full_name, info, model, settings, prices)
    api_key = resolve_api_key(full_name, settings, dotenv_path=dotenv_path)
    base_url = resolve_base_url(full_name, settings, dotenv_path=dotenv_path)
    # The request style's API where the provider has it (the paper's OpenAI requests are Chat
    # Completions, whatever the default API), else the provider's default.
    api = settings.api or info.style_api(settings.request_style)
    cls = info.provider_class(api if api in info.apis else None)  # a missing SDK: only now
    kwargs: dict[str, Any] = {
        "api_key": api_key,
        "base_url": base_url,
        "name": full_name,
        "client": client,
    }
    if settings.context_window:
        kwargs["context_window"] = settings.context_window
    if info.compat_default is not None:
        compat = settings.compat_profile(compatible=info.compat_default == "generic")
        if compat is not None:
            kwargs["compat"] = compat
    inner = cls(model, **kwargs)
    return PricedProvider(inner, name=full_name, settings=settings, prices=prices, secret=api_key)


def _local_provider(
    name: str, info: ProviderInfo, path: str, settings: ModelSettings, prices: PriceTable | None
) -> PricedProvider:
    """An ``hf/PATH`` model: free (an empty price table, so a folder named like an API model
    is never priced as one) unless the caller passes prices."""
    _check_local(path, settings)
    inner = info.provider_class()(
        path,
        name=name,
        adapter=settings.adapter,
        device=settings.device,
        dtype=settings.dtype,
        seed=settings.seed,
        top_p=settings.top_p,
        context_window=settings.context_window,
    )
    return PricedProvider(inner, name=name, settings=settings, prices=prices or PriceTable({}))
