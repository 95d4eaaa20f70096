"""The seat between the run and the person: the run asks in its thread, the person answers in
theirs (a terminal loop, a web page's requests).

The run plays in a thread of its own (``asyncio`` inside ``run_to_dir``); when the person's
firm is to act, :meth:`RemoteSeat.ask` publishes the turn — what a model would be sent, plus
the firm's live panels, read at that moment — and waits. The person's side takes it with
:meth:`RemoteSeat.wait_turn` and answers with :meth:`RemoteSeat.answer`. While the run waits
for the person nothing in the world moves (the firms of one group decide on the same state),
so panels read when the turn is published stay true until it is answered.

:meth:`RemoteSeat.leave` ends the game from the person's side (``quit``, the end of piped
input, Ctrl-C, the page's *Stop*): the waiting turn, and any later one, raises
``PlayerLeft`` in the run, which stops without a summary; ``econbench resume`` continues it.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from econbench.agents.models.base import ModelOutput
from econbench.agents.models.human import PlayerLeft, Turn

Context = Callable[[], dict[str, Any]]
"""Reads what the page and the terminal show beside the conversation (a firm's panels and
clock), in the run's thread, without acting."""


@dataclass
class PendingTurn:
    """A turn the person is to answer: its number in this session, the request, the context
    read when it was published, and how to hand the answer back to the run's loop."""

    number: int
    turn: Turn
    context: dict[str, Any]
    _loop: asyncio.AbstractEventLoop = field(repr=False)
    _future: asyncio.Future[ModelOutput] = field(repr=False)

    def resolve(self, output: ModelOutput) -> None:
        self._loop.call_soon_threadsafe(_settle, self._future, output, None)

    def fail(self, error: BaseException) -> None:
        self._loop.call_soon_threadsafe(_settle, self._future, None, error)


def _settle(
    future: asyncio.Future[ModelOutput], output: ModelOutput | None, error: BaseException | None
) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert output is not None
        future.set_result(output)


class RemoteSeat:
    """A ``Seat`` whose person answers from another thread (see the module docstring)."""

    def __init__(self, context: Context | None = None) -> None:
        self.context = context
        self._cond = threading.Condition()
        self._pending: PendingTurn | None = None
        self._numbers = itertools.count(1)
        self._left: str | None = None
        self.finished = False
        """Set by the session when the run is over (completed, stopped or failed)."""

    async def ask(self, turn: Turn) -> ModelOutput:
        """Publish ``turn`` and wait for the person's answer (``PlayerLeft`` once they left)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ModelOutput] = loop.create_future()
        context = self.context() if self.context is not None else {}
        with self._cond:
            if self._left is not None:
                raise PlayerLeft(self._left)
            pending = PendingTurn(next(self._numbers), turn, context, loop, future)
            self._pending = pending
            self._cond.notify_all()
        try:
            return await future
        finally:
            with self._cond:
                if self._pending is pending:
                    self._pending = None
                self._cond.notify_all()

    # ------------------------------------------------------------ the person's side
    def wait_turn(self, timeout: float | None = None) -> PendingTurn | None:
        """The turn waiting for an answer, once there is one (``None`` after ``timeout``
        seconds, or once the run is over)."""
        with self._cond:
            self._cond.wait_for(lambda: self._pending is not None or self.finished, timeout)
            return self._pending

    @property
    def left(self) -> str | None:
        """Why the person left, once they did."""
        with self._cond:
            return self._left

    @property
    def pending(self) -> PendingTurn | None:
        with self._cond:
            return self._pending

    def answer(self, number: int, output: ModelOutput) -> bool:
        """Answer turn ``number``; ``False`` when it is no longer the waiting one (answered
        already, from another tab)."""
        with self._cond:
            pending = self._pending
            if pending is None or pending.number != number:
                return False
            self._pending = None
        pending.resolve(output)
        return True

    def leave(self, reason: str) -> None:
        """The person leaves: the waiting turn and every later one raise ``PlayerLeft``."""
        with self._cond:
            self._left = reason
            pending, self._pending = self._pending, None
            self._cond.notify_all()
        if pending is not None:
            pending.fail(PlayerLeft(reason))

    def close(self) -> None:
        """The run is over: wake whoever waits for a turn."""
        with self._cond:
            self.finished = True
            self._cond.notify_all()
