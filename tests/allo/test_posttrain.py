"""AlloBench post-training on the tiny random Llama: rewards, the privileged critic, the PPO
pieces (full-vocabulary KL), forced-choice and free-text rollouts, ``allo train`` (two steps,
resume, refusal of a changed config) and ``allo eval-transfer``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from typer.testing import CliRunner  # noqa: E402

from econbench.agents.models.hf.tiny import make_tiny_llama  # noqa: E402
from econbench.allo.game.stream import Stream, StreamConfig  # noqa: E402
from econbench.cli import app  # noqa: E402
from econbench.runs.allo.posttrain.actions import ActionTokens  # noqa: E402
from econbench.runs.allo.posttrain.ppo import (  # noqa: E402
    ValueNet,
    advantages,
    categorical_kl,
    fit_value,
    ppo_loss,
)
from econbench.runs.allo.posttrain.returns import critic_inputs, score_decisions  # noqa: E402
from econbench.runs.allo.posttrain.rollout import (  # noqa: E402
    EpisodeRollout,
    LMPolicy,
    collect,
    two_way_logprobs,
)
from econbench.runs.allo.posttrain.scoring import (  # noqa: E402
    action_logp,
    decision_terms,
    per_decision_kl,
    position_logits,
    trained_positions,
)

torch.set_num_threads(1)
runner = CliRunner()
# No --epochs: the default (one PPO epoch, the paper's) is what the resume test counts.
QUICK = ["--tasks", "10", "--seeds-per-step", "1", "--rollouts", "2"]
QUICK += ["--device", "cpu", "--threads", "1"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_llama(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="module")
def tiny_lm(tiny: Path) -> tuple[object, object]:
    """The tiny model (eval mode) and its tokenizer, loaded once."""
    from transformers import AutoModelForCausalLM

    from econbench.agents.models.hf.loading import load_tokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32)
    model.eval()
    return model, load_tokenizer(tiny)


@pytest.fixture(scope="module")
def trained(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-step training run of the tiny model (shared by the tests that need one)."""
    out = tmp_path_factory.mktemp("train") / "run"
    result = runner.invoke(
        app, ["allo", "train", "--model", str(tiny), "--out", str(out), "--steps", "2", *QUICK]
    )
    assert result.exit_code == 0, result.output
    return out


# -- rewards ----------------------------------------------------------------------------------


def fixed_stream() -> Stream:
    """Class 0 at t = 0, 2, 4, 7, 9 (5 times), class 1 at t = 1, 5, 8 (3), 2 and 3 once."""
    config = StreamConfig(n_classes=4, n_tasks=10, budget=2, n_hot=2)
    return Stream(seed=1, config=config, hot=(0, 1), classes=(0, 1, 0, 2, 0, 1, 3, 0, 1, 0))


def test_each_decision_earns_what_its_keep_collects_and_returns_sum_to_go() -> None:
    outcomes, result = score_decisions(fixed_stream(), [False, True, True], cost=0.0, budget=2)
    # t0 PASS class 0; t1 KEEP class 1 at sighting 1: 3 - 1 + 1 = 3 occurrences;
    # t2 KEEP class 0 at sighting 2: 5 - 2 + 1 = 4; the budget is spent, the game ends.
    assert [(o.t, o.cls, o.sighting) for o in outcomes] == [(0, 0, 1), (1, 1, 1), (2, 0, 2)]
    assert [o.reward for o in outcomes] == [0.0, 3.0, 4.0]
    assert [o.ret for o in outcomes] == [7.0, 7.0, 4.0]
    assert result.utility == 7.0
    assert [o.first_sight for o in outcomes] == [True, True, False]


def test_the_build_charge_is_taken_from_each_keep() -> None:
    outcomes, result = score_decisions(fixed_stream(), [False, True, True], cost=1.0, budget=2)
    assert [o.reward for o in outcomes] == [0.0, 2.0, 3.0]
    assert outcomes[0].ret == result.utility == 5.0


def test_a_wrong_number_of_decisions_is_refused() -> None:
    with pytest.raises(ValueError, match="asks more"):
        score_decisions(fixed_stream(), [False], cost=0.0, budget=2)
    with pytest.raises(ValueError, match="asked 3"):
        score_decisions(fixed_stream(), [False, True, True, True], cost=0.0, budget=2)


def _scored_rollout(keeps: list[bool]) -> EpisodeRollout:
    """A synthetic rollout of ``fixed_stream`` (no model): enough for the critic's inputs."""
    outcomes, result = score_decisions(fixed_stream(), keeps, cost=0.0, budget=2)
    n = len(keeps)
    return EpisodeRollout(
        seed=1, rollout=0, mode="forced", ids=list(range(3 * n + 1)),
        spans=[(3 * i + 1, 3 * i + 3) for i in range(n)], keeps=keeps, resolved=[True] * n,
        logp_old=[-0.7] * n, logits=[(0.0, 0.0)] * n, replies=[""] * n,
        outcomes=outcomes, result=result,
    )  # fmt: skip


def test_the_privileged_critic_reads_the_true_rate_and_the_public_one_does_not() -> None:
    from econbench.runs.allo.posttrain.config import TrainConfig, config_features
    from econbench.runs.allo.posttrain.trainer import build_batch

    keeps = [False] * 10  # nothing kept: every turn is a decision, traps (2, 3) included
    outcomes, _ = score_decisions(fixed_stream(), keeps, cost=0.0, budget=2)
    p_hot, p_trap = 0.85 / 2, 0.15 / 2  # fixed_stream: 2 hot classes of 4, hot mass 0.85
    assert [o.rate for o in outcomes] == pytest.approx(
        [p_trap if o.cls in (2, 3) else p_hot for o in outcomes]
    )
    for o in outcomes:
        assert critic_inputs(o, "public") == o.features
        assert critic_inputs(o, "privileged") == (*o.features, o.rate)
    episode = _scored_rollout(keeps)
    private = build_batch([episode], TrainConfig(model="m", critic="privileged")).features
    public = build_batch([episode], TrainConfig(model="m", critic="public")).features
    assert public.shape == (10, len(outcomes[0].features))
    assert private.shape == (10, public.shape[1] + 1)
    assert torch.equal(private[:, :-1], public)
    assert private[:, -1].tolist() == pytest.approx([o.rate for o in outcomes])
    # The value net is sized for what its critic reads.
    sizes = {
        c: len(config_features(TrainConfig(model="m", critic=c))) for c in ("public", "privileged")
    }
    assert sizes["privileged"] == sizes["public"] + 1 == public.shape[1] + 1


def test_the_defaults_are_the_papers_recipe() -> None:
    from econbench.runs.allo.posttrain.config import TrainConfig

    config = TrainConfig(model="m")
    assert config.epochs == 1 and config.critic == "privileged" and config.kl == 0.05
    assert (config.steps, config.seeds_per_step, config.rollouts) == (20, 25, 4)
    assert (config.lr, config.temperature, config.clip) == (6e-5, 1.2, 0.2)
    assert config.rollout_mode == "forced" and config.reply_tokens == 512
    assert config.free_logp == "mean"


def test_rollouts_score_like_the_game_and_the_update_sees_the_sampled_policy(
    tiny_lm: tuple[object, object],
) -> None:
    model, tokenizer = tiny_lm
    policy = LMPolicy(model, tokenizer, temperature=1.2)
    episodes = collect(policy, [9000], 2, seed=0, step=0, budget=3, config=StreamConfig(n_tasks=12))
    again = collect(policy, [9000], 2, seed=0, step=0, budget=3, config=StreamConfig(n_tasks=12))
    assert [e.keeps for e in episodes] == [e.keeps for e in again]  # seeded sampling
    for ep in episodes:
        assert ep.result is not None and ep.mode == "forced" and all(ep.resolved)
        assert sum(o.reward for o in ep.outcomes) == ep.result.utility == ep.outcomes[0].ret
        assert [o.keep for o in ep.outcomes] == ep.keeps
        with torch.no_grad():
            logits = position_logits(model, ep)
        terms = decision_terms(logits, logits, ep, policy.actions, 1.2)
        # One forward pass over the whole episode gives the logits the KV-cached rollout saw.
        rows = [trained_positions(ep).index(p) for p in ep.positions]
        pair = logits[rows][:, [policy.actions.pass_, policy.actions.keep]]
        assert torch.allclose(pair, torch.tensor(ep.logits), atol=1e-4)
        logp = two_way_logprobs(pair, 1.2)
        taken = logp[torch.arange(len(ep.keeps)), torch.tensor(ep.keeps, dtype=torch.long)]
        assert torch.allclose(taken, torch.tensor(ep.logp_old), atol=1e-4)
        assert torch.allclose(terms.logp, taken)
        assert torch.equal(terms.kl, torch.zeros(ep.n_decisions))  # the model against itself
        # The tiny tokenizer spells KEEP and PASS as one token: the spelling is the turn's end.
        actions = policy.actions
        assert actions.end == policy.tokenizer.convert_tokens_to_ids("<|im_end|>")
        assert ep.spelled == [(actions.end,)] * ep.n_decisions
        assert ep.action_tokens == [1] * ep.n_decisions
        assert torch.all(terms.spelling < 0)
        keep_ids = [ep.ids[p + 1] for p in ep.positions]
        assert keep_ids == [actions.keep if k else actions.pass_ for k in ep.keeps]
        assert [ep.ids[p + 2] for p in ep.positions] == [actions.end] * ep.n_decisions


def test_answers_split_into_several_tokens_decide_at_the_first_difference() -> None:
    table = {"DECISION:": [1, 2], " KEEP": [3, 4, 5], " PASS": [3, 6, 7]}

    class Toy:
        def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
            return table[text]

    actions = ActionTokens.from_tokenizer(Toy())
    assert actions.prefix == (1, 2, 3)
    assert (actions.keep, actions.pass_) == (4, 6)
    assert actions.completion(True) == (4, 5) and actions.completion(False) == (6, 7)
    assert not actions.single_token
    ended = ActionTokens.from_tokenizer(Toy(), end=9)
    assert ended.spelling(True) == (5, 9) and ended.spelling(False) == (7, 9)


# -- the PPO pieces ---------------------------------------------------------------------------


def test_ratios_beyond_the_clip_give_no_gradient_when_the_advantage_is_positive() -> None:
    keep = torch.tensor([math.log(0.9)], requires_grad=True)
    old = torch.tensor([math.log(0.5)])
    kl = torch.zeros(1)
    parts = ppo_loss(keep, old, torch.tensor([2.0]), kl, clip=0.2, kl_coef=0)
    assert float(parts.ratio) == pytest.approx(1.8)
    assert float(parts.policy.detach()) == pytest.approx(-1.2 * 2.0)  # clipped at 1 + ε
    assert float(parts.clip_frac) == 1.0
    parts.total.backward()
    assert torch.all(keep.grad == 0)


def test_a_negative_advantage_keeps_the_unclipped_pessimistic_term() -> None:
    keep = torch.tensor([math.log(0.9)], requires_grad=True)
    old = torch.tensor([math.log(0.5)])
    parts = ppo_loss(keep, old, torch.tensor([-2.0]), torch.zeros(1), clip=0.2, kl_coef=0)
    assert float(parts.policy.detach()) == pytest.approx(1.8 * 2.0)
    parts.total.backward()
    assert keep.grad is not None and float(keep.grad.abs().sum()) > 0


def test_the_kl_penalty_is_non_negative_and_pulls_towards_the_frozen_model() -> None:
    ref = torch.log_softmax(torch.tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 1.0, -2.0, 0.3]]), dim=-1)
    assert torch.allclose(categorical_kl(ref, ref), torch.zeros(2))
    logits = torch.tensor([[0.0, 2.0, -1.0, 1.0], [1.0, -1.0, 0.5, 0.0]], requires_grad=True)
    logp = torch.log_softmax(logits, dim=-1)
    kl = categorical_kl(logp, ref)
    assert torch.all(kl > 0)
    # KL(p‖q) by hand for the first row.
    p = torch.softmax(logits.detach()[0], dim=-1)
    by_hand = float((p * (p.log() - ref[0])).sum())
    assert float(kl[0].detach()) == pytest.approx(by_hand, rel=1e-6)
    taken = logp[:, 0]
    parts = ppo_loss(taken, taken.detach(), torch.zeros(2), kl, clip=0.2, kl_coef=1.0)
    parts.total.backward()
    with torch.no_grad():
        stepped = torch.log_softmax(logits - 0.1 * logits.grad, dim=-1)
    assert torch.all(categorical_kl(stepped, ref) < kl.detach())


def test_a_free_text_ratio_uses_the_mean_token_log_probability_by_default() -> None:
    summed, tokens = torch.tensor([-6.0, -2.0]), torch.tensor([3.0, 1.0])
    assert action_logp(summed, tokens, "mean").tolist() == [-2.0, -2.0]
    assert action_logp(summed, tokens, "sum").tolist() == [-6.0, -2.0]


def _perturbed(model: object, scale: float = 0.5) -> object:
    import copy

    other = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for param in other.parameters():
            param.add_(scale * torch.randn(param.shape, generator=generator))
    return other


@pytest.mark.parametrize("mode", ["forced", "free"])
def test_the_kl_is_over_the_full_vocabulary_of_every_trained_position(
    tiny_lm: tuple[object, object], mode: str
) -> None:
    model, tokenizer = tiny_lm
    policy = LMPolicy(model, tokenizer, temperature=1.2)
    config = StreamConfig(n_tasks=10)
    [ep] = collect(policy, [9000], 1, seed=0, step=0, config=config, mode=mode, reply_tokens=5)
    other = _perturbed(model)
    with torch.no_grad():
        logits = position_logits(model, ep)
        assert torch.equal(per_decision_kl(logits, logits, ep), torch.zeros(ep.n_decisions))
        kl = per_decision_kl(logits, position_logits(other, ep), ep)
        # By hand: both models' full logits, every vocabulary entry, the answer positions.
        full = model(input_ids=torch.tensor([ep.ids])).logits[0].double()
        full_ref = other(input_ids=torch.tensor([ep.ids])).logits[0].double()
    by_hand = []
    for start, end in ep.spans:
        rows = []
        for pos in range(start - 1, end - 1):  # the logits that predict the answer's tokens
            p = torch.softmax(full[pos], dim=-1)
            rows.append(float((p * (p.log() - torch.log_softmax(full_ref[pos], dim=-1))).sum()))
        by_hand.append(sum(rows) / len(rows))
    assert len(trained_positions(ep)) == sum(end - start for start, end in ep.spans)
    assert min(by_hand) > 0
    assert kl.tolist() == pytest.approx(by_hand, rel=1e-4)


def test_the_mean_baseline_centres_the_returns_and_the_value_net_learns_them() -> None:
    returns = torch.tensor([1.0, 2.0, 3.0, 6.0])
    features = torch.tensor([[0.0], [0.3], [0.6], [1.0]])
    assert advantages(returns, features, "mean").tolist() == [-2.0, -1.0, 0.0, 3.0]
    torch.manual_seed(0)
    net = ValueNet(1, scale=10.0)
    before = float(torch.mean((net(features) - returns) ** 2).detach())
    loss = fit_value(net, torch.optim.Adam(net.parameters(), lr=1e-2), features, returns, 300)
    assert loss < before / 10
    assert torch.allclose(advantages(returns, features, "value", net), returns - net(features))


# -- free-text rollouts -----------------------------------------------------------------------


def test_a_free_text_step_runs_end_to_end_and_the_parser_reads_the_decisions(
    tiny: Path,
) -> None:
    from transformers import AutoModelForCausalLM

    from econbench.agents.models.hf.loading import load_tokenizer
    from econbench.allo.framings.urn import parse_decision
    from econbench.runs.allo.posttrain.config import TrainConfig
    from econbench.runs.allo.posttrain.trainer import attach_adapter, build_batch, ppo_update

    tokenizer = load_tokenizer(tiny)
    base = AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32)
    # Tilt the random model towards " KEEP" so its free text carries a readable decision.
    bias = torch.zeros(base.config.vocab_size)
    bias[tokenizer.encode(" KEEP", add_special_tokens=False)[0]] = 6.0
    base.lm_head.register_forward_hook(lambda _m, _i, out: out + bias)
    config = TrainConfig(
        model=str(tiny), tasks=10, seeds_per_step=1, rollouts=2, rollout_mode="free",
        reply_tokens=6, device="cpu", lr=1e-2,
    )  # fmt: skip
    model = attach_adapter(base, config, None)
    model.eval()
    policy = LMPolicy(model, tokenizer, temperature=config.temperature)
    episodes = collect(
        policy, [9000], 2, seed=0, step=0, config=config.stream_config(), mode="free",
        reply_tokens=6,
    )  # fmt: skip
    readable = 0
    for ep in episodes:
        assert ep.mode == "free" and ep.n_decisions == len(ep.replies) >= 1
        for reply, keep, resolved, (start, end) in zip(
            ep.replies, ep.keeps, ep.resolved, ep.spans, strict=True
        ):
            parsed = parse_decision(reply)  # the evaluation's R0 parser decided, not the actor
            assert (parsed.keep, parsed.resolved) == (keep, resolved)
            assert 1 <= end - start <= 6
            readable += resolved
        # The update's one forward pass reproduces the sampled replies' log-probabilities.
        with torch.no_grad():
            logits = position_logits(model, ep)
        terms = decision_terms(logits, logits, ep, policy.actions, config.temperature)
        assert torch.allclose(terms.logp, torch.tensor(ep.logp_old), atol=1e-3)
        assert terms.decision_kl is None and ep.action_tokens == [e - s for s, e in ep.spans]
    assert readable >= 1
    batch = build_batch(episodes, config)
    adv = advantages(batch.returns, batch.features, "mean")
    lora = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    stats = ppo_update(model, policy, optimizer, batch, adv, config, np.random.default_rng(0))
    assert math.isfinite(stats["loss"]) and math.isfinite(stats["policy_loss"])
    assert stats["kl"] == pytest.approx(0.0, abs=1e-6)  # measured before the first step
    assert stats["spelling_prob"] is None and stats["decision_kl"] is None
    moved = [
        n for n, p in model.named_parameters() if p.requires_grad and not torch.equal(p, lora[n])
    ]
    assert moved  # the gradient reached the adapter


def test_free_text_training_runs_and_resumes_from_the_cli(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "free"
    args = ["allo", "train", "--model", str(tiny), "--out", str(out), *QUICK]
    args += ["--rollout-mode", "free", "--reply-tokens", "4"]
    first = runner.invoke(app, [*args, "--steps", "1"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, [*args, "--steps", "2"])
    assert again.exit_code == 0, again.output
    rows = [json.loads(x) for x in (out / "train.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:
        assert 0 <= r["unresolved_rate"] <= 1 and 1 <= r["reply_tokens_mean"] <= 4
        assert r["kl"] >= 0 and math.isfinite(r["loss"]) and r["spelling_prob"] is None
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["config"]["rollout_mode"] == "free" and state["config"]["critic"] == "privileged"
    changed = runner.invoke(app, [*args, "--steps", "3", "--critic", "public"])
    assert changed.exit_code == 2 and 'critic: "privileged" → "public"' in changed.output


# -- allo train -------------------------------------------------------------------------------


def test_two_training_steps_write_the_log_and_the_adapter(trained: Path) -> None:
    rows = [json.loads(line) for line in (trained / "train.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    assert [r["seeds"] for r in rows] == [[9000], [9001]]
    for r in rows:
        assert r["episodes"] == 2
        assert 0 <= r["keep_rate"] <= 1 and r["kl"] >= 0 and r["seconds"] > 0
        assert 0 < r["spelling_prob"] <= 1 and r["decision_kl"] >= 0
        assert r["unresolved_rate"] == 0 and r["reply_tokens_mean"] is None
        for key in ("reward_mean", "first_sight_rate", "policy_loss", "value_loss"):
            assert key in r
    assert (trained / "adapter" / "adapter_config.json").is_file()
    state = json.loads((trained / "trainer_state.json").read_text())
    assert state["step"] == 2 and state["config"]["lora_r"] == 32
    assert state["config"]["epochs"] == 1  # the CLI's default


def test_a_rerun_continues_after_the_last_saved_step(trained: Path, tiny: Path) -> None:
    log = trained / "train.jsonl"
    before = log.read_text()
    result = runner.invoke(
        app, ["allo", "train", "--model", str(tiny), "--out", str(trained), "--steps", "3", *QUICK]
    )
    assert result.exit_code == 0, result.output
    text = log.read_text()
    assert text.startswith(before)  # the first two steps are not redone
    assert [json.loads(x)["step"] for x in text.splitlines()] == [1, 2, 3]
    assert json.loads((trained / "trainer_state.json").read_text())["step"] == 3
    # One optimizer step per training step (the default 1 epoch, 1 minibatch): a reloaded
    # AdamW counts 3.
    saved = torch.load(trained / "state.pt", weights_only=True)["optimizer"]["state"]
    assert {int(s["step"]) for s in saved.values()} == {3}


def test_a_changed_config_is_refused_with_a_diff(trained: Path, tiny: Path) -> None:
    args = ["allo", "train", "--model", str(tiny), "--out", str(trained), "--steps", "9"]
    result = runner.invoke(app, [*args, *QUICK, "--lr", "0.001"])
    assert result.exit_code == 2
    assert "error:" in result.output and "lr: 6e-05 → 0.001" in result.output
    assert json.loads((trained / "trainer_state.json").read_text())["step"] >= 2


def test_the_mean_baseline_and_gradient_checkpointing_train(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["allo", "train", "--model", str(tiny), "--out", str(out), "--steps", "1", *QUICK]
    result = runner.invoke(app, [*args, "--baseline", "mean", "--gradient-checkpointing"])
    assert result.exit_code == 0, result.output
    [row] = [json.loads(x) for x in (out / "train.jsonl").read_text().splitlines()]
    assert row["value_loss"] is None and row["decisions"] >= 2


def test_an_interrupted_save_is_reported_not_guessed(
    trained: Path, tiny: Path, tmp_path: Path
) -> None:
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(trained, copy)
    step = json.loads((copy / "trainer_state.json").read_text())["step"]
    (copy / "adapter" / "econbench-step.json").write_text(json.dumps({"step": step + 1}))
    args = ["allo", "train", "--model", str(tiny), "--out", str(copy), "--steps", str(step + 1)]
    result = runner.invoke(app, [*args, *QUICK])
    assert result.exit_code == 2 and "incomplete" in result.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--steps", "0"], "--steps"),
        (["--seeds", "9000-abc"], "seed"),
        (["--seeds", "2010-2012"], "evaluation seeds"),
        (["--baseline", "median"], "--baseline"),
        (["--critic", "oracle"], "--critic"),
        (["--rollout-mode", "chat"], "--rollout-mode"),
        (["--reply-tokens", "0"], "--reply-tokens"),
    ],
)
def test_bad_training_settings_are_one_line_errors(
    tiny: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    args = ["allo", "train", "--model", str(tiny), "--out", str(tmp_path / "o"), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error:") and message in result.output
    assert not (tmp_path / "o").exists()


def test_training_seeds_advance_per_step_and_never_touch_the_evaluation_seeds() -> None:
    from econbench.runs.allo.posttrain.config import TrainConfig

    default = TrainConfig(model="m", seeds_per_step=3)
    assert default.step_seeds(0) == [9000, 9001, 9002] and default.step_seeds(2)[0] == 9006
    opened = TrainConfig(model="m", seeds="9500-", seeds_per_step=2)
    assert opened.step_seeds(1) == [9502, 9503]
    cycled = TrainConfig(model="m", seeds="9000-9002", seeds_per_step=2)
    assert [cycled.step_seeds(s) for s in range(3)] == [[9000, 9001], [9002, 9000], [9001, 9002]]
    with pytest.raises(ValueError, match="evaluation seeds"):
        TrainConfig(model="m", seeds="1990-", seeds_per_step=5, steps=3)  # reaches 2000
    short = TrainConfig(model="m", seeds="1990-", seeds_per_step=5, steps=2)
    assert short.step_seeds(1)[-1] == 1999


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_cuda_without_a_gpu_is_an_error(tiny: Path, tmp_path: Path) -> None:
    args = ["allo", "train", "--model", str(tiny), "--out", str(tmp_path / "o")]
    result = runner.invoke(app, [*args, "--device", "cuda"])
    assert result.exit_code == 2 and "cuda" in result.output
    assert not (tmp_path / "o").exists()


def test_without_the_train_extra_the_commands_say_how_to_install_it(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "peft" else real(name, *a)
    )
    for command in (["train", "--out", str(tmp_path / "o")], ["eval-transfer"]):
        result = runner.invoke(app, ["allo", *command, "--model", str(tiny)])
        assert result.exit_code == 2
        assert "pip install 'econbench[train]'" in result.output


def test_a_missing_model_folder_is_an_error(tmp_path: Path) -> None:
    args = ["allo", "train", "--model", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "does not exist" in result.output


# -- allo eval-transfer -----------------------------------------------------------------------


def test_eval_transfer_writes_the_before_after_table(trained: Path, tiny: Path) -> None:
    out = trained.parent / "transfer"
    args = ["allo", "eval-transfer", "--model", str(tiny), "--adapter", str(trained / "adapter")]
    args += ["--episodes", "1", "--max-tokens", "2", "--tasks", "3", "--threads", "1"]
    result = runner.invoke(app, [*args, "--out", str(out), "--forced-choice"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "transfer.json").read_text())
    rungs = [row["rung"] for row in data["rows"]]
    assert rungs == ["r0", "chest", "quiver", "cauldron", "reskins", "tool-probe", "r1", "r2"]
    assert data["variants"] == ["base", "adapted"]
    for row in data["rows"]:
        for variant in ("base", "adapted"):
            cell = row[variant]
            assert cell["episodes"] == len(row["cells"])
            assert cell["decision_turns"] >= cell["unresolved_turns"] >= 0
    reskins = next(row for row in data["rows"] if row["rung"] == "reskins")
    assert reskins["paper_first_sight"] == {"base": 0.65, "trained": 0.03}
    for variant in ("base", "adapted"):
        for cell in ("r0", "chest", "r1", "r2"):
            assert (out / variant / cell / "episodes.jsonl").is_file()
    config = json.loads((out / "adapted" / "r0" / "config.json").read_text())
    assert next(iter(config["models"].values()))["adapter"] == str(trained / "adapter")
    # Each cell is played under the paper's condition for it: R1 and R2 with four re-asks.
    played = {
        cell: json.loads((out / "base" / cell / "config.json").read_text())
        for cell in ("r0", "chest", "tool-probe", "r1", "r2")
    }
    assert {cell: c["condition"] for cell, c in played.items()} == {
        "r0": "frontier",
        "chest": "reskin",
        "tool-probe": "tool-probe",
        "r1": "qwen",
        "r2": "qwen",
    }
    assert played["r1"]["framing_settings"]["no_call_attempts"] == 4
    assert played["tool-probe"]["framing_settings"]["framing"] == "r0-tool"
    probe = next(row for row in data["rows"] if row["rung"] == "tool-probe")
    assert probe["paper_first_sight"] == {"base": 0.87, "trained": 0.33}
    table = (out / "transfer.md").read_text()
    assert "| R0 urn |" in table and "74 % → 6 %" in table and "reskins, pooled" in table
    # The forced-choice reading resolves every decision, for both models.
    forced = data["forced_choice"]
    assert set(forced) == {"base", "adapted"}
    for variant in ("base", "adapted"):
        assert set(forced[variant]) == {"r0", "chest", "quiver", "cauldron", "reskins"}
        r0 = forced[variant]["r0"]
        assert r0["episodes"] == 1 and r0["decisions"] >= 1
        assert forced[variant]["reskins"]["episodes"] == 3
    assert "## Forced choice" in table
    # A rerun reuses the finished cells and the forced-choice results.
    episodes = (out / "adapted" / "r1" / "episodes.jsonl").read_text()
    forced_file = (out / "base" / "forced.json").stat().st_mtime_ns
    again = runner.invoke(app, [*args, "--out", str(out), "--forced-choice"])
    assert again.exit_code == 0, again.output
    assert (out / "adapted" / "r1" / "episodes.jsonl").read_text() == episodes
    assert (out / "base" / "forced.json").stat().st_mtime_ns == forced_file


def test_forced_choice_pools_the_reskins_from_their_episodes() -> None:
    from econbench.runs.allo.posttrain.forced import _pool_rows

    rows = [
        {"episodes": 1, "decisions": 10, "commits": 2, "first_sight_commits": 1, "utility": 9.0,
         "opt": 12.0},
        {"episodes": 1, "decisions": 6, "commits": 3, "first_sight_commits": 3, "utility": 3.0,
         "opt": 12.0},
    ]  # fmt: skip
    pooled = _pool_rows(rows)
    assert pooled["first_sight_rate"] == pytest.approx(4 / 5)
    assert pooled["keep_rate"] == pytest.approx(5 / 16)
    assert pooled["score"] == pytest.approx(12 / 24)


def test_an_adapter_trained_on_another_model_is_refused(trained: Path, tmp_path: Path) -> None:
    other = make_tiny_llama(tmp_path / "other", seed=1)
    args = ["allo", "eval-transfer", "--model", str(other), "--adapter", str(trained / "adapter")]
    result = runner.invoke(app, [*args, "--episodes", "1", "--out", str(tmp_path / "t")])
    assert result.exit_code == 2
    assert result.output.startswith("error:") and "trained on" in result.output
