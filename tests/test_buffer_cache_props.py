"""The buffer cache (sim/db/buffer_cache.py) by hand: Che's approximation where it has a closed form
(uniform blocks: an LRU cache of C of n equally popular blocks hits C / n), the dirty-block writes of
the residency argument, and what each segment's odds add up to."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from sim.db.buffer_cache import BufferCache, Segment


def _uniform(name, blocks, rate, update_share=0.0, read_on_miss=True):
    return Segment(name, np.array([rate]), np.array([float(blocks)]), update_share, read_on_miss)


def test_uniform_blocks_hit_in_proportion_to_the_cache_and_dirty_ones_are_written_at_eviction():
    # 1000 blocks touched 0.01 times a transaction each, 250 buffers: P(hit) = 1/4 (Che, exact for equal rates)
    cache = BufferCache([_uniform("t", 1000, 0.01, update_share=0.4)], 250.0)
    odds = cache.odds["t"]
    assert odds.miss == pytest.approx(0.75, rel=1e-9) and cache.hit_ratio() == pytest.approx(0.25, rel=1e-9)
    # a block stays for a geometric number of touches (mean 1 / 0.75) and is written at eviction if one
    # of them changed it: P(dirty) = u / (1 - (1 - p)(1 - u)) = 0.4 / 0.85; 7.5 misses a transaction
    assert odds.writes_per_tx == pytest.approx(7.5 * 0.4 / 0.85, rel=1e-9)
    assert odds.os_hit == 0.0 and odds.write_os_hit == 0.0          # no OS page cache under it


def test_a_read_only_segment_writes_nothing_and_a_cache_holding_everything_misses_nothing():
    cache = BufferCache([_uniform("t", 1000, 0.01)], 250.0)
    assert cache.odds["t"].writes_per_tx == 0.0
    cache = BufferCache([_uniform("t", 1000, 0.01, update_share=1.0)], 1000.0)
    odds = cache.odds["t"]
    assert (odds.miss, odds.os_hit, odds.writes_per_tx, odds.write_os_hit) == (0.0, 0.0, 0.0, 0.0)
    assert cache.hit_ratio() == 1.0


def test_each_segment_gets_its_own_share_of_one_lru():
    # 1000 blocks at 0.02 and 500 at 0.01 a transaction share 300 buffers: one characteristic time T,
    # 1000 (1 - e^{-0.02 T}) + 500 (1 - e^{-0.01 T}) = 300, solved here on its own
    T = brentq(lambda t: 1000 * -math.expm1(-0.02 * t) + 500 * -math.expm1(-0.01 * t) - 300.0, 1e-9, 1e6, xtol=1e-14)
    a, b = _uniform("a", 1000, 0.02, 0.5), _uniform("b", 500, 0.01)
    cache = BufferCache([a, b], 300.0)
    miss_a, miss_b = math.exp(-0.02 * T), math.exp(-0.01 * T)
    assert cache.odds["a"].miss == pytest.approx(miss_a, rel=1e-7)
    assert cache.odds["b"].miss == pytest.approx(miss_b, rel=1e-7)
    # the hit ratio weighs each segment by its touches: 20 and 5 a transaction
    assert cache.hit_ratio() == pytest.approx(1 - (20 * miss_a + 5 * miss_b) / 25, rel=1e-7)
    assert cache.odds["a"].writes_per_tx == pytest.approx(20 * miss_a * 0.5 / (1 - (1 - miss_a) * 0.5), rel=1e-7)
    assert cache.odds["b"].writes_per_tx == 0.0
    # a segment whose misses read nothing (undo reused as new) still takes buffers, but is not in the ratio
    cache2 = BufferCache([a, Segment("b", b.rates, b.counts, 0.0, read_on_miss=False)], 300.0)
    assert cache2.odds["b"].miss == pytest.approx(miss_b, rel=1e-7)
    assert cache2.hit_ratio() == pytest.approx(1 - miss_a, rel=1e-7)


def test_an_os_page_cache_holding_every_block_serves_every_miss():
    for page_blocks, policy in ((1, "lru"), (1, "fifo"), (4, "lru")):
        cache = BufferCache([_uniform("t", 1000, 0.01, update_share=0.4)], 250.0, 1000.0, page_blocks, policy)
        odds = cache.odds["t"]
        assert odds.miss == pytest.approx(0.75, rel=1e-9)
        assert odds.os_hit == pytest.approx(1.0, abs=1e-9) and odds.write_os_hit == pytest.approx(1.0, abs=1e-9)


def test_checkpoints_write_the_cached_blocks_changed_since_the_last_one():
    # 100 blocks, all cached, each changed 0.02 times a transaction (touched 0.1, a fifth of the touches
    # change it): a checkpoint every 50 transactions finds it dirty with P = 1 - e^{-0.02 x 50}
    cache = BufferCache([_uniform("t", 100, 0.1, update_share=0.2)], 100.0)
    assert cache.checkpoint_writes(50.0)["t"] == pytest.approx(100 * -math.expm1(-1.0) / 50, rel=1e-12)
    # no changed block older than 50 transactions: a write every 1/c + 50 transactions
    assert cache.timeout_writes(50.0)["t"] == pytest.approx(100 * 0.02 / (1 + 0.02 * 50), rel=1e-12)
    # both, the timeout no shorter than the checkpoint interval: the checkpoints alone
    assert cache.both_writes(50.0, 60.0)["t"] == pytest.approx(cache.checkpoint_writes(50.0)["t"], rel=1e-12)
    # half the blocks cached: half as many written by checkpoints (the others are written at eviction)
    half = BufferCache([_uniform("t", 100, 0.1, update_share=0.2)], 50.0)
    assert half.checkpoint_writes(50.0)["t"] == pytest.approx(cache.checkpoint_writes(50.0)["t"] / 2, rel=1e-9)
    assert half.timeout_writes(50.0)["t"] == pytest.approx(cache.timeout_writes(50.0)["t"] / 2, rel=1e-9)
    assert half.both_writes(50.0, 20.0)["t"] == pytest.approx(cache.both_writes(50.0, 20.0)["t"] / 2, rel=1e-9)


def test_a_segment_by_default_is_read_only_and_read_on_a_miss():
    seg = Segment("t", np.array([0.01]), np.array([1000.0]))
    cache = BufferCache([seg], 250.0)
    assert cache.odds["t"].writes_per_tx == 0.0 and cache.hit_ratio() == pytest.approx(0.25, rel=1e-9)


def test_without_an_os_page_cache_pages_and_policy_change_nothing():
    plain = BufferCache([_uniform("t", 1000, 0.01, update_share=0.4)], 250.0).odds["t"]
    for page_blocks, policy in ((4, "lru"), (1, "fifo"), (4, "fifo")):
        odds = BufferCache([_uniform("t", 1000, 0.01, update_share=0.4)], 250.0, 0.0, page_blocks, policy).odds["t"]
        assert odds == plain and odds.os_hit == 0.0


def test_page_level_hits_of_a_segment_do_not_depend_on_where_it_is_listed():
    """Level 2 over 8 KB pages of four 2 KB blocks: per-block segments are cut into runs of pages (one
    padded), a one-rate segment shares its pages; each segment's (h1, h2) must come back to it whatever
    the order the segments are given in, and blocks of a page share its level-2 fate."""
    from sim.db.buffer_cache import _paged_hits
    rng = np.random.default_rng(3)
    a = Segment("a", rng.pareto(1.5, 10) + 0.01, np.full(10, 3.0))     # 10 blocks: 3 pages, 2 blocks padded
    b = Segment("b", rng.pareto(1.5, 8) + 0.01, np.full(8, 5.0))       # 8 blocks: 2 pages
    c = Segment("c", np.array([0.02]), np.array([400.0]))              # one rate: 400 alike blocks
    args = (60.0, 40.0, 4)                                             # buffers, OS pages, blocks a page
    h1, h2 = _paged_hits([a, b, c], *args)
    g1, g2 = _paged_hits([c, b, a], *args)
    assert len(h1) == len(g1) == 10 + 8 + 1                            # a one-rate segment: one bucket
    for mine, theirs in ((slice(0, 10), slice(9, 19)), (slice(10, 18), slice(1, 9)), (slice(18, 19), slice(0, 1))):
        assert np.allclose(h1[mine], g1[theirs]) and np.allclose(h2[mine], g2[theirs])
    assert 0 < h1.min() and h1.max() < 1 and 0 < h2.min() and h2.max() < 1


def test_a_transactions_reads_average_what_the_cache_model_expects_for_fractional_touches():
    """Payment touches 1.6 customer blocks on average: the draw takes 1 or 2 (2 with chance 0.6),
    so the misses average 1.6 x P(miss), not round(1.6) x P(miss) (36% more, as it once did)."""
    from workloads.tpcc import _IoPlan

    plan = object.__new__(_IoPlan)
    plan.plan = {"payment": [(1.6, 0.5, 0.25, None), (0.6, 1.0, 0.0, None)]}
    rng = np.random.default_rng(7)
    draws = [plan.reads("payment", 1.0, rng) for _ in range(40_000)]
    assert np.mean([len(d) for d in draws]) == pytest.approx(1.6 * 0.5 + 0.6 * 1.0, abs=0.02)
    assert max(len(d) for d in draws) == 3                      # at most 2 + 1 touches
    page_hits = sum(hit for d in draws for hit, _ in d)
    assert page_hits / 40_000 == pytest.approx(1.6 * 0.5 * 0.25, abs=0.01)


def test_a_segments_write_page_hit_weighs_its_buckets_by_their_writes_not_their_misses():
    """One segment of a hot and a cold bucket is the two as segments of their own (one LRU, one page cache):
    its write_os_hit is theirs weighted by the writes of each (hot blocks miss less often but are dirtier
    when they do); weighting by misses gives 0.850 here against 0.829."""
    u, cache, os_blocks = 0.3, 400.0, 600.0
    whole = BufferCache([Segment("t", np.array([0.1, 0.01]), np.array([500.0, 1000.0]), u)], cache, os_blocks)
    split = BufferCache([Segment("a", np.array([0.1]), np.array([500.0]), u),
                         Segment("b", np.array([0.01]), np.array([1000.0]), u)], cache, os_blocks)
    a, b = split.odds["a"], split.odds["b"]
    assert abs(a.write_os_hit - b.write_os_hit) > 0.1                 # the weights matter
    want = (a.writes_per_tx * a.write_os_hit + b.writes_per_tx * b.write_os_hit) / (a.writes_per_tx + b.writes_per_tx)
    assert whole.odds["t"].write_os_hit == pytest.approx(want, rel=1e-9)
    assert whole.odds["t"].writes_per_tx == pytest.approx(a.writes_per_tx + b.writes_per_tx, rel=1e-9)


def test_a_cache_of_segments_that_read_nothing_on_a_miss_has_a_hit_ratio_of_one():
    """No stream of touches reads on a miss (undo reused as new): nothing is read, AWR's Buffer Hit % is 100."""
    cache = BufferCache([_uniform("undo", 1000, 0.01, update_share=1.0, read_on_miss=False)], 250.0)
    assert cache.streams() == [] and cache.hit_ratio() == 1.0


def test_an_adjacent_segment_with_exactly_a_page_of_blocks_a_bucket_keeps_each_bucket_in_its_own_page():
    """Key-first rows, 4 blocks a bucket, 4 blocks a page: each bucket fills a page of its own, so its level-2
    fate is that of a one-bucket segment (not one page shared by the blocks of the two buckets)."""
    from sim.db.buffer_cache import _paged_hits
    others = Segment("o", np.array([0.05]), np.array([400.0]))
    adjacent = Segment("t", np.array([0.2, 0.01]), np.array([4.0, 4.0]), 0.3, adjacent=True)
    apart = [Segment("a", np.array([0.2]), np.array([4.0]), 0.3), Segment("b", np.array([0.01]), np.array([4.0]), 0.3)]
    h1, h2 = _paged_hits([adjacent, others], 100.0, 50.0, 4)
    g1, g2 = _paged_hits([*apart, others], 100.0, 50.0, 4)
    assert np.allclose(h1, g1, rtol=1e-12) and np.allclose(h2, g2, rtol=1e-12)
    assert h2[0] - h2[1] > 0.1                                          # the hot page stays longer than the cold


def test_without_an_os_page_cache_checkpoint_writes_have_no_page_hit():
    """The checkpoint writes' page hit is a page cache's figure: with none, dirty_writes sets none."""
    cache = BufferCache([_uniform("t", 1000, 0.01, update_share=0.3)], 300.0)
    assert cache.dirty_writes(period=100.0)["t"][1] > 0.0 and cache.checkpoint_os_hit == {}
