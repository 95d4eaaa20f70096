"""Sweep throughput by backend: a scripted AlloBench sweep of 24 small cells, end to end.

Runs ``econbench allo sweep`` (r0,r1 x eager,wait:2,wait:3 x B 1,3 x K 0,10; a few
episodes per cell) with ``--backend inline --workers 1``, the worker pool (``local``) and
the process per run (``process``) with ``--workers 2``, each into a fresh directory, and
prints the median wall time and CPU (the sweep and its workers) over ``--repeat`` runs,
then pool / inline. The cells are so small that start-up is what is measured (econbench's
bytecode is compiled first, ``_bytecode``, as an installed package has it).

    .venv/bin/python benchmarks/sweep_throughput.py [--episodes 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import compile_econbench

CELLS = [
    "--framings", "r0,r1",
    "--policies", "eager,wait:2,wait:3",
    "--budgets", "1,3",
    "--costs", "0,10",
]  # fmt: skip
BACKENDS = (("inline", 1), ("local", 2), ("process", 2))


def one_sweep(backend: str, workers: int, episodes: int, out: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the sweep and its workers) of a sweep."""
    cmd = [sys.executable, "-m", "econbench.cli", "allo", "sweep", *CELLS]
    cmd += ["--episodes", str(episodes), "--workers", str(workers), "--backend", backend]
    cmd += ["--out", str(out), "--quiet"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"error: {backend} sweep exited {done.returncode}: {done.stderr.strip()[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3, help="Episodes per cell.")
    parser.add_argument("--repeat", type=int, default=3, help="Sweeps per backend (median).")
    args = parser.parse_args()
    compile_econbench()
    walls: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend, workers in BACKENDS:
            runs = [
                one_sweep(backend, workers, args.episodes, Path(tmp) / f"{backend}-{i}")
                for i in range(args.repeat)
            ]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            walls[backend] = wall
            print(
                f"--backend {backend:<7} --workers {workers}: {wall:5.2f} s wall, "
                f"{cpu:5.2f} s CPU (24 cells x {args.episodes} episodes, median of "
                f"{args.repeat})",
                flush=True,
            )
    print(f"pool / inline: {walls['local'] / walls['inline']:.2f}x wall")
    print(f"process / inline: {walls['process'] / walls['inline']:.2f}x wall")


if __name__ == "__main__":
    main()
