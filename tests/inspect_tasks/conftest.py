"""What the Inspect task tests share: a fake OpenAI server replaying a fixed decision script,
and the two ways to play it — through Inspect (``openai/`` pointed at the server) and
through econbench's own commands (``openai-compatible/`` at the same server).

The script decides from the conversation alone (how many tool results it holds, which tools
it is offered), never from the wire format, so both paths meet the same decisions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.openai_server import FakeOpenAIServer

INSPECT_MODEL = "openai/fake-model"
ECONBENCH_MODEL = "openai-compatible/fake-model"
KEY = "sk-test-inspect-0123456789"

COFFEE_SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("view_listings", {}),
    ("send_message", {"recipient": "roaster_B", "title": "hello", "body": "shall we trade?"}),
    ("roast", {"green_item_id": "green_A", "qty_kg": 5}),
    ("wait_for_next_day", {}),
]
"""A CoffeeBench firm's decisions, in turn (a roast without beans is an error result: the
script does not have to be a good one, only the same on both paths)."""


def decision_script(request: BrainRequest) -> BrainReply:
    """The fixed decisions: CoffeeBench's script by turn; AlloBench claims every third
    problem (R1/R2 tools), keeps every fifth draw (R0 text), or writes a script and answers
    0 (R3, in the sandbox)."""
    names = [t["name"] for t in request.tools]
    results = sum(1 for m in request.messages if m["role"] == "tool")
    users = sum(1 for m in request.messages if m["role"] == "user")
    if "write_script" in names:
        if request.messages[-1]["role"] == "tool":
            submit = next(t for t in request.tools if t["name"] == "submit_answer")
            key = next(iter(submit["parameters"]["properties"]))
            return BrainReply(tool_calls=[{"name": "submit_answer", "arguments": {key: 0}}])
        code = "def solve(inputs: dict) -> int:\n    return 0\n"
        arguments = {"name": f"s{users}", "code": code}
        return BrainReply(tool_calls=[{"name": "write_script", "arguments": arguments}])
    if "claim_solver" in names:
        claim = next(t for t in request.tools if t["name"] == "claim_solver")
        takes_code = "code" in claim["parameters"].get("properties", {})
        if results % 3 == 1:
            arguments = {"code": "def solve(x):\n    return 0"} if takes_code else {}
            return BrainReply(tool_calls=[{"name": "claim_solver", "arguments": arguments}])
        return BrainReply(tool_calls=[{"name": "skip_solver", "arguments": {}}])
    if not names:
        return BrainReply(text="DECISION: KEEP" if users % 5 == 2 else "DECISION: PASS")
    name, arguments = COFFEE_SCRIPT[results % len(COFFEE_SCRIPT)]
    return BrainReply(tool_calls=[{"name": name, "arguments": arguments}])


@pytest.fixture(scope="session")
def shared_server() -> Iterator[FakeOpenAIServer]:
    """One server per process: Inspect keeps the model clients it made (by model name) for
    the process, so every eval must find the server at the same address."""
    server = FakeOpenAIServer(decision_script, require_tool_choice=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_openai(
    shared_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeOpenAIServer]:
    """The server, with both clients' key and base URL pointed at it. It answers requests
    that name no tool choice with their tools, as OpenAI does (Inspect sends none)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", shared_server.base_url)
    shared_server.brain = decision_script
    shared_server.faults.clear()
    yield shared_server
    shared_server.brain = decision_script


@pytest.fixture(autouse=True)
def inspect_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's own data and cache folders in the test's directory, not the user's."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.chdir(tmp_path)


def run_inspect(task: str, log_dir: Path, **kwargs: Any) -> EvalLog:
    """One Inspect eval of ``task`` with the fake model, quietly; its log."""
    kwargs.setdefault("model", INSPECT_MODEL)
    kwargs.setdefault("max_retries", 2)  # a broken test fails, rather than retrying for hours
    logs = inspect_eval(task, log_dir=str(log_dir), display="none", **kwargs)
    assert len(logs) == 1
    return logs[0]
