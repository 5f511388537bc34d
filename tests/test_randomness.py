"""The random streams by hand (sim/randomness.py): which numbers a (seed, name, index) stream gives, and that
Draws hands out the generator's own numbers in order, a block at a time (a run at one seed reproduces, and
a what-if at that seed shares its numbers with the base run)."""

from __future__ import annotations

import zlib

import numpy as np

from sim.randomness import Draws, rng_stream


def test_a_stream_is_the_seed_sequence_of_seed_then_name_then_member():
    """The key is [seed, crc32(name)] (+ [index]): reordered or with another hash, every recorded run's numbers
    would change under the same seed."""
    first = rng_stream(7, "tpcc").random(3)
    assert zlib.crc32(b"tpcc") == 193169409
    assert first.tolist() == np.random.default_rng(np.random.SeedSequence([7, 193169409])).random(3).tolist()
    assert rng_stream(7, "tpcc", 2).random() == np.random.default_rng(
        np.random.SeedSequence([7, 193169409, 2])).random()


def test_the_members_of_a_source_have_streams_of_their_own():
    """Terminals 1 and 2 draw apart. (Member 0 is the unindexed source itself: SeedSequence drops trailing zero
    words, so a source is drawn either whole or by member, never both: tpcc's per-terminal names are their own.)"""
    assert rng_stream(1, "tpcc:terminal", 1).random() != rng_stream(1, "tpcc:terminal", 2).random()
    assert rng_stream(1, "tpcc:terminal", 0).random() == rng_stream(1, "tpcc:terminal").random()


def test_draws_hand_out_the_generators_numbers_in_order_a_block_at_a_time():
    """By hand: with blocks of 4 the draws are the generator's random(4), then the exponentials its
    standard_exponential(4), then its next random(4) when the first block runs out; an exponential of
    mean m is m times a standard one."""
    ref = rng_stream(3, "x")
    u1, e1, u2 = ref.random(4).tolist(), ref.standard_exponential(4).tolist(), ref.random(4).tolist()
    d = Draws(rng_stream(3, "x"), block=4)
    assert [d.uniform() for _ in range(3)] == u1[:3]
    assert d.exponential(2.5) == 2.5 * e1[0]
    assert [d.uniform() for _ in range(3)] == [u1[3], u2[0], u2[1]]
    assert [d.exponential(1.0) for _ in range(3)] == e1[1:]


def test_the_default_block_is_4096_numbers():
    """One generator call per 4096 draws: the 4097th uniform comes after the block of exponentials drawn
    in between (what a run at a given seed has recorded)."""
    ref = rng_stream(5, "y")
    u1, e1, u2 = ref.random(4096).tolist(), ref.standard_exponential(4096).tolist(), ref.random(1).tolist()
    d = Draws(rng_stream(5, "y"))
    assert d.uniform() == u1[0] and d.exponential(1.0) == e1[0]
    assert [d.uniform() for _ in range(4096)][-1] == u2[0]
