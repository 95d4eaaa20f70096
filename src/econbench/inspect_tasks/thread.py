"""Play an econbench run beside Inspect's event loop, and stop it cleanly when Inspect says.

econbench plays a run on an event loop of its own (``asyncio.run`` in the coffee clock, one
loop per AlloBench cell), which cannot nest in Inspect's. So the run goes to a thread of its
own — a dedicated one, never Inspect's worker pool, which a 90-day run would hold for hours —
started in a copy of the sample's context, so the bridges bound there (and Inspect's
transcript, limits and model roles) follow it.

When Inspect cancels the sample (a time or working limit, the user interrupting), the bridges
refuse every further call and cancel the ones in flight; econbench stops the run at that
call as it stops on any fatal model error — checkpoint kept, summary written — and only then
is the cancellation passed on, so the scorer reads a finished directory and a retry continues
from the checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import anyio
import sniffio

from econbench.inspect_tasks.bridge import InspectBridge, bind

_T = TypeVar("_T")
CANCELLED = "the Inspect sample was cancelled (a time or working limit, or an interrupt)"


def check_backend() -> None:
    """The bridge hands calls between asyncio loops; Inspect's trio backend has none."""
    library = sniffio.current_async_library()
    if library != "asyncio":
        raise RuntimeError(
            f"econbench's Inspect tasks run on Inspect's asyncio backend, not {library}: "
            "unset INSPECT_ASYNC_BACKEND"
        )


async def play_beside(bridges: Sequence[InspectBridge], play: Callable[[], _T]) -> _T:
    """``play()`` in its own thread, the bridges bound; its result, or its exception."""
    check_backend()
    loop = asyncio.get_running_loop()
    done: asyncio.Future[_T] = loop.create_future()
    with bind(bridges):
        context = contextvars.copy_context()

    def settle(result: _T | None, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        try:
            result = context.run(play)
        except BaseException as exc:  # handed to the awaiting task, raised there
            outcome: tuple[_T | None, BaseException | None] = (None, exc)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # Inspect's loop is gone: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=target, name="econbench-run", daemon=True).start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        if not done.done():
            for bridge in bridges:
                bridge.stop(CANCELLED)
            with anyio.CancelScope(shield=True):
                await asyncio.wait([done])  # the run stops at its next call, writes its files
            if not done.cancelled():
                done.exception()  # seen: the cancellation is what goes on
        raise
