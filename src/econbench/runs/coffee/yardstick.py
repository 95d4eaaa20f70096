"""roaster_A's yardstick: what a score means on the economy it was earned in.

A net income alone says little (−$1,953: good or bad?). Beside every CoffeeBench result the CLI
and the report show, for the same condition, background, economy, horizon and seeds:

- the **passive floor**: roaster_A played by ``passive`` (it only waits), the mean over the seeds;
- the **heuristic baseline**: roaster_A played by ``heuristic`` (the paper's HeuristicRoaster),
  the mean over the seeds;
- the **headroom**: the paper's rough upper bound for this economy and horizon (the symmetric
  duopoly of its Appendix G, :mod:`econbench.coffee.headroom`) minus the result: what is left
  to earn. The result's edges over the two baselines (result − floor, result − heuristic) are
  shown beside it.

Each baseline is measured, not assumed: the economy is played offline with roaster_A's player
replaced and everything else kept (a scripted 90-day run costs about half a second of CPU). A
figure is cached per seed in a JSON file under :func:`default_cache_dir`, keyed by the SHA-256
of everything that decides it: the whole run config of the baseline (seed, days, condition,
every firm's player, the economy), the package version and a digest of the source of the
economy, its policies and the run layer that plays them (``econbench/coffee``,
``econbench/agents``, ``econbench/runs/coffee``), so an edit to any of them misses the cache
instead of serving a stale number. A run whose roaster_A is itself ``passive`` or ``heuristic``
stores its own score (:func:`remember`), so ``econbench coffee run`` with the default players
plays one extra economy, the passive one, the first time and none after.

No yardstick exists when another firm is played by a model (it would cost a model run) or by a
Python policy object: :attr:`Yardstick.unavailable` says why.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import statistics
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from econbench.coffee.config import DEFAULT_BACKGROUND, FIRMS, FOCAL_FIRM, is_model
from econbench.runs.coffee.config import DEFAULT_CONDITION, RunConfig

BASELINES = ("passive", "heuristic")
"""roaster_A's two baseline players, the paper's PassiveRoaster and HeuristicRoaster."""
CACHE_FORMAT = 1
"""Bumped when a cache entry's meaning changes; part of every key."""
CACHE_ENV = "ECONBENCH_YARDSTICK_CACHE"
"""A directory for the cache instead of :func:`default_cache_dir`'s."""
SOURCE_PACKAGES = ("coffee", "agents", "runs/coffee")
"""The parts of ``econbench`` whose source decides a baseline's score (hashed into the key)."""


def default_cache_dir() -> Path:
    """``$ECONBENCH_YARDSTICK_CACHE``, else ``$XDG_CACHE_HOME/econbench/yardstick``, else
    ``~/.cache/econbench/yardstick`` (beside the response cache)."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "econbench" / "yardstick"


@functools.cache
def code_digest() -> str:
    """SHA-256 over the source files that decide a baseline's score (paths and bytes)."""
    package = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for part in SOURCE_PACKAGES:
        for path in sorted((package / part).rglob("*.py")):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _version() -> str:
    from econbench import __version__

    return __version__


# -- what a baseline plays ----------------------------------------------------------------------


def background_text(agents: Mapping[str, str]) -> str:
    """Who plays the five firms beside roaster_A, from a config's ``agents`` (a firm not
    named plays ``default``): one name when they agree (``bargaining``), else ``firm=player``
    pairs."""
    default = agents.get("default") or DEFAULT_BACKGROUND
    players = {firm: agents.get(firm) or default for firm in FIRMS if firm != FOCAL_FIRM}
    names = set(players.values())
    if len(names) == 1:
        return names.pop()
    return ", ".join(f"{firm}={name}" for firm, name in players.items())


def unavailable_reason(config: RunConfig) -> str | None:
    """Why no offline yardstick exists for ``config``'s background, or ``None``."""
    for firm in FIRMS:
        if firm == FOCAL_FIRM:
            continue
        name = config.policy_for(firm)
        if is_model(name):
            return f"{firm} is played by a model ({name}): a baseline would be a model run"
        if name.startswith("custom:"):
            return f"{firm} is played by a Python policy ({name}), which a baseline cannot rebuild"
    return None


def baseline_config(config: RunConfig | Mapping[str, Any], player: str, seed: int) -> RunConfig:
    """``config`` with roaster_A played by ``player`` on ``seed``; the rest as it is. Settings
    that belonged to roaster_A's own model (its prompt variant) are dropped."""
    data = (
        config.model_dump(mode="json", by_alias=True)
        if isinstance(config, RunConfig)
        else json.loads(json.dumps(dict(config)))
    )
    data["seed"] = seed
    data["agents"] = {**data.get("agents", {}), FOCAL_FIRM: player}
    prompts = {k: v for k, v in (data.get("prompts") or {}).items() if k != FOCAL_FIRM}
    if "prompts" in data:
        data["prompts"] = prompts
    return RunConfig.model_validate(data)


def cache_key(config: RunConfig) -> str:
    """The key of a baseline config's score: its whole config, the code and the format."""
    payload = {
        "format": CACHE_FORMAT,
        "version": _version(),
        "code": code_digest(),
        "config": config.model_dump(mode="json", by_alias=True),
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# -- the cache ----------------------------------------------------------------------------------


def _entry_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / key[:2] / f"{key}.json"


def _read_entry(cache_dir: Path, key: str) -> float | None:
    try:
        data = json.loads(_entry_path(cache_dir, key).read_text(encoding="utf-8"))
        value = data["net_income"]
        return float(value) if data.get("key") == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, torn or foreign: measured again


def _write_entry(cache_dir: Path, key: str, config: RunConfig, value: float) -> None:
    """Atomically (a temporary file renamed), so a reader never sees half an entry; a cache
    that cannot be written only costs the next call the run again."""
    path = _entry_path(cache_dir, key)
    entry = {
        "key": key,
        "net_income": value,
        "player": config.policy_for(FOCAL_FIRM),
        "seed": config.seed,
        "days": config.days,
        "condition": config.condition,
        "version": _version(),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh)
        os.replace(tmp, path)
    except OSError:
        return


# -- measuring ----------------------------------------------------------------------------------


def play_score(config: RunConfig) -> float:
    """roaster_A's net income in ``config``'s economy, played offline now. A ``hardened``
    economy is played in memory (what ``run_to_dir`` plays, without its files); ``paper``
    through its own run layer in a temporary directory."""
    if config.condition == DEFAULT_CONDITION:
        from econbench.coffee.metrics import run_summary
        from econbench.coffee.sim import CoffeeRun

        rows: list[dict[str, Any]] = []
        run = CoffeeRun(config, daily_sink=rows.append)
        world = run.run()
        names = {firm: config.policy_for(firm) for firm in FIRMS}
        summary = run_summary(world, names, rows)
    else:
        from econbench.runs.coffee.run import run_to_dir

        with tempfile.TemporaryDirectory(prefix="econbench-yardstick-") as tmp:
            summary = run_to_dir(config, Path(tmp) / "run")
    return float(summary["firms"][FOCAL_FIRM]["net_income"])


def baseline_score(config: RunConfig, cache_dir: Path | None = None) -> float:
    """roaster_A's score in a baseline config: from the cache, else played and stored."""
    where = cache_dir or default_cache_dir()
    key = cache_key(config)
    cached = _read_entry(where, key)
    if cached is not None:
        return cached
    value = play_score(config)
    _write_entry(where, key, config, value)
    return value


def remember(config: RunConfig, summary: Mapping[str, Any], cache_dir: Path | None = None) -> bool:
    """Store a finished run's score as its baseline's, when roaster_A played a baseline by
    name: the run *is* that baseline on that seed. Returns whether it was stored."""
    player = config.policy_for(FOCAL_FIRM)
    firm = (summary.get("firms") or {}).get(FOCAL_FIRM) or {}
    if player not in BASELINES or summary.get("status") != "completed":
        return False
    if firm.get("policy") != player or firm.get("net_income") is None:
        return False
    if unavailable_reason(config) is not None:
        return False
    baseline = baseline_config(config, player, config.seed)  # keyed as measure() asks
    where = cache_dir or default_cache_dir()
    _write_entry(where, cache_key(baseline), baseline, float(firm["net_income"]))
    return True


# -- the yardstick ------------------------------------------------------------------------------


def duopoly_bound(config: RunConfig) -> float:
    """The paper's rough upper bound on roaster_A's net income for this economy and horizon:
    the symmetric duopoly of its headroom analysis (Appendix G)."""
    from econbench.coffee.headroom import both_regimes

    return float(both_regimes(config.economy, config.days)[1].net_income)


@dataclass(frozen=True)
class Yardstick:
    """roaster_A's baselines on one background, horizon and set of seeds."""

    condition: str
    background: str
    days: int
    seeds: tuple[int, ...]
    passive: dict[int, float] = field(default_factory=dict)
    """The passive floor per seed."""
    heuristic: dict[int, float] = field(default_factory=dict)
    """The heuristic baseline per seed."""
    bound: float = math.nan
    """The duopoly bound (the paper's headroom analysis) for this economy and horizon."""
    unavailable: str | None = None
    """Why there are no baselines (another firm is a model or a Python policy)."""

    @property
    def passive_mean(self) -> float:
        return statistics.fmean(self.passive.values()) if self.passive else math.nan

    @property
    def heuristic_mean(self) -> float:
        return statistics.fmean(self.heuristic.values()) if self.heuristic else math.nan

    def vs_passive(self, result: float) -> float:
        """The result's edge over the passive floor (positive: above it)."""
        return result - self.passive_mean

    def vs_heuristic(self, result: float) -> float:
        """The result's edge over the heuristic baseline (positive: above it)."""
        return result - self.heuristic_mean

    def headroom(self, result: float) -> float:
        """What is left to earn: the duopoly bound minus the result."""
        return self.bound - result


def measure(
    config: RunConfig | Mapping[str, Any],
    seeds: Iterable[int],
    cache_dir: Path | None = None,
) -> Yardstick:
    """The yardstick of ``config``'s economy (its condition, background, economy and days)
    over ``seeds``; each seed's baselines from the cache or played now. A config that no
    longer validates (an old run's) gives a yardstick with ``unavailable`` set."""
    seed_list = tuple(dict.fromkeys(int(s) for s in seeds))
    try:
        base = config if isinstance(config, RunConfig) else RunConfig.model_validate(dict(config))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        condition = str(config.get("condition") or DEFAULT_CONDITION)  # type: ignore[union-attr]
        days = int(config.get("days") or 0)  # type: ignore[union-attr]
        return Yardstick(condition, "?", days, seed_list, unavailable=f"config: {first}")
    text = background_text(base.agents)
    why = unavailable_reason(base)
    if why is not None:
        return Yardstick(base.condition, text, base.days, seed_list, unavailable=why)
    scores: dict[str, dict[int, float]] = {name: {} for name in BASELINES}
    for seed in seed_list:
        for name in BASELINES:
            scores[name][seed] = baseline_score(baseline_config(base, name, seed), cache_dir)
    return Yardstick(
        base.condition,
        text,
        base.days,
        seed_list,
        passive=scores["passive"],
        heuristic=scores["heuristic"],
        bound=duopoly_bound(base),
    )
