"""Per-model settings (temperature, max_tokens, retries, wire forms …) as a config holds them.

They live apart from the registry (which re-exports them) because every run config carries a
``models`` table of them: loading a config, even one where only scripted firms play, then
needs pydantic and this module, not the registry's providers, prices, retries or ``.env``
reader. What a setting does is imported where it is used (``retry_policy``,
``generate_config``, the ``compat`` checks).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from econbench.agents.models import providers
from econbench.agents.models.errors import ModelConfigError

if TYPE_CHECKING:
    from econbench.agents.models.base import GenerateConfig
    from econbench.agents.models.pricing import Price
    from econbench.agents.models.retry import RetryPolicy

LOCAL_ONLY_SETTINGS = ("adapter", "device", "dtype", "top_p", "seed")
OPENAI_ONLY_SETTINGS = (
    "compat",
    "tool_choice",
    "tool_call_content",
    "max_tokens_field",
    "parallel_tool_calls",
    "strict_tools",
)
"""The wire-form settings of the OpenAI providers (``econbench.agents.models.compat``)."""
RETRY_SETTINGS = ("max_retries", "max_backoff_s")
"""Written only when set, like the wire forms, so existing configs keep their hashes."""
PRICE_SETTINGS = (
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cached_input_usd_per_mtok",
    "cache_write_usd_per_mtok",
)
"""A model's own price, USD per million tokens (``ModelSettings.price``); written only when
set, like the wire forms."""
MAX_USD_PER_MTOK = 1_000_000.0
"""A price per million tokens beyond any model's: a larger value is a typo."""
PAPER_STYLE_PROVIDERS = providers.with_style("paper")
"""The providers ``request_style = "paper"`` applies to (the paper's ``RawChat`` backends),
from their records (``econbench.agents.models.providers``)."""
COFFEE_PAPER_STYLE_PROVIDERS = providers.with_style("coffee_paper")
"""The providers ``request_style = "coffee_paper"`` applies to (the CoffeeBench reference's
Anthropic, OpenAI Responses, OpenRouter and Gemini model classes)."""

DEFAULT_MAX_RETRIES = 5
"""Retries after the first attempt when a model's settings name none (six attempts)."""
DEFAULT_MAX_BACKOFF_S = 60.0
"""The longest backoff wait when a model's settings name none."""
MAX_RETRIES_LIMIT = 100
MAX_BACKOFF_LIMIT_S = 3_600.0
"""Upper bounds of the per-model settings: beyond them a run would stall for hours on one
failing call, which is a typo, not a policy."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelSettings(BaseModel):
    """Per-model settings from an experiment config; ``None`` means the provider's default.

    No field holds a key: ``api_key_env`` names the variable to read it from, so a config
    file (which is copied into every run directory) can never leak one.
    """

    # strict: ``max_tokens = true`` or ``2.0`` in a TOML file is refused, not read as 1 or 2.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True, frozen=True, strict=True)

    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, gt=0, le=10_000_000)
    reasoning_effort: str | None = None
    thinking_budget: int | None = Field(None, ge=0, le=10_000_000)
    base_url: str | None = None
    api_key_env: str | None = None
    api: Literal["chat", "responses"] | None = None
    context_window: int | None = Field(None, gt=0, le=100_000_000)
    timeout_s: float = Field(120.0, gt=0, le=86_400.0)
    max_concurrency: int = Field(8, ge=1, le=4096)
    compaction_threshold: float = Field(0.8, gt=0.0, le=1.0)
    # Retries of transient failures (``econbench.agents.models.retry.RetryPolicy``):
    max_retries: int | None = Field(None, ge=0, le=MAX_RETRIES_LIMIT)
    """Retries after the first attempt on a rate limit, 5xx or timeout (default 5)."""
    max_backoff_s: float | None = Field(None, gt=0.0, le=MAX_BACKOFF_LIMIT_S)
    """The longest backoff wait between attempts (default 60 s; a server's longer
    ``Retry-After`` is still honoured, up to 600 s)."""
    request_style: Literal["econbench", "paper", "coffee_paper"] = "econbench"
    """``"paper"``: send exactly the request body the AlloBench paper's ``RawChat`` sends
    (Anthropic, OpenAI and OpenAI-compatible models; ``econbench.agents.models.paper_wire``
    says what that is and which settings it reads). ``"coffee_paper"``: the bodies of the
    CoffeeBench reference's model classes (``coffee_paper_wire``; Anthropic, OpenAI through the
    Responses API, OpenAI-compatible models and Gemini), for the ``ReferenceAgent`` that keeps the
    reference's conversation. Written into configs only when not "econbench"."""
    # OpenAI and OpenAI-compatible models only (``econbench.agents.models.compat``):
    compat: str | None = None
    """The server's quirk profile: generic (the openai-compatible default), llama.cpp,
    vllm, ollama or openai; the fields below override single entries of it."""
    tool_choice: Literal["auto", "required", "none"] | None = None
    tool_call_content: Literal["empty", "omit"] | None = None
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    parallel_tool_calls: bool | None = None
    strict_tools: bool | None = None
    """Offer tools in OpenAI's strict mode where they have a strict form (default off)."""
    # Local models (hf/PATH) only:
    adapter: str | None = None
    """A peft LoRA adapter folder loaded on top of the model."""
    device: Literal["auto", "cpu", "cuda"] | None = None
    dtype: Literal["auto", "float32", "bfloat16"] | None = None
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    """Mixed into every request's sampling seed (the same request gets the same reply)."""
    # The model's price (USD per million tokens), over the built-in price table's:
    input_usd_per_mtok: float | None = Field(None, ge=0.0, le=MAX_USD_PER_MTOK, allow_inf_nan=False)
    """Uncached prompt tokens. Setting a price needs this and ``output_usd_per_mtok``."""
    output_usd_per_mtok: float | None = Field(
        None, ge=0.0, le=MAX_USD_PER_MTOK, allow_inf_nan=False
    )
    """Output tokens, reasoning included."""
    cached_input_usd_per_mtok: float | None = Field(
        None, ge=0.0, le=MAX_USD_PER_MTOK, allow_inf_nan=False
    )
    """Prompt tokens read from the provider's cache (default: the input price, never less)."""
    cache_write_usd_per_mtok: float | None = Field(
        None, ge=0.0, le=MAX_USD_PER_MTOK, allow_inf_nan=False
    )
    """Prompt tokens written to the cache (default: the input price; Anthropic: 1.25x)."""

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.match(value):
            # Never echo the value: a key pasted here by mistake must not reach a log.
            raise ValueError(
                "api_key_env must be the NAME of an environment variable (e.g. MOONSHOT_API_KEY),"
                " not the key itself"
            )
        return value

    @field_validator("compat")
    @classmethod
    def _compat(cls, value: str | None) -> str | None:
        from econbench.agents.models.compat import PROFILES

        if value is not None and value.strip().lower() not in PROFILES:
            raise ValueError(f"compat must be one of {', '.join(PROFILES)}")
        return value.strip().lower() if value is not None else None

    @model_validator(mode="after")
    def _whole_price(self) -> ModelSettings:
        """A price names at least its input and output rates: one alone would price the
        other kind of token at nothing."""
        given = [f for f in PRICE_SETTINGS if getattr(self, f) is not None]
        missing = [f for f in PRICE_SETTINGS[:2] if getattr(self, f) is None]
        if given and missing:
            raise ValueError(
                f"a model's price needs input_usd_per_mtok and output_usd_per_mtok; "
                f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing"
            )
        return self

    def price(self) -> Price | None:
        """The price these settings give the model (source ``"config"``), or ``None`` when
        they give none and the built-in price table applies. Unset cache rates are the input
        rate: no discount and no premium, which never under-reports a cost."""
        if self.input_usd_per_mtok is None or self.output_usd_per_mtok is None:
            return None
        from econbench.agents.models.pricing import Price

        def rate(value: float | None) -> float:
            return float(self.input_usd_per_mtok if value is None else value)

        return Price(
            input=float(self.input_usd_per_mtok),
            cached_input=rate(self.cached_input_usd_per_mtok),
            cache_write=rate(self.cache_write_usd_per_mtok),
            output=float(self.output_usd_per_mtok),
            source="config",
            note="from the run's model settings",
        )

    @model_serializer(mode="wrap")
    def _without_unset_wire_forms(self, handler: Any) -> dict[str, Any]:
        """The wire-form, retry and price fields appear only when set, so the ``config.json``
        and experiment hashes of every config that does not use them stay what they were."""
        data = handler(self)
        for field in (*OPENAI_ONLY_SETTINGS, *RETRY_SETTINGS, *PRICE_SETTINGS):
            if data.get(field, "") is None:
                del data[field]
        if data.get("request_style") == "econbench":
            del data["request_style"]
        return data

    def retry_policy(self) -> RetryPolicy:
        """How this model's transient failures are retried (the defaults where unset)."""
        from econbench.agents.models.retry import RetryPolicy

        return RetryPolicy(
            max_retries=DEFAULT_MAX_RETRIES if self.max_retries is None else self.max_retries,
            max_backoff_s=(
                DEFAULT_MAX_BACKOFF_S if self.max_backoff_s is None else self.max_backoff_s
            ),
        )

    def compat_profile(self, *, compatible: bool) -> Any:
        """The ``Compat`` an OpenAI provider is built with, or ``None`` when nothing is set (so a
        provider keeps its own default: generic for openai-compatible/, openai for openai/)."""
        from econbench.agents.models.compat import resolve

        overrides = {f: getattr(self, f) for f in OPENAI_ONLY_SETTINGS if f != "compat"}
        if self.compat is None and all(v is None for v in overrides.values()):
            return None
        try:
            return resolve(self.compat, compatible=compatible, **overrides)
        except ValueError as exc:
            raise ModelConfigError(str(exc)) from None

    @field_validator("reasoning_effort")
    @classmethod
    def _effort(cls, value: str | None) -> str | None:
        return value.strip().lower() if value is not None else None

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from econbench.agents.models._http import base_url_problem

        value = value.strip()
        problem = base_url_problem(value)
        if problem is not None:
            raise ValueError(
                f"base_url must be an http(s) URL, e.g. http://127.0.0.1:8000/v1 ({problem})"
            )
        return value

    def generate_config(self) -> GenerateConfig:
        """The per-call config the provider's ``generate`` receives (``top_p``, ``seed`` and the
        wire-form settings travel in ``extra`` only when set, so other models' requests, cache
        keys and recordings are unchanged)."""
        from econbench.agents.models.base import GenerateConfig

        pairs = [("top_p", self.top_p), ("seed", self.seed)]
        pairs += [(f, getattr(self, f)) for f in OPENAI_ONLY_SETTINGS]  # they shape the reply
        extra = {k: v for k, v in pairs if v is not None}
        return GenerateConfig(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort,
            thinking_budget=self.thinking_budget,
            timeout_s=self.timeout_s,
            extra=extra,
            request_style=self.request_style,
        )


SettingsArg = ModelSettings | Mapping[str, ModelSettings] | None


def settings_for(name: str, settings: SettingsArg) -> ModelSettings:
    """One model's settings from a single ``ModelSettings`` or a ``{name: settings}`` map."""
    if settings is None:
        return ModelSettings()
    if isinstance(settings, ModelSettings):
        return settings
    found = settings.get(name)
    if found is None:
        found = settings.get(name.strip())
    return found if found is not None else ModelSettings()
