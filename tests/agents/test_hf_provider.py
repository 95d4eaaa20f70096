"""The ``hf/PATH`` provider on the tiny random Llama: prompts, sampling, usage, registry,
and whole AlloBench / CoffeeBench runs played by a local model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from typer.testing import CliRunner  # noqa: E402

from econbench.agents.models.base import (  # noqa: E402
    ChatMessage,
    ContextOverflowError,
    GenerateConfig,
)
from econbench.agents.models.hf import provider as hf_provider  # noqa: E402
from econbench.agents.models.hf.loading import (  # noqa: E402
    CHATML_TEMPLATE,
    LocalModelWarning,
    clear_model_cache,
    load_causal_lm,
)
from econbench.agents.models.hf.provider import (  # noqa: E402
    HFProvider,
    Sampling,
    chat_messages,
    loop_period,
    render_prompt,
    sample_tokens,
)
from econbench.agents.models.hf.tiny import make_tiny_llama  # noqa: E402
from econbench.agents.models.registry import (  # noqa: E402
    ModelConfigError,
    ModelSettings,
    build_provider,
    check_keys,
    parse_model_name,
)
from econbench.agents.tools import ToolCall, ToolSpec, tool  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_llama(tmp_path_factory.mktemp("hf") / "tiny")


@tool("write")
def claim_solver() -> dict:
    """Build a solver for this task's family."""
    return {}


@tool("write")
def make_offer(listing_id: str, price: float) -> dict:
    """Offer a price for a listing.

    Args:
        listing_id: The listing to bid on.
        price: Price per kilogram in dollars.
    """
    return {}


TOOLS = [ToolSpec.from_function(claim_solver), ToolSpec.from_function(make_offer)]
MESSAGES = [
    ChatMessage("system", "You play a drawing game."),
    ChatMessage("user", "Draw 3 of 60: a red ball appears. KEEP or PASS?"),
]


def _run(provider: Any, messages=MESSAGES, tools=(), config: GenerateConfig | None = None):
    return asyncio.run(provider.generate(list(messages), list(tools), config or GenerateConfig()))


# --------------------------------------------------------------------------- generate


def test_generate_counts_tokens_as_the_tokenizer_does(tiny: Path) -> None:
    provider = HFProvider(str(tiny))
    output = _run(provider, config=GenerateConfig(max_tokens=8))
    _, tokenizer = load_causal_lm(tiny)
    chat = [{"role": m.role, "content": m.content} for m in MESSAGES]
    text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    assert output.usage.input_tokens == len(tokenizer(text, add_special_tokens=False).input_ids)
    assert 1 <= output.usage.output_tokens <= 8
    if output.stop == "length":
        assert output.usage.output_tokens == 8
    assert output.cost_usd == 0.0 and output.model == f"hf/{tiny}"
    assert isinstance(output.text, str) and output.tool_calls == []


def test_greedy_matches_transformers_generate(tiny: Path) -> None:
    model, tokenizer = load_causal_lm(tiny)
    ids = tokenizer("DECISION: KEEP or PASS?", add_special_tokens=False).input_ids
    ours, _ = sample_tokens(model, ids, Sampling(12, 0.0, 1.0, None, 0), stop_ids=set())
    with torch.inference_mode():
        theirs = model.generate(
            torch.tensor([ids]), max_new_tokens=12, do_sample=False, eos_token_id=None
        )[0, len(ids) :].tolist()
    assert ours == theirs


def test_loop_detection_finds_only_long_exact_loops() -> None:
    assert loop_period([1, 2, 3] * 22) == 3
    assert loop_period([7] * 63) is None and loop_period([9, *[7] * 64]) == 1
    assert loop_period(list(range(200))) is None
    period_40 = list(range(40)) * 5  # longer than LOOP_MAX_PERIOD
    assert loop_period(period_40) is None
    ten = list(range(10))
    assert loop_period(ten * 7) is None and loop_period(ten * 8) == 10
    assert loop_period([5, 6] * 40 + [1]) is None  # the loop must reach the end


class _Cycler(torch.nn.Module):
    """A "model" that always continues 0, 1, 2, 0, 1, 2, …"""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids: Any, past_key_values: Any = None, use_cache: bool = True) -> Any:
        from types import SimpleNamespace

        logits = torch.full((1, input_ids.shape[1], 5), -1e9)
        logits[0, -1, (int(input_ids[0, -1]) + 1) % 3] = 0.0
        return SimpleNamespace(logits=logits, past_key_values=None)


def test_a_looping_reply_is_cut_instead_of_running_to_the_limit() -> None:
    tokens, ended = sample_tokens(_Cycler(), [2], Sampling(500, 0.0, 1.0, None, 0), stop_ids=set())
    assert ended == "repetition" and len(tokens) == 66 and tokens[:4] == [0, 1, 2, 0]
    tokens, ended = sample_tokens(_Cycler(), [2], Sampling(30, 0.0, 1.0, None, 0), stop_ids=set())
    assert ended == "length" and len(tokens) == 30
    tokens, ended = sample_tokens(_Cycler(), [2], Sampling(30, 0.0, 1.0, None, 0), stop_ids={2})
    assert ended == "stop" and tokens == [0, 1, 2]


def test_same_request_same_reply_and_seed_changes_it(tiny: Path) -> None:
    config = GenerateConfig(temperature=1.0, max_tokens=24, extra={"seed": 1})
    first = _run(HFProvider(str(tiny)), config=config)
    again = _run(HFProvider(str(tiny)), config=config)
    assert (again.text, again.usage) == (first.text, first.usage)
    other_seed = _run(HFProvider(str(tiny)), config=GenerateConfig(1.0, 24, extra={"seed": 2}))
    assert other_seed.text != first.text
    plain = GenerateConfig(1.0, 24)  # no seed in the request: the provider's (settings') seed
    by_settings = [_run(HFProvider(str(tiny), seed=s), config=plain).text for s in (5, 5, 6)]
    assert by_settings[0] == by_settings[1] != by_settings[2]
    longer = [*MESSAGES, ChatMessage("user", "Draw 4 of 60.")]
    assert _run(HFProvider(str(tiny)), messages=longer, config=config).text != first.text


def test_concurrent_calls_on_one_shared_model_give_the_sequential_replies(tiny: Path) -> None:
    configs = [GenerateConfig(1.0, 16, extra={"seed": s}) for s in range(4)]
    alone = [_run(HFProvider(str(tiny)), config=c).text for c in configs]

    async def together() -> list[str]:
        providers = [HFProvider(str(tiny)) for _ in configs]
        outputs = await asyncio.gather(
            *(p.generate(list(MESSAGES), [], c) for p, c in zip(providers, configs, strict=True))
        )
        return [o.text for o in outputs]

    assert asyncio.run(together()) == alone


def test_reply_with_a_tool_call_is_parsed(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, tokenizer = load_causal_lm(tiny)
    reply = 'I build it.\n<tool_call>[{"name": "claim_solver", "arguments": {}}]</tool_call>'
    ids = [*tokenizer(reply, add_special_tokens=False).input_ids, tokenizer.eos_token_id]
    monkeypatch.setattr(hf_provider, "sample_tokens", lambda *a, **k: (list(ids), "stop"))
    output = _run(HFProvider(str(tiny)), tools=TOOLS)
    assert output.tool_calls == [ToolCall("claim_solver", {})]
    assert output.text == "I build it." and output.stop_reason == "tool_use"
    assert output.usage.output_tokens == len(ids)

    garbage = tokenizer("<tool_call>claim it!</tool_call>", add_special_tokens=False).input_ids
    monkeypatch.setattr(hf_provider, "sample_tokens", lambda *a, **k: (list(garbage), "length"))
    bad = _run(HFProvider(str(tiny)), tools=TOOLS)
    assert bad.tool_calls == [] and bad.stop_reason == "max_tokens"
    assert "tool_call" in bad.provider_data["hf"]["tool_call_error"]


def test_prompt_too_long_for_the_window_overflows(tiny: Path) -> None:
    provider = HFProvider(str(tiny), context_window=16)
    with pytest.raises(ContextOverflowError, match="context window is 16"):
        _run(provider)


# --------------------------------------------------------------------------- prompts


def test_tools_go_into_the_system_prompt_and_history_is_rerendered(tiny: Path) -> None:
    call = ToolCall("make_offer", {"listing_id": "L-1", "price": 2.5}, "call_1")
    history = [
        *MESSAGES,
        ChatMessage("assistant", "Bid.", tool_calls=[call]),
        ChatMessage("tool", '{"status": "success"}', tool_call_id="call_1", name="make_offer"),
        ChatMessage("user", "Day 2 begins."),
        ChatMessage("system", "Reminder: be brief."),
    ]
    chat = chat_messages(history, TOOLS, native=False)
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user"]
    system = chat[0]["content"]
    assert system.startswith("You play a drawing game.\n\n# Tools")
    assert '"name": "make_offer"' in system and "<tool_call>" in system
    assert chat[2]["content"] == (
        'Bid.\n<tool_call>[{"name": "make_offer", "arguments": '
        '{"listing_id": "L-1", "price": 2.5}}]</tool_call>'
    )
    last = chat[3]["content"]
    assert last.startswith('<tool_response>\n{"name": "make_offer", "result": {"status"')
    assert last.endswith("Day 2 begins.\n\nReminder: be brief.")
    _, tokenizer = load_causal_lm(tiny)
    text = render_prompt(history, TOOLS, tokenizer)
    assert text.count("<|im_start|>") == 5 and text.endswith("<|im_start|>assistant\n")


def test_without_tools_there_is_no_tools_section() -> None:
    chat = chat_messages(MESSAGES, [], native=False)
    assert chat == [
        {"role": "system", "content": "You play a drawing game."},
        {"role": "user", "content": MESSAGES[1].content},
    ]


class _Tokenizer:
    """A stand-in tokenizer whose template accepts or rejects what it is given."""

    def __init__(self, template: str, reject: str | None = None) -> None:
        self.chat_template = template
        self.reject = reject
        self.seen: list[tuple[list[dict], Any]] = []

    def apply_chat_template(self, chat, tools=None, **_: Any) -> str:
        self.seen.append((chat, tools))
        if self.reject == "system" and chat[0]["role"] == "system":
            raise ValueError("System role not supported")
        if self.reject == "tool" and any(m["role"] == "tool" for m in chat):
            raise ValueError("unknown role")
        return json.dumps(chat)


def test_native_tools_template_gets_tools_and_tool_turns() -> None:
    call = ToolCall("claim_solver", {}, "c1")
    history = [
        *MESSAGES,
        ChatMessage("assistant", "", tool_calls=[call]),
        ChatMessage("tool", '{"status": "success"}', tool_call_id="c1", name="claim_solver"),
    ]
    tokenizer = _Tokenizer("{% if tools %}...{% endif %}")
    chat = json.loads(render_prompt(history, TOOLS, tokenizer))
    assert tokenizer.seen[0][1] == [t.openai_schema() for t in TOOLS]
    assert chat[0] == {"role": "system", "content": "You play a drawing game."}
    assert chat[2]["tool_calls"][0]["function"] == {"name": "claim_solver", "arguments": {}}
    assert chat[3] == {"role": "tool", "name": "claim_solver", "content": '{"status": "success"}'}

    rejecting = _Tokenizer("{% if tools %}...{% endif %}", reject="tool")
    fallback = json.loads(render_prompt(history, TOOLS, rejecting))
    assert rejecting.seen[-1][1] is None and "# Tools" in fallback[0]["content"]


def test_template_without_system_role_gets_it_folded_into_the_first_user_turn() -> None:
    tokenizer = _Tokenizer("plain", reject="system")
    chat = json.loads(render_prompt(MESSAGES, [], tokenizer))
    assert chat == [
        {"role": "user", "content": f"You play a drawing game.\n\n{MESSAGES[1].content}"}
    ]


# --------------------------------------------------------------------------- loading


def test_models_are_cached_per_folder_and_settings(tiny: Path) -> None:
    first = load_causal_lm(tiny)
    assert load_causal_lm(str(tiny), device="cpu", dtype="float32") is first
    assert next(first[0].parameters()).dtype == torch.float32
    other = load_causal_lm(tiny, dtype="bfloat16")
    assert other is not first and next(other[0].parameters()).dtype == torch.bfloat16


def test_missing_chat_template_falls_back_to_chatml(tiny: Path, tmp_path: Path) -> None:
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(tiny, bare)
    (bare / "chat_template.jinja").unlink(missing_ok=True)
    config = json.loads((bare / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (bare / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.warns(LocalModelWarning, match="no chat template"):
        _, tokenizer = load_causal_lm(bare)
    assert tokenizer.chat_template == CHATML_TEMPLATE


def test_folder_problems_are_clear_errors(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="does not exist"):
        load_causal_lm(tmp_path / "nowhere")
    (tmp_path / "gguf_only").mkdir()
    (tmp_path / "gguf_only" / "m.gguf").write_bytes(b"GGUF")
    with pytest.raises(ModelConfigError, match=r"no config\.json.*m\.gguf"):
        load_causal_lm(tmp_path / "gguf_only")
    with pytest.raises(ModelConfigError, match="not a peft adapter"):
        load_causal_lm(tiny, adapter=str(tmp_path))
    with pytest.raises(ModelConfigError, match="device"):
        load_causal_lm(tiny, device="tpu")


def test_lora_adapter_loads_and_one_for_another_base_is_refused(tiny: Path, tmp_path: Path) -> None:
    peft = pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    def lora() -> Any:
        return peft.LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"])

    base = AutoModelForCausalLM.from_pretrained(tiny)
    peft.get_peft_model(base, lora()).save_pretrained(tmp_path / "good")
    model, _ = load_causal_lm(tiny, adapter=str(tmp_path / "good"))
    assert isinstance(model, peft.PeftModel)
    wider = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=400,
            hidden_size=48,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
    )
    peft.get_peft_model(wider, lora()).save_pretrained(tmp_path / "wider")
    with pytest.raises(ModelConfigError, match="does not fit the model"):
        load_causal_lm(tiny, adapter=str(tmp_path / "wider"))


# --------------------------------------------------------------------------- registry


def test_registry_builds_hf_models_from_relative_and_absolute_paths(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert parse_model_name("hf/models/a/b") == ("hf", "models/a/b")
    assert parse_model_name("hf//abs/path") == ("hf", "/abs/path")
    name = f"hf/{tiny}"
    check_keys([name])
    provider = build_provider(name, ModelSettings(max_tokens=4, seed=3, top_p=0.5))
    assert isinstance(provider.inner, HFProvider) and provider.context_window == 8192
    assert provider.generate_config().extra == {"top_p": 0.5, "seed": 3}
    assert provider.inner.path == tiny.resolve()
    monkeypatch.chdir(tiny.parent)
    relative = build_provider(f"hf/{tiny.name}")
    output = asyncio.run(relative.generate(list(MESSAGES), [], GenerateConfig(max_tokens=3)))
    assert output.cost_usd == 0.0 and output.usage.output_tokens <= 3


def test_a_local_folder_named_like_an_api_model_is_free(tiny: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(tiny, tmp_path / "gpt-4o")
    provider = build_provider(f"hf/{tmp_path / 'gpt-4o'}")
    output = asyncio.run(provider.generate(list(MESSAGES), [], GenerateConfig(max_tokens=2)))
    assert output.cost_usd == 0.0


def test_registry_errors_come_before_the_run(tmp_path: Path, tiny: Path) -> None:
    with pytest.raises(ModelConfigError, match="does not exist"):
        check_keys([f"hf/{tmp_path / 'missing'}"])
    with pytest.raises(ModelConfigError, match="does not exist"):
        build_provider(f"hf/{tmp_path / 'missing'}")
    with pytest.raises(ModelConfigError, match="adapter folder"):
        check_keys([f"hf/{tiny}"], ModelSettings(adapter=str(tmp_path / "none")))
    with pytest.raises(ModelConfigError, match="only to local models"):
        check_keys(["openai-compatible/m"], ModelSettings(top_p=0.9, base_url="http://x:1/v1"))
    with pytest.raises(ModelConfigError, match="does not apply to a local model"):
        check_keys([f"hf/{tiny}"], ModelSettings(base_url="http://127.0.0.1:1/v1"))


def test_missing_extra_is_one_clear_error(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "transformers" else real(n, *a)
    )
    with pytest.raises(ModelConfigError, match=r"pip install 'econbench\[train\]'"):
        check_keys([f"hf/{tiny}"])


# --------------------------------------------------------------------------- whole runs


def test_allobench_r0_cell_with_a_random_local_model(tiny: Path, tmp_path: Path) -> None:
    from econbench.allo.episodes.runner import CellSpec
    from econbench.runs.allo.cell import run_cell

    policy = f"hf/{tiny}"
    summary = run_cell(
        CellSpec(framing="r0", policy=policy, seeds=(2000,)),
        tmp_path / "cell",
        models={policy: ModelSettings(max_tokens=16)},
    )
    assert summary["status"] == "completed" and summary["episodes"] == 1
    assert summary["llm_calls"] > 0 and summary["cost_usd"] == 0.0
    assert summary["unresolved_turns"] > 0  # noise never ends with a DECISION line
    assert summary["input_tokens"] > 0 and summary["output_tokens"] > 0


def test_coffeebench_two_days_with_a_local_roaster(tiny: Path, tmp_path: Path) -> None:
    from econbench.runs.coffee.config import RunConfig
    from econbench.runs.coffee.run import run_to_dir

    name = f"hf/{tiny}"
    config = RunConfig(
        seed=1,
        days=2,
        agents={"default": "scripted", "roaster_A": name},
        # the tiny tokenizer needs ~11k tokens for the roaster's prompt and tools; the
        # model's rotary positions go beyond its nominal 8k window
        models={name: ModelSettings(max_tokens=12, context_window=32_768)},
    )
    summary = run_to_dir(config, tmp_path / "run")
    assert summary["status"] == "completed" and summary["days_run"] == 2
    events = [json.loads(e) for e in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    calls = [e for e in events if e["type"] == "model_call"]
    assert len(calls) >= 2  # at least one wake a day
    assert all(c["model"] == name and c["firm"] == "roaster_A" for c in calls)
    assert all(c["usage"]["input_tokens"] > 0 and c["cost_usd"] == 0.0 for c in calls)


def test_cli_prepares_the_tiny_model_once(tmp_path: Path) -> None:
    from econbench.cli import app

    runner = CliRunner()
    out = tmp_path / "m" / "tiny"
    first = runner.invoke(app, ["models", "prepare", "tiny", "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert first.stdout.strip().splitlines()[-1] == str(out.resolve())
    assert (out / "config.json").is_file() and (out / "econbench-prepared.json").is_file()
    stamp = (out / "model.safetensors").stat().st_mtime_ns
    again = runner.invoke(app, ["models", "prepare", "tiny", "--out", str(out)])
    assert again.exit_code == 0 and "reusing" in again.stderr
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp
    bad = runner.invoke(app, ["models", "prepare", "llama-405b"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: unknown model")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    foreign = runner.invoke(app, ["models", "prepare", "tiny", "--out", str(tmp_path / "mine")])
    assert foreign.exit_code == 2 and "not written by" in foreign.stderr
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"
    clear_model_cache()
