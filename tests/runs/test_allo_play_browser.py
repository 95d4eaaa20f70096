"""``econbench allo play`` in the browser: a person plays an R1 episode through the page.

Headless Chromium (Debian's, driven by Playwright, as the viewer's tests do) clicks the tools
the page offers; the game plays in ``play_in_browser``'s thread. The cell it writes must be
the one the terminal writes for the same moves, byte for byte, and the viewer's API lists it
under ``human:<name>``. Skipped without Chromium, except under CI, where it must be there.
"""

from __future__ import annotations

import contextlib
import io
import json
import queue
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.runs.browser import checked_page, launched_browser

from econbench.allo.episodes.runner import CellSpec
from econbench.allo.game.stream import StreamConfig
from econbench.runs.play.allo_play import Outcome, play_in_browser, play_in_terminal
from econbench.runs.play.allo_terminal import TerminalSeat

with contextlib.suppress(ImportError):  # a dev dependency; the browser fixture skips
    from playwright.sync_api import Browser, Page, expect

MOVES = ["claim_solver", "skip_solver", "claim_solver", "claim_solver"]
"""The person's moves on seed 2000's four R1 problems."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from launched_browser("the play page's browser tests")


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from checked_page(browser, width=1300)


def r1_spec() -> CellSpec:
    return CellSpec(
        framing="r1", policy="human:alice", seeds=(2000,), config=StreamConfig(n_tasks=4)
    )


def play_on_page(out: Path) -> tuple[threading.Thread, dict[str, Any], str]:
    """Start the game in the browser seat; its thread, where its outcome lands, its URL."""
    spec = r1_spec()
    urls: queue.Queue[str] = queue.Queue()
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["outcome"] = play_in_browser(
                spec,
                out,
                spec.make_framing(),
                resume=False,
                open_page=False,
                echo=lambda text: None,
                ready=urls.put,
            )
        except BaseException as exc:  # seen by the test
            result["error"] = exc
            urls.put("")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    url = urls.get(timeout=120)
    assert url, result.get("error")
    return thread, result, url


def test_a_person_plays_r1_in_the_browser_as_in_the_terminal(page: Page, tmp_path: Path) -> None:
    thread, result, url = play_on_page(tmp_path / "page")
    page.goto(url + "?poll=100")
    conversation = page.locator("#conversation")
    expect(conversation).to_contain_text("Problem 1 of 4")
    expect(page.locator("#conversation details")).to_contain_text("persistent solver")
    expect(page.locator("#tools form")).to_have_count(2)
    page.reload()  # the state is the server's: the same turn comes back
    for number, move in enumerate(MOVES, 1):
        expect(page.locator("#turn-no")).to_have_text(f"(turn {number})")
        expect(conversation).to_contain_text(f"Problem {number} of 4")
        page.locator("#tools").get_by_role("button", name=move, exact=True).click()
    expect(page.locator("#finished-title")).to_have_text("Game over")
    expect(page.locator("#summary")).to_contain_text("score (pooled utility / OPT)")
    expect(page.locator("#episodes")).to_contain_text("2000")

    runs = json.load(urllib.request.urlopen(url.replace("/play/allo", "/api/runs")))
    assert [run["actors"] for run in runs["runs"]] == [["human:alice"]]

    page.get_by_role("button", name="Close the game").click()
    thread.join(60)
    assert not thread.is_alive()
    outcome = result["outcome"]
    assert isinstance(outcome, Outcome) and outcome.status == "over"

    # The same moves typed in the terminal write the same cell.
    # (In a thread of its own: Playwright's sync API keeps an event loop running on this one.)
    typed = io.StringIO("".join(f"/{move}\n" for move in MOVES))
    spec = r1_spec()
    out = tmp_path / "terminal"
    seat = TerminalSeat(typed, io.StringIO())
    typing = threading.Thread(
        target=play_in_terminal,
        args=(spec, out, spec.make_framing(), seat),
        kwargs={"resume": False},
    )
    typing.start()
    typing.join(60)
    for name in ("episodes.jsonl", "summary.json", "config.json"):
        assert (tmp_path / "page" / name).read_bytes() == (out / name).read_bytes(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["policy"] == "human:alice" and summary["utility_mean"] == 3.0


def test_a_move_the_page_cannot_send_is_refused_in_words(page: Page, tmp_path: Path) -> None:
    thread, result, url = play_on_page(tmp_path / "cell")
    page.goto(url + "?poll=100")
    expect(page.locator("#conversation")).to_contain_text("Problem 1 of 4")
    # A stale turn (another tab answered it) is refused, and nothing is played.
    request = urllib.request.Request(
        url.replace("/play/allo", "/api/play/allo/reply"),
        data=json.dumps({"turn": 99, "text": "", "call": {"name": "claim_solver"}}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 409
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#finished-title")).to_have_text("You left the game")
    thread.join(60)
    assert result["outcome"].status == "left"
    assert not (tmp_path / "cell" / "summary.json").exists()
