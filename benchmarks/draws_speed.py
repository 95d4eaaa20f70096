"""CPU time per draw of ``econbench.coffee.draws.Draws`` against numpy's ``default_rng``, for
each kind of draw the economy makes, and the CPU cost of importing each in a fresh process.

Each figure is the median over ``--repeats`` of ``time.process_time`` around a loop; CPU time
rather than wall time, since other work on a shared machine then changes it less. The import
figures are whole ``python -c`` processes (start-up included) read with
``getrusage(RUSAGE_CHILDREN)``, medians of ``--repeats`` runs.

    .venv/bin/python benchmarks/draws_speed.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

from econbench.coffee.draws import Draws

SEED = 2**63 - 25


def shipping_rolls(make: Callable[..., object], count: int) -> None:
    for deal in range(count):
        make([SEED, 3, deal, 17]).random()


def valuations(make: Callable[..., object], count: int) -> None:
    for firm in range(count):
        rng = make([SEED, 0x4E45474F, firm])
        for _ in range(10):
            rng.uniform(1.15, 1.60)


def demand_noise(make: Callable[..., object], count: int) -> None:
    for run in range(count):
        rng = make([SEED + run, 1])
        rng.normal(0.0, 0.5, 90)
        rng.normal(0.0, 0.5, 90)


def long_normal(make: Callable[..., object], count: int) -> None:
    make([SEED, 1]).normal(0.0, 1.0, count)


CASES = {  # label: (case, count); a figure is the case's CPU time over count
    "seed + random() (a shipping roll)": (shipping_rolls, 2000),
    "seed + 10 uniform (a firm's valuations)": (valuations, 1000),
    "seed + 2 x normal(0, sd, 90) (a run's demand noise)": (demand_noise, 300),
    "normal, per draw (one long stream)": (long_normal, 200_000),
}


def cpu_per_call(
    case: Callable[..., None], make: Callable[..., object], count: int, repeats: int
) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        case(make, count)
        times.append(time.process_time() - start)
    return statistics.median(times) / count


def import_cpu(module: str, repeats: int) -> float:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    times = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.repeats}; CPU time")
    print(f"{'case':<55} {'Draws':>11} {'numpy':>11} {'ratio':>7}")
    for label, (case, count) in CASES.items():
        ours = cpu_per_call(case, Draws, count, args.repeats)
        theirs = cpu_per_call(case, np.random.default_rng, count, args.repeats)
        print(f"{label:<55} {ours * 1e6:>8.2f} us {theirs * 1e6:>8.2f} us {ours / theirs:>7.2f}")
    bare = import_cpu("sys", args.repeats)
    for module in ("econbench", "econbench.coffee.draws", "numpy"):
        extra = import_cpu(module, args.repeats) - bare
        print(f"import {module:<48} {extra * 1e3:>8.1f} ms CPU over a bare interpreter")


if __name__ == "__main__":
    main()
