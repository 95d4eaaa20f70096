"""The per-decision PPO objective and the value baseline (spec §6, the paper's recipe).

For each decision ``i`` with sampled action ``a_i`` (0 = PASS, 1 = KEEP):

- ``ratio_i = π_θ(a_i) / π_old(a_i)`` where ``π`` is the tempered two-way softmax and
  ``π_old`` the policy that sampled the episode;
- policy loss = mean over decisions of ``−min(ratio·A, clip(ratio, 1 − ε, 1 + ε)·A)``;
- KL term = mean of the exact two-action ``KL(π_θ ‖ π_ref)`` at each decision, ``π_ref``
  being the frozen model (the same weights with the LoRA adapter disabled); the loss adds
  ``β · KL``. With two actions the KL is computed exactly, not estimated from samples;
- advantage ``A_i = G_i − b_i``: the Monte-Carlo return minus a baseline, either a small
  learned value of the decision's features (``value``, fitted by MSE on the returns after
  the advantages are taken, so a batch never judges itself) or the batch's mean return
  (``mean``). Advantages are not normalised: returns are in occurrences, as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

Baseline = Literal["value", "mean"]


def two_way_kl(logp: torch.Tensor, logp_ref: torch.Tensor) -> torch.Tensor:
    """Exact ``KL(p ‖ q)`` per row of ``[n, 2]`` log-probabilities (≥ 0, 0 iff equal)."""
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
    actions: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    logp_ref: torch.Tensor,
    *,
    clip: float,
    kl_coef: float,
) -> LossParts:
    """Clipped surrogate plus the KL penalty, averaged over decisions.

    ``logp``/``logp_ref``: ``[n, 2]`` log-probabilities (PASS, KEEP) under the policy being
    trained and the frozen one; ``actions``: ``[n]`` 0/1; ``logp_old``: ``[n]``
    log-probability of each action under the sampling policy; ``advantages``: ``[n]``.
    """
    taken = logp.gather(1, actions.long().unsqueeze(1)).squeeze(1)
    ratio = torch.exp(taken - logp_old)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages
    policy = -torch.minimum(unclipped, clipped).mean()
    kl = two_way_kl(logp, logp_ref).mean()
    clip_frac = ((ratio - 1.0).abs() > clip).float().mean()
    return LossParts(policy + kl_coef * kl, policy, kl, clip_frac.detach(), ratio.detach())


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
    """``returns − baseline``: the batch mean, or the value net's prediction (no gradient)."""
    if baseline == "mean":
        return returns - returns.mean()
    if net is None:
        raise ValueError("the value baseline needs a value net")
    with torch.no_grad():
        return returns - net(features)
