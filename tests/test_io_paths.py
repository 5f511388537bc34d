"""The database's I/O: the buffer-cache model against an exact LRU, memory limits, and the
file-system paths' locking and caching."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim import scenario
from sim.analytic import lru_simulate
from sim.config import ConfigError
from sim.db.buffer_cache import BufferCache
from sim.os.rwlock import RWLock as FileLock
from sim.run import run
from workloads import tpcc_blocks
from workloads.tpcc import LOGICAL_READS, STANDARD_MIX


@pytest.mark.parametrize("cache_blocks", [2_000, 8_000])
def test_tpcc_buffer_hit_ratio_matches_exact_lru(cache_blocks):
    """One warehouse in 2 KB blocks (~55k blocks): Che vs an exact LRU fed by the same
    popularity. Che's error for skewed popularity at these sizes is below 0.02 (Fricker et al.)."""
    segs = tpcc_blocks.segments(1, 2048, STANDARD_MIX, LOGICAL_READS)
    probs = np.concatenate([np.repeat(s.rates, s.counts.astype(int)) for s in segs])
    exact = lru_simulate(probs, cache_blocks, 600_000, np.random.default_rng(11))
    che = BufferCache(segs, cache_blocks).hit_ratio()
    assert che == pytest.approx(exact, abs=0.02)


def test_page_cache_is_a_second_level():
    segs = tpcc_blocks.segments(200, 2048, STANDARD_MIX, LOGICAL_READS)
    alone = BufferCache(segs, 51_200)
    over = BufferCache(segs, 51_200, 2_000_000)
    assert alone.hit_ratio() == over.hit_ratio()                 # level 1 does not change
    assert all(alone.odds[s.name].os_hit == 0.0 for s in segs)
    assert over.odds["stock"].os_hit > 0.5                        # most stock misses found below
    bigger = BufferCache(segs, 4 * 51_200)
    assert bigger.odds["stock"].writes_per_tx < alone.odds["stock"].writes_per_tx  # fewer dirty evictions


def test_file_lock_prefers_writers():
    env = simpy.Environment()
    lock = FileLock(env)
    order = []

    def user(name, delay, write):
        yield env.timeout(delay)
        yield lock.acquire(write)
        order.append(name)
        yield env.timeout(1.0)
        lock.release(write)
    env.process(user("r1", 0.0, False))
    env.process(user("w", 0.1, True))     # waits for r1
    env.process(user("r2", 0.2, False))   # arrives while the writer waits: queued behind it
    env.run()
    assert order == ["r1", "w", "r2"]
    assert env.now == pytest.approx(3.0)


def _ue(**over):
    base = {"users": 4, "think_time": "0 s", "keying_time": "0 s", "warehouses": 200,
            "database.block_size": "2 KB", "database.db_cache": "100 MB", "database.redo_device": "redo",
            "database.oracle_bits": 32, "os.bits": 32, "run.warmup": "1 s", "run.batch": "1 s",
            "run.min_batches": 2, "run.max_time": "2 s"}
    base.update(over)
    return scenario.load(None, base, profile="ue10000", workload="tpcc")


def test_32_bit_oracle_refuses_an_sga_over_its_address_space():
    with pytest.raises(ConfigError) as err:
        _ue(**{"database.db_cache": "4 GB"})
    assert "database.db_cache" in str(err.value) and "32-bit Oracle" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _ue(**{"database.oracle_bits": 64})
    assert "database.oracle_bits" in str(err.value)


def test_sga_over_memory_is_out_of_memory_and_large_sga_runs_on_64_bit():
    r = run(_ue(**{"database.db_cache": "6 GB", "database.oracle_bits": 64, "os.bits": 64}))
    assert r.status == "out_of_memory"
    ok = run(_ue(**{"database.db_cache": "5 GB", "database.oracle_bits": 64, "os.bits": 64}))
    assert ok.status == "ok" and ok.tpm > 0


def test_cached_quick_io_reads_from_the_page_cache_and_raw_does_not():
    raw = run(_ue(**{"os.filesystem": "raw"}))
    cqio = run(_ue(**{"os.filesystem": "cached_quick_io"}))
    assert raw.extra["os_cache_hits_per_s"] == 0
    assert cqio.extra["os_cache_hits_per_s"] > 0.5 * cqio.extra["physical_reads_per_s"]
    assert cqio.tpm > raw.tpm
