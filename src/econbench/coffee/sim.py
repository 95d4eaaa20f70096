"""The run loop: days, phases, agent clocks and the canonical apply order (docs/coffeebench.md §3).

Within a business day, the agents whose clocks stand at the earliest minute form a group:
they all decide on the same world state (a model provider may run them concurrently), then
their calls are applied one at a time in canonical firm order. Repeat until every agent is
parked or out of time, then run the evening. The loop is deterministic given the seed and
the decisions.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import PydanticSerializationError

from econbench.agents.policy import Actor, Input, Observation, ToolResult
from econbench.agents.tools import ToolCall
from econbench.coffee.config import FIRMS, WorldConfig, is_model, role_of
from econbench.coffee.events import EventSink, RunEnd, event_from_payload
from econbench.coffee.policies import make_policy
from econbench.coffee.state import WorldState
from econbench.coffee.world import World

SCRIPTED_DAYS_PER_CHECKPOINT = 30
"""A run that no model plays is checkpointed at the end of every 30th day and of its last
day, not daily: a scripted day costs milliseconds to redo, while rewriting the whole state
every day was a third of such a run's CPU (every 30 days it is a twentieth)."""
MODEL_DAYS_PER_CHECKPOINT = 10
"""A run a model plays is checkpointed at the end of every 10th day and of its last day. Its
model calls in between are in its call record already, committed one at a time, and a
resume replays them from there (the run layer's ``runs/record_tail.py``) instead of asking
the model again: a checkpoint per model tick would only rewrite the world and the
conversations hundreds of times a run, and one per day was still a tenth of the harness's
CPU per model request (issue 27, ``benchmarks/model_path.py``); replaying ten days of
recorded calls costs a resume about a second."""


class CheckpointError(RuntimeError):
    """The run's state cannot be saved or restored."""


def scripted_policy(config: WorldConfig, firm_id: str) -> Actor:
    """The scripted policy the config names for ``firm_id``. A model-driven firm's policy
    is its caller's to build (the run layer: ``econbench.runs.coffee.agents``), since the
    environment knows nothing about models."""
    name = config.policy_for(firm_id)
    if is_model(name):
        raise ValueError(
            f"{firm_id} is played by the model {name!r}: pass its policy in ``policies`` "
            "(econbench.runs.coffee.agents.firm_policies builds it)"
        )
    return make_policy(name, role_of(firm_id), seed=config.seed, firm_id=firm_id)


@dataclass
class CoffeeRun:
    """One CoffeeBench run: a world and a policy per firm. Firms without a policy in
    ``policies`` get the scripted policy the config names."""

    config: WorldConfig
    sink: EventSink | None = None
    daily_sink: Callable[[dict[str, Any]], None] | None = None
    policies: dict[str, Actor] = field(default_factory=dict)
    on_checkpoint: Callable[[CoffeeRun], None] | None = None
    on_model_tick: Callable[[CoffeeRun], None] | None = None
    """Called after each tick that asked a model (the run layer updates its progress file:
    spend so far)."""
    world: World = field(init=False)

    def __post_init__(self) -> None:
        self.world = World(self.config, sink=self.sink)
        for firm_id in FIRMS:
            if firm_id not in self.policies:
                self.policies[firm_id] = scripted_policy(self.config, firm_id)
        for firm_id, policy in self.policies.items():
            bind = getattr(policy, "bind_events", None)
            if bind is not None:
                bind(self._emit)
            kit = self.world.toolkit(firm_id)
            policy.start(firm_id, self.world.firm(firm_id).role, kit.specs())
        self._pending: dict[str, dict[str, Any] | None] = dict.fromkeys(FIRMS)
        self._held: dict[str, list[tuple[str, dict[str, Any]]]] | None = None
        self._model_firms = frozenset(f for f, p in self.policies.items() if self._is_model(p))
        """The firms a model plays (the policies are fixed once the run is built)."""

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        """Agents' own events (model calls, retries, compactions). While a group decides
        concurrently they are held back and then logged in canonical firm order, each at its
        firm's minute, so the log never depends on which model answered first."""
        firm = data.get("firm")
        if self._held is not None and firm in self._held:
            self._held[firm].append((kind, data))
        else:
            self.world.log(event_from_payload(kind, data))

    def agent_stats(self) -> dict[str, dict[str, Any]]:
        """Model usage per firm (zeros for scripted firms)."""
        # The agent layer's accounting, imported when asked: the environment loads no model
        # code (``agents.stats`` imports only the usage record, not the ReAct loop).
        from econbench.agents.stats import AgentStats

        out = {}
        for firm_id, policy in self.policies.items():
            stats = getattr(policy, "stats", None)
            out[firm_id] = stats.to_dict() if stats is not None else AgentStats().to_dict()
        return out

    @property
    def finished(self) -> bool:
        return self.world.state.ended or self.world.day >= self.config.days

    @property
    def is_async(self) -> bool:
        """True when some policy decides asynchronously (a model call)."""
        return any(
            inspect.iscoroutinefunction(getattr(p, "arespond", None))
            for p in self.policies.values()
        )

    def run(self, on_day: Callable[[int], None] | None = None) -> World:
        if self.is_async:
            # Only a model-played run needs an event loop; the models' clients belong to it.
            from econbench.agents.event_loop import run_closing

            return run_closing(self.arun(on_day), self.policies.values())
        while not self.finished:
            self.step_day()
            if on_day is not None:
                on_day(self.world.day)
        return self._close()

    async def arun(self, on_day: Callable[[int], None] | None = None) -> World:
        while not self.finished:
            await self.astep_day()
            if on_day is not None:
                on_day(self.world.day)
        return self._close()

    def _close(self) -> World:
        self.world.state.phase = "closed"
        self.world.log(RunEnd(days=self.world.day, ended_early=self.world.state.ended))
        return self.world

    def step_day(self) -> None:
        """One day (or the rest of it, after a resume) with synchronous policies."""
        self._start_day()
        while group := self._next_group():
            self._apply(group, {firm_id: self._decide(firm_id) for firm_id in group})
        self._end_day()

    async def astep_day(self) -> None:
        """One day (or the rest of it); the agents of a group query their models
        concurrently."""
        import asyncio

        self._start_day()
        while group := self._next_group():
            self._held = {firm_id: [] for firm_id in group}
            try:
                calls = await asyncio.gather(*(self._adecide(firm_id) for firm_id in group))
            finally:
                held, self._held = self._held, None
                for firm_id in group:
                    minute = self.world.firm(firm_id).clock.minute
                    for kind, data in held[firm_id]:
                        self.world.log_at(minute, event_from_payload(kind, data))
            self._apply(group, dict(zip(group, calls, strict=True)))
        self._end_day()

    def _apply(self, group: list[str], decisions: dict[str, ToolCall | None]) -> None:
        """Apply a group's decisions one at a time, in canonical firm order."""
        world = self.world
        for firm_id in group:
            if world.can_act(world.firm(firm_id)):
                self._pending[firm_id] = world.act(firm_id, decisions[firm_id])
        if self.on_model_tick is not None and not self._model_firms.isdisjoint(group):
            self.on_model_tick(self)

    def _start_day(self) -> None:
        """The morning, unless a resumed run restarts in the middle of a business day."""
        if self.world.state.phase != "business":
            self.world.start_day()

    def _end_day(self) -> None:
        for row in self.world.end_day():
            if self.daily_sink is not None:
                self.daily_sink(row)
        every = MODEL_DAYS_PER_CHECKPOINT if self._model_firms else SCRIPTED_DAYS_PER_CHECKPOINT
        if self.finished or self.world.day % every == 0:
            self._checkpoint()

    def _checkpoint(self) -> None:
        if self.on_checkpoint is not None:
            self.on_checkpoint(self)

    @staticmethod
    def _is_model(policy: Actor) -> bool:
        """A model-driven actor answers asynchronously (``arespond``)."""
        return inspect.iscoroutinefunction(getattr(policy, "arespond", None))

    # ------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """The run between two ticks: world state, undelivered results and every policy's
        own state. Plain JSON data."""
        return {"world": self.world.state.model_dump(mode="json")} | (
            self.state_dict_without_world()
        )

    def state_dict_without_world(self) -> dict[str, Any]:
        policies: dict[str, Any] = {}
        for firm_id, policy in self.policies.items():
            save = getattr(policy, "state_dict", None)
            if not callable(save):
                raise CheckpointError(
                    f"the policy of {firm_id} ({getattr(policy, 'name', type(policy).__name__)})"
                    " cannot save its state, so this run cannot be checkpointed"
                )
            policies[firm_id] = save()
        return {
            "now": self.world.now,
            "pending": dict(self._pending),
            "policies": policies,
        }

    def state_json(self) -> str:
        """``state_dict`` as JSON text, the world written by pydantic itself."""
        rest = self.state_dict_without_world()
        try:
            world = self.world.state.model_dump_json()
        except PydanticSerializationError:  # a lone surrogate from a model: escape it
            world = json.dumps(self.world.state.model_dump(mode="json"), separators=(",", ":"))
        rest_json = json.dumps(rest, separators=(",", ":"))
        return "".join(('{"world":', world, ",", rest_json[1:]))  # one copy of the whole

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from ``state_dict``'s output (policies already started)."""
        self.world.restore(WorldState.model_validate(state["world"]), int(state["now"]))
        self._pending = dict.fromkeys(FIRMS) | dict(state["pending"])
        for firm_id, policy in self.policies.items():
            policy.load_state(state["policies"][firm_id])  # type: ignore[attr-defined]

    def _next_group(self) -> list[str]:
        world = self.world
        active = world.ready_firms()
        if not active:
            return []
        minutes = [f.clock.minute for f in active]  # each read once: state reads are slow
        now = min(minutes)
        return [f.id for f, minute in zip(active, minutes, strict=True) if minute == now]

    def _inputs(self, firm_id: str) -> list[Input]:
        """The result of the actor's previous call (only its first call is executed; the
        actor answers the rest itself), and its observation if it was woken."""
        result, self._pending[firm_id] = self._pending.get(firm_id), None
        inputs: list[Input] = [] if result is None else [ToolResult("", result)]
        if self.world.observation_due(firm_id):
            inputs.append(Observation(self.world.observe(firm_id)))
        return inputs

    def _decide(self, firm_id: str) -> ToolCall | None:
        """The first call of the actor's reply: the one a firm makes per turn."""
        return self.policies[firm_id].respond(self._inputs(firm_id)).first_call

    async def _adecide(self, firm_id: str) -> ToolCall | None:
        actor = self.policies[firm_id]
        inputs = self._inputs(firm_id)
        if firm_id in self._model_firms:
            return (await actor.arespond(inputs)).first_call  # type: ignore[attr-defined]
        return actor.respond(inputs).first_call
