"""CoffeeBench experiment files: the matrix's schema, its expansion into entries (base file,
variant files merged over it, the experiment's own settings, the matrix's agents, the seed)
and the check of every entry as ``coffee run`` checks one run (see ``econbench.runs.experiment``
for the file format).

``condition = "paper"`` at the top level plays every run under the reference implementation's
protocol (``econbench.runs.coffee.config.CONDITIONS``); a non-default condition is part of each
run's id and label, so a sweep's directories and a report's rows never mix conditions."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from econbench.agents.models.registry import ModelConfigError, ModelSettings, parse_model_name
from econbench.coffee.config import FIRMS, MAX_DAYS, ConfigError, is_model, role_of
from econbench.coffee.policies import UnknownPolicyError, make_policy
from econbench.runs.coffee.config import (
    DEFAULT_CONDITION,
    RunConfig,
    check_condition,
    config_from_tables,
)
from econbench.runs.experiment import (
    SEP,
    Entry,
    ExperimentBase,
    ExperimentError,
    Strict,
    add_model,
    axis,
    check_matrix_size,
    check_model_keys,
    format_errors,
    raise_problems,
    seed_list,
    slug,
    unique_labels,
)
from econbench.runs.user_files import UserFileError, read_user_toml


class CoffeeMatrix(Strict):
    """The axes of a CoffeeBench matrix: a policy list per firm, and economy variants."""

    default: list[str] | None = None
    farmer_A: list[str] | None = None
    farmer_B: list[str] | None = None
    roaster_A: list[str] | None = None
    roaster_B: list[str] | None = None
    retailer_A: list[str] | None = None
    retailer_B: list[str] | None = None
    variants: list[str] | None = None
    """Config files merged over the base (``"default"``: none), e.g. an economy variant or a
    prompt (framing) variant."""

    @field_validator("*")
    @classmethod
    def _axes(cls, value: list[str] | None) -> list[str] | None:
        return axis(value)

    def agent_axes(self) -> dict[str, list[str]]:
        return {
            firm: getattr(self, firm)
            for firm in ("default", *FIRMS)
            if getattr(self, firm) is not None
        }


class CoffeeExperiment(ExperimentBase):
    benchmark: Literal["coffee"]
    seeds: tuple[int, ...] | None = None
    base: str | None = None
    days: int | None = Field(None, ge=1, le=MAX_DAYS)
    agents: dict[str, str] = Field(default_factory=dict)
    """Fixed assignments (firm or ``default`` → policy) applied to every entry; unlike the
    matrix's axes they do not appear in the ids."""
    matrix: CoffeeMatrix = CoffeeMatrix()
    condition: str | None = None
    """What every run plays (``econbench.runs.coffee.config.CONDITIONS``): ``hardened``
    (default) or ``paper``; over a base or variant file's ``[run] condition``. A non-default
    condition is part of every run's id (``roaster_A-passive__paper__seed-0``)."""

    @field_validator("condition")
    @classmethod
    def _condition(cls, value: str | None) -> str | None:
        return None if value is None else check_condition(value)

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> tuple[int, ...] | None:
        return seed_list(value, "coffee")


def _resolve(source: Path, name: str, what: str) -> Path:
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = source.parent / path
    if not path.exists():
        raise ExperimentError(
            f"{source}: {what} file not found: {path} (paths are relative to the experiment file)"
        )
    return path


def _read_run_file(source: Path, path: Path, what: str) -> dict[str, Any]:
    """A run config file's raw tables (read once), after checking it loads on its own."""
    try:
        raw = read_user_toml(path, f"{what} file")
        config_from_tables(raw, path)
    except UserFileError as exc:
        raise ExperimentError(f"{source}: {exc}") from None
    except ConfigError as exc:
        raise ExperimentError(f"{source}: {what} {path}: {exc}") from None
    return raw


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; any other value is replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _coffee_config(
    exp: CoffeeExperiment,
    raw: dict[str, Any],
    agents: dict[str, str],
    seed: int | None,
) -> dict[str, Any]:
    data: dict[str, Any] = dict(raw.get("run", {}))
    for table in ("prompts", "economy"):
        if table in raw:
            data[table] = raw[table]
    defaults = raw["agents"] if "agents" in raw else RunConfig().agents
    data["agents"] = {**defaults, **exp.agents, **agents}
    if exp.days is not None:
        data["days"] = exp.days
    if exp.condition is not None:
        data["condition"] = exp.condition
    if seed is not None:
        data["seed"] = seed
    used = set(data["agents"].values())
    models = {**raw.get("models", {}), **{k: v.model_dump() for k, v in exp.models.items()}}
    data["models"] = {name: table for name, table in models.items() if name in used}
    return data


def _condition_of(exp: CoffeeExperiment, raw: dict[str, Any]) -> str:
    """The condition an entry plays: the experiment's, else its files' ``[run] condition``."""
    if exp.condition is not None:
        return exp.condition
    run = raw.get("run") if isinstance(raw.get("run"), dict) else {}
    return str(run.get("condition") or DEFAULT_CONDITION)


def coffee_entries(exp: CoffeeExperiment, source: Path) -> list[Entry]:
    axes = [len(policies) for policies in exp.matrix.agent_axes().values()]
    variant_count = len(exp.matrix.variants or ["default"])
    check_matrix_size([*axes, variant_count, len(exp.seeds or [None])], source, "runs")
    base = _read_run_file(source, _resolve(source, exp.base, "base"), "base") if exp.base else {}
    # (the name shown, the value as written in the matrix, the merged raw tables)
    variants: list[tuple[str | None, str, dict[str, Any]]] = []
    # the condition of each variant's runs: the experiment's, else the files' [run] condition
    for name in exp.matrix.variants or ["default"]:
        if name == "default":
            variants.append((name if exp.matrix.variants else None, name, base))
        else:
            path = _resolve(source, name, "variant")
            raw = _merge(base, _read_run_file(source, path, "variant"))
            variants.append((path.stem, name, raw))
    combos: list[dict[str, str]] = [{}]
    for firm, policies in exp.matrix.agent_axes().items():
        combos = [{**c, firm: p} for c in combos for p in policies]
    configs: list[tuple[dict[str, str], dict[str, Any], str]] = []
    labels_raw: list[str] = []
    identities: list[dict[str, Any]] = []
    for agents in combos:
        for shown, written, raw in variants:
            parts = [f"{firm}-{slug(policy)}" for firm, policy in agents.items()]
            if shown is not None:
                parts.append(slug(shown))
            condition = _condition_of(exp, raw)
            if condition != DEFAULT_CONDITION:
                parts.append(slug(condition))
            configs.append((agents, raw, shown or ""))
            labels_raw.append(SEP.join(parts) or exp.name)
            identity: dict[str, Any] = {**agents, "variant": written}
            if condition != DEFAULT_CONDITION:
                identity["condition"] = condition
            identities.append(identity)
    labels = unique_labels(labels_raw, identities)
    entries: list[Entry] = []
    for (agents, raw, shown), label in zip(configs, labels, strict=True):
        params = {**agents, **({"variant": shown} if shown else {})}
        condition = _condition_of(exp, raw)
        if condition != DEFAULT_CONDITION:
            params["condition"] = condition
        for seed in exp.seeds or [None]:
            data = _coffee_config(exp, raw, agents, seed)
            try:
                config = RunConfig.model_validate(data)
            except ValidationError as exc:
                raise ExperimentError(f"{source}: entry {label}: {format_errors(exc)}") from None
            entries.append(
                Entry(
                    id=f"{label}{SEP}seed-{config.seed}",
                    label=label,
                    benchmark="coffee",
                    params={**params, "seed": config.seed},
                    config=config.model_dump(mode="json", by_alias=True),
                )
            )
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise ExperimentError(f"{source}: two runs would both be '{dup}' (a seed twice?)")
    return entries


def check_coffee(entries: list[Entry], source: Path) -> None:
    """Every configuration's policies and model names, then every model's API key (one
    message listing every variable to set), as ``coffee run`` checks one run."""
    problems: dict[str, list[str]] = {}
    keyed: list[dict[str, ModelSettings]] = []
    seen: set[str] = set()
    for entry in entries:
        if entry.label in seen:
            continue
        seen.add(entry.label)
        config = RunConfig.model_validate(entry.config)
        for firm in FIRMS:
            name = config.policy_for(firm)
            try:
                if is_model(name):
                    parse_model_name(name)
                    add_model(keyed, name, config.model_settings(name))
                else:
                    make_policy(name, role_of(firm))
            except (ModelConfigError, UnknownPolicyError) as exc:
                problems.setdefault(str(exc), []).append(entry.label)
    raise_problems(problems, source)
    check_model_keys(keyed, source)
