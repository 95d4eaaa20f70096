"""Distil the paper's stored runs into the small fixture ``paper_runs.json.xz``.

The fixture keeps, for every folder a published table reads (``econbench.allo.paper.published``),
exactly what ``econbench allo import`` needs to rebuild its episodes: the stream's families and
roles, every stored decision (slot, class, decision, how it was parsed) and the session totals the
import cross-checks; R3 keeps its per-problem script writes and which problems were shown. Prompts,
replies and code are dropped. The paper's runs are MIT-licensed (Copyright (c) 2026 Sea12
Technologies, github:DragonWrangler25/AlloBench).

    python tests/allo/data/make_paper_runs_fixture.py /path/to/AlloBench/runs
"""

from __future__ import annotations

import json
import lzma
import re
import sys
from pathlib import Path

from econbench.allo.paper import published as P

OUT = Path(__file__).with_name("paper_runs.json.xz")


def wanted() -> set[str]:
    """The top-level folders the published tables read."""
    names: set[str] = set()
    for sources in P.FRONTIER.values():
        names.update(sources.values())
    for arm in P.QWEN_ARMS.values():
        for folders in P.qwen_sources(arm).values():
            names.update(folders)
    names.update(P.ECON_SOURCE.format(rung=r.upper(), b=b, k=k) for r, b, k in P.ECON_FULL)
    return names


def _top(name: str) -> str:
    """``economic_surface_haiku-R0-B3-K0`` → its folder ``economic_surface_haiku/R0/B_3/K_0``."""
    m = re.fullmatch(r"(economic_surface_.+)-(R\d)-B(\d+)-K(\d+)", name)
    return f"{m.group(1)}/{m.group(2)}/B_{m.group(3)}/K_{m.group(4)}" if m else name


def distil_session(session: dict) -> dict:
    keep = ("seed", "model_key", "collected", "budget", "color_of_class")
    out = {k: session[k] for k in keep if k in session}
    out["transcript"] = [
        {k: e.get(k) for k in ("slot", "class_id", "decision", "how")}
        for e in session.get("transcript", [])
    ]
    return out


def distil_r3(session: dict) -> dict:
    keep = (
        "model",
        "budget",
        "n_correct",
        "n_submitted",
        "n_scripts_written",
        "problems_seen",
        "stopped_on_budget",
        "hit_cap",
        "spent_tokens",
        "token_cap",
        "class_bound",
    )
    out = {k: session[k] for k in keep if k in session}
    out["records"] = [
        {
            "idx": r["idx"],
            "item_idx": r.get("item_idx", r["idx"]),
            "scripts_authored": r.get("scripts_authored") or [],
        }
        for r in session["records"]
    ]
    heads = [
        m["content"].split("\n", 1)[0]
        for m in session.get("transcript", [])
        if m.get("role") == "user" and str(m.get("content", "")).startswith("PROBLEM ")
    ]
    out["transcript"] = [{"role": "user", "content": h} for h in heads]
    return out


def main(root: Path) -> None:
    files: dict[str, object] = {}
    for name in sorted(wanted()):
        folder = root / _top(name)
        for seed_dir in sorted(folder.glob("seed_*")):
            rel = f"{_top(name)}/{seed_dir.name}"
            stream = json.loads((seed_dir / "stream.json").read_text())
            files[f"{rel}/stream.json"] = [
                {k: item.get(k) for k in ("family", "class_id", "slot_index", "role")}
                for item in stream
            ]
            if (seed_dir / "meta.json").exists():
                meta = json.loads((seed_dir / "meta.json").read_text())
                kept = ("budget", "hot_share", "want_early", "assignment")
                files[f"{rel}/meta.json"] = {k: meta[k] for k in kept if k in meta}
            if (seed_dir / "config.json").exists():
                config = json.loads((seed_dir / "config.json").read_text())
                files[f"{rel}/config.json"] = {k: config.get(k) for k in ("budget", "magnitude")}
            if (seed_dir / "session.json").exists():
                files[f"{rel}/session.json"] = distil_session(
                    json.loads((seed_dir / "session.json").read_text())
                )
            if (seed_dir / "sessions.jsonl").exists():
                lines = (seed_dir / "sessions.jsonl").read_text().splitlines()
                line = next(x for x in lines if x.strip())
                files[f"{rel}/sessions.jsonl"] = distil_r3(json.loads(line))
    # Key order is kept (no sort_keys): a meta.json's assignment order is the class ids.
    OUT.write_bytes(lzma.compress(json.dumps(files).encode("utf-8"), preset=9))
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes, {len(files)} files)")


def extract(target: Path) -> Path:
    """Write the fixture's files under ``target`` (the layout of the paper's ``runs/``)."""
    files = json.loads(lzma.decompress(OUT.read_bytes()))
    for rel, content in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(content) + "\n" if rel.endswith(".jsonl") else json.dumps(content)
        path.write_text(text, encoding="utf-8")
    return target


if __name__ == "__main__":
    main(Path(sys.argv[1]))
