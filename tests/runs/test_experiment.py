"""EXPERIMENT.toml: schema, expansion into entries, stable unique ids, readable errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from econbench.runs.allo.experiment import cell_of
from econbench.runs.coffee.config import RunConfig
from econbench.runs.experiment import (
    MAX_ID_CHARS,
    ExperimentError,
    load_plan,
    slug,
)

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "configs" / "experiments"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def no_keys(monkeypatch, tmp_path) -> None:
    """No API key from the environment or from a .env file above the working directory."""
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


COFFEE = """
name = "m"
benchmark = "coffee"
seeds = "3-4"
base = "base.toml"
days = 7
[matrix]
roaster_A = ["heuristic", "passive"]
variants = ["default", "variants/risky.toml"]
"""


@pytest.fixture
def coffee_dir(tmp_path) -> Path:
    root = tmp_path / "exp"
    write(root / "base.toml", '[run]\ndays = 90\n[agents]\ndefault = "scripted"\n')
    write(root / "variants" / "risky.toml", "[economy]\nship_loss_prob = 0.06\n")
    write(root / "m.toml", COFFEE)
    return root


def test_coffee_matrix_expands_agents_variants_and_seeds(coffee_dir) -> None:
    plan = load_plan(coffee_dir / "m.toml")
    assert plan.default_out() == Path("runs/sweeps/m")
    ids = [e.id for e in plan.entries]
    assert ids == [
        "roaster_A-heuristic__default__seed-3",
        "roaster_A-heuristic__default__seed-4",
        "roaster_A-heuristic__risky__seed-3",
        "roaster_A-heuristic__risky__seed-4",
        "roaster_A-passive__default__seed-3",
        "roaster_A-passive__default__seed-4",
        "roaster_A-passive__risky__seed-3",
        "roaster_A-passive__risky__seed-4",
    ]
    by_id = {e.id: e for e in plan.entries}
    risky = by_id["roaster_A-passive__risky__seed-4"]
    assert risky.label == "roaster_A-passive__risky"
    assert risky.params == {"roaster_A": "passive", "variant": "risky", "seed": 4}
    config = RunConfig.model_validate(risky.config)  # what the worker rebuilds
    assert (config.seed, config.days) == (4, 7)  # the experiment's days beat the base's
    assert config.economy.ship_loss_prob == 0.06
    assert config.agents == {"default": "scripted", "roaster_A": "passive"}
    plain = RunConfig.model_validate(by_id["roaster_A-heuristic__default__seed-3"].config)
    assert plain.economy.ship_loss_prob == RunConfig().economy.ship_loss_prob


def test_ids_do_not_depend_on_the_other_values_of_an_axis(coffee_dir) -> None:
    before = {e.id: e.config for e in load_plan(coffee_dir / "m.toml").entries}
    text = COFFEE.replace('["heuristic", "passive"]', '["scripted", "heuristic", "passive"]')
    write(coffee_dir / "m.toml", text.replace('"3-4"', "[3, 4, 9]"))
    after = {e.id: e.config for e in load_plan(coffee_dir / "m.toml").entries}
    assert len(after) == 3 * 2 * 3
    assert all(after[i] == config for i, config in before.items())


def test_fixed_agents_and_model_settings_apply_to_every_entry(tmp_path) -> None:
    path = write(
        tmp_path / "e.toml",
        """
name = "fixed"
benchmark = "coffee"
[agents]
default = "passive"
[matrix]
roaster_A = ["heuristic", "openai-compatible/local"]
[models."openai-compatible/local"]
base_url = "http://127.0.0.1:9/v1"
temperature = 0.5
""",
    )
    entries = load_plan(path).entries
    assert [e.id for e in entries] == [
        "roaster_A-heuristic__seed-0",
        "roaster_A-openai-compatible-local__seed-0",
    ]
    heuristic, model = (RunConfig.model_validate(e.config) for e in entries)
    assert heuristic.policy_for("farmer_A") == "passive"
    assert heuristic.models == {}  # only the settings of models the run uses
    assert model.models["openai-compatible/local"].temperature == 0.5


def test_a_matrix_without_axes_is_one_configuration_named_after_the_experiment(tmp_path):
    path = write(tmp_path / "e.toml", 'name = "solo"\nbenchmark = "coffee"\nseeds = [1, 2]\n')
    plan = load_plan(path)
    assert [e.id for e in plan.entries] == ["solo__seed-1", "solo__seed-2"]
    assert {e.label for e in plan.entries} == {"solo"}


def test_long_and_colliding_names_get_a_stable_hash(tmp_path) -> None:
    write(tmp_path / "a" / "thin.toml", "[economy]\nspoilage_rate = 0.0\n")
    write(tmp_path / "b" / "thin.toml", "[economy]\nspoilage_rate = 0.01\n")
    long_name = "openai-compatible/" + "x" * 150
    path = write(
        tmp_path / "e.toml",
        f"""
name = "h"
benchmark = "coffee"
[matrix]
roaster_A = ["heuristic", "{long_name}"]
variants = ["a/thin.toml", "b/thin.toml"]
[models."{long_name}"]
base_url = "http://127.0.0.1:9/v1"
""",
    )
    ids = [e.id for e in load_plan(path).entries]
    assert len(set(ids)) == 4
    assert all(len(i) <= MAX_ID_CHARS for i in ids)
    assert all(i.startswith("roaster_A-") and i.endswith("__seed-0") for i in ids)
    assert ids == [e.id for e in load_plan(path).entries]  # stable


def test_slug_is_a_readable_path_component() -> None:
    assert slug("openai/gpt-5.5") == "openai-gpt-5.5"
    assert slug("wait:2") == "wait-2"
    assert "__" not in slug("a__b")
    assert slug("///") == "x"


def test_allo_matrix_cells_with_skins_only_on_r0(tmp_path) -> None:
    path = write(
        tmp_path / "a.toml",
        """
name = "ladder"
benchmark = "allo"
episodes = 3
seed = 10
[matrix]
framings = ["r0", "R2"]
policies = ["eager", "wait:2"]
skins = ["default", "chest"]
costs = [0, 2.5]
""",
    )
    plan = load_plan(path)
    ids = [e.id for e in plan.entries]
    assert len(ids) == 2 * 2 * 2 + 1 * 2 * 2  # r0: both skins; r2: the default one
    assert "r0-wait-2-k2.5-b3-chest" in ids
    assert "r2-eager-k0-b3" in ids
    assert not any(i.startswith("r2") and i.endswith("chest") for i in ids)
    entry = next(e for e in plan.entries if e.id == "r0-wait-2-k2.5-b3-chest")
    assert entry.label == entry.id
    spec, models = cell_of(entry)
    assert spec.slug() == entry.id  # the same directory name as `allo sweep`
    assert (spec.seeds, spec.cost, spec.skin, models) == ((10, 11, 12), 2.5, "chest", {})


def test_allo_seeds_default_to_the_papers(tmp_path) -> None:
    path = write(
        tmp_path / "a.toml",
        'name = "k"\nbenchmark = "allo"\n[matrix]\nframings = ["r0"]\npolicies = ["eager"]\n',
    )
    spec, _ = cell_of(load_plan(path).entries[0])
    assert spec.seeds == tuple(range(2000, 2024))


def test_allo_streams_default_to_the_papers_fixed_streams(tmp_path) -> None:
    text = 'name = "k"\nbenchmark = "allo"\n[matrix]\nframings = ["r0"]\npolicies = ["eager"]\n'
    path = write(tmp_path / "a.toml", text + "budgets = [1, 5]\n")
    specs = [cell_of(e)[0] for e in load_plan(path).entries]
    assert [s.stream_budget for s in specs] == ["fixed", "fixed"]
    assert all(s.config.generator == "paper" for s in specs)
    assert {s.stream_config.budget for s in specs} == {3}  # one stream per seed for every B
    other = write(
        tmp_path / "b.toml",
        'name = "k"\nbenchmark = "allo"\nstreams = "numpy"\nstream_budget = "cell"\n'
        '[matrix]\nframings = ["r0"]\npolicies = ["eager"]\nbudgets = [1, 5]\n',
    )
    entries = load_plan(other).entries
    specs = [cell_of(e)[0] for e in entries]
    assert [s.stream_config.budget for s in specs] == [1, 5]
    assert all(s.config.generator == "numpy" and s.stream_budget == "cell" for s in specs)
    assert [e.id for e in entries] == [s.slug() for s in specs]
    assert entries[0].id == "r0-eager-k0-b1-numpy-cellstreams"
    bad = write(tmp_path / "c.toml", text.replace('"k"\n', '"k"\nstreams = "torch"\n', 1))
    with pytest.raises(ExperimentError):
        load_plan(bad)


def test_the_example_experiments_load() -> None:
    counts = {
        "coffee_smoke.toml": 8,
        "allo_ladder.toml": 4 * 4 + 2 * 4,  # r0 × 4 skins, r1 and r2
        "allo_kappa.toml": 2 * 2 * 3 * 4,
    }
    for name, count in counts.items():
        plan = load_plan(EXPERIMENTS / name)
        assert len(plan.entries) == count, name
    paper = load_plan(EXPERIMENTS / "coffee_paper.toml", check=False)  # no API keys here
    assert len(paper.entries) == 9 * 3
    assert all(e.config["days"] == 90 for e in paper.entries)
    assert all(
        e.config["agents"]["default"] == "anthropic/claude-sonnet-4-6" for e in paper.entries
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('name = "x"\nbenchmark = "coffee"\nseed = 1\n', "unknown key 'seed'"),
        (
            'name = "x"\nbenchmark = "coffee"\n[matrix]\nroaster_C = ["passive"]\n',
            "'matrix.roaster_C'",
        ),
        ('name = "x"\n', '\'benchmark\' must be "coffee" or "allo"'),
        ('name = "a b"\nbenchmark = "coffee"\n', "'name'"),
        ('name = "x"\nbenchmark = "coffee"\nseeds = "3-1"\n', "descending seed range"),
        ('name = "x"\nbenchmark = "coffee"\nseeds = [1, 1]\n', "a seed is listed twice"),
        ('name = "x"\nbenchmark = "coffee"\ndays = 0\n', "'days'"),
        ('name = "x"\nbenchmark = "coffee"\n[matrix]\nroaster_A = []\n', "at least one value"),
        ('name = "x"\nbenchmark = "coffee"\n[matrix]\nroaster_A = ["sleepy"]\n', "unknown policy"),
        ('name = "x"\nbenchmark = "coffee"\n[matrix]\nroaster_A = ["gpt-5"]\n', "unknown policy"),
        ('name = "x"\nbenchmark = "coffee"\n[matrix]\nroaster_A = ["nope/m"]\n', "provider"),
        ('name = "x"\nbenchmark = "coffee"\nbase = "missing.toml"\n', "base file not found"),
        ('name = "x"\nbenchmark = "coffee"\n[matrix]\nvariants = ["v.toml"]\n', "variant file"),
        (
            'name = "x"\nbenchmark = "coffee"\n[models."openai/m"]\ntemp = 1\n',
            "models.openai/m.temp",
        ),
        (
            'name = "x"\nbenchmark = "allo"\n[matrix]\nframings = ["r0"]\n',
            "missing key 'matrix.policies'",
        ),
        (
            'name = "x"\nbenchmark = "allo"\n[matrix]\nframings = ["r9"]\npolicies = ["eager"]\n',
            "unknown framing 'r9'",
        ),
        (
            'name = "x"\nbenchmark = "allo"\n[matrix]\nframings = ["r0"]\npolicies = ["eagre"]\n',
            "eagre",
        ),
        (
            'name = "x"\nbenchmark = "allo"\nepisodes = 2\nseeds = [1]\n'
            '[matrix]\nframings = ["r0"]\npolicies = ["eager"]\n',
            "either 'episodes' or 'seeds'",
        ),
        (
            'name = "x"\nbenchmark = "allo"\n[matrix]\nframings = ["r0"]\npolicies = ["eager"]\n'
            "budgets = [0]\n",
            "at least 1",
        ),
        ("name = [\n", "not valid TOML"),
    ],
)
def test_bad_experiments_are_one_readable_error(tmp_path, text, expected) -> None:
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(ExperimentError) as info:
        load_plan(path)
    message = str(info.value)
    assert expected in message
    assert str(path) in message


def test_a_bad_variant_file_is_named_with_its_key(tmp_path) -> None:
    write(tmp_path / "v.toml", "[economy]\nship_loss_prob = 2\n")
    path = write(
        tmp_path / "e.toml",
        'name = "x"\nbenchmark = "coffee"\n[matrix]\nvariants = ["v.toml"]\n',
    )
    with pytest.raises(ExperimentError, match=r"variant .*v\.toml.*economy\.ship_loss_prob"):
        load_plan(path)


def test_missing_api_keys_are_listed_once_before_anything_runs(tmp_path) -> None:
    path = write(
        tmp_path / "e.toml",
        """
name = "x"
benchmark = "coffee"
seeds = "1-3"
[agents]
default = "anthropic/claude-sonnet-4-6"
[matrix]
roaster_A = ["openai/gpt-5.5", "heuristic"]
""",
    )
    with pytest.raises(ExperimentError) as info:
        load_plan(path)
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "ANTHROPIC_API_KEY" in message
    assert message.count("ANTHROPIC_API_KEY") == 1
    assert load_plan(path, check=False).entries  # the matrix itself is fine


def test_missing_experiment_file(tmp_path) -> None:
    with pytest.raises(ExperimentError, match="experiment file not found"):
        load_plan(tmp_path / "nope.toml")
