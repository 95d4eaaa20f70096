"""The per-decision PPO objective and the value baseline (docs/allobench.md §6, the paper's recipe).

For each decision ``i`` with sampled answer ``a_i``:

- ``ratio_i = π_θ(a_i) / π_old(a_i)``, ``π_old`` being the policy that sampled the episode. In
  forced choice ``π`` is the tempered two-way KEEP/PASS softmax; in free text ``log π(a_i)`` is
  the mean (the paper's choice) or the sum of the reply's token log-probabilities at the
  sampling temperature (``scoring``);
- policy loss = mean over decisions of ``−min(ratio·A, clip(ratio, 1 − ε, 1 + ε)·A)``;
- KL term = per decision, the mean over the positions trained (the answer's tokens) of the
  exact ``KL(π_θ ‖ π_ref)`` over the **whole vocabulary** of the next-token distribution
  (temperature 1), ``π_ref`` being the frozen model (the same weights with the LoRA adapter
  disabled); the loss adds ``β · KL``. The paper applies β = 0.05 to the same positions (every
  token of each assistant turn, averaged per turn) but to the one-sample estimate
  ``log π_θ(token) − log π_ref(token)`` of the sampled tokens; the exact sum over the vocabulary
  is never negative and has no sampling noise (the paper's estimate ran to −57 in its 3-epoch
  run). Over the whole vocabulary, not only KEEP and PASS, it also holds back the mass that
  leaks to other words, which the free-text evaluation reads;
- advantage ``A_i = G_i − b_i``: the Monte-Carlo return minus a baseline, either a small
  learned value of the decision's critic inputs (``value``, fitted by MSE on the returns after
  the advantages are taken, so a batch never judges itself) or the batch's mean return
  (``mean``). Advantages are not normalised: returns are in occurrences, as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

Baseline = Literal["value", "mean"]


def categorical_kl(logp: torch.Tensor, logp_ref: torch.Tensor) -> torch.Tensor:
    """Exact ``KL(p ‖ q)`` over the last dimension of log-probabilities (≥ 0, 0 iff equal).

    Used over the whole vocabulary at each trained position, and over the (PASS, KEEP) pair
    for the forced-choice diagnostic ``decision_kl``."""
    return (logp.exp() * (logp - logp_ref)).sum(dim=-1)


@dataclass
class LossParts:
    """The pieces of one PPO loss evaluation."""

    total: torch.Tensor
    policy: torch.Tensor
    kl: torch.Tensor
    clip_frac: torch.Tensor
    ratio: torch.Tensor


def ppo_loss(
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    kl: torch.Tensor,
    *,
    clip: float,
    kl_coef: float,
) -> LossParts:
    """Clipped surrogate plus the KL penalty, averaged over decisions.

    ``logp``: ``[n]`` log-probability of each decision's sampled answer under the policy being
    trained; ``logp_old``: the same under the sampling policy; ``advantages``: ``[n]``;
    ``kl``: ``[n]`` each decision's KL to the frozen model (``scoring.decision_terms``).
    """
    ratio = torch.exp(logp - logp_old)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages
    policy = -torch.minimum(unclipped, clipped).mean()
    kl_mean = kl.mean()
    clip_frac = ((ratio - 1.0).abs() > clip).float().mean()
    return LossParts(
        policy + kl_coef * kl_mean, policy, kl_mean, clip_frac.detach(), ratio.detach()
    )


class ValueNet(nn.Module):
    """A small MLP from decision features to the expected return (in units of ``scale``)."""

    def __init__(self, n_features: int, hidden: int = 64, scale: float = 60.0) -> None:
        super().__init__()
        self.scale = float(scale)
        self.net = nn.Sequential(
            nn.Linear(n_features, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.net(features).squeeze(-1) * self.scale


def fit_value(
    net: ValueNet,
    optimizer: torch.optim.Optimizer,
    features: torch.Tensor,
    returns: torch.Tensor,
    iters: int,
) -> float:
    """Full-batch MSE steps on (features, returns); returns the last loss (in return units²)."""
    loss = torch.tensor(0.0)
    for _ in range(iters):
        optimizer.zero_grad()
        loss = torch.mean((net(features) - returns) ** 2)
        loss.backward()
        optimizer.step()
    return float(loss.detach())


def advantages(
    returns: torch.Tensor,
    features: torch.Tensor,
    baseline: Baseline,
    net: ValueNet | None = None,
) -> torch.Tensor:
    """``returns − baseline``: the batch mean, or the value net's prediction from the critic
    inputs ``features`` (no gradient)."""
    if baseline == "mean":
        return returns - returns.mean()
    if net is None:
        raise ValueError("the value baseline needs a value net")
    with torch.no_grad():
        return returns - net(features)
