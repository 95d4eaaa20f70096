"""An AlloBench actor played by a model, through the shared ReAct agent.

The runner's inputs (tool results, then the next observation) become chat messages; the
model's reply comes back as a ``Reply`` with its usage. Retries, per-provider concurrency
limits, compaction and cost come from ``econbench.agents``. The episode's true stream is
never shown to the model: the factory receives it from the runner and drops it.

Each reply's per-turn token limit is the framing's (512 / 1,500 / 2,500 / 4,096), unless the
model's settings give ``max_tokens`` explicitly (for reasoning models that need more room);
the settings' value then wins and the summary's config records it.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from econbench.agents.models.base import ChatMessage, ModelProvider, ProviderWrap
from econbench.agents.models.registry import ModelSettings, build_provider, make_limiter
from econbench.agents.react import CompactionSettings, LLMAgent
from econbench.agents.tools import ToolSpec
from econbench.allo.actors import EpisodeInfo, Input, Reply, ToolResult, UserText


class LLMActor:
    """One episode's conversation with a model."""

    def __init__(
        self, agent: LLMAgent, loop: asyncio.AbstractEventLoop, settings: ModelSettings
    ) -> None:
        self.agent = agent
        self.name = agent.name
        self.loop = loop
        self.settings = settings
        self.events: list[dict[str, Any]] = []
        agent.bind_events(lambda kind, data: self.events.append({"type": kind, **data}))

    def start(self, system_prompt: str, tools: list[ToolSpec], max_tokens: int) -> None:
        agent = self.agent
        agent.system_prompt = system_prompt
        limit = self.settings.max_tokens if self.settings.max_tokens is not None else max_tokens
        agent.config = replace(agent.config, max_tokens=limit)
        agent.start("allo", "allo", tools)

    def respond(self, inputs: Sequence[Input]) -> Reply:
        messages = []
        for item in inputs:
            if isinstance(item, ToolResult):
                messages.append(
                    ChatMessage("tool", item.content(), tool_call_id=item.call_id, name=item.name)
                )
            elif isinstance(item, UserText):
                messages.append(ChatMessage("user", item.text))
        self.agent._open_calls = []  # the runner answers every call itself, in order
        before = len(self.events)
        output = self.loop.run_until_complete(self.agent.advance(messages))
        usage: dict[str, Any] = {
            "input_tokens": output.usage.input_tokens,
            "cached_input_tokens": output.usage.cached_input_tokens,
            "cache_write_tokens": output.usage.cache_write_tokens,
            "output_tokens": output.usage.output_tokens,
            "reasoning_tokens": output.usage.reasoning_tokens,
        }
        if output.cost_usd is not None:
            usage["cost_usd"] = output.cost_usd
        if output.cache_hit:
            usage["cache_hit"] = True  # served by the response cache: no tokens were paid
        retries = [e for e in self.events[before:] if e["type"] != "model_call"]
        return Reply(
            text=output.text, tool_calls=list(output.tool_calls), usage=usage, events=retries
        )

    def retract_last(self, inputs: int) -> bool:
        """Forget the last reply and the last ``inputs`` user messages before it (the runner
        re-asks a reply without a tool call as the paper does: pruned from the context)."""
        messages = self.agent.messages
        if not messages or messages[-1].role != "assistant" or messages[-1].tool_calls:
            return False
        messages.pop()
        for _ in range(inputs):
            if messages and messages[-1].role == "user":
                messages.pop()
        return True


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

    def __call__(self, episode: EpisodeInfo) -> LLMActor:
        provider: ModelProvider = build_provider(self.name, self.settings)
        if self.wrap is not None:
            provider = self.wrap(provider, f"seed-{episode.seed}")
        agent = LLMAgent(
            provider,
            system_prompt="",
            render_observation=str,
            config=self.settings.generate_config(),
            compaction=CompactionSettings(threshold=self.settings.compaction_threshold),
            limiter=self.limiter,
            seed=zlib.crc32(f"{self.seed}:{episode.seed}".encode()),
        )
        return LLMActor(agent, self.loop, self.settings)

    def close(self) -> None:
        self.loop.close()
