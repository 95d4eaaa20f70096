"""``econbench.api``: the documented example runs; Python policies are recorded as what
actually played, kept apart in reports, refused by ``resume``/``replay``, and resumed from
Python with the same policy byte-identically."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from econbench import api
from econbench.agents.policy import Routine
from econbench.cli import app
from econbench.coffee import world as world_module
from econbench.runs.allo.cell import CellResumeError
from econbench.runs.benchmark import ResumeError
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.report import table2
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.frames import load_runs
from econbench.runs.replay import ReplayError, replay_run
from econbench.runs.resume import resume_run, run_status

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python_api.md"
DAYS = 4
FILES = ("events.jsonl", "daily.jsonl", "summary.json", "config.json", "checkpoint.json")
runner = CliRunner()


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


def always_wait(feedback: api.Feedback) -> api.ToolCall | None:
    return api.ToolCall("wait_for_next_day")


def idle(feedback: api.Feedback) -> api.ToolCall | None:
    return None


class Greeter(api.ScriptedPolicy):
    """A routine of several calls a day, so a checkpoint can fall inside one."""

    name = "greeter"

    def routine(self, observation: dict[str, Any]) -> Routine:
        for firm in ("farmer_A", "retailer_B"):
            yield api.ToolCall("send_message", {"recipient": firm, "title": "hi", "body": "."})
        yield api.ToolCall("wait_for_next_day")


def waiting_brain(messages: list[Any], tools: list[Any]) -> api.ToolCall:
    return api.ToolCall("wait_for_next_day")


def custom(obj: Any) -> str:
    return f"custom:{obj.__module__}.{obj.__qualname__}"


def crash_after_actions(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    original = world_module.World.act
    count = {"n": 0}

    def act(self: Any, firm_id: str, call: Any) -> Any:
        count["n"] += 1
        if count["n"] == n:
            raise Crash
        return original(self, firm_id, call)

    monkeypatch.setattr(world_module.World, "act", act)


# --------------------------------------------------------------------------- the docs


def example_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert blocks, f"{DOC} has no python example"
    return "\n".join(blocks)


def test_the_documented_example_runs(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = example_code()
    assert len(code.strip().splitlines()) <= 25, "the documented example stays notebook-sized"
    exec(compile(code, str(DOC), "exec"), {"__name__": "__main__"})
    shown = capsys.readouterr().out
    assert "roaster_A earned $" in shown and "custom:__main__.keep_everything" in shown
    runs = sorted(tmp_path.glob("econbench-*"))
    assert [p.name.split("-")[1] for p in runs] == ["allo", "coffee"]
    assert all(run_status(p) == "completed" for p in runs)


# --------------------------------------------------------------------------- CoffeeBench


def test_a_python_policy_is_recorded_as_custom_and_reported_apart(tmp_path) -> None:
    for seed in (1, 2):
        run_to_dir(RunConfig(seed=seed, days=DAYS), tmp_path / f"heuristic-{seed}")
    result = api.run_coffee(
        seed=3, days=DAYS, actors={"roaster_A": always_wait}, out=tmp_path / "custom"
    )
    config = json.loads((result.run_dir / "config.json").read_text())
    assert config["agents"]["roaster_A"] == custom(always_wait)
    assert result.summary["firms"]["roaster_A"]["policy"] == custom(always_wait)
    assert result.frames.label == f"roaster_A={custom(always_wait)} days={DAYS}"
    table = table2(load_runs(sorted(tmp_path.iterdir())))
    assert table is not None
    rows = dict(zip(table.data["configuration"], table.data["n"], strict=True))
    assert rows == {f"roaster_A=heuristic days={DAYS}": 2, result.frames.label: 1}


def test_names_model_functions_and_policies_play_the_firms_they_name(tmp_path) -> None:
    result = api.run_coffee(
        days=2,
        actors={
            "default": "passive",
            "roaster_B": api.ModelFunction(waiting_brain),
            "roaster_A": Greeter(),
        },
        out=tmp_path / "run",
    )
    agents = json.loads((result.run_dir / "config.json").read_text())["agents"]
    assert agents == {
        "default": "passive",
        "roaster_A": custom(Greeter),
        "roaster_B": "scripted/waiting_brain",
    }
    assert (result.run_dir / "record.sqlite").is_file()
    assert result.summary["firms"]["roaster_A"]["messages_sent"] == 4


def test_a_policy_without_state_is_refused_before_anything_runs(tmp_path) -> None:
    class Stateless(api.Decider):
        def decide(self, feedback: api.Feedback) -> api.ToolCall | None:
            return None

    with pytest.raises(TypeError, match="state_dict"):
        api.run_coffee(days=1, actors={"roaster_A": Stateless()}, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("api") / "ref"
    api.run_coffee(seed=4, days=DAYS, actors={"roaster_A": Greeter()}, out=out)
    return out


@pytest.fixture
def killed(tmp_path, monkeypatch) -> Path:
    out = tmp_path / "killed"
    with monkeypatch.context() as m:
        crash_after_actions(m, 75)
        with pytest.raises(Crash):
            api.run_coffee(seed=4, days=DAYS, actors={"roaster_A": Greeter()}, out=out)
    assert run_status(out) == "interrupted"
    return out


def test_resume_of_a_custom_run_is_refused_with_the_way_to_do_it(killed) -> None:
    with pytest.raises(ResumeError, match="custom policy") as info:
        resume_run(killed)
    assert "api.resume_coffee" in str(info.value) and custom(Greeter) in str(info.value)
    shown = runner.invoke(app, ["resume", str(killed)])
    assert shown.exit_code != 0
    assert "cannot be rebuilt from the run directory" in " ".join(shown.output.split())
    with pytest.raises(ResumeError, match="custom policy"):
        api.resume_coffee(killed)
    assert run_status(killed) == "interrupted", "a refusal changes nothing"


def test_resume_from_python_with_the_same_policy_is_byte_identical(killed, reference) -> None:
    result = api.resume_coffee(killed, actors={"roaster_A": Greeter()})
    assert result.summary["status"] == "completed"
    for name in FILES:
        assert (killed / name).read_bytes() == (reference / name).read_bytes(), name


def test_resume_with_another_policy_or_firm_is_refused(killed) -> None:
    with pytest.raises(ResumeError, match=r"agents\.roaster_A"):
        api.resume_coffee(killed, actors={"roaster_A": always_wait})
    with pytest.raises(ResumeError, match="roaster_B"):
        api.resume_coffee(killed, actors={"roaster_A": Greeter(), "roaster_B": idle})


def test_a_custom_run_is_not_replayed(reference, tmp_path) -> None:
    with pytest.raises(ReplayError, match="custom policy"):
        replay_run(reference, tmp_path / "again")


def test_a_model_function_run_replays_from_its_record(tmp_path) -> None:
    result = api.run_coffee(
        days=2, actors={"roaster_A": api.ModelFunction(waiting_brain)}, out=tmp_path / "m"
    )
    outcome = replay_run(result.run_dir, tmp_path / "again")
    assert outcome.identical and outcome.stopped is None


# --------------------------------------------------------------------------- AlloBench

CRASH_AT: dict[str, int | None] = {"call": None}
CALLS = {"n": 0}


def keep_then_die(text: str) -> str:
    """Keeps every tool; raises ``Crash`` at call ``CRASH_AT["call"]`` (the process dying)."""
    CALLS["n"] += 1
    if CALLS["n"] == CRASH_AT["call"]:
        raise Crash
    return "DECISION: KEEP"


def claim(text: str) -> api.ToolCall:
    return api.ToolCall("claim_solver")


def test_a_cell_played_by_a_function_is_recorded_and_resumed_from_python(tmp_path) -> None:
    seeds = (2000, 2001, 2002)
    reference = api.run_allo(framing="r0", actor=keep_then_die, seeds=seeds, out=tmp_path / "r")
    assert reference.summary["policy"] == custom(keep_then_die)
    config = json.loads((reference.run_dir / "config.json").read_text())
    assert config["policy"] == config["actor"] == custom(keep_then_die)
    CALLS["n"], CRASH_AT["call"] = 0, reference.summary["decision_turns"] - 2
    out = tmp_path / "killed"
    try:
        with pytest.raises(Crash):
            api.run_allo(framing="r0", actor=keep_then_die, seeds=seeds, out=out)
    finally:
        CRASH_AT["call"] = None
    assert run_status(out) == "interrupted"
    with pytest.raises(ResumeError, match=r"api\.resume_allo"):
        resume_run(out)
    with pytest.raises(ValueError, match="custom actor"):
        api.resume_allo(out)
    with pytest.raises(CellResumeError, match=r"policy: .*keep_then_die"):
        api.resume_allo(out, actor=claim)
    api.resume_allo(out, actor=keep_then_die)
    for name in ("episodes.jsonl", "summary.json", "config.json"):
        assert (out / name).read_bytes() == (reference.run_dir / name).read_bytes(), name
    with pytest.raises(ReplayError, match="custom policy"):
        replay_run(out, tmp_path / "again")


def test_a_reference_policy_cell_records_its_name(tmp_path) -> None:
    result = api.run_allo(framing="r1", actor="wait:2", seeds=2, out=tmp_path / "c")
    assert result.summary["policy"] == "wait:2" and len(result.frames.episodes) == 2


def test_an_allo_model_function_plays_through_the_llm_actor(tmp_path) -> None:
    def brain(messages: list[Any], tools: list[Any]) -> str:
        return "DECISION: PASS"

    result = api.run_allo(framing="r0", actor=api.ModelFunction(brain), seeds=1, out=tmp_path / "m")
    assert result.summary["policy"] == "scripted/brain" and result.summary["llm_calls"] > 0
    assert (result.run_dir / "record.sqlite").is_file()


# --------------------------------------------------------------------------- who plays


def test_the_earlier_coffee_keywords_warn_and_play_exactly_as_actors(tmp_path) -> None:
    new = api.run_coffee(
        seed=5,
        days=2,
        actors={
            "default": "passive",
            "roaster_A": always_wait,
            "roaster_B": api.ModelFunction(waiting_brain),
        },
        out=tmp_path / "new",
    )
    with pytest.warns(DeprecationWarning) as caught:
        old = api.run_coffee(
            seed=5,
            days=2,
            agents={"default": "passive"},
            policies={"roaster_A": always_wait},
            models={"roaster_B": waiting_brain},
            out=tmp_path / "old",
        )
    said = " ".join(str(w.message) for w in caught)
    assert all(f"{kw}= is deprecated" in said for kw in ("agents", "policies", "models"))
    for name in ("events.jsonl", "daily.jsonl", "summary.json", "config.json"):
        assert (old.run_dir / name).read_bytes() == (new.run_dir / name).read_bytes(), name


def test_a_firm_said_twice_or_a_python_default_is_refused_before_anything_runs(
    tmp_path,
) -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="given twice"):
        api.run_coffee(
            days=1,
            actors={"roaster_A": "heuristic"},
            policies={"roaster_A": always_wait},
            out=tmp_path / "a",
        )
    with pytest.raises(TypeError, match=r"actors\['default'\] must be a name"):
        api.run_coffee(days=1, actors={"default": always_wait}, out=tmp_path / "b")
    with pytest.raises(TypeError, match=r"actors\['roaster_A'\] is not a name"):
        api.run_coffee(days=1, actors={"roaster_A": 3}, out=tmp_path / "c")  # type: ignore[dict-item]
    assert not any(tmp_path.iterdir())


def test_the_earlier_allo_keywords_warn_and_play_exactly_as_actor(tmp_path) -> None:
    def brain(messages: list[Any], tools: list[Any]) -> str:
        return "DECISION: KEEP"

    pairs = (
        ({"policy": "wait:2"}, {"actor": "wait:2"}),
        ({"model": brain}, {"actor": api.ModelFunction(brain)}),
    )
    for index, (old_kw, new_kw) in enumerate(pairs):
        new = api.run_allo(framing="r0", seeds=1, out=tmp_path / f"new{index}", **new_kw)
        with pytest.warns(DeprecationWarning, match="is deprecated: say who plays with actor="):
            old = api.run_allo(framing="r0", seeds=1, out=tmp_path / f"old{index}", **old_kw)
        for name in ("episodes.jsonl", "summary.json", "config.json"):
            assert (old.run_dir / name).read_bytes() == (new.run_dir / name).read_bytes()
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="say who plays once"):
        api.run_allo(framing="r0", actor=claim, policy="eager", out=tmp_path / "both")
    assert not (tmp_path / "both").exists()


def test_an_allo_actor_factory_is_told_from_a_function_of_text(tmp_path) -> None:
    from econbench.allo.episodes.actors import FunctionActor

    class KeepAll:
        """A factory: a callable object with a name, making a fresh actor per episode."""

        name = "custom:tests.keep_all"

        def __init__(self) -> None:
            self.made = 0

        def __call__(self, episode: Any) -> FunctionActor:
            self.made += 1
            return FunctionActor(lambda inputs, history: api.Reply(text="DECISION: KEEP"))

    factory = KeepAll()
    result = api.run_allo(framing="r0", actor=factory, seeds=2, out=tmp_path / "f")
    assert factory.made == 2 and result.summary["policy"] == custom(KeepAll)
    by_text = api.run_allo(framing="r0", actor=keep_then_die, seeds=2, out=tmp_path / "t")
    assert by_text.summary["policy"] == custom(keep_then_die)
    assert by_text.summary["score"] == result.summary["score"], "both keep every tool"


def test_the_command_line_says_who_plays_with_actor_and_keeps_the_old_names(tmp_path) -> None:
    written = {}
    for flag in ("--actor", "--agent"):
        out = tmp_path / f"coffee{flag}"
        args = ["coffee", "run", "--days", "2", flag, "roaster_A=passive", "--out", str(out)]
        assert runner.invoke(app, args).exit_code == 0, flag
        written[flag] = (out / "events.jsonl").read_bytes()
        assert json.loads((out / "config.json").read_text())["agents"]["roaster_A"] == "passive"
    assert written["--actor"] == written["--agent"]
    for flag in ("--actor", "--policy"):
        out = tmp_path / f"allo{flag}"
        args = ["allo", "run", "--framing", "r0", flag, "wait:2", "--episodes", "1"]
        assert runner.invoke(app, [*args, "--out", str(out), "--quiet"]).exit_code == 0, flag
        written[flag] = (out / "episodes.jsonl").read_bytes()
        assert json.loads((out / "summary.json").read_text())["policy"] == "wait:2"
    assert written["--actor"] == written["--policy"]
