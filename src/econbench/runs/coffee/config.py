"""A CoffeeBench run's configuration: the world's, plus the settings of the models that play.

The TOML file a user writes (``[run]``, ``[agents]``, ``[prompts]``, ``[models]``,
``[economy]``) and the ``config.json`` of a run directory are this model, field for field
in that order. The environment sees only its :class:`~econbench.coffee.config.WorldConfig`
part; model settings (temperature, max_tokens, …) matter only to the run layer, which builds
the model-driven agents.

A run plays one *condition* (:data:`CONDITIONS`): ``hardened``, econbench's own CoffeeBench
(the default), or ``paper``, the reference implementation's protocol (``econbench.coffee.paper``,
played by ``econbench.runs.coffee.paper_run``). It is chosen with ``[run] condition = …``,
``--condition`` or ``condition=`` and recorded in ``config.json`` and ``summary.json``; the
default is left out of ``config.json`` so a default run's files are what they always were
(an old run without the field reads as ``hardened``). Under ``paper`` the reference fixes the
economy and the prompts, so ``[economy]`` and ``[prompts]`` are refused, and only the
reference's two scripted players exist (:data:`PAPER_SCRIPTED`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_serializer, model_validator

from econbench.agents.models.settings import COFFEE_PAPER_STYLE_PROVIDERS, ModelSettings
from econbench.coffee.config import (
    DEFAULT_BACKGROUND,
    FIRMS,
    ConfigError,
    EconomyConfig,
    WorldConfig,
    format_validation,
    is_model,
    role_of,
)
from econbench.runs.user_files import UserFileError, read_user_toml
from econbench.suggest import did_you_mean

FIELD_ORDER = ("seed", "days", "condition", "agents", "prompts", "models", "economy")
"""The order of ``config.json``'s keys (and of the TOML tables): the world's fields with the
models' settings before the economy, as it has always been written (``condition`` only when
it is not the default)."""
_TOML_TABLES = {"run", "agents", "prompts", "models", "economy"}
RUN_KEYS = ("seed", "days", "condition")
"""The keys of a config file's ``[run]`` table."""

DEFAULT_CONDITION = "hardened"
PAPER_CONDITION = "paper"
CONDITIONS: dict[str, str] = {
    DEFAULT_CONDITION: "econbench's own CoffeeBench (its economy, prompts, tools and fixes)",
    PAPER_CONDITION: "the reference implementation's protocol, byte for byte "
    "(github:SakanaAI/CoffeeBench)",
}
"""Every CoffeeBench condition and what it plays."""
PAPER_SCRIPTED: dict[str, tuple[str, ...]] = {
    "passive": ("farmer", "roaster", "retailer"),
    "heuristic": ("roaster",),
}
"""The scripted players a ``paper`` run allows, and the roles that may play them: the
reference's ``PassiveModel`` (any firm) and ``HeuristicRoasterModel`` (a roaster)."""
PAPER_FIXED_SETTINGS = (
    "temperature",
    "max_tokens",
    "reasoning_effort",
    "thinking_budget",
    "api",
    "context_window",
    "compaction_threshold",
    "request_style",
    "compat",
    "tool_choice",
    "tool_call_content",
    "max_tokens_field",
    "parallel_tool_calls",
    "strict_tools",
    "adapter",
    "device",
    "dtype",
    "top_p",
    "seed",
)
"""Model settings a ``paper`` run refuses: the reference's requests fix them (a thinking
variant is named as the reference names it, ``…-thinking``)."""
PAPER_BACKGROUND = "passive"
"""What plays, under ``paper``, a firm left at the offline default background
(``bargaining``, which the reference has no counterpart of)."""


def check_condition(name: str) -> str:
    """``name`` if it is a condition; otherwise a one-line ``ValueError`` with a did-you-mean."""
    if name not in CONDITIONS:
        raise ValueError(
            f"unknown condition '{name}'{did_you_mean(str(name), CONDITIONS)} "
            f"(conditions: {', '.join(CONDITIONS)})"
        )
    return name


def condition_of(config: Any) -> str:
    """The condition of a run config (a ``RunConfig`` or a saved ``config.json``): a config
    without one was written before conditions had names, by the ``hardened`` CoffeeBench."""
    if isinstance(config, RunConfig):
        return config.condition
    value = config.get("condition") if isinstance(config, dict) else None
    return str(value) if value else DEFAULT_CONDITION


def condition_fields(config: Any) -> dict[str, str]:
    """What a run's ``summary.json`` records of its condition: ``{"condition": NAME}`` for a
    non-default condition, nothing for ``hardened`` (so a default run's summary is unchanged)."""
    condition = condition_of(config)
    return {} if condition == DEFAULT_CONDITION else {"condition": condition}


class RunConfig(WorldConfig):
    """One CoffeeBench run: seed, length, who plays each firm, their models' settings, and
    the economy."""

    models: dict[str, ModelSettings] = Field(default_factory=dict)
    """Per model name (``provider/model``), its settings: temperature, max_tokens, …"""
    condition: str = DEFAULT_CONDITION
    """What the run plays (:data:`CONDITIONS`): ``hardened`` (default) or ``paper``."""

    @field_validator("condition")
    @classmethod
    def _condition(cls, value: str) -> str:
        return check_condition(value)

    @model_validator(mode="after")
    def _paper_background(self) -> RunConfig:
        """Under ``paper``, ``passive`` plays where the offline default background would:
        the reference has no counterpart of ``bargaining``, and config.json records it."""
        if self.condition == PAPER_CONDITION and self.agents.get("default") == DEFAULT_BACKGROUND:
            self.agents = {**self.agents, "default": PAPER_BACKGROUND}
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _errors_in_file_order(cls, data: Any, handler: Any) -> RunConfig:
        """Report problems in the file's order too (the world's fields validate first), and
        then what ``paper`` refuses, each at its key."""
        try:
            config = handler(data)
        except ValidationError as exc:
            errors = sorted(exc.errors(), key=_file_position)
            raise ValidationError.from_exception_data(exc.title, errors) from None  # type: ignore[arg-type]
        refused = _paper_refusals(config)
        if refused:
            errors = [
                {"type": "value_error", "loc": loc, "input": got, "ctx": {"error": message}}
                for loc, got, message in refused
            ]
            raise ValidationError.from_exception_data(cls.__name__, errors)  # type: ignore[arg-type]
        return config

    @model_serializer(mode="wrap")
    def _in_file_order(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if data.get("condition") == DEFAULT_CONDITION:
            del data["condition"]  # a default run's config.json is what it always was
        return {key: data[key] for key in FIELD_ORDER if key in data} | {
            key: value for key, value in data.items() if key not in FIELD_ORDER
        }

    def model_settings(self, name: str) -> ModelSettings:
        """The settings of model ``name`` (the defaults when the config gives none)."""
        settings = self.models.get(name)
        return settings if settings is not None else ModelSettings()


def _paper_refusals(config: RunConfig) -> list[tuple[tuple[str, ...], Any, str]]:
    """What condition ``paper`` refuses in ``config``: (key, value, why) per problem, in the
    file's order. The reference fixes its economy and prompts, and has two scripted players
    (:data:`PAPER_SCRIPTED`); a model (``provider/model``) or a custom policy object may
    play any firm."""
    if config.condition != PAPER_CONDITION:
        return []
    from econbench.runs.resume import is_custom

    refused: list[tuple[tuple[str, ...], Any, str]] = []
    for key, name in config.agents.items():
        if is_custom(name):
            continue
        if is_model(name):
            provider = name.partition("/")[0]
            if provider not in COFFEE_PAPER_STYLE_PROVIDERS:
                refused.append(
                    (
                        ("agents", key),
                        name,
                        f"the reference has no model class for provider '{provider}', so "
                        "condition 'paper' cannot send what it sends (providers: "
                        f"{', '.join(COFFEE_PAPER_STYLE_PROVIDERS)})",
                    )
                )
            continue
        roles = PAPER_SCRIPTED.get(name)
        if roles is None:
            refused.append(
                (
                    ("agents", key),
                    name,
                    f"'{name}' is refused under condition 'paper', whose scripted players are "
                    "'passive' (any firm) and 'heuristic' (a roaster); or name a model "
                    "(provider/model)",
                )
            )
        elif (role_of(key) if key != "default" else "farmer") not in roles:
            refused.append(
                (
                    ("agents", key),
                    name,
                    f"under condition 'paper', '{name}' is the reference's roaster and plays "
                    "roaster_A or roaster_B only",
                )
            )
    if config.prompts:
        refused.append(
            (
                ("prompts",),
                dict(config.prompts),
                "[prompts] variants are refused under condition 'paper': the reference "
                "implementation's prompts are fixed",
            )
        )
    for name, settings in config.models.items():
        fixed = [
            field
            for field in PAPER_FIXED_SETTINGS
            if getattr(settings, field) != ModelSettings.model_fields[field].default
            and not (field == "request_style" and settings.request_style == "coffee_paper")
        ]
        if fixed:
            refused.append(
                (
                    ("models", name),
                    {field: getattr(settings, field) for field in fixed},
                    f"{', '.join(fixed)} {'is' if len(fixed) == 1 else 'are'} refused under "
                    "condition 'paper': the reference fixes its requests (temperature 0, 4,096 "
                    "output tokens, its reasoning effort, its compaction); set only where and "
                    "how a model is reached (base_url, api_key_env, timeout_s, retries, "
                    "concurrency)",
                )
            )
    default = EconomyConfig().model_dump(mode="json")
    changed = {
        k: v for k, v in config.economy.model_dump(mode="json").items() if default.get(k) != v
    }
    if changed:
        refused.append(
            (
                ("economy",),
                changed,
                "[economy] overrides are refused under condition 'paper': the reference "
                "implementation's economy is fixed",
            )
        )
    return refused


def _file_position(error: Any) -> int:
    loc = error.get("loc") or ()
    return FIELD_ORDER.index(loc[0]) if loc and loc[0] in FIELD_ORDER else len(FIELD_ORDER)


def read_toml(path: Path) -> dict[str, Any]:
    """A run config file's tables; a missing, special (FIFO, device), oversized, unreadable
    or malformed file is a one-line ``ConfigError``."""
    try:
        return read_user_toml(path, "config file")
    except UserFileError as exc:
        raise ConfigError(str(exc)) from None


def load_config(path: Path | None = None, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Read a TOML run config (``[run]``, ``[agents]``, ``[economy]``) and apply CLI overrides."""
    raw = read_toml(Path(path)) if path is not None else {}
    return config_from_tables(raw, path, overrides)


def config_from_tables(
    raw: dict[str, Any], path: Path | None = None, overrides: dict[str, Any] | None = None
) -> RunConfig:
    """The ``RunConfig`` of a config file's tables (``path`` names it in errors), with CLI
    overrides applied."""
    data: dict[str, Any] = {}
    if raw:
        unknown = set(raw) - _TOML_TABLES
        if unknown:
            raise ConfigError(
                f"unknown table(s) {sorted(unknown)} in {path}; expected [run], [agents], "
                "[prompts], [models], [economy]"
            )
        run = raw.get("run", {})
        if not isinstance(run, dict):
            raise ConfigError("'run' must be a table")
        extra = set(run) - set(RUN_KEYS)
        if extra:
            raise ConfigError(
                f"unknown key(s) in [run]: {sorted(extra)} (allowed: {', '.join(RUN_KEYS)})"
            )
        data.update(run)
        for table in ("agents", "prompts", "models", "economy"):
            if table in raw:
                data[table] = raw[table]
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "agents":
            data["agents"] = {**data.get("agents", RunConfig().agents), **value}
        else:
            data[key] = value
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid config: {format_validation(exc)}") from None


def parse_agents(pairs: list[str]) -> dict[str, str]:
    """``--agent FIRM=POLICY`` options as an ``[agents]`` table."""
    agents: dict[str, str] = {}
    for pair in pairs:
        firm, sep, policy = pair.partition("=")
        firm, policy = firm.strip(), policy.strip()
        if not sep or not firm or not policy:
            raise ConfigError(f"--agent expects FIRM=POLICY, got '{pair}'")
        if firm != "default" and firm not in FIRMS:
            raise ConfigError(
                f"--agent: unknown firm '{firm}'{did_you_mean(firm, (*FIRMS, 'default'))} "
                f"(firms: {', '.join(FIRMS)}, default)"
            )
        agents[firm] = policy
    return agents
