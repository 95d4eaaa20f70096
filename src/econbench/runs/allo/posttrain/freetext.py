"""Free-text R0 rollouts: the model writes whole replies, as in the paper and in evaluation.

Per decision the actor renders the conversation with the chat template (as the ``hf/PATH``
provider does), feeds the new tokens, and samples a reply token by token from the full
tempered softmax (no top-k or top-p, so every sampled token's probability is exact for the
PPO ratio) until a stop token, ``reply_tokens`` tokens, or an exact loop (the evaluation
provider's ``loop_period`` cut). The reply's text is decoded and stripped as the provider does;
the runner reads it with the evaluation's R0 parser (``framings.urn.parse_decision``), and a
reply it cannot read is an unresolved PASS, as in the paper (``urn_session.run_episode``).

The episode's token ids keep each reply as *sampled*, so one forward pass over the episode
reproduces every reply token's log-probability (``scoring``); the evaluation re-tokenizes the
stored text, which gives the same tokens up to surrounding whitespace and tokenization ties.
The paper sampled through Ollama and re-tokenized the conversation for the update
(``train_lora.build_example``), without the system prompt it sampled with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from econbench.agents.models.base import ChatMessage
from econbench.agents.models.hf.provider import loop_period
from econbench.allo.episodes.actors import Input, Reply, UserText
from econbench.runs.allo.posttrain.policy import ConversationActor, LMPolicy


def sample_token(logits: torch.Tensor, temperature: float, rng: np.random.Generator) -> int:
    """One token from ``softmax(logits / temperature)`` by inverse CDF on ``rng`` (so a
    rollout's draws depend on its generator alone)."""
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    cdf = torch.cumsum(probs, dim=0)
    u = torch.tensor(rng.random() * float(cdf[-1]), dtype=torch.float64)
    return min(int(torch.searchsorted(cdf, u, right=True)), logits.numel() - 1)


class FreeTextActor(ConversationActor):
    """The model as an R0 actor that writes its own replies (see the module docstring)."""

    name = "posttrain-free"

    def __init__(self, policy: LMPolicy, rng: np.random.Generator, reply_tokens: int) -> None:
        super().__init__(policy)
        self.rng = rng
        self.reply_tokens = int(reply_tokens)
        self.ids: list[int] = []  # every token fed, then the sampled replies
        self.pending: list[int] = []  # the last sampled token, not fed yet
        self.ended_on: int | None = None  # the stop token that ended the last reply
        self.cache: Any = None
        self.spans: list[tuple[int, int]] = []  # each reply's tokens in ``ids``
        self.logp: list[float] = []  # each reply's summed token log-probability (sampling)
        self.replies: list[str] = []

    def respond(self, inputs: Sequence[Input]) -> Reply:
        p = self.policy
        prompt, segment = self.new_prompt_tokens(
            [item.text for item in inputs if isinstance(item, UserText)]
        )
        if self.ended_on is not None and segment[:1] == [self.ended_on]:
            segment = segment[1:]  # the template's end of turn is the token the model sampled
        new_ids = [*self.pending, *segment]
        self.ids += new_ids
        tokens, logp = self._sample(new_ids)
        start = len(self.ids)
        self.ids += tokens[:-1]
        self.pending = tokens[-1:]
        self.spans.append((start, start + len(tokens)))
        self.logp.append(logp)
        body = tokens[:-1] if tokens[-1] in p.stop_ids else tokens
        self.ended_on = tokens[-1] if tokens[-1] in p.stop_ids else None
        text = p.tokenizer.decode(body, skip_special_tokens=True).strip()
        self.replies.append(text)
        self.text = prompt + text
        self.messages.append(ChatMessage("assistant", text))
        return Reply(text=text)

    def _sample(self, new_ids: list[int]) -> tuple[list[int], float]:
        """Sample one reply after ``new_ids``; the cache ends up holding all but its last token."""
        p = self.policy
        logits, self.cache = p.feed(new_ids, self.cache)
        tokens: list[int] = []
        total = 0.0
        while True:
            token = sample_token(logits, p.temperature, self.rng)
            total += float(torch.log_softmax(logits / p.temperature, dim=-1)[token])
            tokens.append(token)
            if token in p.stop_ids or len(tokens) >= self.reply_tokens:
                break
            if loop_period(tokens) is not None:
                break
            logits, self.cache = p.feed([token], self.cache)
        return tokens, total

    def finish(self) -> list[int]:
        """Close the episode: the last sampled token joins ``ids``; returns the token ids."""
        self.ids += self.pending
        self.pending = []
        return self.ids
