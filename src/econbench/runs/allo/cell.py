"""An AlloBench cell in a run directory: play it, checkpoint it, continue it.

:func:`run_cell` plays a configuration (``econbench.allo.episodes.runner.CellSpec``) over many seeds
and writes ``episodes.jsonl`` (one record per episode), ``summary.json``, ``config.json`` and
``meta.json``; the CLI's ``run`` and every cell of ``sweep`` go through it. Each finished
episode is sealed by ``checkpoint.json``, so a killed cell continues after its last complete
episode (:func:`continues_cell`, :func:`check_continuable`).

A cell played by an actor factory of the caller's own (not the reference-policy or model
factory its ``policy`` names) is recorded as ``policy = "custom:<qualified name>"``
(:func:`recorded_spec`): reports keep it apart from the policy it replaced, and it resumes only
from Python with the same factory.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from econbench.agents.models.base import ModelError, ProviderWrap
from econbench.agents.models.human import is_human
from econbench.allo.episodes.actors import ActorFactory, PolicyActorFactory
from econbench.allo.episodes.runner import (
    CellSpec,
    Episode,
    cell_config,
    play_cell,
    summary_of,
    with_protocol,
)
from econbench.allo.framings.base import Framing
from econbench.allo.game import EpisodeResult
from econbench.jsonio import json_line
from econbench.runs.allo.factory import make_factory
from econbench.runs.benchmark import StoppedError
from econbench.runs.checkpoint import (
    LogDigest,
    RunFileError,
    check_record,
    cut_log,
    log_length,
    read_checkpoint,
    record_seal,
    write_checkpoint,
    write_progress,
)
from econbench.runs.diff import config_diff
from econbench.runs.layout import CHECKPOINT, CONFIG, EPISODES, META, RECORD, SUMMARY, read_json
from econbench.runs.lock import RunLock
from econbench.runs.record_tail import TailFirstWrap, TailStep, read_tail
from econbench.runs.resume import custom_name, is_custom
from econbench.runs.store import (
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


class CellResumeError(RuntimeError):
    """A cell cannot be resumed as asked (the message, one line, says why). ``changes``
    lists the settings that differ when that is the reason."""

    def __init__(self, message: str, changes: list[str] | None = None) -> None:
        super().__init__(message)
        self.changes = changes


class CellStopped(StoppedError):
    """A model failed beyond retries; the finished episodes stay and the cell can resume."""


def run_cell(
    spec: CellSpec,
    out_dir: str | Path,
    *,
    framing: Framing | None = None,
    actor_factory: ActorFactory | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    on_turn: Callable[[int, int], None] | None = None,
    models: dict[str, Any] | None = None,
    provider_wrap: ProviderWrap | None = None,
    cache: Path | None = None,
    label: str | None = None,
    resume: bool = False,
    force: bool = False,
    seat: Any = None,
) -> dict[str, Any]:
    """Play ``spec`` and write ``episodes.jsonl``, ``summary.json``, ``config.json`` and
    ``meta.json`` (plus ``record.sqlite`` when a model or a person plays: a person,
    ``human:<name>``, plays in the model's seat through ``seat``, an
    ``econbench.agents.models.human.Seat``, and is recorded and resumed as a model is).

    Each finished episode is one complete line of ``episodes.jsonl``, sealed after it by
    ``checkpoint.json`` (the config, and the length and hash of the episodes so far). With
    ``resume`` the cell continues after its last complete episode (a torn last line is
    cut), provided the checkpoint verifies and the config is unchanged (``force``
    overrides a changed config), and the record holds the model calls the checkpoint
    sealed. A model failure beyond retries writes a ``stopped`` summary and raises
    ``CellStopped``; so does a failure to write the cell's files (a full disk, a locked
    record), without a summary. Without ``resume`` the cell starts afresh, clearing an
    earlier run's files; a directory that is not a run is refused (``RunDirError``), and a
    refused start leaves ``out_dir`` as it was. An ``actor_factory`` that is not the one
    ``spec.policy`` names is recorded as custom (:func:`recorded_spec`).
    """
    spec.validate()
    spec = recorded_spec(spec, actor_factory)
    framing = framing or spec.make_framing()
    out = Path(out_dir)
    created = missing_root(out)
    lock = RunLock(out)
    try:
        lock.acquire()
    except RunDirError as exc:
        _remove(created)
        if resume:
            raise CellResumeError(str(exc)) from None
        raise
    try:
        wrap = provider_wrap
        if wrap is None and actor_factory is None and _plays_by_calls(spec.policy):
            from econbench.agents.models.wraps import make_provider_wrap

            wrap = make_provider_wrap(record=out / RECORD, cache=cache)
        if wrap is not None:  # the episode in flight replays its recorded calls first
            wrap = TailFirstWrap(wrap)
        try:
            factory = actor_factory or make_factory(spec, models, wrap=wrap, seat=seat)
            config = cell_config(spec, framing, factory)
            opened = _open_cell(spec, out, config, resume=resume, force=force)
            if isinstance(wrap, TailFirstWrap):
                wrap.tails.update(opened.tails)
        except BaseException:  # refused before anything was written: leave no trace
            _close_quietly(wrap)
            lock.discard()
            _remove(created)
            raise
        return _play_opened(
            spec, out, framing, factory, config, opened, wrap, on_episode, label, on_turn
        )
    finally:
        lock.release()


def _plays_by_calls(policy: str) -> bool:
    """Whether ``policy`` plays through model calls that the cell records: a model's, or a
    person's (``human:<name>``) in the model's seat."""
    return "/" in policy or is_human(policy)


def _remove(created: Path | None) -> None:
    """Remove the directories a refused start created (never one that was there)."""
    if created is not None:
        shutil.rmtree(created, ignore_errors=True)


def _close_quietly(wrap: Any) -> None:
    close = getattr(wrap, "close", None)
    if callable(close):
        with contextlib.suppress(OSError):
            close()


def recorded_spec(spec: CellSpec, factory: ActorFactory | None) -> CellSpec:
    """``spec`` as the cell records it: with ``policy = "custom:<qualified name>"`` when
    ``factory`` is the caller's own, not the reference-policy or model factory of
    ``spec.policy``; a custom ``spec.policy`` without a factory cannot be played."""
    if factory is None:
        if is_custom(spec.policy):
            raise ValueError(
                f"policy {spec.policy!r} names a custom actor, which only Python can supply: "
                "pass the actor factory itself (econbench.api.run_allo(actor=...))"
            )
        return spec
    if _builds(factory, spec.policy):
        return spec
    return replace(spec, policy=custom_name(factory))


def _builds(factory: ActorFactory, policy: str) -> bool:
    """Whether ``factory`` is the run layer's own factory for ``policy``."""
    if getattr(factory, "name", None) != policy:
        return False
    if isinstance(factory, PolicyActorFactory):
        return True
    if is_human(policy):  # a person, in the model's seat
        from econbench.runs.play.allo_actor import HumanActorFactory

        return isinstance(factory, HumanActorFactory)
    from econbench.runs.allo.llm_actor import LLMActorFactory  # loaded only for a model's cell

    return isinstance(factory, LLMActorFactory)


@dataclass
class _Opened:
    """A cell ready to play: its finished episodes and the digest of their lines."""

    done: list[Episode]
    digest: LogDigest
    fresh: bool = False
    """Started afresh (the directory was cleared), not continued."""
    tails: dict[str, list[TailStep]] = field(default_factory=dict)
    """The model calls recorded after the checkpoint (the episode in flight), per agent."""


def _open_cell(
    spec: CellSpec, out: Path, config: dict[str, Any], *, resume: bool, force: bool
) -> _Opened:
    """Check the cell in ``out`` can be played as asked, and make it ready: continued after
    its verified episodes (``resume``) or, afresh, in a directory cleared of an earlier
    run's files (one that is not a run is refused: ``check_new_run_dir``). A refusal
    (``CellResumeError``, ``RunDirError``) comes before anything is written."""
    if resume:
        done, digest, tails = _resume_point(spec, out, config, force)
        return _Opened(done, digest, tails=tails)
    prepare_run_dir(out, overwrite=True, logs=(EPISODES,))
    return _Opened([], LogDigest(out / EPISODES), fresh=True)


def _play_opened(
    spec: CellSpec,
    out: Path,
    framing: Framing,
    factory: ActorFactory,
    config: dict[str, Any],
    opened: _Opened,
    wrap: ProviderWrap | None,
    on_episode: Callable[[Episode], None] | None,
    label: str | None,
    on_turn: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """Play the missing episodes of an opened cell. Writing its files may fail (a full disk,
    a record another process holds locked): then it stops with a one-line ``CellStopped``
    and writes nothing more, so its last checkpoint stands for a resume."""
    try:
        try:
            summary, error = _play_episodes(
                spec, out, framing, factory, config, opened, wrap, on_episode, label, on_turn
            )
        except BaseException:
            _close_quietly(wrap)
            raise
        close = getattr(wrap, "close", None)
        if callable(close):
            close()
        write_json(out / SUMMARY, summary)
        _progress(out, spec, opened.done, summary["status"])
    except OSError as exc:
        raise CellStopped(f"{spec.slug()}: {storage_stop(out, exc)}") from exc
    if error is not None:
        raise CellStopped(
            f"{spec.slug()}: the model failed beyond retries after {len(opened.done)} of "
            f"{len(spec.seeds)} episodes: {error}\nThe finished episodes are in "
            f"{out / EPISODES}. Fix the cause (key, model name, provider outage), then "
            f"continue with `econbench resume {out}`."
        ) from error
    return summary


def _play_episodes(
    spec: CellSpec,
    out: Path,
    framing: Framing,
    factory: ActorFactory,
    config: dict[str, Any],
    opened: _Opened,
    wrap: ProviderWrap | None,
    on_episode: Callable[[Episode], None] | None,
    label: str | None,
    on_turn: Callable[[int, int], None] | None,
) -> tuple[dict[str, Any], ModelError | None]:
    """The episodes still to play, each sealed by a checkpoint; returns the summary and
    the model error that stopped them early, if one did."""
    done, digest = opened.done, opened.digest
    episodes_path = out / EPISODES
    # meta.json first: it is what marks the directory as a run (``store.is_run``)
    write_json(out / META, run_metadata("allo", spec.seeds[0], label or spec.slug()))
    if opened.fresh:
        episodes_path.write_bytes(b"")
    (out / SUMMARY).unlink(missing_ok=True)
    write_json(out / CONFIG, config)
    cost = _cost_so_far(done)
    paid = _plays_by_calls(spec.policy)  # a model's calls, or a person's moves: kept durably

    def checkpoint() -> None:
        head = {
            "benchmark": "allo",
            "episodes": len(done),
            "final": len(done) == len(spec.seeds),
            "config": config,
            "logs": {EPISODES: digest.advance()},
        }
        seal = record_seal(wrap, out / RECORD)
        if seal is not None:
            head["record"] = seal
        write_checkpoint(out, head, durable=paid)

    checkpoint()
    _progress(out, spec, done, "running", cost)
    remaining = replace(spec, seeds=spec.seeds[len(done) :])
    with episodes_path.open("a", encoding="utf-8") as fh:

        def write(episode: Episode) -> None:
            nonlocal cost
            fh.write(json_line(episode.record, sort_keys=True) + "\n")
            fh.flush()
            done.append(episode)
            checkpoint()
            cost += _episode_cost(episode.record)
            _progress(out, spec, done, "running", cost)
            if on_episode is not None:
                on_episode(episode)

        error: ModelError | None = None
        if remaining.seeds:
            try:
                play_cell(
                    remaining,
                    framing=framing,
                    actor_factory=factory,
                    on_episode=write,
                    on_turn=on_turn,
                )
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
    return summary, error


def _progress(
    out: Path, spec: CellSpec, done: Sequence[Episode], status: str, cost: float | None = None
) -> None:
    write_progress(
        out,
        benchmark="allo",
        status=status,
        done=len(done),
        total=len(spec.seeds),
        unit="episode",
        cost_usd=_cost_so_far(done) if cost is None else cost,
    )


def continues_cell(out: Path, overwrite: bool = False) -> bool:
    """Whether playing a cell into ``out`` continues the cell there (its finished episodes
    kept as they are) rather than starting afresh: true when ``out`` holds a cell, unless
    ``overwrite``. A directory holding anything else is refused, with ``overwrite`` too
    (it replaces a run's files, never someone's own: ``check_new_run_dir``), and so is one
    that cannot be written (``check_out_dir``)."""
    out = Path(out)
    if not out.exists():
        return False
    if not out.is_dir():
        raise CellResumeError(f"{out} exists and is not a directory")
    try:
        check_out_dir(out)
        if overwrite:
            check_new_run_dir(out, overwrite=True, logs=(EPISODES,))
            return False
    except RunDirError as exc:
        raise CellResumeError(str(exc)) from None
    if (out / CONFIG).exists() or (out / CHECKPOINT).exists():
        return True
    if holds_unplayed_run(out, (EPISODES,)):
        return False  # killed before it wrote its config: nothing was played
    raise CellResumeError(
        f"{out} holds files that are not an AlloBench cell; choose another --out, or pass "
        "--overwrite to replace them"
    )


def check_continuable(
    spec: CellSpec, out: Path, framing: Framing, factory: ActorFactory, *, force: bool = False
) -> None:
    """Raise ``CellResumeError`` (one line) unless the cell in ``out`` can be continued as
    ``spec``; reads only, so a command can check every cell before it starts any."""
    spec = recorded_spec(spec, factory)
    _resume_point(spec, Path(out), cell_config(spec, framing, factory), force, cut=False)


def _resume_point(
    spec: CellSpec, out: Path, config: dict[str, Any], force: bool, *, cut: bool = True
) -> tuple[list[Episode], LogDigest, dict[str, list[TailStep]]]:
    """The finished episodes of the cell in ``out``, the digest of their lines and the model
    calls recorded after the checkpoint (``runs/record_tail.py``; cut from the record), after
    checking the checkpoint, that ``config.json`` is the one it
    sealed, that the record holds the model calls it sealed, and that the cell is the same
    one (``force``: it may have other settings but must have the same seeds). ``cut`` drops
    a torn last line (the episode in flight) and the calls recorded after the checkpoint;
    without it nothing is written."""
    saved = read_json(out / CONFIG)
    if not isinstance(saved, dict):
        raise CellResumeError(
            f"{out / CONFIG} is missing or not valid JSON; the cell cannot be resumed"
        )
    path = out / EPISODES
    try:
        checkpoint = read_checkpoint(out, "allo")
    except RunFileError as exc:
        raise CellResumeError(str(exc)) from None
    if checkpoint is None:
        if log_length(path) > 0 and not force:
            raise CellResumeError(
                f"{out / CHECKPOINT} is missing but {path} holds episodes (a cell written by an "
                "older econbench?); resume with --force to trust them as they are"
            )
        base, digest = saved, LogDigest(path)
    else:
        base = checkpoint.get("config")
        if not isinstance(base, dict):
            raise CellResumeError(f"{out / CHECKPOINT} records no config")
        if saved != base and not force:
            raise CellResumeError(
                f"{out / CONFIG} differs from the config its checkpoint was written with "
                f"({_changes(config_diff(base, saved))}): one of them was changed or "
                "replaced after the cell started; restore it, or resume with --force to "
                "continue with config.json"
            )
        try:
            digest = LogDigest.verify(
                path, (checkpoint.get("logs") or {}).get(EPISODES), str(out / CHECKPOINT)
            )
        except RunFileError as exc:
            raise CellResumeError(str(exc)) from None
    changes = config_diff(with_protocol(base, config), config)
    if changes and not force:
        raise CellResumeError(
            f"the cell's config differs from the one it started with ({_changes(changes)}); "
            "resume with the same settings and version, or pass --force",
            changes=changes,
        )
    complete = log_length(path)
    if cut:
        cut_log(path, complete)  # drop a torn last line (the episode in flight)
    records = _episode_records(path, complete)
    sealed = _lines_in(path, digest.length)
    if checkpoint is not None and checkpoint.get("episodes") != sealed:
        raise CellResumeError(
            f"{out / CHECKPOINT} records {checkpoint.get('episodes')!r} episodes but sealed "
            f"{sealed} lines of {path.name}: it was edited or damaged"
        )
    if checkpoint is not None and len(records) > sealed + 1:
        raise CellResumeError(
            f"{path} holds {len(records) - sealed} episodes written after its checkpoint (at "
            "most one can be): it was edited; the cell cannot be resumed safely"
        )
    seeds = [r["seed"] for _, r in records]
    if seeds != list(spec.seeds[: len(seeds)]):
        raise CellResumeError(
            f"{path} holds episodes for seeds {seeds[:5]}… that are not the first seeds of "
            "this cell; it cannot be resumed"
        )
    seal = None if checkpoint is None else checkpoint.get("record")
    try:
        check_record(out / RECORD, seal)
    except RunFileError as exc:
        raise CellResumeError(str(exc)) from None
    tails: dict[str, list[TailStep]] = {}
    if cut and seal is not None and len(records) == sealed:
        tails = _cut_record(out, seal)
    return [Episode(result=result, record=r) for result, r in records], digest, tails


def _cut_record(out: Path, seal: dict[str, Any]) -> dict[str, list[TailStep]]:
    """Drop the model calls recorded after the checkpoint — those of the episode that was
    in flight, which is played again — and return them, to be served again before its model
    is asked. (When its line was written but not yet sealed, the episode is kept, and so
    are its calls: nothing is cut then.)"""
    from econbench.agents.models.record import RecordError, restore_to_seal

    try:
        tails = read_tail(out / RECORD, seal)
        restore_to_seal(out / RECORD, seal)
    except RecordError as exc:
        raise CellResumeError(str(exc)) from None
    except OSError as exc:
        raise CellResumeError(os_error_text(exc)) from None
    return tails


def _changes(changes: list[str], limit: int = 8) -> str:
    more = len(changes) - limit
    return "; ".join(changes[:limit]) + (f"; and {more} more" if more > 0 else "")


def _lines_in(path: Path, length: int) -> int:
    with path.open("rb") as fh:
        return fh.read(length).count(b"\n")


def _episode_records(path: Path, length: int) -> list[tuple[EpisodeResult, dict[str, Any]]]:
    """The lines in the first ``length`` bytes of ``episodes.jsonl`` as (result, record); a
    line that is not an episode record is a one-line ``CellResumeError`` naming it."""
    out: list[tuple[EpisodeResult, dict[str, Any]]] = []
    if length == 0:
        return out
    with path.open("rb") as fh:
        data = fh.read(length)
    for number, line in enumerate(data.split(b"\n")[:-1], 1):
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get("seed"), int):
                raise ValueError("no seed")
            result = EpisodeResult.from_dict(record["result"])
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise CellResumeError(
                f"{path} line {number} is not an episode record ({type(exc).__name__}); "
                "the file is damaged"
            ) from None
        out.append((result, record))
    return out


def _episode_cost(record: dict[str, Any]) -> float:
    return float(record.get("tokens", {}).get("cost_usd", 0.0) or 0.0)


def _cost_so_far(episodes: Sequence[Episode]) -> float:
    return sum(_episode_cost(e.record) for e in episodes)
