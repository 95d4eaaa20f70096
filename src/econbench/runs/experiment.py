"""EXPERIMENT.toml: a matrix of runs for either benchmark, expanded into named entries.

An experiment file names a benchmark and the axes of a matrix; :func:`load_plan` reads it,
validates it, expands it into :class:`Entry` objects and checks every entry the way a single
run would be checked (config files, policy and model names, API keys) — all before any run
starts, so a typo in the last variant never surfaces an hour into a sweep.

CoffeeBench::

    name = "smoke"
    benchmark = "coffee"
    seeds = "1-3"                           # or [1, 2, 3]; default: each config's own seed
    base = "../coffee/offline.toml"         # a RunConfig file; paths are relative to this file
    days = 10                               # overrides base and variants
    [agents]                                # fixed for every entry (not in the ids)
    default = "negotiating"
    [matrix]
    roaster_A = ["heuristic", "openai/gpt-5.5"]        # any firm, or "default", is an axis
    variants = ["default", "../coffee/variants/risky_shipping.toml"]
    [models."openai/gpt-5.5"]               # model settings, as in run configs
    reasoning_effort = "high"

A coffee entry's config is the base file, then the variant file merged over it (tables
merge key by key), then the experiment's own ``days``, ``[agents]`` and ``[models]``, then
the matrix's agents, then the seed.

AlloBench::

    name = "ladder"
    benchmark = "allo"
    episodes = 24                           # or seeds = "2000-2023" (default: the paper's)
    [matrix]
    framings = ["r0", "r2"]
    policies = ["eager", "bayes"]
    skins = ["default", "chest"]            # R0 only; other rungs use the default skin
    budgets = [1, 3]
    costs = [0, 10]

An AlloBench entry is one cell (framing × policy × skin × budget × cost), played over all the
episode seeds.

Entry ids are readable slugs built from the entry's own matrix values
(``roaster_A-heuristic__risky_shipping__seed-3``; an AlloBench cell's id is its
``allo sweep`` directory name, ``r0-wait-2-k0-b3``), so adding a value to an axis never renames
the existing entries. An id that would be too long, or would collide with another, gets a
short hash of its values. The ``label`` is the id without the seed: the configuration's name
that reports group runs by.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from econbench.agents.models.registry import ModelSettings
from econbench.runs.layout import Benchmark

MAX_ID_CHARS = 100
"""Longer ids are cut and get a hash: a path component must stay well under 255 bytes."""
MAX_ENTRIES = 100_000
MAX_COST = 1_000_000.0
"""An AlloBench build charge beyond any possible collection; larger values are a typo."""
MAX_SEED = 2**63 - 1
"""Seeds are stored as 64-bit integers (JSON readers, SQLite)."""
MAX_BUDGET = 1_000
"""An AlloBench build budget beyond the stream's length is a typo."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
SEP = "__"


class ExperimentError(ValueError):
    """The experiment file cannot be run; the message names the file and the key."""


# --------------------------------------------------------------------------- schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _seed_list(value: Any) -> tuple[int, ...] | None:
    """``[1, 2, 3]`` or ``"1-3"`` / ``"1,5,9-12"`` → a tuple of distinct non-negative seeds."""
    from econbench.allo.stream import MAX_SEEDS, parse_seeds

    if value is None:
        return None
    if isinstance(value, str):
        seeds = parse_seeds(value)
    elif isinstance(value, list | tuple):
        if not value:
            raise ValueError("give at least one seed")
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in value):
            raise ValueError("seeds must be integers, or a string like '1-5'")
        if any(s < 0 for s in value):
            raise ValueError("seeds must be non-negative")
        if len(set(value)) != len(value):
            raise ValueError("a seed is listed twice")
        seeds = list(value)
    else:
        raise ValueError("seeds must be a list of integers or a string like '1-5'")
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"more than {MAX_SEEDS:,} seeds")
    if any(s > MAX_SEED for s in seeds):
        raise ValueError(f"seeds must be at most {MAX_SEED}")
    return tuple(seeds)


def _axis(values: list[Any] | None) -> list[Any] | None:
    if values is None:
        return None
    if not values:
        raise ValueError("an axis needs at least one value")
    keys = [json.dumps(v) for v in values]
    if len(set(keys)) != len(keys):
        raise ValueError("a value is listed twice")
    return values


class _Experiment(_Strict):
    name: str
    description: str = ""
    out: str | None = None
    models: dict[str, ModelSettings] = {}

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "use letters, digits, '.', '_' and '-' only (it names the sweep's directory)"
            )
        return value


class CoffeeMatrix(_Strict):
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
        return _axis(value)

    def agent_axes(self) -> dict[str, list[str]]:
        from econbench.coffee.config import FIRMS

        return {
            firm: getattr(self, firm)
            for firm in ("default", *FIRMS)
            if getattr(self, firm) is not None
        }


class CoffeeExperiment(_Experiment):
    benchmark: Literal["coffee"]
    seeds: tuple[int, ...] | None = None
    base: str | None = None
    days: int | None = Field(None, ge=1, le=10_000)
    agents: dict[str, str] = {}
    """Fixed assignments (firm or ``default`` → policy) applied to every entry; unlike the
    matrix's axes they do not appear in the ids."""
    matrix: CoffeeMatrix = CoffeeMatrix()

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> tuple[int, ...] | None:
        return _seed_list(value)


class AlloMatrix(_Strict):
    """The axes of an AlloBench matrix; each combination is one cell."""

    framings: list[str]
    policies: list[str]
    skins: list[str] = ["default"]
    budgets: list[int] = [3]
    costs: list[float] = [0.0]

    @field_validator("*")
    @classmethod
    def _axes(cls, value: list[Any]) -> list[Any]:
        return _axis(value)  # type: ignore[return-value]

    @field_validator("budgets")
    @classmethod
    def _budgets(cls, value: list[int]) -> list[int]:
        if any(not 1 <= b <= MAX_BUDGET for b in value):
            raise ValueError(f"every budget must be at least 1 and at most {MAX_BUDGET}")
        return value

    @field_validator("costs")
    @classmethod
    def _costs(cls, value: list[float]) -> list[float]:
        if any(not math.isfinite(k) or not 0 <= k <= MAX_COST for k in value):
            raise ValueError(f"every cost must be a number from 0 to {MAX_COST:g}")
        return value


class AlloExperiment(_Experiment):
    benchmark: Literal["allo"]
    episodes: int | None = Field(None, ge=1, le=1_000_000)
    seed: int = Field(2000, ge=0, le=MAX_SEED - 1_000_000)
    """The first episode seed when ``episodes`` is given."""
    seeds: tuple[int, ...] | None = None
    streams: Literal["paper", "numpy"] = "paper"
    """The stream generator: the paper's (seeds 2000–2023 are its episodes) or numpy."""
    stream_budget: Literal["fixed", "cell"] = "fixed"
    """``fixed``: every (B, K) cell plays the B = 3 stream of each seed (the paper's protocol);
    ``cell``: each cell's streams are drawn with its own B."""
    protocol: Literal["paper", "econbench"] = "paper"
    """The framings' texts and turn rules: the paper's, or econbench's earlier ones."""
    matrix: AlloMatrix

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> tuple[int, ...] | None:
        return _seed_list(value)

    def episode_seeds(self) -> tuple[int, ...]:
        from econbench.allo.stream import EVAL_SEEDS

        if self.seeds is not None:
            return self.seeds
        if self.episodes is not None:
            return tuple(range(self.seed, self.seed + self.episodes))
        return tuple(EVAL_SEEDS)


Experiment = CoffeeExperiment | AlloExperiment


# --------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Entry:
    """One run of the sweep: where it goes and everything a worker needs to play it."""

    id: str
    label: str
    benchmark: Benchmark
    params: dict[str, Any]
    """The entry's matrix values (what the results table shows)."""
    config: dict[str, Any]
    """CoffeeBench: the resolved ``RunConfig`` (as its ``config.json``); AlloBench:
    ``{"cell": CellSpec fields, "models": {name: settings}}``."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "benchmark": self.benchmark,
            "params": self.params,
            "config": self.config,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entry:
        return cls(
            id=data["id"],
            label=data["label"],
            benchmark=data["benchmark"],
            params=dict(data["params"]),
            config=dict(data["config"]),
        )


@dataclass(frozen=True)
class Plan:
    """An experiment file, validated and expanded."""

    source: Path
    experiment: Experiment
    entries: list[Entry] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.experiment.name

    @property
    def benchmark(self) -> Benchmark:
        return self.experiment.benchmark

    def default_out(self) -> Path:
        """``out`` from the file (relative to the working directory), else
        ``runs/sweeps/NAME``."""
        return Path(self.experiment.out or f"runs/sweeps/{self.experiment.name}")


# --------------------------------------------------------------------------- loading


def _format(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        key = loc or "(top level)"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown key '{key}'")
        elif err["type"] == "missing":
            problems.append(f"missing key '{key}'")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(f"'{key}': {msg}")
    return "; ".join(dict.fromkeys(problems))


def read_experiment(path: Path) -> Experiment:
    """Parse and validate the file's schema (files it names are read by :func:`expand`)."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExperimentError(f"experiment file not found: {path}") from None
    except IsADirectoryError:
        raise ExperimentError(f"{path} is a directory, not an experiment file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ExperimentError(f"{path} is not valid TOML: {exc}") from None
    bench = raw.get("benchmark")
    models: dict[str, type[_Experiment]] = {"coffee": CoffeeExperiment, "allo": AlloExperiment}
    if bench not in models:
        got = "missing" if bench is None else repr(bench)
        raise ExperimentError(f'{path}: \'benchmark\' must be "coffee" or "allo" ({got})')
    try:
        return models[bench].model_validate(raw)  # type: ignore[return-value]
    except ValidationError as exc:
        raise ExperimentError(f"{path}: {_format(exc)}") from None


def load_plan(path: Path | str, *, check: bool = True) -> Plan:
    """Read, validate and expand an experiment file.

    With ``check`` every entry is also checked as its run would check it (policies, model
    names, API keys); every problem found is reported in one ``ExperimentError``.
    """
    source = Path(path)
    experiment = read_experiment(source)
    if isinstance(experiment, CoffeeExperiment):
        entries = _coffee_entries(experiment, source)
    else:
        entries = _allo_entries(experiment, source)
    plan = Plan(source=source, experiment=experiment, entries=entries)
    if check:
        check_plan(plan)
    return plan


def check_plan(plan: Plan) -> None:
    """Check every entry as its run would check it before starting: policy and model
    names, then API keys (one error listing every variable to set)."""
    if plan.benchmark == "coffee":
        _check_coffee(plan.entries, plan.source)
    else:
        _check_allo(plan.entries, plan.source)


# --------------------------------------------------------------------------- ids


def slug(text: str) -> str:
    """A readable path component: ``openai/gpt-5.5`` → ``openai-gpt-5.5``, ``wait:2`` →
    ``wait-2`` (never the ``__`` that separates an id's parts)."""
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text))
    out = re.sub(r"_{2,}", "_", out).strip("-._")
    return out or "x"


def _hash(values: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:8]


def unique_labels(raw: list[str], values: list[dict[str, Any]]) -> list[str]:
    """Make labels unique and short: a label that is too long, or shared by different
    values, gets a hash of its values (stable: it depends on nothing else)."""
    counts: dict[str, int] = {}
    for label in raw:
        counts[label] = counts.get(label, 0) + 1
    out = []
    for label, vals in zip(raw, values, strict=True):
        if counts[label] > 1 or len(label) > MAX_ID_CHARS - 20:
            label = f"{label[: MAX_ID_CHARS - 30]}-{_hash(vals)}"
        out.append(label)
    if len(set(out)) != len(out):  # the same values twice: the matrix repeats itself
        dup = next(x for x in out if out.count(x) > 1)
        raise ExperimentError(f"the matrix lists the configuration '{dup}' twice")
    return out


# --------------------------------------------------------------------------- CoffeeBench


def _resolve(source: Path, name: str, what: str) -> Path:
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = source.parent / path
    if not path.is_file():
        raise ExperimentError(
            f"{source}: {what} file not found: {path} (paths are relative to the experiment file)"
        )
    return path


def _read_run_file(source: Path, path: Path, what: str) -> dict[str, Any]:
    """A run config file's raw tables, after checking it loads on its own."""
    from econbench.coffee.config import ConfigError, load_config

    try:
        load_config(path)
    except ConfigError as exc:
        raise ExperimentError(f"{source}: {what} {path}: {exc}") from None
    return tomllib.loads(path.read_text(encoding="utf-8"))


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
    from econbench.coffee.config import RunConfig

    data: dict[str, Any] = dict(raw.get("run", {}))
    for table in ("prompts", "economy"):
        if table in raw:
            data[table] = raw[table]
    defaults = raw["agents"] if "agents" in raw else RunConfig().agents
    data["agents"] = {**defaults, **exp.agents, **agents}
    if exp.days is not None:
        data["days"] = exp.days
    if seed is not None:
        data["seed"] = seed
    used = set(data["agents"].values())
    models = {**raw.get("models", {}), **{k: v.model_dump() for k, v in exp.models.items()}}
    data["models"] = {name: table for name, table in models.items() if name in used}
    return data


def _coffee_entries(exp: CoffeeExperiment, source: Path) -> list[Entry]:
    from econbench.coffee.config import RunConfig

    base = _read_run_file(source, _resolve(source, exp.base, "base"), "base") if exp.base else {}
    # (the name shown, the value as written in the matrix, the merged raw tables)
    variants: list[tuple[str | None, str, dict[str, Any]]] = []
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
            params: dict[str, Any] = dict(agents)
            parts = [f"{firm}-{slug(policy)}" for firm, policy in agents.items()]
            if shown is not None:
                params["variant"] = shown
                parts.append(slug(shown))
            configs.append((agents, raw, shown or ""))
            labels_raw.append(SEP.join(parts) or exp.name)
            identities.append({**agents, "variant": written})
    labels = unique_labels(labels_raw, identities)
    entries: list[Entry] = []
    for (agents, raw, shown), label in zip(configs, labels, strict=True):
        params = {**agents, **({"variant": shown} if shown else {})}
        for seed in exp.seeds or [None]:
            data = _coffee_config(exp, raw, agents, seed)
            try:
                config = RunConfig.model_validate(data)
            except ValidationError as exc:
                raise ExperimentError(f"{source}: entry {label}: {_format(exc)}") from None
            entries.append(
                Entry(
                    id=f"{label}{SEP}seed-{config.seed}",
                    label=label,
                    benchmark="coffee",
                    params={**params, "seed": config.seed},
                    config=config.model_dump(mode="json", by_alias=True),
                )
            )
            if len(entries) > MAX_ENTRIES:
                raise ExperimentError(f"{source}: the matrix has more than {MAX_ENTRIES:,} runs")
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise ExperimentError(f"{source}: two runs would both be '{dup}' (a seed twice?)")
    return entries


def _check_coffee(entries: list[Entry], source: Path) -> None:
    """Every configuration's policies and model names, then every model's API key (one
    message listing every variable to set), as ``coffee run`` checks one run."""
    from econbench.agents.models.registry import ModelConfigError, parse_model_name
    from econbench.coffee.agents import is_model, model_settings
    from econbench.coffee.config import FIRMS, RunConfig, role_of
    from econbench.coffee.policies import UnknownPolicyError, make_policy

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
                    _add_model(keyed, name, model_settings(config, name))
                else:
                    make_policy(name, role_of(firm))
            except (ModelConfigError, UnknownPolicyError) as exc:
                problems.setdefault(str(exc), []).append(entry.label)
    _raise_problems(problems, source)
    _check_keys(keyed, source)


def _add_model(groups: list[dict[str, ModelSettings]], name: str, settings: ModelSettings) -> None:
    """Group (model, settings) pairs so that each group names a model once."""
    for group in groups:
        if group.get(name) == settings:
            return
    for group in groups:
        if name not in group:
            group[name] = settings
            return
    groups.append({name: settings})


def _check_keys(groups: list[dict[str, ModelSettings]], source: Path) -> None:
    from econbench.agents.models.registry import ModelConfigError, check_keys

    messages = []
    for group in groups:
        try:
            check_keys(list(group), group)
        except ModelConfigError as exc:
            messages.append(str(exc))
    if messages:
        raise ExperimentError(f"{source}: " + "\n".join(dict.fromkeys(messages)))


def _raise_problems(problems: dict[str, list[str]], source: Path) -> None:
    """One error listing each distinct problem once, with the entries it concerns."""
    if not problems:
        return
    lines = []
    for message, where in problems.items():
        names = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        lines.append(f"{message} (in {names})")
    if len(lines) == 1:
        raise ExperimentError(f"{source}: {lines[0]}")
    raise ExperimentError(f"{source}: {len(lines)} problems:\n  - " + "\n  - ".join(lines))


# --------------------------------------------------------------------------- AlloBench


def _allo_entries(exp: AlloExperiment, source: Path) -> list[Entry]:
    from econbench.allo.runner import CellSpec
    from econbench.allo.stream import StreamConfig

    if exp.seeds is not None and exp.episodes is not None:
        raise ExperimentError(f"{source}: give either 'episodes' or 'seeds', not both")
    seeds = exp.episode_seeds()
    m = exp.matrix
    cells: list[CellSpec] = []
    seen: set[tuple[Any, ...]] = set()
    for framing in m.framings:
        for policy in m.policies:
            for skin in m.skins:
                skin = skin if framing.lower() == "r0" else "default"
                for budget in m.budgets:
                    for cost in m.costs:
                        key = (framing.lower(), policy, skin, budget, float(cost))
                        if key in seen:
                            continue
                        seen.add(key)
                        cells.append(
                            CellSpec(
                                framing=framing.lower(),
                                policy=policy,
                                seeds=seeds,
                                cost=float(cost),
                                budget=budget,
                                skin=skin,
                                config=StreamConfig(generator=exp.streams),
                                stream_budget=exp.stream_budget,
                                protocol=exp.protocol,
                            )
                        )
    if len(cells) > MAX_ENTRIES:
        raise ExperimentError(f"{source}: the matrix has more than {MAX_ENTRIES:,} cells")
    params = [
        {"framing": c.framing, "policy": c.policy, "skin": c.skin, "budget": c.budget,
         "cost": c.cost}
        for c in cells
    ]  # fmt: skip
    labels = unique_labels([c.slug() for c in cells], params)
    entries = []
    for cell, values, label in zip(cells, params, labels, strict=True):
        models = {
            name: settings.model_dump(mode="json")
            for name, settings in exp.models.items()
            if name == cell.policy
        }
        cell_dict = {
            **values,
            "seeds": list(cell.seeds),
            "streams": cell.config.generator,
            "stream_budget": cell.stream_budget,
            "protocol": cell.protocol,
        }
        entries.append(
            Entry(
                id=label,
                label=label,
                benchmark="allo",
                params=values,
                config={"cell": cell_dict, "models": models},
            )
        )
    return entries


def cell_of(entry: Entry) -> tuple[Any, dict[str, ModelSettings]]:
    """An AlloBench entry's ``CellSpec`` and model settings (an entry written before the
    stream choices had names played numpy streams drawn with the cell's budget)."""
    from econbench.allo.runner import CellSpec
    from econbench.allo.stream import StreamConfig

    cell = dict(entry.config["cell"])
    spec = CellSpec(
        framing=cell["framing"],
        policy=cell["policy"],
        seeds=tuple(cell["seeds"]),
        cost=float(cell["cost"]),
        budget=int(cell["budget"]),
        skin=cell["skin"],
        config=StreamConfig(generator=cell.get("streams", "numpy")),
        stream_budget=cell.get("stream_budget", "cell"),
        protocol=cell.get("protocol", "econbench"),
    )
    models = {k: ModelSettings.model_validate(v) for k, v in entry.config["models"].items()}
    return spec, models


def _check_allo(entries: list[Entry], source: Path) -> None:
    """Every cell's framing, skin, policy, model name and API key, as ``allo run`` checks."""
    from econbench.agents.models.registry import ModelConfigError, parse_model_name
    from econbench.allo.runner import make_factory

    problems: dict[str, list[str]] = {}
    keyed: list[dict[str, ModelSettings]] = []
    for entry in entries:
        spec, models = cell_of(entry)
        try:
            spec.validate()
            if "/" in spec.policy:
                parse_model_name(spec.policy)
                _add_model(keyed, spec.policy, models.get(spec.policy) or ModelSettings())
            else:
                make_factory(spec, models)
        except (ModelConfigError, ValueError, KeyError) as exc:
            message = exc.args[0] if exc.args else str(exc)
            problems.setdefault(str(message), []).append(entry.id)
    _raise_problems(problems, source)
    _check_keys(keyed, source)
