"""The Python API: run CoffeeBench or AlloBench with your own policy or model function.

This is the stable entry point for notebooks and scripts (docs/python_api.md has a worked
example); everything else under ``econbench`` may move between releases. Four functions:

- :func:`run_coffee` plays one CoffeeBench economy. A firm is played by a policy name
  (``agents=``, as in a TOML ``[agents]`` table: ``"heuristic"``, ``"openai/gpt-5.5"``), by a
  Python policy (``policies=``: a function of :class:`Feedback` returning a
  :class:`ToolCall` or ``None`` to wait, or a :class:`ScriptedPolicy` / :class:`Decider`
  object), or by a *model function* (``models=``: a function of the chat messages and tools,
  played through the same ReAct agent, prompts and recording as a real model).
- :func:`run_allo` plays one AlloBench cell (a framing × policy over seeds) with a reference
  policy name, a function of the observation text (``actor=``), your own actor factory
  (``actor_factory=``), or a model function (``model=``).
- :func:`resume_coffee` and :func:`resume_allo` continue an interrupted or stopped run,
  given the same Python policies it was played with.

Each returns a result holding the run's ``summary`` (the ``summary.json`` dict), its
``run_dir`` (a normal run directory: ``econbench report``, ``view`` and ``load_run`` read it)
and its ``frames`` (pandas DataFrames, ``econbench.runs.frames.RunFrames``).

A Python policy is recorded as ``custom:<module>.<qualified name>`` in the run's
``config.json``, never under the name the config gave that player: reports keep it apart from
real runs of that name, and ``econbench resume``/``replay`` refuse the run (the command line
cannot rebuild a Python object); resume it here with the same policy. A model function is
recorded as the model ``scripted/<function name>``: its calls are in ``record.sqlite``, so
``econbench replay`` re-drives it without the function.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from econbench.agents.models.registry import register_scripted
from econbench.agents.models.scripted import ScriptedBrain
from econbench.agents.policy import (
    Actor,
    Decider,
    Feedback,
    Input,
    Reply,
    ScriptedPolicy,
    ToolResult,
    UserText,
)
from econbench.agents.tools import ToolCall, ToolSpec

if TYPE_CHECKING:
    from econbench.allo.episodes.actors import ActorFactory, EpisodeInfo
    from econbench.runs.coffee.config import RunConfig
    from econbench.runs.frames import RunFrames

__all__ = [
    "AlloResult",
    "CoffeeResult",
    "Decider",
    "Feedback",
    "PolicyFunction",
    "Reply",
    "ScriptedPolicy",
    "TextActorFunction",
    "ToolCall",
    "resume_allo",
    "resume_coffee",
    "run_allo",
    "run_coffee",
]

PolicyFunction = Callable[[Feedback], Union[ToolCall, None]]  # noqa: UP007
"""A CoffeeBench policy as a plain function: what it learnt since its last call (the day's
observation when woken, the result of its previous call) → its next call, ``None`` to wait."""
TextActorFunction = Callable[[str], Union[str, ToolCall, list[ToolCall], Reply]]  # noqa: UP007
"""An AlloBench actor as a plain function: the text sent to it (observations; tool results as
JSON) → its reply: text (``"DECISION: KEEP"`` in R0), a tool call or calls, or a ``Reply``."""
FOCAL_FIRM = "roaster_A"


# --------------------------------------------------------------------------- results


@dataclass
class _Result:
    summary: dict[str, Any]
    run_dir: Path
    _frames: RunFrames | None = field(default=None, init=False, repr=False)

    @property
    def frames(self) -> RunFrames:
        """The run as pandas DataFrames (read from ``run_dir`` on first use)."""
        if self._frames is None:
            from econbench.runs.frames import load_run

            self._frames = load_run(self.run_dir)
        return self._frames


@dataclass
class CoffeeResult(_Result):
    """A CoffeeBench run: ``summary`` (``summary["firms"][FIRM]`` per firm), ``run_dir``, and
    ``frames`` (``.events``, ``.daily``, ``.summary``)."""

    @property
    def net_income(self) -> float:
        """The score: ``roaster_A``'s net income in dollars, from the environment's ledger."""
        return float(self.summary["firms"][FOCAL_FIRM]["net_income"])


@dataclass
class AlloResult(_Result):
    """An AlloBench cell: ``summary`` (its metrics), ``run_dir``, and ``frames``
    (``.episodes``, ``.turns``, ``.summary``)."""


# --------------------------------------------------------------------------- CoffeeBench


class FunctionPolicy(Decider):
    """A CoffeeBench policy made of a plain function of :class:`Feedback` (see
    :data:`PolicyFunction`). It keeps no state of its own, so a checkpoint saves nothing and a
    resume with the same function continues exactly; a function that keeps state elsewhere
    (a closure, a global) does not resume faithfully."""

    def __init__(self, fn: PolicyFunction) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.custom_name = qualified_name(fn)

    def decide(self, feedback: Feedback) -> ToolCall | None:
        return self.fn(feedback)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore: the function is the whole policy."""


def qualified_name(obj: Any) -> str:
    """``module.QualifiedName`` of a function (or of a callable object's class): what a run
    records a Python policy as, and what a resume checks it is given again."""
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", type(obj).__name__)
    return f"{module}.{qualname}" if module else qualname


def _as_policy(firm: str, policy: Any) -> Actor:
    """A ``policies=`` value as an actor that can be checkpointed."""
    if not hasattr(policy, "respond"):
        if not callable(policy):
            raise TypeError(f"policies[{firm!r}] is neither a policy object nor a function")
        return FunctionPolicy(policy)
    if not (callable(getattr(policy, "state_dict", None)) and hasattr(policy, "load_state")):
        raise TypeError(
            f"policies[{firm!r}] ({type(policy).__qualname__}) has no state_dict()/load_state(): "
            "a run checkpoints every policy. Subclass ScriptedPolicy, or implement both (a "
            "stateless policy returns {} and ignores what it is given)"
        )
    return policy  # type: ignore[no-any-return]


def _register_models(models: Mapping[str, ScriptedBrain], names: Mapping[str, str]) -> None:
    """Make each model function buildable as the model its firm is recorded under."""
    for firm, brain in models.items():
        register_scripted(names[firm], brain)


def _model_name(brain: Any) -> str:
    name = getattr(brain, "__name__", type(brain).__name__)
    return "scripted/" + "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _out_dir(out: str | Path | None, benchmark: str) -> Path:
    """``out``, or a fresh temporary directory (kept: it is the run's record)."""
    if out is not None:
        return Path(out)
    return Path(tempfile.mkdtemp(prefix=f"econbench-{benchmark}-"))


def run_coffee(
    *,
    seed: int | None = None,
    days: int | None = None,
    agents: Mapping[str, str] | None = None,
    policies: Mapping[str, PolicyFunction | Actor] | None = None,
    models: Mapping[str, ScriptedBrain] | None = None,
    config: str | Path | RunConfig | None = None,
    out: str | Path | None = None,
    overwrite: bool = False,
    condition: str | None = None,
) -> CoffeeResult:
    """Play one CoffeeBench economy and return its summary, directory and frames.

    Args:
        seed: The economy's seed (default: the config's, else 0).
        days: How many days to play (default: the config's, else 90).
        agents: Policy names per firm (or ``default``), over the config's ``[agents]``:
            scripted policies (``heuristic``, ``negotiating``, …) or models
            (``provider/model``, keys from the environment).
        policies: Python policies per firm: a function of ``Feedback`` returning a
            ``ToolCall`` (``None`` waits), or a ``ScriptedPolicy``/``Decider`` object with
            ``state_dict``/``load_state``. Recorded as ``custom:<qualified name>``.
        models: Model functions per firm (``fn(messages, tools)`` returning a
            ``ModelOutput``, text, a ``ToolCall`` or a list of them), played through the
            ReAct agent like a real model and recorded as ``scripted/<function name>``.
        config: A TOML run config (path) or a ``RunConfig`` to start from.
        out: The run directory (default: a new temporary directory, kept).
        overwrite: Replace a finished run already in ``out``.
        condition: What the run plays (default: the config's, else ``hardened``,
            econbench's CoffeeBench); ``paper`` plays the reference implementation's
            protocol (no economy overrides or prompt variants; scripted players ``passive``
            and ``heuristic`` only). Recorded in ``config.json`` and ``summary.json``.
    """
    from econbench.runs.coffee.config import RunConfig, load_config
    from econbench.runs.coffee.run import run_to_dir

    base = config if isinstance(config, RunConfig) else load_config(_path(config))
    data = base.model_dump(mode="json", by_alias=True)
    given_values = (("seed", seed), ("days", days), ("condition", condition))
    data.update({k: v for k, v in given_values if v is not None})
    names = {firm: _model_name(brain) for firm, brain in (models or {}).items()}
    data["agents"] = {**data["agents"], **dict(agents or {}), **names}
    run = RunConfig.model_validate(data)
    _register_models(models or {}, names)
    given = {firm: _as_policy(firm, p) for firm, p in (policies or {}).items()}
    where = _out_dir(out, "coffee")
    summary = run_to_dir(run, where, overwrite=overwrite, policies=given)
    return CoffeeResult(summary, where)


def resume_coffee(
    run_dir: str | Path,
    *,
    policies: Mapping[str, PolicyFunction | Actor] | None = None,
    models: Mapping[str, ScriptedBrain] | None = None,
    force: bool = False,
) -> CoffeeResult:
    """Continue an interrupted or stopped CoffeeBench run from its checkpoint.

    ``policies`` must play exactly the firms the run records as ``custom:…``, with policies
    of the same qualified names (``force`` accepts others, and records them); ``models``
    gives back the model functions of firms played by ``scripted/…`` models. A policy object
    continues from the state its ``state_dict`` saved at the checkpoint.
    """
    from econbench.runs.coffee.run import resume_to_dir
    from econbench.runs.resume import check_version

    where = Path(run_dir)
    check_version(where, force)
    saved = _saved_config(where)
    agents = saved.get("agents") or {}
    names = {firm: str(agents.get(firm) or agents.get("default")) for firm in models or {}}
    _register_models(models or {}, names)
    given = {firm: _as_policy(firm, p) for firm, p in (policies or {}).items()}
    summary = resume_to_dir(where, force=force, policies=given)
    return CoffeeResult(summary, where)


def _path(config: str | Path | None) -> Path | None:
    return None if config is None else Path(config)


def _saved_config(run_dir: Path) -> dict[str, Any]:
    from econbench.runs.benchmark import ResumeError

    try:
        data = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ResumeError(f"{run_dir / 'config.json'} is missing or not valid JSON") from None
    if not isinstance(data, dict):
        raise ResumeError(f"{run_dir / 'config.json'} is not a run config")
    return data


# --------------------------------------------------------------------------- AlloBench


class TextActor:
    """An AlloBench actor made of a function of text (see :data:`TextActorFunction`)."""

    def __init__(self, fn: TextActorFunction, name: str) -> None:
        self.fn = fn
        self.name = name
        self.system_prompt = ""
        self.tools: list[ToolSpec] = []
        self._calls = 0

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.system_prompt, self.tools = system_prompt or "", list(tools)

    def respond(self, inputs: Sequence[Input]) -> Reply:
        parts = []
        for item in inputs:
            if isinstance(item, UserText):
                parts.append(item.text)
            elif isinstance(item, ToolResult):
                parts.append(json.dumps(item.result, sort_keys=True, default=repr))
        answer = self.fn("\n\n".join(parts))
        if isinstance(answer, Reply):
            return answer
        if isinstance(answer, str):
            return Reply(text=answer)
        calls = [answer] if isinstance(answer, ToolCall) else list(answer)
        return Reply(tool_calls=[self._numbered(call) for call in calls])

    def _numbered(self, call: ToolCall) -> ToolCall:
        """Give a call without an id one (the runner answers each call by its id)."""
        self._calls += 1
        if call.call_id is not None:
            return call
        return ToolCall(call.name, dict(call.arguments), f"call_{self._calls}")


class TextActorFactory:
    """Makes a fresh :class:`TextActor` per episode; named after the function it plays."""

    def __init__(self, fn: TextActorFunction) -> None:
        self.fn = fn
        self.custom_name = qualified_name(fn)
        self.name = f"custom:{self.custom_name}"

    def __call__(self, episode: EpisodeInfo) -> TextActor:
        return TextActor(self.fn, self.name)


def run_allo(
    *,
    framing: str = "r1",
    policy: str = "eager",
    actor: TextActorFunction | None = None,
    actor_factory: ActorFactory | None = None,
    model: ScriptedBrain | None = None,
    seeds: int | Sequence[int] | None = None,
    cost: float = 0.0,
    budget: int = 3,
    protocol: str = "paper",
    condition: str | None = None,
    instances: str = "paper",
    out: str | Path | None = None,
    overwrite: bool = False,
) -> AlloResult:
    """Play one AlloBench cell and return its summary, directory and frames.

    Args:
        framing: The rung: ``r0`` (urn, text answers), ``r1`` (claim/skip tools), ``r2``
            (code), ``r3`` (scripts in a sandbox).
        policy: A reference policy (``eager``, ``wait:2``, ``hindsight``, …) or a model
            (``provider/model``); used when no ``actor``, ``actor_factory`` or ``model``.
        actor: A function of the text the actor is sent, returning its reply (text, tool
            calls or a ``Reply``). Recorded as ``custom:<qualified name>``.
        actor_factory: An ``econbench.allo.episodes.actors.ActorFactory`` (``name`` plus
            ``__call__(EpisodeInfo) -> Actor``) for full control. Recorded as custom.
        model: A model function (``fn(messages, tools)``), played through the LLM actor like
            a real model and recorded as ``scripted/<function name>``.
        seeds: Episode seeds, or how many of the evaluation seeds (2000…) to play (default:
            all 24).
        cost: The build charge K.
        budget: The build budget B.
        protocol: ``paper`` (default) or ``econbench`` texts and turn rules.
        condition: The paper's condition (``econbench.allo.paper.conditions``): ``frontier``
            (default), ``full-stream``, ``surface``, ``reskin``, ``no-n``, ``tool-probe``,
            ``qwen``, or ``econbench`` (the same as ``protocol="econbench"``).
        instances: R1–R3's problems: ``paper`` (the paper's draws) or ``econbench`` (its own
            generator).
        out: The cell's directory (default: a new temporary directory, kept).
        overwrite: Start afresh in ``out`` rather than continue the cell there.
    """
    from econbench.allo.episodes.runner import CellSpec
    from econbench.allo.game.stream import EVAL_SEEDS
    from econbench.runs.allo.cell import run_cell

    if sum(x is not None for x in (actor, actor_factory, model)) > 1:
        raise ValueError("give at most one of actor, actor_factory and model")
    chosen = EVAL_SEEDS[:seeds] if isinstance(seeds, int) else (seeds or EVAL_SEEDS)
    if model is not None:
        policy = register_scripted(_model_name(model), model)
    spec = CellSpec(
        framing,
        policy,
        seeds=tuple(chosen),
        cost=cost,
        budget=budget,
        protocol=protocol,
        condition=condition,
        instances=instances,
    )
    factory = TextActorFactory(actor) if actor is not None else actor_factory
    where = _out_dir(out, "allo")
    resume = _continues(where, overwrite)
    summary = run_cell(spec, where, actor_factory=factory, resume=resume)
    return AlloResult(summary, where)


def resume_allo(
    run_dir: str | Path,
    *,
    actor: TextActorFunction | None = None,
    actor_factory: ActorFactory | None = None,
    model: ScriptedBrain | None = None,
    force: bool = False,
) -> AlloResult:
    """Continue an interrupted or stopped AlloBench cell after its last complete episode.

    A cell recorded as ``custom:…`` needs the same ``actor`` (or ``actor_factory``) again;
    one played by a model function (``scripted/…``) needs its ``model``.
    """
    from econbench.allo.episodes.runner import spec_from_config
    from econbench.runs.allo.cell import run_cell
    from econbench.runs.resume import check_version

    where = Path(run_dir)
    check_version(where, force)
    spec = spec_from_config(_saved_config(where))
    if model is not None:
        register_scripted(spec.policy, model)
    factory = TextActorFactory(actor) if actor is not None else actor_factory
    summary = run_cell(spec, where, actor_factory=factory, resume=True, force=force)
    return AlloResult(summary, where)


def _continues(out: Path, overwrite: bool) -> bool:
    from econbench.runs.allo.cell import continues_cell

    return continues_cell(out, overwrite) if out.exists() and any(out.iterdir()) else False
