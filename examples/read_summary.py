"""Read finished runs' summaries with pandas: one row per run and firm (CoffeeBench) or per
cell (AlloBench).

    python examples/read_summary.py runs/coffee        # any run, sweep or folder of runs

Prints roaster_A's net income per run and, over runs of one configuration, the mean and
standard deviation: what ``econbench report`` tabulates, here in a few lines of pandas.
"""

from __future__ import annotations

import argparse

import econbench


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", help="a run directory, a sweep directory or a folder of runs")
    args = parser.parse_args(argv)

    runs = econbench.load_sweep(args.path)
    summary = runs.summary
    if "firm" in summary.columns:  # CoffeeBench: one row per run and firm
        roaster = summary[summary["firm"] == "roaster_A"]
        print(roaster[["run", "label", "seed", "net_income"]].to_string(index=False))
        print(roaster.groupby("label")["net_income"].agg(["count", "mean", "std"]).to_string())
    else:  # AlloBench: one row per cell
        print(summary[["run", "framing", "policy", "score", "first_sight_rate"]].to_string())


if __name__ == "__main__":
    main()
