"""Conditions and instances as a user names them (issue 24): ``--condition``, ``--instances``,
what a cell records, and cells written before conditions had names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.allo.episodes.runner import CellSpec, spec_from_config, with_protocol
from econbench.allo.game import Game
from econbench.allo.game.families import instance_for
from econbench.allo.game.stream import generate_stream
from econbench.cli import app
from econbench.runs.diff import config_diff

runner = CliRunner()


def _run(out: Path, *extra: str) -> dict:
    args = ["allo", "run", "--policy", "eager", "--episodes", "1", "--out", str(out), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "episodes.jsonl").read_text().splitlines()[0])


def test_the_default_shows_the_papers_first_problem_and_records_the_condition(
    tmp_path: Path,
) -> None:
    episode = _run(tmp_path / "cell", "--framing", "r1")
    first = episode["turns"][0]
    assert "A 32-bit register holds X = 32586213. Repeat 14 times:" in first["observation"]
    assert first["instance"]["named_values"]["X"] == 32586213
    config = json.loads((tmp_path / "cell" / "config.json").read_text())
    summary = json.loads((tmp_path / "cell" / "summary.json").read_text())
    for record in (config, summary):
        assert (record["condition"], record["instances"]) == ("frontier", "paper")
    assert "point(s)" not in config["system_prompt"]  # the ladder states no charge at K = 0


def test_econbench_instances_stay_available_by_name(tmp_path: Path) -> None:
    episode = _run(tmp_path / "cell", "--framing", "r1", "--instances", "econbench")
    stream = generate_stream(2000)
    turn = Game(stream).turn()
    assert episode["turns"][0]["instance"] == instance_for(2000, 0, turn.cls).to_dict()
    assert "32586213" not in episode["turns"][0]["observation"]
    assert CellSpec("r1", "eager", instances="econbench").slug().endswith("econbenchinstances")
    assert CellSpec("r0", "eager", instances="econbench").slug() == "r0-eager-k0-b3"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--framing", "r1", "--condition", "surfaces"], "did you mean 'surface'"),
        (["--framing", "r1", "--condition", "surface"], "has no rung 'r1'"),
        (["--framing", "r2", "--condition", "tool-probe"], "has no rung 'r2'"),
        (["--framing", "r1", "--instances", "numpy"], "unknown instances 'numpy'"),
        (["--framing", "r1", "--condition", "frontier", "--protocol", "econbench"], "one of the"),
    ],
)
def test_a_bad_condition_is_one_line_before_anything_is_written(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    out = tmp_path / "cell"
    result = runner.invoke(app, ["allo", "run", "--policy", "eager", "--out", str(out), *args])
    assert result.exit_code == 2
    assert fragment in result.output
    assert not out.exists()


def test_the_surface_condition_states_the_charge_at_k0(tmp_path: Path) -> None:
    out = tmp_path / "cell"
    _run(out, "--framing", "r2", "--condition", "surface")
    config = json.loads((out / "config.json").read_text())
    assert "costs 0 point" in config["system_prompt"]
    assert config["framing_settings"]["max_tokens"] == 4000


def test_an_econbench_cell_from_before_conditions_still_resumes_unchanged() -> None:
    new = CellSpec("r1", "eager", protocol="econbench").to_dict()
    old = {k: v for k, v in new.items() if k not in ("condition", "instances")}
    assert config_diff(with_protocol(old, new), new) == []
    assert spec_from_config(old) == CellSpec("r1", "eager", protocol="econbench")


def test_a_paper_cell_from_before_conditions_is_not_taken_for_a_condition() -> None:
    """It played econbench's paper protocol of then (four re-asks, the charge stated at K = 0,
    econbench's instances), which no condition plays: a resume names the difference."""
    new = CellSpec("r1", "eager").to_dict()
    old = {k: v for k, v in new.items() if k not in ("condition", "instances")}
    changes = config_diff(with_protocol(old, new), new)
    assert 'condition: "paper-0" → "frontier"' in changes
    assert 'instances: "econbench" → "paper"' in changes
    assert spec_from_config(old).instances == "econbench"
