"""Record the request bodies the CoffeeBench reference sends for the scenario (not a test).

Run with a Python 3.12 venv holding the reference's locked SDKs (anthropic 0.75.0,
openai 2.14.0, google-genai 1.56.0, python-dotenv) and the reference unpacked at
/tmp/coffeeref:

    /tmp/refvenv_a/bin/python tests/agents/data/coffee_paper/record_reference.py

    /tmp/refvenv_a/bin/python tests/agents/data/coffee_paper/record_reference.py openrouter gemini

It drives the reference's own ``Agent`` (``init``, ``add_message`` for wakes, ``step_query``,
``step_apply``) with its ``ContextCompactor`` and the model class ``get_model`` picks for a
plain name, against econbench's fake servers answering with the scripted brain, and writes
``<provider>.json``: each request's path, the headers that matter and the body as sent
(``raw``: the body's bytes as they arrived, for OpenRouter and Gemini).

OpenRouter (``OpenRouterModel``, pointed at the fake server instead of openrouter.ai) also
records ``fallback``: the scenario's first three turns with the server refusing
``parallel_tool_calls`` once (the reference drops it for that call only) and then
``temperature`` (dropped for good). Gemini (``GeminiModel``) also records ``thinking`` (the
scenario under ``-thinking``: thought summaries requested, shown and replayed) and
``shapes``: one query whose tools carry every parameter type the reference's schema builder
writes, for the google-genai client's own conversion of them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, os.environ.get("COFFEEREF", "/tmp/coffeeref"))

from tests.agents.coffee_paper_scenario import DATA, SCENARIO, ScriptedBrain, tool_result  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropicServer  # noqa: E402
from tests.fakes.common import Fault  # noqa: E402
from tests.fakes.gemini_server import FakeGeminiServer  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402

HEADERS = ("anthropic-version", "anthropic-beta")


def check_balance(account_id: int) -> dict:
    return tool_result("check_balance")


def get_weather(location: str) -> dict:
    return tool_result("get_weather")


SHAPES = [
    {
        "name": "wait_for_next_day",
        "description": "Sleep until the next event.",
        "input_schema": {"type": "object", "properties": {}, "required": []},
    },
    {
        "name": "post_listing",
        "description": 'Post a listing.\n\nArgs:\n    item: what — "quoted", café.',
        "input_schema": {
            "type": "object",
            "properties": {
                "item": {"type": "string"},
                "qty": {"type": "integer"},
                "price": {"type": "number"},
                "public": {"type": "boolean"},
                "tags": {"type": "array"},
                "terms": {"type": "object"},
                "note": {"type": "string"},
            },
            "required": ["item", "qty", "price"],
        },
    },
]


def point(model: object, server: object) -> None:
    """Send the reference model object's requests to the fake server (nothing else changes)."""
    import openai

    client = model.client  # type: ignore[attr-defined]
    if isinstance(client, openai.OpenAI) and hasattr(server, "base_url"):
        client.base_url = server.base_url  # OpenRouterModel's is openrouter.ai


def drive(model_name: str, server: object = None, steps: list | None = None) -> None:
    from coffeebench.agent import Agent
    from coffeebench.context_compactor import ContextCompactor
    from coffeebench.models import get_model
    from coffeebench.models.types import ToolSpec

    model = get_model(model_name)
    if server is not None:
        point(model, server)
    agent = Agent(
        model=model,
        tools=[check_balance, get_weather],
        instruct_prompt=SCENARIO["system_prompt"],
        initial_observation=SCENARIO["initial_observation"],
        name="roaster_A",
        compactor=ContextCompactor(model=model, agent_name="roaster_A"),
    )
    agent.tool_specs = [ToolSpec(**t) for t in SCENARIO["tools"]]
    agent.init()
    for step in SCENARIO["steps"] if steps is None else steps:
        if step["wake"] is not None:
            agent.add_message("user", step["wake"])
        agent.step_apply(agent.step_query())


def make_server(kind: str) -> object:
    if kind == "anthropic":
        server = FakeAnthropicServer(ScriptedBrain())
        server.reject_sampling_params = False  # the reference's API version takes temperature
    elif kind == "gemini":
        server = FakeGeminiServer(ScriptedBrain())
    else:
        server = FakeOpenAIServer(ScriptedBrain(), require_tool_choice=False)
        server.reject_null_content = False  # the reference sends null content with calls
    return server


def requests_of(server: object, raw: bool) -> list[dict]:
    out = []
    for req, h, body in zip(
        server.requests,  # type: ignore[attr-defined]
        server.headers,  # type: ignore[attr-defined]
        server.raw_bodies,  # type: ignore[attr-defined]
        strict=True,
    ):
        item = {
            "path": req["path"],
            "headers": {k: h[k] for k in HEADERS if k in h},
            "body": req["body"],
        }
        if raw:
            item["raw"] = body.decode("utf-8")
        out.append(item)
    return out


def run(
    kind: str,
    model_name: str,
    faults: list | None = None,
    steps: list | None = None,
    raw: bool = False,
) -> list[dict]:
    server = make_server(kind)
    server.faults.extend(faults or [])  # type: ignore[attr-defined]
    with server:  # type: ignore[attr-defined]
        os.environ["ANTHROPIC_BASE_URL"] = server.root_url  # type: ignore[attr-defined]
        os.environ["OPENAI_BASE_URL"] = server.root_url + "/v1"  # type: ignore[attr-defined]
        os.environ["GOOGLE_GEMINI_BASE_URL"] = server.root_url  # type: ignore[attr-defined]
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-fake"
        os.environ["OPENAI_API_KEY"] = "sk-fake"
        os.environ["OPENROUTER_API_KEY"] = "sk-or-fake"
        os.environ["GEMINI_API_KEY"] = "gm-fake"
        drive(model_name, server, steps)
        return requests_of(server, raw)


def shapes(model_name: str) -> dict:
    """One ``GeminiModel.query`` with the SHAPES tools (no agent)."""
    from coffeebench.models import get_model
    from coffeebench.models.types import ToolSpec

    server = make_server("gemini")
    server.validate = lambda body: None  # an empty parameter object goes as the client wrote it
    with server:
        os.environ["GOOGLE_GEMINI_BASE_URL"] = server.root_url
        os.environ["GEMINI_API_KEY"] = "gm-fake"
        model = get_model(model_name)
        model.system_prompt = SCENARIO["system_prompt"]
        model.query(
            [{"role": "user", "content": SCENARIO["initial_observation"]}],
            tools=[ToolSpec(**t) for t in SHAPES],
        )
        [request] = requests_of(server, raw=True)
    return {"tools": SHAPES, "request": request}


def write(kind: str, data: dict) -> None:
    (DATA / f"{kind}.json").write_text(
        json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def record(kind: str, model_name: str) -> None:
    raw = kind in ("openrouter", "gemini")
    data: dict = {"model": model_name, "requests": run(kind, model_name, raw=raw)}
    if kind == "openrouter":
        placeholder = Fault("delay", seconds=0.0)
        data["fallback"] = run(
            kind,
            model_name,
            faults=[
                Fault("status", status=400, message="parallel_tool_calls is not supported"),
                placeholder,
                Fault("status", status=400, message="this model does not take temperature"),
            ],
            steps=SCENARIO["steps"][:3],
            raw=True,
        )
    if kind == "gemini":
        data["thinking"] = run(kind, model_name + "-thinking", raw=True)
        data["shapes"] = shapes(model_name)
    write(kind, data)
    print(kind, len(data["requests"]), "requests")


MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5.5",
    "openrouter": "z-ai/glm-5.1",
    "gemini": "gemini-3.1-pro-preview",
}

if __name__ == "__main__":
    for name in sys.argv[1:] or list(MODELS):
        record(name, MODELS[name])
