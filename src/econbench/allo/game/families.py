"""The eight AlloBench problem families (docs/allobench.md §4): one per task class.

Each family bundles a parameter generator, an exact ground-truth solver, a precise problem
statement (the same text is shown in R1, R2 and R3), a short cover story that frames the
family as a recurring business chore (R1), and ``reference_code``: the source of a correct,
standalone ``def solve(inputs: dict) -> int`` using only the standard library, which the
scripted R3 builder writes into the sandbox. ``solve`` and ``reference_code`` are written
with different algorithms on purpose, so a test that compares them checks something.

Class id ``c`` uses ``FAMILIES[c % 8]``. An episode's instances come from
``econbench.allo.game.instances.episode_instances``: by default the paper's own draws (its
``random.Random(seed)`` continued after the stream, its samplers draw for draw, its named
values ``PAPER_KEYS``), or econbench's earlier generator, ``instance_for(seed, t, cls)``: fresh
parameters per occurrence seeded by ``np.random.default_rng([seed, t, cls, SALT])``.

Ranges, with instance magnitude ``m`` (default 100), as the paper's
``scripts/theory/family_kit.py`` samplers draw them (its default "haiku" profile);
``scale(m)`` is its ``_scale``, a uniform integer in [137m, 9973m]. ``instance_for`` draws
them with numpy (different draws from the same distributions); ``econbench.allo.game.instances``
draws the paper's very instances (and its "sonnet"/"opus" profiles). Answers can exceed 2^53
(crt_solve, continued_frac): they are Python ints. ``reference_code`` accepts the parameters
under econbench's names or the paper's (``PAPER_KEYS``, as the paper's R3 shows them).

- ``lcg``: x0 in [50, 300], a = m·[2, 30], b = m·[1, 30], modulus = m·[300, 1200] (multiples
  of m), steps in [6, 12]; answer = x after ``steps`` applications of x <- (a*x + b) mod modulus.
- ``modpow``: base and modulus each scale(m), drawn independently (the modulus is any integer,
  the base may exceed it), exponent in [max(10, m // 8), max(30, m // 3)] = [12, 33] at
  m = 100; answer = base^exponent mod modulus.
- ``continued_frac``: 3–4 terms, each in [11m, 120m]; answer = the numerator of
  [a0; a1, ..., ak] written as a fraction in lowest terms (convergent numerators are always
  coprime to their denominators, so "final convergent numerator" is the same number).
- ``crt_solve``: 4–5 distinct primes (one more per 300 of m above 100) in [101, 3000],
  residues r_i in [0, p_i - 1]; answer = the smallest non-negative x with x ≡ r_i (mod p_i)
  for all i (unique below the product).
- ``josephus``: n in [max(10, floor(0.8m)), max(20, 2m)], k in [3, 9]; people numbered 1..n
  stand in a circle, counting starts at person 1 and every k-th person leaves; answer = the
  1-based number of the survivor (so josephus(7, 3) = 4).
- ``quadratic_map_mod``: x0, c and modulus each scale(m), drawn independently (x0 and c may
  exceed the modulus), steps in [15, 30]; answer = x after ``steps`` applications of
  x <- (x*x + c) mod modulus.
- ``xorshift_steps``: 32-bit seed in [2^20, 2^32 - 1], a in {11, 13}, b in {7, 9},
  c in {15, 17}, steps in [12, 25]; one step is x ^= x << a; x ^= x >> b; x ^= x << c,
  each result masked to 32 bits; answer = the state after ``steps`` steps.
- ``matrix_power_mod``: a 2x2 matrix with entries in [2, 40], power in [25, 45], modulus in
  [137m, 9973m]; answer = (sum of the four entries of A^power) mod modulus, a number in
  [0, modulus - 1] (equal to summing the entries of A^power mod modulus, then reducing).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

SALT = 0xA110_FA31
"""Names the instance-parameter stream: ``default_rng([seed, t, cls, SALT])``."""

DEFAULT_MAGNITUDE = 100

Params = dict[str, Any]


def _randint(rng: np.random.Generator, lo: int, hi: int) -> int:
    """A uniform integer in the closed range [lo, hi], as a plain Python int."""
    if hi < lo:
        raise ValueError(f"empty range [{lo}, {hi}]")
    return int(rng.integers(lo, hi, endpoint=True))


def _inputs_line(params: Params) -> str:
    return f"Inputs (the `inputs` dict passed to `solve`): {json.dumps(params, sort_keys=True)}"


@dataclass(frozen=True)
class Family:
    """A problem family: generator, ground truth, statement, cover story, reference code."""

    name: str
    title: str
    cover_story: str
    reference_code: str
    ranges: Callable[[int], dict[str, tuple[int, int]]] = field(repr=False)
    _generate: Callable[[np.random.Generator, int], Params] = field(repr=False)
    _solve: Callable[[Params], int] = field(repr=False)
    _describe: Callable[[Params], str] = field(repr=False)

    def generate(self, rng: np.random.Generator, m: int = DEFAULT_MAGNITUDE) -> Params:
        """Fresh JSON-able parameters for one occurrence (magnitude ``m``)."""
        if m < 1:
            raise ValueError("magnitude m must be >= 1")
        return self._generate(rng, m)

    def solve(self, params: Params) -> int:
        """The exact ground-truth answer."""
        return int(self._solve(params))

    def describe(self, params: Params) -> str:
        """The problem statement shown to the model (identical in R1–R3)."""
        return (
            f"{self._describe(params)}\n{_inputs_line(params)}\n"
            "The answer is a single exact integer."
        )


@dataclass(frozen=True)
class Instance:
    """One occurrence's problem: its family, parameters and exact answer.

    ``params`` always uses econbench's parameter names (the solvers, covers and statements read
    them). ``cover`` is the index of the family's cover the occurrence shows (None when no
    cover was chosen, as ``instance_for`` alone chooses none); ``named_values`` are the same
    values under the paper's names and in the paper's order (``SEED, A, B, M, K`` …, see
    ``PAPER_KEYS``), set for the paper's instances only (``econbench.allo.game.instances``).
    """

    family: str
    params: Params
    answer: int
    cover: int | None = None
    named_values: Params | None = None

    @property
    def inputs(self) -> Params:
        """The values as the problem names them for a script: the paper's named values when
        set, else ``params``."""
        return self.named_values if self.named_values is not None else self.params

    def to_dict(self) -> dict[str, Any]:
        """The record of this instance: ``family``, ``params``, ``answer``, and for the paper's
        instances also ``cover`` and ``named_values`` (an econbench instance's record is
        unchanged; the framings that show covers record its cover index beside it)."""
        out: dict[str, Any] = {"family": self.family, "params": self.params, "answer": self.answer}
        if self.named_values is not None:
            out.update(cover=self.cover, named_values=self.named_values)
        return out


# --------------------------------------------------------------------------- lcg


def _lcg_ranges(m: int) -> dict[str, tuple[int, int]]:
    """a, b and modulus are ``m`` times a uniform integer in these ranges (the paper's
    ``family_kit._lcg_sampler``: ``randint(2, 30) * m`` etc.); x0 and steps are not scaled."""
    return {"x0": (50, 300), "a": (2, 30), "b": (1, 30), "modulus": (300, 1200), "steps": (6, 12)}


_LCG_SCALED = ("a", "b", "modulus")


def _lcg_generate(rng: np.random.Generator, m: int) -> Params:
    r = _lcg_ranges(m)
    return {
        k: _randint(rng, *r[k]) * (m if k in _LCG_SCALED else 1)
        for k in ("x0", "a", "b", "modulus", "steps")
    }


def _lcg_solve(p: Params) -> int:
    # Compose the affine map x -> a*x + b with itself `steps` times by repeated squaring.
    mod = p["modulus"]
    mul, add = 1, 0  # accumulated map x -> mul*x + add
    sq_mul, sq_add = p["a"] % mod, p["b"] % mod
    n = p["steps"]
    while n:
        if n & 1:
            mul, add = (sq_mul * mul) % mod, (sq_mul * add + sq_add) % mod
        sq_mul, sq_add = (sq_mul * sq_mul) % mod, (sq_mul * sq_add + sq_add) % mod
        n >>= 1
    return (mul * p["x0"] + add) % mod


def _lcg_describe(p: Params) -> str:
    return (
        "Linear congruential generator. Start from x = x0 and apply the update "
        "x <- (a*x + b) mod modulus exactly `steps` times. Report the final x "
        f"(x0 = {p['x0']}, a = {p['a']}, b = {p['b']}, modulus = {p['modulus']}, "
        f"steps = {p['steps']})."
    )


_LCG_CODE = """\
def solve(inputs: dict) -> int:
    if "SEED" in inputs:  # the paper's names
        inputs = {"x0": inputs["SEED"], "a": inputs["A"], "b": inputs["B"],
                  "modulus": inputs["M"], "steps": inputs["K"]}
    x = inputs["x0"]
    for _ in range(inputs["steps"]):
        x = (inputs["a"] * x + inputs["b"]) % inputs["modulus"]
    return x
"""

# --------------------------------------------------------------------------- modpow


def _modpow_ranges(m: int) -> dict[str, tuple[int, int]]:
    """The paper's ``_modpow_sampler``: base and modulus each ``_scale(m)`` = [137m, 9973m],
    drawn independently (so the base may exceed the modulus), exponent in
    [max(10, m // 8), max(30, m // 3)]."""
    return {
        "base": (137 * m, 9973 * m),
        "modulus": (137 * m, 9973 * m),
        "exponent": (max(10, m // 8), max(30, m // 3)),
    }


def _modpow_generate(rng: np.random.Generator, m: int) -> Params:
    r = _modpow_ranges(m)
    base = _randint(rng, *r["base"])
    exponent = _randint(rng, *r["exponent"])
    modulus = _randint(rng, *r["modulus"])
    return {"base": base, "exponent": exponent, "modulus": modulus}


def _modpow_solve(p: Params) -> int:
    return pow(p["base"], p["exponent"], p["modulus"])


def _modpow_describe(p: Params) -> str:
    return (
        "Modular exponentiation. Compute base^exponent mod modulus "
        f"(base = {p['base']}, exponent = {p['exponent']}, modulus = {p['modulus']})."
    )


_MODPOW_CODE = """\
def solve(inputs: dict) -> int:
    if "BASE" in inputs:  # the paper's names
        inputs = {"base": inputs["BASE"], "exponent": inputs["EXP"], "modulus": inputs["MOD"]}
    base = inputs["base"] % inputs["modulus"]
    exponent = inputs["exponent"]
    modulus = inputs["modulus"]
    result = 1 % modulus
    while exponent > 0:
        if exponent % 2 == 1:
            result = (result * base) % modulus
        base = (base * base) % modulus
        exponent //= 2
    return result
"""

# --------------------------------------------------------------------------- continued_frac


def _cf_ranges(m: int) -> dict[str, tuple[int, int]]:
    return {"n_terms": (3, 4), "term": (11 * m, 120 * m)}


def _cf_generate(rng: np.random.Generator, m: int) -> Params:
    r = _cf_ranges(m)
    n = _randint(rng, *r["n_terms"])
    return {"terms": [_randint(rng, *r["term"]) for _ in range(n)]}


def _cf_solve(p: Params) -> int:
    terms = p["terms"]
    value = Fraction(terms[-1])
    for a in reversed(terms[:-1]):
        value = a + 1 / value
    return value.numerator


def _cf_describe(p: Params) -> str:
    return (
        "Continued fraction. Evaluate the finite simple continued fraction "
        "[a0; a1, ..., ak] = a0 + 1/(a1 + 1/(... + 1/ak)) with terms "
        f"{p['terms']} as a fraction in lowest terms, and report its numerator."
    )


_CF_CODE = """\
def solve(inputs: dict) -> int:
    # Convergent recurrence: h_n = a_n * h_(n-1) + h_(n-2), with h_(-1) = 1, h_(-2) = 0.
    h_prev2, h_prev1 = 0, 1
    for a in inputs["terms"] if "terms" in inputs else inputs["TERMS"]:
        h_prev2, h_prev1 = h_prev1, a * h_prev1 + h_prev2
    return h_prev1
"""

# --------------------------------------------------------------------------- crt_solve

_CRT_PRIME_RANGE = (101, 3000)


def _primes_between(lo: int, hi: int) -> tuple[int, ...]:
    sieve = bytearray([1]) * (hi + 1)
    sieve[0:2] = b"\x00\x00"
    for i in range(2, math.isqrt(hi) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return tuple(i for i in range(lo, hi + 1) if sieve[i])


_CRT_PRIMES = _primes_between(*_CRT_PRIME_RANGE)


def _crt_ranges(m: int) -> dict[str, tuple[int, int]]:
    """The paper's ``_crt_sampler``: 4–5 congruences at m = 100, one more per 300 above it."""
    lo = 4 + max(0, (m - 100) // 300)
    return {"n_primes": (lo, min(lo + 1, len(_CRT_PRIMES))), "prime": _CRT_PRIME_RANGE}


def _crt_generate(rng: np.random.Generator, m: int) -> Params:
    n = _randint(rng, *_crt_ranges(m)["n_primes"])
    idx = rng.choice(len(_CRT_PRIMES), size=n, replace=False)
    primes = [int(_CRT_PRIMES[i]) for i in idx]
    residues = [_randint(rng, 0, p - 1) for p in primes]
    return {"moduli": primes, "residues": residues}


def _crt_solve(p: Params) -> int:
    x, step = 0, 1
    for r, q in zip(p["residues"], p["moduli"], strict=True):
        # Solve x + step*j ≡ r (mod q) for j using the inverse of step mod q.
        j = ((r - x) * pow(step, -1, q)) % q
        x, step = x + step * j, step * q
    return x % step


def _crt_describe(p: Params) -> str:
    pairs = ", ".join(f"x ≡ {r} (mod {q})" for r, q in zip(p["residues"], p["moduli"], strict=True))
    return (
        "Chinese remainder theorem. The moduli are distinct primes. Find the smallest "
        f"non-negative integer x satisfying all of: {pairs}."
    )


_CRT_CODE = """\
def solve(inputs: dict) -> int:
    if "MODULI" in inputs:  # the paper's names
        inputs = {"residues": inputs["REMAINDERS"], "moduli": inputs["MODULI"]}
    x, step = 0, 1
    for r, q in zip(inputs["residues"], inputs["moduli"]):
        while x % q != r % q:
            x += step
        step *= q
    return x
"""

# --------------------------------------------------------------------------- josephus


def _josephus_ranges(m: int) -> dict[str, tuple[int, int]]:
    # the paper's _josephus_sampler: [max(10, int(0.8 m)), max(20, int(2 m))]
    return {"n": (max(10, (4 * m) // 5), max(20, 2 * m)), "k": (3, 9)}


def _josephus_generate(rng: np.random.Generator, m: int) -> Params:
    r = _josephus_ranges(m)
    return {"n": _randint(rng, *r["n"]), "k": _randint(rng, *r["k"])}


def _josephus_solve(p: Params) -> int:
    pos = 0  # 0-based survivor for a circle of 1
    for size in range(2, p["n"] + 1):
        pos = (pos + p["k"]) % size
    return pos + 1


def _josephus_describe(p: Params) -> str:
    return (
        f"Josephus problem. n = {p['n']} people numbered 1 to n stand in a circle. Counting "
        "starts at person 1; every k-th person counted leaves the circle "
        f"(k = {p['k']}) and counting resumes with the next person still present. Report "
        "the 1-based number of the last person remaining (for n = 7, k = 3 it is 4)."
    )


_JOSEPHUS_CODE = """\
def solve(inputs: dict) -> int:
    if "N" in inputs:  # the paper's names
        inputs = {"n": inputs["N"], "k": inputs["K"]}
    people = list(range(1, inputs["n"] + 1))
    index = 0
    while len(people) > 1:
        index = (index + inputs["k"] - 1) % len(people)
        people.pop(index)
    return people[0]
"""

# --------------------------------------------------------------------------- quadratic_map_mod


def _qmap_ranges(m: int) -> dict[str, tuple[int, int]]:
    """The paper's ``_quadmap_sampler``: x0, c and modulus each ``_scale(m)`` = [137m, 9973m],
    drawn independently (x0 and c may exceed the modulus), steps in [15, 30]."""
    scale = (137 * m, 9973 * m)
    return {"x0": scale, "c": scale, "modulus": scale, "steps": (15, 30)}


def _qmap_generate(rng: np.random.Generator, m: int) -> Params:
    r = _qmap_ranges(m)
    return {k: _randint(rng, *r[k]) for k in ("x0", "c", "modulus", "steps")}


def _qmap_solve(p: Params) -> int:
    # Exact big-integer arithmetic, reducing only when needed keeps this independent
    # of the reference code's order of operations.
    x = p["x0"]
    for _ in range(p["steps"]):
        x = x * x + p["c"]
        x -= (x // p["modulus"]) * p["modulus"]
    return x


def _qmap_describe(p: Params) -> str:
    return (
        "Quadratic map. Start from x = x0 and apply x <- (x*x + c) mod modulus exactly "
        f"`steps` times. Report the final x (x0 = {p['x0']}, c = {p['c']}, "
        f"modulus = {p['modulus']}, steps = {p['steps']})."
    )


_QMAP_CODE = """\
def solve(inputs: dict) -> int:
    if "MOD" in inputs:  # the paper's names
        inputs = {"x0": inputs["X"], "c": inputs["C"], "modulus": inputs["MOD"],
                  "steps": inputs["K"]}
    x = inputs["x0"] % inputs["modulus"]
    for _ in range(inputs["steps"]):
        x = (x * x + inputs["c"]) % inputs["modulus"]
    return x
"""

# --------------------------------------------------------------------------- xorshift_steps

_MASK32 = 0xFFFF_FFFF


def _xorshift_ranges(m: int) -> dict[str, tuple[int, int]]:
    # the paper's _xorshift_sampler: the seed is at least 2^20
    return {"seed": (1 << 20, _MASK32), "steps": (12, 25)}


def _xorshift_generate(rng: np.random.Generator, m: int) -> Params:
    return {
        "seed": _randint(rng, *_xorshift_ranges(m)["seed"]),
        "a": int(rng.choice([11, 13])),
        "b": int(rng.choice([7, 9])),
        "c": int(rng.choice([15, 17])),
        "steps": _randint(rng, 12, 25),
    }


def _xorshift_solve(p: Params) -> int:
    # numpy uint32 arithmetic wraps at 32 bits by itself: an independent check of the
    # reference code's explicit masking.
    x = np.uint32(p["seed"])
    a, b, c = np.uint32(p["a"]), np.uint32(p["b"]), np.uint32(p["c"])
    for _ in range(p["steps"]):
        x ^= x << a
        x ^= x >> b
        x ^= x << c
    return int(x)


def _xorshift_describe(p: Params) -> str:
    return (
        "Xorshift generator on a 32-bit unsigned state. Start from x = seed; one step is "
        "x ^= (x << a); x ^= (x >> b); x ^= (x << c), where every result is truncated to "
        "its low 32 bits (x & 0xFFFFFFFF) and >> is a logical shift. Apply exactly `steps` "
        f"steps and report the final state as an unsigned integer (seed = {p['seed']}, "
        f"a = {p['a']}, b = {p['b']}, c = {p['c']}, steps = {p['steps']})."
    )


_XORSHIFT_CODE = """\
def solve(inputs: dict) -> int:
    if "X" in inputs:  # the paper's names
        inputs = {"seed": inputs["X"], "a": inputs["A"], "b": inputs["B"], "c": inputs["C"],
                  "steps": inputs["K"]}
    mask = 0xFFFFFFFF
    x = inputs["seed"] & mask
    for _ in range(inputs["steps"]):
        x ^= (x << inputs["a"]) & mask
        x ^= x >> inputs["b"]
        x ^= (x << inputs["c"]) & mask
    return x
"""

# --------------------------------------------------------------------------- matrix_power_mod


def _matrix_ranges(m: int) -> dict[str, tuple[int, int]]:
    return {"entry": (2, 40), "power": (25, 45), "modulus": (137 * m, 9973 * m)}


def _matrix_generate(rng: np.random.Generator, m: int) -> Params:
    r = _matrix_ranges(m)
    return {
        "matrix": [[_randint(rng, *r["entry"]) for _ in range(2)] for _ in range(2)],
        "power": _randint(rng, *r["power"]),
        "modulus": _randint(rng, *r["modulus"]),
    }


def _matrix_solve(p: Params) -> int:
    # Exact (unreduced) powers by repeated multiplication; reduce only the final sum.
    a = p["matrix"]
    result = [[1, 0], [0, 1]]
    for _ in range(p["power"]):
        result = [
            [sum(result[i][k] * a[k][j] for k in range(2)) for j in range(2)] for i in range(2)
        ]
    return sum(sum(row) for row in result) % p["modulus"]


def _matrix_describe(p: Params) -> str:
    return (
        f"Matrix power modulo M. Let A be the 2x2 matrix {p['matrix']} (rows). Compute "
        f"A^power (power = {p['power']}) and report the sum of its four entries modulo "
        f"modulus = {p['modulus']}, i.e. a number between 0 and modulus - 1 (reducing the "
        "entries modulo modulus along the way gives the same result)."
    )


_MATRIX_CODE = """\
def solve(inputs: dict) -> int:
    if "MOD" in inputs:  # the paper's names
        inputs = {"matrix": [[inputs["A"], inputs["B"]], [inputs["C"], inputs["D"]]],
                  "power": inputs["K"], "modulus": inputs["MOD"]}
    mod = inputs["modulus"]

    def mul(x, y):
        return [
            [(x[0][0] * y[0][0] + x[0][1] * y[1][0]) % mod,
             (x[0][0] * y[0][1] + x[0][1] * y[1][1]) % mod],
            [(x[1][0] * y[0][0] + x[1][1] * y[1][0]) % mod,
             (x[1][0] * y[0][1] + x[1][1] * y[1][1]) % mod],
        ]

    result = [[1 % mod, 0], [0, 1 % mod]]
    base = [[v % mod for v in row] for row in inputs["matrix"]]
    power = inputs["power"]
    while power > 0:
        if power & 1:
            result = mul(result, base)
        base = mul(base, base)
        power >>= 1
    return (sum(result[0]) + sum(result[1])) % mod
"""

# --------------------------------------------------------------------------- registry

FAMILIES: tuple[Family, ...] = (
    Family(
        name="lcg",
        title="Linear congruential generator",
        cover_story=(
            "Every night the ticketing system issues a batch of reference numbers from a "
            "linear congruential generator, and auditors ask which number a given batch "
            "ended on."
        ),
        reference_code=_LCG_CODE,
        ranges=_lcg_ranges,
        _generate=_lcg_generate,
        _solve=_lcg_solve,
        _describe=_lcg_describe,
    ),
    Family(
        name="modpow",
        title="Modular exponentiation",
        cover_story=(
            "The licensing desk verifies customer activation codes, each of which requires "
            "raising a number to a power modulo the product's key modulus."
        ),
        reference_code=_MODPOW_CODE,
        ranges=_modpow_ranges,
        _generate=_modpow_generate,
        _solve=_modpow_solve,
        _describe=_modpow_describe,
    ),
    Family(
        name="continued_frac",
        title="Continued fraction numerator",
        cover_story=(
            "The gearing workshop receives gear-ratio orders written as continued "
            "fractions and must quote the tooth count of the driving gear, the numerator "
            "of the reduced ratio."
        ),
        reference_code=_CF_CODE,
        ranges=_cf_ranges,
        _generate=_cf_generate,
        _solve=_cf_solve,
        _describe=_cf_describe,
    ),
    Family(
        name="crt_solve",
        title="Chinese remainder system",
        cover_story=(
            "Logistics reconciles shipment counts reported only as remainders by several "
            "scanners with prime-sized bins, and must recover the smallest consistent count."
        ),
        reference_code=_CRT_CODE,
        ranges=_crt_ranges,
        _generate=_crt_generate,
        _solve=_crt_solve,
        _describe=_crt_describe,
    ),
    Family(
        name="josephus",
        title="Josephus elimination",
        cover_story=(
            "The team-building office runs elimination raffles around a circle of "
            "employees and must announce in advance who will be the last one standing."
        ),
        reference_code=_JOSEPHUS_CODE,
        ranges=_josephus_ranges,
        _generate=_josephus_generate,
        _solve=_josephus_solve,
        _describe=_josephus_describe,
    ),
    Family(
        name="quadratic_map_mod",
        title="Quadratic map modulo M",
        cover_story=(
            "A legacy loyalty-card system scrambles member numbers by repeatedly squaring "
            "and adding a constant modulo its card range; support staff must predict the "
            "scrambled number."
        ),
        reference_code=_QMAP_CODE,
        ranges=_qmap_ranges,
        _generate=_qmap_generate,
        _solve=_qmap_solve,
        _describe=_qmap_describe,
    ),
    Family(
        name="xorshift_steps",
        title="Xorshift state",
        cover_story=(
            "The game studio's replay system stores only an xorshift seed; QA must "
            "reproduce the 32-bit random state after a given number of steps."
        ),
        reference_code=_XORSHIFT_CODE,
        ranges=_xorshift_ranges,
        _generate=_xorshift_generate,
        _solve=_xorshift_solve,
        _describe=_xorshift_describe,
    ),
    Family(
        name="matrix_power_mod",
        title="Matrix power checksum",
        cover_story=(
            "The population-planning team projects two linked cohorts forward with a 2x2 "
            "transition matrix and files a checksum of the projection modulo the ledger "
            "modulus."
        ),
        reference_code=_MATRIX_CODE,
        ranges=_matrix_ranges,
        _generate=_matrix_generate,
        _solve=_matrix_solve,
        _describe=_matrix_describe,
    ),
)

FAMILY_NAMES: tuple[str, ...] = tuple(f.name for f in FAMILIES)
_BY_NAME: dict[str, Family] = {f.name: f for f in FAMILIES}

# --------------------------------------------------------------------------- the paper's names

PAPER_KEYS: dict[str, tuple[str, ...]] = {
    "lcg": ("SEED", "A", "B", "M", "K"),
    "modpow": ("BASE", "EXP", "MOD"),
    "continued_frac": ("TERMS",),
    "crt_solve": ("REMAINDERS", "MODULI"),
    "josephus": ("N", "K"),
    "quadratic_map_mod": ("X", "C", "MOD", "K"),
    "xorshift_steps": ("X", "A", "B", "C", "K"),
    "matrix_power_mod": ("A", "B", "C", "D", "MOD", "K"),
}
"""Each family's parameters as the paper's ``family_kit`` names them (its ``arg_names``), in
its order: the keys of the named values R3 shows and passes to scripts."""

_PAPER_TO_PARAMS: dict[str, dict[str, str]] = {
    "lcg": {"x0": "SEED", "a": "A", "b": "B", "modulus": "M", "steps": "K"},
    "modpow": {"base": "BASE", "exponent": "EXP", "modulus": "MOD"},
    "continued_frac": {"terms": "TERMS"},
    "crt_solve": {"moduli": "MODULI", "residues": "REMAINDERS"},
    "josephus": {"n": "N", "k": "K"},
    "quadratic_map_mod": {"x0": "X", "c": "C", "modulus": "MOD", "steps": "K"},
    "xorshift_steps": {"seed": "X", "a": "A", "b": "B", "c": "C", "steps": "K"},
}
"""econbench's parameter (in econbench's order) -> the paper's name (``matrix_power_mod``
apart: its four entries are one ``matrix`` here)."""


def params_from_named(family: str, named: Params) -> Params:
    """econbench's ``params`` (its names, its order) of the paper's named values ``named``."""
    if set(named) != set(PAPER_KEYS[family]):
        raise ValueError(f"{family} named values must be {PAPER_KEYS[family]}, got {list(named)}")
    if family == "matrix_power_mod":
        matrix = [[named["A"], named["B"]], [named["C"], named["D"]]]
        return {"matrix": matrix, "power": named["K"], "modulus": named["MOD"]}
    return {ours: named[theirs] for ours, theirs in _PAPER_TO_PARAMS[family].items()}


def named_from_params(family: str, params: Params) -> Params:
    """The paper's named values (its names, its order) of econbench's ``params``."""
    if family == "matrix_power_mod":
        (a, b), (c, d) = params["matrix"]
        values = {"A": a, "B": b, "C": c, "D": d, "MOD": params["modulus"], "K": params["power"]}
    else:
        values = {theirs: params[ours] for ours, theirs in _PAPER_TO_PARAMS[family].items()}
    return {k: values[k] for k in PAPER_KEYS[family]}


def get_family(name: str) -> Family:
    """The family called ``name`` (raises KeyError with the valid names)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; expected one of {FAMILY_NAMES}") from None


def family_for_class(cls: int) -> Family:
    """Class id ``cls`` uses ``FAMILIES[cls % 8]``."""
    if cls < 0:
        raise ValueError("class ids are non-negative")
    return FAMILIES[cls % len(FAMILIES)]


def instance_for(seed: int, t: int, cls: int, m: int = DEFAULT_MAGNITUDE) -> Instance:
    """Fresh, deterministic parameters and answer for class ``cls`` at turn ``t``."""
    if seed < 0 or t < 0 or cls < 0:
        raise ValueError("seed, t and cls must be non-negative")
    family = family_for_class(cls)
    rng = np.random.default_rng([seed, t, cls, SALT])
    params = family.generate(rng, m)
    return Instance(family=family.name, params=params, answer=family.solve(params))
