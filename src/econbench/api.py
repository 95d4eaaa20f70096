"""The Python API: run CoffeeBench or AlloBench with your own actor: a policy or a model.

This is the stable entry point for notebooks and scripts (docs/python_api.md has a worked
example); everything else under ``econbench`` may move between releases. Four functions:

- :func:`run_coffee` plays one CoffeeBench economy; :func:`run_allo` plays one AlloBench cell
  (a framing × actor over seeds).
- :func:`resume_coffee` and :func:`resume_allo` continue an interrupted or stopped run,
  given the same Python actors it was played with.

Who plays is said one way in both benchmarks: ``actors={firm: actor}`` (CoffeeBench, one per
firm, ``"default"`` for the rest) or ``actor=`` (AlloBench). An actor is

- a **name**: a scripted policy (``"heuristic"``, ``"eager"``, ``"wait:2"``) or a model
  (``"openai/gpt-5.5"``), as in a TOML config or on the command line;
- a **Python policy**: a function (CoffeeBench: of :class:`Feedback`, returning a
  :class:`ToolCall` or ``None`` to wait; AlloBench: of the text sent, returning text, calls
  or a :class:`Reply`), or an object (CoffeeBench: a :class:`ScriptedPolicy` / :class:`Decider`;
  AlloBench: an ``ActorFactory``);
- a **model function** wrapped in :class:`ModelFunction`: ``fn(messages, tools)``, played
  through the same ReAct agent, prompts and recording as a real model.

The earlier keywords (``agents=``, ``policies=``, ``models=``; ``policy=``,
``actor_factory=``, ``model=``) still work and warn (``DeprecationWarning``).

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
import types
import warnings
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
    "AlloActor",
    "AlloResult",
    "CoffeeActor",
    "CoffeeResult",
    "Decider",
    "Feedback",
    "ModelFunction",
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


@dataclass(frozen=True)
class ModelFunction:
    """A model function, ``fn(messages, tools)`` returning a ``ModelOutput``, a text, a
    :class:`ToolCall` or a list of them: it plays as a model does (the ReAct agent, its
    prompts, compaction and ``record.sqlite``) and is recorded as ``scripted/<fn name>``.

    Wrapping says what a bare function cannot: that it answers chat messages, not the
    observations a Python policy reads."""

    fn: ScriptedBrain

    @property
    def name(self) -> str:
        """The model name the run records: ``scripted/<function name>``."""
        name = getattr(self.fn, "__name__", type(self.fn).__name__)
        return "scripted/" + "".join(c if c.isalnum() or c in "-_." else "_" for c in name)

    def register(self, name: str | None = None) -> str:
        """Make this function buildable as the model ``name`` (default :attr:`name`)."""
        return register_scripted(name or self.name, self.fn)


CoffeeActor = Union[str, PolicyFunction, Actor, ModelFunction]  # noqa: UP007
"""Who plays a CoffeeBench firm: a policy or model name, a Python policy, a model function."""
AlloActor = Union[str, TextActorFunction, "ActorFactory", ModelFunction]
"""Who plays an AlloBench cell: a policy or model name, a text function, an actor factory,
or a model function."""


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated: say who plays with {new}", DeprecationWarning, stacklevel=3
    )


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
    """A Python policy as an actor that can be checkpointed."""
    if not hasattr(policy, "respond"):
        if not callable(policy):
            raise TypeError(
                f"actors[{firm!r}] is not a name, a Python policy (a function or an object "
                f"with respond), or a ModelFunction: got {type(policy).__qualname__}"
            )
        return FunctionPolicy(policy)
    if not (callable(getattr(policy, "state_dict", None)) and hasattr(policy, "load_state")):
        raise TypeError(
            f"actors[{firm!r}] ({type(policy).__qualname__}) has no state_dict()/load_state(): "
            "a run checkpoints every policy. Subclass ScriptedPolicy, or implement both (a "
            "stateless policy returns {} and ignores what it is given)"
        )
    return policy  # type: ignore[no-any-return]


def _coffee_actors(
    actors: Mapping[str, CoffeeActor] | None,
    agents: Mapping[str, str] | None,
    policies: Mapping[str, Any] | None,
    models: Mapping[str, Any] | None,
) -> dict[str, CoffeeActor]:
    """``actors``, with the deprecated keywords folded in (a firm named twice is an error)."""
    merged: dict[str, CoffeeActor] = dict(actors or {})
    old = (("agents", agents, str), ("policies", policies, None), ("models", models, "model"))
    for keyword, given, kind in old:
        if given is None:
            continue
        _deprecated(f"{keyword}=", "actors={firm: actor}")
        for firm, value in given.items():
            if firm in merged:
                raise ValueError(f"{firm!r} is given twice (actors= and {keyword}=)")
            merged[firm] = ModelFunction(value) if kind == "model" else value
    return merged


def _split_coffee_actors(
    actors: Mapping[str, CoffeeActor],
) -> tuple[dict[str, str], dict[str, ModelFunction], dict[str, Actor]]:
    """Names (for the config's ``[agents]``), model functions and Python policies."""
    names: dict[str, str] = {}
    models: dict[str, ModelFunction] = {}
    policies: dict[str, Actor] = {}
    for firm, actor in actors.items():
        if isinstance(actor, str):
            names[firm] = actor
        elif firm == "default":
            raise TypeError(
                "actors['default'] must be a name (a policy or a model): a Python actor "
                "plays the one firm it is given for"
            )
        elif isinstance(actor, ModelFunction):
            models[firm] = actor
        else:
            policies[firm] = _as_policy(firm, actor)
    return names, models, policies


def _out_dir(out: str | Path | None, benchmark: str) -> Path:
    """``out``, or a fresh temporary directory (kept: it is the run's record)."""
    if out is not None:
        return Path(out)
    return Path(tempfile.mkdtemp(prefix=f"econbench-{benchmark}-"))


def run_coffee(
    *,
    seed: int | None = None,
    days: int | None = None,
    actors: Mapping[str, CoffeeActor] | None = None,
    config: str | Path | RunConfig | None = None,
    out: str | Path | None = None,
    overwrite: bool = False,
    condition: str | None = None,
    agents: Mapping[str, str] | None = None,
    policies: Mapping[str, PolicyFunction | Actor] | None = None,
    models: Mapping[str, ScriptedBrain] | None = None,
) -> CoffeeResult:
    """Play one CoffeeBench economy and return its summary, directory and frames.

    Args:
        seed: The economy's seed (default: the config's, else 0).
        days: How many days to play (default: the config's, else 90).
        actors: Who plays, per firm (``"default"`` for the firms not named), over the
            config's ``[agents]``: a name — a scripted policy (``heuristic``, ``negotiating``,
            …) or a model (``provider/model``, keys from the environment); a Python policy — a
            function of ``Feedback`` returning a ``ToolCall`` (``None`` waits), or a
            ``ScriptedPolicy``/``Decider`` object with ``state_dict``/``load_state``,
            recorded as ``custom:<qualified name>``; or a ``ModelFunction``, played through
            the ReAct agent like a real model and recorded as ``scripted/<function name>``.
        config: A TOML run config (path) or a ``RunConfig`` to start from.
        out: The run directory (default: a new temporary directory, kept).
        overwrite: Replace a finished run already in ``out``.
        condition: What the run plays (default: the config's, else ``hardened``,
            econbench's CoffeeBench); ``paper`` plays the reference implementation's
            protocol (no economy overrides or prompt variants; scripted players ``passive``
            and ``heuristic`` only). Recorded in ``config.json`` and ``summary.json``.
        agents: Deprecated: names, now given in ``actors``.
        policies: Deprecated: Python policies, now given in ``actors``.
        models: Deprecated: model functions, now ``actors={firm: ModelFunction(fn)}``.
    """
    from econbench.runs.coffee.config import RunConfig, load_config
    from econbench.runs.coffee.run import run_to_dir

    who = _coffee_actors(actors, agents, policies, models)
    names, model_fns, given = _split_coffee_actors(who)
    base = config if isinstance(config, RunConfig) else load_config(_path(config))
    data = base.model_dump(mode="json", by_alias=True)
    given_values = (("seed", seed), ("days", days), ("condition", condition))
    data.update({k: v for k, v in given_values if v is not None})
    model_names = {firm: fn.name for firm, fn in model_fns.items()}
    data["agents"] = {**data["agents"], **names, **model_names}
    run = RunConfig.model_validate(data)
    for fn in model_fns.values():
        fn.register()
    where = _out_dir(out, "coffee")
    summary = run_to_dir(run, where, overwrite=overwrite, policies=given)
    return CoffeeResult(summary, where)


def resume_coffee(
    run_dir: str | Path,
    *,
    actors: Mapping[str, PolicyFunction | Actor | ModelFunction] | None = None,
    force: bool = False,
    policies: Mapping[str, PolicyFunction | Actor] | None = None,
    models: Mapping[str, ScriptedBrain] | None = None,
) -> CoffeeResult:
    """Continue an interrupted or stopped CoffeeBench run from its checkpoint.

    ``actors`` gives back the Python actors the run cannot rebuild: exactly the firms it
    records as ``custom:…``, with policies of the same qualified names (``force`` accepts
    others, and records them), and a ``ModelFunction`` for each firm played by a
    ``scripted/…`` model. A policy object continues from the state its ``state_dict`` saved
    at the checkpoint. Names are not given: a run's named actors are in its config.
    (``policies=`` and ``models=`` are the deprecated spellings.)
    """
    from econbench.runs.coffee.run import resume_to_dir
    from econbench.runs.resume import check_version

    who = _coffee_actors(actors, None, policies, models)
    named = sorted(firm for firm, actor in who.items() if isinstance(actor, str))
    if named:
        raise TypeError(
            f"resume_coffee takes Python actors only; {', '.join(named)} given by name "
            "(a resumed run's named actors come from its config.json)"
        )
    _names, model_fns, given = _split_coffee_actors(who)
    where = Path(run_dir)
    check_version(where, force)
    saved = _saved_config(where)
    agents = saved.get("agents") or {}
    for firm, fn in model_fns.items():
        fn.register(str(agents.get(firm) or agents.get("default")))
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


def _allo_actor(
    actor: AlloActor | None,
    policy: str | None,
    actor_factory: ActorFactory | None,
    model: ScriptedBrain | None,
) -> AlloActor | None:
    """``actor``, or the one deprecated keyword given instead of it."""
    old = (("policy=", policy), ("actor_factory=", actor_factory), ("model=", model))
    given = [(keyword, value) for keyword, value in old if value is not None]
    for keyword, _value in given:
        _deprecated(keyword, "actor=")
    if len(given) + (actor is not None) > 1:
        named = [k for k, _ in given] + (["actor="] if actor is not None else [])
        raise ValueError(f"say who plays once: {' and '.join(named)} were both given")
    if actor is not None or not given:
        return actor
    keyword, value = given[0]
    return ModelFunction(value) if keyword == "model=" else value


def _name_and_factory(actor: AlloActor) -> tuple[str | None, ActorFactory | None]:
    """The cell's actor name (``None``: the factory names it) and the factory that plays it."""
    if isinstance(actor, str):
        return actor, None
    if isinstance(actor, ModelFunction):
        return actor.register(), None
    if not callable(actor):
        raise TypeError(
            "actor is not a name, a function of text, an ActorFactory or a ModelFunction: "
            f"got {type(actor).__qualname__}"
        )
    plain = isinstance(actor, (types.FunctionType, types.MethodType, types.BuiltinFunctionType))
    if not plain and isinstance(getattr(actor, "name", None), str):
        return None, actor  # an ActorFactory: a callable object with a name
    return None, TextActorFactory(actor)


def run_allo(
    *,
    framing: str = "r1",
    actor: AlloActor | None = None,
    seeds: int | Sequence[int] | None = None,
    cost: float = 0.0,
    budget: int = 3,
    protocol: str = "paper",
    condition: str | None = None,
    instances: str = "paper",
    out: str | Path | None = None,
    overwrite: bool = False,
    policy: str | None = None,
    actor_factory: ActorFactory | None = None,
    model: ScriptedBrain | None = None,
) -> AlloResult:
    """Play one AlloBench cell and return its summary, directory and frames.

    Args:
        framing: The rung: ``r0`` (urn, text answers), ``r1`` (claim/skip tools), ``r2``
            (code), ``r3`` (scripts in a sandbox).
        actor: Who plays (default ``"eager"``): a name — a reference policy (``eager``,
            ``wait:2``, ``hindsight``, …) or a model (``provider/model``); a function of the
            text the actor is sent, returning its reply (text, tool calls or a ``Reply``),
            recorded as ``custom:<qualified name>``; an ``ActorFactory`` (``name`` plus
            ``__call__(EpisodeInfo) -> Actor``) for full control, recorded as custom; or a
            ``ModelFunction``, played through the LLM actor like a real model and recorded
            as ``scripted/<function name>``.
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
        policy: Deprecated: a name, now ``actor=``.
        actor_factory: Deprecated: now ``actor=``.
        model: Deprecated: now ``actor=ModelFunction(fn)``.
    """
    from econbench.allo.episodes.runner import CellSpec
    from econbench.allo.game.stream import EVAL_SEEDS
    from econbench.runs.allo.cell import run_cell

    who = _allo_actor(actor, policy, actor_factory, model)
    name, factory = _name_and_factory("eager" if who is None else who)
    chosen = EVAL_SEEDS[:seeds] if isinstance(seeds, int) else (seeds or EVAL_SEEDS)
    spec = CellSpec(
        framing,
        name or "eager",
        seeds=tuple(chosen),
        cost=cost,
        budget=budget,
        protocol=protocol,
        condition=condition,
        instances=instances,
    )
    where = _out_dir(out, "allo")
    resume = _continues(where, overwrite)
    summary = run_cell(spec, where, actor_factory=factory, resume=resume)
    return AlloResult(summary, where)


def resume_allo(
    run_dir: str | Path,
    *,
    actor: TextActorFunction | ActorFactory | ModelFunction | None = None,
    force: bool = False,
    actor_factory: ActorFactory | None = None,
    model: ScriptedBrain | None = None,
) -> AlloResult:
    """Continue an interrupted or stopped AlloBench cell after its last complete episode.

    A cell recorded as ``custom:…`` needs the same ``actor`` (a function of text or an
    ``ActorFactory``) again; one played by a model function (``scripted/…``) needs its
    ``ModelFunction``. (``actor_factory=`` and ``model=`` are the deprecated spellings.)
    """
    from econbench.allo.episodes.runner import spec_from_config
    from econbench.runs.allo.cell import run_cell
    from econbench.runs.resume import check_version

    who = _allo_actor(actor, None, actor_factory, model)
    if isinstance(who, str):
        raise TypeError(
            "resume_allo takes a Python actor only (a named actor comes from the cell's "
            "config.json)"
        )
    where = Path(run_dir)
    check_version(where, force)
    spec = spec_from_config(_saved_config(where))
    factory = None
    if isinstance(who, ModelFunction):
        who.register(spec.policy)
    elif who is not None:
        factory = _name_and_factory(who)[1]
    summary = run_cell(spec, where, actor_factory=factory, resume=True, force=force)
    return AlloResult(summary, where)


def _continues(out: Path, overwrite: bool) -> bool:
    from econbench.runs.allo.cell import continues_cell

    return continues_cell(out, overwrite) if out.exists() and any(out.iterdir()) else False
