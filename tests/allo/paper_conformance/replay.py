"""Play a fixture file's episodes through econbench, with the same scripted decisions, and
record what econbench sends.

``TABLE`` says, for every fixture file, which econbench condition plays it (the names of
``econbench.allo.paper.conditions``), at which rung, with which model, and what else the paper's
command line set that is not the condition's (a framing option, a model setting the user
gives). The skin follows each episode's ``vocab``, B and K its ``cell``; the stream is
``generate_stream(seed, StreamConfig())`` (the paper's generator). ``econbench_episode`` is the
one place that turns an entry and an episode into econbench objects.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tests.allo.paper_conformance.fixture import FixtureEpisode, Unit, kind_of
from tests.allo.paper_conformance.player import Player
from tests.allo.paper_conformance.stub import Recorded, RecordingStub

HAIKU = "anthropic/claude-haiku-4-5-20251001"
OPUS = "anthropic/claude-opus-4-8"
GPT = "openai/gpt-5.4-mini-2026-03-17"
QWEN = "openai-compatible/qwen-rl-base-q8:latest"
QWEN_RUN1 = "openai-compatible/qwen-rl-urn-final:latest"
QWEN_PILOT = "openai-compatible/qwen-rl-urn-pilot:latest"

SKIN_OF_VOCAB = MappingProxyType(
    {"ball": "default", "treasure_chest": "chest", "quiver": "quiver", "cauldron": "cauldron"}
)
"""The paper's ``--vocab`` names and econbench's skins."""

OLLAMA = MappingProxyType({"compat": "ollama"})
"""The Qwen runs went to Ollama's OpenAI-compatible endpoint (a setting of the server)."""


def _frozen(mapping: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Entry:
    """How econbench plays one fixture file."""

    condition: str
    rung: str
    model: str
    options: Mapping[str, Any] = field(default_factory=_frozen)
    """Framing options beyond the condition's: the paper's flags that are not part of it."""
    settings: Mapping[str, Any] = field(default_factory=_frozen)
    """Model settings a user gives (``ModelSettings`` fields), besides the stub's URL."""
    default_seeds: tuple[int, ...] | None = None
    """The seeds the default test run replays (None: all the file's); ``ECONBENCH_CONFORMANCE
    =all`` replays every seed of every file."""


R3_SEEDS = (2000, 2001, 2002, 2003, 5000)
"""R3 files replay these seeds by default: each script run costs 50-90 ms in the sandbox and
the four R3 files hold 1,587 runs (1,129 of them in the full-stream Haiku file)."""
R3_FULL_STREAM_SEEDS = (2000, 5000)
"""The full-stream Haiku R3 asks every problem (110 requests an episode): two seeds."""

TABLE: Mapping[str, Entry] = MappingProxyType(
    {
        # --- the frontier ladder (the default condition)
        "r0_urn_haiku": Entry("frontier", "r0", HAIKU),
        "r1_claim_haiku": Entry("frontier", "r1", HAIKU),
        "r1_claim_gpt": Entry("frontier", "r1", GPT),
        "r2_code_haiku": Entry("frontier", "r2", HAIKU),
        # The paper's printed Haiku R3 command runs with --full-stream.
        "r3_build_haiku": Entry("full-stream", "r3", HAIKU, default_seeds=R3_FULL_STREAM_SEEDS),
        # arm_a1_announce draws Opus's instances with the Opus profile (set_profile(--model)):
        # the condition picks it from the model's name.
        "r3_build_opus": Entry("frontier", "r3", OPUS, default_seeds=R3_SEEDS),
        "r3_build_gpt": Entry("frontier", "r3", GPT, default_seeds=R3_SEEDS),
        # --- the economic surface (B and K from each episode's cell)
        "r0_urn_gpt_surface": Entry("surface", "r0", GPT),
        "r2_code_gpt_surface": Entry("surface", "r2", GPT),
        "econ_r0_haiku": Entry("surface", "r0", HAIKU),
        "econ_r2_haiku": Entry("surface", "r2", HAIKU),
        # --- the reskins (the skin from each episode's vocab), the no-N urn, the tool probe
        "r0_urn_qwen_vocabs": Entry("reskin", "r0", QWEN, settings=OLLAMA),
        "r0_urn_no_n_haiku": Entry("no-n", "r0", HAIKU),
        "r0_urn_no_n_qwen_vocabs": Entry("no-n", "r0", QWEN_RUN1, settings=OLLAMA),
        "r0_tool_haiku": Entry("tool-probe", "r0", HAIKU),
        "r0_tool_qwen_vocabs": Entry("tool-probe", "r0", QWEN, settings=OLLAMA),
        # --- the Qwen runs: without re-asks (the paper's default), and --empty-fence-retry 4
        "r1_claim_qwen": Entry("qwen", "r1", QWEN, {"no_call_attempts": 1}, OLLAMA),
        "r1_claim_qwen_efr4": Entry("qwen", "r1", QWEN, settings=OLLAMA),
        "r2_code_qwen_efr4": Entry("qwen", "r2", QWEN, settings=OLLAMA),
        "r3_build_qwen_efr4": Entry("qwen", "r3", QWEN, settings=OLLAMA, default_seeds=R3_SEEDS),
        # --- the RL pilot's rollouts (rl_urn_pilot, temperature 1.2): Run 2 shows the frontier
        # urn (N announced), Run 1 the no-N urn; post-training plays them as these conditions.
        "r0_rl_rollout_n": Entry(
            "frontier", "r0", QWEN_PILOT, settings={**OLLAMA, "temperature": 1.2}
        ),
        "r0_rl_rollout_no_n": Entry(
            "no-n", "r0", QWEN_PILOT, settings={**OLLAMA, "temperature": 1.2}
        ),
    }
)

STUB_KEY = "conformance-stub"
"""The API key the SDKs send to the stub (they refuse to start without one)."""
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@dataclass
class EpisodeSetup:
    """What ``play_episode`` needs for one fixture episode (the model's URL aside)."""

    framing: Any
    model: str
    settings: Any
    stream: Any
    cost: float
    budget: int


@functools.cache
def _sandbox() -> Any:
    from econbench.allo.sandbox.core import Sandbox

    return Sandbox()


def econbench_episode(file: str, unit: Unit, *, condition: str | None = None) -> EpisodeSetup:
    """The econbench side of episode ``unit`` of fixture ``file``: ``TABLE[file]`` through the
    named condition (``condition`` replaces the table's name, to try another)."""
    from econbench.agents.models.settings import ModelSettings
    from econbench.allo.game.stream import StreamConfig, generate_stream
    from econbench.allo.paper.conditions import get_condition
    from econbench.runs.allo.factory import condition_settings

    entry = TABLE[file]
    chosen = get_condition(condition or entry.condition)
    options = dict(entry.options)
    if entry.rung == "r3":
        options["sandbox"] = _sandbox()
    skin = SKIN_OF_VOCAB[unit.vocab or "ball"]
    framing = chosen.framing(entry.rung, skin=skin, model=entry.model, **options)
    settings = condition_settings(chosen, entry.rung, entry.model, ModelSettings(**entry.settings))
    budget, cost = 3, 0
    if unit.cell is not None:
        _, b, k = unit.cell.split(":")
        budget, cost = int(b), int(k)
    stream = generate_stream(unit.seed, StreamConfig())
    return EpisodeSetup(framing, entry.model, settings, stream, float(cost), budget)


def _pointed_at(settings: Any, model: str, stub: RecordingStub) -> Any:
    """``settings`` with the stub's URL, and no retries (a refused request fails at once)."""
    url = stub.anthropic_url if model.startswith("anthropic/") else stub.openai_url
    return settings.model_copy(update={"base_url": url, "max_retries": 0})


@contextlib.contextmanager
def stub_keys() -> Iterator[None]:
    """The SDKs' key variables set to a dummy for the duration (restored afterwards)."""
    saved = {k: os.environ.get(k) for k in KEY_VARS}
    os.environ.update(dict.fromkeys(KEY_VARS, STUB_KEY))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass
class Replayed:
    """One fixture episode as econbench played it: the requests it sent, or why it stopped."""

    unit: Unit
    requests: list[Recorded]
    error: str | None = None


def replay(
    file: str,
    episodes: Iterable[FixtureEpisode],
    stub: RecordingStub,
    *,
    condition: str | None = None,
) -> list[Replayed]:
    """Play each of ``episodes`` through econbench against ``stub``; an episode that raises
    (or whose requests the stub refused) keeps what it sent and the error."""
    from econbench.allo.episodes.runner import play_episode
    from econbench.runs.allo.llm_actor import LLMActorFactory

    kind = kind_of(file)
    out: list[Replayed] = []
    factories: dict[tuple[str, str], Any] = {}
    try:
        with stub_keys():
            for fx in episodes:
                error = None
                try:
                    setup = econbench_episode(file, fx.unit, condition=condition)
                    settings = _pointed_at(setup.settings, setup.model, stub)
                    key = (setup.model, settings.model_dump_json())
                    if key not in factories:
                        factories[key] = LLMActorFactory(setup.model, settings)
                    stub.begin(Player(kind, list(setup.stream.classes)))
                    play_episode(
                        setup.framing,
                        factories[key],
                        setup.stream,
                        cost=setup.cost,
                        budget=setup.budget,
                    )
                except Exception as exc:
                    error = f"{type(exc).__name__}: {exc}"
                requests, refused = stub.take()
                if refused:
                    error = "; ".join([*refused[:3], *([error] if error else [])])
                out.append(Replayed(fx.unit, requests, error))
    finally:
        for factory in factories.values():
            factory.close()
    return out
