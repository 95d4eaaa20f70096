"""The numbers the AlloBench paper publishes (``allocbench.tex``), and which stored runs each uses.

Sources follow the paper's own plotting scripts (``scripts/plotters/plot_fig2.py``,
``plot_fig3.py``, ``plot_fig4.py``): a frontier model's R0 and R2 come from its κ-grid session
at B = 3, K = 0 where it has no separate run (the GPT models; Opus at R2), Haiku's R2 from its
κ-grid session (98.6 %; its ``claim_solver_code`` run gives 100 %), R3 from the class-bound
script arms. A source is the ``source.family`` an imported cell records (a folder name, or
``economic_surface_<model>-R<r>-B<b>-K<k>``); a list is pooled (the reskins, the tool-call probe).
"""

from __future__ import annotations

RUNGS = ("r0", "r1", "r2", "r3")
FRONTIER: dict[str, dict[str, str]] = {
    "Haiku 4.5": {
        "r0": "urn_haiku_n-announced",
        "r1": "claim_solver_haiku_n-announced",
        "r2": "economic_surface_haiku-R2-B3-K0",
        "r3": "arm_a1_announce_n-announced",
    },
    "Opus 4.8": {
        "r0": "urn_opus_n-announced",
        "r1": "claim_solver_opus_n-announced",
        "r2": "economic_surface_opus-R2-B3-K0",
        "r3": "arm_a1_announce_opus_n-announced_canonical-structure_mag100_class-bound-v1",
    },
    "GPT-5.4-mini": {
        "r0": "economic_surface_gpt-5.4-mini-2026-03-17-R0-B3-K0",
        "r1": "claim_solver_gpt-5.4-mini-2026-03-17_n-announced",
        "r2": "economic_surface_gpt-5.4-mini-2026-03-17-R2-B3-K0",
        "r3": "arm_a1_announce_gpt-5.4-mini-2026-03-17_n-announced_write-budget-v2_class-bound-v1",
    },
    "GPT-5.6 Sol": {
        "r0": "economic_surface_gpt-5.6-sol-R0-B3-K0",
        "r1": "claim_solver_gpt-5.6-sol_n-announced",
        "r2": "economic_surface_gpt-5.6-sol-R2-B3-K0",
        "r3": "arm_a1_announce_gpt-5.6-sol_n-announced_write-budget-v2_class-bound-v1",
    },
}

# Table 1 (tab:ladder, integers) and Table 7 (tab:frontier-cell): pooled first-sight among
# commitments, % with 95 % seed-bootstrap intervals.
FRONTIER_CELL: dict[str, dict[str, tuple[float, float, float]]] = {
    "Haiku 4.5": {
        "r0": (27.8, 20.8, 34.7),
        "r1": (33.3, 19.4, 48.6),
        "r2": (98.6, 95.8, 100.0),
        "r3": (100.0, 100.0, 100.0),
    },
    "Opus 4.8": {
        "r0": (4.2, 0.0, 8.3),
        "r1": (0.0, 0.0, 0.0),
        "r2": (91.7, 86.1, 97.2),
        "r3": (98.6, 95.8, 100.0),
    },
    "GPT-5.4-mini": {
        "r0": (15.3, 5.6, 26.4),
        "r1": (29.4, 7.7, 54.5),
        "r2": (85.0, 70.2, 96.7),
        "r3": (88.0, 76.0, 100.0),
    },
    "GPT-5.6 Sol": {
        "r0": (23.6, 12.5, 36.1),
        "r1": (0.0, 0.0, 0.0),
        "r2": (38.9, 25.0, 52.8),
        "r3": (100.0, 100.0, 100.0),
    },
}
FAILURE_POINT = {"Haiku 4.5": "r2", "Opus 4.8": "r2", "GPT-5.4-mini": "r2", "GPT-5.6 Sol": "r3"}

# Table 6 (tab:frontier-paired): paired differences of re-pooled first-sight ratios, points.
PAIRS = (("r0", "r1"), ("r1", "r2"), ("r2", "r3"), ("r0", "r3"))
FRONTIER_PAIRED: dict[str, tuple[tuple[float, float, float], ...]] = {
    "Haiku 4.5": ((5.6, -11.1, 23.6), (65.3, 51.4, 79.2), (1.4, 0.0, 4.2), (72.2, 65.3, 79.2)),
    "Opus 4.8": ((-4.2, -8.3, 0.0), (91.7, 86.1, 97.2), (6.9, 0.0, 13.9), (94.4, 88.9, 98.6)),
    "GPT-5.4-mini": (
        (14.1, -10.8, 40.5),
        (55.6, 31.2, 77.1),
        (3.0, -14.3, 22.2),
        (72.7, 57.8, 86.2),
    ),
    "GPT-5.6 Sol": (
        (-23.6, -36.1, -12.5),
        (38.9, 25.0, 52.8),
        (61.1, 47.2, 75.0),
        (76.4, 63.9, 87.5),
    ),
}

# Table 8 (tab:zero-commit): zero-commit seeds (of 24) and mean commitments per seed.
ZERO_COMMIT: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {
    "Haiku 4.5": ((0, 0, 0, 0), (3.00, 3.00, 3.00, 2.83)),
    "Opus 4.8": ((0, 0, 0, 0), (3.00, 3.00, 3.00, 3.00)),
    "GPT-5.4-mini": ((0, 17, 4, 13), (3.00, 0.71, 2.50, 1.04)),
    "GPT-5.6 Sol": ((0, 0, 0, 2), (3.00, 3.00, 3.00, 2.21)),
}

# Table 9 (tab:econ-full), Haiku's κ grid: hazard %, net, optimum, regret.
ECON_SOURCE = "economic_surface_haiku-{rung}-B{b}-K{k}"
ECON_FULL: dict[tuple[str, int, int], tuple[float, float, float, float]] = {
    ("r0", 1, 0): (14.1, 10.6, 19.5, 8.9),
    ("r0", 1, 10): (1.7, 3.1, 9.5, 6.4),
    ("r0", 1, 24): (0.9, -10.5, 0.1, 10.6),
    ("r0", 3, 0): (22.7, 37.5, 49.7, 12.1),
    ("r0", 3, 10): (4.9, 10.1, 19.7, 9.6),
    ("r0", 3, 24): (5.7, -33.4, 0.1, 33.5),
    ("r0", 5, 0): (34.8, 51.0, 55.9, 4.9),
    ("r0", 5, 10): (16.5, 1.6, 19.7, 18.1),
    ("r0", 5, 24): (5.3, -61.8, 0.1, 61.8),
    ("r2", 1, 0): (100.0, 10.0, 19.5, 9.5),
    ("r2", 1, 10): (100.0, 0.0, 9.5, 9.5),
    ("r2", 1, 24): (85.2, -14.1, 0.1, 14.2),
    ("r2", 3, 0): (97.3, 32.7, 49.7, 17.0),
    ("r2", 3, 10): (100.0, 2.9, 19.7, 16.8),
    ("r2", 3, 24): (98.6, -38.5, 0.1, 38.6),
    ("r2", 5, 0): (100.0, 51.5, 55.9, 4.4),
    ("r2", 5, 10): (100.0, 1.5, 19.7, 18.2),
    ("r2", 5, 24): (99.2, -68.5, 0.1, 68.6),
}

# Table 11 (tab:rl-transfer-full): the Qwen checkpoints. Run 1 = the No-N training variant.
QWEN_ARMS = {
    "base": "qwen-rl-base-q8_latest",
    "run1": "qwen-rl-urn-final_latest",
    "run2": "qwen-rl-a2-final_latest",
}
VOCABS = ("treasure_chest", "quiver", "cauldron")


def qwen_sources(arm: str) -> dict[str, list[str]]:
    """The folders of each panel of the transfer table for one checkpoint (``plot_fig4.py``)."""
    urn = f"urn_{arm}_n-announced"
    tool = f"urn_tool_{arm}_n-announced"
    return {
        "R0": [urn],
        "Reskins": [f"{urn}_vocab-{v}" for v in VOCABS],
        "ToolCall": [tool] + [f"{tool}_vocab-{v}" for v in VOCABS],
        "R1": [f"claim_solver_{arm}_n-announced_efr4"],
        "R2": [f"claim_solver_code_{arm}_n-announced_efr4"],
        "R3": [f"arm_a1_announce_{arm}_n-announced_class-bound-v1_efr4"],
    }


# panel → ((base %, lateness), (run1 %, lateness), Δ1 CI, (run2 %, lateness), Δ2 CI)
RL_TRANSFER: dict[str, tuple[tuple[float, float], ...]] = {
    "R0": ((74, 0.40), (35, 0.75), (-38.9, -58.3, -19.4), (6, 1.51), (-68.1, -81.9, -51.4)),
    "Reskins": ((65, 0.59), (29, 0.84), (-36.1, -48.0, -23.2), (3, 1.46), (-62.3, -71.5, -52.0)),
    "ToolCall": ((87, 0.36), (50, 1.15), (-37.2, -46.2, -29.0), (33, 1.56), (-54.1, -64.1, -44.2)),
    "R1": ((62, 1.49), (57, 1.68), (-4.7, -28.3, 19.1), (69, 0.95), (7.2, -17.0, 30.0)),
    "R2": ((76, 1.24), (73, 1.03), (-2.7, -16.0, 10.8), (67, 0.91), (-8.4, -22.8, 6.1)),
    "R3": ((91, 0.11), (94, 0.06), (3.4, -5.2, 12.0), (95, 0.06), (3.6, -6.0, 12.7)),
}
# P(keep) at occurrence 1 and 2 (R0): (keeps, eligible) for base, run1, run2.
P_KEEP: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((53, 91), (25, 109), (4, 131)),
    2: ((12, 21), (40, 48), (48, 80)),
}
# Items/stream (R0): base, run1, Δ1 CI, run2, Δ2 CI.
ITEMS_PER_STREAM = (37.2, 39.9, (2.8, -1.8, 7.1), 39.5, (2.4, -2.7, 7.5))

# Tables 3 and 12 (tab:score, tab:qwen-score-paired): Qwen Score %, base and Run 2, with the
# paired difference of re-pooled ratios.
QWEN_SCORE: dict[str, tuple[float, float, tuple[float, float, float]]] = {
    "R0": (74.8, 79.6, (4.8, -5.6, 14.4)),
    "R1": (49.2, 34.8, (-14.4, -28.8, 0.3)),
    "R2": (61.2, 41.7, (-19.5, -31.1, -7.4)),
}
