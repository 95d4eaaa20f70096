"""econbench sends, byte for byte, what the AlloBench paper's own scripts sent (issue 24).

``tests/allo/data/paper_requests`` holds every request body the paper's scripts sent, run
offline with their model client pointed at a recording stub and a scripted player answering
(its README says how it was made and the player's rules). Each test here replays one fixture
file's episodes through econbench — the condition ``replay.TABLE`` names, the same scripted
decisions, the real SDKs — against the same kind of stub, and asserts that every request is
the paper's: the same endpoint and the same bytes (so the same messages, system prompt, tool
schemas, tool results and parameters). ``diff.ALLOWED`` lists the differences accepted; it is
empty.

By default a file replays ``replay.TABLE``'s seeds (the R3 files: a few, as each script run
costs tens of milliseconds in the sandbox; the others: 2000-2003 and 5000-5003 of every cell
and vocabulary, and every seed of the RL rollouts). ``ECONBENCH_CONFORMANCE=all`` replays every
episode of every file; ``python -m tests.allo.paper_conformance`` prints the comparison.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from tests.allo.paper_conformance import diff, fixture, replay
from tests.allo.paper_conformance.stub import RecordingStub

DEFAULT_SEEDS = (2000, 2001, 2002, 2003, 5000, 5001, 5002, 5003)
"""The seeds a file without its own default replays: those of the independent check."""


def seeds_for(file: str) -> list[int]:
    """The seeds a default test run replays for ``file`` (all of them under
    ``ECONBENCH_CONFORMANCE=all``)."""
    available = fixture.seeds_of(file)
    if os.environ.get("ECONBENCH_CONFORMANCE") == "all":
        return available
    chosen = replay.TABLE[file].default_seeds or DEFAULT_SEEDS
    picked = [s for s in available if s in chosen]
    return picked or available


@pytest.fixture(scope="module")
def stub() -> Iterator[RecordingStub]:
    with RecordingStub() as server:
        yield server


def test_every_fixture_file_is_played_by_a_condition() -> None:
    """No captured file goes unchecked, and every condition of the table exists."""
    from econbench.allo.paper.conditions import CONDITIONS

    assert sorted(replay.TABLE) == sorted(fixture.files())
    assert {entry.condition for entry in replay.TABLE.values()} <= set(CONDITIONS)


def test_no_difference_is_allowed() -> None:
    assert diff.ALLOWED == ()


@pytest.mark.parametrize("file", sorted(replay.TABLE))
def test_econbench_sends_the_papers_requests(file: str, stub: RecordingStub) -> None:
    episodes = fixture.episodes(file, seeds_for(file))
    assert episodes, f"{file}: no episode to replay"
    got = replay.replay(file, episodes, stub)
    report = diff.compare(file, episodes, got)
    assert report.identical, report.summary()
    assert sum(len(r.requests) for r in got) == sum(len(e.requests) for e in episodes)


def test_a_changed_request_is_caught(stub: RecordingStub) -> None:
    """The comparison can fail: the frontier R2 replayed under the economic surface's rules
    (the charge sentence stated at K = 0, 4,000 tokens a reply) is told apart at once."""
    file = "r2_code_haiku"
    episodes = fixture.episodes(file, [2000])
    report = diff.compare(file, episodes, replay.replay(file, episodes, stub, condition="surface"))
    assert not report.identical
    first = report.episodes[0].first or ""
    assert "request 0" in first and ("system" in first or "params" in first)
