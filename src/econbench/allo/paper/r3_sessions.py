"""Replay one of the paper's stored R3 sessions (``arm_a1_announce*/seed_<n>/sessions.jsonl``).

The paper's R3 is one long tool-using conversation: every problem is shown as a user message
``PROBLEM k of N: …``, the model writes and runs scripts and submits answers, and every write
spends a unit of the budget. The session file keeps one ``records`` entry per problem
(``scripts_authored``: the scripts written while that problem was on screen) and the
conversation (``transcript``). A commitment is attributed the way the paper's scorer
(``scripts/session/skirental_scorer.py``, ``actions_from_session``) attributes it: the first
script authored while a problem of a class is on screen is that class's build, at that
problem's position within its class; any further write for the class (in the same problem or
later) is a rebuild, which spends budget and K again (``Game.charge_rebuild``).

So the game replayed here is econbench's R3 game: a class with a script collects its later
occurrences automatically. The paper does not score R3 (its scripts' correctness confounds
allocation); what it reports is first-sight commitment, commitments per seed and zero-commit
incidence, which depend only on when scripts were written, and those this replay reproduces.
Problems the session never showed (it was cut off at its 300k-token cap with budget left) are
recorded as turns after the session's end; they are not decisions and not unresolved, and a
class with a script collects them, as the paper's analysis values a truncated session (its
``value_of_builds`` extrapolates reuse over the class's full size). The session's own outcome
(correct answers, truncation) is kept under ``paper_r3``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from econbench.allo.game import EpisodeResult, Game
from econbench.allo.game.stream import Stream

PROBLEM_HEAD = re.compile(r"^PROBLEM (\d+) of (\d+)")
USAGE_KEYS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "cached_input_tokens",
    "reasoning_tokens": "reasoning_tokens",
}


def turn_head(t: int, cls: int, label: str, sighting: int, kind: str) -> dict[str, Any]:
    """The fields every replayed turn record starts with (those the runner's records start
    with)."""
    return {
        "t": t,
        "cls": cls,
        "label": label,
        "sighting": sighting,
        "first_sight": sighting == 1,
        "kind": kind,
    }


class R3SessionError(ValueError):
    """The stored session contradicts itself or its stream (the message names the problem)."""


def _json_or_text(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text


def conversation_by_problem(transcript: list[Any]) -> dict[int, dict[str, Any]]:
    """Split the conversation at each ``PROBLEM k of N`` user message: slot (k − 1) →
    ``{"observation": text, "replies": [...]}``; each reply is an assistant message with its tool
    calls and their results, in the runner's record shape."""
    slots: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    pending: dict[str, dict[str, Any]] = {}
    for message in transcript:
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        if role == "user" and isinstance(content, str) and (m := PROBLEM_HEAD.match(content)):
            current = slots.setdefault(int(m.group(1)) - 1, {"observation": "", "replies": []})
            current["observation"] = content
            continue
        if current is None:
            continue
        if role == "assistant":
            calls = []
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                rec = {
                    "name": fn.get("name"),
                    "arguments": _json_or_text(fn.get("arguments")),
                    "call_id": call.get("id"),
                    "executed": True,
                    "result": None,
                }
                calls.append(rec)
                if call.get("id"):
                    pending[call["id"]] = rec
            current["replies"].append(
                {"text": str(content or ""), "usage": {}, "tool_calls": calls}
            )
        elif role == "tool":
            rec = pending.pop(str(message.get("tool_call_id")), None)
            if rec is not None:
                rec["result"] = _json_or_text(content)
        elif role == "user" and isinstance(content, str):
            current["replies"].append({"text": "", "usage": {}, "tool_calls": [], "user": content})
    return slots


def _tokens(usages: list[Any]) -> Counter[str]:
    tokens: Counter[str] = Counter()
    for usage in usages:
        if not isinstance(usage, dict):
            continue
        for key, name in USAGE_KEYS.items():
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                tokens[name] += value
    return tokens


def replay_r3(
    session: dict[str, Any],
    stream: Stream,
    labels: list[str],
    *,
    cost: float,
    budget: int,
    where: Path,
) -> tuple[EpisodeResult, list[dict[str, Any]], Counter[str], dict[str, Any]]:
    """Replay the writes of ``session`` on ``stream``: (result, turn records, tokens, the
    session's own outcome). Raises :class:`R3SessionError` when the writes the replay charges
    differ from the session's own count."""
    file = where / "sessions.jsonl"
    records = session.get("records")
    if not isinstance(records, list):
        raise R3SessionError(f"{file}: no records list")
    authored: dict[int, int] = {}
    for rec in records:
        if not isinstance(rec, dict) or not isinstance(rec.get("item_idx", rec.get("idx")), int):
            raise R3SessionError(f"{file}: a record without an item index")
        authored[int(rec.get("item_idx", rec["idx"]))] = len(rec.get("scripts_authored") or [])
    seen = int(session.get("problems_seen") or 0)
    talk = conversation_by_problem(session.get("transcript") or [])
    game = Game(stream, cost=cost, budget=budget)
    turns: list[dict[str, Any]] = []

    def base(t: int, cls: int, sighting: int, kind: str) -> dict[str, Any]:
        said = talk.get(t, {})
        return {
            **turn_head(t, cls, labels[cls], sighting, kind),
            "observation": said.get("observation", ""),
            "replies": said.get("replies", []),
        }

    while not game.done:
        turn = game.turn()
        writes = authored.get(turn.t, 0)
        shown = turn.t < seen or turn.t in talk or writes > 0
        if not turn.needs_decision:  # the class has a script: any write is a rewrite
            rec = base(turn.t, turn.cls, turn.sighting, "reuse" if shown else "after_end")
            rec.update(notice=None, collected=True, rebuilds=0)
            turns.append(rec)
            for _ in range(writes):
                if game.done or game.budget_left == 0:
                    break
                game.charge_rebuild()
                rec["rebuilds"] += 1
            if not game.done:
                game.step(False)
            continue
        if not shown:  # the session was cut off (token cap) before this problem
            rec = base(turn.t, turn.cls, turn.sighting, "after_end")
            rec.update(notice=None, collected=False)
            turns.append(rec)
            game.step(False)
            continue
        commit = writes > 0
        rec = base(turn.t, turn.cls, turn.sighting, "decision")
        rec.update(
            budget_left=game.budget_left,
            decision="commit" if commit else "pass",
            resolved=True,
            reason=None,
            commit=commit,
            rebuilds=0,
            collected=commit,
        )
        turns.append(rec)
        game.step(commit)
        for _ in range(writes - 1 if commit else 0):
            if game.done or game.budget_left == 0:
                break
            game.charge_rebuild()
            rec["rebuilds"] += 1
    asked = {rec["t"] for rec in turns}
    for r in game.records:
        if r.t not in asked:
            rec = base(r.t, r.cls, r.sighting, "after_end")
            rec.update(notice=None, collected=r.collected)
            turns.append(rec)
    turns.sort(key=lambda rec: rec["t"])
    result = game.result()
    charged = len(result.commits) + result.rebuilds
    stored = session.get("n_scripts_written")
    if isinstance(stored, int) and stored != charged:
        raise R3SessionError(
            f"{file}: the replay charges {charged} script writes, the session wrote {stored}"
        )
    outcome = {
        "n_correct": session.get("n_correct"),
        "n_submitted": session.get("n_submitted"),
        "n_scripts_written": stored,
        "problems_seen": seen,
        "stopped_on_budget": session.get("stopped_on_budget"),
        "hit_cap": session.get("hit_cap"),
        "spent_tokens": session.get("spent_tokens"),
        "token_cap": session.get("token_cap"),
        "class_bound": bool(session.get("class_bound", False)),
    }
    return result, turns, _tokens(session.get("turn_usages") or []), outcome
