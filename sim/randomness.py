"""Random numbers: one seeded stream per named source, drawn in blocks.

A numpy Generator call costs about a microsecond whatever it returns, so models take
numbers from blocks of 4096 and pay that once per block. Each named source has its own
stream derived from (seed, name), so adding a source never shifts another's numbers, and
points of a sweep that share a seed share common random numbers. A source of many members (a
workload's terminals) gives each its own stream, (seed, name, index): a member's draws then do
not depend on when the others draw, so two what-ifs at one seed give each member the same
numbers however the change moves the timing (common random numbers synchronised per member,
Law, Simulation Modeling and Analysis, 5th ed., 11.2: what makes them pay).
"""

from __future__ import annotations

import zlib

import numpy as np

_BLOCK = 4096


def rng_stream(seed: int, name: str, index: int | None = None) -> np.random.Generator:
    key = [seed, zlib.crc32(name.encode())] + ([] if index is None else [index])
    return np.random.default_rng(np.random.SeedSequence(key))


class Draws:
    """Uniform(0,1) and exponential(1) variates from a generator, a block at a time (`block`:
    smaller for the many streams of one member each, whose blocks would otherwise hold more
    memory than the members themselves)."""

    __slots__ = ("rng", "_u", "_i", "_e", "_j", "block")

    def __init__(self, rng: np.random.Generator, block: int = _BLOCK):
        self.rng = rng
        self.block = block
        self._u: list[float] = []
        self._i = 0
        self._e: list[float] = []
        self._j = 0

    def uniform(self) -> float:
        if self._i >= len(self._u):
            self._u = self.rng.random(self.block).tolist()
            self._i = 0
        self._i += 1
        return self._u[self._i - 1]

    def exponential(self, mean: float) -> float:
        if self._j >= len(self._e):
            self._e = self.rng.standard_exponential(self.block).tolist()
            self._j = 0
        self._j += 1
        return mean * self._e[self._j - 1]
