"""Import the paper's stored sessions as ordinary AlloBench cells (``econbench allo import``).

The paper's repository stores one folder per seed, ``<family>/seed_<n>/`` with ``meta.json``
(the generator's settings and the family → role assignment), ``stream.json`` (the 60 rendered
problems with their ``class_id``) and ``session.json`` (R0–R2: the model's turns, ``transcript``,
one entry per decision with ``slot``, ``class_id``, ``prompt``, ``reply`` and the parsed
``decision``) or ``sessions.jsonl`` (R3: one tool-using conversation, replayed by
:mod:`econbench.allo.paper.r3_sessions`). Which rung and model a folder is, and how its cells are
named (``paper/claude-haiku-4.5``, ``paper/gpt-5.4-mini``, …), is
:mod:`econbench.allo.paper.sources`:

- ``urn_<model>…`` → R0 (``…_vocab-quiver`` etc. → the R0 skins ``quiver``/``chest``/``cauldron``;
  ``urn_tool_<model>…`` → the same urn decided by a keep/pass tool call, ``…/tool-call``);
- ``claim_solver_<model>…`` → R1; ``claim_solver_code_<model>…`` → R2;
- ``arm_a1_announce[_<model>]…`` → R3;
- ``economic_surface_<model>/R0|R2/B_<b>/K_<k>/seed_<n>/`` → the κ grid (R0 or R2 at B, K).

Skipped with a warning: ``economic_surface_reference`` (reference policies, which econbench
plays itself), ``rl_*`` and anything else.

Each episode is rebuilt by replaying the stored decisions through :class:`~econbench.allo.game.
Game` on the stored stream; the result is cross-checked against the session's own ``collected``
(R3: its number of script writes); a mismatch is an error. The turn records follow
:func:`econbench.allo.episodes.runner.play_episode`: decision turns carry the stored prompt as
``observation`` and the stored reply as the one reply. A stored decision parsed by default
(``how`` = ``default``, ``error``, ``malformed_args``: no valid tag or tool call) is recorded
``resolved: false``, as the runner records an unresolved reply. Decision turns the session never
reached (it stopped early) are recorded unresolved PASS.

An imported cell's config names ``source: {"kind": "paper", "family": <folder>}``, which the
report's comparison with the paper's published tables reads
(:mod:`econbench.runs.allo.paper_check`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.allo.episodes.runner import SCHEMA_VERSION, _seed_text, outcome_fields, safe_name
from econbench.allo.game import EpisodeResult, Game
from econbench.allo.game.families import FAMILY_NAMES
from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import Stream, StreamConfig
from econbench.allo.paper.r3_sessions import R3SessionError, replay_r3, turn_head
from econbench.allo.paper.sources import (
    Folder,
    parse_folder,
    policy_names,
    surface_folder,
    with_magnitude,
)
from econbench.jsonio import json_line
from econbench.runs.layout import CONFIG, EPISODES, META, SUMMARY
from econbench.runs.store import run_metadata, write_json

COMMIT_DECISIONS = {"KEEP", "CLAIM_SOLVER"}
PASS_DECISIONS = {"PASS", "SKIP_SOLVER"}
UNRESOLVED_HOW = {"default", "error", "malformed_args"}
PAPER_FAMILIES: tuple[str, ...] = FAMILY_NAMES
"""The paper's family order (its class ids), for folders without a ``meta.json``."""
TOOL_NAMES = {
    "CLAIM_SOLVER": "claim_solver",
    "SKIP_SOLVER": "skip_solver",
    "KEEP": "keep",
    "PASS": "pass",
}


class PaperImportError(ValueError):
    """A stored file is missing or malformed (the message names it)."""


@dataclass
class ImportedCell:
    """One converted cell: its files' contents."""

    name: str
    config: dict[str, Any]
    records: list[dict[str, Any]]
    summary: dict[str, Any]
    results: list[EpisodeResult] = field(default_factory=list)


def classify(name: str) -> Folder | None:
    """The rung, model and condition of a top-level run folder, or ``None`` when not understood."""
    return parse_folder(name)


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PaperImportError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PaperImportError(f"{path}: not readable JSON ({exc})") from None


def _need(cond: bool, path: Path, what: str) -> None:
    if not cond:
        raise PaperImportError(f"{path}: {what}")


def stream_from_stored(
    meta: dict[str, Any] | None, items: list[Any], seed: int, where: Path
) -> Stream:
    """The econbench ``Stream`` of a stored ``meta.json`` + ``stream.json``.

    Class ids are the positions of the families in ``meta["assignment"]`` (the paper's family
    order); the stored items' ``class_id`` must agree."""
    if meta is None:  # the κ grid stores no meta.json: the roles come from the items
        roles = {i.get("family"): i.get("role") for i in items if isinstance(i, dict)}
        meta = {"assignment": {f: {"role": roles.get(f, "trap")} for f in PAPER_FAMILIES}}
    assignment = meta.get("assignment")
    _need(isinstance(assignment, dict) and bool(assignment), where / "meta.json", "no assignment")
    families = list(assignment)
    _need(isinstance(items, list) and bool(items), where / "stream.json", "not a list of problems")
    classes = []
    for i, item in enumerate(items):
        ok = isinstance(item, dict) and item.get("family") in families
        _need(ok, where / "stream.json", f"item {i} has no known family")
        cid = families.index(item["family"])
        _need(item.get("class_id", cid) == cid, where / "stream.json", f"item {i}: class_id")
        classes.append(cid)
    hot = tuple(i for i, f in enumerate(families) if (assignment[f] or {}).get("role") == "hot")
    try:
        config = StreamConfig(
            n_classes=len(families),
            n_tasks=len(classes),
            budget=int(meta.get("budget", 3)),
            n_hot=len(hot),
            hot_mass=float(meta.get("hot_share", 0.85)),
            trap_early=bool(meta.get("want_early", True)),
        )
        return Stream(seed=seed, config=config, hot=hot, classes=tuple(classes))
    except (ValueError, TypeError) as exc:
        raise PaperImportError(f"{where / 'meta.json'}: {exc}".splitlines()[0]) from None


def _labels(session: dict[str, Any], families: list[str], framing: str) -> list[str]:
    colours = session.get("color_of_class") or {}
    if framing == "r0" and colours:
        return [str(colours.get(str(c), f"class-{c}")) for c in range(len(families))]
    return families


def replay_episode(
    session: dict[str, Any],
    stream: Stream,
    *,
    framing: str,
    skin: str,
    policy: str,
    cost: float,
    budget: int,
    labels: list[str],
    where: Path,
) -> tuple[EpisodeResult, dict[str, Any]]:
    """Replay a stored session's decisions on ``stream``; return the result and the record."""
    transcript = session.get("transcript")
    _need(isinstance(transcript, list), where / "session.json", "no transcript list")
    usages = session.get("turn_usages") or []
    if len(usages) != len(transcript):
        usages = [{} for _ in transcript]
    code = session.get("claimed_code") or {}
    game = Game(stream, cost=cost, budget=budget)
    turns: list[dict[str, Any]] = []
    tokens: Counter[str] = Counter()
    i = 0

    def base(t: int, cls: int, sighting: int, kind: str) -> dict[str, Any]:
        return turn_head(t, cls, labels[cls], sighting, kind)

    while not game.done:
        turn = game.turn()
        if not turn.needs_decision:
            turns.append(
                {**base(turn.t, turn.cls, turn.sighting, "auto"), "notice": None, "collected": True}
            )
            game.step(False)
            continue
        budget_left = game.budget_left
        rec = base(turn.t, turn.cls, turn.sighting, "decision")
        if i < len(transcript):
            entry = transcript[i]
            file = where / "session.json"
            _need(isinstance(entry, dict), file, f"transcript[{i}] is not an object")
            _need(
                entry.get("slot") == turn.t,
                file,
                f"transcript[{i}] is slot {entry.get('slot')}, the replay asks at {turn.t}",
            )
            _need(entry.get("class_id", turn.cls) == turn.cls, file, f"transcript[{i}]: class_id")
            decision = entry.get("decision")
            _need(
                decision in COMMIT_DECISIONS | PASS_DECISIONS,
                file,
                f"transcript[{i}]: unknown decision {decision!r}",
            )
            commit = decision in COMMIT_DECISIONS
            how = entry.get("how")
            resolved = how not in UNRESOLVED_HOW
            usage = {
                k: v
                for k, v in (usages[i] or {}).items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
            tokens.update(usage)
            calls = []
            if decision in TOOL_NAMES and how == "tool":
                args = {"code": code.get(str(turn.cls), "")} if framing == "r2" and commit else {}
                calls.append(
                    {
                        "name": TOOL_NAMES[decision],
                        "arguments": args,
                        "call_id": None,
                        "executed": True,
                        "result": {"status": "success"},
                    }
                )
            rec.update(
                budget_left=budget_left,
                observation=str(entry.get("prompt", "")),
                replies=[
                    {"text": str(entry.get("reply") or ""), "usage": usage, "tool_calls": calls}
                ],
                decision="commit" if commit else "pass",
                resolved=resolved,
                reason=f"stored decision {decision} (parsed by {how})",
                commit=commit,
                rebuilds=0,
                collected=commit,
            )
            i += 1
        else:
            commit = False
            rec.update(
                budget_left=budget_left,
                observation="",
                replies=[],
                decision="pass",
                resolved=False,
                reason="not in the stored session",
                commit=False,
                rebuilds=0,
                collected=False,
            )
        turns.append(rec)
        game.step(commit)
    _need(
        i == len(transcript),
        where / "session.json",
        f"{len(transcript) - i} stored decisions left over after the replay",
    )
    asked = {rec["t"] for rec in turns}
    for r in game.records:
        if r.t not in asked:
            turns.append(
                {
                    **base(r.t, r.cls, r.sighting, "after_end"),
                    "notice": None,
                    "collected": r.collected,
                }
            )
    turns.sort(key=lambda rec: rec["t"])
    result = game.result()
    stored = session.get("collected")
    if isinstance(stored, int) and stored != result.collected:
        raise PaperImportError(
            f"{where / 'session.json'}: the replay collects {result.collected}, "
            f"the session says {stored}"
        )
    record = _episode_record(stream, framing, skin, policy, cost, budget, labels)
    record.update(outcome_fields(result, turns, tokens))
    record["source"] = {"path": str(where), "model_key": session.get("model_key")}
    record["turns"] = turns
    return result, record


def _r3_record(
    d: Path, folder: Folder, policy: str, cost: float
) -> tuple[EpisodeResult, dict[str, Any], int, Stream]:
    """One stored R3 seed as an episode record (see :mod:`econbench.allo.paper.r3_sessions`)."""
    seed = _seed_of(d)
    items = _load(d / "stream.json")
    meta = _load(d / "meta.json") if (d / "meta.json").exists() else None
    config = _load(d / "config.json") if (d / "config.json").exists() else {}
    _need(meta is None or isinstance(meta, dict), d / "meta.json", "not an object")
    _need(isinstance(config, dict), d / "config.json", "not an object")
    try:
        lines = (d / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
        session = json.loads(next(line for line in lines if line.strip()))
    except FileNotFoundError:
        raise PaperImportError(f"{d / 'sessions.jsonl'}: missing") from None
    except (StopIteration, OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PaperImportError(f"{d / 'sessions.jsonl'}: not a JSON line ({exc})") from None
    _need(isinstance(session, dict), d / "sessions.jsonl", "not an object")
    stream = stream_from_stored(meta, items, seed, d)
    budget = int(config.get("budget", session.get("budget", stream.config.budget)))
    labels = list(meta["assignment"]) if meta else list(PAPER_FAMILIES)
    try:
        result, turns, tokens, outcome = replay_r3(
            session, stream, labels, cost=cost, budget=budget, where=d
        )
    except R3SessionError as exc:
        raise PaperImportError(str(exc)) from None
    record = _episode_record(stream, "r3", folder.skin, policy, cost, budget, labels)
    record.update(outcome_fields(result, turns, tokens))
    outcome["magnitude"] = config.get("magnitude")
    record["paper_r3"] = outcome
    record["source"] = {"path": str(d), "model_key": session.get("model_key")}
    record["turns"] = turns
    return result, record, budget, stream


def _episode_record(
    stream: Stream,
    framing: str,
    skin: str,
    policy: str,
    cost: float,
    budget: int,
    labels: list[str],
) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "seed": stream.seed,
        "framing": framing,
        "skin": skin if framing == "r0" else None,
        "actor": policy,
        "cost": float(cost),
        "budget": budget,
        "stream": {
            "generator": "paper-stored",
            "draw_budget": stream.config.budget,
            "hot": list(stream.hot),
            "classes": list(stream.classes),
            "labels": labels,
        },
    }


def import_cell(
    seed_dirs: list[Path],
    folder: Folder,
    name: str,
    policy: str,
) -> ImportedCell:
    """Convert the seed folders of one cell (same rung, model, condition, B, K)."""
    records: list[dict[str, Any]] = []
    results: list[EpisodeResult] = []
    b = folder.budget
    k = float(folder.cost)
    streams = []
    for d in sorted(seed_dirs, key=_seed_of):
        if folder.framing == "r3":
            result, record, b, stream = _r3_record(d, folder, policy, k)
            records.append(record)
            results.append(result)
            streams.append(stream)
            continue
        seed = _seed_of(d)
        items, session = _load(d / "stream.json"), _load(d / "session.json")
        meta = _load(d / "meta.json") if (d / "meta.json").exists() else None
        _need(meta is None or isinstance(meta, dict), d / "meta.json", "not an object")
        _need(isinstance(session, dict), d / "session.json", "not an object")
        stream = stream_from_stored(meta, items, seed, d)
        cell_b = b if b is not None else int(session.get("budget", meta.get("budget", 3)))
        labels = _labels(
            session, list(meta["assignment"]) if meta else list(PAPER_FAMILIES), folder.framing
        )
        result, record = replay_episode(
            session,
            stream,
            framing=folder.framing,
            skin=folder.skin,
            policy=policy,
            cost=k,
            budget=cell_b,
            labels=labels,
            where=d,
        )
        b = cell_b
        streams.append(stream)
        records.append(record)
        results.append(result)
    seeds = [r["seed"] for r in records]
    draw_budget = int(records[0]["stream"]["draw_budget"])
    source = {"kind": "paper", "family": name, "path": str(seed_dirs[0].parent)}
    if folder.surface:
        source.update(surface=folder.model)
    config = {
        "schema": SCHEMA_VERSION,
        "version": __version__,
        "framing": folder.framing,
        "policy": policy,
        "seeds": seeds,
        "cost": k,
        "budget": b,
        "skin": folder.skin,
        "protocol": "paper",
        "stream_budget": "fixed" if draw_budget == 3 else "cell",
        "actor": policy,
        "source": source,
    }
    if streams:
        config["stream_config"] = streams[0].config.model_dump()
    stats = summarize(results, records=records)
    summary = {
        "framing": folder.framing,
        "policy": policy,
        "skin": folder.skin,
        "protocol": "paper",
        "build_cost": k,
        "budget": b,
        **stats,
        "unresolved_turns": sum(int(r["unresolved_turns"]) for r in records),
        "decision_turns": sum(int(r["decision_turns"]) for r in records),
        "input_tokens": sum(int(r["tokens"].get("input_tokens", 0)) for r in records),
        "output_tokens": sum(int(r["tokens"].get("output_tokens", 0)) for r in records),
        "cost_usd": None,
        "seeds": _seed_text(seeds),
        "version": __version__,
        "schema": SCHEMA_VERSION,
        "status": "completed",
        "source": "paper",
    }
    slug_k = str(int(k)) if k.is_integer() else str(k)
    skin = "" if folder.skin == "default" else f"-{folder.skin}"
    cell_name = f"{folder.framing}-{safe_name(policy)}-k{slug_k}-b{b}{skin}--{safe_name(name)}"
    return ImportedCell(cell_name, config, records, summary, results)


def _seed_of(d: Path) -> int:
    m = re.fullmatch(r"seed_(\d+)", d.name)
    if not m:
        raise PaperImportError(f"{d}: not a seed_<n> folder")
    return int(m.group(1))


def _seed_dirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name.startswith("seed_"))


def _has_sessions(seeds: list[Path], framing: str) -> bool:
    stored = "sessions.jsonl" if framing == "r3" else "session.json"
    return bool(seeds) and (seeds[0] / stored).exists()


def _magnitude(seeds: list[Path]) -> int | None:
    config = seeds[0] / "config.json"
    if not config.exists():
        return None
    data = _load(config)
    value = data.get("magnitude") if isinstance(data, dict) else None
    return int(value) if isinstance(value, int) else None


def discover(root: Path, warn: Callable[[str], None]) -> list[tuple[list[Path], Folder, str]]:
    """The cells under a paper ``runs/`` folder (or one family folder): (seed folders, folder,
    name). Families this module does not understand are reported through ``warn``."""
    if not root.is_dir():
        raise PaperImportError(f"{root}: not a folder")
    folders = (
        [root]
        if _seed_dirs(root) or root.name.startswith("economic_surface_")
        else sorted(p for p in root.iterdir() if p.is_dir())
    )
    cells = []
    for folder in folders:
        name = folder.name
        if name.startswith("economic_surface_"):
            model = name[len("economic_surface_") :]
            if model == "reference":
                warn(f"skipped {folder}: reference policies, not model sessions")
                continue
            for rung_dir in sorted(folder.glob("R[0-9]")):
                framing = rung_dir.name.lower()
                if framing not in ("r0", "r2"):
                    warn(f"skipped {rung_dir}: unknown rung")
                    continue
                for b_dir in sorted(rung_dir.glob("B_*")):
                    for k_dir in sorted(b_dir.glob("K_*")):
                        try:
                            b, k = int(b_dir.name[2:]), float(k_dir.name[2:])
                        except ValueError:
                            warn(f"skipped {k_dir}: not B_<b>/K_<k>")
                            continue
                        seeds = _seed_dirs(k_dir)
                        if seeds:
                            cell = surface_folder(model, framing, b, k)
                            cells.append(
                                (seeds, cell, f"{name}-{rung_dir.name}-B{b}-K{k_dir.name[2:]}")
                            )
            continue
        parsed = parse_folder(name)
        seeds = _seed_dirs(folder)
        if parsed is None or not _has_sessions(seeds, parsed.framing):
            warn(f"skipped {folder}: not a run family this import understands")
            continue
        if parsed.framing == "r3":
            parsed = with_magnitude(parsed, _magnitude(seeds))
        cells.append((seeds, parsed, name))
    return cells


def write_cell(cell: ImportedCell, out: Path) -> Path:
    """Write the cell's ``config.json``, ``episodes.jsonl``, ``summary.json``, ``meta.json``."""
    d = out / cell.name
    d.mkdir(parents=True, exist_ok=True)
    write_json(d / CONFIG, cell.config)
    with (d / EPISODES).open("w", encoding="utf-8") as fh:
        for rec in cell.records:
            fh.write(json_line(rec, sort_keys=True) + "\n")
    write_json(d / SUMMARY, cell.summary)
    label = (
        f"{cell.config['policy']} {cell.config['framing']}"
        f"{'' if cell.config['skin'] == 'default' else ':' + cell.config['skin']}"
        f" B={cell.config['budget']} K={cell.config['cost']:g}"
    )
    write_json(d / META, run_metadata("allo", cell.config["seeds"][0], label))
    return d


def import_runs(root: Path, out: Path, warn: Callable[[str], None]) -> list[Path]:
    """Convert every understood family under ``root`` into cells under ``out``."""
    found = discover(Path(root), warn)
    names = policy_names([folder for _, folder, _ in found])
    return [
        write_cell(import_cell(seeds, folder, name, names[folder]), Path(out))
        for seeds, folder, name in found
    ]
