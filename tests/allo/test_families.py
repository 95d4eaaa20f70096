"""The eight problem families: hand-checked answers, reference code, ranges, determinism."""

from __future__ import annotations

import ast
import json
import sys

import numpy as np
import pytest

from econbench.allo.game.families import (
    FAMILIES,
    FAMILY_NAMES,
    Instance,
    family_for_class,
    get_family,
    instance_for,
)

EXPECTED_NAMES = (
    "lcg",
    "modpow",
    "continued_frac",
    "crt_solve",
    "josephus",
    "quadratic_map_mod",
    "xorshift_steps",
    "matrix_power_mod",
)


def test_families_are_the_eight_in_spec_order() -> None:
    assert FAMILY_NAMES == EXPECTED_NAMES
    assert [family_for_class(c).name for c in range(16)] == list(EXPECTED_NAMES) * 2
    with pytest.raises(KeyError, match="unknown family"):
        get_family("sudoku")


# ---------------------------------------------------------------- hand-computed instances


def test_lcg_by_hand() -> None:
    lcg = get_family("lcg")
    # x1 = (3*5 + 7) mod 11 = 22 mod 11 = 0; x2 = (3*0 + 7) mod 11 = 7
    assert lcg.solve({"x0": 5, "a": 3, "b": 7, "modulus": 11, "steps": 2}) == 7
    # one step: 200*50 + 100 = 10100 < 30000
    assert lcg.solve({"x0": 50, "a": 200, "b": 100, "modulus": 30000, "steps": 1}) == 10100
    # three steps mod 10: 1 -> 3 -> 7 -> 15 mod 10 = 5 (x <- 2x + 1)
    assert lcg.solve({"x0": 1, "a": 2, "b": 1, "modulus": 10, "steps": 3}) == 5


def test_modpow_by_hand() -> None:
    modpow = get_family("modpow")
    # the textbook example: 4^13 mod 497 = 445
    assert modpow.solve({"base": 4, "exponent": 13, "modulus": 497}) == 445
    # 3^4 = 81 = 6*13 + 3
    assert modpow.solve({"base": 3, "exponent": 4, "modulus": 13}) == 3


def test_continued_fraction_by_hand() -> None:
    cf = get_family("continued_frac")
    assert cf.solve({"terms": [2, 3]}) == 7  # 2 + 1/3 = 7/3
    assert cf.solve({"terms": [1, 2, 2]}) == 7  # 1 + 1/(2 + 1/2) = 1 + 2/5 = 7/5
    assert cf.solve({"terms": [3, 7, 15, 1]}) == 355  # 355/113, the famous pi convergent


def test_crt_by_hand() -> None:
    crt = get_family("crt_solve")
    # Sunzi's problem: x ≡ 2 (3), 3 (5), 2 (7) -> 23
    assert crt.solve({"moduli": [3, 5, 7], "residues": [2, 3, 2]}) == 23
    # all residues 0 -> the smallest non-negative solution is 0, not the product
    assert crt.solve({"moduli": [101, 103], "residues": [0, 0]}) == 0
    # x ≡ 1 (101), x ≡ 0 (103) -> x = 103*k with 103k ≡ 1 (101): 2k ≡ 1 -> k = 51 -> 5253
    assert crt.solve({"moduli": [101, 103], "residues": [1, 0]}) == 5253


def test_josephus_by_hand() -> None:
    jos = get_family("josephus")
    # 1..7, k=3: out 3, 6, 2, 7, 5, 1 -> 4 survives (1-based)
    assert jos.solve({"n": 7, "k": 3}) == 4
    # 1..5, k=2: out 2, 4, 1, 5 -> 3
    assert jos.solve({"n": 5, "k": 2}) == 3
    assert jos.solve({"n": 1, "k": 9}) == 1


def test_quadratic_map_by_hand() -> None:
    qm = get_family("quadratic_map_mod")
    # 2 -> 5 -> 26 mod 10 = 6 -> 37 mod 10 = 7
    assert qm.solve({"x0": 2, "c": 1, "modulus": 10, "steps": 3}) == 7


def test_xorshift_one_step_by_hand() -> None:
    xs = get_family("xorshift_steps")
    # x = 1: x ^= x << 13 -> 8193; x ^= x >> 7 (= 64) -> 8257; x ^= x << 17 -> disjoint bits
    expected = 8257 + (8257 << 17)
    assert xs.solve({"seed": 1, "a": 13, "b": 7, "c": 17, "steps": 1}) == expected
    # masking: x = 2^31 + 1, a = 11: the shifted-out 2^42 is dropped
    # x ^= x << 11 -> 2^31 + 2^11 + 1; x ^= x >> 7 -> + 2^24 + 2^4;
    # x ^= x << 15 keeps only 2^26 + 2^19 + 2^15 below 2^32
    bits = [31, 26, 24, 19, 15, 11, 4, 0]
    expected = sum(1 << b for b in bits)
    assert xs.solve({"seed": (1 << 31) + 1, "a": 11, "b": 7, "c": 15, "steps": 1}) == expected


def test_matrix_power_by_hand() -> None:
    mp = get_family("matrix_power_mod")
    # Fibonacci matrix ^5 = [[8, 5], [5, 3]]: sum 21, mod 10 -> 1
    assert mp.solve({"matrix": [[1, 1], [1, 0]], "power": 5, "modulus": 10}) == 1
    # [[2,3],[4,5]]^2 = [[16, 21], [28, 37]]: sum 102, mod 100 -> 2
    assert mp.solve({"matrix": [[2, 3], [4, 5]], "power": 2, "modulus": 100}) == 2


# ---------------------------------------------------------------- reference code vs solve


def _compile_reference(code: str):
    namespace: dict = {}
    exec(compile(code, "<reference>", "exec"), namespace)
    return namespace["solve"]


def _disagreements(family, code: str, n: int = 200) -> int:
    solve_ref = _compile_reference(code)
    rng = np.random.default_rng([7, EXPECTED_NAMES.index(family.name)])
    bad = 0
    for _ in range(n):
        params = family.generate(rng)
        got = solve_ref(json.loads(json.dumps(params)))  # exactly what the sandbox passes
        assert type(got) is int
        bad += got != family.solve(params)
    return bad


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_NAMES)
def test_reference_code_agrees_with_solve(family) -> None:
    assert _disagreements(family, family.reference_code) == 0


def test_the_comparison_catches_a_wrong_reference() -> None:
    # Dropping the 32-bit mask on the last shift is a classic xorshift bug; it must show.
    xs = get_family("xorshift_steps")
    broken = xs.reference_code.replace('(x << inputs["c"]) & mask', 'x << inputs["c"]')
    assert broken != xs.reference_code
    assert _disagreements(xs, broken, 20) == 20
    jos = get_family("josephus")
    zero_based = jos.reference_code.replace("return people[0]", "return people[0] - 1")
    assert _disagreements(jos, zero_based, 20) == 20


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_NAMES)
def test_reference_code_is_standalone_stdlib(family) -> None:
    tree = ast.parse(family.reference_code)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert [f.name for f in funcs] == ["solve"]
    assert [a.arg for a in funcs[0].args.args] == ["inputs"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert all(n.split(".")[0] in sys.stdlib_module_names for n in names)


# ---------------------------------------------------------------- ranges at m = 100


def _check_ranges(name: str, p: dict) -> None:
    def within(v: int, lo: int, hi: int) -> bool:
        return isinstance(v, int) and lo <= v <= hi

    # The ranges of the paper's scripts/theory/family_kit.py samplers (default profile).
    if name == "lcg":
        assert set(p) == {"x0", "a", "b", "modulus", "steps"}
        assert within(p["x0"], 50, 300) and within(p["a"], 200, 3000)
        assert within(p["b"], 100, 3000) and within(p["modulus"], 30000, 120000)
        # _lcg_sampler: randint(2, 30) * m etc., so multiples of m
        assert p["a"] % 100 == p["b"] % 100 == p["modulus"] % 100 == 0
        assert within(p["steps"], 6, 12)
    elif name == "modpow":
        # _modpow_sampler: base and modulus each _scale(m), independent; exponent floor(m/8)..
        assert within(p["modulus"], 13700, 997300) and within(p["base"], 13700, 997300)
        assert within(p["exponent"], 12, 33)  # max(10, 100 // 8) .. max(30, 100 // 3)
    elif name == "continued_frac":
        assert 3 <= len(p["terms"]) <= 4
        assert all(within(a, 1100, 12000) for a in p["terms"])
    elif name == "crt_solve":
        primes = p["moduli"]
        assert 4 <= len(primes) <= 5 and len(set(primes)) == len(primes)
        for q in primes:
            assert within(q, 101, 3000) and all(q % d for d in range(2, int(q**0.5) + 1))
        assert all(within(r, 0, q - 1) for r, q in zip(p["residues"], primes, strict=True))
    elif name == "josephus":
        assert within(p["n"], 80, 200) and within(p["k"], 3, 9)
    elif name == "quadratic_map_mod":
        # _quadmap_sampler: x0, c, modulus each _scale(m), independent
        assert within(p["modulus"], 13700, 997300) and within(p["steps"], 15, 30)
        assert within(p["x0"], 13700, 997300) and within(p["c"], 13700, 997300)
    elif name == "xorshift_steps":
        # _xorshift_sampler: the seed is at least 2^20
        assert within(p["seed"], 2**20, 2**32 - 1) and within(p["steps"], 12, 25)
        assert p["a"] in (11, 13) and p["b"] in (7, 9) and p["c"] in (15, 17)
    elif name == "matrix_power_mod":
        assert len(p["matrix"]) == 2 and all(len(row) == 2 for row in p["matrix"])
        assert all(within(v, 2, 40) for row in p["matrix"] for v in row)
        assert within(p["power"], 25, 45) and within(p["modulus"], 13700, 997300)
    else:  # pragma: no cover - a new family needs its ranges checked here
        raise AssertionError(name)


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_NAMES)
def test_generated_params_stay_in_spec_ranges(family) -> None:
    rng = np.random.default_rng(123)
    seen_steps_like = set()
    for _ in range(300):
        params = family.generate(rng, 100)
        _check_ranges(family.name, params)
        assert json.loads(json.dumps(params)) == params  # JSON-able, plain ints
        seen_steps_like.add(json.dumps(params, sort_keys=True))
    assert len(seen_steps_like) > 250  # fresh parameters, not a handful of repeats


def test_magnitude_scales_the_ranges() -> None:
    rng = np.random.default_rng(5)
    for _ in range(100):
        p = get_family("josephus").generate(rng, 10)
        assert 10 <= p["n"] <= 20  # the paper's floors: max(10, 0.8 m) .. max(20, 2 m)
        p = get_family("lcg").generate(rng, 10)
        assert 3000 <= p["modulus"] <= 12000 and p["modulus"] % 10 == 0
        p = get_family("crt_solve").generate(rng, 1000)
        assert 7 <= len(p["moduli"]) <= 8  # 4 + (1000 - 100) // 300 = 7, up to 8
    with pytest.raises(ValueError):
        get_family("lcg").generate(rng, 0)


def test_answers_beyond_2_53_are_exact_ints() -> None:
    """crt_solve and continued_frac answers reach past 2^53; they stay exact Python ints."""
    rng = np.random.default_rng(3)
    for name in ("crt_solve", "continued_frac"):
        family = get_family(name)
        params = [family.generate(rng) for _ in range(2000)]
        answers = [family.solve(p) for p in params]
        assert all(type(a) is int for a in answers)
        big = [(p, a) for p, a in zip(params, answers, strict=True) if a > 2**53]
        assert big
        p, a = big[0]
        assert json.loads(json.dumps(a)) == a  # survives JSON exactly
        if name == "crt_solve":
            assert all(a % q == r for q, r in zip(p["moduli"], p["residues"], strict=True))


def test_ranges_hit_both_ends() -> None:
    # the closed ranges are really closed: small ranges reach both endpoints
    rng = np.random.default_rng(9)
    ks = {get_family("josephus").generate(rng)["k"] for _ in range(400)}
    steps = {get_family("lcg").generate(rng)["steps"] for _ in range(400)}
    assert ks == set(range(3, 10)) and steps == set(range(6, 13))


# ---------------------------------------------------------------- statements and stories


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_NAMES)
def test_statement_contains_every_parameter(family) -> None:
    params = family.generate(np.random.default_rng(1))
    text = family.describe(params)
    assert json.dumps(params, sort_keys=True) in text
    for value in params.values():
        for v in np.ravel(value) if isinstance(value, list) else [value]:
            assert str(int(v)) in text
    assert family.title and len(family.cover_story) > 40


# ---------------------------------------------------------------- instance_for


def test_instance_for_is_deterministic_and_fresh() -> None:
    a = instance_for(2000, 5, 3)
    assert a == instance_for(2000, 5, 3)
    assert isinstance(a, Instance) and a.family == "crt_solve"
    assert a.answer == get_family("crt_solve").solve(a.params)
    assert instance_for(2000, 6, 3).params != a.params  # fresh per occurrence
    assert instance_for(2001, 5, 3).params != a.params  # and per episode
    assert instance_for(2000, 5, 11).family == "crt_solve"  # 11 % 8 == 3
    assert instance_for(2000, 5, 11).params != a.params
    assert json.loads(json.dumps(a.to_dict()))["answer"] == a.answer


def test_instance_for_rejects_negative_ids() -> None:
    with pytest.raises(ValueError):
        instance_for(-1, 0, 0)
