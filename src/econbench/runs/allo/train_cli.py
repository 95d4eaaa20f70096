"""``econbench allo train`` and ``econbench allo eval-transfer``: AlloBench post-training.

``train`` runs the paper's per-decision PPO on the R0 urn with LoRA on a local model folder
(``econbench.runs.allo.training``; forced-choice or free-text rollouts, a privileged or
public critic); ``eval-transfer`` plays the base and the adapted model
on R0, its reskins, R1 and R2 and writes the before/after table
(``econbench.runs.allo.transfer``). Both need the ``train`` extra, imported only when a
command runs, so ``econbench`` itself starts without it. Every setting is checked before
anything is loaded; a bad one is one ``error: …`` line and exit code 2.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from econbench.allo.game.stream import seeds_from_options
from econbench.runs.limits import MAX_BUDGET, MAX_SEED, MAX_TASKS, int_option

DEFAULT_TRANSFER_OUT = Path("runs/allo/transfer")
MAX_THREADS = 1_024
"""torch CPU threads: more is a typo (torch itself overflows at 2**31, a traceback)."""
WHOLE = int_option()
"""A whole number (``2.0`` refused); its lower bound is the config's (one-line messages)."""
THREADS = int_option(None, MAX_THREADS)
TASKS = int_option(1, MAX_TASKS)
BUDGET = int_option(1, MAX_BUDGET)
SEED = int_option(None, MAX_SEED)
"""torch seeds with at most 64 bits (a larger seed is a traceback after the model loads)."""


class _Usage(Exception):
    """A bad setting, reported as one ``error:`` line with exit code 2."""


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _need_extra() -> None:
    from econbench.runs.allo.posttrain import MissingTrainExtra, require_train_extra

    try:
        require_train_extra()
    except MissingTrainExtra as exc:
        raise _Usage(str(exc)) from None


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"--{where.replace('_', '-')}: {msg}" if where else msg)
    return "; ".join(parts)


def _threads(threads: int | None) -> None:
    if threads is None:
        return
    if threads < 1:
        raise _Usage(f"--threads must be at least 1, got {threads}")
    import torch

    torch.set_num_threads(threads)


def _model_folder(path: Path) -> Path:
    from econbench.agents.models.hf.loading import check_model_folder
    from econbench.agents.models.registry import ModelConfigError

    try:
        return check_model_folder(path)
    except ModelConfigError as exc:
        raise _Usage(str(exc)) from None


def _device(device: str) -> None:
    """Refuse ``cuda`` without a GPU (and unknown names) before anything is loaded."""
    from econbench.agents.models.hf.loading import resolve_device
    from econbench.agents.models.registry import ModelConfigError

    try:
        resolve_device(device)
    except ModelConfigError as exc:
        raise _Usage(str(exc)) from None


def _out_dir(path: Path) -> Path:
    if path.exists() and not path.is_dir():
        raise _Usage(f"--out {path} exists and is not a directory")
    return path


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


class _TrainProgress:
    """Shows training as two bars: steps, and the episodes of the current step."""

    def __init__(self, progress: Progress, steps: int, done: int) -> None:
        self.progress = progress
        self.steps: TaskID = progress.add_task("steps", total=steps, completed=done)
        self.episodes: TaskID = progress.add_task("rollouts", total=1, visible=False)

    def start_step(self, step: int, episodes: int) -> None:
        self.progress.reset(
            self.episodes, total=episodes, description=f"step {step + 1}: rollouts", visible=True
        )

    def episode_done(self, episode: Any) -> None:
        self.progress.advance(self.episodes)

    def phase(self, text: str) -> None:
        self.progress.update(self.episodes, description=text)

    def step_done(self, row: dict[str, Any]) -> None:
        fs = row["first_sight_rate"]
        self.progress.update(
            self.steps,
            advance=1,
            description=(
                f"steps · reward {row['reward_mean']:.1f} · first-sight "
                f"{'–' if fs is None else f'{100 * fs:.0f} %'} · KL {row['kl']:.4f}"
            ),
        )


def _curve(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="training curve (train.jsonl)")
    headers = ("step", "reward", "first-sight", "KEEP rate", "unresolved", "KL", "policy loss", "s")
    for header in headers:
        table.add_column(header, justify="right")
    for r in rows:
        fs = r["first_sight_rate"]
        table.add_row(
            str(r["step"]),
            f"{r['reward_mean']:.2f}",
            "–" if fs is None else f"{100 * fs:.0f} %",
            f"{100 * r['keep_rate']:.0f} %",
            f"{100 * r.get('unresolved_rate', 0.0):.0f} %",
            f"{r['kl']:.4f}",
            f"{r['policy_loss']:.3f}",
            f"{r['seconds']:.0f}",
        )
    return table


def train_command(
    model: Annotated[Path, typer.Option(help="Local transformers model folder.")],
    out: Annotated[Path, typer.Option(help="Output folder (rerun to continue training).")],
    steps: Annotated[int, typer.Option(help="Training steps.", **WHOLE)] = 20,
    seeds: Annotated[
        str | None,
        typer.Option(
            help='Training seeds: "9000-9099" (cycled) or "9500-" (from 9500 on); '
            "default: from 9000 on."
        ),
    ] = None,
    seeds_per_step: Annotated[int, typer.Option(help="Stream seeds per step.", **WHOLE)] = 25,
    rollouts: Annotated[int, typer.Option(help="Sampled episodes per seed.", **WHOLE)] = 4,
    lora_r: Annotated[int, typer.Option(help="LoRA rank.", **WHOLE)] = 32,
    lora_alpha: Annotated[int, typer.Option(help="LoRA alpha.", **WHOLE)] = 64,
    kl: Annotated[
        float,
        typer.Option(help="KL penalty to the frozen model (full vocabulary, answer tokens)."),
    ] = 0.05,
    clip: Annotated[float, typer.Option(help="PPO ratio clip ε.")] = 0.2,
    lr: Annotated[float, typer.Option(help="Learning rate (AdamW on the LoRA weights).")] = 6e-5,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 1.2,
    epochs: Annotated[int, typer.Option(help="PPO epochs per step (the paper: 1).", **WHOLE)] = 1,
    minibatches: Annotated[int, typer.Option(help="Optimizer steps per epoch.", **WHOLE)] = 1,
    baseline: Annotated[str, typer.Option(help="Advantage baseline: value or mean.")] = "value",
    critic: Annotated[
        str,
        typer.Option(
            help="What the value baseline sees: privileged (public features + the class's "
            "true rate, the paper's; the policy never sees it) or public."
        ),
    ] = "privileged",
    rollout_mode: Annotated[
        str,
        typer.Option(
            help="forced (KEEP/PASS read after 'DECISION:') or free (whole replies read by "
            "the R0 parser, as the paper sampled)."
        ),
    ] = "forced",
    reply_tokens: Annotated[
        int, typer.Option(help="Free text: reply token limit (R0's is 512).", **WHOLE)
    ] = 512,
    free_logp: Annotated[
        str,
        typer.Option(
            help="Free text: a reply's log-probability for the PPO ratio, the mean over its "
            "tokens (the paper's) or the sum."
        ),
    ] = "mean",
    spelling_coef: Annotated[
        float,
        typer.Option(help="Weight of the likelihood of each answer's spelling (KEEP + end)."),
    ] = 1.0,
    condition: Annotated[
        str,
        typer.Option(
            help="The urn the rollouts show: frontier (N announced, the paper's Run 2) or no-n "
            "(its Run 1)."
        ),
    ] = "frontier",
    cost: Annotated[float, typer.Option(help="Build charge K.")] = 0.0,
    budget: Annotated[int, typer.Option(help="Build budget B.", **BUDGET)] = 3,
    tasks: Annotated[
        int, typer.Option(help="Tasks per episode T (60 in the paper).", **TASKS)
    ] = 60,
    seed: Annotated[int, typer.Option(help="Seed of the LoRA init and the sampling.", **SEED)] = 0,
    device: Annotated[str, typer.Option(help="auto, cpu or cuda.")] = "auto",
    dtype: Annotated[str, typer.Option(help="auto (float32 on CPU), float32, bfloat16.")] = "auto",
    gradient_checkpointing: Annotated[
        bool, typer.Option(help="Trade compute for memory (large models on a GPU).")
    ] = False,
    threads: Annotated[int | None, typer.Option(help="torch CPU threads.", **THREADS)] = None,
    force: Annotated[bool, typer.Option(help="Continue even if the settings changed.")] = False,
) -> None:
    """Post-train a local model on the R0 urn (per-decision PPO with LoRA, docs/allobench.md §6)."""
    try:
        _need_extra()
        from econbench.runs.allo.posttrain.config import TrainConfig
        from econbench.runs.allo.train_checkpoint import TrainResumeError, check_resume

        folder = _model_folder(model)
        _out_dir(out)
        _device(device)
        try:
            config = TrainConfig(
                model=str(folder),
                steps=steps,
                seeds=seeds,
                seeds_per_step=seeds_per_step,
                rollouts=rollouts,
                lora_r=lora_r,
                lora_alpha=lora_alpha,
                kl=kl,
                clip=clip,
                lr=lr,
                temperature=temperature,
                epochs=epochs,
                minibatches=minibatches,
                baseline=baseline,  # type: ignore[arg-type]
                critic=critic,  # type: ignore[arg-type]
                rollout_mode=rollout_mode,  # type: ignore[arg-type]
                reply_tokens=reply_tokens,
                free_logp=free_logp,  # type: ignore[arg-type]
                spelling_coef=spelling_coef,
                condition=condition,
                cost=cost,
                budget=budget,
                tasks=tasks,
                seed=seed,
                device=device,  # type: ignore[arg-type]
                dtype=dtype,  # type: ignore[arg-type]
                gradient_checkpointing=gradient_checkpointing,
            )
        except ValidationError as exc:
            raise _Usage(_validation_message(exc)) from None
        try:
            done = check_resume(out, config, force) if out.exists() else 0
        except TrainResumeError as exc:
            raise _Usage(str(exc)) from None
        _threads(threads)
    except _Usage as exc:
        _fail(str(exc))
    _run_training(config, out, done, force)


def _run_training(config: Any, out: Path, done: int, force: bool) -> None:
    from econbench.agents.models.registry import ModelConfigError
    from econbench.runs.allo.train_checkpoint import TrainResumeError
    from econbench.runs.allo.training import train

    console = Console(stderr=True)
    if done:
        console.print(f"continuing {out} after step {done} of {config.steps}", markup=False)
    try:
        with _progress(console) as progress:
            rows = train(
                config, out, force=force, reporter=_TrainProgress(progress, config.steps, done)
            )
    except (ModelConfigError, TrainResumeError) as exc:
        _fail(str(exc))
    Console().print(_curve(rows))
    typer.echo(f"wrote {out}/train.jsonl and the adapter {out}/adapter")


def _transfer_seeds(episodes: int | None, seeds: str | None, seed: int) -> tuple[int, ...]:
    try:
        return seeds_from_options(episodes, seeds, seed)
    except ValueError as exc:
        raise _Usage(str(exc)) from None


def _adapter_folder(adapter: Path, model: Path) -> Path:
    """The adapter folder; refused when it records another existing base model."""
    from econbench.agents.models.hf.loading import check_adapter_folder
    from econbench.agents.models.registry import ModelConfigError

    try:
        folder = check_adapter_folder(adapter)
    except ModelConfigError as exc:
        raise _Usage(str(exc)) from None
    try:
        data = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise _Usage(f"{folder}/adapter_config.json is not valid JSON") from None
    base = data.get("base_model_name_or_path") if isinstance(data, dict) else None
    recorded = Path(base).expanduser() if isinstance(base, str) and base else None
    if recorded is not None and recorded.is_dir() and recorded.resolve() != model:
        raise _Usage(
            f"the adapter {folder} was trained on {base}, not on --model {model}; "
            "evaluate it with the model it was trained on"
        )
    return folder


def eval_transfer_command(
    model: Annotated[Path, typer.Option(help="Local transformers model folder (the base).")],
    adapter: Annotated[
        Path | None, typer.Option(help="LoRA adapter from `allo train` (OUT/adapter).")
    ] = None,
    episodes: Annotated[
        int | None,
        typer.Option(help="Episodes per cell from --seed (default: 2000–2023).", **WHOLE),
    ] = None,
    seeds: Annotated[str | None, typer.Option(help='Seeds, e.g. "2000-2023".')] = None,
    seed: Annotated[int, typer.Option(help="First seed for --episodes.", **WHOLE)] = 2000,
    max_tokens: Annotated[
        int | None, typer.Option(help="Reply token limit (default: each framing's).", **WHOLE)
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(help="Sampling temperature (default: the model's).")
    ] = None,
    tasks: Annotated[
        int, typer.Option(help="Tasks per episode T (60 in the paper).", **TASKS)
    ] = 60,
    budget: Annotated[int, typer.Option(help="Build budget B.", **BUDGET)] = 3,
    cost: Annotated[float, typer.Option(help="Build charge K.")] = 0.0,
    r3: Annotated[bool, typer.Option("--r3", help="Also evaluate R3 (full build).")] = False,
    rungs: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated rungs to evaluate (default: r0, chest, quiver, cauldron, "
            "tool-probe, r1, r2; --r3 adds r3); also no-n, the urn without N."
        ),
    ] = None,
    forced_choice: Annotated[
        bool,
        typer.Option(
            "--forced-choice",
            help="Also read R0 and its reskins as training does (KEEP/PASS after 'DECISION:').",
        ),
    ] = False,
    forced_temperature: Annotated[
        float, typer.Option(help="Sampling temperature of the forced-choice reading.")
    ] = 1.2,
    device: Annotated[str, typer.Option(help="auto, cpu or cuda.")] = "auto",
    threads: Annotated[int | None, typer.Option(help="torch CPU threads.", **THREADS)] = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = DEFAULT_TRANSFER_OUT,
    force: Annotated[bool, typer.Option(help="Resume cells whose settings changed.")] = False,
) -> None:
    """Before/after table: first-sight rate, score and unresolved share on every rung."""
    try:
        _need_extra()
        from econbench.runs.allo.transfer import TransferError, TransferSpec

        folder = _model_folder(model)
        adapter_dir = _adapter_folder(adapter, folder) if adapter is not None else None
        run_seeds = _transfer_seeds(episodes, seeds, seed)
        if max_tokens is not None and max_tokens < 1:
            raise _Usage(f"--max-tokens must be at least 1, got {max_tokens}")
        if temperature is not None and not 0.0 <= temperature <= 2.0:
            raise _Usage(f"--temperature must be between 0 and 2, got {temperature}")
        if cost < 0:
            raise _Usage(f"--cost must be non-negative, got {cost:g}")
        if not 0.0 < forced_temperature <= 10.0:
            raise _Usage(f"--forced-temperature must be in (0, 10], got {forced_temperature}")
        _device(device)
        _out_dir(out)
        spec = TransferSpec(
            model=folder,
            adapter=adapter_dir,
            seeds=run_seeds,
            max_tokens=max_tokens,
            temperature=temperature,
            device=device,
            r3=r3,
            cost=cost,
            budget=budget,
            tasks=tasks,
            forced_choice=forced_choice,
            forced_temperature=forced_temperature,
            rungs=_rung_keys(rungs),
        )
        try:
            spec.rung_list()
        except TransferError as exc:
            raise _Usage(str(exc)) from None
        _threads(threads)
        _preload(spec)
    except _Usage as exc:
        _fail(str(exc))
    _run_transfer(spec, out, force)


def _rung_keys(text: str | None) -> tuple[str, ...]:
    """``--rungs``: the keys in the order given, without repeats (empty: the default set)."""
    if text is None:
        return ()
    keys = tuple(dict.fromkeys(k.strip().lower() for k in text.split(",") if k.strip()))
    if not keys:
        raise _Usage("--rungs names no rung")
    return keys


def _preload(spec: Any) -> None:
    """Load the base and the adapted model now (they are cached for the cells), so a model
    or adapter that does not load is a one-line error before anything is written."""
    from econbench.agents.models.hf.loading import load_causal_lm
    from econbench.agents.models.registry import ModelConfigError

    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
            for variant in spec.variants():
                adapter = str(spec.adapter) if variant == "adapted" else None
                load_causal_lm(spec.model, device=spec.device, adapter=adapter)
    except ModelConfigError as exc:
        raise _Usage(str(exc)) from None


def _run_transfer(spec: Any, out: Path, force: bool) -> None:
    from econbench.runs.allo.transfer import TransferError, run_transfer

    console = Console(stderr=True)
    cells = len(spec.variants()) * len(spec.rung_list())
    try:
        with _progress(console) as progress:
            task = progress.add_task("episodes", total=cells * len(spec.seeds))
            result = run_transfer(
                spec,
                out,
                force=force,
                on_cell=lambda variant, rung, done: progress.update(
                    task, description=f"{variant} · {rung.key}", advance=done
                ),
                on_episode=lambda _: progress.advance(task),
            )
    except TransferError as exc:
        _fail(str(exc))
    from econbench.runs.allo.transfer import transfer_markdown

    typer.echo(transfer_markdown(result))
    typer.echo(f"wrote {out}/transfer.md and {out}/transfer.json")


def register(app: typer.Typer) -> None:
    """Add ``train`` and ``eval-transfer`` to the ``econbench allo`` application."""
    app.command("train")(train_command)
    app.command("eval-transfer")(eval_transfer_command)
