"""The AlloBench game (docs/allobench.md §2): a pure state machine over one stream, framing-blind.

At each turn the current task's class either already has a tool (collected automatically, no
decision) or, while budget remains, the actor decides COMMIT (budget −1, this and every later
occurrence of the class are collected, net −K) or PASS (nothing). When the budget reaches 0 the
remaining turns are scored automatically and the session ends early.

Choices where the spec is silent:

- ``Commit.collects`` is what the build collects over the whole stream, ``n_c − sighting + 1``,
  even when the session later ends early (remaining turns are still scored).
- ``charge_rebuild`` (R3 overwrite) may be called while a turn is pending; it charges one budget
  unit and K, and if that empties the budget the pending turn and all later ones are scored
  automatically (a pending occurrence of a tooled class is collected).
- ``hot_never_tooled`` counts hot classes without a tool at the end, whether or not they occurred.
- A game built with ``budget == 0`` is over at once (everything scored automatically: 0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from econbench.allo.game.stream import Stream


@dataclass(frozen=True)
class Turn:
    """The current turn, as the game sees it."""

    t: int
    cls: int
    sighting: int  # 1-based: occurrences of cls at turns <= t
    has_tool: bool  # collected automatically, no decision
    needs_decision: bool  # not has_tool and budget_left > 0


@dataclass(frozen=True)
class GameView:
    """Everything a (non-clairvoyant) policy may know at a decision."""

    t: int
    n_tasks: int
    n_classes: int
    budget: int
    budget_left: int
    cost: float
    cls: int
    sighting: int
    counts: tuple[int, ...]  # per class: sightings at turns <= t
    first_seen: tuple[int | None, ...]  # per class: turn of first sighting, or None
    built: frozenset[int]
    history: tuple[int, ...]  # classes at turns 0..t


@dataclass
class Commit:
    """One tool build."""

    t: int
    cls: int
    sighting: int
    first_sight: bool
    trap: bool
    collects: int


@dataclass
class TurnRecord:
    """What happened at one turn (for logs and framings)."""

    t: int
    cls: int
    sighting: int
    auto: bool  # scored without a decision (has a tool, or the budget was spent)
    commit: bool
    collected: bool


@dataclass
class EpisodeResult:
    """The scored outcome of one episode."""

    seed: int
    cost: float
    budget: int
    n_tasks: int
    collected: int
    commits: list[Commit]
    utility: float
    opt: float
    trap_commits: int
    unused_budget: int
    hot_never_tooled: int
    rebuilds: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeResult:
        d = dict(data)
        d["commits"] = [Commit(**c) for c in d["commits"]]
        return cls(**d)

    @property
    def first_sight_commits(self) -> int:
        return sum(c.first_sight for c in self.commits)


def hindsight_opt(stream: Stream, cost: float = 0.0, budget: int | None = None) -> float:
    """OPT: the best ≤ B classes by count, each worth max(n_c − K, 0)."""
    b = stream.config.budget if budget is None else budget
    counts = sorted(stream.counts(), reverse=True)[: max(b, 0)]
    return float(sum(max(n - cost, 0.0) for n in counts))


@dataclass
class Game:
    """The allocation game over one stream, with build charge ``cost`` (K) and ``budget`` (B)."""

    stream: Stream
    cost: float = 0.0
    budget: int | None = None
    t: int = field(init=False)
    budget_left: int = field(init=False)
    done: bool = field(init=False)

    def __post_init__(self) -> None:
        if self.budget is None:
            self.budget = self.stream.config.budget
        if self.budget < 0 or self.cost < 0:
            raise ValueError("budget and cost must be non-negative")
        cfg = self.stream.config
        self._classes = self.stream.classes
        self._totals = self.stream.counts()
        self.t = 0
        self.budget_left = self.budget
        self.done = False
        self.collected = 0
        self.commits: list[Commit] = []
        self.records: list[TurnRecord] = []
        self.rebuilds = 0
        self.built: set[int] = set()
        self._counts = [0] * cfg.n_classes
        self._first_seen: list[int | None] = [None] * cfg.n_classes
        self._reveal()
        if self.budget_left == 0:
            self._finish()

    # -- internals ------------------------------------------------------------------------
    def _reveal(self) -> None:
        """Count the class of turn ``t`` as sighted."""
        if self.t < len(self._classes):
            c = self._classes[self.t]
            self._counts[c] += 1
            if self._first_seen[c] is None:
                self._first_seen[c] = self.t

    def _advance(self) -> None:
        self.t += 1
        if self.t >= len(self._classes):
            self.done = True
        else:
            self._reveal()

    def _finish(self) -> None:
        """Score the pending turn and every later one automatically; end the session."""
        while not self.done:
            c = self._classes[self.t]
            got = c in self.built
            self.collected += got
            self.records.append(TurnRecord(self.t, c, self._counts[c], True, False, got))
            self._advance()

    # -- public API -----------------------------------------------------------------------
    def turn(self) -> Turn:
        if self.done:
            raise RuntimeError("the game is over")
        c = self._classes[self.t]
        has_tool = c in self.built
        return Turn(
            t=self.t,
            cls=c,
            sighting=self._counts[c],
            has_tool=has_tool,
            needs_decision=not has_tool and self.budget_left > 0,
        )

    def view(self) -> GameView:
        if self.done:
            raise RuntimeError("the game is over")
        c = self._classes[self.t]
        cfg = self.stream.config
        return GameView(
            t=self.t,
            n_tasks=cfg.n_tasks,
            n_classes=cfg.n_classes,
            budget=int(self.budget or 0),
            budget_left=self.budget_left,
            cost=self.cost,
            cls=c,
            sighting=self._counts[c],
            counts=tuple(self._counts),
            first_seen=tuple(self._first_seen),
            built=frozenset(self.built),
            history=self._classes[: self.t + 1],
        )

    def step(self, commit: bool) -> None:
        """Resolve the current turn (COMMIT or PASS) and advance."""
        turn = self.turn()
        if turn.has_tool:
            if commit:
                raise ValueError(f"class {turn.cls} already has a tool; commit must be False")
            self.collected += 1
            self.records.append(TurnRecord(turn.t, turn.cls, turn.sighting, True, False, True))
        elif commit:
            self.budget_left -= 1
            self.built.add(turn.cls)
            self.collected += 1
            self.commits.append(
                Commit(
                    t=turn.t,
                    cls=turn.cls,
                    sighting=turn.sighting,
                    first_sight=turn.sighting == 1,
                    trap=not self.stream.is_hot(turn.cls),
                    collects=self._totals[turn.cls] - turn.sighting + 1,
                )
            )
            self.records.append(TurnRecord(turn.t, turn.cls, turn.sighting, False, True, True))
        else:
            self.records.append(TurnRecord(turn.t, turn.cls, turn.sighting, False, False, False))
        self._advance()
        if self.budget_left == 0:
            self._finish()

    def charge_rebuild(self) -> None:
        """R3: an overwrite of an existing script spends one budget unit and K again."""
        if self.done:
            raise RuntimeError("the game is over")
        if self.budget_left <= 0:
            raise RuntimeError("no budget left for a rebuild")
        self.budget_left -= 1
        self.rebuilds += 1
        if self.budget_left == 0:
            self._finish()

    def play(self, decide: Any) -> EpisodeResult:
        """Run to the end, asking ``decide(view) -> bool`` at every decision turn."""
        while not self.done:
            turn = self.turn()
            self.step(bool(decide(self.view())) if turn.needs_decision else False)
        return self.result()

    @property
    def utility(self) -> float:
        return self.collected - self.cost * (len(self.commits) + self.rebuilds)

    def result(self) -> EpisodeResult:
        b = int(self.budget or 0)
        return EpisodeResult(
            seed=self.stream.seed,
            cost=self.cost,
            budget=b,
            n_tasks=self.stream.config.n_tasks,
            collected=self.collected,
            commits=list(self.commits),
            utility=self.utility,
            opt=hindsight_opt(self.stream, self.cost, b),
            trap_commits=sum(c.trap for c in self.commits),
            unused_budget=self.budget_left,
            hot_never_tooled=sum(1 for h in self.stream.hot if h not in self.built),
            rebuilds=self.rebuilds,
        )
