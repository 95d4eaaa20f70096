"""The one interface through which every actor — scripted or model-driven — acts.

An actor is given its tools once (``start``), then asked for one tool call at a time
(``decide``) with what happened since its last call: a wake-up observation, or the result
of its previous call. It never touches environment state directly.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from econbench.agents.tools import ToolCall, ToolSpec


@dataclass
class Feedback:
    """What an actor learns before its next decision.

    ``observation`` is set when the actor is woken (a new day or an event); ``result`` is the
    result of its previous tool call (absent after a wake that followed a wait).
    """

    observation: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


@runtime_checkable
class Policy(Protocol):
    """Anything that can play an actor: it sees feedback and answers with a tool call."""

    name: str

    def start(self, actor_id: str, role: str, tools: list[ToolSpec]) -> None: ...

    def decide(self, feedback: Feedback) -> ToolCall | None:
        """The next tool call; ``None`` means the actor has nothing more to do now."""
        ...


Routine = Generator[ToolCall, dict[str, Any], None]


class ScriptedPolicy:
    """A policy written as a generator routine: ``result = yield ToolCall(...)``.

    Each wake starts a fresh routine from the observation; each yielded call is made with
    exactly the tools a model has, and its result is sent back into the routine. When the
    routine ends, the policy waits.

    A routine is a pure function of its observation and the results sent into it, so its
    state is saved as those (``state_dict``) and restored by re-driving a fresh routine
    through them (``load_state``): a checkpoint never has to pickle a generator.
    """

    name = "scripted"

    def __init__(self) -> None:
        self.actor_id = ""
        self.role = ""
        self._routine: Routine | None = None
        self._observation: dict[str, Any] | None = None
        self._results: list[dict[str, Any]] = []

    def start(self, actor_id: str, role: str, tools: list[ToolSpec]) -> None:
        self.actor_id, self.role = actor_id, role

    def routine(self, observation: dict[str, Any]) -> Routine:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def decide(self, feedback: Feedback) -> ToolCall | None:
        try:
            if feedback.observation is not None:
                self._routine = self.routine(feedback.observation)
                self._observation, self._results = feedback.observation, []
                return next(self._routine)
            if self._routine is None:
                return None
            result = feedback.result or {}
            self._results.append(result)
            return self._routine.send(result)
        except StopIteration:
            self._routine, self._observation, self._results = None, None, []
            return None

    def state_dict(self) -> dict[str, Any]:
        """The running routine as its observation and the results sent into it so far."""
        return {"observation": self._observation, "results": list(self._results)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Rebuild the running routine by replaying its inputs (its calls are discarded)."""
        self._routine, self._observation, self._results = None, None, []
        observation = state.get("observation")
        if observation is None:
            return
        self.decide(Feedback(observation=observation))
        for result in state.get("results", []):
            self.decide(Feedback(result=result))
