"""AlloBench speed figures: vectorised and single-env decisions/s, `bayes` solve time and memory.

Also measures the loss of the count-capped `bayes` against the exact optimum on configurations
small enough to solve exactly (``--gap``): ``exact.evaluate(capped)`` is the exact expected net
utility of the capped policy's decisions, so the printed gap has no sampling noise.

    .venv/bin/python benchmarks/allo_speed.py [--envs 4096] [--episodes 200] [--gap]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from econbench.allo.game.stream import StreamConfig
from econbench.allo.gym.envs import AlloFeaturesEnv, AlloR0Env
from econbench.allo.gym.vector import VectorFeaturesGame
from econbench.allo.solvers.bayes import DEFAULT_CAP, BayesSolver, RuleActor


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_vector(n_envs: int, rounds: int) -> None:
    game = VectorFeaturesGame()
    decisions, step_s, reset_s = 0, 0.0, 0.0
    for r in range(rounds):
        t0 = time.perf_counter()
        game.reset(range(r * n_envs, (r + 1) * n_envs))
        t1 = time.perf_counter()
        while not game.done.all():
            decisions += int((~game.done).sum())
            game.step((game.sightings() >= 2).astype(np.int64))  # wait:2
        t2 = time.perf_counter()
        reset_s += t1 - t0
        step_s += t2 - t1
    print(
        f"vector features game, {n_envs} envs x {rounds} rounds (wait:2): "
        f"{decisions / step_s:,.0f} decisions/s stepping; "
        f"{decisions / (step_s + reset_s):,.0f} decisions/s including stream generation "
        f"({n_envs * rounds / reset_s:,.0f} streams/s)"
    )


def bench_single(env_cls: type, episodes: int) -> None:
    env = env_cls()
    rng = np.random.default_rng(0)
    decisions = 0
    t0 = time.perf_counter()
    for seed in range(episodes):
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, _ = env.step(int(rng.random() < 0.3))
            decisions += 1
    dt = time.perf_counter() - t0
    print(
        f"{env_cls.__name__}: {decisions / dt:,.0f} decisions/s ({episodes} episodes, "
        f"random 30 % KEEP, reset included)"
    )


def bench_bayes(cost: float, budget: int, cap: int | None) -> None:
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    s = BayesSolver(StreamConfig(budget=budget), cost=cost, cap=cap).solve()
    dt = time.perf_counter() - t0
    print(
        f"bayes solve K={cost:g} B={budget} cap={s.cap}: {dt:.1f} s, {s.n_states:,} states, "
        f"table {s.nbytes / 2**20:.1f} MiB, peak RSS +{_rss_mb() - rss0:.0f} MiB, "
        f"V0 (model value) {s.value0:.3f}"
    )


def bench_gap(configs: list[tuple[str, StreamConfig, float]], caps: list[int]) -> None:
    print("\n| config | exact V0 | exact states | cap | states | loss of capped policy |")
    print("|---|---|---|---|---|---|")
    for label, cfg, cost in configs:
        t0 = time.perf_counter()
        exact = BayesSolver(cfg, cost=cost, cap=None).solve()
        dt = time.perf_counter() - t0
        for cap in caps:
            capped = BayesSolver(cfg, cost=cost, cap=cap).solve()
            loss = exact.value0 - exact.evaluate(capped)
            print(
                f"| {label} | {exact.value0:.4f} ({dt:.0f} s) | {exact.n_states:,} | {cap} | "
                f"{capped.n_states:,} | {loss:.2e} ({loss / exact.value0:.1e} rel) |"
            )
        for rule in ("posterior:0.88", "wait:2"):
            loss = exact.value0 - exact.evaluate(RuleActor(rule, cfg, cost))
            print(f"| {label} | | | `{rule}` | | {loss:.3f} ({loss / exact.value0:.1e} rel) |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--gap", action="store_true", help="also measure the capped-vs-exact gap")
    args = ap.parse_args()
    bench_vector(args.envs, args.rounds)
    bench_single(AlloFeaturesEnv, args.episodes)
    bench_single(AlloR0Env, args.episodes)
    bench_bayes(0.0, 3, DEFAULT_CAP)
    bench_bayes(10.0, 3, DEFAULT_CAP)
    bench_bayes(0.0, 5, DEFAULT_CAP)
    if args.gap:
        bench_gap(
            [
                ("T=24 K=0", StreamConfig(n_tasks=24), 0.0),
                ("T=24 K=4", StreamConfig(n_tasks=24), 4.0),
                ("N=6 n_hot=2 T=30 K=0", StreamConfig(n_classes=6, n_hot=2, n_tasks=30), 0.0),
            ],
            [2, 3, 4],
        )


if __name__ == "__main__":
    main()
