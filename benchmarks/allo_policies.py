"""AlloBench reference policies: Markdown tables of their scores (no model involved).

Table 1: every reference policy over seeds 0..N-1 (default 1,000) at K=0, B=3.
Table 2: eager, wait:2, posterior:0.88 and bayes across K in {0,10,20,24} x B in {1,3,5}.
Streams: the paper's generator and, as the runner by default, each seed's B = 3 stream in every
cell (``--stream-budget fixed``); ``--stream-budget cell`` draws them with the cell's B (the
trap-early window is then the first B positions), ``--streams numpy`` uses econbench's earlier
generator. Configurations run in parallel processes (``--jobs``).

    .venv/bin/python benchmarks/allo_policies.py [--episodes 1000] [--jobs 4]
        [--streams paper|numpy] [--stream-budget fixed|cell]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import (
    GENERATORS,
    STREAM_BUDGETS,
    StreamConfig,
    generate_streams,
    stream_config_for,
)
from econbench.allo.solvers.policies import REFERENCE_POLICIES, make_policy, play_many

MAIN_POLICIES = [*REFERENCE_POLICIES[:2], "wait:3", *REFERENCE_POLICIES[2:]]
GRID_POLICIES = ["eager", "wait:2", "posterior:0.88", "bayes"]
GRID_K = [0.0, 10.0, 20.0, 24.0]
GRID_B = [1, 3, 5]


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def run(
    spec: str,
    episodes: int,
    cost: float,
    budget: int,
    streams: str = "paper",
    stream_budget: str = "fixed",
) -> tuple[str, float, int, dict]:
    cfg = stream_config_for(StreamConfig(generator=streams), budget, stream_budget)  # type: ignore[arg-type]
    streams = generate_streams(range(episodes), cfg)
    t0 = time.perf_counter()
    summary = summarize(play_many(make_policy(spec, cfg, cost, budget), streams, cost, budget))
    return spec, cost, budget, {**summary, "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--grid-episodes", type=int, default=None, help="default: --episodes")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--streams", choices=GENERATORS, default="paper")
    ap.add_argument("--stream-budget", choices=STREAM_BUDGETS, default="fixed")
    args = ap.parse_args()
    n, ng = args.episodes, args.grid_episodes or args.episodes
    how = (args.streams, args.stream_budget)

    with ProcessPoolExecutor(args.jobs) as pool:
        main_jobs = [pool.submit(run, spec, n, 0.0, 3, *how) for spec in MAIN_POLICIES]
        grid_jobs = [
            pool.submit(run, spec, ng, k, b, *how)
            for b in GRID_B
            for k in GRID_K
            for spec in GRID_POLICIES
        ]
        main_rows = [j.result() for j in main_jobs]
        grid_rows = [j.result() for j in grid_jobs]

    print(f"Streams: {args.streams} generator, stream budget {args.stream_budget}\n")
    print(f"### Reference policies, K = 0, B = 3, seeds 0–{n - 1}\n")
    print(
        "| policy | pooled score | per-episode mean [95 % CI] | first-sight rate | "
        "trap commits / ep | sighting at commit (1 = first) | mean utility |"
    )
    print("|---|---|---|---|---|---|---|")
    for spec, _, _, s in main_rows:
        lo, hi = s["score_ci"]
        print(
            f"| `{spec}` | {_fmt(s['score'])} | {s['score_mean']:.3f} [{lo:.3f}, {hi:.3f}] | "
            f"{_fmt(s['first_sight_rate'])} | {s['trap_commits_mean']:.2f} | "
            f"{_fmt(s['lateness1_mean'], 2)} | {s['utility_mean']:.2f} |"
        )

    print(f"\n### Economic grid, seeds 0–{ng - 1}: pooled score (first-sight rate)\n")
    print("| B | K | mean OPT | " + " | ".join(f"`{p}`" for p in GRID_POLICIES) + " |")
    print("|---|---|---|" + "---|" * len(GRID_POLICIES))
    table = {(spec, k, b): s for spec, k, b, s in grid_rows}
    for b in GRID_B:
        for k in GRID_K:
            cells = []
            for spec in GRID_POLICIES:
                s = table[(spec, k, b)]
                cells.append(f"{_fmt(s['score'])} ({_fmt(s['first_sight_rate'], 2)})")
            opt = table[(GRID_POLICIES[0], k, b)]["opt_mean"]
            print(f"| {b} | {k:g} | {opt:.2f} | " + " | ".join(cells) + " |")
    print("\nmean net utility per episode (same grid):\n")
    print("| B | K | " + " | ".join(f"`{p}`" for p in GRID_POLICIES) + " |")
    print("|---|---|" + "---|" * len(GRID_POLICIES))
    for b in GRID_B:
        for k in GRID_K:
            cells = [f"{table[(spec, k, b)]['utility_mean']:.2f}" for spec in GRID_POLICIES]
            print(f"| {b} | {k:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
