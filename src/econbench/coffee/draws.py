"""Seeded draws bit-identical to ``numpy.random.default_rng(entropy)``, without numpy.

The economy needs a handful of seeded draws per run, and importing numpy for them costs more
CPU than a scripted run's economy itself. ``Draws(entropy)`` replays numpy's published
algorithms in plain Python: ``SeedSequence`` entropy pooling seeds a PCG64 generator (128-bit
LCG, XSL-RR output), and ``random``, ``uniform`` and ``normal`` (the 256-layer ziggurat,
tables in ``_ziggurat_tables``) transform its 64-bit words exactly as numpy's ``Generator``
does, so every float equals numpy's. ``tests/coffee/test_draws.py`` holds it to that.
"""

from __future__ import annotations

import math
from operator import index
from typing import TYPE_CHECKING

from econbench.coffee._ziggurat_tables import FI, INV_R, KI, WI, R

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Draws"]

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_MASK128 = (1 << 128) - 1
_POOL_SIZE = 4
_XSHIFT = 16

# SeedSequence's hash constants.
_INIT_A = 0x43B0D7E5
_MULT_A = 0x931E8875
_INIT_B = 0x8B51F9DD
_MULT_B = 0x58F38DED
_MIX_MULT_L = 0xCA01F9DD
_MIX_MULT_R = 0x4973F715

_PCG_MULTIPLIER = (2549297995355413924 << 64) + 4865540595714422341
_DOUBLE_UNIT = 1.0 / 9007199254740992.0  # 2**-53
_MANTISSA = 0x000FFFFFFFFFFFFF


def _entropy_words(entropy: int | Sequence[int]) -> list[int]:
    """The entropy as numpy's uint32 words: each integer split lowest word first, 0 as [0]."""
    numbers = [entropy] if isinstance(entropy, int) else entropy
    words: list[int] = []
    for number in numbers:
        n = index(number)
        if n < 0:
            raise ValueError("expected non-negative integer")
        words.append(n & _MASK32)
        n >>= 32
        while n:
            words.append(n & _MASK32)
            n >>= 32
    return words


def _hash_steps(count: int, init: int, mult: int) -> list[tuple[int, int]]:
    """The (xor, multiplier) pair of each of ``count`` successive hashes: SeedSequence's
    hash constant advances by the same multiplication whatever it hashes, so the pairs are
    fixed."""
    steps = []
    const = init
    for _ in range(count):
        nxt = (const * mult) & _MASK32
        steps.append((const, nxt))
        const = nxt
    return steps


_MIX_STEPS = _hash_steps(2 * _POOL_SIZE * _POOL_SIZE, _INIT_A, _MULT_A)  # up to 8 words
_STATE_STEPS = _hash_steps(8, _INIT_B, _MULT_B)  # PCG64 asks for 4 uint64 = 8 uint32 words
_CROSS = [(src, dst) for src in range(_POOL_SIZE) for dst in range(_POOL_SIZE) if src != dst]


def _hash(value: int, step: tuple[int, int]) -> int:
    xor, mult = step
    value = ((value ^ xor) * mult) & _MASK32
    return value ^ (value >> _XSHIFT)


def _mix(x: int, y: int) -> int:
    result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _MASK32
    return result ^ (result >> _XSHIFT)


def _pool(words: list[int]) -> list[int]:
    """SeedSequence's ``mix_entropy``: hash the words into a pool of four, then mix every
    pool word into every other and any words beyond the fourth into all four."""
    needed = _POOL_SIZE * _POOL_SIZE + _POOL_SIZE * max(0, len(words) - _POOL_SIZE)
    steps = iter(_MIX_STEPS if needed <= len(_MIX_STEPS) else _hash_steps(needed, _INIT_A, _MULT_A))
    pool = [_hash(words[i] if i < len(words) else 0, next(steps)) for i in range(_POOL_SIZE)]
    for src, dst in _CROSS:
        pool[dst] = _mix(pool[dst], _hash(pool[src], next(steps)))
    for word in words[_POOL_SIZE:]:
        for dst in range(_POOL_SIZE):
            pool[dst] = _mix(pool[dst], _hash(word, next(steps)))
    return pool


def _state_words(pool: list[int]) -> list[int]:
    """SeedSequence's ``generate_state(8, uint32)``: the pool, cycled and hashed."""
    return [_hash(pool[i % _POOL_SIZE], step) for i, step in enumerate(_STATE_STEPS)]


class Draws:
    """The stream of ``numpy.random.default_rng(entropy)`` (SeedSequence → PCG64 →
    Generator) for a non-negative integer or a sequence of them; only the draws the economy
    makes, each returning the very float numpy would."""

    __slots__ = ("_inc", "_state")

    def __init__(self, entropy: int | Sequence[int]) -> None:
        w = _state_words(_pool(_entropy_words(entropy)))
        # generate_state(4, uint64) pairs words little-endian: (seed high, seed low, inc
        # high, inc low) as PCG64 reads them.
        seed = ((w[0] | w[1] << 32) << 64) | w[2] | w[3] << 32
        seq = ((w[4] | w[5] << 32) << 64) | w[6] | w[7] << 32
        # pcg64_srandom_r: one step from state 0 lands on inc; add the seed; step again.
        self._inc = ((seq << 1) | 1) & _MASK128
        self._state = ((self._inc + seed) * _PCG_MULTIPLIER + self._inc) & _MASK128

    def _next_uint64(self) -> int:
        state = self._state = (self._state * _PCG_MULTIPLIER + self._inc) & _MASK128
        rot = state >> 122
        word = ((state >> 64) ^ state) & _MASK64
        return ((word >> rot) | (word << (64 - rot))) & _MASK64

    def random(self) -> float:
        """``Generator.random()``: uniform on [0, 1) with 53 random bits."""
        return (self._next_uint64() >> 11) * _DOUBLE_UNIT

    def uniform(self, low: float, high: float) -> float:
        """``Generator.uniform(low, high)``: ``low + (high - low) * random()``."""
        low, high = float(low), float(high)
        span = high - low
        if not math.isfinite(span):
            raise OverflowError("high - low range exceeds valid bounds")
        if math.copysign(1.0, span) < 0:
            raise ValueError("high - low < 0")
        return low + span * ((self._next_uint64() >> 11) * _DOUBLE_UNIT)

    def normal(self, loc: float, scale: float, size: int) -> list[float]:
        """``Generator.normal(loc, scale, size)`` as a list: ``loc + scale * z`` per draw,
        z from numpy's ``random_standard_normal``. One 64-bit word picks the layer (8 bits),
        the sign (1 bit) and a 52-bit position; 99% of draws end at the first test, inlined
        here with the generator's step for speed."""
        loc, scale = float(loc), float(scale)
        if math.copysign(1.0, scale) < 0 and not math.isnan(scale):
            raise ValueError("scale < 0")
        out = []
        state, inc = self._state, self._inc
        for _ in range(index(size)):
            while True:
                state = (state * _PCG_MULTIPLIER + inc) & _MASK128
                rot = state >> 122
                word = ((state >> 64) ^ state) & _MASK64
                r = ((word >> rot) | (word << (64 - rot))) & _MASK64
                layer = r & 0xFF
                position = (r >> 9) & _MANTISSA
                z = position * WI[layer]
                if r & 0x100:
                    z = -z
                if position < KI[layer]:
                    break
                self._state = state
                beyond = self._beyond_core(layer, position, z)
                state = self._state
                if beyond is not None:
                    z = beyond
                    break
            out.append(loc + scale * z)
        self._state = state
        return out

    def _beyond_core(self, layer: int, position: int, x: float) -> float | None:
        """The rare paths: the tail past ``R`` (layer 0) or a layer's wedge; ``None`` when
        the wedge rejects ``x`` and a fresh word is needed."""
        if layer == 0:
            while True:
                # 1 - U keeps log away from 0, as numpy does.
                xx = -INV_R * math.log1p(-self.random())
                yy = -math.log1p(-self.random())
                if yy + yy > xx * xx:
                    return -(R + xx) if (position >> 8) & 1 else R + xx
        if (FI[layer - 1] - FI[layer]) * self.random() + FI[layer] < math.exp(-0.5 * x * x):
            return x
        return None
