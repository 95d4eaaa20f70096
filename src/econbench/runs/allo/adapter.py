"""AlloBench's side of the benchmark seam (``econbench.runs.benchmark.Benchmark``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from econbench.agents.models.record import CallRecord
from econbench.agents.models.registry import ModelSettings, is_model_name
from econbench.agents.models.wraps import RunProviderWrap
from econbench.allo.episodes.runner import spec_from_config
from econbench.allo.game.stream import MAX_SEEDS, parse_seeds
from econbench.runs.allo.cell import CellResumeError, CellStopped, run_cell
from econbench.runs.allo.experiment import (
    AlloExperiment,
    allo_entries,
    cell_of_config,
    check_allo,
)
from econbench.runs.benchmark import ProgressFn, ResumeError
from econbench.runs.experiment import Entry
from econbench.runs.layout import CONFIG, EPISODES, META, RECORD, read_json
from econbench.runs.replay import ReplayError, keyless
from econbench.runs.resume import custom_refusal, is_custom

if TYPE_CHECKING:
    from econbench.agents.models.pricing import PriceTable
    from econbench.runs.cost_estimate import PlanEstimate

TIME_FIELDS = frozenset({"wall_s"})
"""R3's sandbox fields that measure time (left out of a replay's comparison)."""


class AlloBenchmark:
    """Runs, resumes and replays AlloBench cells; expands and checks allo experiments."""

    name = "allo"
    log = EPISODES
    time_fields = TIME_FIELDS
    max_seeds = MAX_SEEDS

    def parse_seeds(self, text: str) -> list[int]:
        return parse_seeds(text)

    def experiment_schema(self) -> type[AlloExperiment]:
        return AlloExperiment

    def entries(self, experiment: AlloExperiment, source: Path) -> list[Entry]:
        return allo_entries(experiment, source)

    def check(self, entries: list[Entry], source: Path) -> None:
        check_allo(entries, source)

    def start(
        self, config: dict[str, Any], run_dir: Path, *, label: str, cache: Path | None
    ) -> dict[str, Any]:
        spec, models = cell_of_config(config)
        return run_cell(spec, run_dir, models=models or None, label=label, cache=cache)

    def resume(
        self,
        run_dir: Path,
        *,
        force: bool,
        cache: Path | None,
        config: Any | None,
        on_progress: ProgressFn | None,
        cost_limit: float | None = None,
    ) -> dict[str, Any]:
        from econbench.runs.cost_guard import resume_guard

        saved = read_json(run_dir / CONFIG)
        if not isinstance(saved, dict):
            raise ResumeError(
                f"{run_dir / CONFIG} is missing or not valid JSON; it cannot be resumed"
            )
        try:
            spec = spec_from_config(saved)
            spec.validate()
            models = {
                name: ModelSettings.model_validate(settings)
                for name, settings in (saved.get("models") or {}).items()
            }
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            detail = (str(exc).splitlines() or [""])[0]
            raise ResumeError(
                f"{run_dir / CONFIG} is not an AlloBench cell config "
                f"({type(exc).__name__}: {detail})"
            ) from None
        if is_custom(spec.policy):
            raise ResumeError(custom_refusal(run_dir, {"policy": spec.policy}, "allo"))
        meta = read_json(run_dir / META)
        meta = meta if isinstance(meta, dict) else {}
        done = 0
        model = is_model_name(spec.policy)  # only a model's calls cost money

        def step(_: Any) -> None:
            nonlocal done
            done += 1
            if on_progress is not None:
                on_progress(done, len(spec.seeds))

        try:
            return run_cell(
                spec,
                run_dir,
                models=models,
                cache=cache,
                label=meta.get("label"),
                resume=True,
                force=force,
                on_episode=step,
                provider_wrap=resume_guard(run_dir, cache, cost_limit) if model else None,
            )
        except CellResumeError as exc:
            raise ResumeError(str(exc)) from None

    def resume_from_python(self, players: Mapping[str, str]) -> str:
        return "econbench.api.resume_allo(run_dir, actor=...)"

    def estimate(self, entries: list[Entry], like: Path | None, prices: PriceTable) -> PlanEstimate:
        from econbench.runs.allo.cost import estimate

        return estimate(entries, like, prices)

    def changed_config(
        self, run_dir: Path, config_file: Path | None, days: int | None, agents: list[str]
    ) -> Any:
        raise ValueError(
            f"{run_dir} is an AlloBench cell: --config, --days and --agent change CoffeeBench "
            "runs only"
        )

    def replay(self, config: dict[str, Any], record: Path, out: Path, strict: bool) -> str | None:
        try:
            spec = spec_from_config(config)
            spec.validate()
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ValidationError):
                raise
            raise ReplayError(f"the cell's {CONFIG} is not usable: {exc}") from None
        if "/" not in spec.policy:
            raise ReplayError(
                f"the cell was played by {spec.policy!r}, not a model: nothing to replay"
            )
        models = {spec.policy: _settings(config, spec.policy, record)}
        with (
            keyless(models),
            RunProviderWrap(record=out / RECORD, replay=record, strict=strict) as wrap,
        ):
            try:
                run_cell(spec, out, models=models, provider_wrap=wrap)
            except CellStopped as exc:
                cause = exc.__cause__ or exc
                return f"{type(cause).__name__}: {cause}"
        return None


def _settings(config: dict[str, Any], policy: str, record: Path) -> ModelSettings:
    """The model's settings: from the cell's ``config.json``, else from the record (cells
    written before the config kept them)."""
    saved = (config.get("models") or {}).get(policy)
    if isinstance(saved, dict):
        return ModelSettings.model_validate(saved)
    with CallRecord(record, readonly=True) as calls:
        for agent in calls.agents():
            info = calls.agent_info(agent)
            if info is not None and info.settings is not None:
                return ModelSettings.model_validate(info.settings)
    return ModelSettings()


BENCHMARK = AlloBenchmark()
