"""An Inspect model as an econbench model provider, so econbench's own agent plays with it.

econbench runs a benchmark on its own event loop, in a thread of its own
(:mod:`econbench.inspect_tasks.thread`); Inspect's model lives on Inspect's loop, inside the
sample (its transcript, limits and model roles are context variables there). An
:class:`InspectBridge` carries each call from the first loop to the second: the call runs as
a task of Inspect's loop in the sample's context, so it is an ordinary Inspect ``generate``
— logged as a model event, counted against the sample's token and cost limits, retried by
Inspect's own retry policy.

The bridge is reached by a model name econbench records like any other,
``scripted/inspect/<inspect model>`` (``scripted/inspect-<role>/…`` for a model role): the
name is registered once per process with an :class:`InspectRoutedModel`, which forwards each
call to the bridge bound in the current context (:func:`bind`). Samples running side by side
in one process thus never share a bridge, and a run directory written under Inspect reads as
a model run everywhere else (``econbench report``, ``view``).

Failures are econbench's to handle as failures: an error from Inspect (a sample limit, a
provider error after Inspect's retries) stops the run cleanly as a ``FatalModelError`` — its
checkpoint stands, its summary says where it stopped — and the bridge keeps the original
error for the solver to raise once the run has stopped, so Inspect sees it as it would from
any solver. A prompt too long for the model is a ``ContextOverflowError``, which econbench
answers by compacting.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from inspect_ai.model import ChatMessage as InspectMessage
from inspect_ai.model import Model
from inspect_ai.model import ModelOutput as InspectOutput

from econbench.agents.models.base import (
    ChatMessage,
    FatalModelError,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelProvider,
)
from econbench.agents.models.registry import register_scripted
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.inspect_tasks.convert import (
    econbench_output,
    inspect_config,
    inspect_messages,
    inspect_tool_choice,
    inspect_tools,
)
from econbench.inspect_tasks.tool_events import ToolRecord, record_tool_calls

NAME_PREFIX = "inspect"
"""econbench records a model played through Inspect as ``scripted/inspect/<model>``."""
DEFAULT_CONTEXT_WINDOW = ModelProvider.context_window
"""The window econbench plans compaction for when Inspect knows none for the model."""

_BRIDGES: ContextVar[Mapping[str, InspectBridge]] = ContextVar("econbench_inspect_bridges")


def econbench_name(model: Model, role: str | None = None) -> str:
    """The name a run records for ``model`` (``role``: the Inspect model role it plays)."""
    prefix = NAME_PREFIX if role is None else f"{NAME_PREFIX}-{role}"
    return f"scripted/{prefix}/{model}"


@dataclass
class _Conversation:
    """What the bridge remembers of one conversation (keyed by its system prompt): the calls
    of its latest reply, and the calls whose results it has recorded as tool events."""

    calls: list[ToolCall] = field(default_factory=list)
    recorded: set[str] = field(default_factory=set)


class InspectBridge:
    """One Inspect model, for one sample: asked from econbench's loop, answered on Inspect's.

    ``failure`` is the error from Inspect that stopped the run, if one did; ``last_input`` and
    ``last_output`` are the latest exchange in Inspect's types (the sample's messages and
    output at the end).
    """

    def __init__(
        self,
        model: Model,
        name: str,
        loop: asyncio.AbstractEventLoop,
        *,
        context_window: int | None = None,
    ) -> None:
        self.model = model
        self.name = name
        self.loop = loop
        self.context_window = context_window or DEFAULT_CONTEXT_WINDOW
        self.failure: BaseException | None = None
        self.last_input: list[InspectMessage] = []
        self.last_output: InspectOutput | None = None
        self._stopped: str | None = None
        self._in_flight: set[concurrent.futures.Future[ModelOutput]] = set()
        self._conversations: dict[str, _Conversation] = {}

    # ------------------------------------------------------------ econbench's side
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """One call, made on Inspect's loop; awaited here without blocking econbench's."""
        if self._stopped is not None:
            raise FatalModelError(self._stopped)
        future = asyncio.run_coroutine_threadsafe(
            self._ask(list(messages), list(tools), config), self.loop
        )
        self._in_flight.add(future)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if future.cancelled() and self._stopped is not None:
                raise FatalModelError(self._stopped) from None
            raise
        finally:
            self._in_flight.discard(future)

    # ------------------------------------------------------------ Inspect's side
    def stop(self, reason: str) -> None:
        """Refuse every further call and cancel the calls in flight (on Inspect's loop): the
        run then stops cleanly at its next call, resumable from its checkpoint."""
        self._stopped = reason
        for future in list(self._in_flight):
            future.cancel()

    async def _ask(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        await record_tool_calls(self._answered_calls(messages))
        self.last_input = inspect_messages(messages)
        try:
            output = await self.model.generate(
                input=self.last_input,
                tools=inspect_tools(tools),
                tool_choice=inspect_tool_choice(config, tools),
                config=inspect_config(config),
            )
        except ModelError:
            raise
        except Exception as exc:  # a limit, a provider error past Inspect's retries
            self.failure = self.failure or exc
            raise FatalModelError(f"{self.name}: {type(exc).__name__}: {exc}") from None
        self.last_output = output
        reply = econbench_output(output)
        self._conversation(messages).calls = list(reply.tool_calls)
        return reply

    def _conversation(self, messages: Sequence[ChatMessage]) -> _Conversation:
        return self._conversations.setdefault(_key(messages), _Conversation())

    def _answered_calls(self, messages: Sequence[ChatMessage]) -> list[ToolRecord]:
        """The calls whose results this request brings back (the tool messages after the
        last assistant message, with that message's calls), each recorded once: a compaction
        summary asked for at the end of the conversation carries the same results."""
        conversation = self._conversation(messages)
        last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
        if last < 0:
            return []
        calls = {c.call_id: c for c in messages[last].tool_calls if c.call_id}
        records = []
        for result in messages[last + 1 :]:
            call_id = result.tool_call_id or ""
            if result.role != "tool" or call_id in conversation.recorded:
                continue
            conversation.recorded.add(call_id)
            call = calls.get(call_id)
            records.append(
                ToolRecord(
                    call_id=call_id,
                    function=result.name or (call.name if call else ""),
                    arguments=call.arguments if call is not None else {},
                    result=result.content,
                )
            )
        return records

    def unanswered(self) -> dict[str, list[ToolCall]]:
        """Per conversation (its system prompt), the calls of its last reply whose results
        the model never saw: the run ended after them."""
        pending = {
            key: [c for c in conv.calls if c.call_id is None or c.call_id not in conv.recorded]
            for key, conv in self._conversations.items()
        }
        return {key: calls for key, calls in pending.items() if calls}


def _key(messages: Sequence[ChatMessage]) -> str:
    """A conversation is known by its system prompt (a firm's, an episode's); compaction
    keeps it, and the summary requests of compaction carry their own."""
    return messages[0].content if messages and messages[0].role == "system" else ""


class InspectRoutedModel(ModelProvider):
    """The provider econbench builds for ``scripted/inspect/…``: each call goes to the bridge
    bound to that name in the current context (the sample's), so samples never mix."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._window: int | None = None

    @property  # type: ignore[override]
    def context_window(self) -> int:
        if self._window is not None:
            return self._window
        bridge = _BRIDGES.get({}).get(self.name)
        return bridge.context_window if bridge is not None else DEFAULT_CONTEXT_WINDOW

    @context_window.setter
    def context_window(self, value: int) -> None:
        self._window = value  # a model's context_window setting, as for any provider

    def bridge(self) -> InspectBridge:
        bridge = _BRIDGES.get({}).get(self.name)
        if bridge is None:
            raise FatalModelError(
                f"{self.name} is played through Inspect: run it with `inspect eval "
                "econbench/coffeebench` or `econbench/allobench` (an interrupted sample "
                "continues when Inspect retries it)"
            )
        return bridge

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        return await self.bridge().generate(messages, tools, config)


def register(name: str) -> str:
    """Make ``name`` (``scripted/inspect/…``) buildable in this process; idempotent."""
    return register_scripted(name, InspectRoutedModel(name))


@contextlib.contextmanager
def bind(bridges: Sequence[InspectBridge]) -> Iterator[None]:
    """Within the block (and the contexts copied from it), econbench's calls of each
    bridge's name reach that bridge."""
    for bridge in bridges:
        register(bridge.name)
    token = _BRIDGES.set({b.name: b for b in bridges})
    try:
        yield
    finally:
        _BRIDGES.reset(token)
