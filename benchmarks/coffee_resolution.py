"""How many seeds resolve a $500 difference in roaster_A's CoffeeBench score, measured.

roaster_A plays a fixed scripted strategy (``heuristic`` by default), once as it is and once
trivially perturbed: on its first wake on or after day 10 it makes one extra read-only tool
call (``view_listings`` by default) before it carries on exactly as it would have. The
perturbation changes nothing the strategy decides; it only spends a little simulated time,
which shifts when the other firms see roaster_A act. Whatever the score difference is, it is
noise, and its spread over seeds is the resolution of the benchmark.

Both versions run on the same seeds (90 days, the default background), so the seeds pair.
Prints the per-seed scores and differences, the SD of the differences σ_d, and the fewest
seeds n whose 95 % interval is at most ±$500 wide:

- paired (both configurations on the same n seeds, the report's ``score_paired``):
  t_{0.975, n−1} · σ_d / √n ≤ 500;
- unpaired (each configuration on its own n seeds): t_{0.975, 2n−2} · σ · √(2/n) ≤ 500, σ the
  pooled SD of the two versions' scores.

    python benchmarks/coffee_resolution.py [--seeds 0-19] [--days 90] [--strategy heuristic]
        [--background NAME] [--day 10] [--tool view_listings] [--delta 500] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from multiprocessing import get_context
from typing import Any

from econbench.agents.policy import Actor, Input, Observation, Reply, ToolResult
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.coffee.config import role_of
from econbench.coffee.events import NullSink
from econbench.coffee.metrics import firm_summary
from econbench.coffee.policies import make_policy
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig
from econbench.stats import paired_differences, seeds_for_half_width, summarize

FOCAL = "roaster_A"


class ExtraReadCall:
    """``inner``, plus one read-only tool call on its first wake on or after ``day``.

    The extra call is made before ``inner`` sees the wake; its result is thrown away and
    ``inner`` is then handed the wake's inputs unchanged (followed by any wake that came with
    the extra call's result), so it decides what it would have decided, only a tool call
    later. It acts through the tools alone.
    """

    def __init__(self, inner: Actor, day: int, tool: str) -> None:
        self.inner, self.day, self.tool = inner, day, tool
        self.name = f"{inner.name}+{tool}@{day}"
        self.made_on: int | None = None
        """The day the extra call was made (``None`` until then)."""
        self.result: dict[str, Any] | None = None
        self._held: list[Input] | None = None

    def start(self, actor_id: str, role: str, tools: list[ToolSpec], **kw: Any) -> None:
        kinds = {spec.name: spec.kind for spec in tools}
        if kinds.get(self.tool) != "read":
            raise ValueError(f"{self.tool!r} is not a read-only tool of a {role}")
        self.inner.start(actor_id, role, tools, **kw)

    def respond(self, inputs: Sequence[Input]) -> Reply:
        if self._held is not None:  # the extra call's result, perhaps with a new wake
            results = [i for i in inputs if isinstance(i, ToolResult)]
            self.result = results[0].result if results else None
            held, self._held = self._held, None
            return self.inner.respond(
                [*held, *(i for i in inputs if not isinstance(i, ToolResult))]
            )
        wake = next((i for i in inputs if isinstance(i, Observation)), None)
        if self.made_on is None and wake is not None and wake.data["day"] >= self.day:
            self.made_on, self._held = wake.data["day"], list(inputs)
            return Reply(tool_calls=[ToolCall(self.tool, {})])
        return self.inner.respond(inputs)


def parse_seeds(text: str) -> list[int]:
    """``0-19``, ``0,2,5`` or ``3`` (one seed)."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    return seeds


def run_one(task: tuple[str, str, int, int, int | None, str]) -> dict[str, Any]:
    """One run; ``day`` None is the unperturbed strategy."""
    strategy, background, seed, days, day, tool = task
    config = RunConfig(seed=seed, days=days, agents={"default": background, FOCAL: strategy})
    policies: dict[str, Actor] = {}
    wrapper = None
    if day is not None:
        inner = make_policy(strategy, role_of(FOCAL), seed=seed, firm_id=FOCAL)
        wrapper = ExtraReadCall(inner, day, tool)
        policies[FOCAL] = wrapper
    world = CoffeeRun(config, sink=NullSink(), policies=policies).run()
    net = firm_summary(world, world.firm(FOCAL), strategy, [])["net_income"]
    out: dict[str, Any] = {"seed": seed, "perturbed": day is not None, "net": net}
    if wrapper is not None:
        status = (wrapper.result or {}).get("status")
        out |= {"made_on": wrapper.made_on, "extra_ok": status == "success"}
    return out


def _money(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:,.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_background = RunConfig().agents["default"]
    parser.add_argument("--seeds", default="0-19", help="e.g. 0-19 or 0,3,7 (default 0-19)")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--strategy", default="heuristic", help="roaster_A's scripted policy")
    parser.add_argument(
        "--background", default=default_background, help=f"default {default_background}"
    )
    parser.add_argument("--day", type=int, default=10, help="day of the extra call")
    parser.add_argument("--tool", default="view_listings", help="the extra read-only tool")
    parser.add_argument("--delta", type=float, default=500.0, help="difference to resolve, $")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds = parse_seeds(args.seeds)

    tasks = [
        (args.strategy, args.background, seed, args.days, day, args.tool)
        for seed in seeds
        for day in (None, args.day)
    ]
    wall = time.perf_counter()
    if args.workers > 1:
        with get_context("spawn").Pool(args.workers) as pool:
            rows = pool.map(run_one, tasks, chunksize=1)
    else:
        rows = [run_one(t) for t in tasks]
    wall = time.perf_counter() - wall

    base = {r["seed"]: r["net"] for r in rows if not r["perturbed"]}
    pert = {r["seed"]: r["net"] for r in rows if r["perturbed"]}
    extra = {r["seed"]: r for r in rows if r["perturbed"]}
    print(
        f"roaster_A = {args.strategy} vs the same plus one {args.tool} call on day {args.day}; "
        f"background {args.background}, {args.days} days, seeds {args.seeds} "
        f"({len(seeds)}); net income in $"
    )
    header = f"{'seed':>5}{'base':>13}{'perturbed':>13}{'difference':>13}  extra call"
    print(header)
    print("-" * len(header))
    for seed in seeds:
        made = extra[seed]
        if made["made_on"] is None:
            call = "not made"
        else:
            call = f"day {made['made_on']}" + ("" if made["extra_ok"] else " (error)")
        print(
            f"{seed:>5}{base[seed]:>13,.2f}{pert[seed]:>13,.2f}"
            f"{pert[seed] - base[seed]:>13,.2f}  {call}"
        )

    pair = paired_differences(base, pert)
    d = pair.diff
    a, b = summarize(base.values()), summarize(pert.values())
    pooled = math.sqrt((a.sd**2 + b.sd**2) / 2)
    unchanged = sum(1 for s in seeds if pert[s] == base[s])
    largest = max(abs(pert[s] - base[s]) for s in seeds)
    print()
    for name, summary in (("base", a), ("perturbed", b)):
        print(
            f"{name + ':':<11}mean {_money(summary.mean)}, SD {_money(summary.sd)}, "
            f"min {_money(summary.min)}, max {_money(summary.max)}, "
            f"95 % interval ±{_money(summary.half_width)}"
        )
    print(
        f"difference (perturbed - base): mean {_money(d.mean)}, σ_d {_money(d.sd)}, "
        f"95 % interval {_money(d.ci_lo)} to {_money(d.ci_hi)}; n = {d.n}, "
        f"{unchanged} unchanged, largest |difference| {_money(largest)}"
    )
    paired_n = seeds_for_half_width(d.sd, args.delta)
    unpaired_n = seeds_for_half_width(pooled, args.delta, paired=False)
    print(
        f"seeds for a 95 % interval of ±${args.delta:,.0f}: paired {paired_n} "
        f"(t·σ_d/√n, σ_d = {_money(d.sd)}); unpaired {unpaired_n} per configuration "
        f"(t·σ·√(2/n), pooled σ = {_money(pooled)})"
    )
    print(f"{len(tasks)} runs in {wall:.1f} s wall ({args.workers} workers)")


if __name__ == "__main__":
    main()
