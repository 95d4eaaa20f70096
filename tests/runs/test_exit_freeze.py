"""A coffee run freezes what is alive at exit, so the interpreter's final collection skips it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import atexit, gc, sys
after = {}
# Registered first, so it runs last: after the command's own exit handlers.
atexit.register(lambda: print(gc.get_freeze_count() > after["run"]))
from econbench.cli import app
try:
    app(sys.argv[1:], standalone_mode=False)
finally:
    after["run"] = gc.get_freeze_count()
"""


def test_a_coffee_run_freezes_what_is_left_at_exit(tmp_path: Path) -> None:
    argv = ["coffee", "run", "--agent", "default=scripted", "--days", "2", "--quiet"]
    argv += ["--out", str(tmp_path / "run")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.splitlines()[-1] == "True", done.stdout + done.stderr
