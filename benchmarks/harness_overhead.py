"""The harness's own cost per agent step, and what concurrent model calls buy.

1. Overhead: all six firms are played by in-process zero-latency models that replay what
   the scripted firms did, so the economy is identical to the scripted run; the time the
   harness adds per model step (prompt building, the agent loop, compaction checks, event
   logging) is (time of that run − time of the scripted run) / model steps.
2. Concurrency: the same replay with a fixed latency per model call, once with the firms
   at the same minute querying their models concurrently (the default), once one call at a
   time (a per-provider limit of 1). The event logs of the two runs are compared.

    python benchmarks/harness_overhead.py [--days 90] [--latency 0.02] [--latency-days 15]
"""

from __future__ import annotations

import argparse
import time

from econbench.agents.models.base import ModelOutput
from econbench.agents.models.retry import ConcurrencyLimiter
from econbench.agents.models.scripted import ScriptedModel
from econbench.agents.react import LLMAgent
from econbench.agents.tools import ToolCall
from econbench.coffee.config import FIRMS
from econbench.coffee.events import MemorySink, NullSink
from econbench.coffee.prompts import system_prompt
from econbench.coffee.render import render_observation
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig


def recorded(config: RunConfig) -> dict[str, list[ToolCall]]:
    sink = MemorySink()
    CoffeeRun(config, sink=sink).run()
    calls: dict[str, list[ToolCall]] = {f: [] for f in FIRMS}
    for e in sink.events:
        if e["type"] == "tool_call":
            calls[e["firm"]].append(ToolCall(e["tool"], e["arguments"]))
    return calls


def replay_agents(
    config: RunConfig, calls: dict[str, list[ToolCall]], latency: float, limit: int
) -> dict[str, LLMAgent]:
    limiter = ConcurrencyLimiter(default_limit=limit)
    agents = {}
    for firm in FIRMS:
        queue = list(calls[firm])

        def brain(messages, tools, queue=queue):
            return ModelOutput(model="scripted/replay", tool_calls=[queue.pop(0)])

        model = ScriptedModel(f"replay-{firm}", brain=brain, latency_s=latency, max_recorded=1)
        agents[firm] = LLMAgent(
            model,
            system_prompt=system_prompt(firm, config),
            render_observation=render_observation,
            limiter=limiter,
        )
    return agents


def timed_run(config: RunConfig, policies=None, sink=None) -> tuple[float, CoffeeRun]:
    run = CoffeeRun(config, sink=sink or NullSink(), policies=policies or {})
    start = time.perf_counter()
    run.run()
    return time.perf_counter() - start, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per model call")
    parser.add_argument("--latency-days", type=int, default=15)
    args = parser.parse_args()

    config = RunConfig(days=args.days)
    calls = recorded(config)
    steps = sum(len(c) for c in calls.values())
    scripted_s, _ = timed_run(config)
    agent_s, _ = timed_run(config, replay_agents(config, calls, 0.0, 8))
    per_step_ms = (agent_s - scripted_s) / steps * 1000
    print(f"{args.days}-day run, all six firms model-driven by zero-latency replay models:")
    print(
        f"  model steps {steps}; scripted run {scripted_s:.2f} s; model-driven run {agent_s:.2f} s"
    )
    print(f"  harness overhead per model step: {per_step_ms:.2f} ms")

    short = RunConfig(days=args.latency_days)
    short_calls = recorded(short)
    short_steps = sum(len(c) for c in short_calls.values())
    results = {}
    for label, limit in (("concurrent", 8), ("one at a time", 1)):
        sink = MemorySink()
        seconds, _ = timed_run(short, replay_agents(short, short_calls, args.latency, limit), sink)
        env = [e for e in sink.events if e["type"] not in ("model_call",)]
        results[label] = (seconds, env)
    print(
        f"{args.latency_days}-day run, {short_steps} model calls at "
        f"{args.latency * 1000:.0f} ms each:"
    )
    for label, (seconds, _) in results.items():
        print(f"  {label:>14}: {seconds:6.2f} s wall")
    same = results["concurrent"][1] == results["one at a time"][1]
    speedup = results["one at a time"][0] / results["concurrent"][0]
    print(f"  speed-up {speedup:.2f}x; identical event logs: {same}")


if __name__ == "__main__":
    main()
