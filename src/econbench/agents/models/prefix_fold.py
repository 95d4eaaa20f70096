"""Per-message work over a conversation, done once for the messages a request repeats.

An agent's requests repeat the whole conversation and append a few messages, so whatever a
provider or the call record derives message by message (wire items, their bytes, digests)
is, for all but the new messages, what the previous request derived. :class:`PrefixFolds`
keeps the state reached after the last few conversations it folded; a conversation that
starts with exactly those messages (the same objects, none edited since) resumes from that
state and folds only what follows.

Why identity, not equality: comparing message contents would cost what it saves. A message
that is edited after being folded (``ChatMessage.__setattr__``) counts as an edit
(:meth:`ChatMessage.settled_edits`), and every kept state made before it is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from operator import is_
from threading import Lock
from typing import Generic, Protocol, TypeVar

from econbench.agents.models.base import ChatMessage

_FOLDED = "folded"
"""The memo key marking a message as folded, so that editing it counts as an edit."""


class FoldState(Protocol):
    """What a fold keeps: ``add`` takes the next message (and its place)."""

    def add(self, index: int, message: ChatMessage) -> None: ...


S = TypeVar("S", bound=FoldState)


@dataclass
class _Kept(Generic[S]):
    messages: list[ChatMessage]
    settings: Hashable
    edits: int
    state: S


def _true(_message: ChatMessage) -> bool:
    return True


class PrefixFolds(Generic[S]):
    """The fold of conversations by ``start`` and ``S.add``, resuming from the longest kept
    conversation the new one begins with (which is then no longer kept: a conversation that
    forks from it is folded from its start). The returned state is kept: callers read it,
    never change it."""

    def __init__(self, start: Callable[[], S], slots: int = 8) -> None:
        self._start = start
        self._slots = slots
        self._kept: list[_Kept[S]] = []
        self._lock = Lock()

    def fold(self, messages: Sequence[ChatMessage], settings: Hashable = None) -> S:
        """The state after adding every message of ``messages`` in order. ``settings``
        names whatever besides the messages the state depends on (a kept state made under
        other settings is not resumed)."""
        with self._lock:
            return self._fold(messages, settings)

    def _fold(self, messages: Sequence[ChatMessage], settings: Hashable) -> S:
        edits = ChatMessage.settled_edits()
        self._kept = [k for k in self._kept if k.edits == edits]
        base = self._longest_prefix(messages, settings)
        if base is None:
            state, done = self._start(), 0
        else:
            state, done = base.state, len(base.messages)
            self._kept.remove(base)  # taken over: a state is only ever extended
        for index in range(done, len(messages)):
            message = messages[index]
            message.memo(_FOLDED, _true)
            state.add(index, message)
        self._kept.append(_Kept(list(messages), settings, edits, state))  # type: ignore[arg-type]
        del self._kept[: -self._slots]
        return state  # type: ignore[return-value]

    def _longest_prefix(
        self, messages: Sequence[ChatMessage], settings: Hashable
    ) -> _Kept[S] | None:
        best: _Kept[S] | None = None
        for kept in self._kept:
            n = len(kept.messages)
            if (
                kept.settings != settings
                or n > len(messages)
                or (best is not None and n <= len(best.messages))
                or (n and messages[n - 1] is not kept.messages[-1])
                or not all(map(is_, kept.messages, messages))
            ):
                continue
            best = kept
        return best
