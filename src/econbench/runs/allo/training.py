"""The training job: a directory that post-training fills step by step, resumable at any step.

``train`` runs ``runs.allo.posttrain.trainer``'s steps (sample R0 episodes, PPO over their
decisions) inside a run directory it locks: ``train.jsonl`` (one row per step), ``adapter/``,
``state.pt`` and ``trainer_state.json`` are written after every step (``train_checkpoint``), so
rerunning the same command continues after the last saved step; a different config is refused
with a readable diff unless ``force``; ``steps`` and ``device`` may change.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from econbench.runs.allo.posttrain.config import TrainConfig, config_features
from econbench.runs.allo.posttrain.ppo import ValueNet, advantages, fit_value
from econbench.runs.allo.posttrain.rollout import LMPolicy, collect
from econbench.runs.allo.posttrain.trainer import (
    SHUFFLE_SALT,
    QuietReporter,
    Reporter,
    attach_adapter,
    build_batch,
    load_for_training,
    ppo_update,
    step_row,
)
from econbench.runs.allo.train_checkpoint import (
    ADAPTER,
    LOG,
    append_row,
    check_resume,
    cut_log,
    load_tensors,
    save_checkpoint,
)
from econbench.runs.layout import read_jsonl
from econbench.runs.lock import RunLock


def train(
    config: TrainConfig,
    out: str | Path,
    *,
    force: bool = False,
    reporter: Reporter | None = None,
) -> list[dict[str, Any]]:
    """Train (or continue training) into ``out``; returns every ``train.jsonl`` row."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report = reporter or QuietReporter()
    with RunLock(out):
        done = check_resume(out, config, force)
        cut_log(out, done)
        if done >= config.steps:
            return read_jsonl(out / LOG)
        base, tokenizer = load_for_training(config)
        model = attach_adapter(base, config, out / ADAPTER if done else None)
        model.eval()  # no dropout: the update sees the policy that sampled
        device = next(model.parameters()).device
        policy = LMPolicy(model, tokenizer, temperature=config.temperature)
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.0)
        n_features = len(config_features(config))  # the critic's inputs
        value = ValueNet(n_features, scale=float(config.tasks))
        value_opt = torch.optim.Adam(value.parameters(), lr=config.value_lr)
        if done:
            tensors = load_tensors(out, done, device)
            optimizer.load_state_dict(tensors["optimizer"])
            value.load_state_dict(tensors["value"])
            value_opt.load_state_dict(tensors["value_optimizer"])
        for step in range(done, config.steps):
            started = time.perf_counter()
            seeds = config.step_seeds(step)
            report.start_step(step, len(seeds) * config.rollouts)
            episodes = collect(
                policy,
                seeds,
                config.rollouts,
                seed=config.seed,
                step=step,
                cost=config.cost,
                budget=config.budget,
                config=config.stream_config(),
                mode=config.rollout_mode,
                reply_tokens=config.reply_tokens,
                on_episode=report.episode_done,
                framing=config.framing(),
            )
            rolled = time.perf_counter()
            report.phase("update")
            batch = build_batch(episodes, config)
            adv = advantages(batch.returns, batch.features, config.baseline, value)
            rng = np.random.default_rng([config.seed, step, SHUFFLE_SALT])
            stats = ppo_update(model, policy, optimizer, batch, adv, config, rng)
            value_loss = (
                fit_value(value, value_opt, batch.features, batch.returns, config.value_iters)
                if config.baseline == "value"
                else None
            )
            row = step_row(step, seeds, batch, adv, stats)
            row.update(
                value_loss=value_loss,
                rollout_s=round(rolled - started, 3),
                update_s=round(time.perf_counter() - rolled, 3),
                seconds=round(time.perf_counter() - started, 3),
            )
            append_row(out, row)
            tensors = {
                "optimizer": optimizer.state_dict(),
                "value": value.state_dict(),
                "value_optimizer": value_opt.state_dict(),
            }
            save_checkpoint(out, model, tensors, config, step + 1)
            report.step_done(row)
        return read_jsonl(out / LOG)
