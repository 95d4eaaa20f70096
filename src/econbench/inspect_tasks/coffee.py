"""CoffeeBench as an Inspect task: ``inspect eval econbench/coffeebench --model …``.

One sample per seed. The evaluated firm (``-T firm=``, default ``roaster_A``) is played by
Inspect's model through econbench's own agent — the prompts, tools, compaction, call record
and checkpoints of ``econbench coffee run`` — and the other firms by the offline background
(the config's, or ``-T background=POLICY`` for all of them), or by Inspect models:
``--model-role background=MODEL`` plays every other firm, ``--model-role FIRM=MODEL`` one
firm. The score is the evaluated firm's net income from the environment's ledger (the run's
``summary.json``); the run directory is kept beside the Inspect log
(:mod:`econbench.inspect_tasks.rundirs`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import model_roles
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from pydantic import ValidationError

from econbench import api
from econbench.agents.react import IGNORED, compact_result
from econbench.coffee.config import FIRMS, format_validation, is_model, role_of
from econbench.inspect_tasks.bridge import InspectBridge
from econbench.inspect_tasks.options import TaskArgumentError, choice, positive, seeds_of
from econbench.inspect_tasks.rundirs import place_sample
from econbench.inspect_tasks.sample import (
    evaluated_bridge,
    play_sample,
    role_bridge,
    run_dir_of,
)
from econbench.inspect_tasks.tool_events import ToolRecord, record_tool_calls
from econbench.runs.coffee.config import PAPER_CONDITION, RunConfig, load_config

TASK = "coffeebench"
BACKGROUND_ROLE = "background"
FIRM_METADATA = (
    "net_income",
    "revenue",
    "gross_revenue",
    "returns",
    "idle_days",
    "messages_sent",
    "messages_read",
    "tool_calls",
    "net_income_before_closing",
    "closing_writedown",
    "closing_opex",
    "cash_end",
    "equity_end",
    "bankrupt",
    "llm_calls",
    "cost_usd",
)
"""The evaluated firm's summary fields a score carries as metadata (the closing lines among
them: net income before closing, the closing write-down and closing opex)."""


@task
def coffeebench(
    seeds: int | str | list[int] = 0,
    days: int = 90,
    firm: str = "roaster_A",
    background: str | None = None,
    condition: str | None = None,
    config: str | None = None,
    out: str | None = None,
) -> Task:
    """CoffeeBench: one economy per seed, ``firm`` played by the model under evaluation.

    Args:
        seeds: The economies' seeds: one (``3``), a list, or a text such as ``"0-4"``.
        days: Days per economy.
        firm: The firm the model plays (farmer_A … retailer_B).
        background: A scripted policy for every other firm (``bargaining``, ``heuristic``,
            …); default the config's. Models play them with ``--model-role background=…``.
        condition: ``hardened``, econbench's CoffeeBench (``paper``'s byte-for-byte request
            bodies are econbench's own providers' only).
        config: A TOML run config (``[agents]``, ``[economy]``, ``[prompts]``…).
        out: Where the run directories go (default beside the Inspect log).
    """
    chosen = seeds_of(seeds, "coffee")
    firm = choice("firm", firm, FIRMS)
    base = _base_config(config, positive("days", days), condition)
    if background is not None:
        _check_background(background, firm)
    settings = {
        "config": base.model_dump(mode="json", by_alias=True, exclude={"seed"}),
        "firm": firm,
        "background": background,
    }
    dataset = MemoryDataset(
        [
            Sample(
                id=seed,
                input=f"CoffeeBench seed {seed}, {base.days} days: play {firm}.",
                metadata={"seed": seed, "firm": firm, "days": base.days},
            )
            for seed in chosen
        ],
        name=TASK,
    )
    return Task(
        dataset=dataset,
        solver=play_coffee(base, firm, background, settings, out),
        scorer=net_income(firm),
    )


def _base_config(path: str | None, days: int, condition: str | None) -> RunConfig:
    """The run config every sample starts from (its seed set per sample)."""
    try:
        base = load_config(Path(path) if path else None)
        data = base.model_dump(mode="json", by_alias=True) | {"days": days}
        if condition is not None:
            data["condition"] = condition
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise TaskArgumentError(format_validation(exc)) from None
    except (OSError, ValueError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TaskArgumentError(f"config: {message}") from None
    if config.condition == PAPER_CONDITION:
        raise TaskArgumentError(
            "condition 'paper' sends the reference implementation's request bodies byte for "
            "byte, which only econbench's own providers do (econbench coffee run --condition "
            "paper); under Inspect play 'hardened'"
        )
    return config


def _check_background(name: str, firm: str) -> None:
    """A scripted policy every other firm can play (models come as model roles, so their
    calls are Inspect's and appear in its log)."""
    from econbench.coffee.policies import UnknownPolicyError, make_policy

    if is_model(name):
        raise TaskArgumentError(
            f"background={name!r} is a model: give it as --model-role background={name} so "
            "its calls go through Inspect"
        )
    for other in FIRMS:
        if other != firm:
            try:
                make_policy(name, role_of(other))
            except UnknownPolicyError as exc:
                raise TaskArgumentError(f"background: {exc}") from None


@solver
def play_coffee(
    base: RunConfig,
    firm: str,
    background: str | None,
    settings: dict[str, Any],
    out: str | None,
) -> Solver:
    """Play the sample's economy (or continue it from its checkpoint) into its run
    directory; the model plays ``firm``, the model roles the firms they name."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seed = int(state.metadata["seed"])
        evaluated = evaluated_bridge()
        players = _role_players(firm, background)
        bridges = [evaluated, *dict.fromkeys(players.values())]
        actors: dict[str, str] = {firm: evaluated.name}
        actors |= {other: bridge.name for other, bridge in players.items()}
        if background is not None:
            actors |= {f: background for f in FIRMS if f not in actors}
        identity = settings | {
            "model": str(evaluated.model),
            "roles": {f: str(b.model) for f, b in players.items()},
        }
        place = place_sample(TASK, identity, f"seed-{seed}", out)

        def play() -> None:
            if place.plan == "start":
                config = base.model_copy(update={"seed": seed})
                api.run_coffee(config=config, actors=actors, out=place.run_dir)
            elif place.plan == "continue":
                api.resume_coffee(place.run_dir)

        await play_sample(state, place.run_dir, bridges, play)
        await _record_last_calls(place.run_dir, bridges, actors)
        return state

    return solve


def _role_players(firm: str, background: str | None) -> dict[str, InspectBridge]:
    """The firms Inspect model roles play: ``--model-role FIRM=…`` that firm,
    ``--model-role background=…`` every other firm no role names."""
    roles = model_roles()
    if firm in roles:
        raise TaskArgumentError(f"--model-role {firm}: {firm} is played by --model itself")
    players: dict[str, InspectBridge] = {}
    for other in FIRMS:
        if other != firm and other in roles:
            bridge = role_bridge(other)
            if bridge is not None:
                players[other] = bridge
    shared = role_bridge(BACKGROUND_ROLE)
    if shared is not None:
        if background is not None:
            raise TaskArgumentError(
                "background is given twice: -T background and --model-role background"
            )
        players |= {f: shared for f in FIRMS if f != firm and f not in players}
    return players


async def _record_last_calls(
    run_dir: Path, bridges: list[InspectBridge], actors: dict[str, str]
) -> None:
    """Tool events for each model-played firm's last calls, whose results no later request
    carried back: the executed one's result from the run's event log."""
    pending = [(b, key, calls) for b in bridges for key, calls in b.unanswered().items()]
    if not pending or not (run_dir / "events.jsonl").is_file():
        return
    last = _last_results(run_dir / "events.jsonl")
    prompts = _prompt_firms(run_dir)
    records: list[ToolRecord] = []
    for bridge, key, calls in pending:
        firms = [f for f, name in actors.items() if name == bridge.name]
        owner = firms[0] if len(firms) == 1 else prompts.get(key)
        if owner is None or owner not in last:
            continue
        for index, call in enumerate(calls):
            result = compact_result(last[owner]) if index == 0 else _ignored()
            records.append(ToolRecord(call.call_id or "", call.name, call.arguments, result))
    await record_tool_calls(records)


def _ignored() -> str:
    return json.dumps({"status": "error", "error": IGNORED})


def _last_results(events: Path) -> dict[str, dict[str, Any]]:
    """Each firm's last tool result in the run's event log."""
    last: dict[str, dict[str, Any]] = {}
    with events.open(encoding="utf-8") as lines:
        for line in lines:
            if '"type":"tool_call"' in line:
                event = json.loads(line)
                last[event["firm"]] = event.get("result", {})
    return last


def _prompt_firms(run_dir: Path) -> dict[str, str]:
    """Each firm's system prompt → the firm (hardened condition; the paper's prompts are
    its reference's, and its several-firm roles are then left unmatched)."""
    from econbench.coffee.prompts import system_prompt

    try:
        config = RunConfig.model_validate_json((run_dir / "config.json").read_text("utf-8"))
        return {system_prompt(f, config, config.prompts.get(f, "standard")): f for f in FIRMS}
    except (OSError, ValueError):
        return {}


@scorer(metrics=[mean(), stderr()])
def net_income(firm: str = "roaster_A") -> Any:
    """The firm's net income in dollars, from the run's ledger (``summary.json``); revenue,
    idle days, messages, the closing lines and the run's status come as metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        run_dir = run_dir_of(state)
        try:
            summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise RuntimeError(f"{run_dir} has no readable summary.json to score") from None
        row = summary["firms"][firm]
        metadata: dict[str, Any] = {k: row.get(k) for k in FIRM_METADATA}
        metadata |= {
            "firm": firm,
            "status": summary.get("status"),
            "days": summary.get("days"),
            "days_run": summary.get("days_run"),
            "run_dir": str(run_dir),
        }
        if "stopped" in summary:
            metadata["stopped"] = summary["stopped"]
        return Score(
            value=float(row["net_income"]),
            explanation=(
                f"{firm} net income ${row['net_income']:,.2f} over {summary.get('days_run')} "
                f"days ({summary.get('status')}); run in {run_dir}"
            ),
            metadata=metadata,
        )

    return score
