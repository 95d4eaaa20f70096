"""The training loop: per step, sample R0 episodes, then PPO over their decisions.

Per step ``s`` the batch is ``seeds_per_step`` training seeds × ``rollouts`` sampled episodes
each (the paper: 25 × 4), played in ``rollout_mode`` (``forced`` or ``free``, see ``rollout``).
The seeds of step ``s`` are the next ``seeds_per_step`` of the seed list (``--seeds``, cycled)
or, by default, ``9000 + s·seeds_per_step …`` (``TRAIN_SEED_START``; never the evaluation
seeds 2000–2023; ``--seeds N-`` starts the open range at N). Then:

1. advantages against the baseline (``ppo.advantages``), the value net reading each decision's
   critic inputs (``returns.critic_inputs``: with ``critic="privileged"`` the class's true rate
   too — the policy's prompts never carry it);
2. ``epochs`` passes over the batch (1 by default, as the paper ran: its 3-epoch run diverged),
   each split into ``minibatches`` optimizer steps (AdamW on the LoRA weights, gradient norm
   clipped to 1). Per episode, one forward pass with the adapter disabled (the frozen model)
   and one with it give every decision's terms (``scoring``); the loss is the PPO loss with the
   full-vocabulary KL, plus, in forced choice, ``spelling_coef`` times the negative
   log-likelihood of each answer's spelling (``actions``);
3. the value net is fitted to the batch's returns (``value`` baseline).

The job around these steps (its directory, lock, checkpoints and resume) is the run layer's
``econbench.runs.allo.training.train``: ``train.jsonl`` gets one row per step (mean reward,
first-sight rate, KEEP rate, KL, losses, unresolved share, seconds, …). No random state needs
saving: the LoRA initialisation comes from ``seed``, and
every action is sampled from a generator derived from (``seed``, step, stream seed, rollout).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from econbench.runs.allo.posttrain.config import TrainConfig
from econbench.runs.allo.posttrain.ppo import ppo_loss
from econbench.runs.allo.posttrain.returns import critic_inputs
from econbench.runs.allo.posttrain.rollout import EpisodeRollout, LMPolicy
from econbench.runs.allo.posttrain.scoring import action_logp, decision_terms, position_logits

MAX_GRAD_NORM = 1.0
SHUFFLE_SALT = 0x0B5E


class Reporter(Protocol):
    """Progress callbacks (the CLI shows them as a progress bar)."""

    def start_step(self, step: int, episodes: int) -> None: ...

    def episode_done(self, episode: EpisodeRollout) -> None: ...

    def phase(self, text: str) -> None: ...

    def step_done(self, row: dict[str, Any]) -> None: ...


class QuietReporter:
    def start_step(self, step: int, episodes: int) -> None:
        pass

    def episode_done(self, episode: EpisodeRollout) -> None:
        pass

    def phase(self, text: str) -> None:
        pass

    def step_done(self, row: dict[str, Any]) -> None:
        pass


@dataclass
class Batch:
    """One step's decisions as tensors, in episode order."""

    episodes: list[EpisodeRollout]
    logp_old: torch.Tensor  # the action's log-probability as ``config.free_logp`` reduces it
    action_tokens: torch.Tensor
    returns: torch.Tensor
    features: torch.Tensor  # the critic's inputs
    spans: list[tuple[int, int]]  # each episode's rows


def load_for_training(config: TrainConfig) -> tuple[Any, Any]:
    """A private (uncached) copy of the model for training, and its tokenizer."""
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    from econbench.agents.models.hf.loading import (
        check_model_folder,
        load_tokenizer,
        resolve_device,
        resolve_dtype,
    )
    from econbench.agents.models.registry import ModelConfigError

    folder = check_model_folder(config.model)
    device = resolve_device(config.device)
    dtype = resolve_dtype(config.dtype, device)
    tokenizer = load_tokenizer(folder)
    hf_logging.disable_progress_bar()
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        first = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise ModelConfigError(f"cannot load the model in {folder}: {first}") from None
    finally:
        hf_logging.enable_progress_bar()
    model.to(device)
    if config.gradient_checkpointing:
        # transformers 5 renamed it; older releases only have the first name.
        enable = getattr(model, "activation_checkpointing_enable", None)
        (enable or model.gradient_checkpointing_enable)()
        model.enable_input_require_grads()
    return model, tokenizer


def attach_adapter(model: Any, config: TrainConfig, adapter: Path | None) -> Any:
    """A fresh LoRA adapter (initialised from ``config.seed``) or the saved one, trainable."""
    from peft import LoraConfig, PeftModel, get_peft_model

    with warnings.catch_warnings():
        # peft asks transformers a deprecated question; nothing for a user to act on.
        warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
        if adapter is not None:
            return PeftModel.from_pretrained(model, adapter, is_trainable=True)
        torch.manual_seed(config.seed)
        lora = LoraConfig(
            r=config.lora_r,
            lora_alpha=config.lora_alpha,
            lora_dropout=0.0,
            target_modules=config.target_modules,
            task_type="CAUSAL_LM",
        )
        return get_peft_model(model, lora)


def build_batch(episodes: list[EpisodeRollout], config: TrainConfig) -> Batch:
    """Stack the decisions of ``episodes``."""
    spans, start = [], 0
    for ep in episodes:
        spans.append((start, start + ep.n_decisions))
        start += ep.n_decisions
    tokens = torch.tensor([n for ep in episodes for n in ep.action_tokens], dtype=torch.float32)
    logp_sum = torch.tensor([x for ep in episodes for x in ep.logp_old], dtype=torch.float32)
    return Batch(
        episodes=episodes,
        logp_old=action_logp(logp_sum, tokens, config.free_logp),
        action_tokens=tokens,
        returns=torch.tensor([o.ret for ep in episodes for o in ep.outcomes], dtype=torch.float32),
        features=torch.tensor(
            [critic_inputs(o, config.critic) for ep in episodes for o in ep.outcomes],
            dtype=torch.float32,
        ),
        spans=spans,
    )


def reference_logits(model: Any, episode: EpisodeRollout) -> torch.Tensor:
    """The frozen model's logits at the episode's trained positions: the adapter disabled, in
    eval mode, without gradients."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), model.disable_adapter():
            return position_logits(model, episode)
    finally:
        model.train(was_training)


def ppo_update(
    model: Any,
    policy: LMPolicy,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    adv: torch.Tensor,
    config: TrainConfig,
    rng: np.random.Generator,
) -> dict[str, float | None]:
    """``epochs`` passes of clipped PPO over the batch; returns the last pass's averages, with
    ``kl`` and ``decision_kl`` as the first pass measured them (with one minibatch: the policy
    that sampled the batch).

    The model stays in eval mode (no dropout: the ratio compares like with like), except
    with gradient checkpointing, which transformers applies only in train mode."""
    model.train(config.gradient_checkpointing)
    try:
        return _ppo_epochs(model, policy, optimizer, batch, adv, config, rng)
    finally:
        model.eval()


_SUMS = ("loss", "policy_loss", "kl_update", "clip_frac", "spelling_nll", "decision_kl")


def _ppo_epochs(
    model: Any,
    policy: LMPolicy,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    adv: torch.Tensor,
    config: TrainConfig,
    rng: np.random.Generator,
) -> dict[str, float | None]:
    params = [p for p in model.parameters() if p.requires_grad]
    n_eps = len(batch.episodes)
    groups = max(1, min(config.minibatches, n_eps))
    forced = config.rollout_mode == "forced"
    stats: dict[str, float | None] = {}
    first: dict[str, float | None] = {}
    for epoch in range(config.epochs):
        order = rng.permutation(n_eps)
        sums = dict.fromkeys(_SUMS, 0.0)
        spelled_prob, n_total = 0.0, 0
        for part in np.array_split(order, groups):
            n_dec = sum(batch.spans[i][1] - batch.spans[i][0] for i in part)
            optimizer.zero_grad()
            for i in part:
                ep = batch.episodes[i]
                lo, hi = batch.spans[i]
                ref = reference_logits(model, ep)
                terms = decision_terms(
                    position_logits(model, ep), ref, ep, policy.actions, policy.temperature
                )
                device = terms.logp.device
                tokens = batch.action_tokens[lo:hi].to(device)
                parts = ppo_loss(
                    action_logp(terms.logp, tokens, config.free_logp),
                    batch.logp_old[lo:hi].to(device),
                    adv[lo:hi].to(device),
                    terms.kl,
                    clip=config.clip,
                    kl_coef=config.kl,
                )
                total = parts.total
                spelling = -terms.spelling.mean()
                if forced:
                    total = total + config.spelling_coef * spelling
                weight = (hi - lo) / n_dec
                (total * weight).backward()
                n = hi - lo
                sums["loss"] += float(total.detach()) * n
                sums["spelling_nll"] += float(spelling.detach()) * n
                sums["policy_loss"] += float(parts.policy.detach()) * n
                sums["kl_update"] += float(parts.kl.detach()) * n
                sums["clip_frac"] += float(parts.clip_frac) * n
                if terms.decision_kl is not None:
                    sums["decision_kl"] += float(terms.decision_kl.detach().sum())
                spelled_prob += float(terms.spelling.detach().exp().sum())
                n_total += n
            torch.nn.utils.clip_grad_norm_(params, MAX_GRAD_NORM)
            optimizer.step()
        stats = {k: v / n_total for k, v in sums.items()}
        stats["spelling_prob"] = spelled_prob / n_total if forced else None
        if not forced:
            stats["spelling_nll"] = stats["decision_kl"] = None
        if epoch == 0:
            first = {"kl": stats["kl_update"], "decision_kl": stats["decision_kl"]}
    # Exact KLs are ≥ 0; clamp the float rounding of a near-zero value (step 1: no change yet).
    return {
        **stats,
        **{k: None if v is None else max(0.0, float(v)) for k, v in first.items()},
    }


def step_row(
    step: int,
    seeds: Sequence[int],
    batch: Batch,
    adv: torch.Tensor,
    stats: dict[str, float | None],
) -> dict[str, Any]:
    """The ``train.jsonl`` row of one step (before the timing fields)."""
    eps = batch.episodes
    outcomes = [o for ep in eps for o in ep.outcomes]
    keeps = [o for o in outcomes if o.keep]
    utility = [ep.result.utility for ep in eps if ep.result is not None]
    opt = sum(ep.result.opt for ep in eps if ep.result is not None)
    return {
        "step": step + 1,
        "seeds": [int(s) for s in seeds],
        "episodes": len(eps),
        "decisions": len(outcomes),
        "reward_mean": float(np.mean(utility)),
        "decision_reward_mean": float(np.mean([o.reward for o in outcomes])),
        "score": (sum(utility) / opt) if opt > 0 else None,
        "keep_rate": len(keeps) / len(outcomes),
        "first_sight_rate": (sum(o.first_sight for o in keeps) / len(keeps)) if keeps else None,
        "unresolved_rate": sum(not r for ep in eps for r in ep.resolved) / len(outcomes),
        "reply_tokens_mean": float(batch.action_tokens.mean()) if eps[0].mode == "free" else None,
        "advantage_abs_mean": float(adv.abs().mean()),
        **stats,
    }
