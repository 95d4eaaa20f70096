"""AlloBench post-training (spec §6): the paper's per-decision PPO on the R0 urn, and the
before/after transfer table.

What is trained is exactly what ``econbench allo eval-transfer`` measures on R0:

- **The text.** Training episodes are played by ``econbench.allo.runner.play_episode`` through
  the evaluation framing (``get_framing("r0")``): the same system prompt, the same decision
  texts, the same batched notices of automatic turns (``gym_env``'s ``AlloBench-R0-v0``
  shows the same text one decision at a time; ``AlloBench-R0-Counting-v0``, which states
  sighting counts, is not what a model sees in evaluation). The reskins, R1 and R2 then
  measure transfer.
- **The action.** In evaluation the model writes free text ending with ``DECISION: KEEP`` or
  ``DECISION: PASS``. Sampling hundreds of tokens for thousands of training decisions is out
  of reach on a CPU, so a decision is read at one position: the chat-template prompt of the
  conversation so far (earlier assistant turns rendered as the canonical
  ``DECISION: KEEP``/``DECISION: PASS``), then the assistant prefix ``DECISION:``. The policy
  is the two-way softmax, at the training temperature, over the logits of the first token
  where the tokenizations of `` KEEP`` and `` PASS`` differ (tokens they share are part of the
  prompt). For tokenizers that spell each word as one token this is the sequence
  probability. The rest of the word (SmolLM2 splits them: `` KE``+``EP``, `` P``+``ASS``) and
  the template's end-of-turn token are the answer's *spelling*: not a choice, so instead of
  entering the ratio they get a maximum-likelihood term (``--spelling-coef``). Without it a
  first run on SmolLM2 learned the decision and then wrote ``DECISION: KEPS`` or kept talking
  after ``DECISION: KEEP``, which the evaluation parser rightly refuses. ``train.jsonl`` logs
  the spelling's mean probability (``spelling_prob``).
  One forward pass per decision in the rollout (with a KV cache) and one per episode in the
  update give exact log-probabilities for the PPO ratio and the KL term.
- **The reward.** A KEEP earns what it collects, ``n_c − sighting + 1`` (``Commit.collects``),
  minus the build charge K; a PASS earns 0. A decision's Monte-Carlo return is its reward
  plus the rewards of the later decisions of the episode (undiscounted), so a PASS is
  credited with what the saved keep collects later and the returns of an episode sum to its
  net utility. (Taking each decision's own reward as its return would make KEEP always at
  least as good as PASS and teach eagerness, the opposite of the paper's finding.)

Modules: ``actions`` (the two answers as tokens), ``rollout`` (play episodes with the
model), ``ppo`` (losses and the value baseline), ``trainer`` (the loop, checkpoints and
resume), ``transfer`` (the before/after evaluation).
"""

from __future__ import annotations

TRAIN_EXTRA_HINT = "install the train extra: pip install 'econbench[train]'"


class MissingTrainExtra(RuntimeError):
    """torch, transformers or peft is not installed."""


def require_train_extra() -> None:
    """Raise :class:`MissingTrainExtra` with the install hint when a dependency is missing."""
    import importlib.util

    missing = [m for m in ("torch", "transformers", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingTrainExtra(f"{', '.join(missing)} not installed; {TRAIN_EXTRA_HINT}")
