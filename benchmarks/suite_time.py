"""Wall and CPU time of the test command, and its slowest tests.

``make test`` is ruff, then ``pytest -n 2``; this runs those same two steps from the
repository (or, with ``--clean-clone``, the whole ``bash .ci/run`` in a fresh clone of it,
installation included) and prints the wall time, the CPU time of every process it started
(``getrusage(RUSAGE_CHILDREN)``), pytest's own summary line and its slowest tests. On a
shared machine the wall time moves with the machine's speed; the CPU time shows whether the
work itself changed.

    .venv/bin/python benchmarks/suite_time.py [--slowest 10] [--clean-clone]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SUMMARY = re.compile(r"^=*\s*\d+ passed.*$", re.MULTILINE)
_DURATION = re.compile(r"^\s*\d+\.\d+s (?:call|setup|teardown)\s+\S+.*$", re.MULTILINE)


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the processes it started, and its output (it must pass)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slowest", type=int, default=10, help="Slowest tests to list.")
    parser.add_argument(
        "--clean-clone", action="store_true", help="Time bash .ci/run in a fresh clone."
    )
    args = parser.parse_args()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}  # as `make test` sets it
    env["PYTEST_ADDOPTS"] = f"--durations={args.slowest}"
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.clean_clone:
        with tempfile.TemporaryDirectory(prefix="econbench-clone-") as tmp:
            # Readable by all, as a checkout is: the sandbox tests run code as ``nobody``.
            os.chmod(tmp, 0o755)
            clone = Path(tmp) / "econbench"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
            wall, cpu, output = timed(["bash", ".ci/run"], clone, env)
        label = "bash .ci/run in a clean clone (installation included)"
    else:
        bin_dir = Path(sys.executable).parent
        ruff_wall, ruff_cpu, _ = timed([str(bin_dir / "ruff"), "check", "."], ROOT, env)
        wall, cpu, output = timed([sys.executable, "-m", "pytest", "-n", "2"], ROOT, env)
        wall, cpu = wall + ruff_wall, cpu + ruff_cpu
        label = "make test's steps (ruff check, pytest -n 2)"
    print(f"{label}: {minutes(wall)} wall, {minutes(cpu)} CPU")
    summary = _SUMMARY.findall(output)
    print(f"pytest: {summary[-1].strip('= ') if summary else '(no summary line)'}")
    print(f"slowest {args.slowest}:")
    for match in _DURATION.finditer(output):
        print(f"  {match.group(0).strip()}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
