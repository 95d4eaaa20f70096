"""Play R0 training episodes with a causal LM, in either rollout mode.

The episode is played by the benchmark's own runner
(``econbench.allo.episodes.runner.play_episode``) through the evaluation framing, with the model as
the actor, and the decisions are then taken from the episode's own records, as the evaluation reads
them:

- ``forced`` (:class:`DecisionActor`): per decision it renders the conversation with the
  model's chat template, appends ``DECISION:`` (see ``actions``), feeds only the new tokens
  (a KV cache holds the rest), samples KEEP or PASS from the tempered two-way softmax and
  answers with the canonical ``DECISION: KEEP|PASS``, which the parser always resolves;
- ``free`` (``freetext.FreeTextActor``): the model writes the whole reply, the R0 parser reads
  it, and an unreadable reply is an unresolved PASS.

Either way the rollout keeps the episode's token ids and, per decision, the span of its answer
tokens, so the update recomputes every decision's log-probabilities in one forward pass per
episode (``scoring``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from econbench.agents.models.base import ChatMessage
from econbench.allo.episodes.actors import EpisodeInfo, Input, Reply, UserText
from econbench.allo.episodes.runner import play_episode
from econbench.allo.framings.base import Framing
from econbench.allo.game import EpisodeResult
from econbench.allo.game.stream import StreamConfig, generate_stream, stream_config_for
from econbench.runs.allo.posttrain.actions import reply_text
from econbench.runs.allo.posttrain.config import RolloutMode, train_framing
from econbench.runs.allo.posttrain.freetext import FreeTextActor
from econbench.runs.allo.posttrain.policy import ConversationActor, LMPolicy, two_way_logprobs
from econbench.runs.allo.posttrain.returns import DecisionOutcome, score_decisions

__all__ = ["EpisodeRollout", "LMPolicy", "collect", "play_rollout", "two_way_logprobs"]

ROLLOUT_SALT = 0x5A3C
"""Salt of the random stream that samples training actions."""


@dataclass
class EpisodeRollout:
    """One sampled training episode: its tokens, its decisions and their scores."""

    seed: int
    rollout: int
    mode: RolloutMode
    ids: list[int]
    spans: list[tuple[int, int]]  # each decision's answer tokens in ``ids``, half-open
    keeps: list[bool]  # as the evaluation's parser read each answer
    resolved: list[bool]
    logp_old: list[float]  # each action's log-probability under the sampling policy (summed)
    logits: list[tuple[float, float]]  # forced: (PASS, KEEP) raw logits when sampled
    replies: list[str]
    outcomes: list[DecisionOutcome] = field(default_factory=list)
    result: EpisodeResult | None = None

    @property
    def n_decisions(self) -> int:
        return len(self.keeps)

    @property
    def positions(self) -> list[int]:
        """The index in ``ids`` whose logits predict each answer's first token."""
        return [start - 1 for start, _ in self.spans]

    @property
    def action_tokens(self) -> list[int]:
        """How many of each answer's tokens are the action: the decision token in forced
        choice (the rest is its spelling), the whole reply in free text."""
        return [1 if self.mode == "forced" else end - start for start, end in self.spans]

    @property
    def spelled(self) -> list[tuple[int, ...]]:
        """Forced choice: each answer's spelling tokens (the rest of the word, the end of the
        turn), as they follow the decision token in ``ids``."""
        return [
            tuple(self.ids[start + n : end])
            for (start, end), n in zip(self.spans, self.action_tokens, strict=True)
        ]


class DecisionActor(ConversationActor):
    """The model as a forced-choice R0 actor (see the module docstring)."""

    name = "posttrain"

    def __init__(self, policy: LMPolicy, rng: np.random.Generator) -> None:
        super().__init__(policy)
        self.rng = rng
        self.ids: list[int] = []
        self.pending: list[int] = []  # the last answer's tokens, fed with the next prompt
        self.cache: Any = None
        self.positions: list[int] = []
        self.keeps: list[bool] = []
        self.logits: list[tuple[float, float]] = []
        self.logp: list[float] = []
        self.spelled: list[tuple[int, ...]] = []

    def respond(self, inputs: Sequence[Input]) -> Reply:
        p = self.policy
        prompt, segment = self.new_prompt_tokens(
            [item.text for item in inputs if isinstance(item, UserText)]
        )
        if self.keeps:
            self._spelled(segment[:1])
        new_ids = [*self.pending, *segment, *p.actions.prefix]
        pair, self.cache = p.next_pair(new_ids, self.cache)
        self.ids += new_ids
        logp = two_way_logprobs(pair, p.temperature)
        keep = bool(self.rng.random() < math.exp(float(logp[1])))
        self.positions.append(len(self.ids) - 1)
        self.keeps.append(keep)
        self.logits.append((float(pair[0]), float(pair[1])))
        self.logp.append(float(logp[int(keep)]))
        answer = reply_text(keep)
        self.pending = list(p.actions.completion(keep))
        self.text = prompt + answer
        self.messages.append(ChatMessage("assistant", answer))
        return Reply(text=answer)

    def _spelled(self, after: list[int]) -> None:
        """Record the last answer's spelling: the rest of its word, and the end-of-turn token
        when that is what follows it."""
        actions = self.policy.actions
        tail = actions.completion(self.keeps[-1])[1:]
        ended = actions.end is not None and after[:1] == [actions.end]
        self.spelled.append((*tail, actions.end) if ended else tail)  # type: ignore[arg-type]

    def finish(self) -> list[int]:
        """Close the episode: the last answer's tokens (and the end of its turn) join
        ``ids``; returns the episode's token ids."""
        end = self.policy.actions.end
        closing = [end] if end is not None else []
        if self.keeps:
            self._spelled(closing)
        self.ids += [*self.pending, *closing]
        self.pending = []
        return self.ids


class _Factory:
    name = "posttrain"

    def __init__(self, actor: DecisionActor | FreeTextActor) -> None:
        self.actor = actor

    def __call__(self, episode: EpisodeInfo) -> DecisionActor | FreeTextActor:
        return self.actor


def rollout_rng(seed: int, step: int, stream_seed: int, rollout: int) -> np.random.Generator:
    """The action-sampling stream of one rollout: a function of its coordinates only, so a
    resumed run samples what an uninterrupted one would."""
    return np.random.default_rng([seed, step, stream_seed, rollout, ROLLOUT_SALT])


def play_rollout(
    policy: LMPolicy,
    stream_seed: int,
    rng: np.random.Generator,
    *,
    rollout: int = 0,
    cost: float = 0.0,
    budget: int = 3,
    framing: Framing | None = None,
    config: StreamConfig | None = None,
    mode: RolloutMode = "forced",
    reply_tokens: int = 512,
) -> EpisodeRollout:
    """Play the R0 episode of ``stream_seed`` once, sampling with ``rng``; ``reply_tokens``
    caps a free-text reply. ``framing`` defaults to the paper's rollout prompt
    (``config.train_framing``: the frontier urn, N announced, no charge stated at K = 0)."""
    framing = framing or train_framing()
    # As the runner draws it by default: the config's own budget (3), whatever B is.
    stream_config = stream_config_for(config or StreamConfig(), budget)
    stream = generate_stream(stream_seed, stream_config)
    actor: DecisionActor | FreeTextActor = (
        DecisionActor(policy, rng) if mode == "forced" else FreeTextActor(policy, rng, reply_tokens)
    )
    was_training = policy.model.training
    policy.model.eval()
    try:
        episode = play_episode(framing, _Factory(actor), stream, cost=cost, budget=budget)
    finally:
        policy.model.train(was_training)
    turns = [rec for rec in episode.record["turns"] if rec["kind"] == "decision"]
    keeps = [bool(rec["commit"]) for rec in turns]
    resolved = [bool(rec["resolved"]) for rec in turns]
    outcomes, result = score_decisions(stream, keeps, cost=cost, budget=budget)
    if result.utility != episode.result.utility:
        raise RuntimeError("the training replay disagrees with the played episode")
    if isinstance(actor, DecisionActor):
        if keeps != actor.keeps or not all(resolved):
            raise RuntimeError("the parser read a canonical answer otherwise than it was sampled")
        ids = actor.finish()
        spans = [
            (p + 1, p + 2 + len(spelled))
            for p, spelled in zip(actor.positions, actor.spelled, strict=True)
        ]
        logits, replies = actor.logits, [reply_text(k) for k in keeps]
    else:
        if len(actor.spans) != len(keeps):
            raise RuntimeError(
                "the runner asked a different number of decisions than were answered"
            )
        ids, spans, logits, replies = actor.finish(), actor.spans, [], actor.replies
    return EpisodeRollout(
        seed=stream_seed,
        rollout=rollout,
        mode=mode,
        ids=ids,
        spans=spans,
        keeps=keeps,
        resolved=resolved,
        logp_old=actor.logp,
        logits=logits,
        replies=replies,
        outcomes=outcomes,
        result=result,
    )


def collect(
    policy: LMPolicy,
    seeds: Sequence[int],
    rollouts: int,
    *,
    seed: int,
    step: int,
    cost: float = 0.0,
    budget: int = 3,
    config: StreamConfig | None = None,
    mode: RolloutMode = "forced",
    reply_tokens: int = 512,
    on_episode: Callable[[EpisodeRollout], None] | None = None,
    framing: Framing | None = None,
) -> list[EpisodeRollout]:
    """``rollouts`` sampled episodes of every seed in ``seeds`` (seed-major order), in
    ``framing`` (default: ``config.train_framing()``; a run passes ``TrainConfig.framing()``,
    its Run 1 / Run 2 choice)."""
    framing = framing or train_framing()
    out = []
    for stream_seed in seeds:
        for r in range(rollouts):
            ep = play_rollout(
                policy,
                stream_seed,
                rollout_rng(seed, step, stream_seed, r),
                rollout=r,
                cost=cost,
                budget=budget,
                framing=framing,
                config=config,
                mode=mode,
                reply_tokens=reply_tokens,
            )
            out.append(ep)
            if on_episode is not None:
                on_episode(ep)
    return out
