"""A causal LM read as an R0 policy: the chat rendering, the answer tokens, one cached step.

Both rollout modes (``rollout.DecisionActor``, forced choice; ``freetext.FreeTextActor``, whole
replies) render the conversation exactly as the ``hf/PATH`` provider does in evaluation and
feed only the new tokens to the model, a KV cache holding the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import torch

from econbench.agents.models.base import ChatMessage
from econbench.agents.models.hf.provider import render_prompt, stop_token_ids
from econbench.runs.allo.posttrain.actions import ActionTokens, reply_text


def two_way_logprobs(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """``[..., 2]`` raw logits (PASS, KEEP) → log-probabilities of the tempered softmax."""
    return torch.log_softmax(logits / temperature, dim=-1)


class LMPolicy:
    """A causal LM sampled at one temperature, with its tokenizer's answer tokens."""

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

    @cached_property
    def stop_ids(self) -> frozenset[int]:
        """Tokens that end a free-text reply, as the evaluation provider stops on them."""
        return frozenset(stop_token_ids(self.model, self.tokenizer))

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
    def feed(self, new_ids: Sequence[int], cache: Any) -> tuple[torch.Tensor, Any]:
        """Feed ``new_ids`` after the cached tokens; return the raw next-token logits (float32,
        on the CPU) and the updated cache."""
        ids = torch.tensor([list(new_ids)], dtype=torch.long, device=self.device)
        out = self.model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        return out.logits[0, -1].float().cpu(), out.past_key_values

    def next_pair(self, new_ids: Sequence[int], cache: Any) -> tuple[torch.Tensor, Any]:
        """Like :meth:`feed`, but only the (PASS, KEEP) logits of the next token."""
        last, cache = self.feed(new_ids, cache)
        return torch.stack([last[self.actions.pass_], last[self.actions.keep]]), cache


class ConversationActor:
    """What both rollout actors share: the conversation so far, and the tokens a new prompt
    adds to it (the chat template must render the earlier turns unchanged, so only the new text
    is fed and the KV cache keeps the rest)."""

    def __init__(self, policy: LMPolicy) -> None:
        self.policy = policy
        self.messages: list[ChatMessage] = []
        self.text = ""  # the conversation text fed so far, up to the end of the last answer

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[Any],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        if tools:
            raise ValueError("post-training plays the R0 urn, which has no tools")
        self.messages = [ChatMessage("system", system_prompt or "")]

    def new_prompt_tokens(self, texts: Sequence[str]) -> tuple[str, list[int]]:
        """Append the user turns ``texts``; return the rendered prompt and the tokens it adds
        to the text fed so far."""
        self.messages += [ChatMessage("user", text) for text in texts]
        prompt = self.policy.render(self.messages)
        if not prompt.startswith(self.text):
            raise ValueError(
                "the chat template does not render the earlier replies unchanged; "
                "post-training needs a template that extends the conversation"
            )
        return prompt, self.policy.encode(prompt[len(self.text) :])
