"""R0's conversations are the paper's, request for request, at the options each condition sets.

Every R0 file of the captured requests (``data/paper_requests``: the urn of ``urn_session`` with
and without ``--announce-n``, in the four vocabularies, the economic surface's R0 cells, and the
keep/pass tool-call probe of ``urn_tool_session``) is replayed through econbench's runner with
the file's own scripted replies. Each request the paper sent must be the conversation econbench
holds at that point: the system prompt, every user text, each assistant turn as it was given
(a reply without a decision stays), every tool result as ``Framing.render_result`` writes it,
and, for the probe, the tools (names, descriptions, schemas) and the tool choice; and econbench
must ask exactly as many times (the session ends at the last keep). The framing options are
the defaults except what the condition changes: ``announce_n=False`` (no-N urn), ``state_cost``
True (the economic surface), ``tool_choice="required"`` (the probe's local Qwen runs).

The wire form of these conversations (the paper's ``RawChat`` bodies) is the providers'
business (``request_style="paper"``), checked byte for byte by ``test_paper_conformance``.
"""

from __future__ import annotations

import json
import lzma
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from econbench.agents.policy import Input, Reply, ToolResult, UserText
from econbench.agents.tools import ToolCall
from econbench.allo.episodes.runner import play_episode
from econbench.allo.framings import get_framing
from econbench.allo.framings.base import Framing
from econbench.allo.game.stream import StreamConfig, generate_stream

DATA = Path(__file__).parent / "data" / "paper_requests"
SKIN_OF_VOCAB = {"ball": "default", "treasure_chest": "chest", "quiver": "quiver"}
SKIN_OF_VOCAB["cauldron"] = "cauldron"
CFG = StreamConfig()

FILES: dict[str, tuple[str, dict[str, Any], int]] = {
    # file: (framing, options beyond the defaults, episodes)
    "r0_urn_haiku": ("r0", {}, 28),
    "r0_urn_qwen_vocabs": ("r0", {}, 112),
    "r0_urn_no_n_haiku": ("r0", {"announce_n": False}, 16),
    "r0_urn_no_n_qwen_vocabs": ("r0", {"announce_n": False}, 112),
    "r0_urn_gpt_surface": ("r0", {"state_cost": True}, 28),
    "econ_r0_haiku": ("r0", {"state_cost": True}, 336),
    "r0_tool_haiku": ("r0-tool", {}, 28),
    "r0_tool_qwen_vocabs": ("r0-tool", {"tool_choice": "required"}, 112),
}


def episodes(file: str) -> dict[tuple[str, str, int], list[dict[str, Any]]]:
    """The file's requests by episode: (vocab, cell, seed) → requests in order."""
    out: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    with lzma.open(DATA / f"{file}.jsonl.xz", "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            key = (row.get("vocab") or "ball", row.get("cell") or "", row["seed"])
            out.setdefault(key, []).append(row)
    for requests in out.values():
        assert [r["request"] for r in requests] == list(range(len(requests)))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b["text"] for b in content if b.get("type") == "text")


def conversation(api: str, body: dict[str, Any]) -> tuple[str, list[tuple[Any, ...]]]:
    """The system prompt and the turns of a request body, wire form aside: ``("user", text)``,
    ``("assistant", text, ((name, args, id), …))``, ``("tool", call id, content)``."""
    turns: list[tuple[Any, ...]] = []
    if api == "anthropic":
        for m in body["messages"]:
            content = m["content"]
            if m["role"] == "assistant":
                blocks = (
                    [{"type": "text", "text": content}] if isinstance(content, str) else content
                )
                calls = tuple(
                    (b["name"], b["input"], b["id"]) for b in blocks if b["type"] == "tool_use"
                )
                turns.append(("assistant", _text(blocks), calls))
            elif isinstance(content, str) or content[0]["type"] == "text":
                turns.append(("user", _text(content)))
            else:
                for block in content:
                    assert block["type"] == "tool_result"
                    turns.append(("tool", block["tool_use_id"], block["content"]))
        return _text(body["system"]), turns
    first, *rest = body["messages"]
    assert first["role"] == "system"
    for m in rest:
        if m["role"] == "assistant":
            calls = tuple(
                (c["function"]["name"], json.loads(c["function"]["arguments"]), c["id"])
                for c in m.get("tool_calls", [])
            )
            turns.append(("assistant", m["content"], calls))
        elif m["role"] == "tool":
            turns.append(("tool", m["tool_call_id"], m["content"]))
        else:
            turns.append(("user", m["content"]))
    return first["content"], turns


def wire_tools(api: str, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
    if api == "anthropic":
        return [(t["name"], t["description"], t["input_schema"]) for t in body.get("tools", [])]
    return [
        (t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in body.get("tools", [])
    ]


class ReplayActor:
    """Answers with the fixture's replies (its calls under the ids the paper's stub gave
    them) and keeps the conversation as the model sees it, tool results rendered by the
    framing."""

    name = "replay"

    def __init__(self, framing: Framing, requests: list[dict[str, Any]]) -> None:
        self.framing = framing
        self.requests = requests
        self.turns: list[tuple[Any, ...]] = []
        self.seen: list[list[tuple[Any, ...]]] = []  # the conversation at each request
        self.system = ""
        self.tools: list[Any] = []

    def start(self, actor_id: str, role: str, tools: Any, **options: Any) -> None:
        self.system, self.tools = options["system_prompt"], list(tools)

    def _ids(self, k: int) -> list[str]:
        """The ids of reply ``k``'s calls, as the next request shows them."""
        req = self.requests[k]
        n = len(req["reply"]["tool_calls"])
        if k + 1 == len(self.requests):  # never shown again
            return [f"last{i}" for i in range(n)]
        _, turns = conversation(req["api"], self.requests[k + 1]["body"])
        replies = [t for t in turns if t[0] == "assistant"]
        return [c[2] for c in replies[k][2]]

    def respond(self, inputs: Sequence[Input]) -> Reply:
        for item in inputs:
            if isinstance(item, UserText):
                self.turns.append(("user", item.text))
            else:
                assert isinstance(item, ToolResult)
                self.turns.append(("tool", item.call_id, self.framing.render_result(item.result)))
        self.seen.append(list(self.turns))
        k = len(self.seen) - 1
        assert k < len(self.requests), "econbench asks after the paper's last request"
        reply = self.requests[k]["reply"]
        calls = [
            ToolCall(c["name"], c["arguments"], call_id)
            for c, call_id in zip(reply["tool_calls"], self._ids(k), strict=True)
        ]
        called = tuple((c.name, c.arguments, c.call_id) for c in calls)
        self.turns.append(("assistant", reply["text"], called))
        return Reply(text=reply["text"], tool_calls=calls)


@pytest.mark.parametrize("file", list(FILES))
def test_replays_the_papers_requests(file: str) -> None:
    name, options, n_episodes = FILES[file]
    found = episodes(file)
    assert len(found) == n_episodes
    for (vocab, _cell, seed), requests in sorted(found.items()):
        first = requests[0]
        budget, cost = first.get("budget", 3), float(first.get("cost", 0))
        framing = get_framing(name, skin=SKIN_OF_VOCAB[vocab], **options)
        actor = ReplayActor(framing, requests)
        stream = generate_stream(seed, CFG)  # the paper's stream; B = 3 draws it in every cell
        play_episode(framing, lambda info, a=actor: a, stream, cost=cost, budget=budget)
        where = f"{file}: {vocab} {_cell} seed {seed}"
        assert len(actor.seen) == len(requests), where
        for k, (req, seen) in enumerate(zip(requests, actor.seen, strict=True)):
            system, turns = conversation(req["api"], req["body"])
            assert actor.system == system, f"{where}, request {k}: system prompt"
            assert seen == turns, f"{where}, request {k}"
        specs = [(t.name, t.description, t.parameters) for t in actor.tools]
        assert specs == wire_tools(first["api"], first["body"]), where
        if name == "r0-tool":
            choice = first["body"]["tool_choice"]
            if first["api"] == "anthropic":
                choice = choice["type"]
            assert framing.tool_choice == choice, where


def test_the_default_vocabulary_is_the_papers_ball() -> None:
    """``--vocab ball`` (the Qwen files) is the paper's default texts (the Haiku files), and
    econbench's default skin plays both."""
    for ball_file, default_file in (
        ("r0_urn_qwen_vocabs", "r0_urn_haiku"),
        ("r0_urn_no_n_qwen_vocabs", "r0_urn_no_n_haiku"),
        ("r0_tool_qwen_vocabs", "r0_tool_haiku"),
    ):
        ball = {k[2]: v for k, v in episodes(ball_file).items() if k[0] == "ball"}
        default = {k[2]: v for k, v in episodes(default_file).items()}
        assert set(default) <= set(ball)
        for seed, requests in default.items():
            for a, b in zip(requests, ball[seed], strict=True):
                assert _without_ids(a) == _without_ids(b), (default_file, seed)
                assert wire_tools(a["api"], a["body"]) == wire_tools(b["api"], b["body"])


def _without_ids(request: dict[str, Any]) -> tuple[str, list[tuple[Any, ...]]]:
    """The conversation with the call ids left out (Anthropic's and OpenAI's differ)."""
    system, turns = conversation(request["api"], request["body"])
    plain = [
        ("tool", t[2])
        if t[0] == "tool"
        else ("assistant", t[1], tuple(c[:2] for c in t[2]))
        if t[0] == "assistant"
        else t
        for t in turns
    ]
    return system, plain
