"""How fast the all-scripted 90-day CoffeeBench economy runs, and how big its log gets.

Prints, per configuration: CPU and wall seconds per run (in memory, and writing the run
directory), tool calls per CPU second, and the size of events.jsonl per tool call — which
should stay flat as runs get longer (output grows with activity, not with open listings).

    python benchmarks/coffee_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from econbench.coffee.events import NullSink
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import run_to_dir


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    CoffeeRun(RunConfig(days=2), sink=NullSink()).run()  # warm caches (tool schemas, imports)

    cpu_mem, calls = [], 0
    for seed in range(args.runs):
        world, _, cpu = timed(lambda s=seed: CoffeeRun(RunConfig(seed=s), sink=NullSink()).run())
        cpu_mem.append(cpu)
        calls = sum(sum(f.tool_calls.values()) for f in world.state.firms.values())
    print(f"all-scripted 90-day run, in memory ({args.runs} seeds):")
    print(f"  CPU s/run   median {statistics.median(cpu_mem):.3f}  min {min(cpu_mem):.3f}")
    rate = calls / statistics.median(cpu_mem)
    print(f"  tool calls/run {calls}  ->  {rate:,.0f} calls per CPU s")

    with tempfile.TemporaryDirectory() as tmp:
        walls, cpus = [], []
        for seed in range(args.runs):
            out = Path(tmp) / f"s{seed}"
            _, wall, cpu = timed(lambda o=out, s=seed: run_to_dir(RunConfig(seed=s), o))
            walls.append(wall)
            cpus.append(cpu)
        print("writing the run directory (events, daily, summary):")
        print(f"  wall s/run  median {statistics.median(walls):.3f}")
        print(f"  CPU s/run   median {statistics.median(cpus):.3f}")
        print("log size against run length (seed 0):")
        for days in (30, 60, 90, 180):
            out = Path(tmp) / f"d{days}"
            summary = run_to_dir(RunConfig(days=days), out)
            size = (out / "events.jsonl").stat().st_size
            n_calls = sum(f["tool_calls"] for f in summary["firms"].values())
            print(
                f"  {days:>3} days: events.jsonl {size / 1e6:6.2f} MB, {n_calls:6d} tool calls, "
                f"{size / n_calls:6.0f} bytes per tool call"
            )


if __name__ == "__main__":
    main()
