"""Play R0 training episodes with a causal LM as a two-way KEEP/PASS policy.

The episode is played by the benchmark's own runner (``econbench.allo.runner.play_episode``)
through the evaluation framing, with :class:`DecisionActor` as the actor: per decision it
renders the conversation with the model's chat template, appends ``DECISION:`` (see
``actions``), feeds only the new tokens to the model (a KV cache holds the rest), samples KEEP
or PASS from the tempered two-way softmax and answers with the canonical
``DECISION: KEEP|PASS`` (which the framing's parser reads as a resolved decision). It keeps
the episode's token ids and the position of every decision, so the update can recompute all
of an episode's decision log-probabilities in one forward pass (:func:`decision_logits`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from econbench.agents.models.base import ChatMessage
from econbench.allo.actors import EpisodeInfo, Input, Reply, UserText
from econbench.allo.framings import get_framing
from econbench.allo.framings.base import Framing
from econbench.allo.game import EpisodeResult
from econbench.allo.runner import play_episode
from econbench.allo.stream import StreamConfig, generate_stream, stream_config_for
from econbench.hf.posttrain.actions import ActionTokens, reply_text
from econbench.hf.posttrain.returns import DecisionOutcome, score_decisions
from econbench.hf.provider import render_prompt

ROLLOUT_SALT = 0x5A3C
"""Salt of the random stream that samples training actions."""


def two_way_logprobs(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """``[..., 2]`` raw logits (PASS, KEEP) → log-probabilities of the tempered softmax."""
    return torch.log_softmax(logits / temperature, dim=-1)


class LMPolicy:
    """A causal LM read as a KEEP/PASS policy at one temperature."""

    def __init__(self, model: Any, tokenizer: Any, *, temperature: float) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.temperature = float(temperature)
        self.actions = ActionTokens.from_tokenizer(tokenizer, end=self._end_token())

    def _end_token(self) -> int | None:
        """The first token the template writes after an assistant turn (``<|im_end|>``)."""
        probe = [ChatMessage("system", "s"), ChatMessage("user", "u")]
        answer = reply_text(True)
        prompt = self.render(probe)
        after = self.render([*probe, ChatMessage("assistant", answer), ChatMessage("user", "u")])
        if not after.startswith(prompt + answer):
            return None
        ids = self.encode(after[len(prompt) + len(answer) :])
        return ids[0] if ids else None

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def render(self, messages: list[ChatMessage]) -> str:
        """The prompt text of ``messages`` with the assistant's generation prompt, rendered
        exactly as the ``hf/PATH`` provider renders it in evaluation."""
        return render_prompt(messages, [], self.tokenizer)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    @torch.no_grad()
    def next_pair(self, new_ids: Sequence[int], cache: Any) -> tuple[torch.Tensor, Any]:
        """Feed ``new_ids`` after the cached tokens; return the (PASS, KEEP) logits of the next
        token and the updated cache."""
        ids = torch.tensor([list(new_ids)], dtype=torch.long, device=self.device)
        out = self.model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        last = out.logits[0, -1].float()
        pair = torch.stack([last[self.actions.pass_], last[self.actions.keep]])
        return pair.cpu(), out.past_key_values


@dataclass
class EpisodeRollout:
    """One sampled training episode: its tokens, its decisions and their scores."""

    seed: int
    rollout: int
    ids: list[int]
    positions: list[int]  # index in ``ids`` whose logits decide
    keeps: list[bool]
    logits: list[tuple[float, float]]  # (PASS, KEEP) raw logits under the sampling policy
    logp_old: list[float]  # log-probability of the sampled action under the sampling policy
    spelled: list[tuple[int, ...]]  # each answer's spelling tokens, as they follow in ``ids``
    outcomes: list[DecisionOutcome] = field(default_factory=list)
    result: EpisodeResult | None = None

    @property
    def n_decisions(self) -> int:
        return len(self.keeps)


class DecisionActor:
    """The model as an AlloBench actor for R0 training (see the module docstring)."""

    name = "posttrain"

    def __init__(self, policy: LMPolicy, rng: np.random.Generator) -> None:
        self.policy = policy
        self.rng = rng
        self.messages: list[ChatMessage] = []
        self.text = ""  # the conversation text fed so far, up to the last answer word
        self.ids: list[int] = []
        self.pending: list[int] = []  # the last answer's tokens, fed with the next prompt
        self.cache: Any = None
        self.positions: list[int] = []
        self.keeps: list[bool] = []
        self.logits: list[tuple[float, float]] = []
        self.logp: list[float] = []
        self.spelled: list[tuple[int, ...]] = []

    def start(self, system_prompt: str, tools: list[Any], max_tokens: int) -> None:
        if tools:
            raise ValueError("post-training plays the R0 urn, which has no tools")
        self.messages = [ChatMessage("system", system_prompt)]

    def respond(self, inputs: Sequence[Input]) -> Reply:
        for item in inputs:
            if isinstance(item, UserText):
                self.messages.append(ChatMessage("user", item.text))
        p = self.policy
        prompt = p.render(self.messages)
        if not prompt.startswith(self.text):
            raise ValueError(
                "the chat template does not extend the conversation it rendered before; "
                "post-training needs a template that renders earlier turns unchanged"
            )
        segment = p.encode(prompt[len(self.text) :])
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

    def __init__(self, actor: DecisionActor) -> None:
        self.actor = actor

    def __call__(self, episode: EpisodeInfo) -> DecisionActor:
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
) -> EpisodeRollout:
    """Play the R0 episode of ``stream_seed`` once, sampling actions with ``rng``."""
    framing = framing or get_framing("r0")
    # As the runner draws it by default: the config's own budget (3), whatever B is.
    stream_config = stream_config_for(config or StreamConfig(), budget)
    stream = generate_stream(stream_seed, stream_config)
    actor = DecisionActor(policy, rng)
    was_training = policy.model.training
    policy.model.eval()
    try:
        episode = play_episode(framing, _Factory(actor), stream, cost=cost, budget=budget)
    finally:
        policy.model.train(was_training)
    outcomes, result = score_decisions(stream, actor.keeps, cost=cost, budget=budget)
    if result.utility != episode.result.utility or episode.unresolved:
        raise RuntimeError("the training replay disagrees with the played episode")
    return EpisodeRollout(
        seed=stream_seed,
        rollout=rollout,
        ids=actor.finish(),
        positions=actor.positions,
        keeps=actor.keeps,
        logits=actor.logits,
        logp_old=actor.logp,
        spelled=actor.spelled,
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
    on_episode: Callable[[EpisodeRollout], None] | None = None,
) -> list[EpisodeRollout]:
    """``rollouts`` sampled episodes of every seed in ``seeds`` (seed-major order)."""
    framing = get_framing("r0")
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
            )
            out.append(ep)
            if on_episode is not None:
                on_episode(ep)
    return out


def decision_logits(
    model: Any, episode: EpisodeRollout, actions: ActionTokens
) -> tuple[torch.Tensor, torch.Tensor]:
    """One forward pass over an episode: the (PASS, KEEP) logits at every decision
    (``[n, 2]``) and the log-probability of each answer's spelling (``[n]``: the rest of the
    word and the end of the turn; 0 when there is none). Gradients flow into both when called
    outside ``no_grad``."""
    device = next(model.parameters()).device
    rows = set(episode.positions)
    for p, spelled in zip(episode.positions, episode.spelled, strict=True):
        rows.update(p + 1 + j for j in range(len(spelled)))
    keep_at = sorted(rows)
    index = {p: i for i, p in enumerate(keep_at)}
    ids = torch.tensor([episode.ids], dtype=torch.long, device=device)
    kept = torch.tensor(keep_at, dtype=torch.long, device=device)
    logits = model(input_ids=ids, use_cache=False, logits_to_keep=kept).logits[0].float()
    at = torch.tensor([index[p] for p in episode.positions], device=device)
    pair = logits[at][:, [actions.pass_, actions.keep]]
    spell_logp = []
    for p, spelled in zip(episode.positions, episode.spelled, strict=True):
        terms = [
            torch.log_softmax(logits[index[p + 1 + j]], dim=-1)[tok]
            for j, tok in enumerate(spelled)
        ]
        spell_logp.append(torch.stack(terms).sum() if terms else logits.new_zeros(()))
    return pair, torch.stack(spell_logp)
