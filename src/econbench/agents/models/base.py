"""The provider-neutral model interface: messages in, one normalised ``ModelOutput`` out.

Every provider (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini, any
OpenAI-compatible server, scripted and replay models) implements ``ModelProvider.generate``
over these types, so the agent loop never sees a provider's wire format. Errors are
classified once, here, into transient (retried with backoff), context overflow (forces a
compaction) and fatal (stops the run cleanly so it can be resumed).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal, TypeVar

from econbench.agents.models.canonical import canonical_json, sha256_hex
from econbench.agents.models.stop import StopReason, normalised_stop
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.agents.untrusted import kept_arguments, valid_text

Role = Literal["system", "user", "assistant", "tool"]
_T = TypeVar("_T")
_MEMO = "_memo"
"""The instance attribute (not a field) holding what was derived from a message."""
_CANONICAL = "canonical"
_DIGEST = "sha256"


@dataclass
class ChatMessage:
    """One message of a conversation, in a provider-neutral shape.

    ``tool_calls`` only on assistant messages; ``tool_call_id`` and ``name`` only on tool
    results. ``provider_data`` carries what a provider needs to replay its own turn exactly
    (e.g. Anthropic thinking blocks with their signatures, Gemini thought signatures,
    OpenAI Responses reasoning items); other providers ignore it.

    What is derived from a message is computed once and kept with it (:meth:`memo`): its
    canonical JSON (``canonical``) and that text's SHA-256 (``digest``), which the call
    record and request keys use, and the wire forms providers convert it to. Assigning a
    field forgets them; a message is otherwise treated as settled once it is in a
    conversation, so its nested values (the ``tool_calls``' arguments, ``provider_data``)
    must not be changed in place after it has been sent.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    provider_data: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for logs, records and checkpoints (nested values are shared, not
        copied: checkpoints serialise whole conversations often, so this must be cheap)."""
        data: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            "tool_calls": [
                {"name": c.name, "arguments": c.arguments, "call_id": c.call_id}
                for c in self.tool_calls
            ],
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "reasoning": self.reasoning,
            "provider_data": self.provider_data,
        }
        return {k: v for k, v in data.items() if v not in (None, [], "")} | {"role": self.role}

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if self.__dict__.pop(_MEMO, None) is not None:  # derived from the old value
            ChatMessage._edits += 1

    _edits: ClassVar[int] = 0

    @staticmethod
    def settled_edits() -> int:
        """How many times a field was assigned on a message something had been derived from
        (``memo``): work kept across messages (``prefix_fold``) is stale once this changes."""
        return ChatMessage._edits

    def __getstate__(self) -> dict[str, Any]:
        """Fields only: copies and pickles derive their own forms again when used."""
        state = dict(self.__dict__)
        state.pop(_MEMO, None)
        return state

    def memo(self, key: Hashable, build: Callable[[ChatMessage], _T]) -> _T:
        """``build(self)``, computed on the first call with this ``key`` and kept with the
        message (until a field is assigned). ``key`` must name everything besides the
        message that the value depends on; the value is shared, so callers must not change it.
        """
        memo = self.__dict__.get(_MEMO)
        if memo is None:
            memo = self.__dict__[_MEMO] = {}
        try:
            return memo[key]  # type: ignore[no-any-return]
        except KeyError:
            value = memo[key] = build(self)
            return value

    @property
    def canonical(self) -> str:
        """The message's canonical JSON as valid UTF-8, as the call record stores it (a lone
        surrogate that reached a message some other way than a model's reply, which is
        cleaned on arrival, becomes U+FFFD); computed once."""
        return self.memo(_CANONICAL, _canonical_body)

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of ``canonical``: the message's address in the record and its part
        of a request key; computed once."""
        return self.memo(_DIGEST, _digest_of)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatMessage:
        calls = [
            ToolCall(c["name"], kept_arguments(c.get("arguments", {})), c.get("call_id"))
            for c in data.get("tool_calls", [])
        ]
        return cls(
            role=data["role"],
            content=data.get("content", ""),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reasoning=data.get("reasoning"),
            provider_data=data.get("provider_data"),
        )


def _canonical_body(message: ChatMessage) -> str:
    return valid_text(canonical_json(message.to_dict()))


def _digest_of(message: ChatMessage) -> str:
    return sha256_hex(message.canonical)


@dataclass
class Usage:
    """Tokens of one call. ``input_tokens`` counts every prompt token, cached ones included.

    ``invalid`` names the counts the server reported out of range (negative, not finite,
    absurdly large): they are 0 here, the call is left unpriced, and logs say so.
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    invalid: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.invalid = tuple(self.invalid)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            tuple(dict.fromkeys(self.invalid + other.invalid)),
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts; ``invalid`` only when set, so logs of sound usage are unchanged (read
        field by field: ``asdict`` deep-copies, twice a model call)."""
        data: dict[str, Any] = {name: getattr(self, name) for name in _USAGE_COUNTS}
        if self.invalid:
            data["invalid"] = list(self.invalid)
        return data


_USAGE_COUNTS = tuple(f.name for f in fields(Usage) if f.name != "invalid")


@dataclass
class ModelOutput:
    """A model's reply, normalised: text, tool calls, reasoning, usage and cost."""

    model: str
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    stop_reason: str | None = None
    provider_data: dict[str, Any] | None = None
    cache_hit: bool = False
    """Served from the response cache (``econbench.agents.models.cache``): free, not asked."""
    truncated: dict[str, Any] | None = None
    """Set when the reply was larger than the harness keeps (``boundary.cap_reply``):
    ``original_bytes``, ``kept_bytes`` and the ``parts`` that were cut."""

    @property
    def stop(self) -> StopReason:
        """Why the reply ended, normalised (``econbench.agents.models.stop``); branch on
        this, not on ``stop_reason``, which keeps the provider's own word for the logs."""
        return normalised_stop(self.stop_reason, bool(self.tool_calls))

    def as_message(self) -> ChatMessage:
        return ChatMessage(
            role="assistant",
            content=self.text,
            tool_calls=list(self.tool_calls),
            reasoning=self.reasoning,
            provider_data=self.provider_data,
        )


RequestStyle = Literal["econbench", "paper", "coffee_paper"]
"""How a provider shapes its request: econbench's own forms, exactly the body the AlloBench
paper's ``RawChat`` sends (``econbench.agents.models.paper_wire``), or exactly the body the
CoffeeBench reference's model classes send (``econbench.agents.models.coffee_paper_wire``,
for ``econbench.agents.reference_agent.ReferenceAgent``)."""
ToolChoice = Literal["auto", "required", "none"]


@dataclass
class GenerateConfig:
    """Per-model settings; ``None`` means the provider's default."""

    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    timeout_s: float = 120.0
    extra: dict[str, Any] = field(default_factory=dict)
    tool_choice: ToolChoice | None = None
    """Sent with a request that offers tools when set ("required": Anthropic's ``any``).
    ``None``: the provider's default (econbench style: Anthropic sends none, the OpenAI
    providers their compat profile's, ``"auto"``; paper style: ``"auto"``, as the paper's
    ``chat_tools`` always sends one)."""
    request_style: RequestStyle = "econbench"
    """``"paper"``: the body the paper's ``RawChat.chat`` / ``chat_tools`` sends (Anthropic,
    OpenAI and OpenAI-compatible providers only)."""


class ModelError(Exception):
    """A model call failed; subclasses say whether and how to retry."""


class TransientModelError(ModelError):
    """Rate limit, 5xx, timeout or dropped connection: worth retrying after a pause."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ContextOverflowError(ModelError):
    """The prompt no longer fits the model's window: compact, then retry once."""


class FatalModelError(ModelError):
    """Bad key, unknown model, invalid request: stop the run cleanly (it can be resumed)."""


class ModelProvider(ABC):
    """One model behind one API. ``name`` is ``provider/model``."""

    name: str
    context_window: int = 200_000

    @abstractmethod
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """One call: the conversation (system message first) and the tools it may call."""


class WrappedProvider(ModelProvider):
    """A provider that forwards to ``inner`` (recording, a response cache, a replayed tail):
    it answers for the model's name, window, settings and limiter key, and closes ``inner``."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.context_window = getattr(inner, "context_window", ModelProvider.context_window)

    @property
    def provider(self) -> str:
        """The concurrency limiter's key (``openai``, ``anthropic``…), as ``inner`` says."""
        return str(getattr(self.inner, "provider", self.name.partition("/")[0]))

    @property
    def settings(self) -> Any:
        return getattr(self.inner, "settings", None)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if callable(close):
            await close()


ProviderWrap = Callable[[ModelProvider, str], ModelProvider]
"""Wraps an agent's provider (recording, replay, a response cache); the string names the
agent within its run (a firm id, or an AlloBench episode's ``seed-N``)."""
