"""``econbench allo run`` and ``econbench allo sweep`` on tiny settings."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app

SUMMARY_KEYS = {
    "framing",
    "policy",
    "episodes",
    "build_cost",
    "budget",
    "score",
    "score_mean",
    "score_ci",
    "first_sight_rate",
    "utility_mean",
    "opt_mean",
    "trap_commits_mean",
    "unresolved_turns",
    "skin",
    "seeds",
    "version",
}
runner = CliRunner()


def test_run_writes_the_documented_files(tmp_path: Path) -> None:
    out = tmp_path / "cell"
    args = ["allo", "run", "--framing", "r0", "--policy", "wait:2", "--episodes", "2"]
    result = runner.invoke(app, [*args, "--seed", "2010", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) >= SUMMARY_KEYS
    assert summary["framing"] == "r0" and summary["policy"] == "wait:2"
    assert summary["episodes"] == 2 and summary["seeds"] == "2010-2011"
    assert summary["build_cost"] == 0.0 and summary["budget"] == 3
    assert len(summary["score_ci"]) == 2 and summary["unresolved_turns"] == 0
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(x)["seed"] for x in lines] == [2010, 2011]
    config = json.loads((out / "config.json").read_text())
    assert config["framing"] == "r0" and config["seeds"] == [2010, 2011]
    assert "score" in result.output and "wait:2" in result.output


def test_run_default_seeds_and_out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["allo", "run", "--framing", "r1", "--policy", "eager", "--cost", "10", "--budget", "5"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = tmp_path / "runs" / "allo" / "r1-eager-k10-b5"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 24 and summary["seeds"] == "2000-2023"
    assert summary["build_cost"] == 10.0 and summary["budget"] == 5


def test_run_with_seed_list_and_skin(tmp_path: Path) -> None:
    out = tmp_path / "skin"
    args = ["allo", "run", "--framing", "r0", "--policy", "eager", "--seeds", "5,9-10"]
    result = runner.invoke(app, [*args, "--skin", "quiver", "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in records] == [5, 9, 10]
    assert all(r["skin"] == "quiver" for r in records)
    assert "arrow" in records[0]["turns"][0]["observation"]
    assert json.loads((out / "summary.json").read_text())["skin"] == "quiver"


def test_sweep_writes_cells_and_surface(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = [
        "allo",
        "sweep",
        "--framings",
        "r0,r2",
        "--policies",
        "eager,wait:2",
        "--budgets",
        "1,3",
        "--costs",
        "0,20",
        "--episodes",
        "2",
        "--out",
        str(out),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    with (out / "surface.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 2 * 2 * 2
    for key in (
        "framing",
        "policy",
        "budget",
        "build_cost",
        "score",
        "score_mean",
        "score_ci_lo",
        "score_ci_hi",
        "first_sight_rate",
        "utility_mean",
        "opt_mean",
        "trap_commits_mean",
    ):
        assert key in rows[0]
    cells = {(r["framing"], r["policy"], r["budget"], r["build_cost"]) for r in rows}
    assert ("r2", "wait:2", "3", "20.0") in cells
    for row in rows:
        summary = json.loads((Path(row["dir"]) / "summary.json").read_text())
        assert summary["framing"] == row["framing"] and summary["episodes"] == 2
        assert float(row["utility_mean"]) == pytest.approx(summary["utility_mean"])
    eager = next(r for r in rows if r["policy"] == "eager" and r["build_cost"] == "0.0")
    assert float(eager["first_sight_rate"]) == 1.0
    # which streams every cell played: the paper's generator, fixed B = 3 streams
    assert {(r["protocol"], r["generator"], r["stream_budget"]) for r in rows} == {
        ("paper", "paper", "fixed")
    }
    assert (out / "r0-wait-2-k20-b1" / "episodes.jsonl").exists()


def test_sweep_cell_equals_run(tmp_path: Path) -> None:
    """A sweep cell and a run with the same settings write the same episodes."""
    sweep = ["allo", "sweep", "--framings", "r1", "--policies", "wait:2", "--budgets", "1"]
    result = runner.invoke(
        app, [*sweep, "--costs", "10", "--seeds", "7-8", "--out", str(tmp_path / "s")]
    )
    assert result.exit_code == 0, result.output
    run = ["allo", "run", "--framing", "r1", "--policy", "wait:2", "--budget", "1", "--cost", "10"]
    result = runner.invoke(app, [*run, "--seeds", "7-8", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    a = (tmp_path / "s" / "r1-wait-2-k10-b1" / "episodes.jsonl").read_bytes()
    assert a == (tmp_path / "r" / "episodes.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--framing", "r7", "--policy", "eager"], "unknown framing"),
        (["run", "--framing", "r0", "--policy", "greedy"], "unknown policy"),
        (["run", "--framing", "r0", "--policy", "wait:x"], "bad policy"),
        (["run", "--framing", "r0", "--policy", "eager", "--skin", "casino"], "unknown skin"),
        (
            ["run", "--framing", "r1", "--policy", "eager", "--skin", "chest"],
            "(r0, r0-tool) only",
        ),
        (["run", "--framing", "r0", "--policy", "eager", "--seeds", "20-10"], "bad --seeds"),
        (["run", "--framing", "r0", "--policy", "eager", "--seeds", "a-b"], "bad --seeds"),
        (["run", "--framing", "r0", "--policy", "eager", "--seeds", "1,,2"], "bad --seeds"),
        (["run", "--framing", "r0", "--policy", "eager", "--cost", "-1"], "--cost"),
        (["run", "--framing", "r0", "--policy", "eager", "--budget", "0"], "--budget"),
        (["run", "--framing", "r0", "--policy", "eager", "--episodes", "0"], "--episodes"),
        (
            ["run", "--framing", "r0", "--policy", "eager", "--episodes", "2", "--seeds", "1-2"],
            "not both",
        ),
        (["sweep", "--framings", "r0,r9", "--policies", "eager"], "unknown framing"),
        (["sweep", "--framings", "r0", "--policies", "eager,nope"], "unknown policy"),
        (["sweep", "--framings", "r0", "--budgets", "1,0"], "--budget"),
        (["sweep", "--framings", "r0", "--costs", "0,ten"], "bad cost"),
        (["sweep", "--framings", "r0", "--costs", "0,-5"], "--cost"),
        (["sweep", "--framings", "r0", "--policies", "eager,eager"], "twice"),
        (["sweep", "--framings", "r0,", "--policies", "eager"], "bad framing list"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["allo", *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert message in lines[0]
    assert not out.exists()


def test_sweep_plays_the_same_streams_in_every_budget_by_default(tmp_path: Path) -> None:
    base = ["allo", "sweep", "--framings", "r0", "--policies", "eager", "--costs", "0"]
    args = [*base, "--budgets", "1,5", "--episodes", "2"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "fixed")])
    assert result.exit_code == 0, result.output
    streams = {
        b: [json.loads(x)["stream"] for x in (tmp_path / "fixed" / f"r0-eager-k0-b{b}" /
            "episodes.jsonl").read_text().splitlines()]
        for b in (1, 5)
    }  # fmt: skip
    assert [s["classes"] for s in streams[1]] == [s["classes"] for s in streams[5]]
    assert {(s["generator"], s["draw_budget"]) for s in streams[1] + streams[5]} == {("paper", 3)}
    result = runner.invoke(
        app, [*args, "--streams", "numpy", "--stream-budget", "cell", "--out", str(tmp_path / "c")]
    )
    assert result.exit_code == 0, result.output
    cells = sorted(p.name for p in (tmp_path / "c").iterdir() if p.is_dir() and p.name != "logs")
    assert cells == ["r0-eager-k0-b1-numpy-cellstreams", "r0-eager-k0-b5-numpy-cellstreams"]
    record = json.loads((tmp_path / "c" / cells[0] / "episodes.jsonl").read_text().splitlines()[0])
    assert (record["stream"]["generator"], record["stream"]["draw_budget"]) == ("numpy", 1)


@pytest.mark.parametrize(("flag", "value"), [("--streams", "torch"), ("--stream-budget", "per-b")])
def test_bad_stream_options_are_refused(tmp_path: Path, flag: str, value: str) -> None:
    args = ["allo", "run", "--framing", "r0", "--policy", "eager", "--episodes", "1"]
    result = runner.invoke(app, [*args, flag, value, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert flag in result.output
    assert not (tmp_path / "x" / "episodes.jsonl").exists()


def test_sweep_runs_on_the_sweep_engine_and_continues(tmp_path: Path) -> None:
    """``allo sweep`` is a front for ``econbench sweep``'s engine: its sweep.json and
    sweep_summary.json sit next to the cells, a second call skips the completed cells, and
    cells of another call share the directory."""
    out = tmp_path / "s"
    args = ["allo", "sweep", "--framings", "r0", "--policies", "eager", "--costs", "0"]
    result = runner.invoke(app, [*args, "--budgets", "1,3", "--episodes", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "sweep.json").read_text())
    assert [e["dir"] for e in doc["entries"]] == ["r0-eager-k0-b1", "r0-eager-k0-b3"]
    summary = json.loads((out / "sweep_summary.json").read_text())
    assert summary["status"] == "completed"
    assert {e["action"] for e in summary["entries"]} == {"started"}
    before = (out / "r0-eager-k0-b1" / "episodes.jsonl").read_bytes()
    result = runner.invoke(app, [*args, "--budgets", "1,5", "--episodes", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "sweep_summary.json").read_text())
    assert [e["action"] for e in summary["entries"]] == ["skipped", "started"]
    assert (out / "r0-eager-k0-b1" / "episodes.jsonl").read_bytes() == before
    assert (out / "r0-eager-k0-b3" / "summary.json").exists()  # another call's cell stays
    with (out / "surface.csv").open() as fh:
        assert [r["budget"] for r in csv.DictReader(fh)] == ["1", "5"]


def test_sweep_with_workers_writes_what_one_worker_writes(tmp_path: Path) -> None:
    base = ["allo", "sweep", "--framings", "r1", "--policies", "eager,wait:2", "--budgets", "3"]
    base += ["--costs", "10", "--episodes", "2"]
    one = runner.invoke(app, [*base, "--out", str(tmp_path / "one")])
    assert one.exit_code == 0, one.output
    two = runner.invoke(app, [*base, "--workers", "2", "--quiet", "--out", str(tmp_path / "two")])
    assert two.exit_code == 0, two.output
    for cell in ("r1-eager-k10-b3", "r1-wait-2-k10-b3"):
        a = (tmp_path / "one" / cell / "episodes.jsonl").read_bytes()
        assert a == (tmp_path / "two" / cell / "episodes.jsonl").read_bytes()
    assert (tmp_path / "two" / "logs" / "r1-eager-k10-b3.log").exists()
    bad = runner.invoke(
        app, [*base, "--workers", "2", "--backend", "inline", "--out", str(tmp_path / "x")]
    )
    assert bad.exit_code == 2 and "--workers 1" in bad.output
