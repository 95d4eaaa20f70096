"""A person in a model's seat: human baselines for both benchmarks.

A person plays through the very interface a model has: each request the agent loop would
send a model (the conversation and the tools, with their schemas) is shown to the person by
a *seat* (a page in the browser, a terminal prompt), and what they do comes back as the
model's reply (a text and tool calls). So the clock, the daily action budget, wakes, the call
record, checkpoints and resume work exactly as for a model, and a person's run is a run like
any other, named ``human:<name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from econbench.agents.models.base import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
)
from econbench.agents.tools import ToolCall, ToolSpec

HUMAN_PREFIX = "human:"
"""Actors whose name starts with this are people; they are never pooled with a model or a
scripted policy."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

PERSON_CONTEXT_WINDOW = 10**9
"""A person has no context window: their conversation is never compacted (a compaction
would ask them to write the summary)."""


def human_actor(name: str) -> str:
    """``human:<name>``, for a name of letters, digits, ``.``, ``_`` and ``-`` (at most 64,
    starting with a letter or digit); ValueError otherwise."""
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"invalid player name {name!r}: use letters, digits, '.', '_' or '-' "
            "(at most 64, starting with a letter or digit)"
        )
    return HUMAN_PREFIX + name


def is_human(actor: object) -> bool:
    """Whether ``actor`` (a firm's or a cell's actor name) names a person."""
    return isinstance(actor, str) and actor.startswith(HUMAN_PREFIX)


@dataclass(frozen=True)
class Turn:
    """What the person is shown: exactly what a model would be sent."""

    messages: list[ChatMessage]
    tools: list[ToolSpec]
    config: GenerateConfig


class PlayerLeft(Exception):
    """The person left the seat (``quit``, the end of piped input, Ctrl-C): the run stops
    where it is, without a summary, and ``econbench resume`` continues it. Not a
    ``ModelError``: a call record keeps no failure for it, so a resume asks the person again
    instead of replaying their leaving."""


def person_reply(call: ToolCall | None, text: str = "") -> ModelOutput:
    """The model output that stands for a person's action: their one tool call (``None``: a
    reply without one), no tokens, and a cost of zero (a person is not billed)."""
    return ModelOutput(model="", text=text, tool_calls=[] if call is None else [call], cost_usd=0.0)


class Seat(Protocol):
    """Where the person sits: shows a turn and waits for their action."""

    async def ask(self, turn: Turn) -> ModelOutput:
        """The person's reply to ``turn``: a text and the tool calls they chose."""
        ...


class HumanProvider(ModelProvider):
    """``generate`` asks the person in ``seat``; named ``human:<name>``."""

    provider = "human"

    def __init__(self, name: str, seat: Seat) -> None:
        self.name = human_actor(name)
        self.context_window = PERSON_CONTEXT_WINDOW
        self.seat = seat

    def __repr__(self) -> str:
        return f"HumanProvider({self.name!r})"

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        output = await self.seat.ask(Turn(list(messages), list(tools), config))
        output.model = self.name
        return output
