"""The paper's published tables recomputed from its stored runs: how many numbers agree, and
every one that does not; then the reference policies on the paper's economic surface (Table 9's
cells, the default streams), with the paper's hindsight optimum beside econbench's.

    python benchmarks/allo_paper_tables.py                 # the distilled runs in tests/allo/data
    python benchmarks/allo_paper_tables.py PATH/runs       # a fresh fetch of the paper's runs/
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import EVAL_SEEDS, StreamConfig, generate_streams
from econbench.allo.paper import published as P
from econbench.allo.solvers.policies import make_policy, play_many
from econbench.runs.allo.paper_check import paper_checks
from econbench.runs.allo.paper_import import import_runs

REFERENCE_POLICIES = ("eager", "wait:2", "bayes", "never")

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "allo" / "data"


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if argv:
            runs = Path(argv[0])
        else:
            sys.path.insert(0, str(FIXTURE))
            from make_paper_runs_fixture import extract

            runs = extract(Path(tmp) / "runs")
        started = time.perf_counter()
        skipped: list[str] = []
        cells = import_runs(runs, Path(tmp) / "cells", skipped.append)
        imported = time.perf_counter() - started
        families = [
            (json.loads((d / "config.json").read_text())["source"]["family"], d) for d in cells
        ]
        checks = paper_checks(families)
        checked = time.perf_counter() - started - imported
    print(f"imported {len(cells)} cells ({len(skipped)} folders skipped) in {imported:.1f} s")
    by_table = Counter(c.table for c in checks)
    status = Counter(c.status for c in checks)
    print(
        f"{len(checks)} published numbers checked in {checked:.1f} s: "
        + ", ".join(f"{t} {n}" for t, n in by_table.items())
    )
    print(
        f"  agree within the paper's rounding: {status['yes']}; interval ends within 1 point: "
        f"{status['≈']}; differ: {status['no']}"
    )
    for c in checks:
        if c.status != "yes":
            print(
                f"  {c.status:2s} {c.table:16s} {c.row:24s} {c.measure:18s} "
                f"paper {c.paper:7.{c.digits}f}  econbench {c.ours:7.{c.digits + 1}f}"
            )


def reference_surface() -> None:
    """Reference policies at Table 9's (B, K) cells on seeds 2000-2023 (the game is the same in
    every framing; the framing tests check the policies score the bare game's results)."""
    streams = generate_streams(EVAL_SEEDS, StreamConfig())
    print("reference policies on the paper's surface (seeds 2000-2023, fixed B = 3 streams):")
    print(
        f"  {'(B, K)':9s} {'paper opt':>9s} {'opt':>6s}  "
        + "  ".join(f"{p:>20s}" for p in REFERENCE_POLICIES)
    )
    cells = sorted({(b, k) for _, b, k in P.ECON_FULL})
    for b, k in cells:
        paper_opt = P.ECON_FULL[("r0", b, k)][2]
        row = []
        opt = None
        for name in REFERENCE_POLICIES:
            stats = summarize(play_many(make_policy(name), streams, float(k), b))
            opt = stats["net_optimum_mean"]
            row.append(f"net {stats['net_mean']:6.1f} reg {stats['regret_mean']:5.1f}")
        print(
            f"  ({b}, {k:2d})   {paper_opt:9.1f} {opt:6.1f}  " + "  ".join(f"{c:>20s}" for c in row)
        )


if __name__ == "__main__":
    main(sys.argv[1:])
    reference_surface()
