"""AlloBench post-training, for real, on SmolLM2-135M-Instruct and this machine's CPU.

Prepares SmolLM2 (``econbench models prepare smollm2``; skipped with ``--model DIR``), then

1. plays the reference policies at the benchmark's stream length, for context;
2. evaluates the base model: free-text cells on every rung (``eval-transfer``'s cells) and
   the forced-choice reading of R0 and its reskins;
3. trains it on R0 (``econbench allo train``: the paper's recipe — LoRA r 32 / α 64, clip
   0.2, KL 0.05, lr 6e-5, temperature 1.2 — on a CPU-sized batch);
4. evaluates the adapted model the same way,

and prints the reward curve, the before/after tables and the timings.

    .venv/bin/python benchmarks/allo_posttrain.py            # 15 minutes measured, 2 cores

CPU-sized choices (all flags): episodes of T = 20 tasks for training and the forced-choice
reading (T = 60 would take hours here: every decision re-reads the conversation), and
T = 10 with 1 episode per cell and 24-token replies for the free-text cells, whose prompts
the ``hf`` provider re-reads in full at every turn (R1 and R2 prompts are ~3k tokens).
One torch thread: on this shared 2-core machine two threads were 3-9x slower.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from econbench.allo.episodes.runner import CellSpec, play_cell, summary_of
from econbench.allo.framings import get_framing
from econbench.allo.game.stream import StreamConfig
from econbench.runs.allo.posttrain.config import TrainConfig
from econbench.runs.allo.training import train
from econbench.runs.allo.transfer import (
    TransferSpec,
    forced_markdown,
    run_forced,
    run_transfer,
    transfer_markdown,
)

REFERENCE = ("eager", "wait:2", "wait:3", "posterior:0.88")


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, help="a prepared model folder (default: prepare)")
    p.add_argument("--out", type=Path, default=Path("runs/allo/posttrain-bench"))
    p.add_argument("--tasks", type=int, default=20, help="T for training and forced choice")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--seeds-per-step", type=int, default=2)
    p.add_argument("--rollouts", type=int, default=2)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=6e-5)
    p.add_argument("--forced-episodes", type=int, default=6, help="from seed 2000")
    p.add_argument("--eval-tasks", type=int, default=10, help="T of the free-text cells")
    p.add_argument("--eval-episodes", type=int, default=1, help="free-text episodes per cell")
    p.add_argument("--max-tokens", type=int, default=24, help="free-text reply limit")
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args()


def reference_table(tasks: int, seeds: range) -> str:
    lines = [
        f"Reference policies at T = {tasks} (seeds {seeds.start}–{seeds.stop - 1}):",
        "",
        "| policy | pooled score | first-sight |",
        "|---|---|---|",
    ]
    for policy in REFERENCE:
        spec = CellSpec(
            framing="r0", policy=policy, seeds=tuple(seeds), config=StreamConfig(n_tasks=tasks)
        )
        s = summary_of(spec, get_framing("r0"), play_cell(spec))
        fs = s["first_sight_rate"]
        lines.append(
            f"| {policy} | {s['score']:.3f} | {'–' if fs is None else f'{100 * fs:.0f} %'} |"
        )
    return "\n".join(lines)


def curve(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| step | mean reward | first-sight | KEEP rate | KL | policy loss | clip frac | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        fs = r["first_sight_rate"]
        lines.append(
            f"| {r['step']} | {r['reward_mean']:.2f} | {'–' if fs is None else f'{100 * fs:.0f} %'}"
            f" | {100 * r['keep_rate']:.0f} % | {r['kl']:.4f} | {r['policy_loss']:.3f}"
            f" | {r['clip_frac']:.2f} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    args = parse()
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
    out: Path = args.out
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now
        print(f"[{name}: {timings[name]:.0f} s]", flush=True)

    if args.model is None:
        from econbench.agents.models.hf.prepare import prepare

        model = prepare("smollm2", log=lambda m: print(m, flush=True))
    else:
        model = args.model
    model = model.expanduser().resolve()
    lap("prepare")

    print(reference_table(args.tasks, range(9000, 9300)), flush=True)
    lap("reference policies")

    def free_spec(adapter: Path | None) -> TransferSpec:
        return TransferSpec(
            model=model,
            adapter=adapter,
            seeds=tuple(range(2000, 2000 + args.eval_episodes)),
            max_tokens=args.max_tokens,
            device="cpu",
            tasks=args.eval_tasks,
        )

    def forced_spec(adapter: Path | None) -> TransferSpec:
        return TransferSpec(
            model=model,
            adapter=adapter,
            seeds=tuple(range(2000, 2000 + args.forced_episodes)),
            device="cpu",
            tasks=args.tasks,
            forced_choice=True,
            forced_temperature=1.2,
        )

    run_transfer(free_spec(None), out / "transfer")
    lap("base: free-text cells")
    run_forced(forced_spec(None), out / "forced")
    lap("base: forced choice")

    config = TrainConfig(
        model=str(model),
        steps=args.steps,
        seeds_per_step=args.seeds_per_step,
        rollouts=args.rollouts,
        epochs=args.epochs,
        lr=args.lr,
        tasks=args.tasks,
        device="cpu",
    )
    rows = train(config, out / "train")
    lap("training")
    adapter = out / "train" / "adapter"

    result = run_transfer(free_spec(adapter), out / "transfer")
    lap("adapted: free-text cells")
    forced = run_forced(forced_spec(adapter), out / "forced")
    lap("adapted: forced choice")

    print()
    print("## Settings\n")
    print(json.dumps(config.model_dump(), indent=None))
    print(f"\n## Reward curve ({out / 'train' / 'train.jsonl'})\n")
    print(curve(rows))
    print()
    print(transfer_markdown(result))
    print("\n".join(forced_markdown(forced, ["base", "adapted"], 1.2)))
    print(f"(forced choice: T = {args.tasks}, seeds 2000–{2000 + args.forced_episodes - 1})")
    print("\n## Timings\n")
    for name, seconds in timings.items():
        print(f"- {name}: {seconds:.0f} s")
    print(f"- total: {sum(timings.values()) / 60:.1f} min")


if __name__ == "__main__":
    main()
