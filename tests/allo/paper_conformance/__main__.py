"""Replay fixture files through econbench and print how its requests compare with the paper's.

    .venv/bin/python -m tests.allo.paper_conformance [FILE_OR_CONDITION ...]
        [--seeds 2000-2003,5000] [--condition NAME] [--all-episodes]

Arguments are fixture files (``r1_claim_haiku``) or econbench condition names (``frontier``:
every file the table plays with it); none means every file. Per file it prints the episodes
and requests on each side and, unless all are identical, the first differing request with the
difference (messages, system prompt, tool schemas, tool results or params). ``--seeds``
replays only those seeds (default: all of each file's); ``--condition`` plays the files with
another condition than the table's; ``--all-episodes`` prints every differing episode's first
difference, not only the file's first.
"""

from __future__ import annotations

import argparse
import sys
import time

from tests.allo.paper_conformance import diff, fixture, replay
from tests.allo.paper_conformance.stub import RecordingStub


def parse_seeds(text: str) -> list[int]:
    """``2000-2003,5000`` -> [2000, 2001, 2002, 2003, 5000]."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-", 1)
            out += range(int(lo), int(hi) + 1)
        elif part:
            out.append(int(part))
    return out


def select(names: list[str]) -> list[str]:
    if not names:
        return list(replay.TABLE)
    out: list[str] = []
    for name in names:
        if name in replay.TABLE:
            out.append(name)
            continue
        chosen = [f for f, e in replay.TABLE.items() if e.condition == name]
        if not chosen:
            known = sorted({e.condition for e in replay.TABLE.values()})
            raise SystemExit(
                f"unknown fixture file or condition {name!r}; files: {', '.join(replay.TABLE)}; "
                f"conditions: {', '.join(known)}"
            )
        out += chosen
    return list(dict.fromkeys(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tests.allo.paper_conformance", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("names", nargs="*", help="fixture files or condition names (default: all)")
    ap.add_argument("--seeds", help="e.g. 2000-2003,5000 (default: every seed of each file)")
    ap.add_argument("--condition", help="play with this condition instead of the table's")
    ap.add_argument("--all-episodes", action="store_true", help="every episode's difference")
    args = ap.parse_args(argv)
    seeds = parse_seeds(args.seeds) if args.seeds else None
    differing = 0
    with RecordingStub() as stub:
        for file in select(args.names):
            t0 = time.perf_counter()
            episodes = fixture.episodes(file, seeds)
            if not episodes:
                print(f"{file}: no episode of seeds {args.seeds}\n")
                continue
            got = replay.replay(file, episodes, stub, condition=args.condition)
            report = diff.compare(file, episodes, got)
            entry = replay.TABLE[file]
            print(
                f"[{args.condition or entry.condition} {entry.rung} {entry.model}, "
                f"{time.perf_counter() - t0:.1f} s] {report.summary()}"
            )
            if args.all_episodes:
                for e in report.episodes[1:]:
                    if not e.identical and e is not next(
                        x for x in report.episodes if not x.identical
                    ):
                        print(f"  {e.label}: {diff._indent(e.first or '')}")
            print()
            differing += not report.identical
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
