"""How the stream rule moves a headline number: eager at B = 1, K = 0 on the paper's 24
evaluation seeds (2000-2023), on the paper's fixed B = 3 streams (the default), on streams
redrawn per cell budget, and on econbench's earlier numpy streams redrawn per budget.

    python benchmarks/allo_streams.py
"""

from __future__ import annotations

from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import EVAL_SEEDS, StreamConfig, generate_streams, stream_config_for
from econbench.allo.solvers.policies import make_policy, play_many

RULES = (
    ("paper generator, fixed B = 3 streams (default)", "paper", "fixed"),
    ("paper generator, streams drawn with the cell's B", "paper", "cell"),
    ("numpy generator, streams drawn with the cell's B", "numpy", "cell"),
)


def main() -> None:
    budget = 1
    print(f"eager, B = {budget}, K = 0, seeds {EVAL_SEEDS[0]}-{EVAL_SEEDS[-1]}:")
    for label, generator, stream_budget in RULES:
        config = stream_config_for(StreamConfig(generator=generator), budget, stream_budget)
        streams = generate_streams(EVAL_SEEDS, config)
        stats = summarize(play_many(make_policy("eager"), streams, 0.0, budget))
        print(f"  {label:50s} pooled score {stats['score']:.3f}")


if __name__ == "__main__":
    main()
