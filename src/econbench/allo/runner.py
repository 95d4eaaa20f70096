"""Plays AlloBench episodes: any actor, any framing, the same game underneath.

:func:`play_episode` drives one episode. The game (``econbench.allo.game.Game``) does all the
bookkeeping; the framing renders text and tools; the actor answers. Per decision turn the
runner sends the observation (with batched notices of the automatic turns since the last
question) as ``UserText``, executes the reply's *first* tool call through the framing's
toolkit (the others get an "ignored" error result), returns results as ``ToolResult`` with the
next input, and ends the turn by the framing's rule. When the budget is spent the session ends
and the remaining turns are scored without asking (and recorded, R3 still runs its scripts).

:func:`run_cell` plays a configuration over many seeds and writes ``episodes.jsonl`` (one
record per episode), ``summary.json`` and ``config.json``; the CLI's ``run`` and every cell of
``sweep`` go through it. Records hold no timestamps, so two runs with the same settings write
byte-identical ``episodes.jsonl`` — except R3's sandbox ``wall_s`` fields, which measure time.

Choices where the spec is silent:

- Token accounting sums the numeric fields of each ``Reply.usage``; the per-episode cap
  (R3: 300k tokens) counts generated tokens — ``output_tokens`` (reasoning included), or
  ``total_tokens`` when only that is given — the budget the per-turn limits (4,096 in R3)
  draw on; re-sent prompt tokens do not count. Past the cap every later question is an
  unresolved PASS, not asked.
- The system prompt is the same for all episodes of a configuration; it is stored once, in
  ``config.json``, not per episode.
- ``unresolved_turns`` in the summary is the total over all episodes.

Which streams a cell plays (``CellSpec.config.generator`` and ``CellSpec.stream_budget``, the
CLI's ``--streams`` and ``--stream-budget``): by default the paper's generator, and — the
paper's protocol for the (B, K) grid — the stream of a seed is drawn with the config's budget
(``REFERENCE_BUDGET`` = 3) whatever the cell's B (``stream_budget="fixed"``), so every cell of a
sweep plays the same 24 episodes. ``stream_budget="cell"`` draws each cell's streams with its
own B (the trap-early window then follows B); ``generator="numpy"`` selects econbench's earlier
generator. Each episode record names the generator and the budget that drew its stream
(``stream.generator``, ``stream.draw_budget``); a non-default choice is part of the cell's slug.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.agents.models.base import ModelError, ProviderWrap
from econbench.agents.tools import ToolCall
from econbench.allo.actors import (
    ActorFactory,
    EpisodeInfo,
    Input,
    PolicyActorFactory,
    Reply,
    ToolResult,
    UserText,
)
from econbench.allo.framings import FRAMINGS, get_framing, get_skin
from econbench.allo.framings.base import AutoTurn, Framing, FramingEpisode, TurnOutcome
from econbench.allo.game import EpisodeResult, Game, Turn
from econbench.allo.metrics import summarize
from econbench.allo.stream import (
    EVAL_SEEDS,
    STREAM_BUDGETS,
    Stream,
    StreamBudget,
    StreamConfig,
    generate_stream,
    stream_config_for,
)
from econbench.jsonio import json_line
from econbench.runs.checkpoint import cut_log, log_length, write_progress
from econbench.runs.diff import config_diff
from econbench.runs.layout import CONFIG, EPISODES, META, RECORD, SUMMARY, read_json, read_jsonl
from econbench.runs.lock import RunLock
from econbench.runs.store import run_metadata, write_json

SCHEMA_VERSION = 1
IGNORED = {
    "status": "error",
    "error": "ignored: only the first tool call of a reply is executed; call one tool at a time",
}
NO_TOOLS = {"status": "error", "error": "ignored: this game has no tools; answer in text"}


@dataclass
class Episode:
    """One played episode: the game's result and the full record."""

    result: EpisodeResult
    record: dict[str, Any]

    @property
    def unresolved(self) -> int:
        return int(self.record["unresolved_turns"])


@dataclass
class _Session:
    """Per-episode runner state."""

    framing: Framing
    ep: FramingEpisode
    game: Game
    actor: Any
    turns: list[dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    owed: list[Input] = field(default_factory=list)  # tool results not yet delivered
    tokens: Counter[str] = field(default_factory=Counter)

    def tokens_used(self) -> int:
        if "output_tokens" in self.tokens:
            return self.tokens["output_tokens"]
        return self.tokens.get("total_tokens", 0)

    def over_token_cap(self) -> bool:
        cap = self.framing.episode_max_tokens
        return cap is not None and self.tokens_used() >= cap


def _turn_base(ep: FramingEpisode, turn: Turn, kind: str) -> dict[str, Any]:
    return {
        "t": turn.t,
        "cls": turn.cls,
        "label": ep.label(turn.cls),
        "sighting": turn.sighting,
        "first_sight": turn.sighting == 1,
        "kind": kind,
    }


def _auto_records(
    s: _Session, turns: list[Turn], told: bool, kind: str
) -> list[tuple[Turn, AutoTurn]]:
    outs = s.ep.auto_turns(turns, told) if turns else []
    for turn, out in zip(turns, outs, strict=True):
        rec = _turn_base(s.ep, turn, kind)
        rec.update(notice=out.notice if told else None, collected=True, **out.record)
        s.turns.append(rec)
    return list(zip(turns, outs, strict=True))


def _usage(reply: Reply) -> dict[str, int]:
    return {
        k: v
        for k, v in (reply.usage or {}).items()
        if isinstance(v, int | float) and not isinstance(v, bool)  # not the cache_hit flag
    }


def _ask(s: _Session, inputs: list[Input]) -> Reply:
    reply = s.actor.respond(inputs)
    if not isinstance(reply, Reply):
        raise TypeError(f"actor {s.actor!r} returned {type(reply).__name__}, not Reply")
    s.tokens.update(_usage(reply))
    return reply


def _call_record(call: ToolCall, result: dict[str, Any], executed: bool) -> dict[str, Any]:
    return {
        "name": call.name,
        "arguments": call.arguments,
        "call_id": call.call_id,
        "executed": executed,
        "result": result,
    }


def _decision_turn(s: _Session, turn: Turn) -> TurnOutcome:
    """Ask the actor about one turn; return how it ended and record it."""
    budget_left = s.game.budget_left
    text = s.ep.begin_turn(turn, budget_left)
    observation = "\n".join([*s.notices, text])
    s.notices = []
    replies: list[dict[str, Any]] = []
    framing = s.framing
    if s.over_token_cap():
        outcome = (
            s.ep.end_turn("token_limit")
            if framing.uses_tools
            else TurnOutcome(False, False, "episode token limit reached")
        )
    else:
        inputs: list[Input] = [*s.owed, UserText(observation)]
        s.owed = []
        calls = 0
        while True:
            reply = _ask(s, inputs)
            rec: dict[str, Any] = {"text": reply.text, "usage": _usage(reply), "tool_calls": []}
            if reply.events:
                rec["events"] = reply.events
            replies.append(rec)
            if not framing.uses_tools:
                for call in reply.tool_calls:
                    rec["tool_calls"].append(_call_record(call, NO_TOOLS, False))
                    s.owed.append(ToolResult(call.name, NO_TOOLS, call.call_id))
                outcome = s.ep.outcome_from_text(reply.text)
                break
            if not reply.tool_calls:
                outcome = s.ep.end_turn("no_call")
                break
            first, *rest = reply.tool_calls
            result = s.ep.toolkit.call(first.name, first.arguments)  # type: ignore[union-attr]
            calls += 1
            rec["tool_calls"].append(_call_record(first, result, True))
            results: list[Input] = [ToolResult(first.name, result, first.call_id)]
            for call in rest:
                rec["tool_calls"].append(_call_record(call, IGNORED, False))
                results.append(ToolResult(call.name, IGNORED, call.call_id))
            if s.ep.turn_over():
                outcome, s.owed = s.ep.end_turn("tool"), results
                break
            if calls >= framing.max_calls_per_turn:
                outcome, s.owed = s.ep.end_turn("call_limit"), results
                break
            if s.over_token_cap():
                outcome, s.owed = s.ep.end_turn("token_limit"), results
                break
            inputs = results
    rec = _turn_base(s.ep, turn, "decision")
    rec.update(
        budget_left=budget_left,
        observation=observation,
        replies=replies,
        decision="commit" if outcome.commit else "pass",
        resolved=outcome.resolved,
        reason=outcome.reason,
        commit=outcome.commit,
        rebuilds=outcome.rebuilds,
        collected=outcome.commit,
        **outcome.record,
    )
    s.turns.append(rec)
    return outcome


def play_episode(
    framing: Framing,
    actor_factory: ActorFactory,
    stream: Stream,
    *,
    cost: float = 0.0,
    budget: int | None = None,
) -> Episode:
    """Play one episode of ``stream`` in ``framing`` with a fresh actor."""
    game = Game(stream, cost=cost, budget=budget)
    b = int(game.budget or 0)
    ep = framing.episode(stream, cost, b)
    actor = actor_factory(EpisodeInfo(stream.seed, framing, float(cost), b, stream))
    system = ep.system_prompt()
    actor.start(system, ep.tools(), framing.max_tokens)
    s = _Session(framing, ep, game, actor)
    batch: list[Turn] = []
    while not game.done:
        turn = game.turn()
        if not turn.needs_decision:  # the class has a tool (a spent budget ends the game)
            batch.append(turn)
            game.step(False)
            continue
        s.notices += [out.notice for _, out in _auto_records(s, batch, True, "auto")]
        batch = []
        outcome = _decision_turn(s, turn)
        game.step(outcome.commit)
        for _ in range(outcome.rebuilds):
            game.charge_rebuild()
    # Automatic turns after the last question, then the turns the game scored without asking.
    _auto_records(s, batch, False, "auto")
    asked = {rec["t"] for rec in s.turns}
    tail = [r for r in game.records if r.t not in asked]
    tooled = [Turn(r.t, r.cls, r.sighting, True, False) for r in tail if r.collected]
    _auto_records(s, tooled, False, "after_end")
    for r in tail:
        if not r.collected:
            rec = _turn_base(ep, Turn(r.t, r.cls, r.sighting, False, False), "after_end")
            rec.update(notice=None, collected=False)
            s.turns.append(rec)
    s.turns.sort(key=lambda rec: rec["t"])
    result = game.result()
    record: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "seed": stream.seed,
        "framing": framing.name,
        "skin": framing.describe().get("skin"),
        "actor": getattr(actor, "name", type(actor).__name__),
        "cost": float(cost),
        "budget": b,
        "stream": {
            "generator": stream.config.generator,
            "draw_budget": stream.config.budget,
            "hot": list(stream.hot),
            "classes": list(stream.classes),
            "labels": [ep.label(c) for c in range(stream.config.n_classes)],
        },
        **outcome_fields(result, s.turns, s.tokens),
        **ep.episode_record(),
        "turns": s.turns,
    }
    return Episode(result=result, record=record)


def outcome_fields(
    result: EpisodeResult, turns: list[dict[str, Any]], tokens: Mapping[str, int]
) -> dict[str, Any]:
    """The part of an episode record that states its outcome (the runner's and the paper
    importer's records share it)."""
    return {
        "collected": result.collected,
        "utility": result.utility,
        "opt": result.opt,
        "score": result.utility / result.opt if result.opt > 0 else None,
        "commits": [c.__dict__ for c in result.commits],
        "first_sight_commits": sum(c.first_sight for c in result.commits),
        "decision_turns": sum(1 for rec in turns if rec["kind"] == "decision"),
        "unresolved_turns": sum(1 for rec in turns if rec.get("resolved") is False),
        "tokens": dict(sorted(tokens.items())),
        "result": result.to_dict(),
    }


# -- cells: one configuration over many seeds -------------------------------------------------


@dataclass(frozen=True)
class CellSpec:
    """One configuration: framing × actor × cost × budget over some seeds."""

    framing: str
    policy: str
    seeds: tuple[int, ...] = tuple(EVAL_SEEDS)
    cost: float = 0.0
    budget: int = 3
    skin: str = "default"
    config: StreamConfig = field(default_factory=StreamConfig)
    stream_budget: StreamBudget = "fixed"
    """``"fixed"``: streams drawn with ``config.budget`` (3) for every B, the paper's protocol;
    ``"cell"``: drawn with this cell's ``budget``."""

    def validate(self) -> None:
        """Raise ``ValueError`` with a one-line message for any bad setting."""
        if not self.seeds:
            raise ValueError("no seeds to run")
        if any(s < 0 for s in self.seeds):
            raise ValueError("seeds must be non-negative")
        if not math.isfinite(self.cost) or self.cost < 0:
            raise ValueError(f"cost must be a non-negative number, got {self.cost}")
        if self.budget < 1:
            raise ValueError(f"budget must be at least 1, got {self.budget}")
        if self.framing not in FRAMINGS:
            raise ValueError(
                f"unknown framing {self.framing!r}; choose one of {', '.join(FRAMINGS)}"
            )
        if self.stream_budget not in STREAM_BUDGETS:
            raise ValueError(
                f"unknown stream budget {self.stream_budget!r}; choose one of "
                f"{', '.join(STREAM_BUDGETS)}"
            )
        get_skin(self.skin)
        if self.skin != "default" and self.framing != "r0":
            raise ValueError(f"--skin applies to the r0 urn only, not to {self.framing}")

    @property
    def stream_config(self) -> StreamConfig:
        """The generator config that draws this cell's streams (its budget sets the trap-early
        window): ``config`` under ``stream_budget="fixed"``, with the cell's B under ``"cell"``."""
        return stream_config_for(self.config, self.budget, self.stream_budget)

    def slug(self) -> str:
        """Directory name: ``<framing>-<policy>-k<K>-b<B>`` (plus the skin for R0 reskins, and
        ``-numpy`` / ``-cellstreams`` for the non-default stream choices)."""
        k = str(int(self.cost)) if float(self.cost).is_integer() else str(self.cost)
        base = f"{self.framing}-{safe_name(self.policy)}-k{k}-b{self.budget}"
        if self.skin != "default":
            base = f"{base}-{self.skin}"
        if self.config.generator != "paper":
            base = f"{base}-{self.config.generator}"
        if self.stream_budget != "fixed":
            base = f"{base}-{self.stream_budget}streams"
        return base

    def to_dict(self) -> dict[str, Any]:
        return {
            "framing": self.framing,
            "policy": self.policy,
            "seeds": list(self.seeds),
            "cost": float(self.cost),
            "budget": self.budget,
            "skin": self.skin,
            "stream_budget": self.stream_budget,
            "stream_config": self.stream_config.model_dump(),
        }


def safe_name(name: str) -> str:
    """A name fit for a path component: ``wait:2`` → ``wait-2``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "x"


def make_factory(
    spec: CellSpec, models: dict[str, Any] | None = None, wrap: ProviderWrap | None = None
) -> ActorFactory:
    """The actor factory for ``spec.policy``: a model (``provider/model``, its API key checked
    now, before anything runs) or a reference policy name."""
    if "/" in spec.policy:
        from econbench.agents.models.registry import ModelSettings, check_keys
        from econbench.allo.llm_actor import LLMActorFactory

        settings = (models or {}).get(spec.policy) or ModelSettings()
        check_keys([spec.policy], {spec.policy: settings})
        return LLMActorFactory(spec.policy, settings, wrap=wrap)
    return PolicyActorFactory(spec.policy, spec.stream_config, cost=spec.cost, budget=spec.budget)


def play_cell(
    spec: CellSpec,
    *,
    framing: Framing | None = None,
    actor_factory: ActorFactory | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """Play every seed of ``spec``; ``on_episode`` is called after each (progress, writing)."""
    framing = framing or get_framing(spec.framing, skin=spec.skin)
    factory = actor_factory or make_factory(spec)
    episodes = []
    for seed in spec.seeds:
        stream = generate_stream(seed, spec.stream_config)
        episode = play_episode(framing, factory, stream, cost=spec.cost, budget=spec.budget)
        episodes.append(episode)
        if on_episode is not None:
            on_episode(episode)
    return episodes


def summary_of(spec: CellSpec, framing: Framing, episodes: Sequence[Episode]) -> dict[str, Any]:
    """The cell's summary: the metrics of ``econbench.allo.metrics`` plus run facts."""
    stats = summarize([e.result for e in episodes], records=[e.record for e in episodes])
    summary: dict[str, Any] = {
        "framing": spec.framing,
        "policy": spec.policy,
        "skin": spec.skin,
        "cost": float(spec.cost),
        "budget": spec.budget,
        **stats,
        "unresolved_turns": sum(e.unresolved for e in episodes),
        **_usage_totals(episodes),
        "decision_turns": sum(int(e.record["decision_turns"]) for e in episodes),
        "seeds": _seed_text(spec.seeds),
        "version": __version__,
        "schema": SCHEMA_VERSION,
    }
    r3 = [e.record["r3"] for e in episodes if "r3" in e.record]
    if r3:
        n = len(r3)
        runs = [run for e in episodes for t in e.record["turns"] for run in t.get("sandbox", [])]
        summary.update(
            realised_utility_mean=sum(x["realised_utility"] for x in r3) / n,
            writes_mean=sum(x["writes"] for x in r3) / n,
            rebuilds_total=sum(x["rebuilds"] for x in r3),
            auto_runs=sum(x["auto_runs"] for x in r3),
            auto_correct=sum(x["auto_correct"] for x in r3),
            submits=sum(x["submits"] for x in r3),
            submits_correct=sum(x["submits_correct"] for x in r3),
            sandbox_backend=r3[0]["sandbox_backend"],
            sandbox_runs=len(runs),
            sandbox_failures=sum(1 for run in runs if not run["ok"]),
            sandbox_wall_s_mean=(sum(r["wall_s"] for r in runs) / len(runs)) if runs else 0.0,
        )
    return summary


def _usage_totals(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Tokens and dollars over the cell (zeros for reference policies; cost None if any
    model call had no price)."""
    tokens: Counter[str] = Counter()
    for e in episodes:
        tokens.update(e.record.get("tokens", {}))
    replies = [r for e in episodes for t in e.record["turns"] for r in t.get("replies", [])]
    priced = all("cost_usd" in r["usage"] for r in replies if r["usage"])
    return {
        "llm_calls": sum(1 for r in replies if r["usage"]),
        "input_tokens": int(tokens["input_tokens"]),
        "cached_input_tokens": int(tokens["cached_input_tokens"]),
        "output_tokens": int(tokens["output_tokens"]),
        "cost_usd": round(float(tokens["cost_usd"]), 6) if priced else None,
    }


def _seed_text(seeds: Sequence[int]) -> str:
    """Seeds as ranges: ``2000-2023`` or ``1,5,9-12``."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(str(seeds[i]) if i == j else f"{seeds[i]}-{seeds[j]}")
        i = j + 1
    return ",".join(parts)


def cell_config(spec: CellSpec, framing: Framing, factory: ActorFactory) -> dict[str, Any]:
    """``config.json`` of a cell: the settings, the framing's text and tools, and the model's
    settings when a model plays (what a resume rebuilds the cell from)."""
    probe = framing.episode(
        generate_stream(spec.seeds[0], spec.stream_config), spec.cost, spec.budget
    )
    config = {
        "schema": SCHEMA_VERSION,
        "version": __version__,
        **spec.to_dict(),
        "actor": factory.name,
        "framing_settings": framing.describe(),
        "system_prompt": probe.system_prompt(),
        "tools": [t.openai_schema() for t in probe.tools()],
    }
    settings = getattr(factory, "settings", None)
    if settings is not None and hasattr(settings, "model_dump"):
        config["models"] = {spec.policy: settings.model_dump(mode="json", exclude_none=True)}
    return config


def spec_from_config(config: dict[str, Any]) -> CellSpec:
    """The ``CellSpec`` a cell's ``config.json`` was written from. A config written before
    the stream choices had names played numpy streams drawn with the cell's budget, and is
    read so (its ``stream_config`` then lacks ``generator``)."""
    stream_config = dict(config["stream_config"])
    stream_config.setdefault("generator", "numpy")
    return CellSpec(
        framing=config["framing"],
        policy=config["policy"],
        seeds=tuple(int(s) for s in config["seeds"]),
        cost=float(config["cost"]),
        budget=int(config["budget"]),
        skin=config.get("skin", "default"),
        config=StreamConfig.model_validate(stream_config),
        stream_budget=config.get("stream_budget", "cell"),
    )


class CellResumeError(RuntimeError):
    """A cell cannot be resumed as asked (the message says why)."""


class CellStopped(RuntimeError):
    """A model failed beyond retries; the finished episodes stay and the cell can resume."""


def run_cell(
    spec: CellSpec,
    out_dir: str | Path,
    *,
    framing: Framing | None = None,
    actor_factory: ActorFactory | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    models: dict[str, Any] | None = None,
    provider_wrap: ProviderWrap | None = None,
    cache: Path | None = None,
    label: str | None = None,
    resume: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Play ``spec`` and write ``episodes.jsonl``, ``summary.json``, ``config.json`` and
    ``meta.json`` (plus ``record.sqlite`` when a model plays).

    Each finished episode is one complete line of ``episodes.jsonl``: that file is the
    cell's checkpoint. With ``resume`` the cell continues after its last complete episode
    (a torn last line is cut), provided the config is unchanged (``force`` overrides). A
    model failure beyond retries writes a ``stopped`` summary and raises ``CellStopped``.
    """
    spec.validate()
    framing = framing or get_framing(spec.framing, skin=spec.skin)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out):
        wrap = provider_wrap
        if wrap is None and actor_factory is None and "/" in spec.policy:
            from econbench.agents.models.wraps import make_provider_wrap

            wrap = make_provider_wrap(record=out / RECORD, cache=cache)
        factory = actor_factory or make_factory(spec, models, wrap=wrap)
        try:
            return _run_cell_locked(
                spec, out, framing, factory, on_episode, label, resume=resume, force=force
            )
        finally:
            close = getattr(wrap, "close", None)
            if callable(close):
                close()


def _run_cell_locked(
    spec: CellSpec,
    out: Path,
    framing: Framing,
    factory: ActorFactory,
    on_episode: Callable[[Episode], None] | None,
    label: str | None,
    *,
    resume: bool,
    force: bool,
) -> dict[str, Any]:
    config = cell_config(spec, framing, factory)
    episodes_path = out / EPISODES
    done: list[Episode] = []
    if resume:
        done = _resume_point(spec, out, config, force)
    else:
        episodes_path.write_bytes(b"")
        (out / SUMMARY).unlink(missing_ok=True)
    write_json(out / CONFIG, config)
    write_json(out / META, run_metadata("allo", spec.seeds[0], label or spec.slug()))
    cost = _cost_so_far(done)

    def progress(status: str) -> None:
        write_progress(
            out,
            benchmark="allo",
            status=status,
            done=len(done),
            total=len(spec.seeds),
            unit="episode",
            cost_usd=cost,
        )

    progress("running")
    remaining = replace(spec, seeds=spec.seeds[len(done) :])
    with episodes_path.open("a", encoding="utf-8") as fh:

        def write(episode: Episode) -> None:
            nonlocal cost
            fh.write(json_line(episode.record, sort_keys=True) + "\n")
            fh.flush()
            done.append(episode)
            cost += _episode_cost(episode.record)
            progress("running")
            if on_episode is not None:
                on_episode(episode)

        error: ModelError | None = None
        if remaining.seeds:
            try:
                play_cell(remaining, framing=framing, actor_factory=factory, on_episode=write)
            except ModelError as exc:
                error = exc
    summary = summary_of(spec, framing, done) if done else {"episodes": 0}
    summary["status"] = "completed" if error is None else "stopped"
    if error is not None:
        summary["stopped"] = {
            "after_episodes": len(done),
            "error_type": type(error).__name__,
            "error": str(error),
        }
    write_json(out / SUMMARY, summary)
    progress(summary["status"])
    if error is not None:
        raise CellStopped(
            f"{spec.slug()}: the model failed beyond retries after {len(done)} of "
            f"{len(spec.seeds)} episodes: {error}\nThe finished episodes are in "
            f"{out / EPISODES}. Fix the cause (key, model name, provider outage), then "
            f"continue with `econbench resume {out}`."
        ) from error
    return summary


def _resume_point(spec: CellSpec, out: Path, config: dict[str, Any], force: bool) -> list[Episode]:
    """The finished episodes of the cell in ``out``, after checking it is the same cell."""
    saved = read_json(out / CONFIG)
    if not isinstance(saved, dict):
        raise CellResumeError(f"{out} has no readable config.json; it cannot be resumed")
    changes = config_diff(saved, config)
    if changes and not force:
        raise CellResumeError(
            "the cell's config differs from the one it started with:\n  "
            + "\n  ".join(changes[:20])
            + ("\n  …" if len(changes) > 20 else "")
            + "\nResume with the same settings and version, or pass --force."
        )
    path = out / EPISODES
    cut_log(path, log_length(path))  # drop a torn last line (the episode in flight)
    records = read_jsonl(path)
    seeds = [int(r["seed"]) for r in records]
    if seeds != list(spec.seeds[: len(seeds)]):
        raise CellResumeError(
            f"{path} holds episodes for seeds {seeds[:5]}… that are not the first seeds of "
            "this cell; it cannot be resumed"
        )
    return [Episode(result=EpisodeResult.from_dict(r["result"]), record=r) for r in records]


def _episode_cost(record: dict[str, Any]) -> float:
    return float(record.get("tokens", {}).get("cost_usd", 0.0) or 0.0)


def _cost_so_far(episodes: Sequence[Episode]) -> float:
    return sum(_episode_cost(e.record) for e in episodes)
