"""The ``hf/PATH`` provider: a local causal LM run in-process with transformers.

It speaks the same ``generate(messages, tools, config)`` as the API providers, so the
CoffeeBench and AlloBench agents cannot tell it from any other model. Choices:

- **Chat.** The conversation goes through the tokenizer's chat template. Leading system
  messages are merged; later ones become user turns. When the template has no tools section
  (most small models), the tools are described in the system prompt
  (``econbench.agents.models.hf.toolcall``), the model's earlier calls are re-rendered in the
  ``<tool_call>`` format it was asked to use, and tool results come back as user turns in
  ``<tool_response>`` tags; consecutive turns of one role are merged so templates that
  insist on alternation accept the history. A template that declares ``tools`` gets them
  natively (with ``tool`` turns), falling back to the prompt form if it rejects the history.
- **Sampling.** Temperature, top-p and the token limit come from ``GenerateConfig`` (the
  model's settings); unset ones from the folder's ``generation_config.json`` where it sets
  them, else temperature 1 and top-p 1 (the API defaults). Temperature 0 is greedy.
- **Deterministic.** Tokens are drawn with a private ``torch.Generator`` seeded from a hash
  of the request (messages, tools, config) and the settings' ``seed``: the same request gets
  the same reply, which resume and replay rely on, and no global random state is touched.
- **Blocking work off the event loop.** Generation runs in a worker thread
  (``asyncio.to_thread``) under a per-model lock; firms sharing a model take turns.
- **Usage and cost.** ``input_tokens`` is the prompt's token count, ``output_tokens`` the
  generated tokens (the stop token included); ``cost_usd`` is 0. A prompt that does not fit
  ``max_position_embeddings`` raises ``ContextOverflowError`` (the agent compacts); the reply
  is cut to the room that is left. ``timeout_s`` does not apply: a local call does not hang
  on a network, and a time limit would make replies depend on machine speed.
- **Loops are cut.** A reply that has fallen into an exact loop (``loop_period``) ends there
  with stop reason ``repetition`` instead of spinning to the token limit.
- **Speed.** Each call encodes the whole prompt afresh (no KV reuse across calls, so a reply
  never depends on which calls came before). On a small or busy CPU, torch's thread pool can
  be far slower than one thread: try ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from econbench.agents.models.base import (
    ChatMessage,
    ContextOverflowError,
    FatalModelError,
    GenerateConfig,
    ModelOutput,
    ModelProvider,
    Usage,
)
from econbench.agents.models.hf.loading import (
    check_adapter_folder,
    check_model_folder,
    context_window_of,
    load_causal_lm,
)
from econbench.agents.models.hf.toolcall import (
    parse_tool_calls,
    render_calls,
    render_tool_result,
    tools_system_prompt,
)
from econbench.agents.models.record import canonical_json, config_dict, message_body, tools_body
from econbench.agents.tools import ToolSpec

DEFAULT_MAX_TOKENS = 1024
DEFAULT_TEMPERATURE = 1.0
DEFAULT_TOP_P = 1.0
DEFAULT_CONTEXT_WINDOW = 2048
_END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>")

LOOP_MAX_PERIOD = 32
LOOP_MIN_REPEATS = 8
LOOP_MIN_SPAN = 64
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "repetition": "repetition"}

_LOCKS: dict[int, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _model_lock(model: Any) -> threading.Lock:
    """One lock per loaded model: generation on a shared model runs one call at a time."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(id(model), threading.Lock())


@dataclass(frozen=True)
class Sampling:
    """How to draw the reply's tokens."""

    max_new_tokens: int
    temperature: float
    top_p: float
    top_k: int | None
    seed: int


class HFProvider(ModelProvider):
    """A transformers causal LM from a local folder (see the module docstring)."""

    def __init__(
        self,
        path: str,
        *,
        name: str | None = None,
        adapter: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        seed: int | None = None,
        top_p: float | None = None,
        context_window: int | None = None,
    ) -> None:
        self.path = check_model_folder(path)
        self.adapter = str(check_adapter_folder(adapter)) if adapter else None
        self.name = name or f"hf/{path}"
        self.device = device or "auto"
        self.dtype = dtype or "auto"
        self.seed = seed or 0
        self.top_p = top_p
        self.context_window = (
            context_window or context_window_of(self.path) or DEFAULT_CONTEXT_WINDOW
        )
        self._defaults = _generation_defaults(self.path)

    def __repr__(self) -> str:
        return f"HFProvider(name={self.name!r}, path={str(self.path)!r})"

    def load(self) -> tuple[Any, Any]:
        """The (shared, cached) model and tokenizer."""
        return load_causal_lm(self.path, device=self.device, dtype=self.dtype, adapter=self.adapter)

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        return await asyncio.to_thread(self.generate_sync, messages, tools, config)

    def generate_sync(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        """The blocking call behind ``generate`` (usable from plain threads and scripts)."""
        model, tokenizer = self.load()
        # One call at a time per model; the lock covers the tokenizer too, since a fast
        # tokenizer used from two threads at once fails ("Already borrowed").
        with _model_lock(model):
            prompt_ids = self.prompt_ids(messages, tools, tokenizer)
            room = self.context_window - len(prompt_ids)
            if room <= 0:
                raise ContextOverflowError(
                    f"{self.name}: the prompt has {len(prompt_ids)} tokens; the model's "
                    f"context window is {self.context_window}"
                )
            sampling = self.sampling(messages, tools, config, room)
            generated, ended = sample_tokens(
                model, prompt_ids, sampling, stop_ids=stop_token_ids(model, tokenizer)
            )
            body = generated[:-1] if ended == "stop" else generated
            raw = tokenizer.decode(body, skip_special_tokens=True)
        output = ModelOutput(
            model=self.name,
            text=raw.strip(),
            usage=Usage(input_tokens=len(prompt_ids), output_tokens=len(generated)),
            cost_usd=0.0,
            stop_reason=STOP_REASONS[ended],
        )
        if tools:
            parsed = parse_tool_calls(raw)
            output.text, output.tool_calls = parsed.text, parsed.calls
            if parsed.calls:
                output.stop_reason = "tool_use"
            if parsed.error:
                output.provider_data = {"hf": {"tool_call_error": parsed.error}}
        return output

    # ------------------------------------------------------------------ prompt
    def prompt_ids(
        self, messages: list[ChatMessage], tools: list[ToolSpec], tokenizer: Any
    ) -> list[int]:
        """The request as the token ids the model reads (its usage ``input_tokens``)."""
        text = render_prompt(messages, tools, tokenizer)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    def sampling(
        self,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        config: GenerateConfig,
        room: int,
    ) -> Sampling:
        """The draw for this request: settings, model defaults, and the request's seed."""
        extra = config.extra or {}
        seed = extra.get("seed", self.seed)
        top_p = extra.get("top_p", self.top_p)
        temperature = config.temperature
        if temperature is None:
            temperature = self._defaults.get("temperature", DEFAULT_TEMPERATURE)
        if top_p is None:
            top_p = self._defaults.get("top_p", DEFAULT_TOP_P)
        wanted = config.max_tokens or DEFAULT_MAX_TOKENS
        return Sampling(
            max_new_tokens=max(1, min(wanted, room)),
            temperature=float(temperature),
            top_p=float(top_p),
            top_k=self._defaults.get("top_k"),
            seed=request_seed(messages, tools, config, int(seed or 0)),
        )


# --------------------------------------------------------------------------- rendering


def render_prompt(messages: list[ChatMessage], tools: list[ToolSpec], tokenizer: Any) -> str:
    """The prompt text through the chat template: native tools if the template has them,
    else tools in the system prompt; a template that rejects a system turn gets it folded
    into the first user turn."""
    template = tokenizer.chat_template
    text = json.dumps(template) if isinstance(template, dict) else str(template or "")
    attempts: list[tuple[list[dict[str, Any]], list[dict[str, Any]] | None]] = []
    if tools and "tools" in text:
        attempts.append((chat_messages(messages, tools, native=True), _schemas(tools)))
    prompted = chat_messages(messages, tools, native=False)
    attempts += [(prompted, None), (_fold_system(prompted), None)]
    error: Exception | None = None
    for chat, schemas in attempts:
        try:
            rendered = tokenizer.apply_chat_template(
                chat, tools=schemas, add_generation_prompt=True, tokenize=False
            )
        except Exception as exc:  # jinja raises many types: try the next form
            error = exc
            continue
        return rendered if isinstance(rendered, str) else tokenizer.decode(rendered)
    raise FatalModelError(f"the chat template rejects this conversation: {error}")


def chat_messages(
    messages: list[ChatMessage], tools: list[ToolSpec], *, native: bool
) -> list[dict[str, Any]]:
    """The conversation as template messages (see the module docstring)."""
    system: list[str] = []
    chat: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system" and not chat:
            system.append(message.content)
            continue
        if native and message.role == "tool":
            chat.append({"role": "tool", "name": message.name or "", "content": message.content})
            continue
        if native and message.role == "assistant" and message.tool_calls:
            calls = [
                {"type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ]
            chat.append({"role": "assistant", "content": message.content, "tool_calls": calls})
            continue
        role, content = _turn(message)
        if chat and chat[-1]["role"] == role and "tool_calls" not in chat[-1]:
            chat[-1]["content"] = f"{chat[-1]['content']}\n\n{content}".strip("\n")
        else:
            chat.append({"role": role, "content": content})
    if tools and not native:
        system.append(tools_system_prompt(tools))
    text = "\n\n".join(s for s in system if s)
    return ([{"role": "system", "content": text}] if text else []) + chat


def _turn(message: ChatMessage) -> tuple[str, str]:
    """(role, content) of one message in the prompt form of tool calling."""
    if message.role == "assistant":
        parts = [message.content.strip()]
        if message.tool_calls:
            parts.append(render_calls(list(message.tool_calls)))
        return "assistant", "\n".join(p for p in parts if p)
    if message.role == "tool":
        return "user", render_tool_result(message.name, message.content)
    return "user", message.content


def _fold_system(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The system turn prepended to the first user turn (templates without a system role)."""
    if not chat or chat[0]["role"] != "system":
        return chat
    system, rest = chat[0]["content"], [dict(m) for m in chat[1:]]
    for message in rest:
        if message["role"] == "user":
            message["content"] = f"{system}\n\n{message['content']}"
            return rest
    return [{"role": "user", "content": system}, *rest]


def _schemas(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [t.openai_schema() for t in tools]


# --------------------------------------------------------------------------- sampling


def request_seed(
    messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig, seed: int
) -> int:
    """A 63-bit seed from the request's content and the settings' seed."""
    body = canonical_json(
        {
            "messages": [message_body(m) for m in messages],
            "tools": tools_body(tools),
            "config": config_dict(config),
            "seed": seed,
        }
    )
    return int.from_bytes(hashlib.sha256(body.encode("utf-8")).digest()[:8], "big") >> 1


def stop_token_ids(model: Any, tokenizer: Any) -> set[int]:
    """Token ids that end a reply: the model's and tokenizer's EOS plus known end markers."""
    ids: set[int] = set()
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (configured, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(v for v in value if isinstance(v, int))
    vocab = tokenizer.get_vocab()
    ids.update(vocab[t] for t in _END_TOKENS if t in vocab)
    return ids


def sample_tokens(
    model: Any, prompt_ids: list[int], sampling: Sampling, *, stop_ids: set[int]
) -> tuple[list[int], str]:
    """Draw up to ``max_new_tokens`` tokens after the prompt with a KV cache and a private
    generator. Returns the tokens (a stop token included) and why they ended: ``"stop"``,
    ``"length"`` or ``"repetition"`` (an exact loop, see ``loop_period``)."""
    import torch

    device = next(model.parameters()).device
    generator = torch.Generator(device="cpu").manual_seed(sampling.seed)
    generated: list[int] = []
    with torch.inference_mode():
        inputs = torch.tensor([prompt_ids], dtype=torch.long, device=device)
        out = _prompt_forward(model, inputs)
        for _ in range(sampling.max_new_tokens):
            token = _pick(out.logits[0, -1, :], sampling, generator)
            generated.append(token)
            if token in stop_ids:
                return generated, "stop"
            if loop_period(generated) is not None:
                return generated, "repetition"
            step = torch.tensor([[token]], dtype=torch.long, device=device)
            out = model(input_ids=step, past_key_values=out.past_key_values, use_cache=True)
    return generated, "length"


def loop_period(tokens: list[int]) -> int | None:
    """The period of an exact loop at the end of ``tokens``, if there is one: a span of at
    most ``LOOP_MAX_PERIOD`` tokens repeated at least ``LOOP_MIN_REPEATS`` times and over
    at least ``LOOP_MIN_SPAN`` tokens in a row.

    Small models fall into such loops ("The answer is: The answer is: ...") and spin to the
    token limit, which on a CPU costs minutes per reply and cannot change what the reply
    says; the reply is cut there instead (stop reason ``repetition``).
    """
    n = len(tokens)
    if n < LOOP_MIN_SPAN:
        return None
    for period in range(1, LOOP_MAX_PERIOD + 1):
        span = period * max(LOOP_MIN_REPEATS, -(-LOOP_MIN_SPAN // period))
        if span > n:
            continue
        tail = tokens[n - span :]
        if tail[period:] == tail[:-period]:
            return period
    return None


def _pick(logits: Any, sampling: Sampling, generator: Any) -> int:
    import torch

    scores = logits.float().cpu()
    if sampling.temperature <= 0:
        return int(torch.argmax(scores))
    scores = scores / sampling.temperature
    if sampling.top_k is not None and 0 < sampling.top_k < scores.numel():
        kth = torch.topk(scores, sampling.top_k).values[-1]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    if sampling.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        sorted_probs = sorted_probs.masked_fill(before >= sampling.top_p, 0.0)
        probs = torch.zeros_like(probs).scatter(0, order, sorted_probs)
    return int(torch.multinomial(probs, 1, generator=generator))


def _generation_defaults(folder: Path) -> dict[str, Any]:
    """Sampling defaults the folder's ``generation_config.json`` sets explicitly (read as
    vLLM reads them: the fields that are present, whatever ``do_sample`` says)."""
    try:
        data = json.loads((folder / "generation_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for key, kind in (("temperature", float), ("top_p", float), ("top_k", int)):
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            out[key] = kind(value)
    return out


def _prompt_forward(model: Any, inputs: Any) -> Any:
    """The prompt's forward pass, computing vocabulary logits for its last position only
    (a long prompt's full logits cost more than the whole reply); models that do not take
    ``logits_to_keep`` get the plain call."""
    try:
        return model(input_ids=inputs, use_cache=True, logits_to_keep=1)
    except TypeError:
        return model(input_ids=inputs, use_cache=True)
