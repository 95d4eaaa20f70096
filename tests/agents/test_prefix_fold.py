"""A request's repeated messages are not converted again (issue 27, ``prefix_fold``).

Whatever a provider or the call record derives message by message is resumed from the last
conversation the new one extends. The property that must hold whatever the sequence of
requests (conversations growing, several interleaved on one provider, forks, edits of
messages already sent, copies): the result is exactly what a fresh fold of the same messages
gives — the same wire items, the same bytes, the same digests.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openai._utils._json import openapi_dumps

from econbench.agents.models.base import ChatMessage
from econbench.agents.models.openai_provider import OpenAIChatProvider, OpenAIResponsesProvider
from econbench.agents.models.prefix_fold import PrefixFolds
from econbench.agents.models.record import _Digests
from econbench.agents.tools import ToolCall

KEY = "sk-test-0123456789abcdef"
URL = "http://127.0.0.1:9/v1"  # never contacted: only requests are built


class Counting:
    """A fold state that notes which messages it was given."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def add(self, index: int, message: ChatMessage) -> None:
        self.seen.append(f"{index}:{message.content}")


def counting_folds() -> tuple[PrefixFolds[Counting], list[int]]:
    """Folds whose states count, and the list of how many messages each fold added."""
    added: list[int] = []

    class Noted(Counting):
        def add(self, index: int, message: ChatMessage) -> None:
            added.append(index)
            super().add(index, message)

    return PrefixFolds(Noted), added


def test_a_growing_conversation_adds_only_its_new_messages() -> None:
    folds, added = counting_folds()
    messages = [ChatMessage("system", "S")]
    for day in range(5):
        messages.append(ChatMessage("user", f"day {day}"))
        state = folds.fold(messages)
        assert state.seen == [f"{i}:{m.content}" for i, m in enumerate(messages)]
    assert added == list(range(6))  # each message once


def test_interleaved_conversations_each_resume_from_their_own() -> None:
    folds, added = counting_folds()
    a = [ChatMessage("system", "A")]
    b = [ChatMessage("system", "B")]
    for day in range(4):
        for conversation in (a, b):
            conversation.append(ChatMessage("user", f"day {day}"))
            folds.fold(conversation)
    assert len(added) == len(a) + len(b)


def test_an_edit_of_a_folded_message_is_never_served_stale() -> None:
    folds, _ = counting_folds()
    messages = [ChatMessage("system", "S"), ChatMessage("user", "old")]
    folds.fold(messages)
    messages[1].content = "new"
    messages.append(ChatMessage("user", "next"))
    assert folds.fold(messages).seen == ["0:S", "1:new", "2:next"]


def test_other_settings_or_other_objects_do_not_resume() -> None:
    folds, added = counting_folds()
    messages = [ChatMessage("user", "a"), ChatMessage("user", "b")]
    folds.fold(messages, settings="x")
    folds.fold(messages, settings="y")
    assert added == [0, 1, 0, 1]
    equal_copies = [copy.copy(m) for m in messages]
    folds.fold(equal_copies, settings="x")
    assert added == [0, 1, 0, 1, 0, 1]
    assert folds.fold(messages, settings="y").seen == ["0:a", "1:b"]  # kept, not added again
    assert added == [0, 1, 0, 1, 0, 1]


def test_a_fork_folds_its_own_branch() -> None:
    folds, _ = counting_folds()
    trunk = [ChatMessage("system", "S"), ChatMessage("user", "u")]
    folds.fold(trunk)
    left = folds.fold([*trunk, ChatMessage("user", "left")])
    right = folds.fold([*trunk, ChatMessage("user", "right")])
    assert left.seen == ["0:S", "1:u", "2:left"]
    assert right.seen == ["0:S", "1:u", "2:right"]


# ---------------------------------------------------------------- the providers' folds
def message_pool() -> st.SearchStrategy[ChatMessage]:
    """Messages of every role, tool turns with and without call ids and stored output."""
    text = st.sampled_from(["", "ok", "Buying 5 kg.", "é 咖啡", "note"])
    call_id = st.sampled_from([None, "c1", "c2", "c3"])
    call = st.builds(ToolCall, st.sampled_from(["buy", "sell"]), st.just({"qty": 2}), call_id)
    output = st.just({"openai_responses": {"output": [{"type": "message", "id": "m1"}]}})
    return st.one_of(
        st.builds(ChatMessage, st.just("system"), text),
        st.builds(ChatMessage, st.just("user"), text),
        st.builds(
            ChatMessage,
            st.just("assistant"),
            text,
            st.lists(call, max_size=2),
            provider_data=st.one_of(st.none(), output),
        ),
        st.builds(
            ChatMessage,
            st.just("tool"),
            st.just('{"ok":true}'),
            tool_call_id=call_id,
            name=st.sampled_from([None, "buy"]),
        ),
    )


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 2), st.lists(message_pool(), max_size=3)),
        st.tuples(st.just("fork"), st.integers(0, 2), st.integers(0, 12)),
        st.tuples(st.just("edit"), st.integers(0, 2), st.integers(0, 12)),
        st.tuples(st.just("copy"), st.integers(0, 2), st.none()),
    ),
    min_size=1,
    max_size=12,
)


def providers() -> dict[str, Any]:
    return {
        "responses": lambda: OpenAIResponsesProvider("m", api_key=KEY, base_url=URL),
        "chat": lambda: OpenAIChatProvider("m", api_key=KEY, base_url=URL),
        "compatible": lambda: OpenAIChatProvider(
            "m", api_key=KEY, base_url=URL, name="openai-compatible/m", replay_reasoning=True
        ),
    }


def requested(provider: Any, messages: list[ChatMessage]) -> tuple[Any, bytes]:
    """What the provider sends for ``messages``: its keyword arguments and the bytes it
    assembles for the conversation."""
    kwargs, conversation = provider._request(messages, [], _config())
    return json.loads(json.dumps(kwargs)), conversation.encoded()


def _config() -> Any:
    from econbench.agents.models.base import GenerateConfig

    return GenerateConfig()


@settings(max_examples=60, deadline=None)
@given(ops=OPS, start=st.lists(message_pool(), min_size=1, max_size=4))
def test_every_fold_equals_a_fresh_one(ops: list[Any], start: list[ChatMessage]) -> None:
    warm = {name: make() for name, make in providers().items()}
    digests: PrefixFolds[_Digests] = PrefixFolds(_Digests)
    conversations = [list(start), list(start[:1]), []]
    for op, which, arg in ops:
        messages = conversations[which]
        if op == "append":
            messages.extend(arg)
        elif op == "fork":
            conversations[which] = messages = list(messages[: arg % (len(messages) + 1)])
        elif op == "edit" and messages:
            messages[arg % len(messages)].content += " (edited)"
        elif op == "copy":
            conversations[which] = messages = [copy.copy(m) for m in messages]
        if not messages:
            continue
        fresh_messages = [copy.copy(m) for m in messages]
        for name, make in providers().items():
            kwargs, encoded = requested(warm[name], messages)
            want_kwargs, want_encoded = requested(make(), fresh_messages)
            assert kwargs == want_kwargs, name
            assert encoded == want_encoded, name
            field = "input" if name == "responses" else "messages"
            assert encoded == openapi_dumps(want_kwargs[field])
        assert digests.fold(messages).hashes == [m.digest for m in fresh_messages]
