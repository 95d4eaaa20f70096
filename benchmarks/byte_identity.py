"""Prove a restructuring changed no behaviour: hash every artefact of a fixed suite of runs.

The suite goes through the command line only (``econbench.cli.app`` in this process), so it
survives modules moving: scripted CoffeeBench economies under several policies, a
CoffeeBench run played by a scripted *model* through the LLM agent (tools, ReAct loop,
record), that run replayed from its record, AlloBench cells on every rung under both
protocols, a model-played AlloBench cell on R1 and R3, and the report over all of it.

    python benchmarks/byte_identity.py --write before.json      # on the old code
    python benchmarks/byte_identity.py --check before.json      # on the new code

``--check`` prints every file whose bytes changed and exits 1 if one of the files the
architecture issue fixes (event logs, daily rows, summaries, episode records) differs.
Files that carry a wall clock (meta.json, progress.json, record.sqlite, HTML) are not hashed;
in the JSON files that are, the measured sandbox wall times of R3 (keys ending in ``wall_s``)
are blanked first, as they are the one field of an episode record that no seed fixes (and
with them an AlloBench checkpoint's digests of its episode log).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

FIXED = ("events.jsonl", "daily.jsonl", "summary.json", "episodes.jsonl")
SKIPPED = {"meta.json", "progress.json", "record.sqlite", ".lock", "lock", "index.html"}
SKIPPED_SUFFIXES = (".html", ".png", ".svg", ".sqlite", ".sqlite-wal", ".sqlite-shm", ".pdf")


def coffee_brain(messages: list[Any], tools: list[Any]) -> Any:
    """A deterministic roaster that reads the market, bids, pays, roasts, sells and waits."""
    from econbench.agents.tools import ToolCall

    names = {t.name for t in tools}
    turns = sum(1 for m in messages if m.role == "assistant")
    last = next((m for m in reversed(messages) if m.role == "tool"), None)
    result: dict[str, Any] = {}
    if last is not None:
        try:
            result = json.loads(last.content)
        except (ValueError, TypeError):
            result = {}
    step = turns % 8
    if step == 0 and "view_listings" in names:
        return ToolCall("view_listings", {}, call_id=f"c{turns}")
    if step == 1:
        listings = result.get("listings") or []
        green = [x for x in listings if "green" in str(x.get("item_id", ""))]
        if green:
            x = green[0]
            price = round(float(x.get("asking_price", 5.0)) * 0.9, 2)
            return ToolCall(
                "make_offer",
                {"listing_id": x.get("listing_id"), "offered_price": price, "qty": 40},
                call_id=f"c{turns}",
            )
        return ToolCall("view_offers", {}, call_id=f"c{turns}")
    if step == 2:
        return ToolCall("view_payables", {}, call_id=f"c{turns}")
    if step == 3:
        invoices = result.get("invoices") or result.get("payables") or []
        if invoices:
            return ToolCall(
                "pay_invoice", {"invoice_id": invoices[0].get("invoice_id")}, call_id=f"c{turns}"
            )
        return ToolCall("view_trial_balance", {}, call_id=f"c{turns}")
    if step == 4:
        return ToolCall(
            "roast", {"green_item_id": "green_coffee_kg", "qty_kg": 30}, call_id=f"c{turns}"
        )
    if step == 5:
        return ToolCall(
            "post_listing",
            {"item_id": "roasted_coffee_kg", "qty": 20, "asking_price": 14.5},
            call_id=f"c{turns}",
        )
    if step == 6:
        if turns % 16 == 6:
            return ToolCall(
                "send_message",
                {"recipient": "retailer_A", "title": "roast", "body": "Fresh roast listed."},
                call_id=f"c{turns}",
            )
        return "Thinking about prices."  # a reply with no tool call
    return ToolCall("wait_for_next_day", {}, call_id=f"c{turns}")


def allo_brain(messages: list[Any], tools: list[Any]) -> Any:
    """A deterministic AlloBench player: builds on every third turn, else uses what it has."""
    from econbench.agents.tools import ToolCall

    turns = sum(1 for m in messages if m.role == "assistant")
    names = sorted(t.name for t in tools)
    if not names:
        return "PASS"
    tool = tools[turns % len(tools)]
    args: dict[str, Any] = {}
    props = (tool.parameters or {}).get("properties", {})
    for key, schema in props.items():
        kind = schema.get("type")
        if key in ("code", "source", "content"):
            args[key] = "def solve(inputs):\n    return 0\n"
        elif key in ("path", "filename", "name"):
            args[key] = f"tool_{turns % 3}.py"
        elif kind == "integer":
            args[key] = turns % 3
        elif kind == "number":
            args[key] = float(turns % 5)
        elif kind == "boolean":
            args[key] = turns % 2 == 0
        else:
            args[key] = "x"
    return ToolCall(tool.name, args, call_id=f"a{turns}")


def invoke(runner: CliRunner, args: list[str]) -> None:
    from econbench.cli import app

    result = runner.invoke(app, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(
            f"econbench {' '.join(args)} failed ({result.exit_code}):\n{result.output}"
        )


def play_suite(root: Path) -> None:
    from econbench.agents.models.registry import register_scripted

    register_scripted("byte-identity-roaster", coffee_brain)
    register_scripted("byte-identity-allo", allo_brain)
    runner = CliRunner()
    coffee = root / "coffee"
    for seed in (0, 1):
        invoke(
            runner,
            [
                "coffee",
                "run",
                "--seed",
                str(seed),
                "--out",
                str(coffee / f"default_s{seed}"),
                "--quiet",
            ],
        )
    for policy in ("heuristic", "haggle", "markup:1.3", "undercut", "hoard", "passive"):
        name = policy.replace(":", "_")
        invoke(
            runner,
            [
                "coffee",
                "run",
                "--seed",
                "2",
                "--days",
                "30",
                "--agent",
                "default=scripted",
                "--agent",
                f"roaster_A={policy}",
                "--out",
                str(coffee / f"{name}_s2"),
                "--quiet",
            ],
        )
    model_run = coffee / "model_s3"
    invoke(
        runner,
        [
            "coffee",
            "run",
            "--seed",
            "3",
            "--days",
            "12",
            "--agent",
            "roaster_A=scripted/byte-identity-roaster",
            "--out",
            str(model_run),
            "--quiet",
        ],
    )
    invoke(runner, ["replay", str(model_run), "--out", str(coffee / "model_s3_replay")])
    allo = root / "allo"
    for protocol in ("paper", "econbench"):
        for framing in ("r0", "r1", "r2", "r3"):
            for policy in ("eager", "bayes", "posterior:0.5", "wait:2"):
                name = f"{protocol}_{framing}_{policy.replace(':', '_')}"
                invoke(
                    runner,
                    [
                        "allo",
                        "run",
                        "--framing",
                        framing,
                        "--policy",
                        policy,
                        "--seeds",
                        "2000-2003",
                        "--protocol",
                        protocol,
                        "--out",
                        str(allo / name),
                    ],
                )
        invoke(
            runner,
            [
                "allo",
                "run",
                "--framing",
                "r0",
                "--policy",
                "eager",
                "--seeds",
                "2000-2001",
                "--cost",
                "10",
                "--skin",
                "chest",
                "--protocol",
                protocol,
                "--out",
                str(allo / f"{protocol}_r0_chest_k10"),
            ],
        )
    for framing in ("r1", "r3"):
        invoke(
            runner,
            [
                "allo",
                "run",
                "--framing",
                framing,
                "--policy",
                "scripted/byte-identity-allo",
                "--seeds",
                "2000-2001",
                "--out",
                str(allo / f"model_{framing}"),
                "--sandbox-allow-weak",
            ],
        )
    invoke(runner, ["report", str(root), "--out", str(root / "report")])


WALL_CLOCK = re.compile(rb'("[a-z_]*wall_s(?:_[a-z]+)?"\s*:\s*)-?[0-9.eE+-]+')
"""A measured duration's value in a JSON text (R3's sandbox runs): blanked before hashing."""
LOG_DIGEST = re.compile(rb'("(?:length|sha256|digest)"\s*:\s*)("[0-9a-f]+"|[0-9]+)')


def manifest(root: Path) -> dict[str, str]:
    """sha256 of every hashed file under root, keyed by its path relative to root."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name in SKIPPED or path.name.endswith(SKIPPED_SUFFIXES):
            continue
        data = path.read_bytes()
        if path.suffix in (".json", ".jsonl"):
            data = WALL_CLOCK.sub(rb"\1null", data)
        if path.name == "checkpoint.json" and b'"episodes.jsonl":{"length"' in data:
            data = LOG_DIGEST.sub(rb"\1null", data)  # digests of a log that holds wall times
        out[path.relative_to(root).as_posix()] = hashlib.sha256(data).hexdigest()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="write the manifest of this code to a file")
    group.add_argument("--check", type=Path, help="compare this code with a written manifest")
    parser.add_argument("--keep", type=Path, help="play the suite into this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="econbench-identity-") as tmp:
        root = args.keep or Path(tmp)
        play_suite(root)
        now = manifest(root)
    fixed = sum(1 for k in now if k.rsplit("/", 1)[-1] in FIXED)
    if args.write:
        args.write.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(
            f"{len(now)} files hashed ({fixed} event logs, daily rows, summaries, episode records)"
        )
        return 0
    before: dict[str, str] = json.loads(args.check.read_text())
    changed = sorted(k for k in before.keys() & now.keys() if before[k] != now[k])
    missing = sorted(before.keys() - now.keys())
    added = sorted(now.keys() - before.keys())
    bad = [k for k in changed + missing if k.rsplit("/", 1)[-1] in FIXED]
    for label, keys in (("changed", changed), ("missing", missing), ("new", added)):
        for key in keys:
            print(f"{label:8} {key}")
    same = len(before.keys() & now.keys()) - len(changed)
    print(
        f"{same} of {len(before)} files byte-identical; {len(changed)} changed,"
        f" {len(missing)} missing, {len(added)} new;"
        f" fixed artefacts differing: {len(bad)} of {fixed}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
