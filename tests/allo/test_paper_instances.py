"""The paper's problem instances, draw for draw (``econbench.allo.game.instances``).

Checked against what the paper's own code sent (``data/paper_requests``: every R1/R2 problem
text, every R3 problem text and named-values line, Haiku/GPT/Qwen at the "haiku" profile and
Opus R3 at the "opus" one) and against digests of the paper's generator for settings the
requests do not cover (``data/paper_instances.json``, written by ``make_paper_instances.py``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import lzma
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from econbench.allo.framings import get_framing
from econbench.allo.framings.covers import cover_index, covers, instance_text, problem_text
from econbench.allo.game import Game
from econbench.allo.game.families import (
    FAMILIES,
    FAMILY_NAMES,
    PAPER_KEYS,
    family_for_class,
    get_family,
    instance_for,
    named_from_params,
    params_from_named,
)
from econbench.allo.game.instances import (
    episode_instances,
    framing_instances,
    framing_options,
    resolve_options,
)
from econbench.allo.game.stream import StreamConfig, generate_stream

DATA = Path(__file__).parent / "data"
REQUESTS = DATA / "paper_requests"
DERIVED = json.loads((DATA / "paper_instances.json").read_text("utf-8"))

R12 = re.compile(r"Problem (\d+) of (\d+) \([^)]*\): (.*?)\nYou have", re.DOTALL)
R3 = re.compile(
    r"PROBLEM (\d+) of (\d+):\n(.*?)\n\nThe named values in this problem are: (\{.*?\}) "
    r"\(keys: \[(.*?)\]\)\.\nGive your final answer to (\d+) significant figures",
    re.DOTALL,
)
# condition -> (rung, the paper's profile, problems it shows: (seed, task) pairs)
CONDITIONS = {
    "r1_claim_haiku": ("r1", "haiku", 230),
    "r1_claim_gpt": ("r1", "haiku", 230),
    "r1_claim_qwen": ("r1", "haiku", 230),
    "r1_claim_qwen_efr4": ("r1", "haiku", 223),
    "r2_code_haiku": ("r2", "haiku", 230),
    "r2_code_gpt_surface": ("r2", "haiku", 230),
    "r2_code_qwen_efr4": ("r2", "haiku", 223),
    "econ_r2_haiku": ("r2", "haiku", 322),
    "r3_build_haiku": ("r3", "haiku", 28 * 60),
    "r3_build_gpt": ("r3", "haiku", 304),
    "r3_build_opus": ("r3", "opus", 304),
    "r3_build_qwen_efr4": ("r3", "haiku", 301),
}


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return out


@cache
def shown(condition: str) -> dict[tuple[int, int], tuple[str, ...]]:
    """Every problem a condition's requests show: (seed, task) -> the captured fields (R1/R2:
    the problem text; R3: text, named values, keys, significant figures). A problem first
    appears in the last messages of a request, so those are read."""
    rung = CONDITIONS[condition][0]
    pattern = R3 if rung == "r3" else R12
    found: dict[tuple[int, int], tuple[str, ...]] = {}
    with lzma.open(REQUESTS / f"{condition}.jsonl.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            request = json.loads(line)
            for text in _user_texts(request["body"]["messages"][-2:]):
                for m in pattern.finditer(text):
                    assert int(m.group(2)) == 60
                    key = (request["seed"], int(m.group(1)))
                    fields = (m.group(3),) if rung != "r3" else m.groups()[2:]
                    assert found.setdefault(key, fields) == fields, key  # always the same text
    return found


def _instances(seed: int, profile: str = "haiku", **kw: Any) -> tuple[Any, ...]:
    return episode_instances(generate_stream(seed), profile=profile, **kw)


# -- the example ----------------------------------------------------------------------


def test_seed_2000_first_problem_is_the_papers() -> None:
    first = _instances(2000)[0]
    assert first.family == "xorshift_steps"
    assert first.named_values == {"X": 32586213, "A": 11, "B": 9, "C": 17, "K": 14}
    assert list(first.named_values) == ["X", "A", "B", "C", "K"]
    assert first.params == {"seed": 32586213, "a": 11, "b": 9, "c": 17, "steps": 14}
    assert instance_text(first) == (
        "A 32-bit register holds X = 32586213. Repeat 14 times: X ^= (X << 11); X ^= (X >> 9); "
        "X ^= (X << 17); keeping X masked to 32 bits (AND with 0xFFFFFFFF) after each left "
        "shift. Report the final X."
    )
    assert first.answer == 1098337718  # the paper's stored gold (runs/*/seed_2000/stream.json)
    assert shown("r1_claim_haiku")[(2000, 1)] == (instance_text(first),)
    # and the default R1 framing shows it
    stream = generate_stream(2000)
    ep = get_framing("r1").episode(stream, 0.0, 3)
    text = ep.begin_turn(Game(stream).turn(), 3)
    assert "X = 32586213" in text and "2354488751" not in text


# -- every problem the paper's code sent --------------------------------------------------------


@pytest.mark.parametrize("condition", sorted(CONDITIONS))
def test_every_fixture_problem_is_what_econbench_draws(condition: str) -> None:
    rung, profile, count = CONDITIONS[condition]
    problems = shown(condition)
    assert len(problems) == count  # the extraction found every problem the requests show
    for (seed, task), fields in problems.items():
        inst = _instances(seed, profile)[task - 1]
        assert fields[0] == instance_text(inst), (condition, seed, task)
        assert inst.answer == get_family(inst.family).solve(inst.params)
        if rung == "r3":
            named, keys, digits = fields[1:]
            assert named == repr(inst.named_values), (condition, seed, task)
            assert keys == ", ".join(inst.named_values) == ", ".join(PAPER_KEYS[inst.family])
            assert int(digits) == len(str(inst.answer))  # the paper's sig_figs of its gold


def test_the_opus_profile_is_needed_for_opus_r3() -> None:
    opus = shown("r3_build_opus")
    differ = sum(
        fields[0] != instance_text(_instances(seed, "haiku")[task - 1])
        for (seed, task), fields in opus.items()
    )
    assert differ > len(opus) // 2  # Haiku's instances are not Opus's


def test_the_fixture_shows_every_cover_of_every_family() -> None:
    used: dict[str, set[int]] = {}
    for seed, task in shown("r3_build_haiku"):
        inst = _instances(seed)[task - 1]
        used.setdefault(inst.family, set()).add(inst.cover)
    assert used == {name: set(range(len(texts))) for name, texts in covers().items()}


def test_framings_show_the_papers_problems() -> None:
    for rung, condition in (("r1", "r1_claim_haiku"), ("r2", "r2_code_haiku")):
        problems = shown(condition)
        for seed in (2000, 2013, 5002):
            stream = generate_stream(seed)
            ep = get_framing(rung).episode(stream, 0.0, 3)
            game = Game(stream, budget=3)
            for _ in range(stream.config.n_tasks):
                turn = game.turn()
                text = ep.begin_turn(turn, 3)
                m = R12.search(text)
                assert m is not None and int(m.group(1)) == turn.t + 1
                if (seed, turn.t + 1) in problems:
                    assert (m.group(3),) == problems[(seed, turn.t + 1)]
                assert ep.cover == framing_instances(ep.framing, stream)[turn.t].cover
                game.step(False)


def test_r3_shows_the_papers_problem_and_named_values() -> None:
    from econbench.allo.sandbox.core import Sandbox

    problems = shown("r3_build_haiku")
    framing = get_framing("r3", sandbox=Sandbox())
    for seed in (2000, 5003):
        stream = generate_stream(seed)
        ep = framing.episode(stream, 0.0, 3)
        game = Game(stream, budget=3)
        for _ in range(stream.config.n_tasks):
            turn = game.turn()
            m = R3.search(ep.begin_turn(turn, 3))
            assert m is not None and m.groups()[2:] == problems[(seed, turn.t + 1)]
            game.step(False)


# -- settings the requests do not cover: the paper's generator's own digests ------------------


def _digest(instances: tuple[Any, ...]) -> str:
    rows = [
        [i.family, [[k, v] for k, v in i.named_values.items()], instance_text(i), i.answer]
        for i in instances
    ]
    text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    "case", DERIVED["cases"], ids=lambda c: f"{c['seed']}-{c['profile']}-m{c['magnitude']}"
)
def test_the_papers_generator_digests(case: dict[str, Any]) -> None:
    config = StreamConfig(**case["stream"])
    stream = generate_stream(case["seed"], config)
    assert list(stream.classes) == case["classes"]
    inst = episode_instances(stream, profile=case["profile"], magnitude=case["magnitude"])
    first = case["first"]
    assert (inst[0].family, inst[0].named_values) == (first["family"], first["inputs"])
    assert (instance_text(inst[0]), inst[0].answer) == (first["question"], first["gold"])
    assert _digest(inst) == case["sha256"]


def test_the_fallback_case_is_exercised() -> None:
    case = next(c for c in DERIVED["cases"] if c["stream"]["hot_mass"] == 0.999)
    stream = generate_stream(case["seed"], StreamConfig(**case["stream"]))
    assert stream.forced_trap and stream.redraws == 2000


def test_profiles_change_only_lcg_and_continued_frac_draws() -> None:
    seed = 2000
    stream = generate_stream(seed)
    haiku, opus = _instances(seed), _instances(seed, "opus")
    order = list(dict.fromkeys(stream.classes))  # the paper draws class by class in this order
    profiled = {"lcg", "continued_frac"}
    first_profiled = next(i for i, c in enumerate(order) if family_for_class(c).name in profiled)
    for cls in order[:first_profiled]:  # drawn before any profiled family: the same
        ts = [t for t, c in enumerate(stream.classes) if c == cls]
        assert [haiku[t] for t in ts] == [opus[t] for t in ts]
    lcg = [t for t, c in enumerate(stream.classes) if family_for_class(c).name == "lcg"]
    assert lcg and all(22 <= opus[t].named_values["K"] <= 32 for t in lcg)
    assert all(6 <= haiku[t].named_values["K"] <= 12 for t in lcg)
    sonnet = _instances(seed, "sonnet")
    assert all(16 <= sonnet[t].named_values["K"] <= 26 for t in lcg)


def test_magnitude_scales_the_draws() -> None:
    small, large = _instances(2001, magnitude=10), _instances(2001, magnitude=1000)
    for a, b in zip(small, large, strict=True):
        assert a.family == b.family
        if a.family == "lcg":
            assert a.params["modulus"] % 10 == 0 and b.params["modulus"] % 1000 == 0
        if a.family == "crt_solve":
            assert len(a.params["moduli"]) in (4, 5) and len(b.params["moduli"]) in (7, 8)


# -- econbench's generator: unchanged ---------------------------------------------------------


def test_the_econbench_generator_is_todays() -> None:
    for seed in (2000, 2007, 5001):
        stream = generate_stream(seed)
        for m in (100, 10):
            got = episode_instances(stream, generator="econbench", magnitude=m)
            for t, cls in enumerate(stream.classes):
                old = instance_for(seed, t, cls, m)
                assert (got[t].family, got[t].params, got[t].answer) == (
                    old.family,
                    old.params,
                    old.answer,
                )
                assert got[t].cover == cover_index(seed, t, cls)
                assert got[t].named_values is None and got[t].to_dict() == old.to_dict()
                assert problem_text(seed, t, cls, old) == instance_text(got[t])


def test_protocol_econbench_keeps_its_instances_and_records() -> None:
    stream = generate_stream(2004)
    turn = Game(stream).turn()
    framing = get_framing("r1", protocol="econbench")
    assert framing_options(framing)["generator"] == "econbench"
    ep = framing.episode(stream, 0.0, 3)
    ep.begin_turn(turn, 3)
    ep.toolkit.call("skip_solver", {})
    assert ep.end_turn("tool").record["instance"] == instance_for(2004, 0, turn.cls).to_dict()
    paper = get_framing("r1")
    assert framing_options(paper) == {"generator": "paper", "profile": "haiku", "magnitude": 100}
    ep = paper.episode(stream, 0.0, 3)
    ep.begin_turn(turn, 3)
    ep.toolkit.call("skip_solver", {})
    record = ep.end_turn("tool").record
    assert record["instance"] == _instances(2004)[0].to_dict()
    assert record["instance"]["named_values"] == _instances(2004)[0].named_values
    assert record["cover"] == record["instance"]["cover"]


# -- the instance object, the options, the cache ----------------------------------------------


def test_records_are_json_and_backward_compatible() -> None:
    paper = _instances(2002)[5]
    data = json.loads(json.dumps(paper.to_dict()))
    assert list(data) == ["family", "params", "answer", "cover", "named_values"]
    assert data["named_values"] == paper.named_values and data["cover"] == paper.cover
    assert list(instance_for(2002, 5, 3).to_dict()) == ["family", "params", "answer"]
    assert paper.inputs is paper.named_values
    assert instance_for(2002, 5, 3).inputs == instance_for(2002, 5, 3).params


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_named_values_and_params_convert_both_ways(family: str) -> None:
    seen = 0
    for seed in range(2000, 2006):
        for inst in _instances(seed):
            if inst.family != family:
                continue
            seen += 1
            assert tuple(inst.named_values) == PAPER_KEYS[family]
            assert named_from_params(family, inst.params) == inst.named_values
            assert params_from_named(family, inst.named_values) == inst.params
            assert list(inst.params) == list(get_family(family).generate(_np_rng()))
    assert seen
    with pytest.raises(ValueError, match="named values must be"):
        params_from_named(family, {"nope": 1})


def _np_rng() -> Any:
    import numpy as np

    return np.random.default_rng(0)


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_NAMES)
def test_reference_code_reads_the_papers_names_too(family: Any) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(family.reference_code, "<reference>", "exec"), namespace)
    solve = namespace["solve"]
    checked = 0
    for seed in range(2000, 2004):
        for inst in _instances(seed, "opus"):
            if inst.family == family.name and checked < 6:
                named = ast.literal_eval(repr(inst.named_values))  # as R3 shows it
                assert solve(named) == solve(json.loads(json.dumps(inst.params))) == inst.answer
                checked += 1
    assert checked


def test_options_are_checked_in_one_line() -> None:
    stream = generate_stream(2000)
    bad = [
        ({"generator": "numpy"}, "instances must be one of paper, econbench"),
        ({"profile": "gpt"}, "instance_profile must be one of haiku, sonnet, opus"),
        ({"generator": "econbench", "profile": "opus"}, "applies to instances 'paper' only"),
        ({"magnitude": 0}, "magnitude must be an integer >= 1"),
        ({"magnitude": True}, "magnitude must be an integer >= 1"),
        ({"magnitude": 2.5}, "magnitude must be an integer >= 1"),
    ]
    for options, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)) as exc:
            episode_instances(stream, **options)
        assert "\n" not in str(exc.value)
    assert resolve_options("econbench") == ("econbench", "haiku", 100)
    assert resolve_options("paper") == ("paper", "haiku", 100)
    assert resolve_options("paper", "paper", "opus", 1000) == ("paper", "opus", 1000)
    with pytest.raises(ValueError, match="instance_profile"):
        resolve_options("paper", None, "Opus")


def test_instances_are_cached_and_deterministic() -> None:
    stream = generate_stream(2010)
    a = episode_instances(stream)
    assert episode_instances(stream) is a  # cached per stream and options
    assert len(a) == stream.config.n_tasks
    again = episode_instances(generate_stream(2010))  # an equal stream: the same instances
    assert again == a
    assert episode_instances(stream, magnitude=101) != a


def test_a_stream_the_paper_did_not_draw_gets_deterministic_paper_style_instances() -> None:
    numpy_stream = generate_stream(2000, StreamConfig(generator="numpy"))
    got = episode_instances(numpy_stream)
    assert got == episode_instances(numpy_stream.model_copy())
    for inst, cls in zip(got, numpy_stream.classes, strict=True):
        assert inst.family == family_for_class(cls).name
        assert inst.answer == get_family(inst.family).solve(inst.params)
        assert instance_text(inst)
