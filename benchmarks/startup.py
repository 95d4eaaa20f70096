"""Start-up and whole-command CPU figures of the ``econbench`` command line.

Each figure is the CPU time (user + system) of a whole process, start-up included, read with
``getrusage(RUSAGE_CHILDREN)`` around ``subprocess.run``; the median of ``--runs`` runs is
printed, with the load average, since CPU time on a busy shared machine reads high. CPU time
rather than wall time: other work on the machine then changes it less.

When the reference implementation (SakanaAI/CoffeeBench) is available offline, its inert
economy (every firm on its ``passive`` model, 90 days, seed 0) is timed in the same minute:
``--reference DIR`` (a checkout, or the bare mirror ``/work/.mirror/SakanaAI+CoffeeBench/repo``,
exported to a temporary directory) and ``--reference-python`` (it needs Python 3.12; its
passive run uses the standard library only). Otherwise the script says why it is skipped.

The import figure of a 2-day all-scripted ``coffee run --quiet`` follows: what ``-X importtime``
reports (the self time of every module, summed, median of ``--runs``), by top-level package,
so an import that creeps back onto the run's path shows up by name.

    .venv/bin/python benchmarks/startup.py [--runs 5] [--reference DIR]
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/SakanaAI+CoffeeBench/repo")
TARGETS = {"econbench --help": 0.25, "coffee run, 90 days, all scripted (--quiet)": 0.6}
"""The issue's targets, CPU seconds."""
BYTECODE_OFF = "PYTHONDONTWRITEBYTECODE"


@dataclass(frozen=True)
class Figure:
    label: str
    cpu_s: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.cpu_s)


def with_bytecode(env: dict[str, str] | None) -> dict[str, str]:
    """``env`` (or this process's) without ``PYTHONDONTWRITEBYTECODE``: the warm-up run
    writes the bytecode an installed package has, so no figure pays for compiling."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k != BYTECODE_OFF}


def cpu_of(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + system) of one whole process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, cwd=cwd, env=with_bytecode(env), capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(label: str, argv: Sequence[str], runs: int, cwd: Path, **kw: object) -> Figure:
    cpu_of(argv, cwd, **kw)  # warm the file cache and the bytecode
    return Figure(label, [cpu_of(argv, cwd, **kw) for _ in range(runs)])  # type: ignore[arg-type]


def econbench_commands(work: Path) -> list[tuple[str, list[str]]]:
    script = Path(sys.executable).with_name("econbench")  # the installed entry point
    exe = [str(script)] if script.is_file() else [sys.executable, "-m", "econbench.cli"]
    run = [*exe, "coffee", "run", "--days", "90", "--overwrite"]
    return [
        ("econbench --help", [*exe, "--help"]),
        ("econbench coffee run --help", [*exe, "coffee", "run", "--help"]),
        (
            "coffee run, 90 days, all scripted (--quiet)",
            [*run, "--agent", "default=scripted", "--quiet", "--out", str(work / "scripted")],
        ),
        (
            "coffee run, 90 days, all passive (--quiet): the inert economy",
            [*run, "--agent", "default=passive", "--quiet", "--out", str(work / "passive")],
        ),
        (
            "coffee run, 90 days, default negotiating background (--quiet)",
            [*run, "--quiet", "--out", str(work / "negotiating")],
        ),
        (
            "coffee run, 90 days, default background, progress bar",
            [*run, "--out", str(work / "negotiating-bar")],
        ),
        (
            "allo run --framing r0 --policy eager --episodes 24",
            [
                *exe, "allo", "run", "--framing", "r0", "--policy", "eager", "--episodes", "24",
                "--overwrite", "--out", str(work / "allo"),
            ],
        ),
    ]  # fmt: skip


IMPORT_RUN = ["coffee", "run", "--agent", "default=scripted", "--days", "2", "--quiet"]
"""The command whose imports are shown: the days are few, so start-up is most of it."""
IMPORTS_LABEL = f"imports of `econbench {' '.join(IMPORT_RUN)}`"


@dataclass(frozen=True)
class ImportFigure:
    """One process's ``-X importtime`` report: self microseconds per module, in load order."""

    self_us: dict[str, int]

    @property
    def total_ms(self) -> float:
        return sum(self.self_us.values()) / 1000

    def by_package(self) -> list[tuple[str, float]]:
        """Milliseconds per top-level package, largest first."""
        sums: collections.Counter[str] = collections.Counter()
        for module, us in self.self_us.items():
            sums[module.split(".")[0]] += us
        return [(name, us / 1000) for name, us in sums.most_common()]


def import_figure(work: Path) -> ImportFigure:
    """The imports of one scripted 2-day run (``python -X importtime``, stderr parsed)."""
    argv = [sys.executable, "-X", "importtime", "-m", "econbench.cli", *IMPORT_RUN]
    argv += ["--overwrite", "--out", str(work / "imports")]
    done = subprocess.run(argv, cwd=ROOT, env=with_bytecode(None), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    self_us: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line.removeprefix("import time:").split("|")
        self_us[name.strip()] = int(own)
    return ImportFigure(self_us)


def print_imports(runs: int, work: Path) -> None:
    """The median run's import time, its module count and its largest packages."""
    import_figure(work)  # warm the bytecode
    figures = sorted((import_figure(work) for _ in range(runs)), key=lambda f: f.total_ms)
    median = figures[len(figures) // 2]
    print(
        f"{median.total_ms / 1000:7.3f} s  {IMPORTS_LABEL} "
        f"({len(median.self_us)} modules; -X importtime self times, median run)"
    )
    top = ", ".join(f"{name} {ms:.0f}" for name, ms in median.by_package()[:12])
    print(f"          by package (ms): {top}")


def reference_checkout(option: Path | None, work: Path) -> tuple[Path | None, str]:
    """A working tree of the reference, or why there is none."""
    source = option if option is not None else MIRROR
    if not source.exists():
        return None, f"no reference at {source} (pass --reference DIR)"
    if (source / "coffeebench" / "main.py").is_file():
        return source, ""
    if shutil.which("git") is None:
        return None, "git is needed to export the bare mirror"
    tree = work / "reference"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(source), "archive", "HEAD"], capture_output=True)
    if archive.returncode != 0:
        return None, f"cannot export {source}: {archive.stderr.decode()[-300:]}"
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree, ""


def reference_python(option: str | None) -> tuple[str | None, str]:
    """A Python ≥ 3.12 to run the reference with (its ``requires-python``)."""
    pyenv = sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3"))
    candidates = [option] if option else ["python3.12", "python3.13", *map(str, pyenv)]
    for name in candidates:
        path = shutil.which(name)
        if path is None:
            continue
        probe = subprocess.run(
            [path, "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True,
            text=True,
        )
        if probe.stdout.strip() == "True":
            return path, ""
    return None, "no Python >= 3.12 found (the reference requires it; --reference-python)"


def reference_figure(args: argparse.Namespace, work: Path) -> Figure | str:
    tree, why = reference_checkout(args.reference, work)
    if tree is None:
        return why
    python, why = reference_python(args.reference_python)
    if python is None:
        return why
    argv = [
        python, "-m", "coffeebench.main", "--model", "passive", "--max_days", "90", "--seed",
        "0", "--output", str(work / "reference-run"),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tree)}
    try:
        return measure(
            "reference (SakanaAI/CoffeeBench) inert economy, 90 days, all passive",
            argv,
            args.runs,
            tree,
            env=env,
        )
    except SystemExit as exc:  # e.g. an SDK its passive path imports is missing here
        return f"the reference's passive run failed offline here: {str(exc)[:300]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="Runs per figure (median).")
    parser.add_argument("--reference", type=Path, default=None)
    parser.add_argument("--reference-python", default=None)
    parser.add_argument("--skip", action="append", default=[], help="Skip figures containing.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="econbench-startup-") as tmp:
        work = Path(tmp)
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        python = sys.version.split()[0]
        print(f"median CPU (user + sys) of {args.runs} whole processes; Python {python}")
        figures: list[Figure] = []
        for label, argv in econbench_commands(work):
            if any(s in label for s in args.skip):
                continue
            figure = measure(label, argv, args.runs, ROOT)
            figures.append(figure)
            target = TARGETS.get(label)
            goal = f"   (target ≤ {target:.2f} s)" if target is not None else ""
            spread = f"{min(figure.cpu_s):.3f}–{max(figure.cpu_s):.3f}"
            print(f"{figure.median:7.3f} s  [{spread}]  {label}{goal}", flush=True)
        if not any(s in IMPORTS_LABEL for s in args.skip):
            print_imports(args.runs, work)
        reference = reference_figure(args, work)
        if isinstance(reference, str):
            print(f"reference implementation not timed: {reference}")
        else:
            spread = f"{min(reference.cpu_s):.3f}–{max(reference.cpu_s):.3f}"
            print(f"{reference.median:7.3f} s  [{spread}]  {reference.label}")
            by_label = {f.label: f.median for f in figures}
            for label in (
                "coffee run, 90 days, all passive (--quiet): the inert economy",
                "coffee run, 90 days, all scripted (--quiet)",
            ):
                if label in by_label:
                    ratio = reference.median / by_label[label]
                    print(f"          reference inert / econbench {label}: {ratio:.2f}×")
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
