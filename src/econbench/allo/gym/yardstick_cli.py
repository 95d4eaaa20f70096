"""``econbench allo yardstick``: train the PPO yardstick and print it beside the baselines.

Settings are checked before anything is trained or written; a bad one is a one-line
``error: …`` and exit code 2. torch and stable-baselines3 load only when the command runs.

The command's annotations are evaluated where they are written (this module has no
``from __future__ import annotations``): its integer options are built by the
``int_option`` that :func:`register` is given, which typer could not find by name.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from econbench.allo.episodes.runner import PAPER_TASKS

DEFAULT_OUT = Path("runs/allo/yardstick")
MAX_TRAINING_SEED = 2**32 - 1
"""stable-baselines3 seeds NumPy's legacy generator with ``--seed``, which takes 32 bits."""
MAX_BUDGET = PAPER_TASKS
"""The yardstick plays the paper's 60-task streams: no larger budget can be spent."""
IntOption = Callable[[int | None, int | None], dict[str, Any]]
"""``econbench.runs.limits.int_option``: ``typer.Option`` arguments of a whole-number option
within ``[low, high]`` (``2.0`` refused, not rounded)."""
SHORT_HEADER = ("policy", "score", "mean", "95% CI", "1st-sight", "traps", "unused", "late")
"""Terminal columns: pooled score, per-episode mean and its CI, first-sight rate, and per
episode the trap commits, unused budget and sighting at commit (``results.md`` has them all)."""


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def results_table(results: dict[str, Any]) -> Table:
    """The results as a compact rich table that fits 80 columns."""
    cfg, ev = results["config"], results["evaluation"]
    title = f"PPO yardstick · K = {cfg['cost']:g}, B = {cfg['budget']} · seeds {ev['seeds']}"
    table = Table(title=title, box=box.SIMPLE_HEAD)
    for i, header in enumerate(SHORT_HEADER):
        table.add_column(header, justify="left" if i == 0 else "right", no_wrap=True)
    for name, s in results["policies"].items():
        lo, hi = s["score_ci"]
        table.add_row(
            name,
            _f(s["score"]),
            _f(s["score_mean"]),
            f"{lo:.3f}–{hi:.3f}",
            _f(s["first_sight_rate"]),
            _f(s["trap_commits_mean"], 2),
            _f(s["unused_budget_mean"], 2),
            _f(s["lateness1_mean"], 2),
        )
    return table


def register(app: typer.Typer, int_option: IntOption) -> None:
    """Add ``yardstick`` to ``app``. ``int_option`` is the run layer's integer option, passed
    in because this layer may not import the run layer. Lower bounds and the training limits
    are checked by ``YardstickConfig.validate``, with its own messages."""
    whole = int_option(None, None)

    @app.command("yardstick")
    def yardstick_command(
        timesteps: Annotated[int, typer.Option(help="PPO training timesteps.", **whole)] = 300_000,
        seed: Annotated[
            int,
            typer.Option(
                help="Training seed (network init, sampling).",
                **int_option(None, MAX_TRAINING_SEED),
            ),
        ] = 0,
        episodes: Annotated[
            int, typer.Option(help="Evaluation episodes: seeds --eval-seed … +N−1.", **whole)
        ] = 1000,
        eval_seed: Annotated[int, typer.Option(help="First evaluation seed.", **whole)] = 0,
        envs: Annotated[int, typer.Option(help="Parallel training envs.", **whole)] = 8,
        cost: Annotated[float, typer.Option(help="Build charge K.")] = 0.0,
        budget: Annotated[
            int, typer.Option(help="Build budget B.", **int_option(None, MAX_BUDGET))
        ] = 3,
        bayes: Annotated[
            bool, typer.Option(help="Include the bayes baseline (its solve takes ~10 s).")
        ] = True,
        out: Annotated[Path, typer.Option(help="Output directory.")] = DEFAULT_OUT,
    ) -> None:
        """Train PPO on AlloBench-Features-v0 from scratch and score it beside bayes, wait:2,
        eager and hindsight on the same evaluation seeds.

        Writes ppo_model.zip, results.json and results.md into --out.
        """
        from econbench.allo.gym.yardstick import (
            DEFAULT_BASELINES,
            TrainExtraMissing,
            YardstickConfig,
            require_train_extra,
            run_yardstick,
        )

        baselines = tuple(b for b in DEFAULT_BASELINES if bayes or b != "bayes")
        cfg = YardstickConfig(
            timesteps=timesteps,
            seed=seed,
            n_envs=envs,
            episodes=episodes,
            eval_seed=eval_seed,
            cost=cost,
            budget=budget,
            baselines=baselines,
        )
        try:
            cfg.validate()
            require_train_extra()
        except (ValueError, TrainExtraMissing) as exc:
            raise _fail(str(exc)) from None
        if out.exists() and not out.is_dir():
            raise _fail(f"--out {out} exists and is not a directory")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _fail(f"cannot create --out {out}: {exc.strerror or exc}") from None

        console = Console(stderr=True)
        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )
        with progress:
            task = progress.add_task("training PPO", total=cfg.timesteps)

            def on_progress(done: int, total: int) -> None:
                progress.update(task, completed=done)

            def on_stage(name: str) -> None:
                if name != "training":
                    progress.update(task, completed=cfg.timesteps, description=f"{name} …")

            results = run_yardstick(cfg, out, on_progress=on_progress, on_stage=on_stage)
        tr = results["training"]
        Console().print(results_table(results))
        typer.echo(
            f"trained {tr['timesteps']:,} timesteps in {tr['seconds']:.1f} s "
            f"({tr['steps_per_second']:,.0f} steps/s); wrote {out}/ppo_model.zip, "
            "results.json, results.md"
        )
