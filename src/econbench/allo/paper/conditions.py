"""The paper's conditions: what a model is sent, byte for byte, in each protocol the paper ran.

A *condition* (docs/allobench.md §9) names one protocol of the AlloBench paper's own scripts
(``github:DragonWrangler25/AlloBench``, ``scripts/ladder``, ``scripts/economic``,
``scripts/rl``): for every rung it runs, which econbench framing plays it and with which
options (the cost sentence, N announced or not, re-asks, what stays in the context, the
acknowledgements, schemas and result formats), and how the requests go on the wire (the paper's
request form, its reasoning effort and tool choice). ``tests/allo/test_paper_conformance.py``
replays the requests the paper's scripts sent (``tests/allo/data/paper_requests``) through each
condition and asserts that econbench sends the same bytes.

The default, ``frontier``, is the paper's framing ladder as its frontier models ran it. A
condition is chosen with ``--condition`` (CLI), ``condition=`` (``econbench.api.run_allo``) or
``condition =`` (experiment files), and recorded in every cell's config and summary; a
non-default condition is part of the cell's directory name. ``econbench`` is econbench's earlier
protocol (``protocol="econbench"``), kept so earlier cells stay comparable.

A condition holds settings, not code: each rule it selects lives in its framing's module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from econbench.suggest import did_you_mean

if TYPE_CHECKING:
    from econbench.allo.framings.base import Framing

DEFAULT_CONDITION = "frontier"

LOCAL_PROVIDERS = ("openai-compatible", "hf")
"""Model providers the paper's scripts treat as local (its Ollama / vLLM branch)."""


def _frozen(mapping: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class RungSetup:
    """How a condition plays one rung: the framing, its options, and the model's request rules.

    ``model`` holds model-settings defaults that apply where the user's settings leave the field
    unset (``ModelSettings`` field names); ``local_model`` adds to them for a local model
    (``LOCAL_PROVIDERS``), as the paper's scripts switch on ``IS_LOCAL``."""

    framing: str
    paper: str
    """The paper's script and flags this rung mirrors (for help texts and records)."""
    options: Mapping[str, Any] = field(default_factory=_frozen)
    model: Mapping[str, Any] = field(default_factory=_frozen)
    local_model: Mapping[str, Any] = field(default_factory=_frozen)
    by_model: Mapping[str, Mapping[str, Any]] = field(default_factory=_frozen)
    """Framing options for one model name, added to ``options``: the paper's R3 draws its
    problems with the difficulty profile of its ``--model`` (``family_kit.set_profile``)."""

    def framing_options(self, model: str | None = None) -> dict[str, Any]:
        """The framing options this rung is played with by ``model`` (None: any model)."""
        return {**self.options, **(self.by_model.get(model, {}) if model else {})}


@dataclass(frozen=True)
class Condition:
    """A named protocol of the paper: the rungs it ran and how each is played."""

    name: str
    title: str
    protocol: str
    rungs: Mapping[str, RungSetup]

    def setup(self, rung: str) -> RungSetup:
        """How this condition plays ``rung``; a rung it never ran is a one-line ``ValueError``."""
        key = rung.lower().strip()
        if key not in self.rungs:  # also named by the framing that plays it (``r0-tool``)
            key = next((k for k, s in self.rungs.items() if s.framing == key), key)
        if key not in self.rungs:
            runs = ", ".join(self.rungs)
            others = [
                c.name
                for c in CONDITIONS.values()
                if key in c.rungs or any(s.framing == key for s in c.rungs.values())
            ]
            hint = f"; conditions that play it: {', '.join(others)}" if others else ""
            raise ValueError(
                f"condition {self.name!r} has no rung {rung!r} (the paper ran it at {runs}){hint}"
            )
        return self.rungs[key]

    def framing(
        self, rung: str, *, skin: str = "default", model: str | None = None, **extra: Any
    ) -> Framing:
        """The framing that plays ``rung`` under this condition for ``model`` (``extra``: R3's
        ``sandbox`` and ``workers``, or an option a caller overrides on purpose)."""
        from econbench.allo.framings import get_framing

        setup = self.setup(rung)
        options = {**setup.framing_options(model), **extra}
        return get_framing(setup.framing, skin=skin, protocol=self.protocol, **options)

    def model_defaults(self, rung: str, model: str) -> dict[str, Any]:
        """The request rules this condition gives ``model`` at ``rung``, by ``ModelSettings``
        field name: the rung's ``model`` defaults, plus ``local_model`` for a local model. The
        run layer fills them in where the user left a field unset and the model's provider takes
        them (``econbench.runs.allo.factory.condition_settings``)."""
        setup = self.setup(rung)
        defaults = dict(setup.model)
        if model.split("/", 1)[0] in LOCAL_PROVIDERS:
            defaults.update(setup.local_model)
        return defaults

    def describe(self) -> dict[str, Any]:
        """The condition as a config records it."""
        return {
            "name": self.name,
            "protocol": self.protocol,
            "rungs": {
                rung: {
                    "framing": s.framing,
                    "paper": s.paper,
                    "options": dict(s.options),
                    "model": dict(s.model),
                    "local_model": dict(s.local_model),
                    "by_model": {m: dict(o) for m, o in s.by_model.items()},
                }
                for rung, s in self.rungs.items()
            },
        }


PAPER_WIRE = _frozen({"request_style": "paper"})


def _rung(
    framing: str,
    paper: str,
    options: Mapping[str, Any] | None = None,
    model: Mapping[str, Any] | None = None,
    local_model: Mapping[str, Any] | None = None,
    by_model: Mapping[str, Mapping[str, Any]] | None = None,
) -> RungSetup:
    return RungSetup(
        framing=framing,
        paper=paper,
        options=_frozen(options),
        model=_frozen({**PAPER_WIRE, **(model or {})}),
        local_model=_frozen(local_model),
        by_model=_frozen({m: _frozen(o) for m, o in (by_model or {}).items()}),
    )


# The options each framing takes are documented in its module; the values below are the paper
# scripts' (argparse defaults and the flags of the stored runs). ``tests/allo/
# test_paper_conformance.py`` holds each condition to the requests those scripts sent.
_URN = "scripts/ladder/urn_session.py --announce-n"
_R0 = _rung("r0", _URN, {"state_cost": False, "announce_n": True})
_R1 = _rung(
    "r1",
    "scripts/ladder/claim_solver_session.py --announce-n",
    {"state_cost": False, "no_call_attempts": 1},
    {"reasoning_effort": "none"},
    {"tool_choice": "required"},
)
_R2 = _rung(
    "r2",
    "scripts/ladder/claim_solver_code_session.py --announce-n",
    {"state_cost": False, "no_call_attempts": 1},
    {},
    {"tool_choice": "required"},
)
R3_PROFILES: Mapping[str, Mapping[str, Any]] = _frozen(
    {
        "anthropic/claude-opus-4-8": _frozen({"instance_profile": "opus"}),
        "anthropic/claude-sonnet-4-6": _frozen({"instance_profile": "sonnet"}),
    }
)
"""``arm_a1_announce`` calls ``set_profile(--model)``: its ``opus`` and ``sonnet`` keys (these
model ids) draw larger lcg and continued-fraction problems, every other model the ``haiku`` ones.
The magnitude stays 100, as the paper's stored Opus run (``--canonical-structure --magnitude
100``); its default 1000 for Opus, with josephus pinned as the last trap, is not reproduced."""
_R3_PAPER = "scripts/ladder/arm_a1_announce.py --announce-n --publication"
_R3 = _rung("r3", _R3_PAPER, {"state_cost": False}, {"reasoning_effort": "none"}, {}, R3_PROFILES)

CONDITIONS: Mapping[str, Condition] = MappingProxyType(
    {
        c.name: c
        for c in (
            Condition(
                "frontier",
                "the paper's framing ladder as its frontier models ran it (the default)",
                "paper",
                _frozen({"r0": _R0, "r1": _R1, "r2": _R2, "r3": _R3}),
            ),
            Condition(
                "full-stream",
                "R3 asked to the stream's end after the budget is spent (--full-stream)",
                "paper",
                _frozen(
                    {
                        "r3": _rung(
                            "r3",
                            f"{_R3_PAPER} --full-stream",
                            {**_R3.options, "full_stream": True},
                            _R3.model,
                            {},
                            R3_PROFILES,
                        )
                    }
                ),
            ),
            Condition(
                "surface",
                "the economic surface: R0 and R2 over B x K with the charge stated at every K",
                "paper",
                _frozen(
                    {
                        "r0": _rung(
                            "r0",
                            "scripts/economic/run_economic_surface.py (R0 cells)",
                            {"state_cost": True, "announce_n": True},
                            {"reasoning_effort": "none"},
                        ),
                        "r2": _rung(
                            "r2",
                            "scripts/economic/run_economic_surface.py (R2 cells)",
                            {"state_cost": True, "no_call_attempts": 1, "max_tokens": 4000},
                            {"reasoning_effort": "none"},
                        ),
                    }
                ),
            ),
            Condition(
                "reskin",
                "the urn in another vocabulary (--skin chest, quiver or cauldron)",
                "paper",
                _frozen({"r0": _rung("r0", f"{_URN} --vocab <skin>", _R0.options)}),
            ),
            Condition(
                "no-n",
                "the urn without the number of colours announced",
                "paper",
                _frozen(
                    {
                        "r0": _rung(
                            "r0",
                            "scripts/ladder/urn_session.py",
                            {"state_cost": False, "announce_n": False},
                        )
                    }
                ),
            ),
            Condition(
                "tool-probe",
                "the urn decided by a keep or pass tool call instead of text",
                "paper",
                _frozen(
                    {
                        "r0": _rung(
                            "r0-tool",
                            "scripts/ladder/urn_tool_session.py --announce-n",
                            {"announce_n": True},
                            {},
                            {"tool_choice": "required"},
                        )
                    }
                ),
            ),
            Condition(
                "qwen",
                "the paper's Qwen runs: four re-asks of a reply without a tool call at R1-R3",
                "paper",
                _frozen(
                    {
                        "r0": _R0,
                        "r1": _rung(
                            "r1",
                            f"{_R1.paper} --empty-fence-retry 4",
                            {**_R1.options, "no_call_attempts": 4},
                            _R1.model,
                            _R1.local_model,
                        ),
                        "r2": _rung(
                            "r2",
                            f"{_R2.paper} --empty-fence-retry 4",
                            {**_R2.options, "no_call_attempts": 4},
                            _R2.model,
                            _R2.local_model,
                        ),
                        "r3": _rung(
                            "r3",
                            f"{_R3.paper} --empty-fence-retry 4",
                            {**_R3.options, "empty_fence_retry": 4},
                            _R3.model,
                            {},
                            R3_PROFILES,
                        ),
                    }
                ),
            ),
            Condition(
                "econbench",
                "econbench's earlier protocol (its own texts and turn rules), kept for comparison",
                "econbench",
                _frozen(
                    {
                        rung: RungSetup(rung, "none: econbench's own protocol")
                        for rung in ("r0", "r1", "r2", "r3")
                    }
                ),
            ),
        )
    }
)


def get_condition(name: str) -> Condition:
    """The condition called ``name``; an unknown name is a one-line ``ValueError``."""
    key = name.lower().strip()
    if key not in CONDITIONS:
        raise ValueError(
            f"unknown condition {name!r}{did_you_mean(name, CONDITIONS)}; "
            f"choose one of {', '.join(CONDITIONS)}"
        )
    return CONDITIONS[key]


def condition_for(condition: str | None, protocol: str) -> str:
    """The condition a cell plays, from what its caller gave: ``protocol="econbench"`` is the
    ``econbench`` condition; a paper condition with that protocol is a contradiction."""
    if condition is None:
        return "econbench" if protocol == "econbench" else DEFAULT_CONDITION
    chosen = get_condition(condition)
    if protocol == "econbench" and chosen.protocol != "econbench":
        raise ValueError(
            f"condition {chosen.name!r} is one of the paper's; protocol 'econbench' plays only "
            "the 'econbench' condition"
        )
    return chosen.name
