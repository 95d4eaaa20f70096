"""The run loop: days, phases, agent clocks and the canonical apply order (spec §3).

Within a business day, the agents whose clocks stand at the earliest minute form a group:
they all decide on the same world state (a model provider may run them concurrently), then
their calls are applied one at a time in canonical firm order. Repeat until every agent is
parked or out of time, then run the evening. The loop is deterministic given the seed and
the decisions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from econbench.agents.policy import Feedback, Policy
from econbench.agents.tools import ToolCall
from econbench.coffee.config import FIRMS, RunConfig
from econbench.coffee.events import EventSink
from econbench.coffee.policies import make_policy
from econbench.coffee.world import World


@dataclass
class CoffeeRun:
    """One CoffeeBench run: a world and a policy per firm."""

    config: RunConfig
    sink: EventSink | None = None
    daily_sink: Callable[[dict[str, Any]], None] | None = None
    policies: dict[str, Policy] = field(default_factory=dict)
    world: World = field(init=False)

    def __post_init__(self) -> None:
        self.world = World(self.config, sink=self.sink)
        for firm_id in FIRMS:
            if firm_id not in self.policies:
                role = self.world.firm(firm_id).role
                self.policies[firm_id] = make_policy(self.config.policy_for(firm_id), role)
        for firm_id, policy in self.policies.items():
            kit = self.world.toolkit(firm_id)
            policy.start(firm_id, self.world.firm(firm_id).role, kit.specs())
        self._pending: dict[str, dict[str, Any] | None] = dict.fromkeys(FIRMS)

    @property
    def finished(self) -> bool:
        return self.world.state.ended or self.world.day >= self.config.days

    def run(self, on_day: Callable[[int], None] | None = None) -> World:
        while not self.finished:
            self.step_day()
            if on_day is not None:
                on_day(self.world.day)
        self.world.state.phase = "closed"
        self.world.emit("run_end", days=self.world.day, ended_early=self.world.state.ended)
        return self.world

    def step_day(self) -> None:
        world = self.world
        world.start_day()
        self._pending = dict.fromkeys(FIRMS)
        while True:
            group = self._next_group()
            if not group:
                break
            decisions = {firm_id: self._decide(firm_id) for firm_id in group}
            for firm_id in group:
                if not world.can_act(world.firm(firm_id)):
                    continue
                self._pending[firm_id] = world.act(firm_id, decisions[firm_id])
        for row in world.end_day():
            if self.daily_sink is not None:
                self.daily_sink(row)

    def _next_group(self) -> list[str]:
        world = self.world
        active = [f for f in world.state.firms.values() if world.can_act(f)]
        if not active:
            return []
        now = min(f.clock.minute for f in active)
        return [f.id for f in active if f.clock.minute == now]

    def _decide(self, firm_id: str) -> ToolCall | None:
        world = self.world
        if world.observation_due(firm_id):
            feedback = Feedback(observation=world.observe(firm_id))
        else:
            feedback = Feedback(result=self._pending.get(firm_id))
        return self.policies[firm_id].decide(feedback)
