"""What a folder of the paper's ``runs/`` is: rung, model, reskin, and the condition it ran under.

The paper names a run family ``<arm>_<model>[_<tags>]`` (``urn_haiku_n-announced``,
``claim_solver_code_qwen-rl-base-q8_latest_n-announced_efr4``,
``arm_a1_announce_opus_n-announced_canonical-structure_mag100_class-bound-v1``) and the κ grid
``economic_surface_<model>/R<r>/B_<b>/K_<k>/``. The arms are the rungs (``allocbench.tex``,
§"frames"): ``urn`` R0 (``urn_tool`` the same urn decided by a keep/pass tool call),
``claim_solver`` R1, ``claim_solver_code`` R2, ``arm_a1_announce`` R3.

Imported cells are named after the model as the paper names it (``paper/claude-haiku-4.5``).
The paper's main condition (horizon N announced; for the Qwen panels four empty-reply retries at
R1–R3; R3 class-bound at magnitude 100) carries the plain name; any other condition adds what
differs (``paper/claude-haiku-4.5/no-n``, ``…/no-retry``, ``…/mag1000``, ``…/tool-call``), so a
report never pools two conditions into one row. The κ grid's cells are named like the main
condition unless the same import holds a main-condition folder for that model and rung (then
``…/surface``): the GPT models' R0 and R2 at B = 3, K = 0 exist only in their surfaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

MODELS: dict[str, str] = {
    "haiku": "claude-haiku-4.5",
    "opus": "claude-opus-4.8",
    "gpt-5.4-mini-2026-03-17": "gpt-5.4-mini",
    "gpt-5.6-sol": "gpt-5.6-sol",
    "qwen-rl-base-q8_latest": "qwen2.5-coder-14b-q8",
    "qwen-rl-urn-final_latest": "qwen2.5-coder-14b-q8-ppo-run1",
    "qwen-rl-a2-final_latest": "qwen2.5-coder-14b-q8-ppo-run2",
    "qwen2.5-coder_14b": "qwen2.5-coder-14b",
}
"""The paper's folder spelling of each model → its name in tables (Run 1 is the No-N training
variant, Run 2 the checkpoint of the paper's main text, as its Appendix names them)."""

R3_DEFAULT_MODEL = "haiku"
"""``arm_a1_announce`` and ``arm_a1_announce_n-announced`` name no model: their sessions are
Claude Haiku 4.5's (``model: claude-haiku-4-5-20251001``), as the paper's Figure 2 reads them."""

SKINS = {"treasure_chest": "chest", "chest": "chest", "quiver": "quiver", "cauldron": "cauldron"}
ARMS: tuple[tuple[str, str, str], ...] = (
    ("arm_a1_announce", "r3", "script"),
    ("claim_solver_code", "r2", "claim"),
    ("claim_solver", "r1", "claim"),
    ("urn_tool", "r0", "tool-call"),
    ("urn", "r0", "text"),
)
"""(folder prefix, rung, decision channel), longest prefix first."""
MAIN_TAGS = {"n-announced", "efr4", "class-bound-v1", "write-budget-v2", "canonical-structure"}
"""Tags of the paper's main condition."""
MAGNITUDE_TAG = re.compile(r"mag\d+")
"""``mag100`` in a folder name: the magnitude is read from the R3 config instead."""


@dataclass(frozen=True)
class Folder:
    """One stored run family, as its name says."""

    name: str
    framing: str
    model: str  # the paper's folder spelling
    channel: str = "text"  # "text", "tool-call", "claim", "script"
    skin: str = "default"
    tags: tuple[str, ...] = ()
    surface: bool = False
    budget: int | None = None
    cost: float = 0.0
    magnitude: int | None = None  # R3: the instance magnitude its config names

    @property
    def model_name(self) -> str:
        return MODELS.get(self.model, self.model)

    def conditions(self) -> list[str]:
        """What differs from the paper's main condition, as name parts (empty: the main one)."""
        parts = []
        if self.channel == "tool-call":
            parts.append("tool-call")
        if not self.surface and "n-announced" not in self.tags:
            parts.append("no-n")
        if self.magnitude is not None and self.magnitude != 100:
            parts.append(f"mag{self.magnitude}")
        parts += [t for t in self.tags if t not in MAIN_TAGS and not MAGNITUDE_TAG.fullmatch(t)]
        return parts


def _split_model(rest: str) -> tuple[str, str]:
    """``rest`` = ``<model>[_<tags>]`` → (model, tags text), known models longest first."""
    for model in sorted(MODELS, key=len, reverse=True):
        if rest == model or rest.startswith(model + "_"):
            return model, rest[len(model) + 1 :]
    head, _, tail = rest.partition("_")
    return head, tail


def parse_folder(name: str) -> Folder | None:
    """The rung, model and condition of a top-level run folder; ``None`` when not understood."""
    for prefix, framing, channel in ARMS:
        if name != prefix and not name.startswith(prefix + "_"):
            continue
        rest = name[len(prefix) + 1 :]
        skin = "default"
        m = re.search(r"(?:^|_)vocab-([A-Za-z_]+)$", rest)
        if m:
            if m.group(1) not in SKINS:
                return None
            skin, rest = SKINS[m.group(1)], rest[: m.start()]
        if framing == "r3" and (rest == "" or rest.split("_")[0] in MAIN_TAGS | {"n-announced"}):
            model, tags = R3_DEFAULT_MODEL, rest
        else:
            model, tags = _split_model(rest)
        if not model:
            return None
        return Folder(name, framing, model, channel, skin, tuple(t for t in tags.split("_") if t))
    return None


def surface_folder(model: str, rung: str, budget: int, cost: float) -> Folder:
    """A κ-grid cell of ``economic_surface_<model>/R<r>/B_<b>/K_<k>``."""
    return Folder(
        f"economic_surface_{model}",
        rung,
        model,
        "claim" if rung != "r0" else "text",
        surface=True,
        budget=budget,
        cost=cost,
    )


def policy_names(folders: list[Folder]) -> dict[Folder, str]:
    """The policy name of every folder (see the module docstring for the rule).

    A folder outside the main condition whose rung also has a retried main-condition folder
    (``efr4``) for the same model is ``…/no-retry``; a surface cell is ``…/surface`` when a
    main-condition folder of the same model and rung exists."""
    main = {(f.model, f.framing) for f in folders if not f.surface and not f.conditions()}
    retried = {(f.model, f.framing) for f in folders if "efr4" in f.tags}
    names = {}
    for f in folders:
        parts = f.conditions()
        if f.surface and (f.model, f.framing) in main:
            parts.append("surface")
        if "efr4" not in f.tags and (f.model, f.framing) in retried and not f.surface:
            parts.append("no-retry")
        names[f] = "/".join(["paper", f.model_name, *parts])
    return names


def with_magnitude(folder: Folder, magnitude: int | None) -> Folder:
    """``folder`` with the R3 instance magnitude its config names."""
    return replace(folder, magnitude=magnitude)
