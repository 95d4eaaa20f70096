"""The path where a model plays: harness CPU per request, bytes written, prefix caching.

A CoffeeBench run of ``--days`` days (seed 0) in which roaster_A is played by
``openai/gpt-5.5`` through econbench's OpenAI provider and the real OpenAI SDK, the other
firms by the default scripted background, started as a user starts one
(``econbench.api.run_coffee`` into a fresh run directory: checkpoints, record.sqlite and the
event log are written as usual). The SDK talks over loopback to the project's fake OpenAI
server (``tests/fakes/openai_server.py``) in a separate process (``benchmarks/_trading_fake.py``),
so the CPU of this process is the harness's alone. The fake trades: it replays, one tool call
per reply with a short text, what the scripted roaster_A did in a scripted run of the same
seed, and answers compaction requests with a factual summary of a few hundred words.

Per context window (``--windows default,32k``: the provider's default, 200k tokens, and a
32k window set as ``[models."openai/gpt-5.5"] context_window`` in a run config):

- model requests, and of them compactions (as the fake saw them, and as the run reports);
- harness CPU: user + system of this process (``getrusage``) around the run, per request,
  and per request less the CPU of the same run played by the scripted firm (the simulation
  and its files); the openai SDK is imported before timing;
- the floor: the CPU, in this process, to ``json.dumps`` each request body the fake received
  once and POST it over keep-alive loopback to a trivial HTTP server (in the fake's
  process) that answers ``{}``; and harness / floor;
- average prompt tokens per step (non-compaction requests), as the fake counts them (4
  characters a token);
- bytes written by this process during the run (``/proc/self/io`` ``wchar``, Linux only)
  per model firm, and the final size of the run directory's files by kind;
- prefix-cache share: cached input tokens / input tokens over all requests and over the
  compaction requests alone (the fake counts as cached the longest prefix, in 64-token
  blocks, that a request shares with any earlier one, as automatic prompt caching does).

Then the scripted AlloBench sweep of 24 cells (``benchmarks/sweep_throughput.py``, skipped
with ``--no-sweep``), and a table of the figures against their floors and targets. Nothing
is asserted; the exit status is non-zero only if a run fails. CPU time reads high on a busy
machine: the load average is printed at the start and the end.

    .venv/bin/python benchmarks/model_path.py                # 90 days, both windows, sweep
    .venv/bin/python benchmarks/model_path.py --days 10 --no-sweep
    .venv/bin/python benchmarks/model_path.py --windows 32k --sweep-repeat 1
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:  # the helper module, in this process and the spawned one
    sys.path.insert(0, str(HERE))

MODEL = "openai/gpt-5.5"
FIRM = "roaster_A"
WINDOWS = {"default": None, "32k": 32_000}
"""Context windows by name (None: the provider's default); any other ``<n>k`` works too."""


def window_size(name: str) -> int | None:
    """``default`` -> None, ``32k`` -> 32000, ``12000`` -> 12000; ValueError otherwise."""
    if name in WINDOWS:
        return WINDOWS[name]
    match = re.fullmatch(r"(\d+)(k?)", name)
    if not match:
        raise ValueError(name)
    return int(match[1]) * (1000 if match[2] else 1)


# The figures: (now, floor/target) as printed in the table.
TARGET_CPU_MS = 3.0
TARGET_CPU_RATIO = 2.0
TARGET_BYTES = 60e6
TARGET_COMPACTION_CACHED = 0.90
TARGET_SWEEP_RATIO = 1.5


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def proc_io() -> dict[str, int] | None:
    """This process's I/O counters (``wchar``: bytes passed to write calls; ``write_bytes``:
    bytes sent to storage), or None where ``/proc/self/io`` is absent."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return None
    return {k: int(v) for k, v in (line.split(": ") for line in text.splitlines() if line)}


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """Set environment variables for the block, then put back what was there."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def recorded_calls(days: int, seed: int) -> list[dict[str, Any]]:
    """roaster_A's tool calls in the scripted run of the same economy (in memory)."""
    from econbench.coffee.events import MemorySink
    from econbench.coffee.sim import CoffeeRun
    from econbench.runs.coffee.config import RunConfig

    sink = MemorySink()
    CoffeeRun(RunConfig(days=days, seed=seed), sink=sink).run()
    return [
        {"name": e["tool"], "arguments": e["arguments"]}
        for e in sink.events
        if e["type"] == "tool_call" and e["firm"] == FIRM
    ]


def dir_sizes(run_dir: Path) -> dict[str, int]:
    """Bytes of the run directory's files, by kind."""
    sizes: dict[str, int] = {}
    for path in run_dir.rglob("*"):
        if not path.is_file():
            continue
        name = path.name
        if name.startswith("record.sqlite"):
            kind = "record.sqlite"
        elif name.startswith("events"):
            kind = "events"
        elif "checkpoint" in str(path.relative_to(run_dir)):
            kind = "checkpoints"
        else:
            kind = "other"
        sizes[kind] = sizes.get(kind, 0) + path.stat().st_size
    return sizes


@dataclass
class Figures:
    window: str
    days: int
    requests: int = 0
    compactions: int = 0
    compactions_reported: int | None = None
    model_firms: int = 1
    run_wall_s: float = 0.0
    run_cpu_s: float = 0.0
    scripted_cpu_s: float = 0.0
    floor_cpu_s: float = 0.0
    prompt_tokens_per_step: float = 0.0
    wchar: int | None = None
    write_bytes: int | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    cached_tokens: int = 0
    compaction_input: int = 0
    compaction_cached: int = 0
    body_bytes: int = 0
    past_the_script: int = 0

    @property
    def cpu_ms(self) -> float:
        return self.run_cpu_s / max(self.requests, 1) * 1000

    @property
    def model_cpu_ms(self) -> float:
        return (self.run_cpu_s - self.scripted_cpu_s) / max(self.requests, 1) * 1000

    @property
    def floor_ms(self) -> float:
        return self.floor_cpu_s / max(self.requests, 1) * 1000

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def compaction_cached_share(self) -> float | None:
        return self.compaction_cached / self.compaction_input if self.compaction_input else None

    @property
    def bytes_per_firm(self) -> int | None:
        return None if self.wchar is None else self.wchar // self.model_firms


def read_bodies(path: Path) -> Iterator[bytes]:
    with path.open("rb") as f:
        while head := f.read(8):
            (length,) = struct.unpack("<Q", head)
            yield f.read(length)


def floor_cpu(bodies: Path, port: int) -> float:
    """CPU seconds, in this process, to encode each body once and POST it over loopback."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.connect()
    conn.sock.setsockopt(6, 1, 1)  # IPPROTO_TCP, TCP_NODELAY
    spent = 0.0
    for raw in read_bodies(bodies):
        body = json.loads(raw) if raw else {}
        start = time.process_time()
        data = json.dumps(body).encode()
        conn.request("POST", "/v1/responses", data, {"Content-Type": "application/json"})
        conn.getresponse().read()
        spent += time.process_time() - start
    conn.close()
    return spent


def scripted_cpu(days: int, seed: int, out: Path) -> float:
    """CPU of the same run through the same path with roaster_A scripted."""
    from econbench.api import run_coffee

    start = cpu_seconds()
    run_coffee(seed=seed, days=days, actors={FIRM: "heuristic"}, out=out)
    return cpu_seconds() - start


def model_run(
    window: str, days: int, seed: int, calls: list[dict], work: Path, floor: bool = True
) -> Figures:
    """One run with roaster_A played through the SDK against the trading fake, in
    ``work/run-<window>`` (the fake's records in ``work/fake-<window>``)."""
    import _trading_fake
    from econbench.api import run_coffee

    figures = Figures(window=window, days=days)
    dump = work / f"fake-{window}"
    dump.mkdir(parents=True)
    config = work / f"run-{window}.toml"
    size = window_size(window)
    config.write_text(f'[models."{MODEL}"]\ncontext_window = {size}\n' if size else "")

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_trading_fake.serve, args=(calls, str(dump), child), daemon=True)
    server.start()
    try:
        urls = parent.recv()
        run_dir = work / f"run-{window}"
        with environment(OPENAI_BASE_URL=urls["base_url"], OPENAI_API_KEY="sk-fake-loopback"):
            io_before = proc_io()
            cpu_before = cpu_seconds()
            t0 = time.perf_counter()
            result = run_coffee(
                seed=seed, days=days, actors={FIRM: MODEL}, config=config, out=run_dir
            )
            figures.run_wall_s = time.perf_counter() - t0
            figures.run_cpu_s = cpu_seconds() - cpu_before
            io_after = proc_io()
    finally:
        parent.send("stop")
        counts = parent.recv() if parent.poll(30) else {}
        server.join(10)
    firms = result.summary["firms"]
    figures.model_firms = sum(1 for f in firms.values() if "/" in str(f.get("policy", ""))) or 1
    figures.compactions_reported = firms[FIRM].get("compactions")
    figures.past_the_script = counts.get("past_the_script", 0)
    if io_before is not None and io_after is not None:
        figures.wchar = io_after["wchar"] - io_before["wchar"]
        figures.write_bytes = io_after.get("write_bytes", 0) - io_before.get("write_bytes", 0)
    figures.sizes = dir_sizes(run_dir)
    steps = step_tokens = 0
    for line in (dump / "requests.jsonl").open():
        row = json.loads(line)
        figures.requests += 1
        figures.input_tokens += row["input"]
        figures.cached_tokens += row["cached"]
        if row["compaction"]:
            figures.compactions += 1
            figures.compaction_input += row["input"]
            figures.compaction_cached += row["cached"]
        else:
            steps += 1
            step_tokens += row["input"]
    figures.prompt_tokens_per_step = step_tokens / max(steps, 1)
    figures.body_bytes = (dump / "bodies.bin").stat().st_size
    if floor:
        figures.floor_cpu_s = floor_against_fresh_sink(dump / "bodies.bin")
    return figures


def floor_against_fresh_sink(bodies: Path) -> float:
    """The floor, against a trivial HTTP server in a process of its own."""
    import _trading_fake

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_trading_fake.sink, args=(child,), daemon=True)
    proc.start()
    try:
        return floor_cpu(bodies, parent.recv())
    finally:
        parent.send("stop")
        proc.join(10)


def mb(n: float | None) -> str:
    return "n/a (no /proc/self/io)" if n is None else f"{n / 1e6:.1f} MB"


def pct(x: float | None) -> str:
    return "n/a (no compaction)" if x is None else f"{x * 100:.1f} %"


def print_run(f: Figures) -> None:
    print(f"\n== {f.days} days, window {f.window}: {FIRM} = {MODEL} through the OpenAI SDK ==")
    reported = "" if f.compactions_reported is None else f" (run reports {f.compactions_reported})"
    print(f"  model requests: {f.requests}, of them compactions: {f.compactions}{reported}")
    if f.past_the_script:
        print(f"  note: {f.past_the_script} step(s) past the scripted calls (answered by waiting)")
    print(f"  run wall time: {f.run_wall_s:.2f} s; harness CPU: {f.run_cpu_s:.2f} s")
    print(f"  harness CPU per request: {f.cpu_ms:.2f} ms")
    print(
        f"  harness CPU per request less the scripted run ({f.scripted_cpu_s:.2f} s): "
        f"{f.model_cpu_ms:.2f} ms"
    )
    print(
        f"  floor per request (json.dumps once + POST over loopback): {f.floor_ms:.3f} ms; "
        f"harness / floor: {f.cpu_ms / max(f.floor_ms, 1e-9):.1f}x"
    )
    print(
        f"  average prompt tokens per step: {f.prompt_tokens_per_step:,.0f}; request bodies "
        f"{f.body_bytes / 1e6:.1f} MB in all"
    )
    where = "" if f.write_bytes is None else f" (to storage: {mb(f.write_bytes)})"
    print(f"  bytes written per model firm (wchar): {mb(f.bytes_per_firm)}{where}")
    files = ", ".join(f"{k} {mb(v)}" for k, v in sorted(f.sizes.items()))
    print(f"  run directory: {mb(sum(f.sizes.values()))} ({files})")
    print(f"  prefix-cache share, all requests: {pct(f.cached_share)}")
    print(f"  prefix-cache share, compaction requests: {pct(f.compaction_cached_share)}")


def run_sweep(repeat: int) -> dict[str, float]:
    """``benchmarks/sweep_throughput.py``, its output printed, its wall times (by backend)
    and ratios to inline (``local/inline``, ``process/inline``) parsed."""
    cmd = [sys.executable, str(HERE / "sweep_throughput.py"), "--repeat", str(repeat)]
    print(f"\n== AlloBench sweep of 24 scripted cells ({' '.join(cmd[1:])}) ==", flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    print(done.stdout.rstrip())
    if done.returncode != 0:
        raise RuntimeError(f"sweep_throughput.py exited {done.returncode}: {done.stderr[-300:]}")
    figures = {
        m["backend"]: float(m["wall"])
        for m in re.finditer(
            r"--backend (?P<backend>\w+)\s.*?:\s+(?P<wall>[\d.]+) s wall", done.stdout
        )
    }
    for backend in ("local", "process"):
        ratio = re.search(rf"^--backend {backend}\s.*/ inline: ([\d.]+)x", done.stdout, re.M)
        if ratio:
            figures[f"{backend}/inline"] = float(ratio[1])
    return figures


def print_table(runs: list[Figures], sweep: dict[str, float] | None) -> None:
    rows: list[tuple[str, str, str]] = []
    for f in runs:
        tag = f"{f.days} d, {f.window} window"
        rows.append(
            (
                f"harness CPU per model request ({tag}, {f.prompt_tokens_per_step / 1000:.0f}k "
                f"tokens a step)",
                f"{f.cpu_ms:.2f} ms ({f.cpu_ms / max(f.floor_ms, 1e-9):.1f}x floor)",
                f"floor {f.floor_ms:.2f} ms; target <= {TARGET_CPU_MS:g} ms and <= "
                f"{TARGET_CPU_RATIO:g}x floor",
            )
        )
    for f in runs:
        sizes = f.sizes
        rows.append(
            (
                f"bytes written per model firm ({f.days} d, {f.window})",
                mb(f.bytes_per_firm),
                f"<= {TARGET_BYTES / 1e6:.0f} MB (files left: record.sqlite "
                f"{mb(sizes.get('record.sqlite', 0))}, events {mb(sizes.get('events', 0))})",
            )
        )
    for f in runs:
        rows.append(
            (
                f"prefix-cacheable share of input ({f.days} d, {f.window})",
                f"all {pct(f.cached_share)}; compactions {pct(f.compaction_cached_share)}"
                f" ({f.compactions})",
                f"compaction call >= {TARGET_COMPACTION_CACHED * 100:.0f} %",
            )
        )
    if sweep:
        inline = sweep.get("inline")
        for backend in ("local", "process"):
            if backend in sweep and inline:
                ratio = sweep.get(f"{backend}/inline", sweep[backend] / inline)
                rows.append(
                    (
                        f"24-cell sweep, --backend {backend} --workers 2",
                        f"{sweep[backend]:.2f} s ({ratio:.2f}x inline)",
                        f"inline {inline:.2f} s; target <= {TARGET_SWEEP_RATIO:g}x inline",
                    )
                )
    header = ("figure", "measured", "floor / target")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    print("\n== model path figures (issue 27) ==")
    for row in (header, tuple("-" * w for w in widths), *rows):
        cells = (cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        print("  " + " | ".join(cells).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--windows",
        default="default,32k",
        help="Comma-separated context windows: 'default' (the provider's) or tokens (32k).",
    )
    parser.add_argument("--no-sweep", action="store_true", help="Skip the AlloBench sweep.")
    parser.add_argument("--sweep-repeat", type=int, default=3, help="Sweeps per backend.")
    args = parser.parse_args(argv)
    windows = [w.strip() for w in args.windows.split(",") if w.strip()]
    for window in windows:
        try:
            window_size(window)
        except ValueError:
            parser.error(f"unknown window {window!r}: 'default', or tokens as 32k or 32000")

    print(f"load average at start: {load_average()}")
    from _bytecode import compile_econbench

    compile_econbench()
    if proc_io() is None:
        print("note: /proc/self/io is absent (not Linux?): bytes written cannot be read")
    import openai  # noqa: F401  (the SDK's import is start-up, not per-request work)

    from econbench.agents.models import openai_provider  # noqa: F401

    calls = recorded_calls(args.days, args.seed)
    runs: list[Figures] = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="model_path-") as tmp:
        work = Path(tmp)
        scripted = scripted_cpu(args.days, args.seed, work / "scripted-warmup")
        scripted = min(scripted, scripted_cpu(args.days, args.seed, work / "scripted"))
        print(
            f"{args.days}-day run with {FIRM} scripted, same path: {scripted:.2f} s CPU "
            f"({len(calls)} {FIRM} tool calls to replay)"
        )
        # The first model run of a process pays one-off costs (the SDK's client and types,
        # lazy imports): a one-day run takes them before anything is timed.
        warm = model_run(windows[0], 1, args.seed, calls, work / "warm-up", floor=False)
        print(f"warm-up: a 1-day model run, {warm.requests} requests, {warm.run_cpu_s:.2f} s CPU")
        shutil.rmtree(work / "warm-up", ignore_errors=True)
        for window in windows:
            try:
                figures = model_run(window, args.days, args.seed, calls, work)
            except Exception as exc:  # a failed run is reported, and fails the script
                print(f"\n== window {window}: the run failed: {type(exc).__name__}: {exc}")
                failed = True
                continue
            figures.scripted_cpu_s = scripted
            print_run(figures)
            runs.append(figures)
            for done in (work / f"run-{window}", work / f"fake-{window}"):
                shutil.rmtree(done, ignore_errors=True)  # free the disk for the next run
    sweep = None
    if not args.no_sweep:
        try:
            sweep = run_sweep(args.sweep_repeat)
        except Exception as exc:
            print(f"the sweep failed: {exc}")
            failed = True
    print_table(runs, sweep)
    print(f"\nload average at end: {load_average()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
