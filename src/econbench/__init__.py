"""econbench: CoffeeBench and AlloBench, benchmarks of LLM agents making economic decisions.

For notebooks: ``econbench.load_run(path)``, ``econbench.load_runs(paths)`` and
``econbench.load_sweep(path)`` read runs as pandas DataFrames (``econbench.runs.frames``).
They are imported on first use, so the command line starts without pandas.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {"load_run", "load_runs", "load_sweep"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from econbench.runs import frames

        return getattr(frames, name)
    raise AttributeError(f"module 'econbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
