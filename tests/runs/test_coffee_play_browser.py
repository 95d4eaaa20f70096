"""``econbench coffee play`` in headless Chromium (Debian's, driven by Playwright): a person
plays roaster_A for two days through the page's forms.

Skipped when Chromium is not installed, except under CI (``CI`` set), where it must be.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from econbench.coffee.toolkit import toolkit_class
from econbench.runs.coffee.config import RunConfig
from econbench.runs.layout import CONFIG, EVENTS
from econbench.runs.play.coffee_play import play_coffee

with contextlib.suppress(ImportError):  # a dev dependency; the browser fixture skips
    from playwright.sync_api import Browser, Page, expect
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.runs.browser import WAIT_MS, checked_page, launched_browser

MAX_WAKES = 20
"""More waits than a two-day game can need (each wake asks the person again)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from launched_browser("the play page's browser tests")


class Game:
    """A game played in a thread, its page's address once it is served."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.url = ""
        self.ready = threading.Event()
        self.outcome: dict[str, Any] = {}
        config = RunConfig.model_validate({"days": 2, "agents": {"roaster_A": "human:web"}})
        self.thread = threading.Thread(target=self._play, args=(config,), daemon=True)
        self.thread.start()
        assert self.ready.wait(WAIT_MS / 1000), "the page was never served"

    def _play(self, config: RunConfig) -> None:
        try:
            self.outcome["summary"] = play_coffee(
                config,
                self.out,
                firm="roaster_A",
                front="browser",
                open_page=False,
                linger=True,
                echo=self._echo,
            )
        except BaseException as exc:  # the test asserts on it
            self.outcome["error"] = exc
        finally:
            self.ready.set()

    def _echo(self, line: str) -> None:
        found = re.search(r"http://\S+", line)
        if found and not self.url:
            self.url = found.group(0)
            self.ready.set()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from checked_page(browser, width=1500)


def submit(page: Page, tool: str, **fields: str) -> None:
    page.click(f'details.tool[data-tool="{tool}"] > summary')
    form = page.locator(f'form.tool[data-tool="{tool}"]')
    for name, value in fields.items():
        form.locator(f'[name="{name}"]').fill(value)
    form.locator("button[type=submit]").click()


def wait_until(page: Page, done: Callable[[], bool]) -> None:
    """Wait for the next day (again after each wake: an answer to a message, an offer)
    until ``done``."""
    for _ in range(MAX_WAKES):
        if done():
            return
        button = page.locator("#wait-button:not([disabled])")
        try:
            button.wait_for(timeout=WAIT_MS / 6)
        except PlaywrightTimeout:
            continue  # the game ended, or the world is moving: look again
        turn = page.locator("#status").get_attribute("data-turn")  # before the click: after
        button.click()  # it the page may already show the next turn, or the game's end
        expect(page.locator("#status")).not_to_have_attribute("data-turn", turn or "")
    raise AssertionError("the game never got there")


def test_a_person_plays_two_days_through_the_page(page: Page, tmp_path: Path) -> None:
    game = Game(tmp_path / "game")
    assert game.url, game.outcome
    page.goto(f"{game.url}?poll=100")
    expect(page.locator("#status")).to_have_text(re.compile("Your turn"))
    expect(page.locator("#clock")).to_contain_text("Day 0 of 2 · 09:00 · 20 of 20 actions left")
    expect(page.locator("#observation")).to_contain_text("You are roaster_A")
    expect(page.locator('details.panel[data-panel="stock"]')).to_contain_text("roasted_coffee_kg")
    roaster_tools = list(toolkit_class("roaster").tool_specs())
    expect(page.locator("details.tool")).to_have_count(len(roaster_tools))  # a form per tool

    # A bad argument is refused as the tool's own error result, and spends no action.
    submit(page, "post_listing", item_id="roasted_coffee_kg", qty="ten", asking_price="9.5")
    error = page.locator('form.tool[data-tool="post_listing"] .tool-error')
    expect(error).to_contain_text('"status": "error"')
    expect(error).to_contain_text("'qty': Input should be a valid integer")
    expect(page.locator("#clock")).to_contain_text("20 of 20 actions left")

    page.locator('form.tool[data-tool="post_listing"] [name="qty"]').fill("10")
    page.locator('form.tool[data-tool="post_listing"] button[type=submit]').click()
    expect(page.locator("#clock")).to_contain_text("09:30 · 19 of 20 actions left")
    expect(page.locator("#results")).to_contain_text('"seller": "roaster_A"')
    expect(page.locator('details.panel[data-panel="listings"]')).to_contain_text("roaster_A")

    submit(page, "send_message", recipient="farmer_A", title="Hello", body="<b>green</b> beans?")
    expect(page.locator("#clock")).to_contain_text("10:00 · 18 of 20 actions left")
    expect(page.locator('details.panel[data-panel="messages"]')).to_contain_text(
        "<b>green</b> beans?"  # shown as text, never as markup
    )

    page.reload()  # closing and reopening the page loses nothing
    expect(page.locator("#clock")).to_contain_text("10:00 · 18 of 20 actions left")
    expect(page.locator("#message-count")).not_to_have_text("0")

    wait_until(page, lambda: "Day 1 of 2" in page.locator("#clock").inner_text())
    expect(page.locator("#observation")).to_contain_text("Day 1 of 2")
    wait_until(page, lambda: page.locator("#status.over").count() > 0)
    expect(page.locator("#status")).to_contain_text("The game is over (completed)")
    expect(page.locator("#status")).to_contain_text("roaster_A net income $")
    page.click("#leave-button")  # "Close the game": the command ends
    game.thread.join(WAIT_MS / 1000)
    assert "error" not in game.outcome, game.outcome
    summary = game.outcome["summary"]
    assert summary["status"] == "completed"
    assert summary["firms"]["roaster_A"]["policy"] == "human:web"
    assert json.loads((game.out / CONFIG).read_text())["agents"]["roaster_A"] == "human:web"
    events = [json.loads(line) for line in (game.out / EVENTS).read_text().splitlines()]
    mine = [e for e in events if e["type"] == "tool_call" and e["firm"] == "roaster_A"]
    assert [e["tool"] for e in mine][:3] == ["post_listing", "send_message", "wait_for_next_day"]
    assert mine[0]["arguments"] == {"item_id": "roasted_coffee_kg", "qty": 10, "asking_price": 9.5}
