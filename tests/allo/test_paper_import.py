"""``econbench allo import``: the paper's stored sessions as AlloBench cells (hand-made fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.allo.paper_import import PaperImportError, classify, import_runs
from econbench.cli import app

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
    (root / "arm_a1_announce_toy" / "seed_2000").mkdir(parents=True)
    return root


def test_classify() -> None:
    assert classify("urn_haiku_n-announced").framing == "r0"
    assert classify("claim_solver_haiku_n-announced").framing == "r1"
    assert classify("claim_solver_code_haiku_n-announced").framing == "r2"
    assert classify("urn_qwen_vocab-treasure_chest").skin == "chest"
    assert classify("urn_tool_haiku") is None
    assert classify("arm_a1_announce_n-announced") is None


def test_conversion_replays_the_decisions(paper_runs: Path, tmp_path: Path) -> None:
    warnings: list[str] = []
    (cell,) = import_runs(paper_runs, tmp_path / "out", warnings.append)
    assert any("arm_a1_announce_toy" in w for w in warnings)
    config = json.loads((cell / "config.json").read_text())
    assert (config["framing"], config["policy"], config["budget"], config["cost"]) == (
        "r0",
        "paper/toy_n-announced",
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
    assert "paper/toy_n-announced" in ladder
