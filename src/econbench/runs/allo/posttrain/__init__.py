"""AlloBench post-training (docs/allobench.md §6): the paper's per-decision PPO on the R0 urn, and
the before/after transfer table.

What is trained is exactly what ``econbench allo eval-transfer`` measures on R0:

- **The text.** Training episodes are played by ``econbench.allo.episodes.runner.play_episode``
  through the evaluation framing (``get_framing("r0")``): the same system prompt, the same decision
  texts, the same batched notices of automatic turns (``gym.envs``'s ``AlloBench-R0-v0`` shows the
  same text one decision at a time; ``AlloBench-R0-Counting-v0``, which states
  sighting counts, is not what a model sees in evaluation). The reskins, R1 and R2 then
  measure transfer.
- **The action** (``rollout_mode``). In evaluation the model writes free text ending with
  ``DECISION: KEEP`` or ``DECISION: PASS``. ``forced`` (the default, what a CPU affords) reads a
  decision at one position: the chat-template prompt of the conversation so far (earlier
  assistant turns rendered as the canonical ``DECISION: KEEP``/``DECISION: PASS``), then the
  assistant prefix ``DECISION:``. The policy is the two-way softmax, at the training
  temperature, over the logits of the first token where the tokenizations of `` KEEP`` and
  `` PASS`` differ (tokens they share are part of the prompt). For tokenizers that spell each
  word as one token this is the sequence probability. The rest of the word (SmolLM2 splits
  them: `` KE``+``EP``, `` P``+``ASS``) and the template's end-of-turn token are the answer's
  *spelling*: not a choice, so instead of entering the ratio they get a maximum-likelihood term
  (``--spelling-coef``). Without it a first run on SmolLM2 learned the decision and then wrote
  ``DECISION: KEPS`` or kept talking after ``DECISION: KEEP``, which the evaluation parser
  rightly refuses. ``train.jsonl`` logs the spelling's mean probability (``spelling_prob``).
  ``free`` samples the whole reply (up to ``reply_tokens``, R0's 512 by default) as the paper
  did; the evaluation's R0 parser reads it, an unreadable reply is an unresolved PASS, and the
  PPO ratio is taken over the reply's tokens (their mean log-probability, the paper's, or the
  sum: ``free_logp``). Either way one forward pass per decision or token in the rollout (with a
  KV cache) and one per episode in the update give exact log-probabilities.
- **The KL.** Per decision, the exact KL to the frozen model over the whole vocabulary at every
  position trained (the answer's tokens), averaged over them, with the paper's coefficient
  0.05 (``ppo``, ``scoring``).
- **The critic** (``critic``). The value baseline reads the decision's public features and, by
  default, the true draw rate of its class (the paper's privileged, asymmetric critic). The
  rate is read from the stream after the episode is played; no prompt carries it, so the
  policy never sees it, and a baseline that does not depend on the action leaves the policy
  gradient unbiased. ``public`` drops it.
- **The reward.** A KEEP earns what it collects, ``n_c − sighting + 1`` (``Commit.collects``),
  minus the build charge K; a PASS earns 0. A decision's Monte-Carlo return is its reward
  plus the rewards of the later decisions of the episode (undiscounted), so a PASS is
  credited with what the saved keep collects later and the returns of an episode sum to its
  net utility. (Taking each decision's own reward as its return would make KEEP always at
  least as good as PASS and teach eagerness, the opposite of the paper's finding.)

Modules: ``config`` (the settings), ``actions`` (the two answers as tokens), ``policy`` (the
model read through the chat template), ``rollout`` and ``freetext`` (play episodes with the
model), ``returns`` (rewards, returns, critic inputs), ``scoring`` (an episode's log-probabilities
and KL from one forward pass), ``ppo`` (losses and the value baseline), ``trainer`` (the loop),
``checkpoint`` (saving and resume), ``forced`` and ``transfer`` (the before/after evaluation).
docs/posttraining.md ("Deviations from the paper's recipe") lists what still differs from the
paper's code.
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
