"""Write paper_instances.json: digests of the problem instances the paper's own generator draws
for settings the request fixture (paper_requests/) does not cover: the "sonnet" and "opus"
profiles at several magnitudes, small and large magnitudes, and the fallback path (no early
trap in 2,000 candidate streams). Not run by the tests; needs the paper's code checked out:

    .venv/bin/python tests/allo/data/make_paper_instances.py /path/to/AlloBench

Each case: the stream settings, the seed, the paper's profile and magnitude, the first problem
in full, and the sha256 of the canonical JSON of every problem's
``[family, [[name, value], ...], question, gold]`` in stream order.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

CASES = [
    # (seed, profile, magnitude, n_hot, hot_share, budget)
    (2000, "opus", 1000, 3, 0.85, 3),  # the stored Opus R3 run without --magnitude 100
    (2001, "opus", 1000, 3, 0.85, 3),
    (2000, "sonnet", 100, 3, 0.85, 3),
    (2002, "sonnet", 1000, 3, 0.85, 3),
    (2003, "haiku", 10, 3, 0.85, 3),
    (2004, "haiku", 1300, 3, 0.85, 3),  # crt_solve draws 8-9 congruences
    (5001, "opus", 100, 3, 0.85, 3),
    (3, "haiku", 100, 7, 0.999, 1),  # 2,000 candidates without an early trap: the fallback
]


def digest(slots: list[dict]) -> str:
    rows = [
        [s["family"], [[k, v] for k, v in s["inputs"].items()], s["question"], s["gold"]]
        for s in slots
    ]
    text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main(paper: str) -> None:
    sys.path.insert(0, paper)
    from scripts.ladder.urn_common import UNIFORM  # type: ignore[import-not-found]
    from scripts.session.stream_builder import (  # type: ignore[import-not-found]
        StochasticStreamSpec,
        build_stochastic_stream,
    )
    from scripts.theory import family_kit  # type: ignore[import-not-found]

    out = []
    for seed, profile, magnitude, n_hot, hot_share, budget in CASES:
        family_kit.set_profile(profile)
        spec = StochasticStreamSpec(
            families=UNIFORM,
            n_hot=n_hot,
            hot_share=hot_share,
            trap_share=round(1 - hot_share, 10),
            T=60,
            budget=budget,
            guarantee_trap_early=1.0,
            magnitude=magnitude,
            seed=seed,
        )
        slots, _ = build_stochastic_stream(spec)
        first = slots[0]
        out.append(
            {
                "seed": seed,
                "profile": profile,
                "magnitude": magnitude,
                "stream": {"n_hot": n_hot, "hot_mass": hot_share, "budget": budget},
                "classes": [s["class_id"] for s in slots],
                "first": {k: first[k] for k in ("family", "inputs", "question", "gold")},
                "sha256": digest(slots),
            }
        )
    family_kit.set_profile("haiku")
    about = (
        "The paper's scripts.session.stream_builder.build_stochastic_stream (AlloBench commit "
        "5a97586687cee5814050f8983175e301dd5eb868) after family_kit.set_profile(profile); "
        "written by tests/allo/data/make_paper_instances.py"
    )
    path = Path(__file__).with_name("paper_instances.json")
    path.write_text(json.dumps({"about": about, "cases": out}, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/allobench-paper")
