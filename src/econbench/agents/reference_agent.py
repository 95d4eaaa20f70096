"""The CoffeeBench reference's agent harness, as an econbench ``Actor`` (the ``paper`` condition).

``ReferenceAgent`` keeps its conversation exactly as the reference's ``Agent``
(``coffeebench/agent.py``) keeps ``self.messages`` and compacts it exactly as its
``ContextCompactor`` (``coffeebench/context_compactor.py``) does; its providers, under
``request_style = "coffee_paper"`` (``econbench.agents.models.coffee_paper_wire``), put that
conversation on the wire as the reference's model classes do. What is the reference's
protocol lives here: the system prompt's routing, the tool message of the executed call
(``json.dumps(result, default=str)``), no tool message for a reply without a call, the
compaction trigger (the last turn's reported prompt tokens at or above 0.8 of the reference's
200k ``max_input_tokens``), its head/tail cuts, transcript, prompts, summary wrapper and
bridge, the forced compaction and single retry on a context overflow, and the model
classes' one-time fall-backs when a server refuses ``temperature`` / thinking / reasoning.
What is infrastructure stays econbench's: retries of transient errors (``call_with_retries``),
the concurrency limiter, pricing, recording, and the ``model_call`` / ``model_retry`` /
``compaction`` events ``LLMAgent`` emits.

The messages are ``ChatMessage``s in the reference's roles: ``system`` stands for the
reference's ``developer`` (OpenAI) or ``system`` (OpenRouter) message; an assistant turn's
``provider_data`` carries the reply's ``raw`` for replay; the compactor's bridge turn has none.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from econbench.agents.event_loop import aclose_all, run_closing
from econbench.agents.models import coffee_paper_wire as wire
from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    ModelError,
    ModelOutput,
    ModelProvider,
)
from econbench.agents.models.retry import ConcurrencyLimiter
from econbench.agents.models.settings import COFFEE_PAPER_STYLE_PROVIDERS
from econbench.agents.policy import Input, Observation, Reply, ToolResult, UserText
from econbench.agents.react import counted_call
from econbench.agents.stats import AgentStats, reply_usage
from econbench.agents.tools import ToolCall, ToolSpec

log = logging.getLogger(__name__)

EventFn = Callable[[str, dict[str, Any]], None]

REFERENCE_PROVIDERS = COFFEE_PAPER_STYLE_PROVIDERS
"""The providers the reference has a model class for (those ``coffee_paper`` is sent to)."""
MAX_INPUT_TOKENS = 200_000
"""``DEFAULT_MAX_INPUT_TOKENS`` of every reference model class."""
THRESHOLD_RATIO = 0.80
KEEP_FIRST_N = 5
KEEP_LAST_N = 20
DEFAULT_INITIAL_OBSERVATION = "Observation: Day 0."
REFERENCE_TIMEOUT_S = 300.0
"""The reference's clients' per-call HTTP timeout."""

COMPACTION_SYSTEM_PROMPT = """\
You are summarizing a transcript of an LLM agent's turns in a multi-day business simulation. Your task is to compress this transcript into a factual memory note that the agent will read to continue operating without the full transcript.

Rules — read carefully:
1. Output ONLY facts present in the transcript. Do not invent or extrapolate.
2. Use NO evaluative language. Avoid words like "wisely", "smartly", "mistakenly", "should have", "good decision", "regret", "the right call". Just record what happened.
3. Stay neutral. Do not flag patterns or judge counterparties.
4. Preserve all numbers exactly: prices, quantities, dates (day numbers), agent IDs, invoice IDs.

Output format — use these section headers verbatim. Omit a section entirely if it has no content.

## Counterparties & deals
For each completed deal: who (buyer/seller IDs), item, qty, unit price, day accepted, payment terms (NET-X), delivery status.

## Open AR / AP
Outstanding receivables and payables not yet settled, with invoice ID, counterparty, balance, due day, overdue flag if past due.

## Messages exchanged
Digest of incoming/outgoing DMs: counterparty, day, one-line gist. List the most recent ~10 if many.

## Observed market patterns
Concrete observations from the transcript supported by numbers: e.g., "day 45 roasted_coffee_kg sold 18 kg at $22/kg vs ~10 kg typical" or "competing retailer priced roasted_coffee_kg at $20/kg on day 60". Only include if numbers are present in the transcript.

## Pending actions
Listings posted, offers made/received, production calls in flight that have not yet resolved.

## Last self-observed state
Most recent self-reported cash, inventory snapshot, AR/AP totals from the morning observation.
"""  # noqa: E501 - the reference's text, verbatim
COMPACTION_USER_PROMPT_TEMPLATE = """\
Compress the following transcript into the factual memory format described in your instructions. The transcript covers turns the agent took in a middle range of the run; turns before and after this range remain visible to the agent in their original form.

TRANSCRIPT:
{transcript}
"""  # noqa: E501 - the reference's text, verbatim
SUMMARY_OPEN = "<context_summary>\n"
SUMMARY_CLOSE = (
    "\n</context_summary>\n\n"
    "[The block above is a system-generated factual summary of "
    "your earlier turns, produced because the running transcript "
    "exceeded the context window. Treat its contents as your own "
    "memory of those events. The next message resumes the live "
    "simulation.]"
)
BRIDGE_TEXT = "(context summary follows)"


def reference_model(name: str) -> tuple[str, bool]:
    """``get_model``'s reading of a name: (the model name without a ``-thinking`` /
    ``-no-thinking`` suffix, whether thinking is on). A plain name is thinking OFF: the
    reference's ``get_model`` builds ``XModel(model=name)``, whose ``enable_thinking``
    defaults to False (its comment says otherwise; the code decides)."""
    if name.endswith("-no-thinking"):
        return name[: -len("-no-thinking")], False
    if name.endswith("-thinking"):
        return name[: -len("-thinking")], True
    return name, False


def stringify_tool_result(result: Any) -> str:
    """``_stringify_tool_result``: a string as it is, else ``json.dumps(..., default=str)``."""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, default=str)
    except (TypeError, ValueError):
        return str(result)


def render_transcript(messages: list[ChatMessage], roles: Callable[[ChatMessage], str]) -> str:
    """``_render_transcript``: ``[role]`` and the content of each message, blank-line apart."""
    return "\n\n".join(f"[{roles(m)}]\n{m.content}" for m in messages)


@dataclass
class CompactionRecord:
    """The reference's ``CompactionEvent``: one compaction, for the run's report."""

    triggered_at_tokens: int
    middle_start: int
    middle_end: int
    middle_msg_count: int
    summary_chars: int
    extras: dict[str, Any] = field(default_factory=dict)


class ReferenceAgent:
    """One CoffeeBench firm played as the reference's ``Agent`` plays it (``Actor`` protocol).

    ``provider`` is built by the registry for the firm's model with ``request_style =
    "coffee_paper"`` (``build_provider("anthropic/claude-sonnet-4-6", settings)``); its name's
    provider part routes the system prompt. ``enable_thinking`` is the reference's flag (see
    :func:`reference_model`).
    """

    def __init__(
        self,
        provider: ModelProvider,
        *,
        system_prompt: str,
        initial_observation: str = DEFAULT_INITIAL_OBSERVATION,
        enable_thinking: bool = False,
        provider_kind: str | None = None,
        render_observation: Callable[[dict[str, Any]], str] | None = None,
        limiter: ConcurrencyLimiter | None = None,
        max_attempts: int = 6,
        retry_options: dict[str, Any] | None = None,
        timeout_s: float = REFERENCE_TIMEOUT_S,
        seed: int = 0,
        on_event: EventFn | None = None,
        max_input_tokens: int = MAX_INPUT_TOKENS,
    ) -> None:
        self.provider = provider
        self.name = provider.name
        kind = provider_kind or provider.name.partition("/")[0]
        if kind not in REFERENCE_PROVIDERS:
            raise ValueError(
                f"{provider.name}: the reference has no model class for provider {kind!r} "
                f"(one of {', '.join(REFERENCE_PROVIDERS)}; pass provider_kind for others)"
            )
        self.kind = kind
        self.system_prompt = system_prompt
        self.initial_observation = initial_observation
        self.enable_thinking = enable_thinking
        self.render_observation = render_observation
        self.limiter = limiter
        self.max_attempts = max_attempts
        self.retry_options = dict(retry_options or {})
        self.timeout_s = timeout_s
        self.rng = random.Random(seed)
        self.on_event: EventFn = on_event or (lambda kind, data: None)
        self._events_bound = on_event is not None
        self.max_input_tokens = max_input_tokens
        self.stats = AgentStats()
        self.messages: list[ChatMessage] = []
        self.tools: list[ToolSpec] = []
        self.actor_id = ""
        self.compactions: list[CompactionRecord] = []
        self.last_input_tokens = 0
        # The reference model object's fall-back state (AnthropicModel._skip_temperature …).
        self.options = wire.CallOptions(
            thinking=enable_thinking,
            skip_temperature=enable_thinking if kind == "anthropic" else False,
            skip_thinking=not enable_thinking,
            skip_reasoning=False,
        )
        self._executed: ToolCall | None = None
        self._call_counter = 0
        self._last_summary_output: ModelOutput | None = None

    # ------------------------------------------------------------ protocol
    def bind_events(self, on_event: EventFn) -> None:
        """Let the environment's runner log this agent's calls, unless a sink was given."""
        if not self._events_bound:
            self.on_event, self._events_bound = on_event, True

    @property
    def system_in_messages(self) -> bool:
        """``Agent.init``'s routing: OpenAI (developer) and OpenRouter (system) keep the
        prompt as the first message; Anthropic and Gemini send it out of band."""
        return self.kind in ("openai", "openai-compatible")

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """``Agent.init``: route the system prompt, then the initial observation."""
        if system_prompt is not None:
            self.system_prompt = system_prompt
        self.actor_id = actor_id
        self.tools = tools
        self.messages = []
        if self.system_in_messages:
            self.messages.append(ChatMessage("system", self.system_prompt))
        self.messages.append(ChatMessage("user", self.initial_observation))
        self._executed = None

    def respond(self, inputs: Sequence[Input]) -> Reply:
        """Synchronous entry point for callers outside an event loop (a loop per call, the
        model's client closed at its end)."""
        return run_closing(self.arespond(inputs), [self])

    async def aclose(self) -> None:
        """Close the model's HTTP client on the running loop (it reopens on next use)."""
        await aclose_all([self.provider])

    async def arespond(self, inputs: Sequence[Input]) -> Reply:
        """``step_apply``'s tool message for the executed call, the wake texts
        (``add_message("user", obs)``), then ``step_query``: compaction check and the call."""
        self._take_inputs(inputs)
        if self.should_compact():
            await self.compact(forced=False)
        try:
            output = await self._query()
        except ContextOverflowError:
            log.warning(
                "[%s] ContextOverflowError; forcing compaction and retrying once", self.actor_id
            )
            await self.compact(forced=True)
            output = await self._query()
        return self._take_reply(output)

    # ------------------------------------------------------------ conversation
    def _take_inputs(self, inputs: Sequence[Input]) -> None:
        executed, self._executed = self._executed, None
        answered = False
        for item in inputs:
            if isinstance(item, ToolResult):
                if executed is None or answered:
                    continue  # the reference executes (and answers) only the first call
                if item.call_id is not None and item.call_id != executed.call_id:
                    continue
                answered = True
                self.messages.append(
                    ChatMessage(
                        "tool",
                        stringify_tool_result(item.result),
                        tool_call_id=executed.call_id,
                        name=executed.name,
                    )
                )
            elif isinstance(item, UserText):
                self.messages.append(ChatMessage("user", item.text))
            elif isinstance(item, Observation):
                if self.render_observation is None:
                    raise TypeError(
                        "ReferenceAgent takes observations as UserText (the reference's "
                        "formatted text); give render_observation to accept Observation data"
                    )
                text = self.render_observation(item.data)
                if item.notes:
                    text += "\n" + "\n".join(item.notes)
                self.messages.append(ChatMessage("user", text))

    def _take_reply(self, output: ModelOutput) -> Reply:
        """``step_apply``'s assistant turn (with the reply's raw blocks) and the event."""
        calls = [self._with_id(c) for c in output.tool_calls]
        raw = wire.raw_of(ChatMessage("assistant", provider_data=output.provider_data))
        self.messages.append(
            ChatMessage(
                "assistant",
                output.text or "",
                tool_calls=calls,
                reasoning=output.reasoning,
                provider_data=wire.with_raw(raw) if raw is not None else None,
            )
        )
        self._executed = calls[0] if calls else None
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
        if output.cache_hit:
            event["cache_hit"] = True
        if output.truncated:
            event["truncated"] = output.truncated
        self.on_event("model_call", event)
        return Reply(text=output.text, tool_calls=list(calls), usage=reply_usage(output))

    def _with_id(self, call: ToolCall) -> ToolCall:
        """The reference's ``ToolCall``: arguments that are not an object are ``{}``; a call
        without an id gets one (Gemini's are the reference's own invention too)."""
        self._call_counter += 1
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        call_id = call.call_id or f"{call.name}_{self.actor_id}_{self._call_counter}"
        return ToolCall(call.name, arguments, call_id)

    def _role(self, msg: ChatMessage) -> str:
        """The reference's role of a message (its first message is ``developer`` for OpenAI)."""
        if msg.role == "system":
            return "developer" if self.kind == "openai" else "system"
        return msg.role

    # ------------------------------------------------------------ model calls
    def _wire_messages(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        if self.system_in_messages:
            return messages
        return [ChatMessage("system", self.system_prompt), *messages]

    async def _query(self) -> ModelOutput:
        """``model.query(messages, tools)``; records ``last_input_tokens``."""
        output = await self._call(self._wire_messages(self.messages), self.tools, "query")
        prompt_tokens = wire.prompt_tokens_of(output.provider_data)  # Gemini: prompt_token_count
        self.last_input_tokens = (
            output.usage.input_tokens if prompt_tokens is None else prompt_tokens
        )
        return output

    async def _summarize(self, instructions: str, content: str) -> str:
        """``model.summarize(instructions, content)``: the reply's text."""
        messages = [ChatMessage("system", instructions), ChatMessage("user", content)]
        output = await self._call(messages, [], "summarize")
        self._last_summary_output = output
        return output.text or ""

    async def _call(
        self, messages: list[ChatMessage], tools: list[ToolSpec], call: str
    ) -> ModelOutput:
        # OpenRouterModel pops a refused parallel_tool_calls from this call's keyword
        # arguments only: its retries go without it, the next call sends it again.
        this_call: dict[str, Any] = {"call": call}

        async def send() -> ModelOutput:
            opts = wire.CallOptions(**{**asdict(self.options), **this_call})
            config = opts.to_config(self.timeout_s)
            try:
                return await self._generate(messages, tools, config)
            except FatalModelError as exc:
                changed = wire.fallback(self.kind, call, str(exc), opts)
                if changed is None:
                    raise
            # The reference's _do_call: drop what was refused, for good, and send again.
            if changed.drop_parallel_tool_calls:
                this_call["drop_parallel_tool_calls"] = True
            persisted = {**asdict(changed), "call": "query", "drop_parallel_tool_calls": False}
            self.options = wire.CallOptions(**persisted)
            return await self._generate(messages, tools, changed.to_config(self.timeout_s))

        return await counted_call(self, send)

    async def _generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: Any
    ) -> ModelOutput:
        if self.limiter is None:
            return await self.provider.generate(messages, tools, config)
        async with self.limiter.slot(self.provider.name):
            return await self.provider.generate(messages, tools, config)

    # ------------------------------------------------------------ compaction
    @property
    def threshold_tokens(self) -> int:
        """``ContextCompactor.threshold_tokens``: 160,000 for the reference's 200k window."""
        if self.max_input_tokens <= 0:
            return 0
        return int(self.max_input_tokens * THRESHOLD_RATIO)

    def should_compact(self) -> bool:
        """``ContextCompactor.should_compact``: the last turn's prompt at the threshold."""
        threshold = self.threshold_tokens
        return threshold > 0 and self.last_input_tokens >= threshold

    def cut_points(self) -> tuple[int, int] | None:
        """``compact``'s (head_end, tail_start), or ``None`` when there is no valid middle."""
        messages = self.messages
        n = len(messages)
        conv_start = 1 if messages and messages[0].role == "system" else 0

        def clean_head(idx: int) -> bool:
            if idx <= conv_start:
                return False
            prev = messages[idx - 1]
            if prev.role == "assistant":
                return not prev.tool_calls
            return prev.role in ("tool", "user", "system")

        head_end = min(conv_start + KEEP_FIRST_N, n)
        while head_end > conv_start and not clean_head(head_end):
            head_end -= 1

        def clean_tail(idx: int) -> bool:
            return 0 < idx < n and messages[idx].role == "assistant"

        target = max(n - KEEP_LAST_N, head_end)
        tail_start = target
        while tail_start < n and not clean_tail(tail_start):
            tail_start += 1
        if tail_start >= n:
            tail_start = target
            while tail_start > head_end and not clean_tail(tail_start):
                tail_start -= 1
        if head_end <= conv_start or tail_start >= n or tail_start <= head_end:
            return None
        return head_end, tail_start

    async def compact(self, *, forced: bool) -> bool:
        """``ContextCompactor.compact``: the middle replaced by the model's summary (with
        the bridge turn when the cut follows a user-role message); unchanged when there is
        no valid middle or the summary fails or is empty."""
        if not self.messages:
            return False
        cut = self.cut_points()
        if cut is None:
            log.warning(
                "[compactor:%s] no valid middle (n=%d, trigger=%d tok)",
                self.actor_id,
                len(self.messages),
                self.last_input_tokens,
            )
            return False
        head_end, tail_start = cut
        middle = self.messages[head_end:tail_start]
        transcript = render_transcript(middle, self._role)
        prompt = COMPACTION_USER_PROMPT_TEMPLATE.format(transcript=transcript)
        self._last_summary_output = None
        try:
            summary = await self._summarize(COMPACTION_SYSTEM_PROMPT, prompt)
        except ModelError as exc:
            log.warning("[compactor:%s] summarize() failed (%s); skipping", self.actor_id, exc)
            return False
        if not summary or not summary.strip():
            log.warning("[compactor:%s] empty summary — skipping compaction", self.actor_id)
            return False
        synthetic = ChatMessage("user", SUMMARY_OPEN + summary.strip() + SUMMARY_CLOSE)
        bridge: list[ChatMessage] = []
        if head_end > 0 and self.messages[head_end - 1].role in ("tool", "user"):
            bridge.append(ChatMessage("assistant", BRIDGE_TEXT))
        bridge.append(synthetic)
        before = len(self.messages)
        self.messages = self.messages[:head_end] + bridge + self.messages[tail_start:]
        record = CompactionRecord(
            triggered_at_tokens=self.last_input_tokens,
            middle_start=head_end,
            middle_end=tail_start,
            middle_msg_count=len(middle),
            summary_chars=len(summary),
        )
        self.compactions.append(record)
        self.stats.compactions += 1
        output = self._last_summary_output
        event: dict[str, Any] = {
            "firm": self.actor_id,
            "model": self.name,
            "forced": forced,
            "messages_before": before,
            "messages_after": len(self.messages),
            "summarised_messages": len(middle),
            "summary": summary,
            "usage": output.usage.to_dict() if output is not None else {},
            "cost_usd": output.cost_usd if output is not None else None,
            "triggered_at_tokens": record.triggered_at_tokens,
            "middle_start": head_end,
            "middle_end": tail_start,
        }
        if output is not None and output.cache_hit:
            event["cache_hit"] = True
        self.on_event("compaction", event)
        return True

    # ------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """Everything a resumed run needs to continue this conversation exactly."""
        provider_state = getattr(self.provider, "state_dict", None)
        version, internal, gauss = self.rng.getstate()
        executed = self._executed
        return {
            "messages": [m.to_dict() for m in self.messages],
            "executed": (
                None
                if executed is None
                else {
                    "name": executed.name,
                    "arguments": executed.arguments,
                    "call_id": executed.call_id,
                }
            ),
            "last_input_tokens": self.last_input_tokens,
            "options": asdict(self.options),
            "call_counter": self._call_counter,
            "compactions": [asdict(c) for c in self.compactions],
            "stats": self.stats.state(),
            "rng": [version, list(internal), gauss],
            "provider": provider_state() if callable(provider_state) else None,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` saved (after ``start``, which sets the tools)."""
        self.messages = [ChatMessage.from_dict(m) for m in state["messages"]]
        executed = state.get("executed")
        self._executed = (
            None
            if executed is None
            else ToolCall(executed["name"], executed["arguments"], executed["call_id"])
        )
        self.last_input_tokens = int(state["last_input_tokens"])
        self.options = wire.CallOptions(**state["options"])
        self._call_counter = int(state["call_counter"])
        self.compactions = [CompactionRecord(**c) for c in state.get("compactions", [])]
        self.stats = AgentStats.from_state(state["stats"])
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        load = getattr(self.provider, "load_state", None)
        if state.get("provider") is not None and callable(load):
            load(state["provider"])
