"""An episode's problem instances, one per turn: the paper's draws (default) or econbench's.

``episode_instances(stream, generator=..., profile=..., magnitude=...)`` gives the instance of
every turn of ``stream`` (``Instance`` of ``econbench.allo.game.families``: family, econbench-named
``params``, exact ``answer``, the ``cover`` index the occurrence shows and, for the paper's
instances, the paper's ``named_values``). Deterministic, and cached per (stream, options).

``generator="paper"`` draws exactly what the paper's ``stream_builder.build_stochastic_stream``
draws (``scripts/session/stream_builder.py`` and ``scripts/theory/family_kit.py``). The paper
makes everything of an episode with ONE ``random.Random(seed)``: the stream (role shuffle,
early-trap coin, candidate streams, the fallback; ``econbench.allo.game.stream``, ``generator=
"paper"``), then, continuing the same generator, the instances: class by class in order of
first appearance in the stream, all occurrences of a class in a row, each occurrence = the
family sampler's draws followed by ``choice`` over the family's covers (``Family.make_member``).
The samplers, with ``scale(m)`` = ``randint(137 m, 9973 m)``, draw in this order:

- ``lcg``: SEED ``randint(50, 300)``; A ``randint(2, ahi) * m``; B ``randint(1, ahi) * m``;
  M ``randint(mlo, mhi) * m``; K ``randint(klo, khi)``, with (ahi, mlo, mhi, klo, khi) =
  (30, 300, 1200, 6, 12), "sonnet" (300, 10000, 80000, 16, 26), "opus" (900, 50000, 400000,
  22, 32).
- ``modpow``: BASE ``scale(m)``; EXP ``randint(max(10, m // 8), max(30, m // 3))``;
  MOD ``scale(m)``.
- ``continued_frac``: the number of terms ``randint(nlo, nhi)``, then each term
  ``randint(tlo m, thi m)``, with (tlo, thi, nlo, nhi) = (11, 120, 3, 4), "sonnet" (200, 900,
  6, 7), "opus" (400, 2000, 7, 9).
- ``crt_solve``: lo = 4 + max(0, (m - 100) // 300), hi = min(lo + 1, 405) (405 primes in
  [101, 2999]); n = ``randint(lo, hi)`` if hi > lo else hi; MODULI = ``sample(primes, n)``;
  REMAINDERS ``randint(0, p - 1)`` for each modulus in order.
- ``josephus``: N ``randint(max(10, int(0.8 m)), max(20, int(2.0 m)))``; K ``randint(3, 9)``.
- ``quadratic_map_mod``: X, C, MOD each ``scale(m)``; K ``randint(15, 30)``.
- ``xorshift_steps``: X ``randint(2^20, 2^32 - 1)``; A ``choice([11, 13])``;
  B ``choice([7, 9])``; C ``choice([15, 17])``; K ``randint(12, 25)``.
- ``matrix_power_mod``: A, B, C, D each ``randint(2, 40)``; MOD ``scale(m)``;
  K ``randint(25, 45)``.

The cover is ``choice`` over the family's covers in the paper's order (three for lcg and
modpow, two for the others; ``prompts/solver_covers.toml`` lists them in that order).

``profile`` is the paper's per-model difficulty profile (``family_kit.set_profile``): only
``arm_a1_announce`` (R3) sets it, from ``--model``, and it is "opus" or "sonnet" only for those
exact model keys, "haiku" for every other model (R0–R2 never set it: always "haiku"). Of the
eight families only lcg and continued_frac have branches for it; a different profile changes
their draws and so every later draw of the episode. ``magnitude`` is the paper's ``MAG``: 100
everywhere except ``arm_a1_announce`` with ``--model opus`` (1000 unless ``--magnitude``;
the stored Opus R3 run is ``--canonical-structure --magnitude 100``). Not reproduced: the
paper's Opus R3 without ``--canonical-structure``, which pins josephus as a forced last trap
(a stream of another shape, not this module's business).

The instance draw continues the generator state right after the paper's stream draw for the
stream's (seed, config), whatever generator drew the stream. For a stream the paper's
generator drew, that is exactly the paper's episode; for any other stream (numpy, or built by
hand) the same procedure runs over that stream's classes, from that state: deterministic, the
paper's distributions, not an episode the paper ran.

``generator="econbench"`` is econbench's earlier generator, unchanged: ``families.instance_for
(seed, t, cls, magnitude)`` and the cover ``covers.cover_index(seed, t, cls)``; no named values.
Protocol ``"econbench"`` uses it, so its texts and records stay as they were.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from econbench.allo.framings.covers import cover_index, covers
from econbench.allo.game.families import (
    DEFAULT_MAGNITUDE,
    PAPER_KEYS,
    Instance,
    Params,
    family_for_class,
    get_family,
    instance_for,
    params_from_named,
)
from econbench.allo.game.stream import Stream, paper_draw

GENERATORS: tuple[str, ...] = ("paper", "econbench")
"""The instance generators: the paper's draws (default) and econbench's earlier ones."""
PROFILES: tuple[str, ...] = ("haiku", "sonnet", "opus")
"""The paper's difficulty profiles (``family_kit._PROFILES``)."""
DEFAULT_GENERATOR = "paper"
DEFAULT_PROFILE = "haiku"

_LCG = {"sonnet": (300, 10000, 80000, 16, 26), "opus": (900, 50000, 400000, 22, 32)}
_LCG_HAIKU = (30, 300, 1200, 6, 12)
_CFRAC = {"sonnet": (200, 900, 6, 7), "opus": (400, 2000, 7, 9)}
_CFRAC_HAIKU = (11, 120, 3, 4)
_PRIMES = [p for p in range(101, 3000) if all(p % d for d in range(2, int(p**0.5) + 1))]
"""The paper's ``_CRT_PRIMES`` (a list: ``Random.sample`` draws by position)."""


def _scale(rng: random.Random, m: int) -> int:
    return rng.randint(137 * m, 9973 * m)


def _lcg(rng: random.Random, m: int, profile: str) -> Params:
    ahi, mlo, mhi, klo, khi = _LCG.get(profile, _LCG_HAIKU)
    return {
        "SEED": rng.randint(50, 300),
        "A": rng.randint(2, ahi) * m,
        "B": rng.randint(1, ahi) * m,
        "M": rng.randint(mlo, mhi) * m,
        "K": rng.randint(klo, khi),
    }


def _modpow(rng: random.Random, m: int, profile: str) -> Params:
    base = _scale(rng, m)
    exp = rng.randint(max(10, m // 8), max(30, m // 3))
    return {"BASE": base, "EXP": exp, "MOD": _scale(rng, m)}


def _cfrac(rng: random.Random, m: int, profile: str) -> Params:
    tlo, thi, nlo, nhi = _CFRAC.get(profile, _CFRAC_HAIKU)
    n = rng.randint(nlo, nhi)
    return {"TERMS": [rng.randint(tlo * m, thi * m) for _ in range(n)]}


def _crt(rng: random.Random, m: int, profile: str) -> Params:
    lo = 4 + max(0, (m - 100) // 300)
    hi = min(lo + 1, len(_PRIMES))
    n = rng.randint(lo, hi) if hi > lo else hi
    moduli = rng.sample(_PRIMES, n)
    return {"REMAINDERS": [rng.randint(0, q - 1) for q in moduli], "MODULI": moduli}


def _josephus(rng: random.Random, m: int, profile: str) -> Params:
    n = rng.randint(max(10, int(0.8 * m)), max(20, int(2.0 * m)))
    return {"N": n, "K": rng.randint(3, 9)}


def _qmap(rng: random.Random, m: int, profile: str) -> Params:
    x, c, mod = _scale(rng, m), _scale(rng, m), _scale(rng, m)
    return {"X": x, "C": c, "MOD": mod, "K": rng.randint(15, 30)}


def _xorshift(rng: random.Random, m: int, profile: str) -> Params:
    x = rng.randint(1 << 20, (1 << 32) - 1)
    a, b, c = rng.choice([11, 13]), rng.choice([7, 9]), rng.choice([15, 17])
    return {"X": x, "A": a, "B": b, "C": c, "K": rng.randint(12, 25)}


def _matrix(rng: random.Random, m: int, profile: str) -> Params:
    a, b, c, d = (rng.randint(2, 40) for _ in range(4))
    return {"A": a, "B": b, "C": c, "D": d, "MOD": _scale(rng, m), "K": rng.randint(25, 45)}


PAPER_SAMPLERS: dict[str, Callable[[random.Random, int, str], Params]] = {
    "lcg": _lcg,
    "modpow": _modpow,
    "continued_frac": _cfrac,
    "crt_solve": _crt,
    "josephus": _josephus,
    "quadratic_map_mod": _qmap,
    "xorshift_steps": _xorshift,
    "matrix_power_mod": _matrix,
}
"""The paper's ``family_kit`` samplers, draw for draw, returning its named values."""


def paper_member(family: str, rng: random.Random, magnitude: int, profile: str) -> Instance:
    """One occurrence as the paper's ``Family.make_member`` draws it: the sampler, then the
    cover (``choice`` over the family's covers)."""
    named = PAPER_SAMPLERS[family](rng, magnitude, profile)
    named = {k: named[k] for k in PAPER_KEYS[family]}  # the paper's inputs: arg_names order
    cover = rng.choice(range(len(covers()[family])))
    params = params_from_named(family, named)
    answer = get_family(family).solve(params)
    return Instance(family=family, params=params, answer=answer, cover=cover, named_values=named)


def check_options(generator: str, profile: str, magnitude: int) -> None:
    """``ValueError`` with a one-line reason unless the options are valid."""
    if generator not in GENERATORS:
        raise ValueError(f"instances must be one of {', '.join(GENERATORS)}, got {generator!r}")
    if profile not in PROFILES:
        raise ValueError(f"instance_profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    if generator == "econbench" and profile != DEFAULT_PROFILE:
        raise ValueError("instance_profile applies to instances 'paper' only")
    if isinstance(magnitude, bool) or not isinstance(magnitude, int) or magnitude < 1:
        raise ValueError(f"magnitude must be an integer >= 1, got {magnitude!r}")


def episode_instances(
    stream: Stream,
    *,
    generator: str = DEFAULT_GENERATOR,
    profile: str = DEFAULT_PROFILE,
    magnitude: int = DEFAULT_MAGNITUDE,
) -> tuple[Instance, ...]:
    """The instance of every turn of ``stream`` (index = turn), drawn by ``generator``. The
    tuple is cached and shared: treat the instances' dicts as read-only."""
    check_options(generator, profile, magnitude)
    return _instances(stream, generator, profile, magnitude)


@lru_cache(maxsize=512)
def _instances(stream: Stream, generator: str, profile: str, m: int) -> tuple[Instance, ...]:
    if generator == "econbench":
        return tuple(_econbench(stream.seed, t, cls, m) for t, cls in enumerate(stream.classes))
    _, rng = paper_draw(stream.seed, stream.config)
    members: dict[int, list[Instance]] = {}
    for cls in dict.fromkeys(stream.classes):  # classes in order of first appearance
        family = family_for_class(cls).name
        n = stream.classes.count(cls)
        members[cls] = [paper_member(family, rng, m, profile) for _ in range(n)]
    seen: dict[int, int] = {}
    out = []
    for cls in stream.classes:
        out.append(members[cls][seen.get(cls, 0)])
        seen[cls] = seen.get(cls, 0) + 1
    return tuple(out)


def _econbench(seed: int, t: int, cls: int, m: int) -> Instance:
    inst = instance_for(seed, t, cls, m)
    return Instance(inst.family, inst.params, inst.answer, cover=cover_index(seed, t, cls))


def resolve_options(
    protocol: str,
    instances: str | None = None,
    instance_profile: str = DEFAULT_PROFILE,
    magnitude: int = DEFAULT_MAGNITUDE,
) -> tuple[str, str, int]:
    """A framing constructor's ``(instances, instance_profile, magnitude)``, checked
    (``ValueError``), ``instances=None`` resolved by ``protocol``: ``"econbench"`` under protocol
    ``"econbench"`` (its texts and records unchanged), else the paper's."""
    if instances is None:
        instances = "econbench" if protocol == "econbench" else DEFAULT_GENERATOR
    check_options(instances, instance_profile, magnitude)
    return instances, instance_profile, magnitude


def set_instance_options(
    framing: Any,
    protocol: str,
    instances: str | None = None,
    instance_profile: str = DEFAULT_PROFILE,
    magnitude: int = DEFAULT_MAGNITUDE,
) -> None:
    """Check a framing constructor's instance options and set them on ``framing``
    (``instances``, ``instance_profile``, ``magnitude``). Protocol ``"econbench"`` keeps
    econbench's own instances only, so its texts and records stay as they were."""
    if protocol == "econbench" and (
        instances not in (None, "econbench")
        or instance_profile != DEFAULT_PROFILE
        or magnitude != DEFAULT_MAGNITUDE
    ):
        raise ValueError("instance options apply to protocol 'paper' only")
    framing.instances, framing.instance_profile, framing.magnitude = resolve_options(
        protocol, instances, instance_profile, magnitude
    )


def describe_instance_options(framing: Any) -> dict[str, Any]:
    """The instance options of ``framing`` that differ from its protocol's defaults (a config
    records them; the defaults are left out, so earlier configs read the same)."""
    options = framing_options(framing)
    default_generator = "econbench" if framing.protocol == "econbench" else DEFAULT_GENERATOR
    defaults = {
        "generator": default_generator,
        "profile": DEFAULT_PROFILE,
        "magnitude": DEFAULT_MAGNITUDE,
    }
    names = {"generator": "instances", "profile": "instance_profile", "magnitude": "magnitude"}
    return {names[k]: v for k, v in options.items() if v != defaults[k]}


def framing_options(framing: Any) -> dict[str, Any]:
    """The instance options a framing carries (``instances``, ``instance_profile``,
    ``magnitude``); a framing without them, or with ``instances=None``, gets the defaults of
    its protocol: the paper's instances, but econbench's under protocol ``"econbench"``."""
    generator = getattr(framing, "instances", None)
    if generator is None:
        protocol = getattr(framing, "protocol", "paper")
        generator = "econbench" if protocol == "econbench" else DEFAULT_GENERATOR
    profile = getattr(framing, "instance_profile", None)
    magnitude = getattr(framing, "magnitude", None)
    return {
        "generator": generator,
        "profile": DEFAULT_PROFILE if profile is None else profile,
        "magnitude": DEFAULT_MAGNITUDE if magnitude is None else magnitude,
    }


def framing_instances(framing: Any, stream: Stream) -> tuple[Instance, ...]:
    """``episode_instances`` of ``stream`` with the options of ``framing``."""
    return episode_instances(stream, **framing_options(framing))
