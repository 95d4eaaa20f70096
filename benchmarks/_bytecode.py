"""Compile econbench's bytecode before timing anything.

An installed econbench has its ``.pyc`` files (pip compiles a wheel when it installs it),
but an editable install run where ``PYTHONDONTWRITEBYTECODE`` is set (many containers, this
project's machines) compiles every module again in every process; a sweep's workers and the
processes the scripts start would then be timed compiling. The scripts measure the installed
state: this writes the bytecode once, as ``make test`` does.
"""

from __future__ import annotations

import compileall
from pathlib import Path

import econbench


def compile_econbench() -> None:
    """Write the ``.pyc`` of every econbench module whose bytecode is missing or stale."""
    compileall.compile_dir(Path(econbench.__file__).parent, quiet=1)
