"""Shared helpers for CoffeeBench tests: small worlds and scripted stand-ins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from econbench.agents.policy import Decider, Feedback
from econbench.agents.tools import ToolCall
from econbench.coffee.config import EconomyConfig
from econbench.coffee.events import MemorySink
from econbench.coffee.world import World
from econbench.runs.coffee.config import RunConfig


def make_world(seed: int = 0, days: int = 90, **economy: Any) -> tuple[World, MemorySink]:
    sink = MemorySink()
    config = RunConfig(seed=seed, days=days, economy=EconomyConfig(**economy))
    world = World(config, sink=sink)
    world.start_day()
    return world, sink


@pytest.fixture
def world() -> World:
    return make_world()[0]


class FnPolicy(Decider):
    """A policy given as a function of (firm_id, feedback, step) -> ToolCall | None."""

    name = "fn"

    def __init__(self, fn: Callable[[str, Feedback, int], ToolCall | None]) -> None:
        self.fn = fn
        self.firm_id = ""
        self.step = 0
        self.observations: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []

    def start(self, actor_id: str, role: str, tools: list, **_: Any) -> None:
        self.firm_id = actor_id

    def decide(self, feedback: Feedback) -> ToolCall | None:
        if feedback.observation is not None:
            self.observations.append(feedback.observation)
        if feedback.result is not None:
            self.results.append(feedback.result)
        self.step += 1
        return self.fn(self.firm_id, feedback, self.step)
