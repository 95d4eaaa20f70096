"""A person's AlloBench episodes: the model's agent, with a person in the model's seat.

Each episode gets the same conversation a model's cell gives its model
(``econbench.runs.allo.llm_actor``: the shared ``LLMAgent``, the framing's tool results and
per-reply token limit), but its provider is a ``HumanProvider``: every request is shown to the
person in their seat and their reply is the model's output. The cell's recording wrap records
each reply as a model call the moment it is given, so a killed game loses nothing: the resume
serves the recorded replies again and asks the person from the first move not yet made.
"""

from __future__ import annotations

import asyncio
import zlib

from econbench.agents.models.base import ModelProvider, ProviderWrap
from econbench.agents.models.human import HUMAN_PREFIX, HumanProvider, Seat, is_human
from econbench.agents.models.settings import ModelSettings
from econbench.agents.react import CompactionSettings
from econbench.allo.episodes.actors import EpisodeInfo
from econbench.runs.allo.llm_actor import LLMActor, episode_agent


class HumanActorFactory:
    """Makes one episode's conversation with the person in ``seat``, as a model's factory
    makes one with its model (one event loop for the cell)."""

    def __init__(self, player: str, seat: Seat | None, wrap: ProviderWrap | None = None) -> None:
        if not is_human(player):
            raise ValueError(f"{player!r} does not name a person (human:<name>)")
        if seat is None:
            raise ValueError(
                f"{player} is a person: they play through `econbench allo play --name "
                f"{player.removeprefix(HUMAN_PREFIX)}` (or `econbench resume` on their cell), "
                "not as a model or a policy"
            )
        self.name = player
        self.seat = seat
        self.wrap = wrap
        self._settings = ModelSettings()
        """A model's defaults, so the request config the person is shown is a model's (not
        ``settings``: the cell's config records no model settings for a person)."""
        self.loop = asyncio.new_event_loop()

    def __call__(self, episode: EpisodeInfo) -> LLMActor:
        provider: ModelProvider = HumanProvider(self.name.removeprefix(HUMAN_PREFIX), self.seat)
        if self.wrap is not None:
            provider = self.wrap(provider, f"seed-{episode.seed}")
        agent = episode_agent(
            provider,
            episode,
            self._settings,
            compaction=CompactionSettings(),  # a person's window is never reached
            seed=zlib.crc32(f"{self.name}:{episode.seed}".encode()),
            max_attempts=1,  # a person is asked once; leaving the seat is not a failure
        )
        return LLMActor(agent, self.loop, self._settings)

    def close(self) -> None:
        """Close the cell's event loop."""
        if not self.loop.is_closed():
            self.loop.close()
