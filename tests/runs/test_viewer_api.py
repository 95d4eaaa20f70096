"""The viewer's JSON API, driven over HTTP against a server on port 0 in a thread."""

from __future__ import annotations

import http.client
import json
import select
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.runs.viewer_samples import (
    HOSTILE,
    allo_cell,
    append,
    coffee_run,
    event_line,
    hold_back_last_day,
)
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs import layout
from econbench.runs.lock import RunLock
from econbench.runs.viewer import Catalog, NotLoopbackError, ViewerServer, serve_in_thread
from econbench.runs.viewer.server import check_loopback
from econbench.runs.viewer.tail import JsonlTail

DAYS = 4


class Client:
    def __init__(self, server: ViewerServer) -> None:
        self.host, self.port = server.server_address[:2]
        self.base = server.url.rstrip("/")

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base + path, timeout=10) as response:
            return json.loads(response.read())

    def status(self, path: str, headers: dict[str, str] | None = None) -> int:
        """The status of a raw request (the path is sent exactly as given)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request("GET", path, headers=headers or {})
            return conn.getresponse().status
        finally:
            conn.close()

    def run_id(self, rel: str) -> str:
        return next(r["id"] for r in self.get("/api/runs")["runs"] if r["rel"] == rel)


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished coffee run (roaster_A a scripted model) and an AlloBench cell, made once."""
    root = tmp_path_factory.mktemp("samples")
    coffee_run(root / "coffee", days=DAYS)
    allo_cell(root / "allo", episodes=2)
    return root


@pytest.fixture
def root(samples: Path, tmp_path: Path) -> Path:
    """A fresh copy per test, so tests may grow or cut the logs."""
    out = tmp_path / "runs"
    shutil.copytree(samples, out)
    return out


def serve(root: Path) -> Iterator[Client]:
    server = ViewerServer(Catalog(root), port=0)
    serve_in_thread(server)
    try:
        yield Client(server)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def client(root: Path) -> Iterator[Client]:
    """A server on a fresh copy of the samples (for tests that change the files)."""
    yield from serve(root)


@pytest.fixture(scope="module")
def shared(samples: Path) -> Iterator[Client]:
    """One server on the samples for the tests that only read."""
    yield from serve(samples)


def lines(path: Path) -> list[dict[str, Any]]:
    return layout.read_jsonl(path)


# -- the run list ---------------------------------------------------------------------


def test_the_run_list_names_each_run_with_its_benchmark_and_status(shared: Client) -> None:
    runs = {r["rel"]: r for r in shared.get("/api/runs")["runs"]}
    assert set(runs) == {"coffee", "allo"}
    assert runs["coffee"]["benchmark"] == "coffee" and runs["allo"]["benchmark"] == "allo"
    assert runs["coffee"]["status"] == runs["allo"]["status"] == "completed"
    assert "roaster_A=scripted/viewer-roaster" in runs["coffee"]["brief"]
    assert runs["allo"]["brief"] == "r0 · wait:2"


def test_a_run_without_a_summary_is_running_and_new_runs_appear_on_rescan(
    client: Client, root: Path
) -> None:
    shutil.copytree(root / "coffee", root / "later" / "live")
    (root / "later" / "live" / layout.SUMMARY).unlink()
    runs = {r["rel"]: r for r in client.get("/api/runs")["runs"]}
    assert runs["later/live"]["status"] == "interrupted", "no process holds its lock"
    with RunLock(root / "later" / "live"):
        overview = client.get(f"/api/run/{runs['later/live']['id']}")
        assert overview["summary"] is None and overview["status"] == "running"
    shutil.copy(root / "coffee" / layout.SUMMARY, root / "later" / "live" / layout.SUMMARY)
    assert client.get(f"/api/run/{runs['later/live']['id']}")["status"] == "completed"


def test_a_stopped_run_says_so(client: Client, root: Path) -> None:
    summary = json.loads((root / "coffee" / layout.SUMMARY).read_text())
    summary["status"] = "stopped"
    (root / "coffee" / layout.SUMMARY).write_text(json.dumps(summary))
    assert client.get(f"/api/run/{client.run_id('coffee')}")["status"] == "stopped"


# -- CoffeeBench --------------------------------------------------------------------------


def test_the_index_counts_every_event_by_day(shared: Client, samples: Path) -> None:
    events = lines(samples / "coffee" / layout.EVENTS)
    index = shared.get(f"/api/run/{shared.run_id('coffee')}/index")
    assert [d["day"] for d in index["days"]] == list(range(DAYS))
    assert sum(d["count"] for d in index["days"]) == index["events"] == len(events)
    assert all(d["complete"] for d in index["days"])
    assert index["model_firms"] == ["roaster_A"]
    assert index["usage"]["roaster_A"]["calls"] == sum(e["type"] == "model_call" for e in events)
    assert index["end"]["type"] == "run_end"  # logged on day DAYS, shown with the last day
    assert index["daily_rows"] == 6 * DAYS


def test_a_day_slice_holds_that_day_only_and_can_be_narrowed_to_a_firm(
    shared: Client, samples: Path
) -> None:
    rid = shared.run_id("coffee")
    events = lines(samples / "coffee" / layout.EVENTS)
    day1 = shared.get(f"/api/run/{rid}/day/1")["events"]
    assert day1 == [e for e in events if e["day"] == 1]
    firm = shared.get(f"/api/run/{rid}/day/1?firm=farmer_B")["events"]
    assert firm and all("farmer_B" in json.dumps(e) for e in firm)
    assert len(firm) < len(day1)
    assert shared.status(f"/api/run/{rid}/day/{DAYS + 5}") == 404
    assert shared.status(f"/api/run/{rid}/day/one") == 404


def test_a_transcript_has_reasoning_tool_calls_results_and_messages(shared: Client) -> None:
    rid = shared.run_id("coffee")
    day0 = shared.get(f"/api/run/{rid}/transcript?firm=roaster_A&day=0")
    kinds = {e["type"] for e in day0["entries"]}
    assert kinds == {"model_call", "tool_call", "message"}
    model = next(e for e in day0["entries"] if e["type"] == "model_call")
    assert HOSTILE in model["text"] and "prices" in model["reasoning"]
    assert model["tool_calls"] and model["usage"]["input_tokens"] == 1200
    tool = next(e for e in day0["entries"] if e["type"] == "tool_call")
    assert "arguments" in tool and tool["result"]["status"] == "success"
    assert day0["prev_day"] is None and day0["next_day"] == 1
    farmer = shared.get(f"/api/run/{rid}/transcript?firm=farmer_A&day=0")["entries"]
    message = next(e for e in farmer if e["type"] == "message")
    assert message["sender"] == "roaster_A" and message["body"] == HOSTILE
    assert shared.status(f"/api/run/{rid}/transcript?day=0") == 400
    assert shared.status(f"/api/run/{rid}/transcript?firm=roaster_A&day=x") == 400


def test_deals_and_invoices_follow_their_events(shared: Client, samples: Path) -> None:
    events = lines(samples / "coffee" / layout.EVENTS)
    ledger = shared.get(f"/api/run/{shared.run_id('coffee')}/ledger")
    deals = {d["deal_id"]: d for d in ledger["deals"]}
    assert list(deals) == [e["deal_id"] for e in events if e["type"] == "deal"]
    delivered = {e["deal_id"] for e in events if e["type"] == "delivery"}
    assert delivered and all(deals[d]["status"] == "delivered" for d in delivered)
    assert all(deals[d]["status"] == "in_transit" for d in set(deals) - delivered)
    invoices = {i["invoice_id"]: i for i in ledger["invoices"]}
    paid = {e["invoice_id"]: e["amount"] for e in events if e["type"] == "payment"}
    assert paid and all(invoices[i]["status"] == "paid" for i in paid)
    assert all(invoices[i]["paid"] == amount for i, amount in paid.items())
    linked = [d for d in deals.values() if d["invoice_id"]]
    assert len(linked) == len(invoices)
    assert all(invoices[d["invoice_id"]]["deal_id"] == d["deal_id"] for d in linked)


def test_daily_rows_are_served_from_a_row_on(shared: Client) -> None:
    rid = shared.run_id("coffee")
    rows = shared.get(f"/api/run/{rid}/daily")["rows"]
    assert len(rows) == 6 * DAYS and {"cash", "revenue_cum", "net_income_cum"} <= set(rows[0])
    rest = shared.get(f"/api/run/{rid}/daily?from=20")
    assert rest["rows"] == rows[20:] and rest["next"] == len(rows)


def test_a_growing_run_is_read_incrementally(client: Client, root: Path) -> None:
    run = root / "coffee"
    held = hold_back_last_day(run)
    lock = RunLock(run)
    lock.acquire()  # as the process writing the run does
    rid = client.run_id("coffee")
    before = client.get(f"/api/run/{rid}/index")
    assert before["status"] == "running" and before["last_day"] == DAYS - 2
    assert before["end"] is None
    tail_from = before["offset"]
    append(run / layout.EVENTS, held[layout.EVENTS])
    append(run / layout.DAILY, held[layout.DAILY])
    after = client.get(f"/api/run/{rid}/index")
    assert after["last_day"] == DAYS - 1
    assert after["events"] == before["events"] + len(held[layout.EVENTS])
    new_rows = client.get(f"/api/run/{rid}/daily?from={before['daily_rows']}")["rows"]
    assert [r["day"] for r in new_rows] == [DAYS - 1] * 6
    fresh = client.get(f"/api/run/{rid}/events?from={tail_from}")
    assert fresh["events"] == [json.loads(line) for line in held[layout.EVENTS]]
    assert fresh["next"] == fresh["size"] == (run / layout.EVENTS).stat().st_size
    lock.release()


def test_a_torn_last_line_is_ignored_until_it_is_complete(client: Client, root: Path) -> None:
    path = root / "coffee" / layout.EVENTS
    rid = client.run_id("coffee")
    before = client.get(f"/api/run/{rid}/index")
    line = event_line(seq=10_000, day=DAYS, time="09:00", type="opex", firm="farmer_A", amount=1)
    append(path, [line[:25]])
    torn = client.get(f"/api/run/{rid}/index")
    assert (torn["events"], torn["offset"], torn["last_day"]) == (
        before["events"],
        before["offset"],
        before["last_day"],
    )
    assert client.get(f"/api/run/{rid}/events?from={before['offset']}")["events"] == []
    append(path, [line[25:]])
    whole = client.get(f"/api/run/{rid}/index")
    assert whole["events"] == before["events"] + 1 and whole["last_day"] == DAYS
    assert client.get(f"/api/run/{rid}/day/{DAYS}")["events"][-1]["seq"] == 10_000


def test_events_are_paged_by_byte_offset_at_line_boundaries(shared: Client, samples: Path) -> None:
    rid = shared.run_id("coffee")
    events = lines(samples / "coffee" / layout.EVENTS)
    got: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = shared.get(f"/api/run/{rid}/events?from={offset}&max_bytes=20000")
        if not page["events"]:
            break
        got += page["events"]
        offset = page["next"]
    assert got == events
    assert shared.status(f"/api/run/{rid}/events?from=3") == 400  # not a line start
    assert shared.status(f"/api/run/{rid}/events?from=-1") == 400


@pytest.mark.parametrize(
    "query",
    [
        "from=0&max_bytes=99999999999999",
        "from=0&max_bytes=" + "9" * 400,
        "from=99999999999999999999&max_bytes=10",
        "from=" + "9" * 5000,
        "from=%C2%B2",  # "²": isdigit() says yes, int() says no
        "from=1_0",
        "from=%D9%A3",  # an Arabic-Indic digit
        "from=0&max_bytes=-5",
        "from=0&max_bytes=abc",
    ],
)
def test_absurd_numbers_in_queries_are_a_400_with_a_message_never_a_500(
    shared: Client, query: str
) -> None:
    rid = shared.run_id("coffee")
    url = f"/api/run/{rid}/events?{query}"
    status = shared.status(url)
    if query == "from=0&max_bytes=99999999999999":
        assert status == 200, "a page size past the cap is clamped to it"
        page = shared.get(url)
        assert page["events"] and page["next"] <= 1 << 20
        return
    assert status == 400
    with pytest.raises(urllib.error.HTTPError) as info:
        shared.get(url)
    message = json.loads(info.value.read())["error"]
    assert message and len(message) < 200


@pytest.mark.parametrize(
    "path",
    [
        "day/" + "9" * 5000,
        "day/99999999999999999999999",
        "day/%C2%B2",
        "transcript?firm=roaster_A&day=" + "9" * 5000,
        "daily?from=" + "9" * 30,
    ],
)
def test_absurd_numbers_in_other_endpoints_are_client_errors(shared: Client, path: str) -> None:
    rid = shared.run_id("coffee")
    assert shared.status(f"/api/run/{rid}/{path}") in (400, 404)


def test_absurd_episode_numbers_are_client_errors(shared: Client) -> None:
    rid = shared.run_id("allo")
    for path in ("episode/" + "9" * 5000, "episode/%C2%B2", "episodes?from=" + "9" * 5000):
        assert shared.status(f"/api/run/{rid}/{path}") in (400, 404), path


def test_a_run_started_again_in_place_is_read_afresh(client: Client, root: Path) -> None:
    rid = client.run_id("coffee")
    assert client.get(f"/api/run/{rid}/index")["events"] > 3
    path = root / "coffee" / layout.EVENTS
    path.write_text(
        "".join(
            event_line(seq=i, day=0, time="09:00", type="opex", firm="farmer_B", amount=2)
            for i in (1, 2, 3)
        )
    )
    index = client.get(f"/api/run/{rid}/index")
    assert index["events"] == 3 and [d["day"] for d in index["days"]] == [0]


# -- AlloBench ----------------------------------------------------------------------------


def test_episodes_are_listed_with_their_figures_and_read_turn_by_turn(
    shared: Client, samples: Path
) -> None:
    rid = shared.run_id("allo")
    records = lines(samples / "allo" / layout.EPISODES)
    listing = shared.get(f"/api/run/{rid}/episodes")
    assert listing["status"] == "completed" and listing["total"] == 2
    first = listing["episodes"][0]
    assert first["seed"] == 2000 and first["score"] == records[0]["score"]
    assert first["first_sight_commits"] == records[0]["first_sight_commits"]
    assert first["unresolved_turns"] == 0 and first["turns"] == 60
    assert shared.get(f"/api/run/{rid}/episodes?from=1")["episodes"] == listing["episodes"][1:]
    episode = shared.get(f"/api/run/{rid}/episode/1")
    assert episode["seed"] == 2001 and episode["turns"] == records[1]["turns"]
    decision = next(t for t in episode["turns"] if t["kind"] == "decision")
    assert decision["observation"] and decision["replies"][0]["text"]
    assert shared.status(f"/api/run/{rid}/episode/2") == 404
    assert shared.status(f"/api/run/{rid}/index") == 404  # a coffee endpoint


def test_a_cell_being_played_grows_episode_by_episode(client: Client, root: Path) -> None:
    path = root / "allo" / layout.EPISODES
    (root / "allo" / layout.SUMMARY).unlink()
    first, second = path.read_text().splitlines(keepends=True)
    path.write_text(first)
    rid = client.run_id("allo")
    assert client.get(f"/api/run/{rid}/episodes")["total"] == 1
    append(path, [second[:100]])
    assert client.get(f"/api/run/{rid}/episodes")["total"] == 1
    append(path, [second[100:]])
    grown = client.get(f"/api/run/{rid}/episodes?from=1")
    assert grown["status"] == "interrupted" and [e["seed"] for e in grown["episodes"]] == [2001]


# -- safety -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/run/../../../etc/passwd",
        "/api/run/..%2F..%2F..%2Fetc%2Fpasswd/index",
        "/api/run/%2e%2e/index",
        "/api/run/coffee/index",
        "/static/../server.py",
        "/static/%2e%2e/data.py",
        "/../../../../etc/passwd",
        "/static/app.js/../../data.py",
    ],
)
def test_paths_never_reach_files_outside_the_runs(shared: Client, path: str) -> None:
    assert shared.status(path) == 404


def test_requests_for_another_host_name_are_refused(shared: Client) -> None:
    assert shared.status("/api/runs", {"Host": "attacker.example:80"}) == 403
    assert shared.status("/api/runs", {"Host": f"localhost:{shared.port}"}) == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com", ""])
def test_the_server_refuses_to_listen_beyond_the_loopback(samples: Path, host: str) -> None:
    with pytest.raises(NotLoopbackError):
        ViewerServer(Catalog(samples), host=host)


def test_loopback_addresses_are_accepted() -> None:
    assert check_loopback("127.0.0.1") == "127.0.0.1"
    assert check_loopback("localhost") == "127.0.0.1"
    assert check_loopback("::1") == "::1"


def test_the_page_is_served_with_a_strict_content_policy_and_no_outside_resources(
    shared: Client,
) -> None:
    with urllib.request.urlopen(shared.base + "/", timeout=10) as response:
        html = response.read().decode()
        policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert '<script src="/static/app.js"' in html
    for name in ("app.js", "style.css"):
        with urllib.request.urlopen(f"{shared.base}/static/{name}", timeout=10) as response:
            text = response.read().decode()
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text
        stripped = text.replace("http://www.w3.org/2000/svg", "")
        assert "http://" not in stripped and "https://" not in stripped and "//cdn" not in stripped


def test_a_broken_request_is_an_error_answer_not_a_dead_server(shared: Client) -> None:
    with pytest.raises(urllib.error.HTTPError) as info:
        shared.get("/api/nothing")
    assert info.value.code == 404
    assert json.loads(info.value.read())["error"]
    assert shared.get("/api/runs")["runs"]


# -- the incremental reader on its own --------------------------------------------------------


def test_the_tail_notices_a_rewrite_of_the_same_length(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a":1}\n{"a":2}\n')
    tail = JsonlTail(path)
    assert [line.row for line in tail.poll()[1]] == [{"a": 1}, {"a": 2}]
    path.write_text('{"a":1}\n{"b":3}\n{"c":4}\n')
    reset, new = tail.poll()
    assert reset and [line.row for line in new] == [{"a": 1}, {"b": 3}, {"c": 4}]
    assert tail.poll() == (False, [])


# -- the command line -------------------------------------------------------------------------


def test_view_rejects_a_missing_path_and_a_file(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["view", str(tmp_path / "nope"), "--no-open"])
    assert (
        missing.exit_code == 2 and "error:" in missing.output and "does not exist" in missing.output
    )
    (tmp_path / "file.txt").write_text("x")
    afile = runner.invoke(app, ["view", str(tmp_path / "file.txt"), "--no-open"])
    assert afile.exit_code == 2 and "not a directory" in afile.output
    for result in (missing, afile):
        assert "Traceback" not in result.output


def test_view_serves_an_empty_folder_and_lists_runs_as_they_appear(
    samples: Path, tmp_path: Path
) -> None:
    catalog = Catalog(tmp_path)  # like `inspect view` on ./logs before the first run
    assert catalog.scan() == []
    shutil.copytree(samples / "allo", tmp_path / "later" / "allo")
    assert [e.rel for e in catalog.scan()] == ["later/allo"]


def test_view_serves_a_sweep_that_has_no_run_yet(tmp_path: Path) -> None:
    (tmp_path / layout.SWEEP).write_text("{}")
    assert Catalog(tmp_path).scan() == []


def test_view_prints_its_url_and_serves_until_stopped(root: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "econbench.cli", "view", str(root), "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)  # never hang the suite
        assert ready, "econbench view printed nothing"
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.poll() else "")
        url = line[line.index("http://") :].split()[0]
        with urllib.request.urlopen(url + "api/runs", timeout=10) as response:
            runs = json.loads(response.read())["runs"]
        assert {r["rel"] for r in runs} == {"coffee", "allo"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
