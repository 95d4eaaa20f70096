"""A CoffeeBench run's configuration: the world's, plus the settings of the models that play.

The TOML file a user writes (``[run]``, ``[agents]``, ``[prompts]``, ``[models]``,
``[economy]``) and the ``config.json`` of a run directory are this model, field for field
in that order. The environment sees only its :class:`~econbench.coffee.config.WorldConfig`
part; model settings (temperature, max_tokens, …) matter only to the run layer, which builds
the model-driven agents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_serializer, model_validator

from econbench.agents.models.settings import ModelSettings
from econbench.coffee.config import FIRMS, ConfigError, WorldConfig, format_validation
from econbench.runs.user_files import UserFileError, read_user_toml
from econbench.suggest import did_you_mean

FIELD_ORDER = ("seed", "days", "agents", "prompts", "models", "economy")
"""The order of ``config.json``'s keys (and of the TOML tables): the world's fields with the
models' settings before the economy, as it has always been written."""
_TOML_TABLES = {"run", "agents", "prompts", "models", "economy"}


class RunConfig(WorldConfig):
    """One CoffeeBench run: seed, length, who plays each firm, their models' settings, and
    the economy."""

    models: dict[str, ModelSettings] = Field(default_factory=dict)
    """Per model name (``provider/model``), its settings: temperature, max_tokens, …"""

    @model_validator(mode="wrap")
    @classmethod
    def _errors_in_file_order(cls, data: Any, handler: Any) -> RunConfig:
        """Report problems in the file's order too (the world's fields validate first)."""
        try:
            return handler(data)
        except ValidationError as exc:
            errors = sorted(exc.errors(), key=_file_position)
            raise ValidationError.from_exception_data(exc.title, errors) from None  # type: ignore[arg-type]

    @model_serializer(mode="wrap")
    def _in_file_order(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        return {key: data[key] for key in FIELD_ORDER if key in data} | {
            key: value for key, value in data.items() if key not in FIELD_ORDER
        }

    def model_settings(self, name: str) -> ModelSettings:
        """The settings of model ``name`` (the defaults when the config gives none)."""
        settings = self.models.get(name)
        return settings if settings is not None else ModelSettings()


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
        extra = set(run) - {"seed", "days"}
        if extra:
            raise ConfigError(f"unknown key(s) in [run]: {sorted(extra)} (allowed: seed, days)")
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
