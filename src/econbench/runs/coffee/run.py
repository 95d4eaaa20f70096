"""Run CoffeeBench into a run directory, checkpointing as it goes, and resume it.

A run writes ``config.json``, ``meta.json``, the append-only ``events.jsonl`` and
``daily.jsonl``, ``record.sqlite`` when a model plays (every request and response), and at
the end ``summary.json``. While it runs it keeps ``checkpoint.json`` — the whole state at
the last tick boundary — and ``progress.json``.

A tick is one group's decisions (docs/coffeebench.md §3). A run a model plays is checkpointed at
the end of every 10th day (``econbench.coffee.sim.MODEL_DAYS_PER_CHECKPOINT``), a run no model
plays every 30th day (``SCRIPTED_DAYS_PER_CHECKPOINT``), and every run at its end;
``progress.json`` is updated after a tick that asked a model, at most every half second. The
model calls made since the last checkpoint are in ``record.sqlite``, committed one at a time,
so a process killed at any moment loses at most the call in flight: :func:`resume_to_dir`
continues from the checkpoint — it cuts the logs back to their length at the checkpoint,
restores the world and every agent — and plays on, answering each agent's requests from the
calls recorded after the checkpoint for as long as they are the requests recorded
(``econbench.runs.record_tail``), then from the model. With the same scripted or recorded
replies the resumed run's files are byte-identical to an uninterrupted run's, and no call is
paid for twice.

A firm played by a policy object (``policies=``, e.g. from ``econbench.api``) is recorded in
``config.json`` as ``custom:<qualified name>`` (``econbench.runs.coffee.agents.recorded_config``),
not under the name the config gave it. Such a run resumes only from Python, handed the same
policies (``resume_to_dir(out, policies=...)``); without them the resume is refused.

A firm played by a person (``human:<name>``) is played through the seat ``seats=`` hands in
for it (``econbench coffee play``); the seat is told the run's world (its ``watch``, when it
has one) to show the firm's panels. Each of the person's actions is in ``record.sqlite`` the
moment it is made, so a resume replays them as it replays a model's calls.

A run of condition ``paper`` (``econbench.runs.coffee.config.CONDITIONS``) is the reference
implementation's protocol, played by ``econbench.runs.coffee.paper_run``: :func:`run_to_dir` and
:func:`resume_to_dir` hand it over whole (imported only then), so nothing here plays it.

A model failure that retries cannot fix (a bad key, an unknown model, retries exhausted)
stops the run cleanly: everything written so far stays, the summary records where and why
it stopped, and the caller gets a ``RunStopped``; ``econbench resume`` continues it later.
A failure to write the run's files (a full disk, ``record.sqlite`` locked by another process)
stops it too, with a one-line ``RunStopped`` and no summary: the last checkpoint stands.

Each checkpoint also seals what ``record.sqlite`` held (``CallRecord.seal``) and whether it
is the run's last (``final``). A resume refuses a record that lost sealed calls (deleted,
emptied, cut, swapped), and replays the calls made after the checkpoint (then writes them
again, so the record is as if the run had never stopped); a ``summary.json``
saying ``completed`` counts only beside a final checkpoint (``econbench.runs.resume``).
``overwrite`` replaces only a run's own files, and refuses a directory that is not a run
(``econbench.runs.store.check_new_run_dir``).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from econbench.agents.models.base import ModelError, ProviderWrap
from econbench.agents.models.human import is_human
from econbench.agents.models.price_version import PRICE_TABLE_VERSION
from econbench.coffee.config import FIRMS, format_validation, is_model
from econbench.coffee.events import EVENT_SCHEMA_VERSION, JsonlSink, RunHalted
from econbench.coffee.ledger_audit import ledger_problems, start_equity
from econbench.coffee.metrics import run_summary
from econbench.coffee.sim import CoffeeRun
from econbench.coffee.state import WorldState
from econbench.coffee.world import World, hhmm
from econbench.runs.benchmark import ResumeError, StoppedError
from econbench.runs.checkpoint import (
    LogDigest,
    RunFileError,
    check_record,
    cut_log,
    read_checkpoint,
    record_seal,
    write_checkpoint,
    write_progress,
)
from econbench.runs.coffee.agents import firm_policies, recorded_config, validate_agents
from econbench.runs.coffee.config import DEFAULT_CONDITION, PAPER_CONDITION, RunConfig
from econbench.runs.diff import config_diff
from econbench.runs.layout import (
    CHECKPOINT,
    CONFIG,
    DAILY,
    EVENTS,
    META,
    RECORD,
    SUMMARY,
    read_jsonl,
)
from econbench.runs.lock import RunLock
from econbench.runs.record_tail import TailFirstWrap, TailStep, read_tail
from econbench.runs.resume import completed_by, custom_name, custom_players, custom_refusal
from econbench.runs.store import (
    JsonlWriter,
    RunDirError,
    check_new_run_dir,
    check_out_dir,
    holds_unplayed_run,
    missing_root,
    os_error_text,
    prepare_run_dir,
    run_metadata,
    storage_stop,
    write_json,
)

LOGS = (EVENTS, DAILY)
MAX_CHANGES_SHOWN = 8


class RunStopped(StoppedError):
    """The run stopped early on a model error; its directory keeps what was written."""


@dataclass
class _ResumePoint:
    """A verified checkpoint: the state to load, each log's verified prefix, the firms'
    starting equity (what the ledger identities are checked against) and the record's seal."""

    state: dict[str, Any]
    logs: dict[str, LogDigest]
    equity0: dict[str, int]
    record: dict[str, Any] | None = None
    """What ``record.sqlite`` held at the checkpoint (``CallRecord.seal``), if it was kept."""


def run_to_dir(
    config: RunConfig,
    out: Path,
    *,
    overwrite: bool = False,
    on_day: Callable[[int], None] | None = None,
    policies: dict[str, Any] | None = None,
    provider_wrap: ProviderWrap | None = None,
    label: str | None = None,
    cache: Path | None = None,
    seats: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play a whole run, writing its files into ``out``; returns the summary.

    ``out`` may already hold a run that was killed before its first checkpoint (nothing was
    played): it is started again. Any other run in ``out`` is kept unless ``overwrite``, and
    a directory that is not a run is never written into (``RunDirError``); a refused start
    leaves ``out`` as it was (no ``.lock``, no directory it created).
    ``provider_wrap`` replaces the default wrap of model providers (record every call into
    ``record.sqlite``, plus the response cache at ``cache`` when given). ``policies`` play
    their firms instead of what the config names; the run records them as custom
    (``custom:<qualified name>``). ``seats`` seat the people (``human:<name>``) who play
    firms, by firm (``econbench.agents.models.human.Seat``). A ``paper`` config is played by
    ``econbench.runs.coffee.paper_run.run_paper_to_dir`` with the same arguments.
    """
    if config.condition == PAPER_CONDITION:
        from econbench.runs.coffee import paper_run

        return paper_run.run_paper_to_dir(
            config,
            Path(out),
            overwrite=overwrite,
            on_day=on_day,
            policies=policies,
            provider_wrap=provider_wrap,
            label=label,
            cache=cache,
        )
    given = dict(policies or {})
    validate_agents(config, given, seats)
    config = recorded_config(config, given)
    out = Path(out)
    check_out_dir(out)
    check_start(out, overwrite)  # before the lock: a refused start leaves no trace
    created = missing_root(out)
    lock = RunLock(out)
    try:
        lock.acquire()
    except RunDirError:
        _remove(created)
        raise
    try:
        try:
            check_start(out, overwrite)  # again, now that no other process can change it
            prepare_run_dir(out, overwrite=overwrite, logs=LOGS)
            write_json(
                out / META,
                run_metadata("coffee", config.seed, label) | _versions(),
            )
            write_json(out / CONFIG, config.model_dump(mode="json", by_alias=True))
        except (RunDirError, OSError) as exc:
            lock.discard()
            _remove(created)
            if isinstance(exc, RunDirError):
                raise
            raise RunDirError(f"cannot write {out}: {os_error_text(exc)}") from None
        return _play(config, out, None, on_day, given, provider_wrap, cache, seats)
    finally:
        lock.release()


def check_start(out: Path, overwrite: bool) -> None:
    """Refuse a new run in ``out`` that would mix into, or throw away, what is there: a run
    that did not finish (resume it, or ``overwrite``), or what ``check_new_run_dir``
    refuses."""
    unfinished = None if overwrite else _unfinished(out)
    if unfinished is not None:
        raise RunDirError(
            f"{out} holds {unfinished} run; continue it with `econbench resume {out}`, or "
            "pass --overwrite to start over"
        )
    check_new_run_dir(out, overwrite, LOGS)


def _unfinished(out: Path) -> str | None:
    """``an interrupted`` or ``a stopped`` when ``out`` holds a run ``econbench resume``
    continues (judged as ``run_status`` does, by the checkpoint), else ``None``."""
    if not (out / CHECKPOINT).is_file():
        return None
    summary = _read_summary(out)
    if summary is not None and summary.get("status") == "stopped":
        return "a stopped"
    if summary is None:
        return "an interrupted"
    try:
        finished = completed_by(read_checkpoint(out, "coffee"), out)
    except RunFileError:
        finished = False
    return None if finished else "an interrupted"


def _versions() -> dict[str, Any]:
    """The versions a reader of this run's files needs: its event log's layout and prices."""
    return {
        "event_schema_version": EVENT_SCHEMA_VERSION,
        "price_table_version": PRICE_TABLE_VERSION,
    }


def _remove(created: Path | None) -> None:
    """Remove the directories a failed start created (never a directory that was there)."""
    if created is not None:
        shutil.rmtree(created, ignore_errors=True)


def resume_to_dir(
    out: Path,
    *,
    config: RunConfig | None = None,
    force: bool = False,
    on_day: Callable[[int], None] | None = None,
    provider_wrap: ProviderWrap | None = None,
    cache: Path | None = None,
    check_keys: bool = True,
    policies: dict[str, Any] | None = None,
    seats: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Continue the run in ``out`` from its checkpoint; returns the final summary.

    The checkpoint's digest, the logs' prefixes and the ledger identities are checked
    first; a run killed before its first checkpoint starts again from its config.
    ``config`` (default: the run's own ``config.json``) may differ from the one the run was
    playing only with ``force``; the refusal lists every changed field. A firm the run
    records as custom needs its policy object in ``policies`` (of the same qualified name,
    unless ``force``); without it the resume is refused. A firm a person plays needs their
    seat in ``seats`` (as for ``run_to_dir``). A run of condition ``paper`` is
    continued by ``econbench.runs.coffee.paper_run.resume_paper_to_dir`` with the same
    arguments; a resume never changes a run's condition.
    """
    out = Path(out)
    condition = _resume_condition(out, config)
    if condition == PAPER_CONDITION:
        from econbench.runs.coffee import paper_run

        return paper_run.resume_paper_to_dir(
            out,
            config=config,
            force=force,
            on_day=on_day,
            provider_wrap=provider_wrap,
            cache=cache,
            check_keys=check_keys,
            policies=policies,
        )
    lock = RunLock(out)
    try:
        lock.acquire()
    except RunDirError as exc:
        raise ResumeError(str(exc)) from None
    try:
        return _resume_locked(
            out,
            config,
            force,
            on_day,
            provider_wrap,
            cache,
            check_keys,
            dict(policies or {}),
            seats,
        )
    finally:
        lock.release()


def _resume_locked(
    out: Path,
    config: RunConfig | None,
    force: bool,
    on_day: Callable[[int], None] | None,
    provider_wrap: ProviderWrap | None,
    cache: Path | None,
    check_keys: bool,
    given: dict[str, Any],
    seats: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``resume_to_dir`` once the run's lock is held."""
    try:
        checkpoint = read_checkpoint(out, "coffee")
    except RunFileError as exc:
        raise ResumeError(str(exc)) from None
    summary = _read_summary(out)
    if (
        summary is not None
        and summary.get("status") == "completed"
        and completed_by(checkpoint, out)
    ):
        raise ResumeError(f"{out} is a completed run; there is nothing to resume")
    saved = _saved_config(out)
    if checkpoint is None:
        if not holds_unplayed_run(out, LOGS):
            raise ResumeError(
                f"{out / CHECKPOINT} is missing but the run's logs hold events, so where "
                "it stopped is unknown; start it again with --overwrite"
            )
        base = saved
    else:
        base = checkpoint.get("config")
        if not isinstance(base, dict):
            raise ResumeError(f"{out / CHECKPOINT} records no config")
        if config is None and saved != base and not force:
            raise ResumeError(
                f"{out / CONFIG} differs from the config its checkpoint was written with "
                f"({_changes(config_diff(base, saved))}): one of them was changed or "
                "replaced after the run started; restore it, or pass --force to continue "
                "with config.json"
            )
    requested = saved if config is None else config.model_dump(mode="json", by_alias=True)
    requested = _with_custom(out, requested, given)
    changes = config_diff(base, requested)
    if changes and not force:
        raise ResumeError(
            f"the config differs from the one the run started with ({_changes(changes)}); "
            "resume with the run's own config, or pass --force to continue anyway"
        )
    if config is None or given:
        config = _validated(out / CONFIG, requested)
    if check_keys:
        validate_agents(config, given, seats)
    point = None if checkpoint is None else _verify(out, checkpoint)
    try:
        if requested != saved:
            write_json(out / CONFIG, requested)
        if checkpoint is None and not (out / META).exists():
            write_json(
                out / META,
                run_metadata("coffee", config.seed) | _versions(),
            )
        (out / SUMMARY).unlink(missing_ok=True)
    except OSError as exc:
        raise RunStopped(storage_stop(out, exc)) from exc
    return _play(config, out, point, on_day, given, provider_wrap, cache, seats)


def _resume_condition(out: Path, config: RunConfig | None) -> str:
    """The condition a resume of ``out`` plays: the run's own (its ``config.json``; a run
    without the field is ``hardened``). A ``config`` of another condition is refused, even
    with ``force``: the two conditions' checkpoints and logs have nothing in common. An
    unreadable ``config.json`` reads as ``hardened``, whose resume says what is wrong."""
    try:
        saved = json.loads((out / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        saved = None
    own = DEFAULT_CONDITION
    if isinstance(saved, dict) and saved.get("condition"):
        own = str(saved["condition"])
    if config is not None and config.condition != own:
        raise ResumeError(
            f"{out} is a run of condition '{own}'; it cannot be resumed as condition "
            f"'{config.condition}' (start a new run for that)"
        )
    return own


def _with_custom(out: Path, requested: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``requested`` with each firm in ``given`` recorded under its custom name, after
    checking that ``given`` plays exactly the firms the run records as custom."""
    agents = requested.get("agents") if isinstance(requested.get("agents"), dict) else {}
    players = custom_players(requested)
    missing = {firm: name for firm, name in players.items() if firm not in given}
    if missing:
        raise ResumeError(custom_refusal(out, missing, "coffee"))
    extra = sorted(set(given) - set(players))
    if extra:
        raise ResumeError(
            f"policies= gives {', '.join(extra)}, which {out} does not record as played by a "
            "custom policy; only those firms take a policy object on resume"
        )
    if not given:
        return requested
    return {**requested, "agents": {**agents, **{f: custom_name(p) for f, p in given.items()}}}


def _changes(changes: list[str]) -> str:
    shown = "; ".join(changes[:MAX_CHANGES_SHOWN])
    more = len(changes) - MAX_CHANGES_SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def _saved_config(out: Path) -> dict[str, Any]:
    """The run's ``config.json`` as data (a one-line ``ResumeError`` when it is not)."""
    path = out / CONFIG
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResumeError(f"{path} is missing, so the run cannot be resumed") from None
    except OSError as exc:
        raise ResumeError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError):
        raise ResumeError(f"{path} is not valid JSON: the file is damaged") from None
    if not isinstance(data, dict):
        raise ResumeError(f"{path} is not a run config (not a JSON object)")
    return data


def _validated(path: Path, data: dict[str, Any]) -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ResumeError(f"{path} holds an invalid run config: {format_validation(exc)}") from None


def _verify(out: Path, checkpoint: dict[str, Any]) -> _ResumePoint:
    """Check what a resume relies on before anything is cut: the checkpoint's shape, the
    logs' recorded prefixes, that its world loads and its books balance, and that the record
    of model calls holds the calls the checkpoint sealed."""
    where = out / CHECKPOINT
    state, logs, equity0 = (
        checkpoint.get("state"),
        checkpoint.get("logs"),
        checkpoint.get("start_equity"),
    )
    if not isinstance(state, dict) or not {"world", "now", "pending", "policies"} <= set(state):
        raise ResumeError(f"{where} holds no run state")
    if not isinstance(logs, dict):
        raise ResumeError(f"{where} has no record of the run's logs")
    if not isinstance(equity0, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in equity0.values()
    ):
        raise ResumeError(f"{where} has no record of the firms' starting equity")
    try:
        digests = {name: LogDigest.verify(out / name, logs.get(name), str(where)) for name in LOGS}
    except RunFileError as exc:
        raise ResumeError(str(exc)) from None
    started = _validated(where, checkpoint["config"])
    try:
        world = World(started, state=WorldState.model_validate(state["world"]))
    except ValidationError as exc:
        raise ResumeError(
            f"{where}: its saved world does not load: {format_validation(exc)}"
        ) from None
    problems = ledger_problems(world, equity0)
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise ResumeError(f"{where} fails the ledger check: {problems[0]}{more}")
    seal = checkpoint.get("record")
    try:
        check_record(out / RECORD, seal)
    except RunFileError as exc:
        raise ResumeError(str(exc)) from None
    _check_named_messages(out, state["policies"])
    return _ResumePoint(state=state, logs=digests, equity0=dict(equity0), record=seal)


def _check_named_messages(out: Path, policies: Any) -> None:
    """Every message an agent's saved conversation names by digest is in ``record.sqlite``
    (checked before anything is cut, so a refusal changes nothing)."""
    named = [
        (firm, m["ref"])
        for firm, state in (policies.items() if isinstance(policies, dict) else ())
        if isinstance(state, dict) and isinstance(state.get("messages"), list)
        for m in state["messages"]
        if isinstance(m, dict) and "ref" in m
    ]
    if not named:
        return
    from econbench.agents.models.record import CallRecord, RecordError

    try:
        with CallRecord(out / RECORD, readonly=True) as record:
            missing = [(f, ref) for f, ref in named if not record.has_message(str(ref))]
    except (RecordError, OSError) as exc:
        raise ResumeError(f"{out / RECORD}: {exc}") from None
    if missing:
        firm, ref = missing[0]
        raise ResumeError(
            f"{out / RECORD}: message {str(ref)[:12]} of {firm}'s conversation is missing "
            f"({len(missing)} in all): the record was changed after the checkpoint; restore it "
            "from a backup, or start the run again with --overwrite"
        )


def _read_summary(out: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _default_wrap(config: RunConfig, out: Path, cache: Path | None) -> ProviderWrap | None:
    """Record every model call and every action of a person in the run (and use the
    response cache when asked)."""
    if not any(is_model(p) or is_human(p) for p in map(config.policy_for, FIRMS)):
        return None
    from econbench.agents.models.wraps import make_provider_wrap  # only when a model plays

    return make_provider_wrap(record=out / RECORD, cache=cache)


def _play(
    config: RunConfig,
    out: Path,
    point: _ResumePoint | None,
    on_day: Callable[[int], None] | None,
    policies: dict[str, Any] | None,
    provider_wrap: ProviderWrap | None,
    cache: Path | None,
    seats: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play from the start or from a verified checkpoint, checkpointing along the way.

    Writing the run's files may fail (a full disk, a record another process holds locked,
    a mount gone read-only): then the run stops with a one-line ``RunStopped`` and writes
    nothing more, so its last checkpoint stands and ``econbench resume`` continues from it.
    """
    wrap = provider_wrap if provider_wrap is not None else _default_wrap(config, out, cache)
    handles: list[Callable[[], None]] = []
    close = getattr(wrap, "close", None)
    try:
        try:
            run, world, error, daily_rows = _play_days(
                config, out, point, on_day, policies, wrap, handles, seats
            )
        except BaseException:
            _close_all(handles, close, quietly=True)
            raise
        _close_all(handles, close)
        return _finish(config, out, run, world, error, daily_rows)
    except OSError as exc:
        raise RunStopped(storage_stop(out, exc)) from exc


def _play_days(
    config: RunConfig,
    out: Path,
    point: _ResumePoint | None,
    on_day: Callable[[int], None] | None,
    policies: dict[str, Any] | None,
    wrap: ProviderWrap | None,
    handles: list[Callable[[], None]],
    seats: dict[str, Any] | None = None,
) -> tuple[CoffeeRun, World, ModelError | None, list[dict[str, Any]]]:
    """The days of the run (``handles``: the closers of the files it opened, for the
    caller to close); a model failure beyond retries ends them early, as the error."""
    events_path, daily_path = out / EVENTS, out / DAILY
    tails: dict[str, list[TailStep]] = {}
    if point is None:
        events_path.write_bytes(b"")
        daily_path.write_bytes(b"")
        digests = {name: LogDigest(out / name) for name in LOGS}
    else:
        for digest in point.logs.values():
            cut_log(digest.path, digest.length)
        digests = point.logs
        tails = read_tail(out / RECORD, point.record) if point.record is not None else {}
        _restore_record(out, point.record)
    config_json = config.model_dump(mode="json", by_alias=True)
    equity0: dict[str, int] = point.equity0 if point is not None else {}
    daily_rows: list[dict[str, Any]] = read_jsonl(daily_path)
    sink = JsonlSink(events_path)
    handles.append(sink.close)
    writer = JsonlWriter(daily_path)
    handles.append(writer.close)
    paid = any(is_model(config.policy_for(f)) for f in FIRMS)

    def record(row: dict[str, Any]) -> None:
        daily_rows.append(row)
        writer(row)

    def save(run: CoffeeRun) -> None:
        sink.flush()
        writer.flush()
        head = {
            "benchmark": "coffee",
            "day": run.world.day,
            "phase": run.world.state.phase,
            "final": run.finished,
            "config": config_json,
            "start_equity": equity0,
            "logs": {name: digest.advance() for name, digest in digests.items()},
        }
        seal = record_seal(wrap, out / RECORD)
        if seal is not None:
            head["record"] = seal
        write_checkpoint(out, head, run.state_json(), durable=paid)
        _progress(out, config, run, "running")

    run = CoffeeRun(
        config,
        sink=sink,
        daily_sink=record,
        policies=firm_policies(config, policies, wrap=_replaying(wrap, tails), seats=seats),
        on_checkpoint=save,
        on_model_tick=_every(PROGRESS_EVERY_S, lambda run: _progress(out, config, run, "running")),
    )
    for firm_id, seat in (seats or {}).items():
        watch = getattr(seat, "watch", None)
        if callable(watch):
            watch(run.world, firm_id)  # the seat shows the firm's panels
    if point is not None:
        _load_state(run, point, out)
    else:
        equity0.update(start_equity(run.world))
        save(run)  # before the first tick, so even an early crash is resumable
    try:
        return run, run.run(on_day=on_day), None, daily_rows
    except ModelError as exc:
        run.world.log(RunHalted(error_type=type(exc).__name__, error=str(exc)))
        return run, run.world, exc, daily_rows


def _finish(
    config: RunConfig,
    out: Path,
    run: CoffeeRun,
    world: World,
    error: ModelError | None,
    daily_rows: list[dict[str, Any]],
) -> dict[str, Any]:
    """Write the summary (completed, or stopped by ``error``); raise ``RunStopped`` if so."""
    names = {firm_id: config.policy_for(firm_id) for firm_id in FIRMS}
    summary = run_summary(world, names, daily_rows, run.agent_stats())
    summary["status"] = "completed" if error is None else "stopped"
    if error is not None:
        where = f"day {world.day} {hhmm(world.now)}"
        summary["stopped"] = {"at": where, "error_type": type(error).__name__, "error": str(error)}
    write_json(out / SUMMARY, summary)
    _progress(out, config, run, summary["status"])
    if error is not None:
        raise RunStopped(
            f"the run stopped on {where}: {error}; everything up to then is in {out}: fix "
            f"the cause (key, model name, provider outage), then `econbench resume {out}`"
        ) from error
    return summary


def _close_all(handles: list[Callable[[], None]], close: Any, *, quietly: bool = False) -> None:
    """Close the run's files, then the wrap (``close``: its record and cache), every one
    even when one fails; the first ``OSError`` is raised after, unless ``quietly`` (another
    error is already on its way)."""
    first: OSError | None = None
    for closer in [*handles, *([close] if callable(close) else [])]:
        try:
            closer()
        except OSError as exc:
            first = first or exc
    if first is not None and not quietly:
        raise first


def _restore_record(out: Path, seal: Any) -> None:
    """Cut ``record.sqlite`` back to what the checkpoint sealed (``_verify`` checked it)."""
    if seal is None:
        return
    from econbench.agents.models.record import RecordError, restore_to_seal

    try:
        restore_to_seal(out / RECORD, seal)
    except RecordError as exc:
        raise ResumeError(str(exc)) from None


def _replaying(wrap: ProviderWrap | None, tails: dict[str, list[TailStep]]) -> ProviderWrap | None:
    """``wrap``, each agent's recorded tail served before its model is asked."""
    return TailFirstWrap(wrap, tails) if wrap is not None and tails else wrap


def _load_state(run: CoffeeRun, point: _ResumePoint, out: Path) -> None:
    """Restore the world and every policy; a state that does not fit is a one-line error."""
    try:
        run.load_state(point.state)
    except (KeyError, TypeError, ValueError) as exc:
        detail = (str(exc).splitlines() or [""])[0]
        raise ResumeError(
            f"{out / CHECKPOINT}: its saved state does not fit this run's policies "
            f"({type(exc).__name__}: {detail})"
        ) from None


PROGRESS_EVERY_S = 0.5
"""Between checkpoints, ``progress.json`` (the spend a sweep's cost limit reads) is rewritten
after a model tick at most every half second: rewriting it after every tick cost about
0.3 ms of CPU per model request (timed around ``write_progress`` in a run of
``benchmarks/model_path.py``), for a file read by people and sweeps."""


def _every(seconds: float, action: Callable[[CoffeeRun], None]) -> Callable[[CoffeeRun], None]:
    """``action``, done at most once every ``seconds`` of wall time (the first time at once)."""
    last = [-math.inf]

    def throttled(run: CoffeeRun) -> None:
        now = time.monotonic()
        if now - last[0] >= seconds:
            last[0] = now
            action(run)

    return throttled


def _progress(out: Path, config: RunConfig, run: CoffeeRun, status: str) -> None:
    write_progress(
        out,
        benchmark="coffee",
        status=status,
        done=min(run.world.day, config.days),
        total=config.days,
        unit="day",
        cost_usd=_priced_cost(run),
    )


def _priced_cost(run: CoffeeRun) -> float:
    """The sum of ``cost_usd_priced_part`` over ``run.agent_stats()``, read from the firms
    that keep stats only (a firm without them adds 0.0, which changes no sum): progress is
    written at every checkpoint, and building every firm's stats costs more than the file."""
    total = 0.0
    for policy in run.policies.values():
        stats = getattr(policy, "stats", None)
        if stats is not None:
            total += float(stats.to_dict().get("cost_usd_priced_part") or 0.0)
    return total
