"""An AlloBench cell played by a reference policy (no model, no API key).

    python examples/allo_reference_cell.py --framing r0 --policy wait:2 --episodes 24

By default the paper's 24 evaluation seeds (2000-2023); prints the pooled score (Σ utility /
Σ hindsight optimum), the first-sight commitment rate and each episode's score.
"""

from __future__ import annotations

import argparse

from econbench import api


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--framing", default="r0", help="r0, r1, r2 or r3")
    parser.add_argument("--policy", default="wait:2", help="eager, wait:K, posterior:P, bayes, …")
    parser.add_argument("--episodes", type=int, default=24, help="seeds from 2000 on")
    parser.add_argument("--cost", type=float, default=0.0, help="K, the charge per build")
    parser.add_argument("--budget", type=int, default=3, help="B, the builds allowed")
    parser.add_argument("--out", default=None, help="cell directory (default: a new temp dir)")
    args = parser.parse_args(argv)

    result = api.run_allo(
        framing=args.framing,
        actor=args.policy,
        seeds=args.episodes,
        cost=args.cost,
        budget=args.budget,
        out=args.out,
    )
    summary = result.summary
    print(
        f"{args.policy} on {args.framing}: pooled score {summary['score']:.3f}, "
        f"first-sight rate {summary['first_sight_rate']}"
    )
    print(result.frames.episodes[["seed", "score"]].to_string(index=False))
    print(f"cell directory: {result.run_dir}")


if __name__ == "__main__":
    main()
