"""AlloBench classic-RL yardstick: PPO from scratch on AlloBench-Features-v0, then scored beside
bayes, wait:2, eager and hindsight on the same evaluation seeds (default 0–999, the seeds of
``benchmarks/allo_policies.py``). Prints the training time and speed and a Markdown table.

Needs the train extra (torch, stable-baselines3).

    .venv/bin/python benchmarks/allo_yardstick.py [--timesteps 300000] [--seed 0] \
        [--episodes 1000] [--envs 8] [--cost 0] [--budget 3] [--out runs/allo/yardstick-bench]
"""

from __future__ import annotations

import argparse
import time

from econbench.allo.gym.yardstick import YardstickConfig, results_markdown, run_yardstick


def main() -> None:
    defaults = YardstickConfig()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timesteps", type=int, default=defaults.timesteps)
    ap.add_argument("--seed", type=int, default=defaults.seed)
    ap.add_argument("--episodes", type=int, default=defaults.episodes)
    ap.add_argument("--envs", type=int, default=defaults.n_envs)
    ap.add_argument("--cost", type=float, default=defaults.cost)
    ap.add_argument("--budget", type=int, default=defaults.budget)
    ap.add_argument("--out", default="runs/allo/yardstick-bench")
    args = ap.parse_args()
    cfg = YardstickConfig(
        timesteps=args.timesteps,
        seed=args.seed,
        episodes=args.episodes,
        n_envs=args.envs,
        cost=args.cost,
        budget=args.budget,
    )
    start = time.perf_counter()
    results = run_yardstick(cfg, args.out)
    total = time.perf_counter() - start
    tr, ev, pol = results["training"], results["evaluation"], results["policies"]

    print(f"training: {tr['timesteps']:,} timesteps in {tr['seconds']:.1f} s")
    print(f"speed: {tr['steps_per_second']:,.0f} timesteps/s ({cfg.n_envs} envs, 1 torch thread)")
    print(f"PPO evaluation: {ev['episodes']:,} episodes in {ev['ppo_seconds']:.1f} s")
    print(f"whole run (training, evaluation, baselines): {total:.1f} s\n")
    for name, s in pol.items():
        fs = s["first_sight_rate"]
        fs_txt = "–" if fs is None else f"{fs:.3f}"
        print(f"{name:>10}: pooled score {s['score']:.3f}, first-sight rate {fs_txt}")
    print()
    print(results_markdown(results))


if __name__ == "__main__":
    main()
