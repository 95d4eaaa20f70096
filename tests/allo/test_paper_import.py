"""``econbench allo import``: the paper's stored sessions as AlloBench cells (hand-made fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.allo.paper.sources import policy_names, surface_folder
from econbench.cli import app
from econbench.runs.allo.paper_import import PaperImportError, classify, import_runs

runner = CliRunner()

# Three families (class ids 0, 1, 2 in this order), "fa" hot; B = 2, K = 0.
CLASSES = [0, 1, 0, 2, 0, 1]
FAMILIES = ["fa", "fb", "fc"]
# (slot, class, decision): t4 is class 0 after its build (automatic, not asked).
DECISIONS = [(0, 0, "PASS"), (1, 1, "PASS"), (2, 0, "KEEP"), (3, 2, "PASS"), (5, 1, "KEEP")]


def _seed(folder: Path, seed: int, *, collected: int = 3, decisions=DECISIONS) -> None:
    d = folder / f"seed_{seed}"
    d.mkdir(parents=True)
    meta = {
        "T": len(CLASSES),
        "budget": 2,
        "hot_share": 0.85,
        "want_early": True,
        "assignment": {f: {"role": "hot" if f == "fa" else "trap"} for f in FAMILIES},
    }
    stream = [
        {"family": FAMILIES[c], "class_id": c, "slot_index": t} for t, c in enumerate(CLASSES)
    ]
    session = {
        "seed": seed,
        "model_key": "toy",
        "collected": collected,
        "budget": 2,
        "color_of_class": {"0": "red", "1": "blue", "2": "green"},
        "turn_usages": [{"input_tokens": 10, "output_tokens": 2} for _ in decisions],
        "transcript": [
            {
                "slot": t,
                "class_id": c,
                "prompt": f"Draw {t + 1}",
                "decision": dec,
                "how": "tag",
                "reply": f"reply {t}\nDECISION: {dec}",
            }
            for t, c, dec in decisions
        ],
    }
    for name, data in (("meta", meta), ("stream", stream), ("session", session)):
        (d / f"{name}.json").write_text(json.dumps(data))


@pytest.fixture
def paper_runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    _seed(root / "urn_toy_n-announced", 2000)
    _seed(root / "urn_toy_n-announced", 2001)
    (root / "arm_a1_announce_toy" / "seed_2000").mkdir(parents=True)  # no sessions.jsonl
    return root


def test_classify() -> None:
    assert classify("urn_haiku_n-announced").framing == "r0"
    assert classify("claim_solver_haiku_n-announced").framing == "r1"
    assert classify("claim_solver_code_haiku_n-announced").framing == "r2"
    assert classify("urn_qwen_vocab-treasure_chest").skin == "chest"
    tool = classify("urn_tool_haiku_n-announced")
    assert (tool.framing, tool.channel, tool.model) == ("r0", "tool-call", "haiku")
    r3 = classify("arm_a1_announce_n-announced")
    assert (r3.framing, r3.model, r3.conditions()) == ("r3", "haiku", [])
    opus = classify("arm_a1_announce_opus_n-announced_canonical-structure_mag100_class-bound-v1")
    assert (opus.framing, opus.model) == ("r3", "opus")
    assert classify("urn_haiku_vocab-unknown") is None
    assert classify("rl_something") is None


def test_policy_names_separate_conditions() -> None:
    folders = [
        classify(n)
        for n in (
            "urn_haiku_n-announced",
            "urn_haiku",
            "urn_tool_haiku_n-announced",
            "claim_solver_qwen-rl-base-q8_latest_n-announced",
            "claim_solver_qwen-rl-base-q8_latest_n-announced_efr4",
            "claim_solver_code_gpt-5.4-mini-2026-03-17_n-announced",
        )
    ]
    folders += [surface_folder("haiku", "r0", 3, 0.0), surface_folder("gpt-5.6-sol", "r2", 3, 0.0)]
    names = list(policy_names(folders).values())
    assert names == [
        "paper/claude-haiku-4.5",
        "paper/claude-haiku-4.5/no-n",
        "paper/claude-haiku-4.5/tool-call",
        "paper/qwen2.5-coder-14b-q8/no-retry",
        "paper/qwen2.5-coder-14b-q8",
        "paper/gpt-5.4-mini",
        "paper/claude-haiku-4.5/surface",  # Haiku has a main-condition R0 run
        "paper/gpt-5.6-sol",  # Sol's R2 exists only in its surface
    ]


def test_conversion_replays_the_decisions(paper_runs: Path, tmp_path: Path) -> None:
    warnings: list[str] = []
    (cell,) = import_runs(paper_runs, tmp_path / "out", warnings.append)
    assert any("arm_a1_announce_toy" in w for w in warnings)  # no sessions.jsonl: skipped
    config = json.loads((cell / "config.json").read_text())
    assert (config["framing"], config["policy"], config["budget"], config["cost"]) == (
        "r0",
        "paper/toy",
        2,
        0.0,
    )
    assert config["seeds"] == [2000, 2001]
    assert json.loads((cell / "meta.json").read_text())["benchmark"] == "allo"
    records = [json.loads(line) for line in (cell / "episodes.jsonl").read_text().splitlines()]
    rec = records[0]
    assert rec["collected"] == 3 and rec["utility"] == 3.0 and rec["opt"] == 5.0
    assert [(c["t"], c["cls"], c["sighting"]) for c in rec["commits"]] == [(2, 0, 2), (5, 1, 2)]
    assert rec["first_sight_commits"] == 0
    assert [t["kind"] for t in rec["turns"]] == ["decision"] * 4 + ["auto", "decision"]
    first = rec["turns"][0]
    assert first["label"] == "red" and first["observation"] == "Draw 1"
    assert first["replies"][0]["text"].endswith("DECISION: PASS")
    assert rec["tokens"] == {"input_tokens": 50, "output_tokens": 10}
    summary = json.loads((cell / "summary.json").read_text())
    assert summary["episodes"] == 2 and summary["first_sight_rate"] == 0.0
    assert summary["score"] == pytest.approx(0.6)


def test_replay_mismatch_names_the_file(tmp_path: Path) -> None:
    _seed(tmp_path / "runs" / "urn_toy", 2000, collected=4)
    with pytest.raises(PaperImportError, match=r"seed_2000.*session\.json.*collects 3"):
        import_runs(tmp_path / "runs", tmp_path / "out", lambda _: None)


def test_cli_malformed_file_exits_2(tmp_path: Path) -> None:
    _seed(tmp_path / "runs" / "claim_solver_toy", 2000)
    (tmp_path / "runs" / "claim_solver_toy" / "seed_2000" / "stream.json").write_text("{oops")
    result = runner.invoke(
        app, ["allo", "import", str(tmp_path / "runs"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "stream.json" in result.output


def test_report_accepts_imported_cells(paper_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "cells"
    result = runner.invoke(app, ["allo", "import", str(paper_runs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "imported 1 cells" in result.output
    rep = tmp_path / "report"
    result = runner.invoke(app, ["report", str(out), "--out", str(rep)])
    assert result.exit_code == 0, result.output
    ladder = (rep / "ladder.md").read_text()
    assert "paper/toy" in ladder


def _r3_seed(folder: Path, seed: int, authored: dict[int, list[str]], *, seen: int, written: int):
    """An R3 seed: classes 0 1 0 2 0 1 (family "fa" hot), B = 2, scripts written per slot."""
    d = folder / f"seed_{seed}"
    d.mkdir(parents=True)
    meta = {
        "budget": 2,
        "hot_share": 0.85,
        "want_early": True,
        "assignment": {f: {"role": "hot" if f == "fa" else "trap"} for f in FAMILIES},
    }
    stream = [
        {"family": FAMILIES[c], "class_id": c, "slot_index": t} for t, c in enumerate(CLASSES)
    ]
    transcript = []
    for t in range(seen):
        transcript.append({"role": "user", "content": f"PROBLEM {t + 1} of 6:\nsolve it"})
        transcript.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{t}",
                        "type": "function",
                        "function": {"name": "submit_answer", "arguments": '{"value": 1}'},
                    }
                ],
            }
        )
        transcript.append({"role": "tool", "tool_call_id": f"c{t}", "content": '{"ok": true}'})
    session = {
        "model": "toy",
        "budget": 2,
        "n_scripts_written": written,
        "problems_seen": seen,
        "records": [
            {"idx": t, "item_idx": t, "scripts_authored": authored.get(t, [])}
            for t in range(len(CLASSES))
        ],
        "transcript": transcript,
        "turn_usages": [{"input_tokens": 7, "output_tokens": 3, "cache_read_tokens": 5}],
    }
    (d / "meta.json").write_text(json.dumps(meta))
    (d / "stream.json").write_text(json.dumps(stream))
    (d / "config.json").write_text(json.dumps({"budget": 2, "magnitude": 100}))
    (d / "sessions.jsonl").write_text(json.dumps(session) + "\n")


def test_r3_sessions_replay_their_script_writes(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    # slot 0 writes for class 0 (first sight), slot 2 rewrites it (class 0 again: a rebuild).
    _r3_seed(
        root / "arm_a1_announce_toy_n-announced", 2000, {0: ["a"], 2: ["a"]}, seen=3, written=2
    )
    (cell,) = import_runs(root, tmp_path / "out", lambda _: None)
    config = json.loads((cell / "config.json").read_text())
    assert (config["framing"], config["policy"]) == ("r3", "paper/toy")
    (rec,) = [json.loads(line) for line in (cell / "episodes.jsonl").read_text().splitlines()]
    assert [(c["t"], c["cls"], c["sighting"]) for c in rec["commits"]] == [(0, 0, 1)]
    assert rec["first_sight_commits"] == 1
    assert rec["result"]["rebuilds"] == 1  # the rewrite spent the second unit: session over
    kinds = [t["kind"] for t in rec["turns"]]
    assert kinds == ["decision", "decision", "reuse", "after_end", "after_end", "after_end"]
    assert rec["turns"][0]["observation"].startswith("PROBLEM 1 of 6")
    call = rec["turns"][0]["replies"][0]["tool_calls"][0]
    assert call["name"] == "submit_answer" and call["result"] == {"ok": True}
    assert rec["tokens"] == {"cached_input_tokens": 5, "input_tokens": 7, "output_tokens": 3}
    assert rec["paper_r3"]["magnitude"] == 100


def test_r3_cut_off_problems_are_after_the_end_not_unresolved(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    _r3_seed(root / "arm_a1_announce_toy_n-announced", 2000, {1: ["b"]}, seen=2, written=1)
    (cell,) = import_runs(root, tmp_path / "out", lambda _: None)
    (rec,) = [json.loads(line) for line in (cell / "episodes.jsonl").read_text().splitlines()]
    assert [t["kind"] for t in rec["turns"]] == ["decision", "decision"] + ["after_end"] * 4
    assert rec["unresolved_turns"] == 0 and rec["decision_turns"] == 2
    assert [(c["t"], c["sighting"]) for c in rec["commits"]] == [(1, 1)]


def test_r3_write_count_mismatch_names_the_file(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    _r3_seed(root / "arm_a1_announce_toy_n-announced", 2000, {0: ["a"]}, seen=6, written=2)
    with pytest.raises(PaperImportError, match=r"sessions\.jsonl.*charges 1.*wrote 2"):
        import_runs(root, tmp_path / "out", lambda _: None)
