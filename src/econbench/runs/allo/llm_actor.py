"""An AlloBench actor played by a model, through the shared ReAct agent.

The runner's inputs (tool results, then the next observation) become chat messages; the
model's reply comes back as a ``Reply`` with its usage. Retries, per-provider concurrency
limits, compaction and cost come from ``econbench.agents``. The episode's true stream is
never shown to the model: the factory receives it from the runner and drops it.

Each reply's per-turn token limit is the framing's (512 / 1,500 / 2,500 / 4,096), unless the
model's settings give ``max_tokens`` explicitly (for reasoning models that need more room);
the settings' value then wins and the summary's config records it. Likewise the tool choice:
the framing's (``Framing.tool_choice``; the paper's ladder asks ``"auto"``) unless the settings
name one. Tool results reach the model as the framing renders them (``Framing.render_result``).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from econbench.agents.models.base import ModelProvider, ProviderWrap
from econbench.agents.models.registry import ModelSettings, build_provider, make_limiter
from econbench.agents.policy import Input, Reply
from econbench.agents.react import CompactionSettings, LLMAgent
from econbench.agents.tools import ToolSpec
from econbench.allo.episodes.actors import EpisodeInfo


class LLMActor:
    """One episode's conversation with a model: the shared agent on the run's event loop,
    with the events of each reply (retries, compactions) handed back in the ``Reply``."""

    def __init__(
        self, agent: LLMAgent, loop: asyncio.AbstractEventLoop, settings: ModelSettings
    ) -> None:
        self.agent = agent
        self.name = agent.name
        self.loop = loop
        self.settings = settings
        self.events: list[dict[str, Any]] = []
        self.max_tokens: int | None = None
        agent.bind_events(lambda kind, data: self.events.append({"type": kind, **data}))

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        limit = self.settings.max_tokens if self.settings.max_tokens is not None else max_tokens
        self.max_tokens = limit
        self.agent.start(actor_id, role, tools, system_prompt=system_prompt, max_tokens=limit)

    def limit_reply(self, tokens: int) -> None:
        """Ask for at most ``tokens`` in the next replies (never more than the start's limit):
        the paper's R3 shrinks a reply's limit to what is left of the session's cap."""
        base = self.max_tokens if self.max_tokens is not None else tokens
        self.agent.config = replace(self.agent.config, max_tokens=min(base, tokens))

    def respond(self, inputs: Sequence[Input]) -> Reply:
        """The agent's reply; the runner answers every call itself, so none is left open."""
        before = len(self.events)
        reply = self.loop.run_until_complete(self.agent.arespond(inputs))
        reply.events = [_kept(e) for e in self.events[before:] if _worth_keeping(e)]
        if self.name.startswith("anthropic/") and reply.usage:
            reply.usage["api_input_tokens"] = anthropic_input_tokens(reply.usage)
        return reply

    def retract_last(self, inputs: int) -> bool:
        """Forget the last reply and the last ``inputs`` user messages before it (the runner
        re-asks a reply without a tool call as the paper does: pruned from the context)."""
        return self.agent.retract_last(inputs)


def anthropic_input_tokens(usage: dict[str, Any]) -> int:
    """The ``input_tokens`` the Anthropic API reports: the prompt tokens neither read from nor
    written to its cache. econbench's ``input_tokens`` counts every prompt token, as OpenAI's
    ``prompt_tokens`` does; the paper's R3 cap adds up each API's own count
    (``api_input_tokens``, ``Framing.token_cap_counts``)."""
    total = int(usage.get("input_tokens") or 0)
    cached = int(usage.get("cached_input_tokens") or 0)
    written = int(usage.get("cache_write_tokens") or 0)
    return max(0, total - cached - written)


def _worth_keeping(event: dict[str, Any]) -> bool:
    """A model call is in the reply's record already, except the note that it was cut."""
    return event["type"] != "model_call" or "truncated" in event


def _kept(event: dict[str, Any]) -> dict[str, Any]:
    """The event as the reply's record keeps it: a cut model call as that note alone."""
    if event["type"] != "model_call":
        return event
    return {"type": "reply_truncated", **event["truncated"]}


def episode_agent(
    provider: ModelProvider, episode: EpisodeInfo, settings: ModelSettings, **options: Any
) -> LLMAgent:
    """The agent through which ``provider`` (a model's, or a person's seat:
    ``runs.play.allo_actor``) plays one episode: the framing's tool results, and its tool
    choice unless the settings name one; ``options`` are the agent's own (seed, retries)."""
    framing = episode.framing
    config = settings.generate_config()
    if framing.tool_choice is not None and settings.tool_choice is None:
        config = replace(config, tool_choice=framing.tool_choice)
    return LLMAgent(
        provider,
        system_prompt="",
        render_observation=str,
        render_result=framing.render_result,
        config=config,
        **options,
    )


class LLMActorFactory:
    """Makes a fresh model conversation per episode; one event loop and limiter per run."""

    def __init__(
        self,
        model: str,
        settings: ModelSettings | None = None,
        seed: int = 0,
        wrap: ProviderWrap | None = None,
    ) -> None:
        self.name = model
        self.settings = settings or ModelSettings()
        self.seed = seed
        self.wrap = wrap
        self.loop = asyncio.new_event_loop()
        self.limiter = make_limiter([model], {model: self.settings})
        self._providers: list[ModelProvider] = []

    def _close_providers(self) -> None:
        """Close the HTTP clients of earlier episodes on the loop that opened them (episodes
        are played one after another; a client left to the garbage collector would close on
        a loop that is gone)."""
        while self._providers:
            close = getattr(self._providers.pop(), "aclose", None)
            if callable(close) and not self.loop.is_closed():
                self.loop.run_until_complete(close())
                # A closed connection drops its socket in a callback of the next iteration.
                self.loop.run_until_complete(asyncio.sleep(0))

    def __call__(self, episode: EpisodeInfo) -> LLMActor:
        self._close_providers()
        provider: ModelProvider = build_provider(self.name, self.settings)
        if self.wrap is not None:
            provider = self.wrap(provider, f"seed-{episode.seed}")
        self._providers.append(provider)
        retries = self.settings.retry_policy()
        agent = episode_agent(
            provider,
            episode,
            self.settings,
            seed=zlib.crc32(f"{self.seed}:{episode.seed}".encode()),
            compaction=CompactionSettings(threshold=self.settings.compaction_threshold),
            limiter=self.limiter,
            max_attempts=retries.max_attempts,
            retry_options=retries.options(),
        )
        return LLMActor(agent, self.loop, self.settings)

    def close(self) -> None:
        self._close_providers()
        self.loop.close()
