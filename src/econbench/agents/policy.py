"""The one interface through which every actor — scripted or model-driven — acts, in both
benchmarks.

An :class:`Actor` is given its tools once (``start``), then asked for one reply at a time
(``respond``) with what happened since its last reply: a :class:`ToolResult` for the calls of
that reply the caller answers (in call order), then possibly the next observation — an
:class:`Observation` (structured data the actor renders itself, CoffeeBench) or a
:class:`UserText` (a text shown as it is, AlloBench). The :class:`Reply` carries free text,
tool calls, token usage and the events of producing it. An actor never touches environment
state directly.

How a caller answers tool calls: it sends a ``ToolResult`` per call it answers, with the
call's ``call_id`` (``None`` means "the call I executed": the reply's first). A call it does
not answer is answered by the actor itself as not executed, so a caller that runs only the
first call (CoffeeBench) may send just that result, and one that answers every call
(AlloBench, with its own refusals) sends them all.

Actors written as "one tool call per wake" (the scripted CoffeeBench firms) implement
``decide(feedback) -> ToolCall | None`` instead; :class:`Decider` turns that into the
protocol.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from econbench.agents.tools import ToolCall, ToolSpec


@dataclass(frozen=True)
class UserText:
    """An observation as text, shown to a model as it is."""

    text: str


@dataclass(frozen=True)
class Observation:
    """An observation as data (a wake-up view); a model actor renders it, with ``notes``
    appended, into its prompt."""

    data: dict[str, Any]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    """The result of one tool call, in reply to ``call_id`` (``None``: the executed call)."""

    name: str
    result: dict[str, Any]
    call_id: str | None = None


Input = UserText | Observation | ToolResult


@dataclass
class Reply:
    """An actor's answer: text, tool calls (the caller decides which it executes), usage."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    """What happened while producing the reply (model retries, compactions), for the record."""

    @property
    def first_call(self) -> ToolCall | None:
        """The call a one-call-per-turn caller executes; ``None`` means "wait"."""
        return self.tool_calls[0] if self.tool_calls else None


@runtime_checkable
class Actor(Protocol):
    """Anything that can play an actor in either benchmark.

    ``system_prompt`` and ``max_tokens`` are given by a caller that owns the prompt (AlloBench's
    framings); a CoffeeBench actor has its prompt from its role. An actor may also offer
    ``retract_last(inputs) -> bool`` (forget its last reply and the last ``inputs`` inputs
    before it) and ``async arespond(inputs)`` (a caller in an event loop awaits it).
    """

    name: str

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None: ...

    def respond(self, inputs: Sequence[Input]) -> Reply: ...


@dataclass
class Feedback:
    """What a one-call actor learns before its next decision (the inputs, folded).

    ``observation`` is set when the actor is woken (a new day or an event); ``result`` is the
    result of its previous tool call (absent after a wake that followed a wait).
    """

    observation: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def inputs(self) -> list[Input]:
        """The same feedback as protocol inputs: the executed call's result, then the wake."""
        out: list[Input] = []
        if self.result is not None:
            out.append(ToolResult("", self.result))
        if self.observation is not None:
            out.append(Observation(self.observation, tuple(self.notes)))
        elif self.notes:
            out.append(UserText("\n".join(self.notes)))
        return out

    @classmethod
    def from_inputs(cls, inputs: Sequence[Input]) -> Feedback:
        """Fold inputs back: the first result, the observation (a text counts as notes)."""
        feedback = cls()
        for item in inputs:
            if isinstance(item, ToolResult):
                if feedback.result is None:
                    feedback.result = item.result
            elif isinstance(item, Observation):
                feedback.observation = item.data
                feedback.notes += list(item.notes)
            else:
                feedback.notes.append(item.text)
        return feedback


class Decider:
    """The protocol for an actor that makes one tool call per turn: subclasses implement
    ``decide(feedback) -> ToolCall | None``."""

    name = "decider"

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """Nothing to set up by default."""

    def decide(self, feedback: Feedback) -> ToolCall | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def respond(self, inputs: Sequence[Input]) -> Reply:
        call = self.decide(Feedback.from_inputs(inputs))
        return Reply(tool_calls=[call] if call is not None else [])


Routine = Generator[ToolCall, dict[str, Any], None]


class ScriptedPolicy(Decider):
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

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
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
