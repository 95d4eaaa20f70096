"""Write paper_r3_results.json: what the paper's own R3 session (``scripts/session/
session_state.py``, ``SessionState.call``, class-bound, its sandbox ``_run``) answers to a
script of tool calls that a scripted model could send — failing scripts, refused writes,
cross-type runs, odd arguments, answers in every form — on a few seeds. Not run by the tests;
needs the paper's code checked out (``git archive`` of github:DragonWrangler25/AlloBench):

    .venv/bin/python tests/allo/data/make_paper_r3_results.py /path/to/AlloBench

Each step is ``[tool, arguments]``; ``"$inputs"`` stands for the current problem's named
values and ``"$gold"`` for its answer. Arguments are JSON, as a model sends them. The test
(``tests/allo/test_paper_r3_results.py``) plays the same steps through econbench's R3 tools.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SEEDS = (2000, 2003, 5000)
ZERO = "def solve(inputs):\n    return 1 / 0\n"
EXIT = "import sys\n\ndef solve(inputs):\n    print('partial')\n    sys.exit(3)\n"
NOISY = "def solve(inputs):\n    print('working', inputs)\n    return inputs\n"
BIG = "def solve(inputs):\n    return 10 ** 30 + 7\n"
STEPS: list[list[Any]] = [
    ["run_script", {"name": "a", "inputs": "$inputs"}],
    ["read_script", {"name": "a"}],
    ["list_scripts", {}],
    ["write_script", {"name": "", "code": "x"}],
    ["write_script", {"name": "a", "code": "   "}],
    ["write_script", {"code": "def solve(inputs):\n    return 1\n"}],
    ["write_script", {"name": "a", "code": "print(1)"}],
    ["run_script", {"name": "a", "inputs": "$inputs"}],
    ["write_script", {"name": "z", "code": ZERO}],
    ["run_script", {"name": "z", "inputs": "$inputs"}],
    ["run_script", {"name": "z", "inputs": [1, 2]}],
    ["run_script", {"name": "z"}],
    ["run_script", {"name": "z", "inputs": {"Q": "text", "R": [1, 2], "S": None, "T": True}}],
    ["run_script", {"name": "z", "inputs": {"X": -1.5e300}}],
    ["read_script", {"name": "z"}],
    ["list_scripts", {}],
    ["write_script", {"name": "exit", "code": EXIT}],
    ["submit_answer", {"value": "$gold"}],
    ["run_script", {"name": "z", "inputs": "$inputs"}],
    ["list_scripts", {}],
    ["write_script", {"name": "late", "code": "def solve(inputs):\n    return 2\n"}],
    ["run_script", {"name": "exit", "inputs": "$inputs"}],
    ["submit_answer", {"value": 3.5}],
    ["submit_answer", {"value": "12,345"}],
    ["submit_answer", {}],
    ["submit_answer", {"value": None}],
    ["submit_answer", {"value": True}],
]
"""One session's calls. The writes spend the budget (B = 3) on three problems' types, so
later writes are refused and runs cross types; answers come in every form the paper grades."""
EXTRA_BUDGET_STEPS: list[list[Any]] = [
    ["write_script", {"name": "noisy", "code": NOISY}],
    ["run_script", {"name": "noisy", "inputs": "$inputs"}],
    ["write_script", {"name": "big", "code": BIG}],
    ["run_script", {"name": "big", "inputs": {}}],
    ["submit_answer", {"value": 10**30 + 7}],
    ["write_script", {"name": "exit", "code": EXIT}],
    ["run_script", {"name": "exit", "inputs": "$inputs"}],
    ["submit_answer", {"value": "$gold"}],
]
"""A second session with budget 9: outputs that are not numbers, answers beyond 2^53."""


def _resolve(value: Any, problem: dict[str, Any] | None) -> Any:
    if value == "$inputs":
        return dict(problem["inputs"]) if problem else {}
    if value == "$gold":
        return problem["gold"] if problem else 0
    if isinstance(value, dict):
        return {k: _resolve(v, problem) for k, v in value.items()}
    return value


def play(state: Any, steps: list[list[Any]]) -> list[dict[str, Any]]:
    out = []
    for name, args in steps:
        problem = state.current()
        sent = json.loads(json.dumps(_resolve(args, problem)))  # as JSON from a model
        result = state.call(name, dict(sent))
        out.append({"tool": name, "arguments": sent, "result": result})
    return out


def main(paper: str) -> None:
    sys.path.insert(0, paper)
    from scripts.ladder.urn_common import UNIFORM  # type: ignore[import-not-found]
    from scripts.session.run_stream_session import (  # type: ignore[import-not-found]
        slots_to_problems,
    )
    from scripts.session.session_state import SessionState  # type: ignore[import-not-found]
    from scripts.session.stream_builder import (  # type: ignore[import-not-found]
        StochasticStreamSpec,
        build_stochastic_stream,
    )

    cases = []
    for seed in SEEDS:
        for budget, steps in ((3, STEPS), (9, EXTRA_BUDGET_STEPS)):
            slots, _ = build_stochastic_stream(
                StochasticStreamSpec(
                    families=UNIFORM,
                    n_hot=3,
                    T=60,
                    budget=3,
                    guarantee_trap_early=1.0,
                    magnitude=100,
                    seed=seed,
                )
            )
            state = SessionState(problems=slots_to_problems(slots), budget=budget)
            cases.append({"seed": seed, "budget": budget, "steps": play(state, steps)})
    target = Path(__file__).with_name("paper_r3_results.json")
    document = {"source": "github:DragonWrangler25/AlloBench@5a97586", "cases": cases}
    target.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {target}: {len(cases)} sessions")


if __name__ == "__main__":
    main(sys.argv[1])
