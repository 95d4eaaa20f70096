"""Load a local causal language model (a transformers folder), once per process.

``load_causal_lm`` is shared by the ``hf/PATH`` provider and by post-training. Models are
cached per (folder, adapter, device, dtype), so six CoffeeBench firms played by one local
model share one copy in memory. The returned model is that shared copy: code that modifies
weights in place (training) must load its own (``clear_model_cache`` or a copy).

Nothing here touches the network: every load is ``local_files_only`` and the Hugging Face hub
is put offline for this process (unless the user configured ``HF_HUB_OFFLINE`` themselves).
Only this module's functions import torch, transformers or peft, so the core package and its
command line work without the ``train`` extra; a missing extra is one clear error.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any, Literal

from econbench.agents.models.errors import ModelConfigError

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TRAIN_EXTRA_HINT = "install the train extra: pip install 'econbench[train]'"
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "bfloat16")
Device = Literal["auto", "cpu", "cuda"]
DType = Literal["auto", "float32", "bfloat16"]

CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""The plain ChatML template used when a folder's tokenizer has none."""

_CACHE: dict[tuple[str, str | None, str, str], tuple[Any, Any]] = {}
_CACHE_LOCK = threading.Lock()


class LocalModelWarning(UserWarning):
    """Something about a local model folder is off but usable (e.g. no chat template)."""


def require_extra(*, adapter: bool = False) -> None:
    """Raise one clear ``ModelConfigError`` if torch/transformers (and peft) are missing.

    Checked with ``find_spec``, so it costs no import.
    """
    wanted = ["torch", "transformers"] + (["peft"] if adapter else [])
    missing = [m for m in wanted if importlib.util.find_spec(m) is None]
    if missing:
        raise ModelConfigError(f"local models need {', '.join(missing)}: {TRAIN_EXTRA_HINT}")


def check_model_folder(path: str | os.PathLike[str]) -> Path:
    """The model folder as an absolute path; ``ModelConfigError`` unless it looks loadable."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise ModelConfigError(
            f"local model folder {str(path)!r} does not exist (prepare one with "
            "`econbench models prepare smollm2`)"
        )
    if not folder.is_dir():
        raise ModelConfigError(f"local model path {str(path)!r} is not a folder")
    if not (folder / "config.json").is_file():
        ggufs = sorted(p.name for p in folder.glob("*.gguf"))
        hint = (
            f"; it holds {ggufs[0]}: convert GGUF files first (see `econbench models prepare`)"
            if ggufs
            else ""
        )
        raise ModelConfigError(
            f"{str(path)!r} is not a transformers model folder (no config.json){hint}"
        )
    return folder.resolve()


def check_adapter_folder(path: str | os.PathLike[str]) -> Path:
    """A peft adapter folder (it has ``adapter_config.json``), as an absolute path."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ModelConfigError(f"adapter folder {str(path)!r} does not exist")
    if not (folder / "adapter_config.json").is_file():
        raise ModelConfigError(
            f"{str(path)!r} is not a peft adapter folder (no adapter_config.json)"
        )
    return folder.resolve()


def read_model_config(folder: Path) -> dict[str, Any]:
    """``config.json`` as a dict (``{}`` if unreadable); no transformers needed."""
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def context_window_of(folder: Path) -> int | None:
    """The model's window (``max_position_embeddings``, also inside a ``text_config``)."""
    config = read_model_config(folder)
    for table in (config, config.get("text_config") or {}):
        value = table.get("max_position_embeddings") if isinstance(table, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    if device not in DEVICES:
        raise ModelConfigError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ModelConfigError("device 'cuda' was asked for, but torch sees no CUDA device")
    return device


def resolve_dtype(dtype: str, device: str) -> Any:
    """``auto`` → float32 on CPU, bfloat16 on a GPU that supports it (else float32)."""
    import torch

    if dtype not in DTYPES:
        raise ModelConfigError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if dtype == "auto":
        if device == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return getattr(torch, dtype)


def load_causal_lm(
    path: str | os.PathLike[str],
    *,
    device: Device | str = "auto",
    dtype: DType | str = "auto",
    adapter: str | None = None,
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for a transformers folder, optionally with a peft LoRA adapter.

    Cached per process by (folder, adapter, device, dtype); the model is in eval mode. A
    tokenizer without a chat template gets a plain ChatML one (with a ``LocalModelWarning``).
    Every problem with the folders is a ``ModelConfigError`` with a one-line message.
    """
    folder = check_model_folder(path)
    adapter_dir = check_adapter_folder(adapter) if adapter else None
    require_extra(adapter=adapter_dir is not None)
    where = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, where)
    key = (str(folder), str(adapter_dir) if adapter_dir else None, where, str(torch_dtype))
    with _CACHE_LOCK:
        found = _CACHE.get(key)
        if found is None:
            found = _load(folder, adapter_dir, where, torch_dtype)
            _CACHE[key] = found
    return found


def clear_model_cache() -> None:
    """Forget every loaded model (the next ``load_causal_lm`` reads the folder again)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _load(folder: Path, adapter: Path | None, device: str, dtype: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    tokenizer = load_tokenizer(folder)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a run's own progress display stays readable
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise ModelConfigError(f"cannot load the model in {folder}: {_first_line(exc)}") from None
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    if adapter is not None:
        model = _with_adapter(model, folder, adapter)
    model.to(device)
    model.eval()
    return model, tokenizer


def load_tokenizer(folder: Path) -> Any:
    """The folder's tokenizer, with a ChatML template when it has none and a pad token."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelConfigError(f"{folder} has no usable tokenizer: {_first_line(exc)}") from None
    if not isinstance(tokenizer.chat_template, str | dict) or not tokenizer.chat_template:
        warnings.warn(
            f"{folder} has no chat template; using a plain ChatML template "
            "(<|im_start|>role ... <|im_end|>)",
            LocalModelWarning,
            stacklevel=3,
        )
        tokenizer.chat_template = CHATML_TEMPLATE
    if tokenizer.pad_token is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _with_adapter(model: Any, folder: Path, adapter: Path) -> Any:
    """The base model with the LoRA adapter loaded on top; a clear error if it does not fit."""
    from peft import PeftModel

    base = _adapter_base(adapter)
    try:
        wrapped = PeftModel.from_pretrained(model, adapter, is_trainable=False)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        trained = f" (it was trained on {base})" if base else ""
        raise ModelConfigError(
            f"the adapter {adapter} does not fit the model {folder}{trained}: {_first_line(exc)}"
        ) from None
    if base and Path(base).expanduser().is_dir() and Path(base).expanduser().resolve() != folder:
        warnings.warn(
            f"the adapter {adapter} was trained on {base}, not on {folder}; its shapes fit, "
            "so it is used anyway",
            LocalModelWarning,
            stacklevel=4,
        )
    return wrapped


def _adapter_base(adapter: Path) -> str | None:
    try:
        data = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ModelConfigError(f"{adapter}/adapter_config.json is not valid JSON") from None
    base = data.get("base_model_name_or_path") if isinstance(data, dict) else None
    return base if isinstance(base, str) and base else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
