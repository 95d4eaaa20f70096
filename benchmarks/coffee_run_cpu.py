"""CPU cost of ``econbench coffee run`` for the 90-day all-scripted economy, and where it goes.

1. The whole command (``coffee run --agent default=scripted --quiet``), start-up included:
   CPU (user + system) of each process from ``getrusage(RUSAGE_CHILDREN)``; the issue's
   target is 0.6 s.
2. A breakdown from a fresh interpreter per run, read with ``time.process_time``: importing
   the command's modules, then one ``run_to_dir`` split into writing events (the event
   sink's ``write``), checkpoints (the end-of-tick callback: flushing the logs, hashing
   their new lines, serialising the state, replacing the file) of which the state's JSON,
   and the simulation proper (the rest of the run: rules, tools, policies, observations,
   the summary). The timing wrappers add a few milliseconds.
3. What the whole command spends outside those parts ("outside the run"): the interpreter's
   start-up and ``site``, Typer building and parsing the command (its pydantic adapters),
   loading the config, and the interpreter's exit: the median over the runs of each whole
   command minus the total of the breakdown taken next to it. The breakdown freezes the
   collector's generations before the run as ``run_one`` does, so its parts cost what they
   cost in the command.

Each figure is the median of ``--runs`` runs, the whole commands and the breakdowns taken in
turn so that both see the same load, printed with the load average: CPU time on a busy
shared machine reads high.

    .venv/bin/python benchmarks/coffee_run_cpu.py [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from startup import cpu_of, with_bytecode  # the sibling script: one way to time a process

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.6
"""The issue's target for the whole command, CPU seconds."""
PARTS = ("imports", "simulation", "event writing", "checkpoints", "  of which state JSON")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def command(out: Path) -> list[str]:
    script = Path(sys.executable).with_name("econbench")  # the installed entry point
    exe = [str(script)] if script.is_file() else [sys.executable, "-m", "econbench.cli"]
    run = [*exe, "coffee", "run", "--agent", "default=scripted", "--days", "90", "--quiet"]
    return [*run, "--overwrite", "--out", str(out)]


def _timed(owner: Any, attr: str, totals: dict[str, float], part: str) -> None:
    """Replace ``owner.attr`` with a wrapper adding its CPU time to ``totals[part]``."""
    inner: Callable[..., Any] = getattr(owner, attr)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            totals[part] += time.process_time() - start

    setattr(owner, attr, wrapper)


def child(out: Path) -> dict[str, float]:
    """One breakdown, in this (fresh) interpreter."""
    start = time.process_time()
    import econbench.cli
    import econbench.runs.coffee.cli  # noqa: F401
    from econbench.coffee.events import JsonlSink
    from econbench.coffee.sim import CoffeeRun
    from econbench.runs.coffee.config import load_config
    from econbench.runs.coffee.run import run_to_dir

    imports = time.process_time() - start
    totals = dict.fromkeys(PARTS, 0.0)
    _timed(JsonlSink, "write", totals, "event writing")
    _timed(CoffeeRun, "_checkpoint", totals, "checkpoints")
    _timed(CoffeeRun, "state_json", totals, "  of which state JSON")
    config = load_config(None, {"seed": 0, "days": 90, "agents": {"default": "scripted"}})
    gc.freeze()  # as ``run_one`` does before the first seed
    start = time.process_time()
    run_to_dir(config, out, overwrite=True)
    whole = time.process_time() - start
    totals["imports"] = imports
    totals["simulation"] = whole - totals["event writing"] - totals["checkpoints"]
    return totals


def breakdown(out: Path) -> dict[str, float]:
    argv = [sys.executable, __file__, "--child", str(out)]
    done = subprocess.run(argv, cwd=ROOT, env=with_bytecode(None), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the in-process run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="Runs per figure (median).")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)))
        return
    with tempfile.TemporaryDirectory(prefix="econbench-coffee-cpu-") as tmp:
        out = Path(tmp) / "run"
        print(f"load average at start: {load_average()}")
        cpu_of(command(out), ROOT)  # warm the file cache and the bytecode
        whole: list[float] = []
        rows: list[dict[str, float]] = []
        for _ in range(args.runs):  # interleaved, so both figures see the same load
            whole.append(cpu_of(command(out), ROOT))
            rows.append(breakdown(out))
        spread = f"[{min(whole):.3f}–{max(whole):.3f}]"
        print(
            f"whole command, 90 days, all scripted: {statistics.median(whole):.3f} s CPU "
            f"{spread}  (target ≤ {TARGET_S:.2f} s; median of {args.runs})"
        )
        print(f"in-process breakdown, CPU s (median of {args.runs} fresh interpreters):")
        for part in PARTS:
            values = [row[part] for row in rows]
            spread = f"[{min(values):.3f}–{max(values):.3f}]"
            print(f"  {part:<22} {statistics.median(values):7.3f}  {spread}")
        total = statistics.median(sum(row[p] for p in PARTS[:4]) for row in rows)
        print(f"  {'total':<22} {total:7.3f}")
        outside = statistics.median(
            w - sum(row[p] for p in PARTS[:4]) for w, row in zip(whole, rows, strict=True)
        )
        print(f"  {'outside the run':<22} {outside:7.3f}  (whole command − total)")
        print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
