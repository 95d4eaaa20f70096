"""CoffeeBench's side of the benchmark seam (``econbench.runs.benchmark.Benchmark``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from econbench.agents.models.wraps import RunProviderWrap
from econbench.coffee.config import FIRMS, ConfigError, format_validation, is_model
from econbench.runs.benchmark import ProgressFn
from econbench.runs.coffee.config import RunConfig, load_config, parse_agents
from econbench.runs.coffee.experiment import CoffeeExperiment, check_coffee, coffee_entries
from econbench.runs.coffee.run import RunStopped, resume_to_dir, run_to_dir
from econbench.runs.experiment import Entry
from econbench.runs.layout import CONFIG, EVENTS, RECORD, read_json
from econbench.runs.replay import keyless

if TYPE_CHECKING:
    from econbench.agents.models.pricing import PriceTable
    from econbench.runs.cost_estimate import PlanEstimate


class CoffeeBenchmark:
    """Runs, resumes and replays CoffeeBench runs; expands and checks coffee experiments."""

    name = "coffee"
    log = EVENTS
    time_fields: frozenset[str] = frozenset()

    @property
    def max_seeds(self) -> int:
        from econbench.allo.game.stream import MAX_SEEDS  # the seed syntax the commands share

        return MAX_SEEDS

    def parse_seeds(self, text: str) -> list[int]:
        from econbench.allo.game.stream import parse_seeds

        return parse_seeds(text)

    def experiment_schema(self) -> type[CoffeeExperiment]:
        return CoffeeExperiment

    def entries(self, experiment: CoffeeExperiment, source: Path) -> list[Entry]:
        return coffee_entries(experiment, source)

    def check(self, entries: list[Entry], source: Path) -> None:
        check_coffee(entries, source)

    def start(
        self, config: dict[str, Any], run_dir: Path, *, label: str, cache: Path | None
    ) -> dict[str, Any]:
        run = RunConfig.model_validate(config)
        return run_to_dir(run, run_dir, overwrite=True, label=label, cache=cache)

    def resume(
        self,
        run_dir: Path,
        *,
        force: bool,
        cache: Path | None,
        config: RunConfig | None,
        on_progress: ProgressFn | None,
        cost_limit: float | None = None,
    ) -> dict[str, Any]:
        from econbench.runs.cost_guard import resume_guard

        total = config.days if config is not None else _saved_days(run_dir)
        on_day = (lambda day: on_progress(day, total)) if on_progress is not None else None
        guard = resume_guard(run_dir, cache, cost_limit) if _plays_model(run_dir, config) else None
        return resume_to_dir(
            run_dir, config=config, force=force, on_day=on_day, cache=cache, provider_wrap=guard
        )

    def resume_from_python(self, players: Mapping[str, str]) -> str:
        firms = ", ".join(f"{firm!r}: ..." for firm in players)
        return f"econbench.api.resume_coffee(run_dir, policies={{{firms}}})"

    def estimate(self, entries: list[Entry], like: Path | None, prices: PriceTable) -> PlanEstimate:
        from econbench.runs.coffee.cost import estimate

        return estimate(entries, like, prices)

    def changed_config(
        self, run_dir: Path, config_file: Path | None, days: int | None, agents: list[str]
    ) -> RunConfig:
        if config_file is not None:
            return load_config(config_file, {"days": days, "agents": parse_agents(agents) or None})
        data = read_json(run_dir / CONFIG)
        if not isinstance(data, dict):
            raise ConfigError(f"{run_dir / CONFIG} is missing or not valid JSON")
        data = dict(data)
        if days is not None:
            data["days"] = days
        if agents:
            data["agents"] = {**(data.get("agents") or {}), **parse_agents(agents)}
        try:
            return RunConfig.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"invalid config: {format_validation(exc)}") from None

    def replay(self, config: dict[str, Any], record: Path, out: Path, strict: bool) -> str | None:
        run = RunConfig.model_validate(config)
        names = {run.policy_for(f) for f in FIRMS if is_model(run.policy_for(f))}
        models = {name: run.model_settings(name) for name in sorted(names)}
        with (
            keyless(models),
            RunProviderWrap(record=out / RECORD, replay=record, strict=strict) as wrap,
        ):
            try:
                run_to_dir(run, out, provider_wrap=wrap)
            except RunStopped as exc:
                cause = exc.__cause__ or exc
                return f"{type(cause).__name__}: {cause}"
        return None


def _plays_model(run_dir: Path, config: RunConfig | None) -> bool:
    """Whether a model plays a firm of the run (its saved config, or ``config`` replacing it):
    only then does ``--cost-limit`` wrap its providers."""
    from econbench.coffee.config import is_model

    saved = config.model_dump(mode="json") if config is not None else read_json(run_dir / CONFIG)
    agents = saved.get("agents") if isinstance(saved, dict) else None
    return isinstance(agents, dict) and any(
        isinstance(actor, str) and is_model(actor) for actor in agents.values()
    )


def _saved_days(run_dir: Path) -> int:
    """The horizon of the saved config, for the progress bar only (0 when unreadable: the
    resume itself then says what is wrong with the file)."""
    config = read_json(run_dir / CONFIG)
    days = config.get("days") if isinstance(config, dict) else None
    return days if isinstance(days, int) else 0


BENCHMARK = CoffeeBenchmark()
