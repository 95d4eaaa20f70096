"""One forward pass over an episode → each decision's log-probability, KL and spelling.

A decision's *answer* is the span of tokens the model produced for it (``EpisodeRollout.spans``);
its *trained positions* are the positions whose logits predict those tokens. From the logits at
those positions, under the policy and under the frozen model:

- the action's log-probability at the sampling temperature: in forced choice the two-way
  KEEP/PASS softmax at the decision token, in free text the sum of the reply tokens'
  log-probabilities (:func:`action_logp` divides by the reply's length for the paper's mean);
- the KL to the frozen model: the exact KL over the whole vocabulary of the next-token
  distributions (temperature 1, the model's own), averaged over the decision's trained
  positions — in forced choice the decision token and its spelling, in free text every reply
  token (the paper's positions: each assistant turn's tokens, averaged per turn);
- forced choice only: the log-probability of the spelling (the rest of the word and the end of
  the turn) at temperature 1, the target of the spelling term, and the two-way KL of the
  decision (a diagnostic: how far the KEEP/PASS choice itself moved).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from econbench.runs.allo.posttrain.actions import ActionTokens
from econbench.runs.allo.posttrain.config import FreeLogp
from econbench.runs.allo.posttrain.policy import two_way_logprobs
from econbench.runs.allo.posttrain.ppo import categorical_kl
from econbench.runs.allo.posttrain.rollout import EpisodeRollout


def trained_positions(episode: EpisodeRollout) -> list[int]:
    """Every position whose logits predict an answer token, decision by decision."""
    return [p for start, end in episode.spans for p in range(start - 1, end - 1)]


def position_logits(model: Any, episode: EpisodeRollout) -> torch.Tensor:
    """``[positions, vocab]`` float32 logits at :func:`trained_positions`, one forward pass
    (gradients flow when called outside ``no_grad``)."""
    device = next(model.parameters()).device
    ids = torch.tensor([episode.ids], dtype=torch.long, device=device)
    keep = torch.tensor(trained_positions(episode), dtype=torch.long, device=device)
    return model(input_ids=ids, use_cache=False, logits_to_keep=keep).logits[0].float()


def _first_rows(episode: EpisodeRollout) -> list[int]:
    """The row of each decision's first trained position in :func:`position_logits`."""
    rows, at = [], 0
    for start, end in episode.spans:
        rows.append(at)
        at += end - start
    return rows


def _owners(episode: EpisodeRollout, device: torch.device) -> torch.Tensor:
    """The decision each trained position belongs to."""
    sizes = torch.tensor([end - start for start, end in episode.spans], device=device)
    return torch.repeat_interleave(torch.arange(len(episode.spans), device=device), sizes)


def per_decision_kl(
    logits: torch.Tensor, ref_logits: torch.Tensor, episode: EpisodeRollout
) -> torch.Tensor:
    """``[n]``: each decision's mean, over its trained positions, of the full-vocabulary
    ``KL(softmax(logits) ‖ softmax(ref_logits))``."""
    kl = categorical_kl(torch.log_softmax(logits, dim=-1), torch.log_softmax(ref_logits, dim=-1))
    owners = _owners(episode, kl.device)
    sums = kl.new_zeros(episode.n_decisions).index_add(0, owners, kl)
    counts = torch.bincount(owners, minlength=episode.n_decisions).to(kl.dtype)
    return sums / counts


@dataclass
class DecisionTerms:
    """Per-decision terms of one episode under the policy (``[n]`` tensors)."""

    logp: torch.Tensor  # the action's log-probability, summed over its tokens
    kl: torch.Tensor  # mean full-vocabulary KL to the frozen model
    spelling: torch.Tensor  # forced: the spelling's log-probability; free: 0
    decision_kl: torch.Tensor | None  # forced: the two-way KEEP/PASS KL; free: None


def decision_terms(
    logits: torch.Tensor,
    ref_logits: torch.Tensor,
    episode: EpisodeRollout,
    actions: ActionTokens,
    temperature: float,
) -> DecisionTerms:
    """The terms of :class:`DecisionTerms` from :func:`position_logits` under the policy
    (``logits``) and the frozen model (``ref_logits``)."""
    device = logits.device
    kl = per_decision_kl(logits, ref_logits.to(device), episode)
    if episode.mode == "forced":
        pick = [actions.pass_, actions.keep]
        first = torch.tensor(_first_rows(episode), dtype=torch.long, device=device)
        pair = two_way_logprobs(logits[first][:, pick], temperature)
        ref_pair = two_way_logprobs(ref_logits.to(device)[first][:, pick], temperature)
        chosen = torch.tensor(episode.keeps, dtype=torch.long, device=device)
        logp = pair.gather(1, chosen.unsqueeze(1)).squeeze(1)
        spelling = _token_logp_sums(logits, episode, skip_first=True, temperature=1.0)
        return DecisionTerms(logp, kl, spelling, categorical_kl(pair, ref_pair))
    logp = _token_logp_sums(logits, episode, skip_first=False, temperature=temperature)
    return DecisionTerms(logp, kl, torch.zeros_like(logp), None)


def _token_logp_sums(
    logits: torch.Tensor, episode: EpisodeRollout, *, skip_first: bool, temperature: float
) -> torch.Tensor:
    """Per decision, the summed log-probability of its answer tokens at ``temperature``
    (without the first, the decision token, when ``skip_first``)."""
    device = logits.device
    targets = torch.tensor(
        [episode.ids[p + 1] for p in trained_positions(episode)], dtype=torch.long, device=device
    )
    token_logp = torch.log_softmax(logits / temperature, dim=-1)
    token_logp = token_logp.gather(1, targets.unsqueeze(1)).squeeze(1)
    owners = _owners(episode, device)
    if skip_first:
        first = torch.zeros(len(targets), dtype=torch.bool, device=device)
        first[torch.tensor(_first_rows(episode), dtype=torch.long, device=device)] = True
        token_logp = token_logp.masked_fill(first, 0.0)
    return token_logp.new_zeros(episode.n_decisions).index_add(0, owners, token_logp)


def action_logp(
    logp_sum: torch.Tensor, action_tokens: torch.Tensor, free_logp: FreeLogp
) -> torch.Tensor:
    """The log-probability the PPO ratio uses: the sum over the action's tokens, or its mean
    (the paper's, so a long reply's gradient is not larger for its length). A forced choice
    is one token, for which both are the same."""
    return logp_sum / action_tokens if free_logp == "mean" else logp_sum
