"""The ``inspect_ai`` entry point: importing it registers econbench's tasks with Inspect
(``[project.entry-points.inspect_ai]`` in pyproject.toml), as ``econbench/coffeebench`` and
``econbench/allobench``."""

from econbench.inspect_tasks.allo import allobench
from econbench.inspect_tasks.coffee import coffeebench

__all__ = ["allobench", "coffeebench"]
