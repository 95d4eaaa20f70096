"""Run a test's body in a fresh interpreter.

The pool forks its workers only from a process running a single thread, and a test process
has often started others by then (a server fixture, an executor, a client's pool), so a test
of the forked workers plays in a process of its own: a spawned one, which runs one thread.
Its arguments (the fixtures' values) and its outcome cross by pickling; the environment and
the working directory are this process's.
"""

from __future__ import annotations

import functools
import importlib
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any


def in_fresh_process(test: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(test)  # pytest reads the fixtures from the test's own signature
    def run(*args: Any, **kwargs: Any) -> None:
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=spawn) as pool:
            pool.submit(_call, test.__module__, test.__name__, args, kwargs).result()

    return run


def _call(module: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    getattr(importlib.import_module(module), name).__wrapped__(*args, **kwargs)
