"""Play CoffeeBench under condition ``paper``: the reference implementation's economy and harness.

The economy is ``econbench.coffee.paper`` (the reference's ``Environment`` as a pure state
machine); a model plays a firm through ``ReferenceAgent`` (the reference's ``Agent`` and
``ContextCompactor``, its requests on the wire as the reference's model classes send them);
``passive`` and ``heuristic`` are the reference's ``PassiveModel`` and
``HeuristicRoasterModel``. The loop is the reference's ``Environment.run``: the agents of a
bucket are asked concurrently on the same state, their answers applied one at a time in
bucket order.

The run directory holds what a ``hardened`` run's does, in the reference's terms:
``events.jsonl`` (the reference's events — ``run_start``, ``agent_step``, ``day_end``, … —
each under econbench's header ``seq``, ``day``, ``time``, ``type``, plus the agents'
``model_call`` / ``model_retry`` / ``compaction``), ``daily.jsonl`` (each firm's evening in
a ``hardened`` run's layout, from the reference's books; the reference's own snapshot is in
the ``day_end`` event), ``record.sqlite`` when a model plays, ``summary.json`` (the score
is the reference's ``audit.annual.true_net_income``; ``reference_result`` keeps its whole
``_finish`` result) and ``progress.json``.

Resuming: the economy is deterministic given the seed and the decisions, and every model
decision is in ``record.sqlite``; so a resume plays the run again from day 0, each model
served from its record as long as the requests are the ones recorded (``TailFirst``), then
asks the model. Nothing is paid twice, and the files come out as an uninterrupted run's.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from econbench.agents.event_loop import run_closing
from econbench.agents.models.base import (
    ContextOverflowError,
    ModelError,
    ModelProvider,
    ProviderWrap,
)
from econbench.agents.policy import Actor, Input, ToolResult, UserText
from econbench.agents.tools import ToolSpec
from econbench.coffee.config import FIRMS, FOCAL_FIRM, ITEMS, is_model, role_of
from econbench.coffee.paper.clock import format_min
from econbench.coffee.paper.economy import PaperEconomy, build_economy
from econbench.coffee.paper.policies import HeuristicRoasterReference, PassiveReference
from econbench.coffee.paper.prompts import INITIAL_OBSERVATION, system_prompt
from econbench.coffee.paper.tools import tool_specs
from econbench.runs.benchmark import ResumeError
from econbench.runs.coffee.agents import recorded_config, run_limiter, validate_agents
from econbench.runs.coffee.config import RunConfig, condition_fields
from econbench.runs.coffee.run import RunStopped
from econbench.runs.layout import CONFIG, DAILY, EVENTS, META, RECORD, SUMMARY, read_json
from econbench.runs.lock import RunLock
from econbench.runs.store import (
    JsonlWriter,
    RunDirError,
    check_new_run_dir,
    check_out_dir,
    missing_root,
    os_error_text,
    prepare_run_dir,
    run_metadata,
    storage_stop,
    write_json,
)

if TYPE_CHECKING:
    from econbench.agents.models.retry import ConcurrencyLimiter

LOGS = (EVENTS, DAILY)
WAIT_TOOL = "wait_for_next_day"
REFERENCE_STYLE = "coffee_paper"
"""The request style of a model under ``paper`` (``agents.models.coffee_paper_wire``)."""


# ------------------------------------------------------------------------------ players


def reference_actor(
    name: str,
    firm_id: str,
    config: RunConfig,
    *,
    limiter: ConcurrencyLimiter | None,
    wrap: ProviderWrap | None,
) -> Actor:
    """The player of ``firm_id`` under ``paper``: the reference's scripted baselines by
    name, or a model through ``ReferenceAgent`` with the reference's request style."""
    if name == "passive":
        return PassiveReference()
    if name == "heuristic":
        return HeuristicRoasterReference()
    if not is_model(name):
        raise ValueError(f"{firm_id}: '{name}' has no player under condition 'paper'")
    from econbench.agents.models.registry import build_provider
    from econbench.agents.reference_agent import ReferenceAgent, reference_model

    provider_name, _, model = name.partition("/")
    bare, thinking = reference_model(model)
    settings = config.model_settings(name).model_copy(update={"request_style": REFERENCE_STYLE})
    provider: ModelProvider = build_provider(f"{provider_name}/{bare}", settings)
    if wrap is not None:
        provider = wrap(provider, firm_id)
    retries = settings.retry_policy()
    default_timeout = type(settings).model_fields["timeout_s"].default
    timeout = {"timeout_s": settings.timeout_s} if settings.timeout_s != default_timeout else {}
    return ReferenceAgent(
        provider,
        system_prompt=system_prompt(firm_id, max_days=config.days),
        initial_observation=INITIAL_OBSERVATION,
        enable_thinking=thinking,
        limiter=limiter,
        max_attempts=retries.max_attempts,
        retry_options=retries.options(),
        seed=zlib.crc32(f"{config.seed}:{firm_id}".encode()),
        **timeout,  # the reference's clients wait 300 s unless the config says otherwise
    )


def reference_actors(
    config: RunConfig, given: dict[str, Actor] | None, wrap: ProviderWrap | None
) -> dict[str, Actor]:
    """Every firm's player, in canonical firm order; ``given`` ones first."""
    limiter = run_limiter(config) if any(is_model(config.policy_for(f)) for f in FIRMS) else None
    actors = dict(given or {})
    for firm_id in FIRMS:
        if firm_id not in actors:
            actors[firm_id] = reference_actor(
                config.policy_for(firm_id), firm_id, config, limiter=limiter, wrap=wrap
            )
    return actors


# ------------------------------------------------------------------------------ the loop


class PaperRun:
    """One run of the reference economy, its firms played by ``actors``.

    ``log`` receives every event line (header and payload) in the order the run makes them;
    ``daily`` each evening's snapshot; ``on_day`` the number of days done.
    """

    def __init__(
        self,
        config: RunConfig,
        actors: dict[str, Actor],
        *,
        log: Callable[[dict[str, Any]], None],
        daily: Callable[[dict[str, Any]], None],
        on_day: Callable[[int], None] | None = None,
    ) -> None:
        self.config = config
        self.actors = actors
        self._log = log
        self._daily = daily
        self._on_day = on_day
        self._seq = 0
        self._held: dict[str, list[tuple[str, dict[str, Any]]]] | None = None
        self.steps: list[dict[str, Any]] = []
        """Every turn applied: firm, day and the tool called (None: a reply without one)."""
        self.economy: PaperEconomy = build_economy(
            config.seed, config.days, main_agent_id=FOCAL_FIRM, on_event=self._economy_event
        )
        self.result: dict[str, Any] | None = None

    # -- events
    def _write(self, kind: str, data: dict[str, Any]) -> None:
        minute = self.economy.time_manager.get_virtual_min()
        stamp = format_min(minute)  # "Day N, HH:MM"
        self._seq += 1
        head = {
            "seq": self._seq,
            "day": data.get("day", minute // 1440),
            "time": stamp.rpartition(" ")[2],
            "type": kind,
        }
        if "agent_id" in data and "firm" not in data:
            head["firm"] = data["agent_id"]  # the firm it is about, as econbench's lines name it
        self._log(head | {k: v for k, v in data.items() if k not in head})

    def _economy_event(self, kind: str, data: dict[str, Any]) -> None:
        self._write(kind, data)
        if kind == "day_end":
            for row in self._daily_rows(int(data["day"])):
                self._daily(row)
            if self._on_day is not None:
                self._on_day(int(data["day"]) + 1)

    def _daily_rows(self, day: int) -> list[dict[str, Any]]:
        """Each firm's evening in the layout of a ``hardened`` run's ``daily.jsonl`` (so the
        report's trajectories and the viewer read it), from the reference's own books: its
        cash, stock at average cost, AR, AP and equity, and the audit's cumulative revenue
        and net income (the reference's own evening snapshot is in the ``day_end`` event).
        The reference values goods on the road and in batches together
        (``pending_value_for``): they are ``work_in_process_value`` here."""
        econ = self.economy
        rows = []
        for firm_id, books in econ.business_apps.items():
            annual = econ._compute_audit_for(firm_id)["annual"]
            inventory = {
                item: {
                    "qty": int(books.inventory.get(item, 0)),
                    "value": round(books.inventory_total_cost.get(item, 0.0), 2),
                }
                for item in ITEMS
            }
            rows.append(
                {
                    "day": day,
                    "firm": firm_id,
                    "cash": round(books.cash, 2),
                    "inventory": inventory,
                    "inventory_value": round(books._inventory_value(), 2),
                    "in_transit_value": 0.0,
                    "work_in_process_value": round(econ.pending_value_for(firm_id), 2),
                    "ar": round(books._ar_outstanding(), 2),
                    "ap": round(books._ap_outstanding(), 2),
                    "equity": round(books._compute_true_equity(), 2),
                    "revenue_cum": annual["true_revenue"],
                    "net_income_cum": annual["true_net_income"],
                    "closing_adjustment": 0.0,
                    "bankrupt": firm_id in econ._bankrupt_agents,
                }
            )
        return rows

    def _agent_event(self, kind: str, data: dict[str, Any]) -> None:
        """An agent's own event: held while its bucket is being asked, so the log keeps
        bucket order whichever model answered first."""
        firm = data.get("firm")
        if self._held is not None and firm in self._held:
            self._held[firm].append((kind, data))
        else:
            self._write(kind, data)

    # -- play
    async def play(self) -> dict[str, Any]:
        """Play to the end (or until a model fails beyond retries: ``ModelError``)."""
        econ = self.economy
        econ.start()
        for firm_id, actor in self.actors.items():
            bind = getattr(actor, "bind_events", None)
            if bind is not None:
                bind(self._agent_event)
            actor.start(firm_id, role_of(firm_id), self._tools(firm_id))
        pending: dict[str, ToolResult | None] = dict.fromkeys(FIRMS)
        while wakes := econ.next_wakes():
            inputs: dict[str, list[Input]] = {}
            for wake in wakes:
                items: list[Input] = []
                previous = pending.pop(wake.firm, None)
                if previous is not None:
                    items.append(previous)
                if wake.observation is not None:
                    items.append(UserText(wake.observation))
                inputs[wake.firm] = items
            self._held = {wake.firm: [] for wake in wakes}
            try:
                replies = await asyncio.gather(
                    *(self._ask(wake.firm, inputs[wake.firm]) for wake in wakes),
                    return_exceptions=True,
                )
            finally:
                held, self._held = self._held, None
                for wake in wakes:
                    for kind, data in held[wake.firm]:
                        self._write(kind, data)
            for wake, reply in zip(wakes, replies, strict=True):
                if isinstance(reply, ContextOverflowError):
                    econ.fail(wake.firm, "context_overflow", str(reply))
                    continue
                if isinstance(reply, BaseException):
                    raise reply
                call = reply.first_call
                name = call.name if call is not None else None
                arguments = call.arguments if call is not None else None
                day = econ.time_manager.get_current_day()
                result = econ.apply(wake.firm, name, arguments, reply.text)
                self.steps.append({"firm": wake.firm, "day": day, "tool": name})
                if call is not None:
                    pending[wake.firm] = ToolResult(call.name, result, call.call_id)
        self.result = econ.finish()
        return self.result

    async def _ask(self, firm: str, inputs: list[Input]) -> Any:
        actor = self.actors[firm]
        respond = getattr(actor, "arespond", None)
        if respond is not None:
            return await respond(inputs)
        return actor.respond(inputs)

    def _tools(self, firm: str) -> list[ToolSpec]:
        return tool_specs(self.economy.business_apps[firm])

    # -- summary
    def summary(self, names: dict[str, str]) -> dict[str, Any]:
        """Per firm: the reference's score and revenue, and the harness's counts of what it
        did (tool calls, idle days, messages), with each model's usage and cost."""
        econ = self.economy
        result = self.result if self.result is not None else {"agents": {}}
        firms: dict[str, Any] = {}
        for firm_id in FIRMS:
            agent = result["agents"].get(firm_id, {})
            audit = agent.get("audit", {})
            calls = [s for s in self.steps if s["firm"] == firm_id and s["tool"] is not None]
            by_name: dict[str, int] = {}
            for step in calls:
                by_name[step["tool"]] = by_name.get(step["tool"], 0) + 1
            busy = {s["day"] for s in calls if s["tool"] != WAIT_TOOL}
            days_live = econ._bankrupt_day.get(firm_id, econ.time_manager.get_current_day())
            sent = [m for m in econ.marketplace.messages if m.sender_id == firm_id]
            by_recipient: dict[str, int] = {}
            for message in sent:
                by_recipient[message.recipient_id] = by_recipient.get(message.recipient_id, 0) + 1
            stats = getattr(self.actors.get(firm_id), "stats", None)
            firms[firm_id] = {
                "policy": names[firm_id],
                "net_income": (audit.get("annual") or {}).get("true_net_income"),
                "revenue": audit.get("true_revenue_net"),
                "tool_calls": len(calls),
                "tool_calls_by_name": dict(sorted(by_name.items())),
                "idle_days": sum(
                    1 for d in range(min(days_live + 1, econ.max_days)) if d not in busy
                ),
                "messages_sent": len(sent),
                "messages_sent_by_recipient": dict(sorted(by_recipient.items())),
                "bankrupt": firm_id in econ._bankrupt_agents,
                "bankrupt_day": econ._bankrupt_day.get(firm_id),
                "equity_end": agent.get("true_final_equity"),
            } | (stats.to_dict() if stats is not None else {})
        return {
            "seed": self.config.seed,
            "days": self.config.days,
            "days_run": (result.get("actual_final_day") or 0) + 1 if self.result else 0,
            "ended_early": bool(result.get("terminated_early")),
            "deals": len(econ.marketplace.deals),
            "consumer_sales_kg": sum(int(sale["qty"]) for sale in econ.consumer_sales_log),
            "firms": firms,
            "reference_result": self.result,
        }


# ------------------------------------------------------------------------------ run dirs


def _wrap(config: RunConfig, out: Path, cache: Path | None, resume: bool) -> ProviderWrap | None:
    """Record every model call (the response cache under it when asked); on a resume, the
    calls already recorded are served first (``runs/record_tail.py``: the whole record is
    the tail, as the run replays from day 0)."""
    if not any(is_model(config.policy_for(f)) for f in FIRMS):
        return None
    from econbench.agents.models.wraps import make_provider_wrap

    recording = make_provider_wrap(record=out / RECORD, cache=cache)
    if not resume or recording is None:
        return recording
    from econbench.agents.models.record import RecordingProvider
    from econbench.runs.record_tail import TailFirst, read_tail

    tails = read_tail(out / RECORD, None)

    def wrap(provider: ModelProvider, agent: str) -> ModelProvider:
        recorded = recording(provider, agent)
        assert isinstance(recorded, RecordingProvider)
        recorded.inner = TailFirst(recorded.inner, tails.get(agent, []))
        return recorded

    wrap.close = recording.close  # type: ignore[attr-defined]
    return wrap


def run_paper_to_dir(
    config: RunConfig,
    out: Path,
    *,
    overwrite: bool = False,
    on_day: Callable[[int], None] | None = None,
    policies: dict[str, Any] | None = None,
    provider_wrap: ProviderWrap | None = None,
    label: str | None = None,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Play a whole ``paper`` run into ``out``; returns its summary (as ``run_to_dir``)."""
    given = dict(policies or {})
    validate_agents(config, given)
    config = recorded_config(config, given)
    out = Path(out)
    check_out_dir(out)
    check_new_run_dir(out, overwrite, LOGS)
    created = missing_root(out)
    lock = RunLock(out)
    lock.acquire()
    try:
        try:
            check_new_run_dir(out, overwrite, LOGS)
            prepare_run_dir(out, overwrite=overwrite, logs=LOGS)
            write_json(out / META, run_metadata("coffee", config.seed, label))
            write_json(out / CONFIG, config.model_dump(mode="json", by_alias=True))
        except (RunDirError, OSError) as exc:
            lock.discard()
            if created is not None and created.exists() and not any(created.iterdir()):
                created.rmdir()
            if isinstance(exc, RunDirError):
                raise
            raise RunDirError(f"cannot write {out}: {os_error_text(exc)}") from None
        wrap = provider_wrap if provider_wrap is not None else _wrap(config, out, cache, False)
        return _play(config, out, given, wrap, on_day)
    finally:
        lock.release()


def resume_paper_to_dir(
    out: Path,
    *,
    config: RunConfig | None = None,
    force: bool = False,
    on_day: Callable[[int], None] | None = None,
    provider_wrap: ProviderWrap | None = None,
    cache: Path | None = None,
    check_keys: bool = True,
    policies: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Continue a ``paper`` run: play it again from day 0, the models served from the
    record until the first request it does not hold (see the module docstring)."""
    out = Path(out)
    saved = read_json(out / CONFIG)
    if not isinstance(saved, dict):
        raise ResumeError(f"{out / CONFIG} is not a run config")
    own = RunConfig.model_validate(saved)
    if config is not None and config.model_dump(mode="json") != own.model_dump(mode="json"):
        if not force:
            raise ResumeError(
                f"{out}: the config differs from the run's own; pass --force to play on with it"
            )
        own = config
    summary = read_json(out / SUMMARY) if (out / SUMMARY).is_file() else None
    if isinstance(summary, dict) and summary.get("status") == "completed":
        return summary
    given = dict(policies or {})
    if check_keys:
        validate_agents(own, given)
    lock = RunLock(out)
    lock.acquire()
    try:
        wrap = provider_wrap if provider_wrap is not None else _wrap(own, out, cache, True)
        return _play(own, out, given, wrap, on_day)
    finally:
        lock.release()


def _play(
    config: RunConfig,
    out: Path,
    given: dict[str, Any],
    wrap: ProviderWrap | None,
    on_day: Callable[[int], None] | None,
) -> dict[str, Any]:
    """Play from day 0 into ``out``'s logs (started afresh) and write the summary."""
    try:
        (out / EVENTS).write_bytes(b"")
        (out / DAILY).write_bytes(b"")
        events, daily = JsonlWriter(out / EVENTS), JsonlWriter(out / DAILY)
        run = PaperRun(
            config, reference_actors(config, given, wrap), log=events, daily=daily, on_day=on_day
        )
        error: ModelError | None = None
        try:
            run_closing(run.play(), run.actors.values())
        except ModelError as exc:
            error = exc
            run._write("run_stopped", {"error_type": type(exc).__name__, "error": str(exc)})
        events.close()
        daily.close()
        names = {firm_id: config.policy_for(firm_id) for firm_id in FIRMS}
        summary = run.summary(names) | condition_fields(config)
        summary["status"] = "completed" if error is None else "stopped"
        if error is not None:
            minute = run.economy.time_manager.get_virtual_min()
            summary["stopped"] = {
                "at": format_min(minute),
                "error_type": type(error).__name__,
                "error": str(error),
            }
        write_json(out / SUMMARY, json.loads(json.dumps(summary, default=str)))
    except OSError as exc:
        raise RunStopped(storage_stop(out, exc)) from exc
    finally:
        close = getattr(wrap, "close", None)
        if callable(close):
            close()
    if error is not None:
        raise RunStopped(
            f"the run stopped on {summary['stopped']['at']}: {error}; everything up to then "
            f"is in {out}: fix the cause, then `econbench resume {out}`"
        ) from error
    return summary
