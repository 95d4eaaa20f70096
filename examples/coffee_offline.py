"""An offline CoffeeBench run through ``econbench.api``: every firm scripted, no API key.

    python examples/coffee_offline.py --days 90 --seed 0 --out runs/examples/coffee

Prints roaster_A's score (its ledger net income) and every firm's net income and revenue.
"""

from __future__ import annotations

import argparse

from econbench import api


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--roaster", default="heuristic", help="roaster_A's scripted policy")
    parser.add_argument("--out", default=None, help="run directory (default: a new temp dir)")
    args = parser.parse_args(argv)

    result = api.run_coffee(
        seed=args.seed, days=args.days, actors={"roaster_A": args.roaster}, out=args.out
    )
    print(f"roaster_A ({args.roaster}) earned ${result.net_income:,.2f} in {args.days} days")
    print(result.frames.summary[["firm", "policy", "net_income", "revenue"]].to_string(index=False))
    print(f"run directory: {result.run_dir}")


if __name__ == "__main__":
    main()
