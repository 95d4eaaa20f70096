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
    default = "bargaining"
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

Limits (``econbench.runs.limits``, shared with the command-line options): a file of at most
1 MiB, read only if it is a regular file; at most ``MAX_ENTRIES`` entries, counted from the
axes' lengths before any entry is built; numbers of the right type only (``days = 2.0`` and
``episodes = true`` are refused, not converted).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from econbench.agents.models.registry import ModelSettings
from econbench.runs.benchmark import BENCHMARKS, get_benchmark
from econbench.runs.layout import Benchmark
from econbench.runs.limits import MAX_ENTRIES, MAX_SEED
from econbench.runs.user_files import UserFileError, read_user_toml

MAX_ID_CHARS = 100
"""Longer ids are cut and get a hash: a path component must stay well under 255 bytes."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
SEP = "__"


class ExperimentError(ValueError):
    """The experiment file cannot be run; the message names the file and the key."""


# --------------------------------------------------------------------------- schema


class Strict(BaseModel):
    """No unknown keys and no conversions: ``days = 2.0`` or ``episodes = true`` is refused,
    not read as 2 or 1 (an integer is still a float)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def seed_list(value: Any, benchmark: Benchmark) -> tuple[int, ...] | None:
    """``[1, 2, 3]`` or ``"1-3"`` / ``"1,5,9-12"`` → a tuple of distinct non-negative seeds
    (the text read as the ``benchmark`` reads it: ``Benchmark.parse_seeds``)."""
    if value is None:
        return None
    bench = get_benchmark(benchmark)
    if isinstance(value, str):
        seeds = bench.parse_seeds(value)
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
    if len(seeds) > bench.max_seeds:
        raise ValueError(f"more than {bench.max_seeds:,} seeds")
    if any(s > MAX_SEED for s in seeds):
        raise ValueError(f"seeds must be at most {MAX_SEED}")
    return tuple(seeds)


def axis(values: list[Any] | None) -> list[Any] | None:
    if values is None:
        return None
    if not values:
        raise ValueError("an axis needs at least one value")
    keys = [json.dumps(v) for v in values]
    if len(set(keys)) != len(keys):
        raise ValueError("a value is listed twice")
    return values


class ExperimentBase(Strict):
    """What every experiment file has; each benchmark's schema (``Benchmark.experiment_schema``)
    adds its ``benchmark`` literal, seeds and matrix."""

    if TYPE_CHECKING:
        benchmark: Benchmark

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


Experiment = ExperimentBase


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


def format_errors(exc: ValidationError) -> str:
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
        raw = read_user_toml(path, "experiment file")
    except UserFileError as exc:
        raise ExperimentError(str(exc)) from None
    bench = raw.get("benchmark")
    if bench not in BENCHMARKS:
        got = "missing" if bench is None else repr(bench)
        names = " or ".join(f'"{name}"' for name in BENCHMARKS)
        raise ExperimentError(f"{path}: 'benchmark' must be {names} ({got})")
    try:
        return get_benchmark(bench).experiment_schema().model_validate(raw)
    except ValidationError as exc:
        raise ExperimentError(f"{path}: {format_errors(exc)}") from None


def load_plan(path: Path | str, *, check: bool = True) -> Plan:
    """Read, validate and expand an experiment file.

    With ``check`` every entry is also checked as its run would check it (policies, model
    names, API keys); every problem found is reported in one ``ExperimentError``.
    """
    source = Path(path)
    experiment = read_experiment(source)
    entries = get_benchmark(experiment.benchmark).entries(experiment, source)
    plan = Plan(source=source, experiment=experiment, entries=entries)
    if check:
        check_plan(plan)
    return plan


def check_plan(plan: Plan) -> None:
    """Check every entry as its run would check it before starting: policy and model
    names, then API keys (one error listing every variable to set)."""
    get_benchmark(plan.benchmark).check(plan.entries, plan.source)


def check_matrix_size(axes: Iterable[int], source: Path, what: str) -> None:
    """Refuse a matrix of more than ``MAX_ENTRIES`` entries from its axes' lengths alone,
    before a single entry is built (60 million of them would take minutes and gigabytes)."""
    count = math.prod(axes)
    if count > MAX_ENTRIES:
        raise ExperimentError(
            f"{source}: the matrix expands to {count:,} {what}, more than the {MAX_ENTRIES:,} "
            "one experiment may hold; shorten its axes or split it into several experiments"
        )


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


def add_model(groups: list[dict[str, ModelSettings]], name: str, settings: ModelSettings) -> None:
    """Group (model, settings) pairs so that each group names a model once."""
    for group in groups:
        if group.get(name) == settings:
            return
    for group in groups:
        if name not in group:
            group[name] = settings
            return
    groups.append({name: settings})


class MissingKeysError(ExperimentError):
    """Everything checks out but API keys (or base URLs) that are not set; ``variables``
    names them. A dry run lists them instead of failing."""

    def __init__(self, message: str, variables: list[str]) -> None:
        super().__init__(message)
        self.variables = variables


def check_model_keys(groups: list[dict[str, ModelSettings]], source: Path) -> None:
    """Every model's key, checked last: ``MissingKeysError`` when only keys are missing."""
    from econbench.agents.models.registry import MissingKeyError, ModelConfigError, check_keys

    messages = []
    variables: list[str] = []
    only_keys = True
    for group in groups:
        try:
            check_keys(list(group), group)
        except ModelConfigError as exc:
            messages.append(str(exc))
            if isinstance(exc, MissingKeyError):
                variables.extend(v for v in exc.variables if v not in variables)
            else:
                only_keys = False
    if messages:
        message = f"{source}: " + "\n".join(dict.fromkeys(messages))
        if only_keys:
            raise MissingKeysError(message, variables)
        raise ExperimentError(message)


def raise_problems(problems: dict[str, list[str]], source: Path) -> None:
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
