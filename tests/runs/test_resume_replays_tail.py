"""A run a model plays is checkpointed every few days, and a resume replays the model calls
recorded after the checkpoint instead of asking the model again (issue 27, item 2): the
resumed run's files and record are byte-identical to an uninterrupted run's, and a call
already made is never made twice; where the record stops holding the request, the model is
asked from there."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from econbench.agents.models.record import CallRecord
from econbench.agents.models.registry import register_scripted, unregister_scripted
from econbench.agents.tools import ToolCall
from econbench.coffee import sim as sim_module
from econbench.coffee import world as world_module
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import resume_to_dir, run_to_dir
from econbench.runs.layout import CHECKPOINT, RECORD

MODEL = "scripted/tail-shopper"
FILES = ("events.jsonl", "daily.jsonl", "summary.json", "checkpoint.json", "progress.json")
CONFIG = RunConfig(days=4, seed=5, agents={"roaster_A": MODEL, "retailer_B": MODEL})
ASKED = {"n": 0}


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


def shopper(messages, tools):
    """Looks at the market, bids on green beans when it sees some, else waits."""
    ASKED["n"] += 1
    last = messages[-1]
    if last.role == "user":
        return ToolCall("view_listings", {})
    if last.role == "tool" and '"listings"' in last.content:
        listings = json.loads(last.content).get("listings", [])
        green = [x for x in listings if "green" in x["item_id"]]
        if green:
            offer = {
                "listing_id": green[0]["listing_id"],
                "qty": min(5, green[0]["qty"]),
                "offered_price": green[0]["asking_price"],
            }
            return ToolCall("make_offer", offer)
    return ToolCall("wait_for_next_day", {})


@pytest.fixture(autouse=True)
def model():
    register_scripted(MODEL, shopper)
    yield
    unregister_scripted(MODEL)


@pytest.fixture(autouse=True)
def daily_checkpoints(monkeypatch):
    """Checkpoints at every day's end, so that a 4-day run is killed past several of them
    (the schedule itself is checked below with the real period)."""
    monkeypatch.setattr(sim_module, "MODEL_DAYS_PER_CHECKPOINT", 1)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, int]:
    register_scripted(MODEL, shopper)
    ASKED["n"] = 0
    out = tmp_path_factory.mktemp("ref") / "run"
    run_to_dir(CONFIG, out)
    unregister_scripted(MODEL)
    return out, ASKED["n"]


def calls_of(path: Path) -> list[tuple]:
    with CallRecord(path, readonly=True) as record:
        return [(c.agent, c.idx, c.request_key, json.dumps(c.output)) for c in record.calls()]


def killed_at(tmp_path: Path, monkeypatch, action: int) -> Path:
    """The run, killed in the middle of its ``action``-th action."""
    out = tmp_path / "run"
    original = world_module.World.act
    count = {"n": 0}

    def act(self, firm_id, call):
        count["n"] += 1
        if count["n"] == action:
            raise Crash
        return original(self, firm_id, call)

    with monkeypatch.context() as m:
        m.setattr(world_module.World, "act", act)
        with pytest.raises(Crash):
            run_to_dir(CONFIG, out)
    return out


def sealed_and_held(out: Path) -> tuple[int, int]:
    """Calls the checkpoint sealed, and calls the record holds."""
    sealed = json.loads((out / CHECKPOINT).read_text())["record"]["calls"]
    with CallRecord(out / RECORD, readonly=True) as record:
        return sealed, record.count_calls()


@pytest.mark.parametrize("action", [45, 80, 120])
def test_a_resume_replays_the_calls_after_the_checkpoint_and_asks_only_for_the_rest(
    tmp_path, monkeypatch, reference, action
) -> None:
    ref, asked_in_all = reference
    out = killed_at(tmp_path, monkeypatch, action)
    sealed, held = sealed_and_held(out)
    assert held > sealed, "the killed run had made model calls since its last checkpoint"
    ASKED["n"] = 0
    resume_to_dir(out)
    assert ASKED["n"] == asked_in_all - held, "no recorded call is asked again"
    for name in FILES:
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name
    assert calls_of(out / RECORD) == calls_of(ref / RECORD)


def test_where_the_record_no_longer_holds_the_request_the_model_is_asked(
    tmp_path, monkeypatch, reference
) -> None:
    ref, asked_in_all = reference
    out = killed_at(tmp_path, monkeypatch, 80)
    sealed, held = sealed_and_held(out)
    assert held - sealed >= 3
    db = sqlite3.connect(out / RECORD)  # the tail's second call: some other request
    with db:
        db.execute(
            "UPDATE calls SET request_key = 'another' WHERE agent = 'roaster_A' AND idx = "
            "(SELECT MIN(idx) + 1 FROM calls WHERE agent = 'roaster_A' AND idx >= ?)",
            (json.loads((out / CHECKPOINT).read_text())["record"]["agents"]["roaster_A"]["calls"],),
        )
    db.close()
    ASKED["n"] = 0
    resume_to_dir(out)
    assert ASKED["n"] > asked_in_all - held, "from the changed call on, the model is asked"
    for name in FILES:
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name
    assert calls_of(out / RECORD) == calls_of(ref / RECORD), "the record is written again"


@pytest.mark.parametrize(
    ("period", "days", "written"),
    [
        (None, 12, [0, 10, 12]),  # the real period: every 10th day's end, and the last
        (1, 4, [0, 1, 2, 3, 4]),
        (3, 4, [0, 3, 4]),
    ],
)
def test_a_model_run_checkpoints_at_the_ends_of_every_periodth_day_and_the_last(
    tmp_path, monkeypatch, period, days, written
) -> None:
    from econbench.runs import checkpoint as checkpoint_module

    if period is None:
        monkeypatch.undo()  # the module's own period
        register_scripted(MODEL, shopper)
        assert sim_module.MODEL_DAYS_PER_CHECKPOINT == 10
    else:
        monkeypatch.setattr(sim_module, "MODEL_DAYS_PER_CHECKPOINT", period)
    seen: list[int] = []
    original = checkpoint_module.write_checkpoint

    def write_checkpoint(run_dir, data, state_json=None, **kw):
        seen.append(data["day"])
        original(run_dir, data, state_json, **kw)

    monkeypatch.setattr("econbench.runs.coffee.run.write_checkpoint", write_checkpoint)
    run_to_dir(CONFIG.model_copy(update={"days": days}), tmp_path / "run")
    assert seen == written, "the start, then the period's day ends and the last"


def test_a_checkpoint_names_the_sent_messages_and_a_lost_one_is_refused(
    tmp_path, monkeypatch, reference
) -> None:
    from econbench.runs.coffee.run import ResumeError

    out = killed_at(tmp_path, monkeypatch, 80)
    saved = json.loads((out / CHECKPOINT).read_text())["state"]["policies"]["roaster_A"]
    refs = [m["ref"] for m in saved["messages"] if "ref" in m]
    assert len(refs) >= len(saved["messages"]) - 1, "all but the last reply are named"
    db = sqlite3.connect(out / RECORD)
    with db:
        db.execute("DELETE FROM messages WHERE hash = ?", (refs[1],))
    db.close()
    before = (out / "events.jsonl").read_bytes()
    with pytest.raises(ResumeError, match=r"message .* is missing") as info:
        resume_to_dir(out)
    assert "\n" not in str(info.value)
    assert (out / "events.jsonl").read_bytes() == before, "a refusal changes nothing"


# -- a real process played by a model, killed with SIGKILL at random moments ------------------

KILL_CONFIG = RunConfig(days=25, seed=5, agents={"roaster_A": MODEL, "retailer_B": MODEL})
KILLS = int(os.environ.get("ECONBENCH_KILLS", "6"))
"""How many kills the test makes (``ECONBENCH_KILLS=40`` for the issue's check)."""
PLAY = """
import sys
from pathlib import Path
from econbench.agents.models.registry import register_scripted
from econbench.runs.coffee.run import run_to_dir
from tests.runs.test_resume_replays_tail import KILL_CONFIG, MODEL, shopper
register_scripted(MODEL, shopper)
run_to_dir(KILL_CONFIG, Path(sys.argv[1]))
"""


def test_kill_9_at_random_moments_of_a_model_run_then_resume(tmp_path) -> None:
    reference = tmp_path / "ref"
    run_to_dir(KILL_CONFIG, reference)
    root = Path(__file__).resolve().parents[2]
    draw = random.Random(27)
    resumed = 0
    for i in range(KILLS):
        out = tmp_path / f"run{i}"
        proc = subprocess.Popen(
            [sys.executable, "-c", PLAY, str(out)],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not (out / CHECKPOINT).exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(draw.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if (out / "summary.json").exists():
            continue  # it finished before the kill
        resumed += 1
        resume_to_dir(out)
        for name in FILES:
            assert (out / name).read_bytes() == (reference / name).read_bytes(), (i, name)
        assert calls_of(out / RECORD) == calls_of(reference / RECORD), i
    assert resumed >= KILLS // 2, "most kills land while the run is in progress"


# -- an AlloBench cell: the episode in flight replays its recorded calls ------------------------

CELL_MODEL = "scripted/tail-claimer"
CALLS = {"n": 0, "crash_at": None}


def claimer(messages, tools):
    """Claims a solver for every task; after the tool's answer, says so. Dies (a ``Crash``)
    at call ``CALLS["crash_at"]``."""
    from econbench.agents.models.base import ModelOutput

    CALLS["n"] += 1
    if CALLS["n"] == CALLS["crash_at"]:
        raise Crash
    if messages[-1].role == "tool":
        return ModelOutput(model=CELL_MODEL, text="Done.", stop_reason="stop")
    return ModelOutput(model=CELL_MODEL, tool_calls=[ToolCall("claim_solver", {})])


def test_a_resumed_cell_replays_the_calls_of_the_episode_in_flight(tmp_path) -> None:
    from econbench.allo.episodes.runner import CellSpec
    from econbench.runs.allo.cell import run_cell

    spec = CellSpec(framing="r1", policy=CELL_MODEL, seeds=(2000, 2001, 2002))
    register_scripted(CELL_MODEL, claimer)
    try:
        CALLS.update(n=0, crash_at=None)
        run_cell(spec, tmp_path / "ref")
        in_all = CALLS["n"]
        out = tmp_path / "cell"
        CALLS.update(n=0, crash_at=in_all // 3 + 3)  # the third call of the second episode
        with pytest.raises(Crash):
            run_cell(spec, out)
        with CallRecord(out / RECORD, readonly=True) as record:
            held = record.count_calls()
        sealed = json.loads((out / CHECKPOINT).read_text())["record"]["calls"]
        assert held > sealed, "the episode in flight had recorded calls"
        CALLS.update(n=0, crash_at=None)
        run_cell(spec, out, resume=True)
    finally:
        unregister_scripted(CELL_MODEL)
    assert CALLS["n"] == in_all - held, "the recorded calls of the episode were not asked again"
    for name in ("episodes.jsonl", "summary.json", "checkpoint.json"):
        assert (out / name).read_bytes() == (tmp_path / "ref" / name).read_bytes(), name
    assert calls_of(out / RECORD) == calls_of(tmp_path / "ref" / RECORD)
