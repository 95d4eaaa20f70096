"""The ReAct agent: one model conversation per actor, one tool call per turn.

The environment wakes the agent with an observation or hands back the result of its last
call; the agent appends those to its conversation, asks its model for the next step and
returns one tool call. Extra tool calls in a reply are answered with a result saying they
were ignored (never dropped silently); a reply without a tool call means "wait". When the
prompt grows past the compaction threshold, or the provider reports a context overflow,
the middle of the history is replaced by a summary the same model writes.

Every model call, retry and compaction is reported through ``on_event`` so the run's event
log records it; nothing about wall-clock time goes there, so a run with the same replies
logs the same bytes.

How the inputs become messages: the results of a reply's calls become one ``tool`` message
each, in call order, their content the caller's ``render_result`` text as it is; each
``UserText`` (and each rendered ``Observation``) after them becomes its own ``user``
message. The providers put that on the wire: econbench's request style folds a reply's
results and the next text into one Anthropic user message; the paper's style
(``request_style = "paper"``) keeps them apart, as the paper did. ``retract_last`` removes
the same messages under either style.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from econbench.agents.compaction import (
    CompactionPlan,
    apply_compaction,
    cacheable_summary_request,
    fallback_plans,
    plan_compaction,
    summary_request,
)
from econbench.agents.event_loop import aclose_all, run_closing
from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    ToolChoice,
)
from econbench.agents.models.boundary import checked_output
from econbench.agents.models.retry import ConcurrencyLimiter, RetryEvent, call_with_retries
from econbench.agents.policy import (
    Feedback,
    Input,
    Observation,
    Reply,
    ToolResult,
    UserText,
)
from econbench.agents.stats import AgentStats, reply_usage
from econbench.agents.tools import ToolCall, ToolSpec

EventFn = Callable[[str, dict[str, Any]], None]
ResultFn = Callable[[dict[str, Any]], str]
MAX_FORCED_COMPACTIONS = 4
"""Compactions tried, each keeping less, before an overflowing prompt stops the agent."""
IGNORED = (
    "Not executed: only one tool call is carried out per turn, and this reply carried "
    "several. Call it again if you still want it."
)


def compact_result(result: dict[str, Any]) -> str:
    """A tool result as the compact JSON text CoffeeBench's models read."""
    return json.dumps(result, separators=(",", ":"))


class MessageStore(Protocol):
    """Where the messages an agent sent are kept already (the run's call record), so its
    checkpoint can name them by digest instead of copying the conversation each time."""

    def has_message(self, digest: str) -> bool: ...

    def message(self, digest: str) -> ChatMessage: ...


@dataclass
class CompactionSettings:
    """When to compact and what to keep. ``threshold`` is the share of the context window
    the next prompt may reach before it is compacted; the rest holds the summariser's
    instruction and reply when the summary is asked for at the end of the conversation
    (``LLMAgent._compact``). ``keep_first`` / ``keep_last``: messages kept at each end."""

    threshold: float = 0.8
    keep_first: int = 5
    keep_last: int = 20


class LLMAgent:
    """Plays one actor with a model; implements the ``Actor`` protocol (``arespond`` for
    callers in an event loop, ``decide``/``adecide`` for one-call callers)."""

    def __init__(
        self,
        provider: ModelProvider,
        *,
        system_prompt: str,
        render_observation: Callable[[dict[str, Any]], str],
        render_result: ResultFn = compact_result,
        config: GenerateConfig | None = None,
        compaction: CompactionSettings | None = None,
        limiter: ConcurrencyLimiter | None = None,
        max_attempts: int = 6,
        retry_options: dict[str, Any] | None = None,
        seed: int = 0,
        on_event: EventFn | None = None,
        tool_choice: ToolChoice | None = None,
        initial_message: str | None = None,
        message_store: MessageStore | None = None,
    ) -> None:
        """``tool_choice`` ("auto", "required", "none"), when given, is sent with every request
        that offers tools (it replaces the config's; ``None`` keeps the config's).
        ``initial_message``, when given, opens the conversation as a user message right after
        the system prompt (CoffeeBench's day-0 message); ``None`` opens with the system prompt
        alone. ``message_store``, when given (the run's call record), already holds the
        messages sent: ``state_dict`` names those by their digest instead of copying them."""
        self.provider = provider
        self.name = provider.name
        self.system_prompt = system_prompt
        self.initial_message = initial_message
        self.message_store = message_store
        self.render_observation = render_observation
        self.render_result = render_result
        self.config = config or GenerateConfig()
        if tool_choice is not None:
            self.config = replace(self.config, tool_choice=tool_choice)
        self.compaction = compaction or CompactionSettings()
        self.limiter = limiter
        self.max_attempts = max_attempts
        self.retry_options = dict(retry_options or {})
        self.rng = random.Random(seed)
        self.on_event: EventFn = on_event or (lambda kind, data: None)
        self._events_bound = on_event is not None
        self.stats = AgentStats()
        self.messages: list[ChatMessage] = []
        self.tools: list[ToolSpec] = []
        self.actor_id = ""
        self._open_calls: list[str] = []
        self._executed: str | None = None
        self._last_input_tokens = 0
        self._chars_since_call = 0
        self._call_counter = 0

    # ------------------------------------------------------------ protocol
    def bind_events(self, on_event: EventFn) -> None:
        """Let the environment's runner log this agent's calls, unless a sink was given."""
        if not self._events_bound:
            self.on_event, self._events_bound = on_event, True

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """Open the conversation; a caller that owns the prompt (AlloBench) passes it and the
        per-reply token limit."""
        if system_prompt is not None:
            self.system_prompt = system_prompt
        if max_tokens is not None:
            self.config = replace(self.config, max_tokens=max_tokens)
        self.actor_id = actor_id
        self.tools = tools
        self.messages = [ChatMessage("system", self.system_prompt)]
        if self.initial_message is not None:
            self.messages.append(ChatMessage("user", self.initial_message))

    # ------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """Everything a resumed run needs to continue this conversation exactly: the
        messages (after any compaction), open tool calls, the context-size estimate, the
        spend so far, the retry jitter's random state and the provider's own state (e.g.
        the call index of its recorder)."""
        provider_state = getattr(self.provider, "state_dict", None)
        version, internal, gauss = self.rng.getstate()
        store = self.message_store
        return {
            "messages": [
                {"ref": m.digest}
                if store is not None and store.has_message(m.digest)
                else m.to_dict()
                for m in self.messages
            ],
            "open_calls": list(self._open_calls),
            "executed": self._executed,
            "last_input_tokens": self._last_input_tokens,
            "chars_since_call": self._chars_since_call,
            "call_counter": self._call_counter,
            "stats": self.stats.state(),
            "rng": [version, list(internal), gauss],
            "provider": provider_state() if callable(provider_state) else None,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` saved (after ``start``, which sets the tools)."""
        self.messages = [self._message(m) for m in state["messages"]]
        self._open_calls = list(state["open_calls"])
        self._executed = state["executed"]
        self._last_input_tokens = int(state["last_input_tokens"])
        self._chars_since_call = int(state["chars_since_call"])
        self._call_counter = int(state["call_counter"])
        self.stats = AgentStats.from_state(state["stats"])
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        load = getattr(self.provider, "load_state", None)
        if state.get("provider") is not None and callable(load):
            load(state["provider"])

    def _message(self, saved: dict[str, Any]) -> ChatMessage:
        """A saved message: in full, or named by its digest in the message store."""
        if "ref" not in saved:
            return ChatMessage.from_dict(saved)
        if self.message_store is None:
            raise ValueError("the saved conversation names messages of a store it was not given")
        return self.message_store.message(str(saved["ref"]))

    def respond(self, inputs: Sequence[Input]) -> Reply:
        """Synchronous entry point for callers outside an event loop (a loop per call, the
        model's client closed at its end)."""
        return run_closing(self.arespond(inputs), [self])

    async def arespond(self, inputs: Sequence[Input]) -> Reply:
        """Take the inputs (answering any call the caller left unanswered), ask the model,
        and return its reply with the usage it reports."""
        self._take_inputs(inputs)
        output = await self.advance()
        return Reply(
            text=output.text, tool_calls=list(output.tool_calls), usage=reply_usage(output)
        )

    def decide(self, feedback: Feedback) -> ToolCall | None:
        """One-call form of ``respond``: the reply's first call."""
        return run_closing(self.adecide(feedback), [self])

    async def aclose(self) -> None:
        """Close the model's HTTP client on the running loop (it reopens on next use)."""
        await aclose_all([self.provider])

    async def adecide(self, feedback: Feedback) -> ToolCall | None:
        """One-call form of ``arespond``: the reply's first call."""
        return (await self.arespond(feedback.inputs())).first_call

    def retract_last(self, inputs: int) -> bool:
        """Forget the last reply, if it made no tool call, and the last ``inputs`` user
        messages before it (AlloBench re-asks such a reply as the paper does: pruned)."""
        messages = self.messages
        if not messages or messages[-1].role != "assistant" or messages[-1].tool_calls:
            return False
        messages.pop()
        for _ in range(inputs):
            if messages and messages[-1].role == "user":
                messages.pop()
        return True

    async def advance(self) -> ModelOutput:
        """Ask the model, append and log its reply.

        The reply's tool calls get ids (when the provider gave none); the next ``respond``
        answers every one of them (from the caller's results, or as not executed).
        """
        output = await self._generate_with_recovery()
        output.tool_calls = [self._with_id(call) for call in output.tool_calls]
        message = output.as_message()
        self._append(message)
        calls = output.tool_calls
        self._open_calls = [c.call_id or "" for c in calls]
        self._executed = calls[0].call_id if calls else None
        event: dict[str, Any] = {
            "firm": self.actor_id,
            "model": output.model or self.name,
            "text": output.text,
            "reasoning": output.reasoning,
            "tool_calls": [
                {"name": c.name, "arguments": c.arguments, "call_id": c.call_id} for c in calls
            ],
            "ignored_calls": len(calls) - 1 if calls else 0,
            "stop_reason": output.stop_reason,
            "usage": output.usage.to_dict(),
            "cost_usd": output.cost_usd,
        }
        if output.cache_hit:  # only then, so logs of runs without a cache are unchanged
            event["cache_hit"] = True
        if output.truncated:  # a reply larger than the harness keeps (boundary.cap_reply)
            event["truncated"] = output.truncated
        self.on_event("model_call", event)
        return output

    # ------------------------------------------------------------ conversation
    def _append(self, message: ChatMessage) -> None:
        self.messages.append(message)
        self._chars_since_call += len(message.content) + sum(
            len(json.dumps(c.arguments)) for c in message.tool_calls
        )

    def _take_inputs(self, inputs: Sequence[Input]) -> None:
        """Answer every open tool call (the caller's result, else "not executed"), then add
        the observations."""
        answers: dict[str | None, list[ToolResult]] = {}
        for item in inputs:
            if isinstance(item, ToolResult):
                answers.setdefault(item.call_id, []).append(item)
        for call_id in self._open_calls:
            answer = _take(answers, call_id)
            if answer is None and call_id == self._executed:
                answer = _take(answers, None)
            if answer is not None:
                content = self.render_result(answer.result)
            elif call_id == self._executed:
                content = compact_result(
                    {"status": "error", "error": "the call was not carried out"}
                )
            else:
                content = json.dumps({"status": "error", "error": IGNORED})
            name = (answer.name if answer is not None else "") or self._call_name(call_id)
            self._append(ChatMessage("tool", content, tool_call_id=call_id, name=name))
        self._open_calls, self._executed = [], None
        for item in inputs:
            if isinstance(item, Observation):
                text = self.render_observation(item.data)
                if item.notes:
                    text += "\n" + "\n".join(item.notes)
                self._append(ChatMessage("user", text))
            elif isinstance(item, UserText):
                self._append(ChatMessage("user", item.text))
        if self.messages[-1].role == "assistant":
            # A reply without a tool call, then no observation: nudge rather than send an
            # assistant-final conversation, which some APIs reject.
            self._append(ChatMessage("user", "Continue."))

    def _call_name(self, call_id: str) -> str | None:
        """The tool name of an open call, from the reply that made it."""
        if not self.messages or self.messages[-1].role != "assistant":
            return None
        return next((c.name for c in self.messages[-1].tool_calls if c.call_id == call_id), None)

    def _with_id(self, call: ToolCall) -> ToolCall:
        self._call_counter += 1
        if call.call_id:
            return call
        return ToolCall(call.name, call.arguments, f"call_{self.actor_id}_{self._call_counter}")

    # ------------------------------------------------------------ model calls
    def _estimated_prompt_tokens(self) -> int:
        return self._last_input_tokens + self._chars_since_call // 4

    async def _generate_with_recovery(self) -> ModelOutput:
        """Compact ahead of the threshold; on a context overflow, compact and retry, keeping
        less of the history at each further overflow (small windows), then give up."""
        limit = self.compaction.threshold * self.provider.context_window
        if self._estimated_prompt_tokens() >= limit:
            await self._compact(forced=False)
        try:
            return await self._generate(self.messages, self.tools, self.config)
        except ContextOverflowError as exc:
            overflow = exc
        for shrink in range(MAX_FORCED_COMPACTIONS):
            if not await self._compact(forced=True, shrink=shrink):
                if shrink == 0:
                    raise FatalModelError(
                        f"{self.name}: the prompt overflows the context window and there is "
                        "nothing left to compact"
                    ) from None
                break
            try:
                return await self._generate(self.messages, self.tools, self.config)
            except ContextOverflowError as exc:
                overflow = exc
        raise FatalModelError(
            f"{self.name}: the prompt still overflows after compaction: {overflow}"
        ) from None

    async def _generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        async def once() -> ModelOutput:
            if self.limiter is None:
                return await self.provider.generate(messages, tools, config)
            async with self.limiter.slot(self.provider.name):
                return await self.provider.generate(messages, tools, config)

        output = await counted_call(self, once)
        if messages is self.messages:
            self._last_input_tokens = output.usage.input_tokens
            self._chars_since_call = 0
        return output

    def _plan(self, shrink: int) -> CompactionPlan | None:
        """The usual plan, or with ``shrink`` > 0 (or when it finds nothing) one that keeps
        less: a window too small for the last 20 messages still gets a summary."""
        keep_first, keep_last = self.compaction.keep_first, self.compaction.keep_last
        usual = plan_compaction(self.messages, keep_first, keep_last)
        plans = ([usual] if usual is not None else []) + fallback_plans(
            self.messages, keep_first, keep_last
        )
        return plans[min(shrink, len(plans) - 1)] if plans else None

    def _plan_unforced(self) -> CompactionPlan | None:
        return plan_compaction(self.messages, self.compaction.keep_first, self.compaction.keep_last)

    async def _compact(self, forced: bool, shrink: int = 0) -> bool:
        """Replace the middle of the conversation by a summary the same model writes.

        Ahead of the threshold (``forced`` false) the summary is asked for at the end of the
        conversation (``cacheable_summary_request``): the next request as it would have
        gone out, with its tools and settings, plus one instruction. Its prefix is the
        previous request, so the provider's prefix cache serves nearly all of it. It fits:
        this compaction runs when the estimate of the next prompt reaches ``threshold`` x the
        window (80 % by default), before that prompt is sent, so the request is that prompt
        plus an instruction of a few hundred tokens, and its reply is bounded by the same
        ``max_tokens`` as every reply; the rest of the window (20 % by default, less the
        growth of one step) holds both. Where it would not fit (the estimate already near the
        window) or does not (the provider reports an overflow), and where the reply has no
        text (a model that calls a tool anyway: its calls are ignored, never executed), the
        transcript form below is used instead; so it is when the agent's ``tool_choice`` is
        "required", which leaves the model no way to answer in text.

        After an overflow (``forced``) the conversation does not fit, so it cannot be resent:
        the summary is asked for over a transcript of the middle (``summary_request``),
        bounded to about half the window and halved while it overflows.

        The ``compaction`` event's ``usage`` and ``cost_usd`` cover every call this
        compaction made (an ignored cacheable reply included), and ``calls`` says how many
        there were when more than one."""
        plan = self._plan(shrink) if forced else self._plan_unforced()
        if plan is None:
            return False
        before = len(self.messages)
        outputs: list[ModelOutput] = []
        if not forced:
            output = await self._cacheable_summary(plan)
            if output is not None:
                outputs.append(output)
        if not outputs or not outputs[-1].text.strip():
            output = await self._transcript_summary(plan)
            if output is None:
                return False
            outputs.append(output)
        output = outputs[-1]
        self.messages = apply_compaction(self.messages, plan, output.text)
        self._last_input_tokens = 0
        self._chars_since_call = sum(len(m.content) for m in self.messages)
        self.stats.compactions += 1
        usage = outputs[0].usage
        for extra in outputs[1:]:
            usage = usage + extra.usage
        costs = [o.cost_usd for o in outputs]
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        self.on_event(
            "compaction",
            {
                "firm": self.actor_id,
                "model": self.name,
                "forced": forced,
                "messages_before": before,
                "messages_after": len(self.messages),
                "summarised_messages": plan.summarised,
                "summary": output.text,
                "usage": usage.to_dict(),
                "cost_usd": cost,
            }
            | ({"cache_hit": True} if all(o.cache_hit for o in outputs) else {})
            | ({"truncated": output.truncated} if output.truncated else {})
            | ({"calls": len(outputs)} if len(outputs) > 1 else {}),
        )
        return True

    async def _cacheable_summary(self, plan: CompactionPlan) -> ModelOutput | None:
        """The summary asked for at the end of the conversation, with its tools and
        settings; ``None`` where that cannot work (see ``_compact``)."""
        if self.config.tool_choice == "required":
            return None
        request = cacheable_summary_request(self.messages, plan)
        added = len(request[-1].content) // 4
        if self._estimated_prompt_tokens() + added >= self.provider.context_window:
            return None
        try:
            return await self._generate(request, self.tools, self.config)
        except ContextOverflowError:
            return None

    async def _transcript_summary(self, plan: CompactionPlan) -> ModelOutput | None:
        """The summary asked for over a bounded transcript of the middle, without tools;
        ``None`` when even the smallest transcript overflows."""
        summary_config = GenerateConfig(
            temperature=self.config.temperature,
            max_tokens=min(self.config.max_tokens or 4096, 4096),
            timeout_s=self.config.timeout_s,
            request_style=self.config.request_style,
        )
        # The transcript to summarise is bounded to about half the window (4 chars a token),
        # and halved while the summariser's own prompt overflows.
        max_chars = 2 * self.provider.context_window
        for _ in range(MAX_FORCED_COMPACTIONS):
            request = summary_request(self.messages, plan, max_chars=max_chars)
            try:
                return await self._generate(request, [], summary_config)
            except ContextOverflowError:
                max_chars //= 2
        return None


class CallingAgent(Protocol):
    """What :func:`counted_call` needs of an agent (``LLMAgent``, ``ReferenceAgent``)."""

    name: str
    actor_id: str
    stats: AgentStats
    on_event: EventFn
    max_attempts: int
    rng: random.Random
    retry_options: dict[str, Any]


async def counted_call(
    agent: CallingAgent, send: Callable[[], Awaitable[ModelOutput]]
) -> ModelOutput:
    """One model call of ``agent``, retried on transient errors (each retry counted and
    logged as ``model_retry``), its reply checked and counted. Providers check their replies
    already (boundary.py); one handed in directly (a custom provider) is checked here, so
    nothing unbounded enters the conversation."""

    def on_retry(event: RetryEvent) -> None:
        agent.stats.retries += 1
        agent.on_event("model_retry", event.payload(agent.actor_id, agent.name))

    output = await call_with_retries(
        send,
        max_attempts=agent.max_attempts,
        rng=agent.rng,
        on_retry=on_retry,
        **agent.retry_options,
    )
    output = checked_output(output, agent.name)
    agent.stats.count(output)
    return output


def _take(answers: dict[str | None, list[ToolResult]], call_id: str | None) -> ToolResult | None:
    """The next unused result the caller sent for ``call_id``."""
    queue = answers.get(call_id)
    return queue.pop(0) if queue else None
