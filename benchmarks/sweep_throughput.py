"""Sweep throughput by backend: a scripted AlloBench sweep of 24 small cells, end to end.

Runs ``econbench allo sweep`` (r0,r1 x eager,wait:2,wait:3 x B 1,3 x K 0,10; a few
episodes per cell) with ``--backend inline --workers 1``, the worker pool (``local``) and
the process per run (``process``) with ``--workers 2``, each into a fresh directory, and
prints the median wall time and CPU (the sweep and its workers) over ``--repeat`` runs,
then pool / inline, and the pool once more with its workers started only after the
sweep is planned (what ``runs/pool_prestart.py`` buys). The cells are so small that
start-up is what is measured (econbench's bytecode is compiled first, ``_bytecode``, as an
installed package has it).

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
LATE_START = (
    "import sys; from econbench.runs import pool_prestart; "
    "pool_prestart.prestart_for = lambda args: None; "
    "from econbench.cli import app; app(sys.argv[1:], prog_name='econbench')"
)
"""``econbench`` whose pool starts its workers only once the sweep is planned (without
``runs/pool_prestart.py``), to show what starting them early buys."""


def one_sweep(
    backend: str, workers: int, episodes: int, out: Path, early_workers: bool = True
) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the sweep and its workers) of a sweep."""
    entry = ["-m", "econbench.cli"] if early_workers else ["-c", LATE_START]
    cmd = [sys.executable, *entry, "allo", "sweep", *CELLS]
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
    variants = [(backend, workers, True) for backend, workers in BACKENDS]
    variants.append(("local", 2, False))
    runs: dict[tuple[str, int, bool], list[tuple[float, float]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):  # interleaved, so that a change of load falls on all
            for backend, workers, early in variants:
                out = Path(tmp) / f"{backend}-{'early' if early else 'late'}-{i}"
                runs[backend, workers, early].append(
                    one_sweep(backend, workers, args.episodes, out, early_workers=early)
                )
    walls: dict[str, float] = {}
    for (backend, workers, early), timed in runs.items():
        wall = statistics.median(w for w, _ in timed)
        cpu = statistics.median(c for _, c in timed)
        walls[backend if early else "late"] = wall
        label = (
            f"--backend {backend:<7} --workers {workers}"
            if early
            else "the pool, its workers started once the sweep is planned"
        )
        print(
            f"{label}: {wall:5.2f} s wall, {cpu:5.2f} s CPU (24 cells x {args.episodes} "
            f"episodes, median of {args.repeat})",
            flush=True,
        )
    print(f"pool / inline: {walls['local'] / walls['inline']:.2f}x wall")
    print(f"process / inline: {walls['process'] / walls['inline']:.2f}x wall")
    print(f"pool without the early start / inline: {walls['late'] / walls['inline']:.2f}x wall")


if __name__ == "__main__":
    main()
