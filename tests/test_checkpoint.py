"""Log switches and checkpoints: a full log must wait for the checkpoint of the log it reuses,
and a cached database whose DBWR cannot keep up is held to DBWR's write rate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import simpy

from sim import scenario
from sim.db.buffer_cache import BufferCache, Segment
from sim.db.checkpoint import LogSwitchCheckpoints
from sim.metrics import WaitEvents
from sim.run import run

PROFILES = Path(__file__).resolve().parent.parent / "hardware_profiles"


class _Dbwr:
    """DBWR reduced to its two counters: writes one block every `per_write` seconds."""

    def __init__(self, env, per_write):
        self.env, self.per_write = env, per_write
        self.dirtied_total = self.written_total = 0

    def wait_written(self, target):
        while self.written_total < target:
            yield self.env.timeout(self.per_write)
            self.written_total += 1


def test_switch_waits_for_the_checkpoint_of_the_log_it_reuses():
    """Three 100-byte logs, 100 bytes a write, 10 blocks dirtied per write, DBWR idle until asked:
    the first two switches find never-used logs; the third reuses the first log, whose checkpoint
    (20 blocks dirtied when the write that found it full came) takes 20 x 0.1 s."""
    env = simpy.Environment()
    dbwr, waits = _Dbwr(env, 0.1), WaitEvents()
    gate = LogSwitchCheckpoints(env, dbwr, 100.0, 3, waits)
    stalls = []

    def lgwr():
        for _ in range(4):
            dbwr.dirtied_total += 10
            start = env.now
            yield from gate.before_write(100.0)
            stalls.append(round(env.now - start, 9))
    env.process(lgwr())
    env.run()
    assert gate.switches == 3
    assert stalls == [0.0, 0.0, 0.0, 2.0]
    assert waits.events["log file switch (checkpoint incomplete)"].time == pytest.approx(2.0)


def test_checkpoint_writes_absorb_repeated_changes():
    """One block changed c times per transaction, checkpoints every n transactions:
    1 - exp(-c n) writes per n transactions; a cold block changes rarely, a hot one once per checkpoint."""
    seg = Segment("t", np.array([0.001, 1.0]), np.array([1.0, 1.0]), update_share=1.0)
    cache = BufferCache([seg], 10.0)
    n = 100.0
    expected = ((1 - np.exp(-0.001 * n)) + (1 - np.exp(-1.0 * n))) / n
    assert cache.checkpoint_writes(n)["t"] == pytest.approx(expected, rel=1e-3)
    assert cache.checkpoint_writes(10 * n)["t"] < cache.checkpoint_writes(n)["t"]   # longer logs, fewer writes


def _cached_opteron(profile="opteron-4way", **db):
    base = {"users": 300, "think_time": "0.5 s", "keying_time": "0 s", "warehouses": 10, "users_on_host": True,
            "database.db_cache": "2 GB", "database.disk_asynch_io": False, "database.redo_device": "external",
            "database.data_device": "external", "os.filesystem": "linux_buffered", "run.seed": 3,
            "run.warmup": "5 s", "run.batch": "1 s", "run.min_batches": 5, "run.max_time": "10 s"}
    base.update({f"database.{k}": v for k, v in db.items()})
    return scenario.load(None, base, profile=profile, workload="tpcc")


def test_small_logs_hold_a_cached_database_to_dbwr_speed(tmp_path):
    """Every block a checkpoint finds dirty is written synchronously by one DBWR to RAID5; with
    1 MB logs redo can outrun it only by two logs. Behind a 2 MB controller cache (full at once)
    the sessions wait for the checkpoints: throughput falls well below the unchecked run. The
    profile's 512 MB cache absorbs the same 15 s of writes: not held (yet)."""
    text = (PROFILES / "opteron-4way.yaml").read_text()
    assert "write_cache_size: 512 MB" in text
    small = tmp_path / "opteron-4way-small-cache.yaml"
    small.write_text(text.replace("write_cache_size: 512 MB", "write_cache_size: 2 MB"))
    free = run(_cached_opteron())
    held = run(_cached_opteron(str(small), redo_log_size="1 MB"))
    assert "log file switch (checkpoint incomplete)" in {e["event"] for e in held.top_events}
    assert held.tpm < 0.7 * free.tpm
    absorbed = run(_cached_opteron(redo_log_size="1 MB"))
    assert absorbed.tpm > 0.9 * free.tpm
