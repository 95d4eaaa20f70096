"""econbench: CoffeeBench and AlloBench, benchmarks of LLM agents making economic decisions.

To run either benchmark from Python with your own policy or model function:
``econbench.run_coffee(...)``, ``econbench.run_allo(...)`` and their ``resume_*`` (the stable
API, ``econbench.api``; docs/python_api.md). For notebooks: ``econbench.load_run(path)``,
``econbench.load_runs(paths)`` and ``econbench.load_sweep(path)`` read runs as pandas
DataFrames (``econbench.runs.frames``). All are imported on first use, so the command line
starts without pandas.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {"load_run", "load_runs", "load_sweep"}
_API = {"run_coffee", "run_allo", "resume_coffee", "resume_allo"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from econbench.runs import frames

        return getattr(frames, name)
    if name in _API:
        from econbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'econbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, *_API])
