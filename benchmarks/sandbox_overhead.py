"""Per-run overhead of each available R3 sandbox backend.

Prints wall-clock figures for a trivial ``solve`` and for every family's reference code,
next to a bare ``python -I -S -c pass`` start, so the sandbox's own cost is visible.
Usage: ``.venv/bin/python benchmarks/sandbox_overhead.py [--runs 30]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from econbench.allo.game.families import FAMILIES, instance_for
from econbench.allo.sandbox.core import (
    Sandbox,
    _bubblewrap_works,
    _interpreter,
    available_backend,
    bwrap_path,
)

TRIVIAL = "def solve(inputs):\n    return inputs['x'] + 1\n"


def _summary(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"mean {statistics.fmean(ms):7.1f} ms  median {statistics.median(ms):7.1f} ms  "
        f"p95 {p95:7.1f} ms  min {ms[0]:7.1f} ms"
    )


def bare_python(runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([_interpreter(), "-I", "-S", "-c", "pass"], check=True)
        out.append(time.perf_counter() - start)
    return out


def sandbox_runs(backend: str, runs: int) -> tuple[list[float], list[float]]:
    sb = Sandbox(backend=backend)
    trivial = []
    for _ in range(runs):
        start = time.perf_counter()
        res = sb.run(TRIVIAL, {"x": 1})
        trivial.append(time.perf_counter() - start)
        assert res.ok and res.value == 2, res
    families = []
    for i in range(runs):
        cls = i % len(FAMILIES)
        inst = instance_for(2000, i, cls)
        start = time.perf_counter()
        res = sb.run(FAMILIES[cls].reference_code, inst.params)
        families.append(time.perf_counter() - start)
        assert res.ok and res.value == inst.answer, res
    return trivial, families


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    backends = ["rlimit"]
    if bwrap_path() and _bubblewrap_works():
        backends.insert(0, "bubblewrap")
    print(f"bwrap: {bwrap_path() or 'not installed'}; auto backend: {available_backend()}")
    print(f"{'bare python -I -S':<28}{_summary(bare_python(args.runs))}")
    for backend in backends:
        trivial, families = sandbox_runs(backend, args.runs)
        layers = ", ".join(Sandbox(backend=backend).run(TRIVIAL, {"x": 1}).layers)
        print(f"{backend + ' trivial':<28}{_summary(trivial)}")
        print(f"{backend + ' family refs':<28}{_summary(families)}")
        print(f"{'':<28}layers: {layers}")


if __name__ == "__main__":
    main()
