"""The episode runner: reference policies through every framing, records, determinism."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from econbench.agents.tools import ToolCall
from econbench.allo.episodes.actors import (
    FunctionActor,
    Input,
    PolicyActor,
    PolicyActorFactory,
    Reply,
    ToolResult,
    UserText,
)
from econbench.allo.episodes.runner import CellSpec, play_episode, safe_name, spec_from_config
from econbench.allo.framings import get_framing
from econbench.allo.framings.build import BuildFraming
from econbench.allo.game.stream import Stream, StreamConfig, generate_stream
from econbench.allo.sandbox.core import Sandbox
from econbench.allo.solvers.policies import make_policy
from econbench.allo.solvers.policies import play_episode as play_bare
from econbench.runs.allo.cell import run_cell

CFG = StreamConfig()
# ``bayes`` solves a Bellman recursion per (config, K, B): on the paper's configuration that
# takes minutes, so bayes is checked on a smaller game (6 classes, 40 tasks, B = 2) that the
# framings render just the same ("exactly 6 colours").
SMALL = StreamConfig(n_classes=6, n_tasks=40, budget=2)
CASES = [
    (CFG, 0.0, 3, ("eager", "wait:2", "hindsight")),
    (CFG, 10.0, 5, ("eager", "wait:2", "hindsight")),
    (SMALL, 0.0, 2, ("eager", "wait:2", "bayes", "hindsight")),
    (SMALL, 4.0, 2, ("eager", "wait:2", "bayes", "hindsight")),
]
MATCH = [
    pytest.param(
        framing,
        protocol,
        config,
        cost,
        budget,
        policy,
        id=f"{framing}-{protocol}-{policy}-n{config.n_tasks}-k{cost:g}",
    )
    for framing in ("r0", "r0-tool", "r1", "r2")
    for protocol in ("paper", "econbench")
    if framing != "r0-tool" or protocol == "paper"  # the keep/pass probe is the paper's only
    for config, cost, budget, policies in CASES
    for policy in policies
]


@pytest.mark.parametrize(("framing", "protocol", "config", "cost", "budget", "policy"), MATCH)
def test_framing_matches_the_bare_game(
    framing: str, protocol: str, config: StreamConfig, cost: float, budget: int, policy: str
) -> None:
    """A reference policy makes the same decisions through the framing, under either protocol,
    as in the bare game (the paper's R1/R2 texts hide the problem type: the actor recognises
    each problem's family from its wording)."""
    config = config.model_copy(update={"budget": budget})
    factory = PolicyActorFactory(policy, config, cost=cost, budget=budget)
    fr = get_framing(framing, protocol=protocol)
    for seed in (2000, 2001, 2002, 2005):
        stream = generate_stream(seed, config)
        ep = play_episode(fr, factory, stream, cost=cost, budget=budget)
        bare = play_bare(
            make_policy(policy, config, cost=cost, budget=budget), stream, cost, budget
        )
        assert ep.result.to_dict() == bare.to_dict(), (framing, policy, seed)
        assert ep.record["unresolved_turns"] == 0
        assert len(ep.record["turns"]) == config.n_tasks


def test_r3_matches_the_bare_game_with_wait_and_hindsight() -> None:
    fr = BuildFraming(sandbox=Sandbox(), workers=4)
    stream = generate_stream(2001, SMALL)
    for policy in ("wait:2", "hindsight"):
        ep = play_episode(fr, PolicyActorFactory(policy, SMALL), stream)
        assert ep.result.to_dict() == play_bare(make_policy(policy, SMALL), stream).to_dict()


def test_reference_scores_differ_between_policies() -> None:
    """Guards the equality tests above against a runner that ignores the actor."""
    factory = {p: PolicyActorFactory(p, CFG) for p in ("eager", "hindsight", "never")}
    fr = get_framing("r1")
    total = {p: 0.0 for p in factory}
    for seed in range(2000, 2006):
        for p, f in factory.items():
            total[p] += play_episode(fr, f, generate_stream(seed, CFG)).result.utility
    assert total["never"] == 0 < total["eager"] < total["hindsight"]


def test_only_hindsight_sees_the_stream() -> None:
    seen: list[Stream] = []

    class Spy:
        name = "spy"

        def reset(self, stream: Stream) -> None:
            seen.append(stream)

        def decide(self, view: Any) -> bool:
            return view.sighting >= 2

    stream = generate_stream(2000, CFG)
    fr = get_framing("r0")
    actor = PolicyActor(Spy(), fr, config=CFG, cost=0.0, budget=3, seed=2000)
    assert seen[-1].seed == 2000 and seen[-1].classes != stream.classes
    assert actor.oracle is None
    assert not PolicyActorFactory("eager", CFG).oracle
    assert PolicyActorFactory("hindsight", CFG).oracle


def test_policy_actor_rebuilds_the_view_from_text() -> None:
    """The GameView a PolicyActor reconstructs equals the game's, up to relabelling."""
    from econbench.allo.game import Game

    stream = generate_stream(2004, CFG)
    fr = get_framing("r0")
    ep = fr.episode(stream, 0.0, 3)
    actor = PolicyActor(make_policy("never"), fr, config=CFG, cost=0.0, budget=3, seed=2004)
    game = Game(stream)
    relabel: dict[int, int] = {}
    for _ in range(20):
        turn = game.turn()
        relabel.setdefault(turn.cls, len(relabel))
        actor.respond([UserText(ep.begin_turn(turn, game.budget_left))])
        mine, truth = actor.view(actor._event), game.view()  # type: ignore[arg-type]
        assert mine.t == truth.t and mine.sighting == truth.sighting
        assert mine.cls == relabel[truth.cls]
        assert sorted(mine.counts) == sorted(truth.counts)
        assert [relabel[c] for c in truth.history] == list(mine.history)
        game.step(False)


def test_episode_record_contents() -> None:
    stream = generate_stream(2000, CFG)
    ep = play_episode(get_framing("r0"), PolicyActorFactory("wait:2", CFG), stream)
    rec = ep.record
    for key in ("seed", "stream", "turns", "collected", "utility", "opt", "commits", "result"):
        assert key in rec
    assert rec["stream"]["classes"] == list(stream.classes)
    assert rec["stream"]["hot"] == list(stream.hot)
    assert [t["t"] for t in rec["turns"]] == list(range(60))
    decisions = [t for t in rec["turns"] if t["kind"] == "decision"]
    assert decisions and all(t["replies"] and t["observation"] for t in decisions)
    for t in decisions:
        assert t["replies"][0]["text"].endswith(f"DECISION: {'KEEP' if t['commit'] else 'PASS'}")
        assert t["parsed"] == ("KEEP" if t["commit"] else "PASS") and t["resolved"]
    assert sum(t["collected"] for t in rec["turns"]) == rec["collected"] == ep.result.collected
    assert all(t["first_sight"] == (t["sighting"] == 1) for t in rec["turns"])
    assert rec["commits"] and all(c["first_sight"] is False for c in rec["commits"])
    # Automatic turns before a question are batched into that question's observation.
    autos = [t for t in rec["turns"] if t["kind"] == "auto" and t["notice"]]
    assert autos
    for auto in autos:
        later = next(t for t in decisions if t["t"] > auto["t"])
        assert auto["notice"] in later["observation"]
    json.dumps(rec)  # JSON-able


def test_unparseable_r0_replies_are_unresolved_passes() -> None:
    stream = generate_stream(2000, CFG)
    actor = lambda info: FunctionActor(lambda i, h: Reply(text="I refuse to gamble."))  # noqa: E731
    ep = play_episode(get_framing("r0"), actor, stream)
    assert ep.result.commits == [] and ep.result.utility == 0
    assert ep.record["unresolved_turns"] == ep.record["decision_turns"] == 60
    # The paper's parser (urn_session.parse_decision) falls back to any bare KEEP/PASS token;
    # a reply with none at all is its "default", an unresolved PASS.
    assert ep.record["turns"][0]["reason"] == "no KEEP/PASS token"


def test_only_the_first_tool_call_runs() -> None:
    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        calls = [ToolCall("skip_solver", {}, "a"), ToolCall("claim_solver", {}, "b")]
        return Reply(tool_calls=calls)

    actor = FunctionActor(plan)
    r1 = get_framing("r1", protocol="econbench")  # the paper protocol: test_paper_protocol.py
    ep = play_episode(r1, lambda info: actor, generate_stream(2000, CFG))
    assert ep.result.commits == []
    first = ep.record["turns"][0]["replies"][0]["tool_calls"]
    assert [c["executed"] for c in first] == [True, False]
    assert "ignored" in first[1]["result"]["error"]
    # Both results reach the actor, in call order, before the next question.
    second_input = actor.history[1:4]
    assert [type(x) for x in second_input] == [ToolResult, ToolResult, UserText]
    assert [x.call_id for x in second_input[:2]] == ["a", "b"]  # type: ignore[union-attr]


def test_reply_without_tool_call_in_r1_is_unresolved() -> None:
    actor = lambda info: FunctionActor(lambda i, h: Reply(text="I would build one."))  # noqa: E731
    ep = play_episode(get_framing("r1", protocol="econbench"), actor, generate_stream(2000, CFG))
    first = ep.record["turns"][0]
    assert first["decision"] == "pass" and not first["resolved"]
    assert first["reason"] == "reply without a tool call"


def test_episode_token_cap_stops_asking() -> None:
    """R3 (protocol "econbench") caps an episode at 300k generated tokens; later questions
    are unresolved, unasked (the paper protocol's cap: tests/allo/test_r3_paper.py)."""
    fr = BuildFraming(sandbox=Sandbox(), workers=4, protocol="econbench")
    usage = {"input_tokens": 900_000, "output_tokens": 160_000}  # prompts do not count
    actor = FunctionActor(lambda i, h: Reply(text="thinking", usage=usage))
    ep = play_episode(fr, lambda info: actor, generate_stream(2000, CFG))
    assert actor.calls == 2
    decisions = [t for t in ep.record["turns"] if t["kind"] == "decision"]
    assert all(t["resolved"] for t in decisions[:2])
    assert all(not t["resolved"] and not t["replies"] for t in decisions[2:])
    assert ep.record["tokens"] == {"input_tokens": 1_800_000, "output_tokens": 320_000}
    assert actor.max_tokens == 4096


def test_actor_gets_limits_and_tool_schemas() -> None:
    actor = FunctionActor(lambda i, h: Reply(tool_calls=[ToolCall("skip_solver", {})]))
    play_episode(get_framing("r2"), lambda info: actor, generate_stream(2000, CFG))
    assert actor.max_tokens == 2500
    names = [t.openai_schema()["function"]["name"] for t in actor.tools]
    assert names == ["claim_solver", "skip_solver"]
    assert "def solve(inputs: dict) -> float" in actor.system_prompt


def _strip_wall(text: str) -> str:
    out = []
    for line in text.splitlines():
        rec = json.loads(line)
        for turn in rec["turns"]:
            for run in turn.get("sandbox", []):
                run.pop("wall_s")
        out.append(json.dumps(rec, sort_keys=True))
    return "\n".join(out)


@pytest.mark.parametrize(("framing", "seeds"), [("r0", (2000, 2001, 2002)), ("r2", (2003,))])
def test_runs_are_deterministic(tmp_path: Path, framing: str, seeds: tuple[int, ...]) -> None:
    spec = CellSpec(framing=framing, policy="random:0.3", seeds=seeds)
    run_cell(spec, tmp_path / "a")
    run_cell(spec, tmp_path / "b")
    a = (tmp_path / "a" / "episodes.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "episodes.jsonl").read_bytes()
    assert len(a.splitlines()) == len(seeds)
    other = CellSpec(framing=framing, policy="random:0.3", seeds=(seeds[0] + 100,))
    run_cell(other, tmp_path / "c")
    assert (tmp_path / "c" / "episodes.jsonl").read_bytes() != a.splitlines()[0] + b"\n"


def test_r3_runs_are_deterministic_but_for_wall_time(tmp_path: Path) -> None:
    spec = CellSpec(framing="r3", policy="eager", seeds=(2000,))
    run_cell(spec, tmp_path / "a")
    run_cell(spec, tmp_path / "b")
    a = (tmp_path / "a" / "episodes.jsonl").read_text()
    b = (tmp_path / "b" / "episodes.jsonl").read_text()
    assert _strip_wall(a) == _strip_wall(b)
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["sandbox_backend"] in ("bubblewrap", "rlimit")
    assert summary["realised_utility_mean"] > 0
    assert summary["sandbox_failures"] == 0


def test_run_cell_writes_summary_and_config(tmp_path: Path) -> None:
    spec = CellSpec(framing="r1", policy="wait:2", seeds=(2000, 2001), cost=10.0, budget=1)
    summary = run_cell(spec, tmp_path)
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk == summary
    assert summary["episodes"] == 2 and summary["framing"] == "r1"
    assert summary["build_cost"] == 10.0 and summary["budget"] == 1
    assert summary["seeds"] == "2000-2001"
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["seeds"] == [2000, 2001]
    assert config["protocol"] == "paper" and config["framing_settings"]["protocol"] == "paper"
    assert summary["protocol"] == "paper"
    assert "claim_solver also costs 10 point(s)" in config["system_prompt"]
    assert [t["function"]["name"] for t in config["tools"]] == ["claim_solver", "skip_solver"]
    # The stream is drawn with B = 3 whatever the cell's B (the paper's protocol, the default
    # since issue 11); the old per-B rule is stream_budget="cell".
    assert config["stream_config"]["budget"] == 3
    assert config["stream_config"]["generator"] == "paper"
    assert config["stream_budget"] == "fixed"
    assert spec.slug() == "r1-wait-2-k10-b1"
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [r["stream"]["generator"] for r in records] == ["paper", "paper"]
    assert [r["stream"]["draw_budget"] for r in records] == [3, 3]
    assert records[0]["stream"]["classes"] == list(generate_stream(2000).classes)
    assert spec_from_config(config).to_dict() == spec.to_dict()


def test_stream_choices_are_named_options(tmp_path: Path) -> None:
    spec = CellSpec(
        framing="r0",
        policy="eager",
        seeds=(2000,),
        budget=1,
        config=StreamConfig(generator="numpy"),
        stream_budget="cell",
    )
    run_cell(spec, tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["stream_config"]["budget"] == 1
    assert config["stream_config"]["generator"] == "numpy"
    assert config["stream_budget"] == "cell"
    assert spec.slug() == "r0-eager-k0-b1-numpy-cellstreams"
    assert spec_from_config(config).to_dict() == spec.to_dict()
    record = json.loads((tmp_path / "episodes.jsonl").read_text())
    assert record["stream"]["generator"] == "numpy" and record["stream"]["draw_budget"] == 1
    numpy_b1 = generate_stream(2000, StreamConfig(generator="numpy", budget=1))
    assert record["stream"]["classes"] == list(numpy_b1.classes)
    with pytest.raises(ValueError, match="stream budget"):
        CellSpec(framing="r0", policy="eager", stream_budget="per-b").validate()  # type: ignore[arg-type]


def test_a_config_written_before_the_stream_choices_reads_as_numpy_per_budget() -> None:
    legacy = CellSpec(framing="r0", policy="eager", budget=5).to_dict()
    del legacy["stream_budget"]
    legacy["stream_config"] = {
        k: v for k, v in StreamConfig(budget=5).model_dump().items() if k != "generator"
    }
    spec = spec_from_config(legacy)
    assert spec.stream_budget == "cell" and spec.config.generator == "numpy"
    assert spec.stream_config == StreamConfig(budget=5, generator="numpy")


def test_safe_name() -> None:
    assert safe_name("wait:2") == "wait-2"
    assert safe_name("posterior:0.88") == "posterior-0.88"
    assert safe_name("../x y") == "x-y"


def test_a_write_before_the_token_cap_still_commits() -> None:
    fr = BuildFraming(sandbox=Sandbox(), workers=4, protocol="econbench")
    stream = generate_stream(2000, CFG)
    code = "def solve(inputs):\n    return 0"

    def plan(inputs: Sequence[Input], history: list[Input]) -> Reply:
        call = ToolCall("write_script", {"name": "s", "code": code})
        return Reply(tool_calls=[call], usage={"output_tokens": 300_000})

    ep = play_episode(fr, lambda info: FunctionActor(plan), stream)
    first = ep.record["turns"][0]
    assert first["decision"] == "commit" and first["resolved"]
    assert first["reason"] == "episode token limit reached"
    assert [c.t for c in ep.result.commits] == [0]
    later = [t for t in ep.record["turns"] if t["kind"] == "decision" and t["t"] > 0]
    assert later and all(not t["resolved"] and not t["replies"] for t in later)


def test_a_cell_reports_each_turn_as_it_begins(tmp_path: Path) -> None:
    """``on_turn`` (the progress inside a long model-played episode) sees every turn the
    game plays, in order, with the episode's length, and the records are unchanged by it."""
    spec = CellSpec(framing="r1", policy="never", seeds=(2000, 2001))  # every turn asked
    seen: list[tuple[int, int]] = []
    run_cell(spec, tmp_path / "with", on_turn=lambda t, n: seen.append((t, n)))
    run_cell(spec, tmp_path / "without")
    per_episode = [seen[:60], seen[60:]]
    assert len(seen) == 120
    for turns in per_episode:
        assert [t for t, _ in turns] == sorted(t for t, _ in turns)
        assert len({t for t, _ in turns}) == 60
        assert {n for _, n in turns} == {60}
    with_log = (tmp_path / "with" / "episodes.jsonl").read_bytes()
    assert with_log == (tmp_path / "without" / "episodes.jsonl").read_bytes()
