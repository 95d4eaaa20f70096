"""The viewer's page in headless Chromium (Debian's, driven by Playwright).

Skipped when Chromium is not installed, except under CI (``CI`` set), where it must be.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import json
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.image
import numpy as np
import pytest
from tests.runs.browser import checked_page, launched_browser
from tests.runs.viewer_samples import (
    HOSTILE,
    SUMMARY,
    allo_cell,
    append,
    coffee_run,
    compacting_run,
    hold_back_last_day,
)

from econbench.runs import layout
from econbench.runs.lock import RunLock
from econbench.runs.viewer import Catalog, ViewerServer, serve_in_thread
from econbench.runs.viewer.bundle import write_bundle
from econbench.runs.viewer.data import run_id

with contextlib.suppress(ImportError):  # a dev dependency; the browser fixture skips
    from playwright.sync_api import Browser, Locator, Page, expect

DAYS = 4
FIRMS = ("farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B")
FIRM_COLORS = {"farmer_A": "#1b9e77", "roaster_A": "#d95f02", "retailer_A": "#7570b3"}
FESTIVAL = (1, 2)
"""The sample run's festival days, inside its few days so that the charts shade them."""


@dataclass
class Site:
    url: str
    root: Path
    held: dict[str, list[str]]  # the live run's last day, not yet written

    def open(self, page: Page, rel: str, **more: object) -> None:
        extra = "".join(f"&{key}={value}" for key, value in more.items())
        page.goto(f"{self.url}?poll=150#run={run_id(rel)}{extra}")

    def events(self, rel: str) -> list[dict[str, Any]]:
        return layout.read_jsonl(self.root / rel / layout.EVENTS)


def paper_run(out: Path) -> None:
    """A run of condition ``paper``: the reference's economy, its heuristic roaster_A."""
    from econbench.runs.coffee.config import RunConfig
    from econbench.runs.coffee.run import run_to_dir

    config = {"days": 2, "condition": "paper", "agents": {"roaster_A": "heuristic"}}
    run_to_dir(RunConfig.model_validate(config), out)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("viewer-site")
    coffee_run(root / "coffee", days=DAYS, economy={"festival_days": list(FESTIVAL)})
    allo_cell(root / "allo", episodes=2)
    allo_cell(root / "r3", framing="r3", episodes=1, policy="eager")
    compacting_run(root / "compacting")
    paper_run(root / "paper")
    shutil.copytree(root / "coffee", root / "live")
    held = hold_back_last_day(root / "live")
    lock = RunLock(root / "live")
    lock.acquire()  # as the process writing a live run holds it
    server = ViewerServer(Catalog(root))
    serve_in_thread(server)
    yield Site(server.url, root, held)
    server.shutdown()
    server.server_close()
    lock.release()


@pytest.fixture(scope="module")
def browser(site: Site) -> Iterator[Browser]:
    """One Chromium for the module. It depends on ``site`` so that the sample runs are made
    first: Playwright's sync API keeps an event loop running on this thread, and a run with
    a model plays through ``asyncio.run``."""
    yield from launched_browser("the viewer's browser tests")


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from checked_page(browser, width=1400)


def test_the_run_list_shows_every_run_with_its_status(page: Page, site: Site) -> None:
    page.goto(site.url)
    expect(page.locator("#run-list li")).to_have_count(6)
    for rel, status in (("coffee", "completed"), ("allo", "completed"), ("live", "running")):
        item = page.locator(f'#run-list li[data-id="{run_id(rel)}"]')
        expect(item.locator(".badge")).to_have_text(status)
        expect(item).to_have_attribute("title", rel)


def test_the_timeline_shows_a_day_and_filters_by_kind(page: Page, site: Site) -> None:
    site.open(page, "coffee")
    expect(page.locator("#day-list .day-chip")).to_have_count(DAYS)
    expect(page.locator("#day-label")).to_contain_text("Day 0 ")  # a finished run opens at 0
    expect(page.locator("#follow")).not_to_be_checked()
    page.click('#day-list .day-chip[data-day="1"]')
    day1 = [e for e in site.events("coffee") if e["day"] == 1]
    expect(page.locator("#day-label")).to_contain_text(f"Day 1 · {len(day1)} events")
    expect(page.locator("#timeline .ev")).to_have_count(len(day1))
    tool_calls = sum(e["type"] == "tool_call" for e in day1)
    page.click('#kind-filter .chip[data-kind="tool"]')
    expect(page.locator("#timeline .ev")).to_have_count(len(day1) - tool_calls)
    expect(page.locator("#timeline .ev-tool_call")).to_have_count(0)


def test_a_transcript_shows_model_text_literally_and_runs_none_of_it(
    page: Page, site: Site
) -> None:
    site.open(page, "coffee")
    page.click('.tabs button[data-tab="transcript"]')
    page.click('#day-list .day-chip[data-day="0"]')
    expect(page.locator("#transcript-firms .chip.active")).to_contain_text("roaster_A")
    model = page.locator("#transcript .entry.model_call")
    expect(model.first).to_be_visible()
    expect(model.first.locator("pre.model-text")).to_contain_text(HOSTILE)
    reasoning = model.first.locator("details").first
    expect(reasoning).to_contain_text("Thinking about <b>prices</b>")
    expect(model.first.locator(".tool-use").first).to_contain_text("view_trial_balance")
    expect(page.locator("#transcript .entry.message")).to_contain_text(HOSTILE)
    page.click('#transcript-firms .chip[data-firm="farmer_A"]')
    expect(page.locator("#transcript .entry.message pre")).to_have_text(HOSTILE)
    page.click('.tabs button[data-tab="timeline"]')
    expect(page.locator("#timeline .ev-model_call").first).to_contain_text("<script>")
    assert page.locator("img").count() == 0
    assert page.locator("#main script").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_a_paper_runs_turns_show_as_tool_calls(page: Page, site: Site) -> None:
    """A ``paper`` run logs the reference's ``agent_step``; the page shows each as the call it
    made, with its result."""
    site.open(page, "paper")
    page.click('.tabs button[data-tab="transcript"]')
    page.click('#day-list .day-chip[data-day="0"]')
    page.click('#transcript-firms .chip[data-firm="roaster_A"]')
    calls = page.locator("#transcript .entry.tool_call")
    expect(calls.first).to_contain_text("view_trial_balance")
    steps = [e for e in site.events("paper") if e["type"] == "agent_step" and e["day"] == 0]
    mine = [e for e in steps if e["firm"] == "roaster_A"]
    expect(calls).to_have_count(len(mine))
    page.click('.tabs button[data-tab="timeline"]')
    expect(page.locator("#timeline .ev-tool_call")).to_have_count(len(steps))


def test_the_deals_table_lists_every_deal(page: Page, site: Site) -> None:
    site.open(page, "coffee")
    page.click('.tabs button[data-tab="ledger"]')
    deals = [e for e in site.events("coffee") if e["type"] == "deal"]
    assert deals, "the sample run should trade"
    rows = page.locator("#deals tr")
    expect(rows).to_have_count(len(deals) + 1)
    first = deals[0]
    expect(rows.nth(1)).to_contain_text(first["deal_id"])
    expect(rows.nth(1)).to_contain_text(first["seller"])
    invoices = sum(e["type"] == "invoice" for e in site.events("coffee"))
    expect(page.locator("#invoices tr")).to_have_count(invoices + 1)


def test_the_charts_render(page: Page, site: Site) -> None:
    site.open(page, "coffee")
    page.click('.tabs button[data-tab="charts"]')
    series = page.locator("#charts svg path.series")
    expect(series).to_have_count(3 * len(FIRMS))
    points = series.evaluate_all(
        "paths => paths.map(p => (p.getAttribute('d').match(/L/g) || []).length + 1)"
    )
    assert points == [DAYS] * (3 * len(FIRMS))
    assert page.locator("#charts svg text").count() > 3 * 8  # tick labels on both axes
    shot = page.locator("#charts .chart").first.locator("svg").screenshot()
    pixels = matplotlib.image.imread(io.BytesIO(shot), format="png")[..., :3]
    colours = np.unique((pixels * 255).round().astype(int).reshape(-1, 3), axis=0)
    assert len(colours) > 30, "the chart looks blank"
    for firm, hex_colour in FIRM_COLORS.items():
        rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(colours - rgb).max(axis=1) <= 6).any(), f"no {firm} line drawn"


def test_the_charts_shade_the_festival_days(page: Page, site: Site) -> None:
    site.open(page, "coffee", tab="charts")
    bands = page.locator("#charts svg rect.festival")
    expect(bands).to_have_count(3)  # one per chart
    first, last = FESTIVAL
    for band in bands.all():
        assert (band.get_attribute("data-first"), band.get_attribute("data-last")) == (
            str(first),
            str(last),
        )
    # The band spans the festival's days on the chart's day axis: half a day either side.
    cash = page.locator('#charts svg[data-metric="cash"]')
    ticks = cash.locator("g.axis text").evaluate_all(
        "ts => ts.filter(t => /^[0-9]+$/.test(t.textContent) && t.getAttribute('text-anchor')"
        " === 'middle').map(t => [Number(t.textContent), Number(t.getAttribute('x'))])"
    )
    x_of = dict(ticks)
    band = cash.locator("rect.festival")
    left = float(band.get_attribute("x") or "nan")
    width = float(band.get_attribute("width") or "nan")
    per_day = x_of[1] - x_of[0]
    assert left == pytest.approx(x_of[first] - per_day / 2, abs=0.5)
    assert width == pytest.approx((last - first + 1) * per_day, abs=0.5)
    legend = page.locator("#charts .chart").first.locator(".legend-festival")
    expect(legend).to_have_text(f"festival days {first}–{last}")
    shot = cash.screenshot()
    pixels = matplotlib.image.imread(io.BytesIO(shot), format="png")[..., :3]
    shaded = np.array([0xF2, 0xC1, 0x4E]) * 0.28 + 255 * 0.72  # the band over white
    colours = (pixels * 255).round().reshape(-1, 3)
    assert (np.abs(colours - shaded).max(axis=1) <= 8).sum() > 500, "no band drawn"


def test_a_live_run_grows_on_the_page(page: Page, site: Site) -> None:
    site.open(page, "live")
    chips = page.locator("#day-list .day-chip")
    expect(chips).to_have_count(DAYS - 1)
    expect(page.locator("#run-head .badge")).to_have_text("running")
    page.click('.tabs button[data-tab="charts"]')
    expect(page.locator("#charts svg path.series")).to_have_count(3 * len(FIRMS))
    live = site.root / "live"
    append(live / layout.EVENTS, site.held[layout.EVENTS][:5])  # part of the new day …
    append(live / layout.EVENTS, [site.held[layout.EVENTS][5][:30]])  # … and a torn line
    expect(chips).to_have_count(DAYS)
    expect(page.locator("#day-label")).to_contain_text(f"Day {DAYS - 1} · 5 events")
    append(live / layout.EVENTS, [site.held[layout.EVENTS][5][30:], *site.held[layout.EVENTS][6:]])
    append(live / layout.DAILY, site.held[layout.DAILY])
    total = len(site.held[layout.EVENTS])
    expect(page.locator("#day-label")).to_contain_text(f"Day {DAYS - 1} · {total} events")
    last_path = page.locator('#charts svg[data-metric="cash"] path.series').first
    expect(last_path).to_have_attribute("d", _path_with_points(DAYS))
    summary = json.loads((site.root / "coffee" / layout.SUMMARY).read_text())
    (live / layout.SUMMARY).write_text(json.dumps(summary))
    expect(page.locator("#run-head .badge")).to_have_text("completed")


def _path_with_points(n: int) -> re.Pattern[str]:
    """An SVG path ``d`` with exactly ``n`` points."""
    return re.compile(r"^M[^L]*" + r"(L[^L]*)" * (n - 1) + "$")


def test_an_allobench_cell_shows_episodes_and_turns(page: Page, site: Site) -> None:
    site.open(page, "allo")
    rows = page.locator("#episodes tr[data-episode]")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("2000")
    expect(page.locator("#turns .turn")).to_have_count(60)
    records = layout.read_jsonl(site.root / "allo" / layout.EPISODES)
    page.check("#decisions-only")
    expect(page.locator("#turns .turn")).to_have_count(records[0]["decision_turns"])
    first = page.locator("#turns .turn").first
    expect(first).to_contain_text("KEEP or PASS?")
    expect(first).to_contain_text("parsed decision")
    rows.nth(1).click()
    expect(page.locator("#episode-head h3")).to_have_text("Episode 2 · seed 2001")
    expect(page.locator("#turns .turn")).to_have_count(records[1]["decision_turns"])


def test_a_model_call_shows_every_message_the_model_saw(page: Page, site: Site) -> None:
    site.open(page, "coffee", tab="transcript", day=0, firm="roaster_A")
    model = page.locator("#transcript .entry.model_call")
    expect(model.first).to_be_visible()
    prompt = model.nth(1).locator("details.prompt")
    open_prompt(model.nth(1))
    expect(prompt.locator("summary").first).to_contain_text("messages, 2 new since the previous")
    expect(prompt.locator(".call-facts")).to_contain_text("1200 in / 30 out tokens")
    seen = prompt.locator("details.seen")
    expect(seen.locator("summary")).to_contain_text("seen in the previous request")
    expect(seen.locator(".msg.role-system")).to_contain_text("Your agent_id is `roaster_A`.")
    expect(seen.locator(".msg.role-system")).to_be_hidden()  # folded until asked for
    open_box(seen.first, seen.locator(".msg.role-user").first)  # the day-0 message
    fresh = prompt.locator(":scope > .msg")
    expect(fresh).to_have_count(2)
    expect(fresh.nth(0)).to_have_attribute("data-role", "assistant")
    expect(fresh.nth(0).locator("pre.msg-text")).to_contain_text(HOSTILE)
    expect(fresh.nth(1)).to_have_attribute("data-role", "tool")
    assert page.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None


def open_box(box: Locator, shows: Locator) -> None:
    """Open the ``<details>`` ``box`` and wait until ``shows`` is visible. The page may draw
    the transcript again while it settles (a second route, a poll), which replaces a box
    opened a moment before by a closed one; so open the box on the page again until it shows
    (bounded by the usual 60 s)."""
    deadline = time.monotonic() + 60
    while True:
        box.evaluate("d => { d.open = true; }")
        try:
            expect(shows).to_be_visible(timeout=5_000)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise


def open_prompt(entry: Locator) -> None:
    """Open ``entry``'s "what the model saw" box and wait until its messages are in."""
    box = entry.locator("details.prompt").first
    open_box(box, box.locator(".msg:visible").first)


def test_a_compaction_shows_the_summary_that_replaced_the_history(page: Page, site: Site) -> None:
    events = site.events("compacting")
    day = next(e["day"] for e in events if e["type"] == "compaction")
    site.open(page, "compacting", tab="transcript", day=day, firm="roaster_A")
    card = page.locator("#transcript .entry.compaction").first
    expect(card).to_contain_text("messages summarised")
    expect(card.locator("details").first).to_contain_text(SUMMARY)
    open_prompt(card)
    after = page.locator("#transcript .entry.compaction ~ .entry.model_call").first
    open_prompt(after)
    first_new = after.locator("details.prompt > .msg").first  # past the kept head, folded
    expect(first_new).to_have_attribute("data-role", "user")
    expect(first_new).to_contain_text(SUMMARY)


def test_deep_links_switch_runs_and_back_and_forward_follow(page: Page, site: Site) -> None:
    site.open(page, "coffee", tab="ledger")
    expect(page.locator('.tabs button[data-tab="ledger"]')).to_have_class(re.compile("active"))
    page.locator(f'#run-list li[data-id="{run_id("allo")}"]').click()
    expect(page.locator("#episodes tr[data-episode]")).to_have_count(2)
    assert f"run={run_id('allo')}" in page.url
    page.locator("#episodes tr[data-episode]").nth(1).click()
    expect(page.locator("#episode-head h3")).to_contain_text("Episode 2")
    assert "episode=2" in page.url  # the hash counts episodes as the page labels them
    page.go_back()  # choosing an episode was a step of its own
    expect(page.locator("#episode-head h3")).to_contain_text("Episode 1")
    page.go_back()
    expect(page.locator("#run-head h2")).to_have_text("coffee")
    expect(page.locator('.tabs button[data-tab="ledger"]')).to_have_class(re.compile("active"))
    page.go_forward()
    page.go_forward()
    expect(page.locator("#episode-head h3")).to_contain_text("Episode 2")  # as it was left
    page.evaluate(f"location.hash = 'run={run_id('coffee')}&tab=timeline&day=2'")
    expect(page.locator("#day-label")).to_contain_text("Day 2 ")
    page.reload()
    expect(page.locator("#day-label")).to_contain_text("Day 2 ")


def test_a_hash_changed_in_the_open_page_shows_its_tab_day_firm_and_episode(
    page: Page, site: Site
) -> None:
    """Back, forward and a link pasted into the open tab move within a run, too."""
    site.open(page, "coffee", tab="ledger")
    tab = page.locator(".tabs button.active")
    expect(tab).to_have_attribute("data-tab", "ledger")
    page.click('.tabs button[data-tab="charts"]')
    expect(tab).to_have_attribute("data-tab", "charts")
    assert "tab=charts" in page.url
    page.go_back()
    expect(tab).to_have_attribute("data-tab", "ledger")
    expect(page.locator("#tab-ledger")).to_be_visible()
    page.go_forward()
    expect(tab).to_have_attribute("data-tab", "charts")
    page.evaluate(
        f"location.hash = 'run={run_id('coffee')}&tab=transcript&day=2&firm=farmer_A'"
    )  # as a pasted link does
    expect(tab).to_have_attribute("data-tab", "transcript")
    expect(page.locator("#day-label")).to_contain_text("Day 2 ")
    expect(page.locator("#transcript-firms .chip.active")).to_have_attribute(
        "data-firm", "farmer_A"
    )
    expect(page.locator("#transcript-nav")).to_contain_text("on day 2")
    page.evaluate(f"location.hash = 'run={run_id('allo')}&episode=1'")
    head = page.locator("#episode-head h3")
    expect(head).to_have_text("Episode 1 · seed 2000")  # episode=1 is the one labelled 1
    expect(page.locator("#episodes tr.selected")).to_have_attribute("data-episode", "0")
    page.evaluate(f"location.hash = 'run={run_id('allo')}&episode=2'")
    expect(head).to_have_text("Episode 2 · seed 2001")
    page.go_back()
    expect(head).to_have_text("Episode 1 · seed 2000")
    page.go_back()
    expect(tab).to_have_attribute("data-tab", "transcript")
    expect(page.locator("#run-head h2")).to_have_text("coffee")
    link = f"{site.url}#run={run_id('allo')}&episode=2"  # a link the page wrote, opened anew
    page.goto("about:blank")
    page.goto(link)
    expect(head).to_have_text("Episode 2 · seed 2001")
    assert page.url == link


def test_r3_scripts_are_shown_as_code(page: Page, site: Site) -> None:
    site.open(page, "r3")
    code = page.locator("#turns pre.code code").first
    expect(code).to_contain_text("def solve(inputs")
    assert "\n    " in code.inner_text()  # indentation kept, not a JSON string


def test_the_runs_table_sorts_and_filters(page: Page, site: Site) -> None:
    page.goto(f"{site.url}?poll=150")
    page.click("#show-table")
    coffee = page.locator('table.runs-table[data-benchmark="coffee"] tr[data-id]')
    expect(coffee).to_have_count(4)  # with the paper run, left out of the order below
    income = {
        rel: json.loads((site.root / rel / layout.SUMMARY).read_text())["firms"]["roaster_A"][
            "net_income"
        ]
        for rel in ("coffee", "compacting")
    }
    page.click('table.runs-table[data-benchmark="coffee"] th[data-col="roaster_A"]')
    order = [
        (site.root / rel) for rel in sorted(income, key=lambda r: income[r])
    ]  # the live run has no summary yet: last
    wanted = [run_id(p.name) for p in order]

    def shown() -> list[str]:  # the live run may have finished in another test: left out
        ids = coffee.evaluate_all("rows => rows.map(r => r.dataset.id)")
        return [i for i in ids if i in wanted]

    assert shown() == wanted
    page.click('table.runs-table[data-benchmark="coffee"] th[data-col="roaster_A"]')
    assert shown() == wanted[::-1]
    expect(page.locator('table.runs-table[data-benchmark="allo"] tr[data-id]')).to_have_count(2)
    rels = ("coffee", "compacting", "live", "allo", "r3", "paper")
    done = sum((site.root / rel / layout.SUMMARY).exists() for rel in rels)  # live may be
    page.select_option("#rt-status", "completed")
    expect(page.locator("table.runs-table tr[data-id]")).to_have_count(done)
    page.select_option("#rt-status", "")
    page.select_option("#rt-policy", "wait:2")
    expect(page.locator("table.runs-table tr[data-id]")).to_have_count(1)
    page.select_option("#rt-policy", "")
    page.fill("#rt-text", "compact")
    expect(page.locator("table.runs-table tr[data-id]")).to_have_count(1)
    page.locator("table.runs-table tr[data-id]").click()
    expect(page.locator("#run-head h2")).to_have_text("compacting")
    page.go_back()
    expect(page.locator("#runs-table")).to_be_visible()


def test_an_empty_folder_shows_runs_as_they_appear(page: Page, site: Site, tmp_path: Path) -> None:
    server = ViewerServer(Catalog(tmp_path))
    serve_in_thread(server)
    try:
        page.goto(f"{server.url}?poll=150&runs_poll=200")
        expect(page.locator("#placeholder")).to_contain_text("No runs yet")
        shutil.copytree(site.root / "allo", tmp_path / "allo")
        expect(page.locator("#run-list li")).to_have_count(1)
        expect(page.locator("#episodes tr[data-episode]")).to_have_count(2)
    finally:
        server.shutdown()
        server.server_close()


def test_search_inside_transcripts_jumps_to_the_entry(page: Page, site: Site) -> None:
    site.open(page, "coffee", tab="transcript", day=0, firm="farmer_B")
    page.fill("#coffee-q", "plan 5:")  # roaster_A's model only
    page.press("#coffee-q", "Enter")
    hits = page.locator("#coffee-hits .hit")
    expect(hits.first).to_be_visible()
    last = hits.last
    last.click()
    day = int(last.inner_text().split()[1])
    expect(page.locator("#day-label")).to_contain_text(f"Day {day} ")
    expect(page.locator("#transcript-firms .chip.active")).to_contain_text("roaster_A")
    expect(page.locator("#transcript .entry.flash")).to_have_count(1)


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None


def test_a_static_bundle_shows_the_runs_without_the_server(
    page: Page, site: Site, tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    write_bundle(site.root, out)
    handler = functools.partial(QuietFiles, directory=str(out))
    static = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=static.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{static.server_address[1]}/"
        page.goto(f"{url}#run={run_id('coffee')}&tab=transcript&day=0&firm=roaster_A")
        expect(page.locator("#run-list li")).to_have_count(6)
        first = page.locator("#transcript .entry.model_call").first
        open_prompt(first)
        expect(first.locator("details.prompt > .msg.role-system")).to_contain_text("You are")
        second = page.locator("#transcript .entry.model_call").nth(1)
        open_prompt(second)
        expect(second.locator("details.prompt > .msg")).to_have_count(2)  # only what is new
        expect(page.locator("#coffee-search")).to_be_hidden()
        page.locator(f'#run-list li[data-id="{run_id("allo")}"]').click()
        expect(page.locator("#episodes tr[data-episode]")).to_have_count(2)
        expect(page.locator("#turns .turn").first).to_contain_text("KEEP or PASS?")
    finally:
        static.shutdown()
        static.server_close()


def test_the_run_list_groups_many_runs_by_folder_and_filters_them(
    page: Page, site: Site, tmp_path: Path
) -> None:
    """121 runs laid out as sweeps lay them (``seed_0`` in every cell): grouped by the folder
    that tells them apart, folded but for the open run's group, and filtered by path,
    benchmark, actor or condition."""
    for sweep in ("sweep-a", "sweep-b"):
        for cell in range(20):
            for seed in range(3):
                shutil.copytree(
                    site.root / "allo", tmp_path / sweep / f"cell-{cell:02d}" / f"seed_{seed}"
                )
    shutil.copytree(site.root / "coffee", tmp_path / "other" / "seed_0")
    server = ViewerServer(Catalog(tmp_path))
    serve_in_thread(server)
    try:
        opened = run_id("sweep-b/cell-07/seed_0")
        page.goto(f"{server.url}?poll=150#run={opened}")
        items = page.locator("#run-list li")
        expect(items).to_have_count(121)
        groups = page.locator("#run-list .run-group")
        expect(groups).to_have_count(41)
        mine = page.locator('#run-list .run-group[data-group="sweep-b/cell-07"]')
        expect(mine.locator(".group-head")).to_contain_text("sweep-b/cell-07/")
        expect(mine.locator("li.selected")).to_contain_text("seed_0")
        expect(page.locator("#run-list li:visible")).to_have_count(3)  # the rest are folded
        other = page.locator('#run-list .run-group[data-group="sweep-a/cell-07"]')
        other.locator(".group-head").click()
        expect(other.locator("li:visible")).to_have_count(3)
        expect(page.locator("#run-list li:visible")).to_have_count(6)
        other.locator(".group-head").click()
        expect(other.locator("li:visible")).to_have_count(0)

        def shown(text: str) -> list[str]:
            page.fill("#run-filter", text)
            return page.locator("#run-list li:visible").evaluate_all(
                "items => items.map(i => i.title)"
            )

        assert shown("cell-07 seed_0") == ["sweep-a/cell-07/seed_0", "sweep-b/cell-07/seed_0"]
        assert shown("coffee") == ["other/seed_0"]  # the benchmark
        assert shown("viewer-roaster") == ["other/seed_0"]  # roaster_A's model
        assert shown("hardened") == ["other/seed_0"]  # CoffeeBench's condition
        assert len(shown("wait:2 frontier")) == 120  # AlloBench's actor and condition
        expect(page.locator("#run-filter-count")).to_have_text("120 of 121 runs match")
        assert shown("no-such-run") == []
        expect(page.locator("#run-list")).to_contain_text("No run matches")
        page.fill("#run-filter", "")
        expect(page.locator("#run-list li:visible")).to_have_count(3)
        page.locator('#run-list .run-group[data-group="other"] .group-head').click()
        page.locator('#run-list li[title="other/seed_0"]').click()
        expect(page.locator("#run-head .title")).to_contain_text("CoffeeBench")
        expect(page.locator("#timeline .ev").first).to_be_visible()  # nothing left to fetch
        page.goto("about:blank")
    finally:
        server.shutdown()
        server.server_close()


def test_a_model_action_is_one_card_with_its_tool_calls_and_their_results(
    page: Page, site: Site
) -> None:
    site.open(page, "coffee", tab="transcript", day=0, firm="roaster_A")
    mine = [e for e in site.events("coffee") if e["day"] == 0 and e.get("firm") == "roaster_A"]
    calls = [e for e in mine if e["type"] == "model_call"]
    applied = [e for e in mine if e["type"] == "tool_call"]
    assert len(calls) == len(applied) > 2
    cards = page.locator("#transcript .entry.model_call")
    expect(cards).to_have_count(len(calls))
    expect(page.locator("#transcript .entry.tool_call")).to_have_count(0)  # none on its own
    uses = page.locator("#transcript .entry.model_call .tool-use")
    expect(uses).to_have_count(len(applied))
    seqs = uses.evaluate_all("us => us.map(u => Number(u.dataset.seq))")
    assert seqs == [e["seq"] for e in applied]  # each call with the result it had
    for i, event in enumerate(calls):
        card = cards.nth(i)
        expect(card.locator("pre.model-text")).to_have_text(event["text"])
        expect(card.locator(".tool-use .call")).to_contain_text(event["tool_calls"][0]["name"])
        expect(card.locator("details.prompt")).to_have_count(1)  # what the model saw, here
    open_prompt(cards.nth(1))
    expect(cards.nth(1).locator("details.prompt .msg").first).to_be_attached()
    assert page.evaluate("window.__pwned") is None


def test_a_tool_result_is_shown_as_indented_json_not_one_line(page: Page, site: Site) -> None:
    site.open(page, "coffee", tab="transcript", day=0, firm="roaster_A")
    use = page.locator('#transcript .tool-use[data-tool="view_trial_balance"]').first
    result = use.locator("details.result")
    expect(result.locator(":scope > summary")).to_contain_text("result: success")
    balances = result.locator(".j-row", has=page.locator(".j-key", has_text="balances"))
    open_box(result, balances)
    expect(balances.locator("table.j-kv th").first).to_have_text("cash")  # a flat object
    expect(balances.locator("table.j-kv tr")).to_have_count(7)
    expect(result.locator("details.j-node").first).to_be_visible()  # nesting folds
    assert result.locator("pre").count() == 0
    lines = result.locator(".json").inner_text().splitlines()
    assert len(lines) > 10
    assert max(len(line) for line in lines) < 120, "the result is one long line"
    message = page.locator('#transcript .tool-use[data-tool="send_message"]').first
    body = message.locator("table.j-kv tr", has=page.locator("th", has_text="body"))
    expect(body.locator("td")).to_have_text(HOSTILE)  # a long argument, on a line of its own
    assert page.locator("#transcript img").count() == 0


def test_boxes_a_reader_opened_or_closed_stay_so_when_the_transcript_is_drawn_again(
    page: Page, site: Site
) -> None:
    def result_of(tool: str) -> Locator:
        return page.locator(f'#transcript .tool-use[data-tool="{tool}"] details.result').first

    def show_tab(tab: str) -> None:
        page.click(f'.tabs button[data-tab="{tab}"]')

    def show_day(day: int) -> None:
        page.click(f'.day-chip[data-day="{day}"]')
        expect(page.locator("#transcript-nav")).to_contain_text(f"on day {day}:")

    def drawn_again(move: Callable[[], None]) -> None:
        page.locator("#transcript > *").first.evaluate("e => { e.dataset.old = 'yes'; }")
        move()
        expect(page.locator('#transcript [data-old="yes"]')).to_have_count(0)
        expect(page.locator("#transcript .entry").first).to_be_visible()

    site.open(page, "coffee", tab="transcript", day=0, firm="roaster_A")
    long_result, short_result = result_of("view_trial_balance"), result_of("wait_for_next_day")
    prompt = page.locator("#transcript .entry.model_call details.prompt").first
    expect(short_result).to_have_js_property("open", True)  # as drawn: short results open
    expect(long_result).to_have_js_property("open", False)
    open_box(long_result, long_result.locator(".j-row").first)
    open_prompt(page.locator("#transcript .entry.model_call").first)
    short_result.evaluate("d => { d.open = false; }")

    def via_another_tab() -> None:
        show_tab("timeline")
        show_tab("transcript")

    def via_another_day() -> None:
        show_day(1)
        show_day(0)

    for move in (via_another_tab, via_another_day):
        drawn_again(move)
        expect(long_result).to_have_js_property("open", True)
        expect(short_result).to_have_js_property("open", False)
        expect(prompt).to_have_js_property("open", True)
        expect(prompt.locator(".msg").first).to_be_visible()  # loaded again as it opened
    show_day(1)  # another day keeps boxes of its own, as drawn
    expect(result_of("wait_for_next_day")).to_have_js_property("open", True)
    assert page.evaluate("window.__pwned") is None


def test_the_page_does_not_scroll_sideways_at_1024_pixels(page: Page, site: Site) -> None:
    page.set_viewport_size({"width": 1024, "height": 800})
    overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    page.goto(f"{site.url}#view=table")
    table = page.locator('table.runs-table[data-benchmark="coffee"]')
    expect(table.locator("tr[data-id]").first).to_be_visible()
    assert page.evaluate(overflow) <= 0
    wrap = table.locator("xpath=..")
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth"), "six firms fit: test is moot"
    first = table.locator("tr[data-id] td").first
    assert first.evaluate("td => getComputedStyle(td).position") == "sticky"
    before = first.bounding_box()
    wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
    assert first.bounding_box() == before  # the run stays in view as the figures scroll
    site.open(page, "coffee", tab="transcript", day=0, firm="roaster_A")
    expect(page.locator("#transcript .entry").first).to_be_visible()
    assert page.evaluate(overflow) <= 0


def test_an_episode_shows_its_task_stream_with_its_commits(page: Page, site: Site) -> None:
    site.open(page, "r3", episode=1)
    record = layout.read_jsonl(site.root / "r3" / layout.EPISODES)[0]
    classes = record["stream"]["classes"]
    strip = page.locator("#episode-strip .strip")
    expect(strip.locator(".task")).to_have_count(len(classes))
    shown = strip.locator(".task").evaluate_all("ts => ts.map(t => Number(t.dataset.cls))")
    assert shown == classes
    marks = strip.locator(".commit-mark")
    expect(marks).to_have_count(len(record["commits"]))
    assert marks.evaluate_all("ms => ms.map(m => Number(m.dataset.t))") == [
        c["t"] for c in record["commits"]
    ]
    first_sight = [c["t"] for c in record["commits"] if c["first_sight"]]
    assert first_sight, "an eager actor commits at first sight"
    assert (
        strip.locator(".commit-mark.first-sight").evaluate_all(
            "ms => ms.map(m => Number(m.dataset.t))"
        )
        == first_sight
    )
    # Each mark stands above the task it was made on.
    for commit in record["commits"]:
        mark = strip.locator(f'.commit-mark[data-t="{commit["t"]}"]').bounding_box()
        task = strip.locator(f'.task[data-t="{commit["t"]}"]').bounding_box()
        assert mark and task
        assert task["x"] <= mark["x"] + mark["width"] / 2 <= task["x"] + task["width"]
    expect(strip).to_contain_text(f"{len(classes)} tasks · {len(record['commits'])} commits")
    strip.locator(f'.task[data-t="{record["commits"][0]["t"]}"]').click()
    expect(page.locator("#turns .turn.flash")).to_have_attribute(
        "data-t", str(record["commits"][0]["t"])
    )
