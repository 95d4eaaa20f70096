"""The game state machine on hand-made streams."""

from __future__ import annotations

import pytest

from econbench.allo.game import EpisodeResult, Game, hindsight_opt
from econbench.allo.game.stream import Stream, StreamConfig, generate_stream

CFG = StreamConfig(n_classes=4, n_tasks=10, budget=2, n_hot=2)
# turn:         0  1  2  3  4  5  6  7  8  9
CLASSES = (3, 0, 0, 1, 0, 2, 1, 0, 1, 0)  # counts: 0→5, 1→3, 2→1, 3→1
STREAM = Stream(seed=11, config=CFG, hot=(0, 1), classes=CLASSES)


def test_commit_collects_and_auto_turns() -> None:
    g = Game(STREAM)
    assert g.turn().needs_decision and g.turn().sighting == 1
    g.step(False)  # t0: class 3, pass
    g.step(False)  # t1: class 0 (1st), pass
    turn = g.turn()
    assert (turn.t, turn.cls, turn.sighting) == (2, 0, 2)
    g.step(True)  # t2: commit class 0 at its 2nd sighting
    g.step(False)  # t3: class 1, pass
    turn = g.turn()
    assert turn.has_tool and not turn.needs_decision  # t4: class 0 has a tool
    with pytest.raises(ValueError):
        g.step(True)
    g.step(False)
    v = g.view()
    assert v.t == 5 and v.counts == (3, 1, 1, 1) and v.built == frozenset({0})
    assert v.first_seen == (1, 3, 5, 0) and v.history == CLASSES[:6]
    r = g.play(lambda view: False)
    assert r.collected == 4  # turns 2, 4, 7, 9
    assert r.commits[0].collects == 4 and r.commits[0].sighting == 2
    assert not r.commits[0].first_sight and not r.commits[0].trap
    assert r.unused_budget == 1 and r.hot_never_tooled == 1
    assert r.utility == 4.0 and r.opt == 8.0


def test_session_ends_when_budget_is_spent() -> None:
    g = Game(STREAM, cost=1.5)
    g.step(True)  # class 3 (trap), collects 1
    g.step(True)  # class 0 at first sight; budget now 0
    assert g.done and g.budget_left == 0
    r = g.result()
    assert r.collected == 1 + 5
    assert [c.collects for c in r.commits] == [1, 5]
    assert r.trap_commits == 1 and r.utility == 6 - 3.0
    assert r.opt == hindsight_opt(STREAM, 1.5) == (5 - 1.5) + (3 - 1.5)
    assert all(rec.auto for rec in g.records[2:]) and len(g.records) == 10
    with pytest.raises(RuntimeError):
        g.step(False)


def test_rebuild_spends_budget_and_charge() -> None:
    g = Game(STREAM, cost=2.0)
    g.step(False)
    g.step(True)  # class 0
    g.charge_rebuild()  # the budget is now spent: pending and later turns are automatic
    r = g.result()
    assert g.done and r.rebuilds == 1 and r.unused_budget == 0
    assert r.collected == 5 and r.utility == 5 - 4.0
    with pytest.raises(RuntimeError):
        g.charge_rebuild()


def test_zero_budget_and_hindsight_opt() -> None:
    g = Game(STREAM, budget=0)
    assert g.done and g.result().utility == 0 and g.result().opt == 0
    assert hindsight_opt(STREAM) == 8
    assert hindsight_opt(STREAM, budget=3) == 9
    assert hindsight_opt(STREAM, cost=4.0) == 1.0
    assert hindsight_opt(STREAM, cost=5.0) == 0.0


def test_result_round_trips_through_dict() -> None:
    stream = generate_stream(3)
    r = Game(stream, cost=0.5).play(lambda v: v.sighting >= 2)
    assert EpisodeResult.from_dict(r.to_dict()) == r
    assert r.utility == r.collected - 0.5 * len(r.commits)
    assert r.collected == sum(c.collects for c in r.commits)
