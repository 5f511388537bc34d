"""The per-file reader/writer lock: who waits for whom, and its time-weighted statistics
against Little's law and the utilisation law."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim.os.rwlock import RWLock
from stubs import InstantCpu, RecordingVolume


def _user(env, lock, log, name, at, exclusive, hold):
    yield env.timeout(at)
    yield lock.acquire(exclusive)
    log.append((name, env.now))
    yield env.timeout(hold)
    lock.release(exclusive)


def _run(script):
    env = simpy.Environment()
    lock = RWLock(env)
    log = []
    for name, at, exclusive, hold in script:
        env.process(_user(env, lock, log, name, at, exclusive, hold))
    env.run()
    return env, lock, log


def test_readers_share_and_wait_while_a_writer_holds():
    env, lock, log = _run([("w", 0.0, True, 2.0), ("r1", 0.5, False, 1.0), ("r2", 1.0, False, 1.0)])
    assert log == [("w", 0.0), ("r1", 2.0), ("r2", 2.0)]     # both let in together at the release
    st = lock.stats()
    assert st["read_wait_total"] == pytest.approx(1.5 + 1.0)
    assert st["write_held"] == pytest.approx(2.0 / 3.0)     # held 2 s of a 3 s run


def test_writer_waits_for_every_reader_in_progress():
    env, lock, log = _run([("r1", 0.0, False, 3.0), ("r2", 1.0, False, 1.0), ("w", 1.5, True, 1.0)])
    assert log == [("r1", 0.0), ("r2", 1.0), ("w", 3.0)]
    assert lock.stats()["write_wait_total"] == pytest.approx(1.5)


def test_a_waiting_writer_blocks_new_readers_and_writers_go_first():
    env, lock, log = _run([("r1", 0.0, False, 1.0), ("w1", 0.1, True, 1.0), ("r2", 0.2, False, 1.0),
                           ("w2", 0.3, True, 1.0)])
    assert [n for n, _ in log] == ["r1", "w1", "w2", "r2"]
    assert env.now == pytest.approx(4.0)


def test_littles_law_and_utilisation_on_a_loaded_lock():
    """Poisson readers and writers with exponential holds: the time-average number waiting
    equals the grant rate times the mean wait (Little), and the share of time a writer holds
    the lock equals the write rate times the mean hold (utilisation law)."""
    env = simpy.Environment()
    lock = RWLock(env)
    rng = np.random.default_rng(5)
    read_rate, write_rate, hold = 40.0, 10.0, 0.01
    horizon = 2_000.0

    def source(rate, exclusive):
        while True:
            yield env.timeout(rng.exponential(1.0 / rate))
            env.process(one(exclusive))

    def one(exclusive):
        yield lock.acquire(exclusive)
        yield env.timeout(rng.exponential(hold))
        lock.release(exclusive)

    env.process(source(read_rate, False))
    env.process(source(write_rate, True))
    env.run(until=100.0)
    lock.reset_stats()
    env.run(until=100.0 + horizon)
    st = lock.stats()
    assert st["write_held"] == pytest.approx(write_rate * hold, rel=0.05)
    assert st["readers_holding"] == pytest.approx(read_rate * hold, rel=0.05)
    assert st["read_wait_total"] > 0.0 and st["write_wait_total"] > 0.0
    assert st["readers_waiting"] == pytest.approx(st["read_wait_total"] / horizon, rel=0.02)
    assert st["writers_waiting"] == pytest.approx(st["write_wait_total"] / horizon, rel=0.02)


@pytest.mark.parametrize("path, waits", [("vxfs_buffered", True), ("ufs_direct", True), ("quick_io", False),
                                         ("cached_quick_io", False), ("raw", False)])
def test_a_read_of_a_file_waits_for_its_write_to_reach_disk(path, waits):
    """One datafile: a write (O_DSYNC, 10 ms on disk) starts at 0; a read asked at 1 ms,
    found in the page cache where the path caches. Behind the inode lock it completes when
    the write does; without the lock (raw, Quick I/O, Cached Quick I/O) it does not wait."""
    from sim.os.filesystem import PATHS, FileSystem

    env = simpy.Environment()
    fs = FileSystem(env, InstantCpu(env), RecordingVolume(env, 0.010), PATHS[path], 1, 2048.0, False,
                    np.random.default_rng(0))
    done = {}

    def writer():
        yield from fs.write()
        done["w"] = env.now

    def reader():
        yield env.timeout(0.001)
        yield from fs.read(cached=True)
        done["r"] = env.now

    env.process(writer())
    env.process(reader())
    env.run()
    hit = PATHS[path].caches
    if waits:
        assert done["r"] == pytest.approx(0.010 if hit else 0.020)
        assert fs.lock_report()["file_lock_read_wait_ms"] == pytest.approx(9.0)
        assert fs.lock_report()["file_lock_write_held_pct"] == pytest.approx(100.0 * 0.010 / env.now)
    else:
        assert done["r"] == pytest.approx(0.001 if hit else 0.011)
        assert fs.lock_report() == {}


def test_linux_buffered_serialises_writers_but_not_readers():
    """Linux 2.4: write() holds i_sem through the O_DSYNC flush, read() takes no inode lock.
    One file, 10 ms per disk write: two writes at 0 end at 10 and 20 ms; a page-cache read
    asked at 1 ms ends at 1 ms; the second writer waited 10 ms for the lock."""
    from sim.os.filesystem import PATHS, FileSystem

    env = simpy.Environment()
    fs = FileSystem(env, InstantCpu(env), RecordingVolume(env, 0.010), PATHS["linux_buffered"], 1, 8192.0, False,
                    np.random.default_rng(0))
    done = []

    def writer():
        yield from fs.write()
        done.append(("w", env.now))

    def reader():
        yield env.timeout(0.001)
        yield from fs.read(cached=True)
        done.append(("r", env.now))

    env.process(writer())
    env.process(writer())
    env.process(reader())
    env.run()
    assert done == [("r", pytest.approx(0.001)), ("w", pytest.approx(0.010)), ("w", pytest.approx(0.020))]
    report = fs.lock_report()
    assert report["file_lock_read_wait_ms"] == 0.0
    assert report["file_lock_write_wait_ms"] == pytest.approx(5.0)   # 0 and 10 ms


def test_time_weighted_levels_and_counts_on_a_hand_computed_script():
    """w holds 0-2; r1 asks at 0.5, r2 at 1.0, both granted at 2 and hold 1 s; w2 asks at 2.5 and
    waits for both readers (until 3), holds to 4. Areas over the 4 s run: writer held 3 s,
    readers held 2 reader-seconds, readers waited 1.5 + 1.0, the writer waited 0.5."""
    env, lock, log = _run([("w", 0.0, True, 2.0), ("r1", 0.5, False, 1.0), ("r2", 1.0, False, 1.0),
                           ("w2", 2.5, True, 1.0)])
    assert log == [("w", 0.0), ("r1", 2.0), ("r2", 2.0), ("w2", 3.0)]
    st = lock.stats()
    assert env.now == pytest.approx(4.0)
    assert st["write_held"] == pytest.approx(3.0 / 4.0)
    assert st["readers_holding"] == pytest.approx(2.0 / 4.0)
    assert st["readers_waiting"] == pytest.approx(2.5 / 4.0)
    assert st["writers_waiting"] == pytest.approx(0.5 / 4.0)
    assert (st["read_acquires"], st["write_acquires"]) == (2, 2)
    assert st["read_wait_total"] == pytest.approx(2.5) and st["write_wait_total"] == pytest.approx(0.5)
    assert lock.readers == 0 and not lock.writer and not lock.waiting_readers and not lock.waiting_writers
    assert lock._asked == {}


def test_readers_share_without_waiting_and_the_last_one_out_lets_the_writer_in():
    """r1 0-3, r2 1-2 share at once (no wait); w asks at 0.5 and gets the lock at 3, when the last
    reader leaves, not at 2 when r2 does. Mean readers holding: (3 + 1) / 4."""
    env, lock, log = _run([("r1", 0.0, False, 3.0), ("w", 0.5, True, 1.0), ("r2", 0.4, False, 1.0)])
    assert log == [("r1", 0.0), ("r2", 0.4), ("w", 3.0)]
    st = lock.stats()
    assert st["read_wait_total"] == 0.0 and st["read_acquires"] == 2
    assert st["write_wait_total"] == pytest.approx(2.5)
    assert st["readers_holding"] == pytest.approx((3.0 + 1.0) / 4.0)
    assert st["writers_waiting"] == pytest.approx(2.5 / 4.0)


def test_a_leaving_writer_wakes_one_writer_then_readers_all_at_once():
    """w1 holds 0-1; r1 (0.1), w2 (0.2), r2 (0.3), w3 (0.4) wait. At 1 w2 alone goes (writers in
    order), at 2 w3, at 3 both readers together."""
    env, lock, log = _run([("w1", 0.0, True, 1.0), ("r1", 0.1, False, 1.0), ("w2", 0.2, True, 1.0),
                           ("r2", 0.3, False, 1.0), ("w3", 0.4, True, 1.0)])
    assert log == [("w1", 0.0), ("w2", 1.0), ("w3", 2.0), ("r1", 3.0), ("r2", 3.0)]
    st = lock.stats()
    assert st["write_wait_total"] == pytest.approx(0.8 + 1.6)
    assert st["read_wait_total"] == pytest.approx(2.9 + 2.7)
    assert st["write_held"] == pytest.approx(3.0 / 4.0)


def test_reset_keeps_holders_and_counts_only_what_follows():
    env = simpy.Environment()
    lock = RWLock(env)
    log = []
    env.process(_user(env, lock, log, "w", 0.0, True, 4.0))
    env.process(_user(env, lock, log, "r", 1.0, False, 1.0))
    env.run(until=2.0)
    assert lock.stats()["readers_waiting"] == pytest.approx(1.0 / 2.0)
    lock.reset_stats()
    st = lock.stats()
    assert st["write_held"] == 0.0 and st["readers_waiting"] == 0.0 and st["write_acquires"] == 0
    env.run()
    st = lock.stats()       # 2..5: the writer held 2 of 3 s, the reader waited 2 and held 1
    assert env.now == pytest.approx(5.0)
    assert st["write_held"] == pytest.approx(2.0 / 3.0)
    assert st["readers_waiting"] == pytest.approx(2.0 / 3.0)
    assert st["readers_holding"] == pytest.approx(1.0 / 3.0)
    assert st["read_acquires"] == 1 and st["write_acquires"] == 0
    assert st["read_wait_total"] == pytest.approx(3.0)   # asked at 1, granted at 4: the whole wait


def test_reset_forgets_the_reader_seconds_before_it():
    """Two readers hold 0-4, a third 1-1.5 (3.5 reader-seconds by 1.5); a reset at 2 leaves 2..4 with two
    holding: a mean of 2 readers (keeping the 3.5 before the reset would make it 3.75)."""
    env = simpy.Environment()
    lock = RWLock(env)
    log = []
    for name in ("r1", "r2"):
        env.process(_user(env, lock, log, name, 0.0, False, 4.0))
    env.process(_user(env, lock, log, "r3", 1.0, False, 0.5))
    env.run(until=2.0)
    lock.reset_stats()
    env.run()
    st = lock.stats()
    assert env.now == pytest.approx(4.0) and st["readers_holding"] == pytest.approx(2.0)
    assert st["read_acquires"] == 0 and st["write_held"] == 0.0
