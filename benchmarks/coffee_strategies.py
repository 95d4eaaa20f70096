"""A grid of simple roaster_A strategies against one background, over several seeds.

Each strategy plays roaster_A for the whole run (90 days by default) while every other firm
plays the background policy; the runs are in memory, deterministic, and independent, so two
worker processes share them. Prints, per strategy and sorted by mean: roaster_A's net income
(mean ± sample std, min, max over the seeds), roaster_B's mean net income, roaster_A's mean
revenue and mean kg sold, and the wall time. A strategy or background that is not
registered (yet) is skipped with a note.

    python benchmarks/coffee_strategies.py [--background scripted] [--seeds 0-4] [--days 90]
"""

from __future__ import annotations

import argparse
import statistics
import time
from multiprocessing import get_context
from typing import Any

from econbench.coffee.config import FIRMS, role_of
from econbench.coffee.events import NullSink
from econbench.coffee.metrics import firm_summary
from econbench.coffee.policies import UnknownPolicyError, make_policy
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig

FOCAL = "roaster_A"
RIVAL = "roaster_B"
STRATEGIES = (
    "passive",
    "heuristic",
    "scripted",
    "markup:1.2",
    "markup:1.5",
    "markup:2",
    "markup:3",
    "markup:ceiling",
    "undercut",
    "hoard",
    "haggle",
)


def parse_seeds(text: str) -> list[int]:
    """``0-4``, ``0,2,5`` or ``3`` (one seed)."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    return seeds


def run_one(task: tuple[str, str, int, int]) -> dict[str, Any]:
    strategy, background, seed, days = task
    config = RunConfig(seed=seed, days=days, agents={"default": background, FOCAL: strategy})
    world = CoffeeRun(config, sink=NullSink()).run()
    a = firm_summary(world, world.firm(FOCAL), strategy, [])
    b = world.firm(RIVAL)
    return {
        "strategy": strategy,
        "seed": seed,
        "net": a["net_income"],
        "rival": b.books.net_income / 100,
        "revenue": a["revenue"],
        "kg": sum(a["sold_kg"].values()),
        "bankrupt": a["bankrupt"],
    }


def unavailable(name: str, roles: list[str]) -> str | None:
    """Why ``name`` cannot play ``roles``, or None."""
    for role in roles:
        try:
            make_policy(name, role)
        except UnknownPolicyError as exc:
            return str(exc)
    return None


def main() -> None:
    default_background = RunConfig().agents["default"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--background",
        default=default_background,
        help=f"policy of every other firm (default {default_background}; also negotiating)",
    )
    parser.add_argument("--seeds", default="0-4", help="e.g. 0-4 or 0,3,7 (default 0-4)")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--strategies", default=",".join(STRATEGIES), help="comma-separated roaster_A policies"
    )
    args = parser.parse_args()
    seeds = parse_seeds(args.seeds)

    others = sorted({role_of(f) for f in FIRMS})
    why = unavailable(args.background, others)
    if why is not None:
        print(f"background '{args.background}' is not available: {why}")
        return
    strategies = []
    for name in args.strategies.split(","):
        why = unavailable(name, ["roaster"])
        if why is None:
            strategies.append(name)
        else:
            print(f"skipped '{name}': {why}")

    tasks = [(s, args.background, seed, args.days) for s in strategies for seed in seeds]
    wall = time.perf_counter()
    if args.workers > 1:
        with get_context("spawn").Pool(args.workers) as pool:
            rows = pool.map(run_one, tasks, chunksize=1)
    else:
        rows = [run_one(t) for t in tasks]
    wall = time.perf_counter() - wall

    table = []
    for name in strategies:
        mine = [r for r in rows if r["strategy"] == name]
        nets = [r["net"] for r in mine]
        table.append(
            {
                "strategy": name,
                "mean": statistics.fmean(nets),
                "std": statistics.stdev(nets) if len(nets) > 1 else 0.0,
                "min": min(nets),
                "max": max(nets),
                "rival": statistics.fmean(r["rival"] for r in mine),
                "revenue": statistics.fmean(r["revenue"] for r in mine),
                "kg": statistics.fmean(r["kg"] for r in mine),
                "bankrupt": sum(r["bankrupt"] for r in mine),
            }
        )
    table.sort(key=lambda r: (-r["mean"], r["strategy"]))

    print(
        f"roaster_A strategies vs background '{args.background}': {args.days} days, "
        f"seeds {seeds[0]}..{seeds[-1]} ({len(seeds)} seeds); net income in $"
    )
    w = max(16, 2 + max(len(name) for name in strategies))
    header = (
        f"{'strategy':<{w}}{'A mean':>10} {'± std':>9}{'A min':>11}{'A max':>11}"
        f"{'B mean':>11}{'A revenue':>12}{'A kg sold':>11}{'bankrupt':>10}"
    )
    print(header)
    print("-" * len(header))
    for r in table:
        print(
            f"{r['strategy']:<{w}}{r['mean']:>10,.0f} {'± ' + format(r['std'], ',.0f'):>9}"
            f"{r['min']:>11,.0f}{r['max']:>11,.0f}{r['rival']:>11,.0f}"
            f"{r['revenue']:>12,.0f}{r['kg']:>11,.0f}{r['bankrupt']:>10}"
        )
    print(f"{len(tasks)} runs in {wall:.1f} s wall ({args.workers} workers)")


if __name__ == "__main__":
    main()
