"""A tiny, randomly initialised Llama-architecture model built from a config: no download.

It exercises every code path of the local-model provider and of post-training (chat
template, tokenizer, generation, LoRA, saving and loading) in seconds, which is what CI and
smoke tests need; its outputs are noise. The tokenizer is a byte-level BPE trained on a few
lines of the benchmarks' own vocabulary, so any text round-trips.

That tokenizer is inefficient (about 3 characters a token): CoffeeBench's roaster prompt and
tools alone take some 13,000 tokens, so a folder meant to play both benchmarks is written with
``PREPARED_WINDOW`` positions (what ``econbench models prepare tiny`` does); rotary positions
have no trained limit, and the model is noise at any length.
"""

from __future__ import annotations

from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
DEFAULT_WINDOW = 8192
"""``max_position_embeddings`` of a tiny model built for a test: enough for AlloBench."""
PREPARED_WINDOW = 32_768
"""The window of the prepared tiny model: CoffeeBench's first prompt (~13k tokens) and the
day's conversation until compaction (at 80 % of the window) fit in it."""

CORPUS = [
    "DECISION: KEEP",
    "DECISION: PASS",
    "Draw 3 of 60: a red ball appears. You have 2 keeps left. KEEP or PASS?",
    "A treasure chest, a coin, a crest; a quiver, an arrow, a feather; a cauldron, a potion.",
    '<tool_call>[{"name": "claim_solver", "arguments": {"code": "def solve(inputs): ..."}}]'
    "</tool_call>",
    "view_listings make_offer accept_offer pay_invoice roast wait_for_next_day",
]


def make_tiny_llama(
    out_dir: str | Path,
    *,
    seed: int = 0,
    vocab_size: int = 400,
    context_window: int = DEFAULT_WINDOW,
) -> Path:
    """Write a tiny Llama model and its tokenizer (with a chat template) to ``out_dir``;
    ``context_window`` is its ``max_position_embeddings``, the window the provider uses."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<unk>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(CORPUS * 10, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        unk_token="<unk>",
        pad_token="<|im_end|>",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context_window,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
