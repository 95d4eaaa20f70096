"""The AlloBench game (docs/allobench.md §1–§2): the task stream, the problem families, each
turn's instances, the framing-blind state machine and the scores of a set of episodes."""

from econbench.allo.game.core import (
    Commit,
    EpisodeResult,
    Game,
    GameView,
    Turn,
    TurnRecord,
    hindsight_opt,
)

__all__ = ["Commit", "EpisodeResult", "Game", "GameView", "Turn", "TurnRecord", "hindsight_opt"]
