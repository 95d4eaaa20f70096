"""The offline CoffeeBench ladder: scripted roaster_A strategies against the default background.

Each strategy plays roaster_A for the whole run (90 days by default) while every other firm
plays the background policy, on the same seeds (0–9 by default). Prints, per strategy and
sorted by mean: roaster_A's net income over the seeds as mean, sample SD, the 95 %
Student-t interval of the mean (``econbench.stats``, as ``econbench report`` computes
it), min and max; then, for each strategy, its paired difference from the one ranked below it
on the same seeds, so one can see which steps of the ladder the seeds resolve. A strategy
that is not registered is skipped with a note.

    python benchmarks/coffee_ladder.py [--seeds 0-9] [--days 90] [--background NAME]
        [--strategies "passive;heuristic;probe:control"] [--workers 2]
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from multiprocessing import get_context
from typing import Any

from econbench.coffee.config import role_of
from econbench.coffee.events import NullSink
from econbench.coffee.metrics import firm_summary
from econbench.coffee.policies import UnknownPolicyError, make_policy
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig
from econbench.stats import Summary, paired_differences, summarize

FOCAL = "roaster_A"
LADDER = ("passive", "heuristic", "scripted", "haggle", "markup:1.5", "markup:2", "markup:3")
"""The offline ladder's rungs: policy names ``econbench coffee run`` accepts for roaster_A."""

# -- the background-exploit search's roasteries ------------------------------------------------
PROBES = ("control", "bisect_buyer:list_at=probe")
"""Rungs played by the search's own roasteries (``econbench.coffee.exploits``), named
``probe:<variant>``: its control (trading at public market prices) and its best tactic on
seeds 0-4 against the default background (``econbench coffee background-exploits``; re-read
it from that command's table when the background changes)."""


def exploit_search_best() -> list[str]:
    """The probe rungs, as ``probe:<variant label>``."""
    return [f"probe:{label}" for label in PROBES]


def _actor(name: str) -> Any:
    """A probe rung's actor (a ``probe:`` name), else None (a policy name ``make_policy`` knows)."""
    if not name.startswith("probe:"):
        return None
    from econbench.coffee.exploits import BACKGROUND_VARIANTS, make_probe

    label = name.removeprefix("probe:")
    if label == "control":
        return make_probe("control")
    for variants in BACKGROUND_VARIANTS.values():
        for variant in variants:
            if variant.label == label:
                return variant.build()
    raise ValueError(f"no background-exploit variant '{label}'")


def parse_seeds(text: str) -> list[int]:
    """``0-9``, ``0,2,5`` or ``3`` (one seed)."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    return seeds


def run_one(task: tuple[str, str, int, int]) -> dict[str, Any]:
    strategy, background, seed, days = task
    actor = _actor(strategy)
    agents = {"default": background} if actor else {"default": background, FOCAL: strategy}
    config = RunConfig(seed=seed, days=days, agents=agents)
    policies = {FOCAL: actor} if actor else {}
    world = CoffeeRun(config, sink=NullSink(), policies=policies).run()
    net = firm_summary(world, world.firm(FOCAL), strategy, [])["net_income"]
    return {"strategy": strategy, "seed": seed, "net": net}


def available(names: list[str]) -> list[str]:
    """The names roaster_A can play; a note for each that it cannot."""
    out = []
    for name in names:
        try:
            if _actor(name) is None:
                make_policy(name, role_of(FOCAL))
        except (UnknownPolicyError, ValueError) as exc:
            print(f"skipped '{name}': {exc}")
        else:
            out.append(name)
    return out


def _dollars(value: float) -> str:
    """Whole dollars with separators (``-0.4`` is ``0``, not ``-0``); ``–`` for NaN."""
    return "–" if math.isnan(value) else f"{round(value):,}"


def _row(name: str, s: Summary, w: int) -> str:
    ci = f"{_dollars(s.ci_lo)} to {_dollars(s.ci_hi)}" if s.has_interval else "none (n = 1)"
    sd = "–" if s.n < 2 else _dollars(s.sd)
    return (
        f"{name:<{w}}{_dollars(s.mean):>10}{sd:>9}{ci:>22}"
        f"{_dollars(s.min):>10}{_dollars(s.max):>10}{s.n:>4}"
    )


def _step_text(lower: dict[int, float], upper: dict[int, float]) -> str:
    """One rung's paired difference from the rung below, in cents: mean, interval, resolved
    or not (two near-identical strategies differ by cents, which whole dollars would hide)."""
    pair = paired_differences(lower, upper)
    d = pair.diff
    if d.n >= 2 and d.sd == 0 and d.mean == 0:
        return f"0: identical on all {d.n} seeds"
    if not d.has_interval:
        return f"{d.mean:,.2f} (no interval: n = {d.n})"
    verdict = "resolved" if pair.excludes_zero else "not resolved"
    ci = f"{d.ci_lo:,.2f} to {d.ci_hi:,.2f}"
    return f"{d.mean:,.2f} (95 % {ci}; SD {d.sd:,.2f}) {verdict}"


def main() -> None:
    default_background = RunConfig().agents["default"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--background", default=default_background, help=f"default {default_background}"
    )
    parser.add_argument("--seeds", default="0-9", help="e.g. 0-9 or 0,3,7 (default 0-9)")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--strategies",
        default=None,
        help="';'-separated roaster_A policies or probe:<variant> (a variant's label may hold "
        "commas; default: the ladder and the search's roasteries)",
    )
    args = parser.parse_args()
    seeds = parse_seeds(args.seeds)
    names = [*LADDER, *exploit_search_best()] if args.strategies is None else None
    strategies = available(names or args.strategies.split(";"))

    tasks = [(s, args.background, seed, args.days) for s in strategies for seed in seeds]
    wall = time.perf_counter()
    if args.workers > 1:
        with get_context("spawn").Pool(args.workers) as pool:
            rows = pool.map(run_one, tasks, chunksize=1)
    else:
        rows = [run_one(t) for t in tasks]
    wall = time.perf_counter() - wall

    scores = {
        name: {r["seed"]: r["net"] for r in rows if r["strategy"] == name} for name in strategies
    }
    summaries = {name: summarize(by_seed.values()) for name, by_seed in scores.items()}
    order = sorted(strategies, key=lambda name: (-summaries[name].mean, name))

    print(
        f"roaster_A ladder vs background '{args.background}': {args.days} days, seeds "
        f"{args.seeds} ({len(seeds)}); net income in $, 95 % Student-t interval of the mean"
    )
    w = max(14, 2 + max(len(name) for name in strategies))
    header = (
        f"{'strategy':<{w}}{'mean':>10}{'SD':>9}{'95 % interval':>22}{'min':>10}{'max':>10}{'n':>4}"
    )
    print(header)
    print("-" * len(header))
    for name in order:
        print(_row(name, summaries[name], w))

    print()
    print("paired differences on the same seeds, each rung minus the one below it:")
    for upper, lower in itertools.pairwise(order):
        print(f"  {upper} - {lower}: {_step_text(scores[lower], scores[upper])}")
    print(f"{len(tasks)} runs in {wall:.1f} s wall ({args.workers} workers)")


if __name__ == "__main__":
    main()
