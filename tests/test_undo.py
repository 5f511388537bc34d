"""Undo (rollback segment) blocks in the TPC-C workload: how many undo blocks a transaction fills, and
how many of them DBWR writes as the rollback segments' size compares with the buffer cache and the
checkpoint timeout (workloads/tpcc_blocks.py undo_segment, sim/db/buffer_cache.py)."""

from __future__ import annotations

import numpy as np
import pytest

from sim import scenario
from sim.config import ConfigError
from sim.db.buffer_cache import BufferCache, Segment
from workloads import tpcc, tpcc_blocks

MIX = dict(tpcc.STANDARD_MIX)
BS = 2048.0


def test_undo_blocks_per_transaction_follow_the_undo_bytes_of_the_mix():
    expected = (0.45 * 3032 + 0.43 * 423 + 0.04 * 11720) / (2048 - 90)
    assert tpcc_blocks.undo_blocks_per_tx(MIX, BS) == pytest.approx(expected)
    # types that change nothing write no undo; twice the block, half the blocks (less the header)
    assert tpcc_blocks.undo_blocks_per_tx({"order_status": 1.0, "stock_level": 1.0}, BS) == 0.0
    assert tpcc_blocks.undo_blocks_per_tx(MIX, 4096.0) == pytest.approx(expected * 1958 / (4096 - 90))


def _caches(undo_bytes: float, cache_blocks: float):
    table = Segment("t", np.array([0.5, 0.01]), np.array([1000.0, 50_000.0]), 0.2)
    undo = tpcc_blocks.undo_segment(MIX, BS, undo_bytes)
    return BufferCache([table, undo], cache_blocks), undo


def _undo_writes(cache: BufferCache, n: float) -> float:
    """Undo blocks DBWR writes per transaction: evicted dirty or written by the timeout, the sooner."""
    return sum(cache.dirty_writes(span=n)["undo"])


def test_undo_far_larger_than_the_cache_is_written_once_per_block_filled():
    u = tpcc_blocks.undo_blocks_per_tx(MIX, BS)
    cache, _ = _caches(2e9, 5_000.0)            # ~1 M undo blocks against 5,000 buffers
    for n in (1e3, 1e5):
        assert _undo_writes(cache, n) == pytest.approx(u, rel=0.01)
        assert cache.timeout_writes(n)["undo"] < 0.01 * u


def test_undo_that_stays_cached_is_written_only_by_the_timeout():
    """All cached: no evictions; a block refilled every S/u transactions is written once per cycle of
    S/u + n (the renewal of BufferCache.timeout_writes): u / (1 + n u / S) a transaction, u with no
    wait (n -> 0) and towards S / n (each block once per timeout) as n grows past S / u."""
    u = tpcc_blocks.undo_blocks_per_tx(MIX, BS)
    cache, undo = _caches(4e6, 1e7)             # 1,954 undo blocks, 10 M buffers
    s = undo.blocks
    assert cache.odds["undo"].writes_per_tx < 1e-6
    for n in (1.0, 100.0, 1e4, 1e6):
        assert _undo_writes(cache, n) == pytest.approx(u / (1.0 + n * u / s), rel=1e-3)
    assert _undo_writes(cache, 1e6) == pytest.approx(s / 1e6, rel=0.01)


def test_undo_writes_fall_as_the_cache_grows_and_as_the_timeout_lengthens():
    u = tpcc_blocks.undo_blocks_per_tx(MIX, BS)
    by_cache = [_undo_writes(_caches(40e6, c)[0], 20_000.0) for c in (5e3, 2e4, 4e4, 8e4)]
    assert all(a > b for a, b in zip(by_cache, by_cache[1:])), by_cache
    assert by_cache[0] == pytest.approx(u, rel=0.05) and by_cache[-1] < 0.6 * u
    # a timeout longer than the circle (S / u ~ 20,000 transactions) saves writes only where the cache
    # holds the circle: evicted before its next change, a block costs one write a circle whatever the timeout
    held, _ = _caches(40e6, 1e7)
    by_timeout = [_undo_writes(held, n) for n in (1e3, 1e4, 1e5)]
    assert all(a > b for a, b in zip(by_timeout, by_timeout[1:])), by_timeout
    cache, _ = _caches(40e6, 4e4)
    assert [_undo_writes(cache, n) for n in (1e3, 1e4, 1e5)] == pytest.approx([u] * 3, rel=0.03)


def test_undo_takes_buffers_but_is_not_in_the_hit_ratio():
    table = Segment("t", np.array([0.5, 0.01]), np.array([1000.0, 50_000.0]), 0.2)
    alone = BufferCache([table], 10_000.0)
    cache, _ = _caches(40e6, 10_000.0)
    # the table misses more beside the undo (fewer buffers left), and the hit ratio is the table's own
    assert cache.odds["t"].miss > alone.odds["t"].miss
    assert cache.hit_ratio() == pytest.approx(1.0 - cache.odds["t"].miss)
    assert cache.odds["undo"].miss > 0.5       # most undo touches find no buffer: reused as new, not read


def _plan(**db):
    import workloads
    from sim.system import System

    over = {"users": 6, "warehouses": 200, "hash_clusters": True, "database.block_size": "2 KB",
            "database.db_cache": "1 GB", "database.redo_device": "redo", "database.data_device": "data",
            "database.datafiles": 59, "database.datafile_size": "868 MB",
            **{f"database.{k}": v for k, v in db.items()}}
    sc = scenario.load(None, over, profile="ue10000", workload="tpcc")
    return workloads.get("tpcc").Workload(System(sc), sc.params).io


def test_tpcc_hands_undo_blocks_to_dbwr_by_the_undo_each_type_writes():
    plain, undo = _plan(), _plan(rollback_size="868 MB")
    w = undo.cache.odds["undo"].writes_per_tx
    assert w > 0.5
    weight = sum(tpcc.STANDARD_MIX[t] * b for t, b in tpcc_blocks.UNDO_BYTES.items())
    files = undo.layout.of("undo")          # the rollback tablespace: its own file(s)
    assert files is not None and all(files != undo.layout.of(s) for s in ("stock", "customer", "inserts"))
    for t in tpcc.TYPES:
        extra = w * tpcc_blocks.UNDO_BYTES.get(t, 0.0) / weight
        assert sum(m for m, f, _c in undo.dirty_parts[t] if f == files) == pytest.approx(extra), t
    assert undo.dirty["order_status"] == plain.dirty["order_status"] == 0.0
    # undo also takes buffers from the tables: more of their dirty blocks are evicted (New-Order's stock)
    assert undo.dirty["new_order"] > plain.dirty["new_order"] + w * 3032 / weight
    # no physical read is ever drawn from the rollback segments
    assert all(f != files for parts in undo.plan.values() for *_x, f in parts)


def _refused(key: str, fragment: str, workload: str = "tpcc", **sets):
    with pytest.raises(ConfigError) as info:
        scenario.load(None, sets, profile="ue10000", workload=workload)
    assert info.value.path == key, str(info.value)
    assert fragment in str(info.value), str(info.value)


def test_rollback_size_where_it_changes_nothing_is_refused():
    _refused("database.rollback_size", "without database.db_cache",
             **{"users": "6", "database.rollback_size": "100 MB"})
    _refused("database.rollback_size", "transactions that change nothing",
             **{"users": "6", "database.db_cache": "1 GB", "database.rollback_size": "100 MB",
                "mix": {"order_status": 1.0, "stock_level": 1.0}})
    _refused("database.rollback_size", "no database.rollback_size for workload slob", workload="slob",
             **{"sessions": "4", "database.db_cache": "1 GB", "database.rollback_size": "100 MB"})
    _refused("database.rollback_size", "0", **{"users": "6", "database.db_cache": "1 GB",
                                              "database.rollback_size": "0 MB"})
