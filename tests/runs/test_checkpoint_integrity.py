"""A CoffeeBench checkpoint cannot lie: an edited, damaged or foreign checkpoint, config or log
is refused by ``econbench resume`` with one line naming the file (exit 2), before any file is
cut; a checkpoint re-sealed after an edit still fails the ledger identities."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.coffee import world as world_module
from econbench.runs.checkpoint import canonical_sha256
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import ResumeError, resume_to_dir, run_to_dir

CONFIG = RunConfig(days=32, seed=4)
FILES = ("events.jsonl", "daily.jsonl", "summary.json", "checkpoint.json")
cli = CliRunner()


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    run_to_dir(CONFIG, out)
    return out


@pytest.fixture(scope="module")
def killed_template(tmp_path_factory) -> Path:
    """A run killed on day 31, after the checkpoint of day 30 (a scripted run is checkpointed
    every 30th day); tests work on copies."""
    out = tmp_path_factory.mktemp("killed") / "run"
    original = world_module.World.act
    count = {"n": 0}

    def act(self, firm_id, call):
        count["n"] += self.day == 30
        if count["n"] == 20:
            raise Crash
        return original(self, firm_id, call)

    world_module.World.act = act
    try:
        with pytest.raises(Crash):
            run_to_dir(CONFIG, out)
    finally:
        world_module.World.act = original
    return out


@pytest.fixture()
def killed(tmp_path, killed_template) -> Path:
    out = tmp_path / "run"
    shutil.copytree(killed_template, out)
    return out


def snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def refuse(out: Path, *fragments: str, args: tuple[str, ...] = ()) -> str:
    """``econbench resume`` must exit 2 with one line containing ``fragments`` and leave every
    file as it was."""
    before = snapshot(out)
    result = cli.invoke(app, ["resume", str(out), "--quiet", *args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.output
    after = snapshot(out)
    assert after.keys() == before.keys()
    for name in before:
        if name != ".lock":
            assert after[name] == before[name], f"{name} was changed by a refused resume"
    return lines[0]


def load(out: Path) -> dict:
    return json.loads((out / "checkpoint.json").read_text())


def reseal(out: Path, data: dict) -> None:
    """Write ``data`` as a checkpoint with a correct digest and state hash: what someone who
    knows the format (or a bug) could produce."""
    state = json.dumps(data.pop("state"), separators=(",", ":"))
    for key in ("digest", "state_sha256", "state_bytes"):
        data.pop(key, None)
    data["state_sha256"] = hashlib.sha256(state.encode()).hexdigest()
    data["state_bytes"] = len(state.encode())
    data["digest"] = canonical_sha256(data)
    head = json.dumps(data, separators=(",", ":"))
    (out / "checkpoint.json").write_text(head[:-1] + ',"state":' + state + "}")


def test_the_killed_run_resumes_to_the_reference(killed, reference) -> None:
    result = cli.invoke(app, ["resume", str(killed), "--quiet"])
    assert result.exit_code == 0, result.output
    for name in FILES:
        assert (killed / name).read_bytes() == (reference / name).read_bytes(), name


def test_one_changed_digit_of_a_firms_cash_is_refused(killed) -> None:
    text = (killed / "checkpoint.json").read_text()
    cash = load(killed)["state"]["world"]["firms"]["roaster_A"]["cash"]
    needle = f'"id":"roaster_A","role":"roaster","cash":{cash},'
    assert text.count(needle) == 1
    digit = str(cash)[-1]
    edited = f'"id":"roaster_A","role":"roaster","cash":{str(cash)[:-1]}{(int(digit) + 1) % 10},'
    (killed / "checkpoint.json").write_text(text.replace(needle, edited))
    refuse(killed, "checkpoint.json", "integrity")


def test_a_resealed_cash_edit_fails_the_ledger_check(killed) -> None:
    data = load(killed)
    data["state"]["world"]["firms"]["roaster_A"]["cash"] += 100_000
    reseal(killed, data)
    refuse(killed, "checkpoint.json", "ledger", "roaster_A", "trial balance")


def test_a_resealed_stock_value_edit_fails_the_ledger_check(killed) -> None:
    data = load(killed)
    stock = data["state"]["world"]["firms"]["retailer_B"]["stock"]["roasted_coffee_kg"]
    stock["value"] += 1
    reseal(killed, data)
    refuse(killed, "ledger", "retailer_B")


def test_a_log_length_off_a_line_boundary_is_refused(killed) -> None:
    data = load(killed)
    data["logs"]["events.jsonl"]["length"] -= 7
    (killed / "checkpoint.json").write_text(json.dumps(data))
    refuse(killed, "checkpoint.json")  # the digest no longer matches


def test_a_resealed_log_length_off_a_line_boundary_never_cuts_mid_line(killed) -> None:
    data = load(killed)
    data["logs"]["events.jsonl"]["length"] -= 7
    reseal(killed, data)
    refuse(killed, "events.jsonl", "not at the end of a line")


def test_an_edited_log_prefix_is_refused(killed) -> None:
    events = killed / "events.jsonl"
    raw = events.read_bytes()
    assert raw.startswith(b'{"seq":1,"day":0,')
    events.write_bytes(raw.replace(b'"amount":25.0', b'"amount":26.0', 1))
    refuse(killed, "events.jsonl", "changed after they were written")


@pytest.mark.parametrize("name", ["events.jsonl", "daily.jsonl"])
def test_a_shortened_log_is_refused(killed, name) -> None:
    path = killed / name
    path.write_bytes(path.read_bytes()[:100])
    refuse(killed, name, "shortened")


def test_a_deleted_log_is_refused(killed) -> None:
    (killed / "daily.jsonl").unlink()
    refuse(killed, "daily.jsonl", "missing")


def test_an_edited_config_is_refused_with_its_diff_unless_forced(killed, reference) -> None:
    config = json.loads((killed / "config.json").read_text())
    config["days"] = 33
    config["economy"]["spoilage_rate"] = 0.5
    (killed / "config.json").write_text(json.dumps(config, indent=2))
    line = refuse(killed, "config.json", "days: 32 → 33", "economy.spoilage_rate: 0.005 → 0.5")
    assert "--force" in line
    result = cli.invoke(app, ["resume", str(killed), "--quiet", "--force"])
    assert result.exit_code == 0, result.output
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["days_run"] == 33


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b'{"schema":2,"benchmark":"coffee","day":', "not valid JSON"),
        (b"\x00\xff garbage", "not valid JSON"),
        (b"[1, 2, 3]", "not a checkpoint"),
        (b'{"schema": 1, "benchmark": "coffee", "logs": {}}', "schema 1"),
        (b'{"schema": 2, "benchmark": "allo", "episodes": 0}', "'allo' run"),
        (b'{"schema": 2, "benchmark": "coffee", "digest": "00"}', "integrity"),
        (b"[" * 100_000, "not valid JSON"),
    ],
)
def test_corrupt_or_foreign_checkpoints_are_one_line(killed, content, fragment) -> None:
    (killed / "checkpoint.json").write_bytes(content)
    refuse(killed, "checkpoint.json", fragment)


def test_a_checkpoint_from_another_run_is_refused(killed, tmp_path) -> None:
    other = tmp_path / "other"
    run_to_dir(RunConfig(days=3, seed=9), other)
    shutil.copy(other / "checkpoint.json", killed / "checkpoint.json")
    refuse(killed, "config.json", "differs from the config its checkpoint was written with")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "not a run config"),
    ],
)
def test_a_damaged_config_is_one_line(killed, content, fragment) -> None:
    (killed / "config.json").write_text(content)
    refuse(killed, "config.json", fragment)


def test_an_invalid_config_is_one_line_when_forced(killed) -> None:
    config = json.loads((killed / "config.json").read_text())
    config["economy"]["festival_factor"] = "lots"
    (killed / "config.json").write_text(json.dumps(config))
    refuse(killed, "config.json", "festival_factor", args=("--force",))


def test_the_api_raises_resume_error_not_a_traceback(killed) -> None:
    (killed / "checkpoint.json").write_text("{}")
    with pytest.raises(ResumeError, match=r"checkpoint\.json"):
        resume_to_dir(killed)
