"""A model that plays a script: for tests, offline demos and benchmarks of the harness.

``ScriptedModel`` returns either a fixed list of replies in order or whatever a *brain* (a
plain function of the conversation and the tools) says, records every request it receives,
and can raise queued errors first, so a test can script "429, 429, then a reply" against the
real retry layer. It speaks the same ``generate`` as every real provider, so the agent loop
cannot tell the difference.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal, Union

from econbench.agents.models.base import (
    ChatMessage,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    Usage,
)
from econbench.agents.models.boundary import checked_output, checked_usage
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.agents.untrusted import bounded_arguments

BrainResult = Union[ModelOutput, str, ToolCall, list[ToolCall], None]  # noqa: UP007
ScriptedBrain = Callable[
    [list[ChatMessage], list[ToolSpec]], Union[BrainResult, Awaitable[BrainResult]]  # noqa: UP007
]
ScriptItem = Union[ModelOutput, BaseException]  # noqa: UP007


class ScriptExhaustedError(FatalModelError):
    """The script has no reply left: the run stops cleanly and the test sees why."""


@dataclass
class ScriptedRequest:
    """One call as the model received it: the message list as it stood (a shallow copy, so
    later appends or a compaction don't show; the messages themselves are shared)."""

    messages: list[ChatMessage]
    tools: list[ToolSpec]
    config: GenerateConfig

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    @property
    def last_message(self) -> ChatMessage | None:
        return self.messages[-1] if self.messages else None


def tool_output(
    name: str,
    arguments: dict[str, object] | str | None = None,
    *,
    text: str = "",
    call_id: str | None = None,
    model: str = "scripted",
    usage: Usage | None = None,
) -> ModelOutput:
    """A reply that calls one tool (``arguments`` may be a raw string, as from a bad model)."""
    args = {} if arguments is None else arguments
    return ModelOutput(
        model=model,
        text=text,
        tool_calls=[ToolCall(name, args, call_id)],  # type: ignore[arg-type]
        usage=usage or Usage(),
        stop_reason="tool_use",
    )


def text_output(text: str, *, model: str = "scripted", usage: Usage | None = None) -> ModelOutput:
    """A reply with text and no tool call (the agent loop reads it as "wait")."""
    return ModelOutput(model=model, text=text, usage=usage or Usage(), stop_reason="end_turn")


def estimate_usage(
    messages: list[ChatMessage], tools: list[ToolSpec], output: ModelOutput
) -> Usage:
    """Tokens as the fake servers count them: four characters a token, nothing cached."""
    prompt = sum(len(m.content) + len(m.reasoning or "") for m in messages)
    prompt += sum(len(json.dumps(c.arguments, default=str)) for m in messages for c in m.tool_calls)
    prompt += sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in tools)
    reply = len(output.text) + sum(
        len(json.dumps(c.arguments, default=str)) + len(c.name) for c in output.tool_calls
    )
    return Usage(input_tokens=max(1, prompt // 4), output_tokens=max(1, reply // 4))


def _fresh(output: ModelOutput) -> ModelOutput:
    """A copy the caller may change: arguments bounded first (``copy.deepcopy`` of arguments
    nested thousands deep would raise), then everything copied."""
    shallow = copy.copy(output)
    shallow.tool_calls = [
        ToolCall(c.name, bounded_arguments(c.arguments), c.call_id) for c in output.tool_calls
    ]
    return copy.deepcopy(shallow)


@dataclass(eq=False)
class ScriptedModel(ModelProvider):
    """Replies from a list (in order) or a brain; records requests; raises queued errors.

    ``outputs`` may mix ``ModelOutput``s and exceptions (an exception in the script is raised
    at its turn). ``fail_next(*errors)`` queues errors ahead of the next replies. ``usage``
    is given to every reply that carries none of its own: a fixed ``Usage`` per call, or
    ``"estimate"`` to count the prompt as the fake servers do. ``latency_s`` waits that long
    per call (benchmarks of concurrency). ``max_recorded`` keeps only the latest requests,
    bounding memory in long demos.
    """

    name: str = "scripted/model"
    outputs: Iterable[ScriptItem] | None = None
    brain: ScriptedBrain | None = None
    usage: Usage | Literal["estimate"] | None = None
    latency_s: float = 0.0
    context_window: int = 200_000
    max_recorded: int | None = None
    requests: list[ScriptedRequest] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if not self.name.startswith("scripted/"):
            self.name = f"scripted/{self.name}"
        if (self.outputs is None) == (self.brain is None):
            raise ValueError("ScriptedModel needs exactly one of outputs or brain")
        self._script: deque[ScriptItem] = deque(self.outputs or [])
        self._errors: deque[BaseException] = deque()
        self._replies = 0
        self._calls = 0

    def __repr__(self) -> str:
        source = "brain" if self.brain is not None else f"{len(self._script)} scripted"
        return f"ScriptedModel(name={self.name!r}, {source}, calls={self._calls})"

    # ------------------------------------------------------------------ script control
    def fail_next(self, *errors: BaseException) -> None:
        """Raise these, one per call, before giving the next reply."""
        self._errors.extend(errors)

    def add(self, *items: ScriptItem) -> None:
        """Append replies (or errors) to a list script."""
        if self.brain is not None:
            raise ValueError("this ScriptedModel plays a brain; queue errors with fail_next")
        self._script.extend(items)

    @property
    def calls(self) -> int:
        """How many requests arrived (failed ones included)."""
        return self._calls

    @property
    def remaining(self) -> int:
        return len(self._script)

    @property
    def last_request(self) -> ScriptedRequest | None:
        return self.requests[-1] if self.requests else None

    # ------------------------------------------------------------------ generate
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        self._calls += 1
        self.requests.append(ScriptedRequest(list(messages), list(tools), replace(config)))
        if self.max_recorded is not None and len(self.requests) > self.max_recorded:
            del self.requests[: len(self.requests) - self.max_recorded]
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if self._errors:
            raise self._errors.popleft()
        if self.brain is not None:
            result = self.brain(messages, tools)
            if inspect.isawaitable(result):
                result = await result
            output = self._normalise(result)
        else:
            if not self._script:
                raise ScriptExhaustedError(
                    f"{self.name}: the script has no reply left after {self._replies} "
                    f"repl{'y' if self._replies == 1 else 'ies'}"
                )
            item = self._script.popleft()
            if isinstance(item, BaseException):
                raise item
            output = _fresh(item)
        self._replies += 1
        output = checked_output(output, self.name)  # as every provider's reply is (boundary.py)
        if self.usage is not None and output.usage == Usage():
            usage = (
                estimate_usage(messages, tools, output)
                if self.usage == "estimate"
                else replace(self.usage)
            )
            output.usage = checked_usage(usage, self.name)
        return output

    def _normalise(self, result: object) -> ModelOutput:
        """A brain may answer with a ModelOutput, a text, one tool call or several."""
        if isinstance(result, ModelOutput):
            return _fresh(result)
        if result is None:
            return ModelOutput(model=self.name, stop_reason="end_turn")
        if isinstance(result, str):
            return ModelOutput(model=self.name, text=result, stop_reason="end_turn")
        if isinstance(result, ToolCall):
            result = [result]
        if isinstance(result, list) and all(isinstance(c, ToolCall) for c in result):
            return ModelOutput(model=self.name, tool_calls=list(result), stop_reason="tool_use")
        raise TypeError(
            f"{self.name}: a brain must return a ModelOutput, a str, a ToolCall or a list of "
            f"ToolCalls, not {type(result).__name__}"
        )
