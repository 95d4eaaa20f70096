"""CoffeeBench checkpoints: a run that dies anywhere and is resumed ends byte-identical to
one that never stopped; a changed config is refused with a diff."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.agents.models.base import ChatMessage
from econbench.agents.models.record import CallRecord
from econbench.agents.models.registry import register_scripted, unregister_scripted
from econbench.agents.tools import ToolCall
from econbench.cli import app
from econbench.coffee import world as world_module
from econbench.runs import checkpoint as checkpoint_module
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import ResumeError, resume_to_dir, run_to_dir
from econbench.runs.layout import RECORD
from econbench.runs.resume import run_status

FILES = ("events.jsonl", "daily.jsonl", "summary.json", "checkpoint.json", "progress.json")
runner = CliRunner()
CLI = [sys.executable, "-m", "econbench.cli"]


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


def same_files(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    run_to_dir(RunConfig(days=12, seed=5), out)
    return out


def crash_after_actions(monkeypatch, n: int) -> None:
    """Kill the run in the middle of its n-th action (after the tool ran, before logging)."""
    original = world_module.World.act
    count = {"n": 0}

    def act(self, firm_id, call):
        count["n"] += 1
        if count["n"] == n:
            self.emit("tool_call", firm=firm_id, tool="half-written")
            raise Crash
        return original(self, firm_id, call)

    monkeypatch.setattr(world_module.World, "act", act)


@pytest.mark.parametrize("n", [1, 37, 250, 509])
def test_killed_mid_tick_then_resumed_is_byte_identical(tmp_path, monkeypatch, reference, n):
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        crash_after_actions(m, n)
        with pytest.raises(Crash):
            run_to_dir(RunConfig(days=12, seed=5), out)
    assert not (out / "summary.json").exists()
    assert run_status(out) == "interrupted"
    assert b"half-written" in (out / "events.jsonl").read_bytes()
    resume_to_dir(out)
    same_files(out, reference)
    assert run_status(out) == "completed"


def test_killed_while_writing_the_checkpoint(tmp_path, monkeypatch, reference):
    """A crash between writing the temporary checkpoint and renaming it keeps the old one.
    A 12-day scripted run writes two, before day 0 and after day 12; the second is cut, so the
    resume starts from day 0's."""
    out = tmp_path / "run"
    original = checkpoint_module.write_atomic
    calls = {"n": 0}

    def write_atomic(path, text, *, durable=False):
        if path.name == "checkpoint.json":
            calls["n"] += 1
            if calls["n"] == 2:
                path.with_name(path.name + ".tmp").write_text(text[: len(text) // 2])
                raise Crash
        original(path, text, durable=durable)

    monkeypatch.setattr(checkpoint_module, "write_atomic", write_atomic)
    with pytest.raises(Crash):
        run_to_dir(RunConfig(days=12, seed=5), out)
    assert json.loads((out / "checkpoint.json").read_text())["day"] == 0
    monkeypatch.setattr(checkpoint_module, "write_atomic", original)
    resume_to_dir(out)
    same_files(out, reference)


def test_resuming_twice_in_a_row_and_a_completed_run(tmp_path, monkeypatch, reference):
    out = tmp_path / "run"
    for n in (100, 300):
        with monkeypatch.context() as m:
            crash_after_actions(m, n)
            with pytest.raises(Crash):
                if n == 100:
                    run_to_dir(RunConfig(days=12, seed=5), out)
                else:
                    resume_to_dir(out)
    resume_to_dir(out)
    same_files(out, reference)
    with pytest.raises(ResumeError, match="completed run"):
        resume_to_dir(out)


def test_changed_config_is_refused_with_a_diff_unless_forced(tmp_path, monkeypatch):
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        crash_after_actions(m, 200)
        with pytest.raises(Crash):
            run_to_dir(RunConfig(days=12, seed=5), out)
    changed = RunConfig(days=14, seed=5, agents={"roaster_A": "passive"})
    with pytest.raises(ResumeError) as err:
        resume_to_dir(out, config=changed)
    message = str(err.value)
    assert "days: 12 → 14" in message
    assert 'agents.roaster_A: "heuristic" → "passive"' in message
    assert "--force" in message
    assert json.loads((out / "config.json").read_text())["days"] == 12, "nothing changed"
    summary = resume_to_dir(out, config=changed, force=True)
    assert summary["days_run"] == 14
    assert json.loads((out / "config.json").read_text())["days"] == 14


# -- scripted models: the LLM path, checkpointed at day ends, replayed from the record ------


def pure_brain(messages, tools):
    """A model whose reply depends on the last message only, so a redone tick gets the
    same reply as the lost one (as a recorded replay or a response cache would give)."""
    last = messages[-1]
    if last.role == "user":
        return ToolCall("view_listings", {})
    if last.role == "tool" and '"listings"' in last.content:
        listings = json.loads(last.content).get("listings", [])
        green = [x for x in listings if x["item_id"].startswith("green")]
        if green:
            cheapest = green[0]
            return ToolCall(
                "make_offer",
                {
                    "listing_id": cheapest["listing_id"],
                    "qty": min(10, cheapest["qty"]),
                    "offered_price": cheapest["asking_price"],
                },
            )
    return ToolCall("wait_for_next_day", {})


@pytest.fixture()
def pure_model():
    name = register_scripted("pure-shopper", pure_brain)
    yield name
    unregister_scripted("pure-shopper")


def model_config(name: str) -> RunConfig:
    return RunConfig(days=6, seed=2, agents={"roaster_A": name, "roaster_B": name})


def test_model_run_killed_mid_tick_resumes_identically(tmp_path, monkeypatch, pure_model):
    reference = tmp_path / "ref"
    run_to_dir(model_config(pure_model), reference)
    events = (reference / "events.jsonl").read_text()
    assert '"type":"model_call"' in events and '"tool":"make_offer"' in events
    assert '"type":"deal"' in events, "offers were accepted: the model's firm traded"
    for n in (3, 41, 90):
        out = tmp_path / f"run{n}"
        with monkeypatch.context() as m:
            crash_after_actions(m, n)
            with pytest.raises(Crash):
                run_to_dir(model_config(pure_model), out)
        resume_to_dir(out)
        same_files(out, reference)


def test_agent_conversation_is_checkpointed(tmp_path, monkeypatch, pure_model):
    out = tmp_path / "run"
    monkeypatch.setattr("econbench.coffee.sim.MODEL_DAYS_PER_CHECKPOINT", 1)  # one past, then
    with monkeypatch.context() as m:
        crash_after_actions(m, 60)
        with pytest.raises(Crash):
            run_to_dir(model_config(pure_model), out)
    state = json.loads((out / "checkpoint.json").read_text())["state"]
    agent = state["policies"]["roaster_A"]
    with CallRecord(out / RECORD, readonly=True) as record:  # sent messages: named, in it
        messages = [record.message(m["ref"]) if "ref" in m else m for m in agent["messages"]]
    roles = [m.role if isinstance(m, ChatMessage) else m["role"] for m in messages]
    assert roles[0] == "system" and "tool" in roles
    assert sum("ref" in m for m in agent["messages"]) >= len(messages) - 1, "only the reply copied"
    assert agent["stats"]["llm_calls"] >= 2
    scripted = state["policies"]["farmer_A"]  # the negotiating farmer: its routine and memory
    assert set(scripted) == {"observation", "results", "memory"}


# -- a real process, killed with SIGKILL at a random moment --------------------------------


#: Long enough that the kills below (within 0.15 s of the first checkpoint) land while the
#: run is in progress; every day beyond that would only be replayed by the resume.
KILL_DAYS = 20


def test_kill_9_at_random_moments_then_cli_resume(tmp_path):
    reference = tmp_path / "ref"
    run_to_dir(RunConfig(days=KILL_DAYS, seed=5), reference)
    command = [*CLI, "coffee", "run", "--days", str(KILL_DAYS), "--seed", "5", "--quiet"]
    resumed = 0
    for i, delay in enumerate((0.0, 0.03, 0.08, 0.15)):
        out = tmp_path / f"run{i}"
        proc = subprocess.Popen(
            [*command, "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not (out / "checkpoint.json").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if (out / "summary.json").exists():
            continue  # it finished before the kill: nothing to resume
        resumed += 1
        result = runner.invoke(app, ["resume", str(out), "--quiet"])
        assert result.exit_code == 0, result.output
        assert "resumed" in result.output
        same_files(out, reference)
    assert resumed >= 2, "most kills land while the run is in progress"


def test_cli_resume_errors(tmp_path, reference):
    result = runner.invoke(app, ["resume", str(reference)])
    assert result.exit_code == 2
    assert "completed run" in result.output
    result = runner.invoke(app, ["resume", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "not a directory" in result.output
