"""Plays AlloBench episodes: any actor, any framing, the same game underneath.

:func:`play_episode` drives one episode. The game (``econbench.allo.game.Game``) does all the
bookkeeping; the framing renders text and tools; the actor answers. Per decision turn the
runner sends the observation (with batched notices of the automatic turns since the last
question, composed by the episode) as ``UserText``, executes the reply's tool call that the
episode picks (``plan_calls``: by default the first; the others get error results), returns
results as ``ToolResult`` with the next input, and ends the turn by the framing's rule. A reply
without a tool call is re-asked (``reask_text``) while the framing allows
(``Framing.no_call_attempts`` consecutive replies without a call) — the re-asked reply is
dropped from an actor that can forget it (``retract_last``), as the paper's
``--empty-fence-retry`` prunes it, unless the framing ``keeps_no_call_replies`` (the reminder
then follows the reply); the turn's last such reply stays unless the framing
``prunes_last_no_call_reply``. When
the budget is spent the session ends and the remaining turns are scored without asking (and
recorded, R3 still runs its scripts).

:func:`play_cell` plays a configuration (a :class:`CellSpec`) over many seeds; the run
layer's ``econbench.runs.allo.cell.run_cell`` writes what it plays into a run directory
(``episodes.jsonl``, one record per episode, ``summary.json``, ``config.json``). Records hold no
timestamps, so two runs with the same settings write byte-identical ``episodes.jsonl`` — except
R3's sandbox ``wall_s`` fields, which measure time.

Choices where the spec is silent:

- Token accounting sums the numeric fields of each ``Reply.usage``; what the per-episode cap
  (R3: 300k tokens) counts is the framing's ``token_cap_counts``. Under the paper's protocol it
  is the input tokens as each reply's API reported them (``api_input_tokens`` where the actor
  gives it: Anthropic's count leaves out cache reads and writes, OpenAI's includes cached
  tokens; the paper's client added up exactly these) plus every output token, and the cap is
  reached when fewer than ``min_call_tokens`` (256) remain; the episode is told the remainder
  after every reply (``FramingEpisode.note_reply``), shows it in every tool result and ends
  the session there (``session_over``: the rest is scored unasked); each reply's token limit
  shrinks to what is left (``Framing.reply_limit_floor``). Under
  "econbench" it counts generated tokens — ``output_tokens`` (reasoning included), or
  ``total_tokens`` when only that is given — and past the cap every later question is an
  unresolved PASS, not asked.
- A framing whose episode ``asks_tooled_turns`` (the paper's R3) is asked about a class that
  already has a tool too; such a turn is recorded as ``kind: "reuse"`` (collected, no
  decision), and rewrites made in it are charged before the game moves on.
- The system prompt is the same for all episodes of a configuration; it is stored once, in
  ``config.json``, not per episode.
- ``unresolved_turns`` in the summary is the total over all episodes.

Which texts and turn rules a cell plays (``CellSpec.protocol``, the CLI's ``--protocol``): the
paper's (``"paper"``, the default) or econbench's earlier ones (``"econbench"``, which adds
``-econbench`` to the cell's slug). A ``config.json`` without a protocol was written before
protocols had names and is read as ``"econbench"``, so it resumes with the texts it was played
with.

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

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from econbench import __version__
from econbench.agents.policy import Actor
from econbench.agents.tools import ToolCall
from econbench.allo.episodes.actors import (
    ActorFactory,
    EpisodeInfo,
    Input,
    PolicyActorFactory,
    Reply,
    ToolResult,
    UserText,
)
from econbench.allo.framings import FRAMINGS, PROTOCOLS, get_skin, takes_skin
from econbench.allo.framings.base import AutoTurn, Framing, FramingEpisode, TurnOutcome
from econbench.allo.game import EpisodeResult, Game, Turn
from econbench.allo.game.instances import GENERATORS as INSTANCE_GENERATORS
from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import (
    EVAL_SEEDS,
    STREAM_BUDGETS,
    Stream,
    StreamBudget,
    StreamConfig,
    generate_stream,
    stream_config_for,
)
from econbench.allo.paper.conditions import DEFAULT_CONDITION, condition_for, get_condition
from econbench.suggest import did_you_mean

SCHEMA_VERSION = 1
INSTANCE_RUNGS = ("r1", "r2", "r3")
"""The framings that show problem instances (R0 shows coloured balls)."""
PAPER_TASKS = StreamConfig().n_tasks
"""The paper's episode length; other lengths are named in a cell's slug."""
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
    actor: Actor
    turns: list[dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    owed: list[Input] = field(default_factory=list)  # tool results not yet delivered
    tokens: Counter[str] = field(default_factory=Counter)
    cap_input_tokens: int = 0
    """Input tokens as each reply's API reported them (``api_input_tokens`` where the actor
    gives it, else ``input_tokens``): what the paper's R3 cap adds up."""

    def count(self, usage: Mapping[str, int]) -> None:
        """Add one reply's token counts."""
        self.tokens.update(usage)
        self.cap_input_tokens += int(usage.get("api_input_tokens", usage.get("input_tokens", 0)))

    def tokens_used(self) -> int:
        """What the episode's token cap counts so far (``Framing.token_cap_counts``)."""
        if self.framing.token_cap_counts == "input+output":
            return self.cap_input_tokens + self.tokens.get("output_tokens", 0)
        if "output_tokens" in self.tokens:
            return self.tokens["output_tokens"]
        return self.tokens.get("total_tokens", 0)

    def tokens_left(self) -> int | None:
        """Tokens left under ``Framing.episode_max_tokens`` (never negative), None without one."""
        cap = self.framing.episode_max_tokens
        return None if cap is None else max(0, cap - self.tokens_used())

    def over_token_cap(self) -> bool:
        left = self.tokens_left()
        return left is not None and left < max(1, self.framing.min_call_tokens)


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
    floor, left = s.framing.reply_limit_floor, s.tokens_left()
    if floor is not None and left is not None:
        # The per-reply limit shrinks to what is left of the episode's cap (the paper's R3).
        limit = getattr(s.actor, "limit_reply", None)
        if callable(limit):
            limit(max(floor, left))
    reply = s.actor.respond(inputs)
    if not isinstance(reply, Reply):
        raise TypeError(f"actor {s.actor!r} returned {type(reply).__name__}, not Reply")
    s.count(_usage(reply))
    s.ep.note_reply(s.tokens_left(), s.over_token_cap())
    return reply


def _call_record(call: ToolCall, result: dict[str, Any], executed: bool) -> dict[str, Any]:
    return {
        "name": call.name,
        "arguments": call.arguments,
        "call_id": call.call_id,
        "executed": executed,
        "result": result,
    }


def _retract(actor: Any, inputs: int) -> bool:
    """Ask ``actor`` to forget its last reply and the last ``inputs`` inputs before it (the
    paper prunes a reply without a tool call before re-asking); False if it cannot."""
    forget = getattr(actor, "retract_last", None)
    return bool(forget(inputs)) if callable(forget) else False


def _decision_turn(s: _Session, turn: Turn) -> TurnOutcome:
    """Ask the actor about one turn; return how it ended and record it."""
    budget_left = s.game.budget_left
    text = s.ep.begin_turn(turn, budget_left)
    observation = s.ep.observation(s.notices, text)
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
        no_calls = 0
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
                no_calls += 1  # consecutive replies without a tool call
                last = no_calls >= framing.no_call_attempts or s.over_token_cap()
                if not framing.keeps_no_call_replies and (
                    not last or framing.prunes_last_no_call_reply
                ):
                    # The paper's re-ask: drop this reply (and the reminder before it) from the
                    # actor's context where it can (before the next reminder, or, where the
                    # framing prunes the last one too, before the next question).
                    rec["retracted"] = _retract(s.actor, 1 if no_calls > 1 else 0)
                if not last:
                    inputs = [UserText(s.ep.reask_text(no_calls))]
                    rec["reasked"] = inputs[0].text  # type: ignore[union-attr]
                    continue
                outcome = s.ep.end_turn("no_call")
                break
            no_calls = 0
            plan = s.ep.plan_calls(reply.tool_calls)
            results: list[Input] = []
            for i, call in enumerate(reply.tool_calls):
                if i == plan.run:
                    result, executed = s.ep.execute(call), True
                    calls += 1
                else:
                    result, executed = plan.refusals[i], False
                rec["tool_calls"].append(_call_record(call, result, executed))
                results.append(ToolResult(call.name, result, call.call_id))
            if plan.run is None:
                outcome, s.owed = s.ep.end_turn(plan.why), results
                break
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
    _record_turn(
        s, turn, outcome, budget_left=budget_left, observation=observation, replies=replies
    )
    return outcome


def _record_turn(
    s: _Session,
    turn: Turn,
    outcome: TurnOutcome,
    *,
    budget_left: int,
    observation: str | None,
    replies: list[dict[str, Any]],
) -> None:
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


def _play_turn(s: _Session, turn: Turn) -> TurnOutcome:
    """Ask the actor about ``turn``, or close it unasked where the framing says it was
    answered before it was shown (``answered_unseen``; recorded with ``observation: None``
    and no replies)."""
    if not s.ep.answered_unseen(turn):
        return _decision_turn(s, turn)
    outcome = s.ep.end_unseen(turn)
    _record_turn(s, turn, outcome, budget_left=s.game.budget_left, observation=None, replies=[])
    return outcome


def _charge_rebuilds(game: Game, n: int, rec: dict[str, Any]) -> None:
    """Charge a turn's ``n`` rewrites while the game lasts (a rewrite during the stream's last
    task, after the turn was stepped, finds the game over and is not charged); ``rec`` keeps the
    number charged."""
    charged = 0
    for _ in range(n):
        if game.done or game.budget_left == 0:
            break
        game.charge_rebuild()
        charged += 1
    rec["rebuilds"] = charged


def _ask_after_budget(s: _Session) -> None:
    """Ask the turns the game scored when the budget ran out, in order, until the framing's
    session ends (the paper's R3 with ``--full-stream``). They carry no allocation decision:
    the game has collected them already (a class with a tool) or not; the record keeps what the
    model did (runs, answers, refused writes)."""
    asked = {rec["t"] for rec in s.turns}
    for r in s.game.records:
        if r.t in asked:
            continue
        if s.ep.session_over():
            break
        turn = Turn(r.t, r.cls, r.sighting, r.collected, False)
        outcome = _play_turn(s, turn)
        s.turns[-1].update(
            kind="reuse" if r.collected else "after_budget",
            decision="reuse" if r.collected else None,
            collected=r.collected,
            commit=False,
            resolved=True,
            reason=None,
            rebuilds=0,
        )
        if outcome.commit or outcome.rebuilds:
            raise RuntimeError(f"turn {r.t}: a build after the budget was spent")


def play_episode(
    framing: Framing,
    actor_factory: ActorFactory,
    stream: Stream,
    *,
    cost: float = 0.0,
    budget: int | None = None,
    on_turn: Callable[[int, int], None] | None = None,
) -> Episode:
    """Play one episode of ``stream`` in ``framing`` with a fresh actor; ``on_turn(t, n)`` is
    called as turn ``t`` of ``n`` begins (progress inside a long, model-played episode)."""
    game = Game(stream, cost=cost, budget=budget)
    b = int(game.budget or 0)
    ep = framing.episode(stream, cost, b)
    actor = actor_factory(EpisodeInfo(stream.seed, framing, float(cost), b, stream))
    system = ep.system_prompt()
    actor.start("allo", "allo", ep.tools(), system_prompt=system, max_tokens=framing.max_tokens)
    s = _Session(framing, ep, game, actor)
    batch: list[Turn] = []
    while not game.done:
        turn = game.turn()
        if on_turn is not None:
            on_turn(turn.t, len(stream.classes))
        if ep.session_over():  # the framing cut the session off: score the rest unasked
            game.step(False)
            continue
        if turn.has_tool and not ep.asks_tooled_turns:  # (a spent budget ends the game)
            batch.append(turn)
            game.step(False)
            continue
        s.notices += [out.notice for _, out in _auto_records(s, batch, True, "auto")]
        batch = []
        outcome = _play_turn(s, turn)
        if turn.has_tool:  # asked anyway (paper R3): no decision, rewrites charged first
            s.turns[-1].update(kind="reuse", decision="reuse", collected=True)
            _charge_rebuilds(game, outcome.rebuilds, s.turns[-1])
            if not game.done:
                game.step(False)
            continue
        game.step(outcome.commit)
        _charge_rebuilds(game, outcome.rebuilds, s.turns[-1])
    if ep.asks_after_budget:
        _ask_after_budget(s)
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
        "protocol": framing.protocol,
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
    protocol: str = "paper"
    """The framing's texts and turn rules: ``"paper"`` or ``"econbench"`` (see the module doc)."""
    condition: str | None = None
    """The paper's condition played (``econbench.allo.paper.conditions``); None: ``"frontier"``, or
    ``"econbench"`` under that protocol. Normalised on construction."""
    instances: str = "paper"
    """R1–R3's problem instances (``econbench.allo.game.instances``): the paper's draws, or
    econbench's own generator (``"econbench"``; always so under protocol ``"econbench"``)."""

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            return  # validate() says so in one line
        name = condition_for(self.condition, self.protocol)
        object.__setattr__(self, "condition", name)
        object.__setattr__(self, "protocol", get_condition(name).protocol)
        if self.protocol == "econbench":
            object.__setattr__(self, "instances", "econbench")

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
                f"unknown framing {self.framing!r}{did_you_mean(self.framing, FRAMINGS)}; "
                f"choose one of {', '.join(FRAMINGS)}"
            )
        if self.stream_budget not in STREAM_BUDGETS:
            raise ValueError(
                f"unknown stream budget {self.stream_budget!r}; choose one of "
                f"{', '.join(STREAM_BUDGETS)}"
            )
        get_skin(self.skin)
        if self.skin != "default" and not takes_skin(self.framing):
            raise ValueError(f"--skin applies to the urn (r0, r0-tool) only, not to {self.framing}")
        if self.protocol not in PROTOCOLS:
            raise ValueError(
                f"unknown protocol {self.protocol!r}; choose one of {', '.join(PROTOCOLS)}"
            )
        condition_for(self.condition, self.protocol)
        get_condition(str(self.condition)).setup(self.framing)
        if self.instances not in INSTANCE_GENERATORS:
            raise ValueError(
                f"unknown instances {self.instances!r}; choose one of "
                f"{', '.join(INSTANCE_GENERATORS)}"
            )

    def _instance_options(self) -> dict[str, Any]:
        """The framing option that selects econbench's own instances (R1–R3 under the paper's
        protocol; R0 has no instances, protocol "econbench" always uses its own)."""
        if self.protocol != "paper" or self.instances == "paper":
            return {}
        try:
            setup = get_condition(str(self.condition)).setup(self.framing)
        except ValueError:  # a rung the condition lacks: validate() says so
            return {}
        if setup.framing in INSTANCE_RUNGS:
            return {"instances": self.instances}
        return {}

    def make_framing(self, **extra: Any) -> Framing:
        """The framing this cell plays: its rung under its condition (``extra``: R3's
        ``sandbox`` and ``workers``)."""
        return get_condition(str(self.condition)).framing(
            self.framing, skin=self.skin, model=self.policy, **self._instance_options(), **extra
        )

    def framing_key(self) -> str:
        """What tells this cell's framing apart from another cell's (cells with the same key
        can share one framing object, and so one R3 sandbox)."""
        options = {
            **get_condition(str(self.condition)).setup(self.framing).framing_options(self.policy),
            **self._instance_options(),
        }
        return json.dumps([self.framing, self.skin, self.condition, options], sort_keys=True)

    @property
    def stream_config(self) -> StreamConfig:
        """The generator config that draws this cell's streams (its budget sets the trap-early
        window): ``config`` under ``stream_budget="fixed"``, with the cell's B under ``"cell"``."""
        return stream_config_for(self.config, self.budget, self.stream_budget)

    def slug(self) -> str:
        """Directory name: ``<framing>-<policy>-k<K>-b<B>`` (plus the skin for R0 reskins,
        ``-econbench`` for that protocol, ``-numpy`` / ``-cellstreams`` for the non-default
        stream choices, and ``-t<N>`` for episodes of other than the paper's 60 tasks, so a
        short game never shares a directory or a label with the full one)."""
        k = str(int(self.cost)) if float(self.cost).is_integer() else str(self.cost)
        base = f"{self.framing}-{safe_name(self.policy)}-k{k}-b{self.budget}"
        if self.skin != "default":
            base = f"{base}-{self.skin}"
        if self.protocol != "paper":
            base = f"{base}-{self.protocol}"
        elif self.condition != DEFAULT_CONDITION:
            base = f"{base}-{self.condition}"
        if self._instance_options():
            base = f"{base}-{self.instances}instances"
        if self.config.generator != "paper":
            base = f"{base}-{self.config.generator}"
        if self.stream_budget != "fixed":
            base = f"{base}-{self.stream_budget}streams"
        if self.config.n_tasks != PAPER_TASKS:
            base = f"{base}-t{self.config.n_tasks}"
        return base

    def to_dict(self) -> dict[str, Any]:
        return {
            "framing": self.framing,
            "policy": self.policy,
            "seeds": list(self.seeds),
            "cost": float(self.cost),
            "budget": self.budget,
            "skin": self.skin,
            "protocol": self.protocol,
            "condition": self.condition,
            "instances": self.instances,
            "stream_budget": self.stream_budget,
            "stream_config": self.stream_config.model_dump(),
        }


def safe_name(name: str) -> str:
    """A name fit for a path component: ``wait:2`` → ``wait-2``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "x"


def reference_factory(spec: CellSpec) -> ActorFactory:
    """The actor factory for a reference policy ``spec.policy`` (a model's factory is the run
    layer's: ``econbench.runs.allo.factory.make_factory``)."""
    return PolicyActorFactory(spec.policy, spec.stream_config, cost=spec.cost, budget=spec.budget)


def play_cell(
    spec: CellSpec,
    *,
    framing: Framing | None = None,
    actor_factory: ActorFactory | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    on_turn: Callable[[int, int], None] | None = None,
) -> list[Episode]:
    """Play every seed of ``spec``; ``on_episode`` is called after each (progress, writing),
    ``on_turn`` as each turn begins (see :func:`play_episode`). Without ``actor_factory`` the
    reference policy ``spec.policy`` plays."""
    framing = framing or spec.make_framing()
    factory = actor_factory or reference_factory(spec)
    episodes = []
    for seed in spec.seeds:
        stream = generate_stream(seed, spec.stream_config)
        episode = play_episode(
            framing, factory, stream, cost=spec.cost, budget=spec.budget, on_turn=on_turn
        )
        episodes.append(episode)
        if on_episode is not None:
            on_episode(episode)
    return episodes


def summary_of(spec: CellSpec, framing: Framing, episodes: Sequence[Episode]) -> dict[str, Any]:
    """The cell's summary: the metrics of ``econbench.allo.game.metrics`` plus run facts."""
    stats = summarize([e.result for e in episodes], records=[e.record for e in episodes])
    summary: dict[str, Any] = {
        "framing": spec.framing,
        "policy": spec.policy,
        "skin": spec.skin,
        "protocol": spec.protocol,
        "condition": spec.condition,
        "instances": spec.instances,
        "generator": spec.config.generator,
        "stream_budget": spec.stream_budget,
        "build_cost": float(spec.cost),  # the build charge K (``cost_usd`` is the model's)
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
    read so (its ``stream_config`` then lacks ``generator``); one written before protocols had
    names played econbench's texts (``protocol="econbench"``), and one written before
    conditions had names showed econbench's own instances."""
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
        protocol=config.get("protocol")
        or (
            get_condition(config["condition"]).protocol if config.get("condition") else "econbench"
        ),
        condition=config.get("condition"),
        # Before conditions had names every cell showed econbench's own instances.
        instances=config.get("instances") or ("paper" if "condition" in config else "econbench"),
    )


LEGACY_FRAMING_KEYS = ("protocol", "no_call_attempts")
"""``framing_settings`` keys that a config written before protocols had names lacks."""


def with_protocol(saved: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """``saved`` (a cell's old ``config.json``) as it reads now: a config without a protocol
    is protocol ``"econbench"``, and its framing's settings take the newer keys' values from
    ``config`` (the config it is compared with), so an old cell resumes unchanged. A config
    without a condition was written before conditions had names: under protocol
    ``"econbench"`` it is that condition, with econbench's instances, and resumes unchanged;
    under ``"paper"`` it played econbench's paper protocol of then (``"paper-0"``), which no
    condition plays, so it differs from any config of today."""
    upgraded = dict(saved)
    if "protocol" not in saved:
        upgraded["protocol"] = "econbench"
        old, new = saved.get("framing_settings"), config.get("framing_settings")
        if isinstance(old, dict) and isinstance(new, dict):
            extra = {k: new[k] for k in LEGACY_FRAMING_KEYS if k in new and k not in old}
            upgraded["framing_settings"] = {**old, **extra}
    if "condition" not in saved:
        econbench = upgraded["protocol"] == "econbench"
        upgraded["condition"] = "econbench" if econbench else "paper-0"
        upgraded.setdefault("instances", "econbench")
    return upgraded
