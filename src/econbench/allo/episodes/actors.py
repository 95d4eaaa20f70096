"""Actors for AlloBench: whatever plays an episode, through the one actor protocol of
``econbench.agents.policy`` (the same one CoffeeBench's firms speak):

- ``Actor.start("allo", "allo", tools, system_prompt=…, max_tokens=…)`` opens a fresh
  conversation for one episode (``tools`` are ``ToolSpec``s, ``spec.openai_schema()`` gives the
  wire format; R0 has none; ``max_tokens`` is the framing's per-reply limit).
- ``Actor.respond(inputs) -> Reply`` gets what happened since its last reply — the runner
  answers every call of the previous reply itself (``ToolResult``, in call order), then
  possibly sends the next observation (``UserText``) — and answers with free text and/or tool
  calls plus token usage (``{"input_tokens": …, "output_tokens": …}``). The actor keeps its
  own history.
- Optionally ``Actor.retract_last(inputs) -> bool`` forgets the last reply and the last
  ``inputs`` inputs sent with it (True if it did): the runner uses it before re-asking a reply
  without a tool call, as the paper's harness prunes such a reply from the context.

An ``ActorFactory`` makes one actor per episode from an :class:`EpisodeInfo`. The info carries
the true stream for the harness's sake; only oracle actors (the ``hindsight`` reference) may
read it — an LLM factory must not pass it on.

:class:`PolicyActor` plays a reference policy (``econbench.allo.solvers.policies``) through
exactly the interface and information a model has: it reads the observation texts with the framing's
``ObservationReader``, keeps its own counts, names classes by first appearance (the policies
are label-invariant), builds a ``GameView`` from that memory, and answers in the framing's own
language. Only ``hindsight`` gets the real stream, and with it the true class ids; every other
policy's ``reset`` receives a *blind* stream that carries the seed (``random`` seeds from it)
but no real classes. The ``GameView``'s static facts (``n_classes``, ``budget``, ``cost``) are
the rules the system prompt states.

Where a text does not say which class an automatic turn was (the paper protocol's R1/R2
notices: "another problem of an already-claimed type"), the actor credits the occurrence to
the claimed class it has seen most often (ties: the one seen first), its best guess at the
likeliest one. Decisions that read only the current class's sightings (``eager``, ``wait``,
``hindsight``, ``never``, ``random``) do not depend on that guess; ``posterior`` and ``bayes``,
which read every class's count, can, once two or more classes are claimed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from econbench.agents.policy import Actor, Input, Reply, ToolResult, UserText
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.allo.framings.base import Framing, ObservationReader, ReaderEvent
from econbench.allo.framings.registry import ReplyStyle
from econbench.allo.game import GameView
from econbench.allo.game.families import FAMILIES, Family
from econbench.allo.game.stream import Stream, StreamConfig
from econbench.allo.solvers.policies import AlloPolicy, make_policy


def result_text(result: dict[str, Any]) -> str:
    """A tool result as JSON with sorted keys: what ``Framing.render_result`` sends by default
    (the model actor sends each framing's own rendering; the paper's framings override it)."""
    return json.dumps(result, sort_keys=True, default=repr)


@dataclass(frozen=True)
class EpisodeInfo:
    """What the harness knows about an episode when it makes the actor."""

    seed: int
    framing: Framing
    cost: float
    budget: int
    stream: Stream  # the truth: for oracle actors only


class ActorFactory(Protocol):
    """Makes a fresh actor for each episode."""

    name: str

    def __call__(self, episode: EpisodeInfo) -> Actor: ...


class FunctionActor:
    """An actor whose replies come from a function of (inputs, history): for tests and demos.

    ``history`` is every input the actor has been sent this episode, oldest first (the
    current ``inputs`` included), so a script can look back at earlier observations.
    """

    def __init__(
        self, fn: Callable[[Sequence[Input], list[Input]], Reply], name: str = "function"
    ) -> None:
        self.fn = fn
        self.name = name
        self.history: list[Input] = []
        self.system_prompt = ""
        self.tools: list[ToolSpec] = []
        self.max_tokens = 0
        self.calls = 0

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
        self.max_tokens = max_tokens or 0
        self.history = []

    def respond(self, inputs: Sequence[Input]) -> Reply:
        self.calls += 1
        self.history.extend(inputs)
        return self.fn(inputs, self.history)

    def retract_last(self, inputs: int) -> bool:
        """Forget the last ``inputs`` inputs (a function actor keeps no replies)."""
        if inputs:
            del self.history[-inputs:]
        self.retracted = getattr(self, "retracted", 0) + 1
        return True


def blind_stream(seed: int, config: StreamConfig) -> Stream:
    """A stream that carries only the seed and config: what a non-oracle policy may know."""
    return Stream(
        seed=seed,
        config=config,
        hot=tuple(range(config.n_hot)),
        classes=(0,) * config.n_tasks,
    )


_FAMILY_BY_LABEL: dict[str, Family] = {
    **{f.title: f for f in FAMILIES},  # protocol "econbench" names families by title
    **{f.name: f for f in FAMILIES},  # protocol "paper": the reader recognises the family
}


def script_name(title: str) -> str:
    """A script name for a family title: ``"Xorshift state"`` → ``"xorshift_state"``."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") or "solver"


class PolicyActor:
    """A reference policy playing through observation texts and the framing's tools."""

    def __init__(
        self,
        policy: AlloPolicy,
        framing: Framing,
        *,
        config: StreamConfig,
        cost: float,
        budget: int,
        seed: int,
        oracle: Stream | None = None,
    ) -> None:
        self.policy = policy
        self.name = policy.name
        self.style: ReplyStyle = framing.reply_style  # declared by the framing (its registry)
        self.reader: ObservationReader = framing.reader()
        self.config = config
        self.cost = float(cost)
        self.budget = budget
        self.oracle = oracle
        policy.reset(oracle if oracle is not None else blind_stream(seed, config))
        self._order: list[str] = []  # labels by first appearance
        self._counts: dict[str, int] = {}
        self._first_seen: dict[str, int] = {}
        self._history: list[str] = []
        self._built: set[str] = set()
        self._pending_build: str | None = None
        self._writes = 0  # R3: successful write_script calls (the paper's texts omit the budget)
        self._answers_all = self.style == "build" and framing.protocol == "paper"
        self._routine: list[str] = []  # R3: the steps still to take this turn
        self._event: ReaderEvent | None = None
        self._calls = 0
        self.system_prompt = ""
        self.tools: list[ToolSpec] = []

    # -- the Actor protocol ---------------------------------------------------------------
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
        decision: ReaderEvent | None = None
        last_result: ToolResult | None = None
        for item in inputs:
            if isinstance(item, ToolResult):
                last_result = item
                self._absorb_result(item)
            elif isinstance(item, UserText):
                for event in self.reader.read(item.text):
                    self._see(event)
                    if not event.auto:
                        decision = event
        if decision is not None:
            self._event = decision
            return self._decide(decision)
        return self._continue(last_result)

    # -- memory ---------------------------------------------------------------------------
    def _see(self, event: ReaderEvent) -> None:
        t = event.number - 1
        if t != len(self._history):
            raise RuntimeError(f"observation skipped from turn {len(self._history)} to {t}")
        label = event.label if event.label is not None else self._likeliest_built()
        if label not in self._counts:
            self._order.append(label)
            self._counts[label] = 0
            self._first_seen[label] = t
        self._counts[label] += 1
        self._history.append(label)
        if event.auto:
            self._built.add(label)

    def _likeliest_built(self) -> str:
        """The claimed class an unnamed automatic turn is credited to (see the module doc)."""
        built = [x for x in self._order if x in self._built]
        if not built:
            raise RuntimeError("an automatic turn before any class was claimed")
        return max(built, key=lambda x: self._counts[x])  # max keeps the first of a tie

    def _absorb_result(self, item: ToolResult) -> None:
        ok = _succeeded(item.result)
        self._writes += ok and item.name == "write_script"
        if ok and item.name in ("claim_solver", "write_script") and self._pending_build:
            self._built.add(self._pending_build)
            self._pending_build = None

    def _ids(self) -> list[int]:
        """Class id of each label (by first appearance); the true ids for an oracle."""
        n = self.config.n_classes
        if self.oracle is None:
            return list(range(n))
        seen: list[int] = []
        for c in self.oracle.classes:
            if c not in seen:
                seen.append(c)
        return seen + [c for c in range(n) if c not in seen]

    def view(self, event: ReaderEvent) -> GameView:
        """The ``GameView`` this actor reconstructs from what it has read."""
        ids = self._ids()
        cls_of = {label: ids[i] for i, label in enumerate(self._order)}
        n = self.config.n_classes
        counts = [0] * n
        first_seen: list[int | None] = [None] * n
        for label, c in cls_of.items():
            counts[c] = self._counts[label]
            first_seen[c] = self._first_seen[label]
        return GameView(
            t=event.number - 1,
            n_tasks=event.n_tasks,
            n_classes=n,
            budget=self.budget,
            budget_left=(
                event.budget_left if event.budget_left is not None else self.budget - self._writes
            ),
            cost=self.cost,
            cls=cls_of[event.label],
            sighting=self._counts[event.label],
            counts=tuple(counts),
            first_seen=tuple(first_seen),
            built=frozenset(cls_of[x] for x in self._built),
            history=tuple(cls_of[x] for x in self._history),
        )

    # -- answering ------------------------------------------------------------------------
    def _call(self, tool_name: str, **arguments: Any) -> ToolCall:
        self._calls += 1
        return ToolCall(name=tool_name, arguments=arguments, call_id=f"call_{self._calls}")

    def _decide(self, event: ReaderEvent) -> Reply:
        if self.style == "build" and event.label in self._built:  # paper R3: reuse the script
            self._routine = ["submit"]
            name = script_name(event.label)
            run = self._call("run_script", name=name, inputs=event.inputs or {})
            return Reply(text=f"{event.label}: running my script.", tool_calls=[run])
        view = self.view(event)
        commit = bool(self.policy.decide(view))
        label = event.label
        reason = (
            f"{label}: seen {view.sighting} time(s) in {view.t + 1} of {view.n_tasks}; "
            f"{view.budget_left} left; policy {self.name} says {'build' if commit else 'wait'}."
        )
        if self.style == "text":
            if commit:
                self._built.add(label)
            return Reply(text=f"{reason}\nDECISION: {'KEEP' if commit else 'PASS'}")
        if self.style == "keep":  # the probe: the urn decided by a call of ``keep`` or ``pass``
            if commit:
                self._built.add(label)
            return Reply(text=reason, tool_calls=[self._call("keep" if commit else "pass")])
        if not commit:
            if self._answers_all:  # paper R3 has no skip: an answer that is never right
                return Reply(text=f"{reason}\nNo script.", tool_calls=[self._answer(-1)])
            if self.style == "build":
                return Reply(text=f"{reason}\nSkipping this task.")
            return Reply(text=reason, tool_calls=[self._call("skip_solver")])
        self._pending_build = label
        family = _FAMILY_BY_LABEL[label]
        if self.style == "claim":
            return Reply(text=reason, tool_calls=[self._call("claim_solver")])
        if self.style == "code":
            call = self._call("claim_solver", code=family.reference_code)
            return Reply(text=reason, tool_calls=[call])
        self._routine = ["run", "submit"]
        call = self._call("write_script", name=script_name(label), code=family.reference_code)
        return Reply(text=reason, tool_calls=[call])

    def _continue(self, result: ToolResult | None) -> Reply:
        """R3's builder after a tool result: run the script, then submit its output."""
        event = self._event
        if result is None or event is None or not self._routine:
            return Reply(text="Nothing more to do for this task.")
        ok = _succeeded(result.result)
        step = self._routine.pop(0)
        if step == "run" and ok:
            name = script_name(event.label)
            return Reply(
                tool_calls=[self._call("run_script", name=name, inputs=event.inputs or {})]
            )
        output = _exact_output(result.result)
        if step == "submit" and ok and result.result.get("ok", True) and output is not None:
            self._routine.clear()
            return Reply(tool_calls=[self._answer(output)])
        self._routine.clear()
        return Reply(text=f"The previous step failed ({result.result}); ending this task.")

    def _answer(self, value: int) -> ToolCall:
        """``submit_answer`` with ``value`` under the parameter name its schema gives."""
        spec = next((t for t in self.tools if t.name == "submit_answer"), None)
        names = list(spec.parameters.get("properties", {})) if spec is not None else []
        return self._call("submit_answer", **{names[0] if names else "answer": value})


def _exact_output(result: dict[str, Any]) -> int | None:
    """The integer a successful run produced: econbench's ``output``/``return_value`` when it is
    an int; under the paper's R3 the number on the ``ANSWER:`` line of ``stdout`` (exact, where
    the paper's ``return_value`` is a float that rounds answers beyond 2^53)."""
    value = result.get("output", result.get("return_value"))
    if type(value) is int:
        return value
    found = re.fullmatch(r"ANSWER:\s*(-?\d+)", str(result.get("stdout") or "").strip())
    if found:
        return int(found.group(1))
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return None


def _succeeded(result: dict[str, Any]) -> bool:
    """Whether a tool result reports success (econbench's ``status``, the paper's ``ok``)."""
    if "status" in result:
        return result["status"] == "success"
    return result.get("ok") is True


class PolicyActorFactory:
    """Makes a :class:`PolicyActor` per episode; the policy object is built once and reset."""

    def __init__(
        self, spec: str, config: StreamConfig, cost: float = 0.0, budget: int | None = None
    ) -> None:
        self.name = spec
        self.config = config
        self.cost = float(cost)
        self.budget = config.budget if budget is None else budget
        self.policy = make_policy(spec, config, cost=cost, budget=self.budget)
        self.oracle = self.policy.name.split(":")[0] == "hindsight" or spec == "hindsight"

    def __call__(self, episode: EpisodeInfo) -> PolicyActor:
        return PolicyActor(
            self.policy,
            episode.framing,
            config=self.config,
            cost=episode.cost,
            budget=episode.budget,
            seed=episode.seed,
            oracle=episode.stream if self.oracle else None,
        )
