"""Sweep throughput by backend: a scripted AlloBench sweep of 24 small cells, end to end.

Runs ``econbench allo sweep`` (r0,r1 x eager,wait:2,wait:3 x B 1,3 x K 0,10; a few
episodes per cell) with ``--backend inline --workers 1``, the worker pool (``local``) and
the process per run (``process``) with ``--workers 2``, each into a fresh directory, and
prints the median wall time and CPU (the sweep and its workers) over ``--repeat`` runs,
then each against inline. The pool is timed three ways: as it starts its workers on this
machine (on Linux forked from the planned sweep), with fresh interpreters started while
the sweep is planned (``ECONBENCH_POOL_START=spawn``, as on other platforms:
``runs/pool_prestart.py``), and with fresh interpreters started only once it is planned.
The variants are interleaved, so that a change of load falls on all. The cells are so
small that start-up is what is measured (econbench's bytecode is compiled first,
``_bytecode``, as an installed package has it).

    .venv/bin/python benchmarks/sweep_throughput.py [--episodes 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _bytecode import compile_econbench

CELLS = [
    "--framings", "r0,r1",
    "--policies", "eager,wait:2,wait:3",
    "--budgets", "1,3",
    "--costs", "0,10",
]  # fmt: skip
LATE_START = (
    "import sys; from econbench.runs import pool_prestart; "
    "pool_prestart.prestart_for = lambda args: None; "
    "from econbench.cli import app; app(sys.argv[1:], prog_name='econbench')"
)
"""``econbench`` whose pool starts its workers only once the sweep is planned (without
``runs/pool_prestart.py``)."""


@dataclass(frozen=True)
class Variant:
    label: str
    backend: str
    workers: int
    spawn: bool = False  # ECONBENCH_POOL_START=spawn: fresh interpreters, never forked
    late: bool = False  # and started only once the sweep is planned


VARIANTS = (
    Variant("--backend inline  --workers 1", "inline", 1),
    Variant("--backend local   --workers 2", "local", 2),
    Variant("--backend process --workers 2", "process", 2),
    Variant("the pool, fresh workers started early", "local", 2, spawn=True),
    Variant("the pool, fresh workers started once planned", "local", 2, spawn=True, late=True),
)


def one_sweep(variant: Variant, episodes: int, out: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the sweep and its workers) of a sweep."""
    entry = ["-c", LATE_START] if variant.late else ["-m", "econbench.cli"]
    cmd = [sys.executable, *entry, "allo", "sweep", *CELLS, "--episodes", str(episodes)]
    cmd += ["--workers", str(variant.workers), "--backend", variant.backend]
    cmd += ["--out", str(out), "--quiet"]
    env = {**os.environ, "ECONBENCH_POOL_START": "spawn" if variant.spawn else "fork"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"error: {variant.label} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3, help="Episodes per cell.")
    parser.add_argument("--repeat", type=int, default=3, help="Sweeps per variant (median).")
    args = parser.parse_args()
    compile_econbench()
    runs: dict[Variant, list[tuple[float, float]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):  # interleaved, so that a change of load falls on all
            for n, variant in enumerate(VARIANTS):
                runs[variant].append(one_sweep(variant, args.episodes, Path(tmp) / f"{n}-{i}"))
    walls = {}
    for variant, timed in runs.items():
        walls[variant] = wall = statistics.median(w for w, _ in timed)
        cpu = statistics.median(c for _, c in timed)
        print(
            f"{variant.label:<46}: {wall:5.2f} s wall, {cpu:5.2f} s CPU "
            f"(24 cells x {args.episodes} episodes, median of {args.repeat})",
            flush=True,
        )
    inline = walls[VARIANTS[0]]
    for variant in VARIANTS[1:]:
        print(f"{variant.label:<46} / inline: {walls[variant] / inline:.2f}x wall")


if __name__ == "__main__":
    main()
