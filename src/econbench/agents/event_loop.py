"""One event loop for a synchronous caller, closing the model clients it opened.

A model provider's HTTP client belongs to the event loop it first ran on (its connection
pool does). Whoever starts a loop for agents (``asyncio.run`` around a run, a one-call
``respond``) closes their clients before that loop ends: a client left to the garbage
collector cannot close its connections on a loop that is gone, and the OpenAI SDK's aiohttp
transport says so on stderr ("Unclosed client session"). While the loop runs, the objects
alive before it are left out of the garbage collector's passes (``heap_frozen``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Coroutine, Iterable, Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")


async def aclose_all(owners: Iterable[object]) -> None:
    """Await ``aclose()`` of every owner that has one (an agent, a provider), in order; a
    connection that fails to close hides nothing (the call's own error, if any, is raised)."""
    for owner in owners:
        close = getattr(owner, "aclose", None)
        if callable(close):
            with contextlib.suppress(Exception):
                await close()


def run_closing(main: Coroutine[Any, Any, _T], owners: Iterable[object]) -> _T:
    """``asyncio.run(main)``, then ``aclose_all(owners)`` on the same loop (also when
    ``main`` raises), the objects alive before it left out of the collector's passes."""

    async def closing() -> _T:
        try:
            return await main
        finally:
            await aclose_all(owners)

    with heap_frozen():
        return asyncio.run(closing())


@contextlib.contextmanager
def heap_frozen() -> Iterator[None]:
    """While the block runs, the cyclic garbage collector leaves out the objects alive when
    it began (``gc.freeze``): the imported modules and the SDKs' types are most of a
    process's objects, and a full collection walked them all (90 ms, once or twice in a
    model's 90-day run: ``benchmarks/model_path.py``). Garbage among them waits for the
    block's end; nothing else changes (reference counting frees as before)."""
    if gc.get_freeze_count():  # an enclosing block (or the program) froze them already
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
