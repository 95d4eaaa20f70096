"""The paper's published tables recomputed from its stored runs: how many numbers agree, and
every one that does not.

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

from econbench.allo.paper_check import paper_checks
from econbench.allo.paper_import import import_runs

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


if __name__ == "__main__":
    main(sys.argv[1:])
