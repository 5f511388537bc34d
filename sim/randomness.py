"""Random numbers: one seeded stream per named source, drawn in blocks.

A numpy Generator call costs about a microsecond whatever it returns, so models take
numbers from blocks of 4096 and pay that once per block. Each named source has its own
stream derived from (seed, name), so adding a source never shifts another's numbers, and
points of a sweep that share a seed share common random numbers.
"""

from __future__ import annotations

import zlib

import numpy as np

_BLOCK = 4096


def rng_stream(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(name.encode())]))


class Draws:
    """Uniform(0,1) and exponential(1) variates from a generator, a block at a time."""

    __slots__ = ("rng", "_u", "_i", "_e", "_j")

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self._u: list[float] = []
        self._i = 0
        self._e: list[float] = []
        self._j = 0

    def uniform(self) -> float:
        if self._i >= len(self._u):
            self._u = self.rng.random(_BLOCK).tolist()
            self._i = 0
        self._i += 1
        return self._u[self._i - 1]

    def exponential(self, mean: float) -> float:
        if self._j >= len(self._e):
            self._e = self.rng.standard_exponential(_BLOCK).tolist()
            self._j = 0
        self._j += 1
        return mean * self._e[self._j - 1]
