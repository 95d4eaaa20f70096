"""The two answers of an R0 decision as tokens, and where the policy reads them.

A training decision is read right after the assistant prefix ``DECISION:`` (see the package
docstring). The two words are tokenized as they follow that prefix (`` KEEP``, `` PASS``);
tokens both spellings share are fed as part of the prompt, and the policy is the two-way
softmax over the logits of the first token where they differ. The remaining tokens of the
chosen word and the chat template's end-of-turn token are its *spelling*: not a choice, but
what makes the answer readable in free text (the parser wants the reply to end with the
decision), so the update also maximises their likelihood.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DECISION_PREFIX = "DECISION:"
KEEP_WORD = " KEEP"
PASS_WORD = " PASS"


@dataclass(frozen=True)
class ActionTokens:
    """Token ids of the decision prefix and of both answers for one tokenizer."""

    prefix: tuple[int, ...]  # "DECISION:" plus the tokens both answers share
    keep: int  # the first token where " KEEP" differs from " PASS"
    pass_: int
    keep_tail: tuple[int, ...]  # the rest of " KEEP" after ``keep``
    pass_tail: tuple[int, ...]
    end: int | None = None  # the token the chat template writes after an assistant turn

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, end: int | None = None) -> ActionTokens:
        """Tokenize the prefix and both words; refuse a tokenizer that cannot tell them apart.
        ``end`` is the chat template's end-of-turn token, when known."""
        prefix = list(tokenizer.encode(DECISION_PREFIX, add_special_tokens=False))
        keep = list(tokenizer.encode(KEEP_WORD, add_special_tokens=False))
        pass_ = list(tokenizer.encode(PASS_WORD, add_special_tokens=False))
        shared = 0
        while shared < min(len(keep), len(pass_)) and keep[shared] == pass_[shared]:
            shared += 1
        if shared == len(keep) or shared == len(pass_):
            raise ValueError("the tokenizer spells KEEP and PASS with the same tokens")
        return cls(
            prefix=(*prefix, *keep[:shared]),
            keep=keep[shared],
            pass_=pass_[shared],
            keep_tail=tuple(keep[shared + 1 :]),
            pass_tail=tuple(pass_[shared + 1 :]),
            end=end,
        )

    def completion(self, keep: bool) -> tuple[int, ...]:
        """The tokens that follow the prefix for the chosen answer."""
        return (self.keep, *self.keep_tail) if keep else (self.pass_, *self.pass_tail)

    def spelling(self, keep: bool) -> tuple[int, ...]:
        """What follows the decision token in a canonical answer: the rest of the word and the
        end of the turn. Not a choice, so training keeps it likely by maximum likelihood."""
        tail = self.keep_tail if keep else self.pass_tail
        return (*tail, self.end) if self.end is not None else tail

    @property
    def single_token(self) -> bool:
        """Whether both answers are one token after the shared prefix (the policy is then the
        exact sequence probability)."""
        return not self.keep_tail and not self.pass_tail


def reply_text(keep: bool) -> str:
    """The canonical assistant turn for a decision: ``DECISION: KEEP`` or ``DECISION: PASS``."""
    return DECISION_PREFIX + (KEEP_WORD if keep else PASS_WORD)
