"""What checkpoints cost, and how fast a run resumes.

1. All-scripted 90-day run: in memory (no files) against ``run_to_dir`` (logs, a checkpoint
   at every 30th day's end and the last, since no model plays; the summary); the
   checkpoint's size at the end; the mean time to write one checkpoint.
2. A run whose roaster_A is a model (an in-process scripted model that decides from the
   last message, so it needs no network): the number of checkpoints (one per day: the
   model calls between them are in record.sqlite, replayed on a resume) and the time per
   model tick with and without the run directory.
3. Resume: a run killed in the middle (after half its actions) and resumed; the time to
   load the checkpoint and cut the logs, and whether the result is byte-identical.

    python benchmarks/checkpoint_overhead.py [--days 90]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from econbench.agents.models.registry import register_scripted
from econbench.agents.tools import ToolCall
from econbench.coffee import world as world_module
from econbench.coffee.events import NullSink
from econbench.coffee.sim import CoffeeRun
from econbench.runs import checkpoint as checkpoint_module
from econbench.runs.coffee.agents import firm_policies
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import resume_to_dir, run_to_dir


class _Killed(BaseException):
    pass


def shopper(messages, tools):
    """View the listings, bid for the cheapest green lot, wait."""
    last = messages[-1]
    if last.role == "user":
        return ToolCall("view_listings", {"item_id": "green_coffee_regular_kg"})
    if last.role == "tool" and '"listings"' in last.content:
        listings = json.loads(last.content).get("listings", [])
        if listings:
            lot = listings[0]
            return ToolCall(
                "make_offer",
                {
                    "listing_id": lot["listing_id"],
                    "qty": min(20, lot["qty"]),
                    "offered_price": lot["asking_price"],
                },
            )
    return ToolCall("wait_for_next_day", {})


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def count_checkpoints(fn) -> tuple[int, float]:
    """Run ``fn`` counting checkpoint writes and the time spent writing them."""
    original = checkpoint_module.write_atomic
    stats = {"n": 0, "s": 0.0}

    def counting(path, text, *, durable=False):
        start = time.perf_counter()
        original(path, text, durable=durable)
        if path.name == "checkpoint.json":
            stats["n"] += 1
            stats["s"] += time.perf_counter() - start

    checkpoint_module.write_atomic = counting
    try:
        fn()
    finally:
        checkpoint_module.write_atomic = original
    return stats["n"], stats["s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=90)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    config = RunConfig(days=args.days)

    memory = min(timed(lambda: CoffeeRun(config, sink=NullSink()).run()) for _ in range(3))
    to_dir = []
    for i in range(3):
        out = tmp / f"scripted{i}"
        to_dir.append(timed(lambda out=out: run_to_dir(config, out)))
    n, spent = count_checkpoints(lambda: run_to_dir(config, tmp / "counted"))
    size = (tmp / "counted" / "checkpoint.json").stat().st_size
    print(f"All scripted, {args.days} days:")
    print(f"  in memory, no files     {memory:.3f} s")
    print(f"  run directory           {min(to_dir):.3f} s (logs, checkpoints, summary)")
    print(f"  checkpoints             {n}, {1000 * spent / n:.2f} ms each to write (no fsync)")
    print(f"  checkpoint size         {size / 1e6:.2f} MB at day {args.days}")

    model = register_scripted("bench-shopper", shopper)
    model_config = RunConfig(days=args.days, agents={"roaster_A": model})
    # The environment builds scripted policies only; a model's is the run layer's to build.
    plain = CoffeeRun(model_config, sink=NullSink(), policies=firm_policies(model_config))
    in_memory = timed(plain.run)
    calls = plain.agent_stats()["roaster_A"]["llm_calls"]
    out = tmp / "model"
    n_model, spent_model = count_checkpoints(lambda: run_to_dir(model_config, out))
    with_files = timed(lambda: run_to_dir(model_config, tmp / "model2"))
    print(f"roaster_A played by an in-process model, {args.days} days ({calls} model calls):")
    print(f"  in memory               {in_memory:.3f} s")
    print(f"  run directory           {with_files:.3f} s (record.sqlite included)")
    each = 1000 * spent_model / n_model
    print(f"  checkpoints             {n_model}, {each:.2f} ms each (+ fsync)")
    print(f"  added per model tick    {1000 * (with_files - in_memory) / calls:.2f} ms")

    events = sum(1 for line in (tmp / "scripted0" / "events.jsonl").open() if '"tool_call"' in line)
    killed = tmp / "killed"
    original = world_module.World.act
    count = {"n": 0}

    def act(self, firm_id, call):
        count["n"] += 1
        if count["n"] == events // 2:
            raise _Killed
        return original(self, firm_id, call)

    world_module.World.act = act
    try:
        run_to_dir(config, killed)
    except _Killed:
        pass
    finally:
        world_module.World.act = original
    resume_s = timed(lambda: resume_to_dir(killed))
    same = all(
        (killed / name).read_bytes() == (tmp / "scripted0" / name).read_bytes()
        for name in ("events.jsonl", "daily.jsonl", "summary.json")
    )
    print(f"Killed after {events // 2} of {events} actions, then resumed:")
    print(f"  resume (rest of the run) {resume_s:.3f} s; byte-identical to uninterrupted: {same}")


if __name__ == "__main__":
    main()
