"""Distil a few of the paper's stored R0 sessions into the fixture ``r0_paper_prompts.json``.

``tests/allo/test_r0_paper.py`` replays each session's stored decisions through econbench's R0
under protocol "paper" and checks every user turn against the prompt the paper's harness sent
(``transcript[i].prompt``), byte for byte. The stored sessions do not keep the system prompt, so
the fixture also holds the paper's ``scripts/ladder/urn_common.render_system`` output for a few
(vocabulary, B, charge, announce_n) cells: the function is read from the paper's source and run
on its own, nothing else of the paper's code is imported. Replies are dropped. The paper's runs
and code are MIT-licensed (Copyright (c) 2026 Sea12 Technologies,
github:DragonWrangler25/AlloBench).

    python tests/allo/data/make_r0_paper_fixture.py /path/to/AlloBench/runs \
        /path/to/AlloBench/scripts/ladder/urn_common.py
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("r0_paper_prompts.json")

# (folder under runs/, seed, econbench skin, charge as the paper's render_system took it)
SESSIONS: list[tuple[str, int, str, int | None]] = [
    ("urn_haiku_n-announced", 2012, "default", None),
    ("urn_haiku_n-announced", 2000, "default", None),  # run before the paper's _art fix
    ("urn_opus_n-announced", 2015, "default", None),
    ("economic_surface_haiku/R0/B_3/K_10", 2000, "default", 10),
    ("economic_surface_haiku/R0/B_1/K_0", 2001, "default", 0),
    ("economic_surface_haiku/R0/B_5/K_24", 2002, "default", 24),
    ("urn_qwen-rl-urn-final_latest_n-announced_vocab-quiver", 2000, "quiver", None),
    ("urn_qwen-rl-urn-final_latest_n-announced_vocab-cauldron", 2003, "cauldron", None),
    ("urn_qwen-rl-urn-final_latest_n-announced_vocab-treasure_chest", 2001, "chest", None),
]

# (paper vocabulary, B, charge, announce_n)
SYSTEMS: list[tuple[str, int, int | None, bool]] = [
    ("ball", 3, None, True),
    ("ball", 3, None, False),
    ("ball", 3, 10, True),
    ("ball", 1, 0, True),
    ("ball", 5, 24, True),
    ("quiver", 3, None, True),
    ("quiver", 5, 10, True),
    ("cauldron", 3, None, True),
    ("treasure_chest", 3, None, True),
    ("treasure_chest", 1, 0, True),
]

_WANTED = {"VOCAB", "_art", "_DECISION_LINE_INSTRUCTION", "render_system"}


def paper_render_system(source: Path) -> tuple[Any, dict[str, Any]]:
    """The paper's ``render_system`` and ``VOCAB``, taken alone from ``urn_common.py``."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    keep = []
    for node in tree.body:
        names = (
            {t.id for t in node.targets if isinstance(t, ast.Name)}
            if isinstance(node, ast.Assign)
            else {getattr(node, "name", "")}
        )
        if names & _WANTED:
            keep.append(node)
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(source), "exec"), namespace)
    return namespace["render_system"], namespace["VOCAB"]


def distil(runs: Path, folder: str, seed: int, skin: str, charge: int | None) -> dict[str, Any]:
    d = runs / folder / f"seed_{seed}"
    session = json.loads((d / "session.json").read_text(encoding="utf-8"))
    slots = sorted(
        json.loads((d / "stream.json").read_text(encoding="utf-8")), key=lambda s: s["slot_index"]
    )
    return {
        "source": f"runs/{folder}/seed_{seed}",
        "seed": seed,
        "skin": skin,
        "budget": session["budget"],
        "charge": charge,
        "classes": [s["class_id"] for s in slots],
        "hot": sorted({s["class_id"] for s in slots if s["role"] == "hot"}),
        "color_of_class": session["color_of_class"],
        "kept": session["kept"],
        "collected": session["collected"],
        "transcript": [
            {k: e[k] for k in ("slot", "class_id", "decision", "prompt")}
            for e in session["transcript"]
        ],
    }


def main(runs: Path, urn_common: Path) -> None:
    render_system, vocab = paper_render_system(urn_common)
    systems = [
        {
            "vocab": v,
            "budget": b,
            "charge": k,
            "announce_n": n,
            "text": render_system(60, b, 8, n, vocab=vocab[v], charge=k),
        }
        for v, b, k, n in SYSTEMS
    ]
    sessions = [distil(runs, *spec) for spec in SESSIONS]
    data = {
        "description": (
            "The paper's R0 texts: render_system outputs and the per-turn prompts of a few stored "
            "sessions (made by make_r0_paper_fixture.py)."
        ),
        "systems": systems,
        "sessions": sessions,
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
