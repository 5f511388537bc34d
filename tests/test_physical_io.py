"""The read paths of sim/db/physical_io.py by hand, on stubs: what an SGA read costs on a hit and
on a miss (CPU, latches, the device, the wait), the hit ratio as the share of reads that stay
in memory, and an asynchronous reader keeping its slots full."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim.db.instance import WaitEvents
from sim.db.latches import CBC_INSTRUCTIONS, LRU_INSTRUCTIONS
from sim.db.physical_io import AsyncReader, BatchReader, ReadAhead, ReadCosts, ReadPaths, WriteBehind

COSTS = ReadCosts(sql=10_000.0, cache=3_000.0, sys_share=0.25)
RATE = 1e9   # instructions a second of a strand alone


class _Instance:
    def __init__(self, env):
        self.env, self.waits = env, WaitEvents()
        self.dbwr = None            # the data all cached: no DBWR to wait for a free buffer from
        self.physical_reads = 0


class _Device:
    """Every read takes `service` seconds, all in parallel."""

    def __init__(self, env, service=1e-3):
        self.env, self.service, self.reads = env, service, []

    def submit(self, kind, nbytes, offset=None, sequential=False):
        self.reads.append((self.env.now, kind, nbytes))
        return self.env.timeout(self.service)


class _Latch:
    def __init__(self, name, spin=0.0, sleep=0.0):
        self.name, self.event, self.spin, self.sleep, self.gets = name, f"latch: {name}", spin, sleep, 0

    def get(self):
        self.gets += 1
        return self.spin, self.sleep


class _Session:
    def __init__(self, env):
        self.env, self.cpu_log = env, []

    def cpu(self, instructions, sys_share):
        self.cpu_log.append((instructions, sys_share))
        return self.env.timeout(0.0)


def _paths(hit, cbc=None, lru=None, seed=1):
    env = simpy.Environment()
    dev = _Device(env)
    paths = ReadPaths(_Instance(env), dev, COSTS, 8192.0, RATE, cbc or _Latch("cache buffers chains"),
                      lru or _Latch("cache buffers lru chain"), hit, np.random.default_rng(seed))
    return env, dev, paths, _Session(env)


def _read(env, paths, session, n):
    out = []

    def proc():
        for _ in range(n):
            out.append((yield from paths.sga_read(session)))
    env.process(proc())
    env.run()
    return out


def test_a_miss_pays_both_latches_the_cache_work_and_a_waited_device_read():
    env, dev, paths, session = _paths(0.0)
    assert _read(env, paths, session, 3) == [True] * 3
    want = COSTS.sql + CBC_INSTRUCTIONS + COSTS.cache + LRU_INSTRUCTIONS
    assert session.cpu_log == [(want, 0.25)] * 3
    assert [r[1:] for r in dev.reads] == [("read", 8192.0)] * 3 and env.now == pytest.approx(3e-3)
    ev = paths.instance.waits.events["db file sequential read"]
    assert (ev.waits, ev.time) == (3, pytest.approx(3e-3))
    assert (paths.logical_reads, paths.physical_reads, paths.cbc.gets, paths.lru.gets) == (3, 3, 3, 3)
    assert paths.instance.physical_reads == 3      # AWR's physical reads, as a tpcc read_block counts them


def test_a_hit_pays_the_sql_and_the_chains_latch_only():
    env, dev, paths, session = _paths(1.0)
    assert _read(env, paths, session, 2) == [False, False]
    assert session.cpu_log == [(COSTS.sql + CBC_INSTRUCTIONS, 0.25)] * 2
    assert dev.reads == [] and env.now == 0.0 and paths.lru.gets == 0
    assert (paths.logical_reads, paths.physical_reads) == (2, 0)


def test_the_share_of_reads_from_storage_is_the_miss_ratio_over_many_random_blocks():
    """Past one block of 4,096 draws, too: 10,000 reads at a 30% hit ratio."""
    n, hit = 10_000, 0.3
    env, dev, paths, session = _paths(hit)
    misses = sum(_read(env, paths, session, n))
    sd = (n * hit * (1 - hit)) ** 0.5
    assert abs(misses - n * (1 - hit)) <= 4 * sd and paths.physical_reads == misses == len(dev.reads)


def test_latch_sleeps_are_waited_and_booked_and_spinning_is_cpu():
    """cbc: 1 us of spin and a 2-ms sleep; lru: 3 us of spin and a 5-ms sleep (a miss takes both)."""
    cbc, lru = _Latch("cache buffers chains", 1e-6, 2e-3), _Latch("cache buffers lru chain", 3e-6, 5e-3)
    env, dev, paths, session = _paths(0.0, cbc, lru)
    _read(env, paths, session, 1)
    spin = (1e-6 + 3e-6) * RATE
    assert session.cpu_log == [(COSTS.sql + CBC_INSTRUCTIONS + COSTS.cache + LRU_INSTRUCTIONS + spin, 0.25)]
    waits = paths.instance.waits.events
    assert waits[cbc.event].time == pytest.approx(2e-3) and waits[lru.event].time == pytest.approx(5e-3)
    assert env.now == pytest.approx(2e-3 + 5e-3 + 1e-3)     # sleeps, then the read


def test_an_async_reader_keeps_its_slots_full_and_waits_only_when_nothing_is_ready():
    """Two slots, 1-ms reads, no CPU time: t=0 issues two; the first block waits 1 ms and finds both
    done; taking one issues a third (done at 2 ms); the second block is ready at once; the third
    waits until 2 ms. Five blocks: waits at 1, 2 and 3 ms of 1 ms each."""
    env, dev, paths, session = _paths(0.0)
    reader = AsyncReader(paths, session, 2, "direct path read", 1_000.0)
    taken = []

    def proc():
        for _ in range(5):
            yield from reader.next_block()
            taken.append(env.now)
    env.process(proc())
    env.run(until=0.01)
    assert taken == pytest.approx([1e-3, 1e-3, 2e-3, 2e-3, 3e-3])
    ev = paths.instance.waits.events["direct path read"]
    assert (ev.waits, ev.time) == (3, pytest.approx(3e-3))
    assert paths.physical_reads == 5 and session.cpu_log == [(1_000.0, 0.25)] * 5
    assert len(dev.reads) == 7 and reader.busy    # two more in flight once the fifth is taken


class _LogDevice(_Device):
    def submit(self, kind, nbytes, offset=None, sequential=False):
        self.reads.append((self.env.now, kind, nbytes, offset))
        return self.env.timeout(self.service)


def test_read_ahead_keeps_the_next_buffer_in_flight_and_waits_only_for_what_is_late():
    """2.5 MB in 1-MB buffers, 1-ms reads. Consumed at once: each buffer waits 1 ms for its read, the
    last is the 0.5 MB left. Consumed 2 ms apart: the next buffer is already there, no time waited."""
    for work, waited in ((0.0, 3e-3), (2e-3, 1e-3)):
        ra, dev, session, got = _read_ahead(2.5 * MB, work)
        assert got == [MB, MB, 0.5 * MB] and ra.left == 0 and ra.position == 6.5 * MB
        assert [r[2:] for r in dev.reads] == [(MB, 4 * MB), (MB, 5 * MB), (0.5 * MB, 6 * MB)]
        ev = session.instance.waits.events["backup read"]
        assert (ev.waits, ev.time) == (3, pytest.approx(waited))


MB = 2 ** 20


def _read_ahead(size: float, work: float):
    """A ReadAhead of `size` bytes from offset 4 MB in 1-MB buffers, consumed to its end `work` s apart:
    (it, the device, the session, the buffers got)."""
    env = simpy.Environment()
    dev, session = _LogDevice(env), _Session(env)
    session.instance = _Instance(env)
    ra = ReadAhead(session, dev, 4 * MB, size, MB, "backup read")
    got = []

    def proc():
        while ra.left > 0:
            got.append((yield from ra.next_buffer()))
            yield env.timeout(work)
    env.process(proc())
    env.run()
    return ra, dev, session, got


def test_a_batch_reader_submits_its_slots_at_once_and_pays_for_the_batch():
    env, dev, paths, session = _paths(0.0)
    reader = BatchReader(paths, session, "Disk file I/O Calibration", 700.0)
    reader.slots = 3
    got = []

    def proc():
        got.append((yield from reader.next_batch()))
        reader.slots = 0
        got.append((yield from reader.next_batch()))
    env.process(proc())
    env.run()
    assert got == [3, 0] and len(dev.reads) == 3 and paths.physical_reads == 3
    assert session.cpu_log == [(2_100.0, 0.25)]
    assert (reader.reads_done, reader.read_time) == (3, pytest.approx(3e-3))
    ev = paths.instance.waits.events["Disk file I/O Calibration"]
    assert (ev.waits, ev.time) == (1, pytest.approx(1e-3))


def test_a_latch_got_without_a_sleep_books_no_latch_wait():
    """Latches that never sleep (spin 0, sleep 0): three misses book 'db file sequential read' only, not
    a latch wait of no time for every get (that would count waits AWR never sees)."""
    env, dev, paths, session = _paths(0.0)
    _read(env, paths, session, 3)
    assert list(paths.instance.waits.events) == ["db file sequential read"]
    assert (paths.cbc.gets, paths.lru.gets) == (3, 3)


class _Dbwr:
    """Too many dirty buffers: a free buffer takes 2 ms."""

    def __init__(self, env):
        self.env, self.asked = env, 0

    def free_buffer(self):
        self.asked += 1
        yield self.env.timeout(2e-3)


def test_a_miss_waits_for_a_free_buffer_before_its_read_and_books_the_read_alone():
    """With DBWR behind, a miss first gets a free buffer (2 ms here), then reads (1 ms): the read is issued
    at 2 ms, the block is there at 3 ms, and 'db file sequential read' is the 1 ms of the read, not the 3 ms
    (the free buffer's wait is DBWR's to book). A hit needs no buffer."""
    env, dev, paths, session = _paths(0.0)
    paths.instance.dbwr = _Dbwr(env)
    _read(env, paths, session, 1)
    assert [r[0] for r in dev.reads] == [pytest.approx(2e-3)] and env.now == pytest.approx(3e-3)
    ev = paths.instance.waits.events["db file sequential read"]
    assert (ev.waits, ev.time) == (1, pytest.approx(1e-3))
    env, dev, paths, session = _paths(1.0)
    paths.instance.dbwr = _Dbwr(env)
    _read(env, paths, session, 1)
    assert paths.instance.dbwr.asked == 0 and env.now == 0.0


def test_read_ahead_of_less_than_a_buffer_reads_just_that():
    """0.3 MB to read in 1-MB buffers: one read of 0.3 MB at the offset, nothing past it."""
    ra, dev, _session, got = _read_ahead(0.3 * MB, 0.0)
    assert got == [0.3 * MB] and ra.left == 0
    assert [r[2:] for r in dev.reads] == [(0.3 * MB, 4 * MB)]


def _write_behind():
    """(env, device, session, WriteBehind of 2 slots) on 1-ms stub writes."""
    env = simpy.Environment()
    dev, session = _Device(env), _Session(env)
    session.instance = _Instance(env)
    return env, dev, session, WriteBehind(session, dev, 2, "direct path write")


def test_write_behind_keeps_at_most_its_slots_in_flight_and_books_only_the_time_it_waits():
    """Two slots, 1-ms writes, a job writing five blocks with no work between them: writes 1-2 go at 0;
    the third finds both slots taken and waits until they end at 1 ms (a wait of 1 ms), then 3 and 4 go;
    the fifth waits until 2 ms; drain() waits for it, to 3 ms. Three waits of 1 ms under the event, never
    more than two writes in flight; a drain with nothing in flight returns at once and books nothing."""
    env, dev, session, wb = _write_behind()
    peak = []

    def job():
        for _ in range(5):
            yield from wb.write(8192.0)
            peak.append(wb.in_flight)
        yield from wb.drain()
        yield from wb.drain()
    env.process(job())
    env.run()
    assert [r[0] for r in dev.reads] == pytest.approx([0.0, 0.0, 1e-3, 1e-3, 2e-3])
    assert [r[1:] for r in dev.reads] == [("write", 8192.0)] * 5
    assert max(peak) == 2 and wb.in_flight == 0 and env.now == pytest.approx(3e-3)
    ev = session.instance.waits.events["direct path write"]
    assert (ev.waits, ev.time) == (3, pytest.approx(3e-3))


def test_an_update_s_extra_instructions_are_paid_on_top_of_the_read():
    """sga_read(session, extra): the caller's own work per block (SLOB's update) goes into the same burst."""
    env, dev, paths, session = _paths(1.0)

    def proc():
        yield from paths.sga_read(session, 7_000.0)
    env.process(proc())
    env.run()
    assert session.cpu_log == [(COSTS.sql + CBC_INSTRUCTIONS + 7_000.0, 0.25)]


class _SlowSession(_Session):
    """CPU at 1e6 instructions a second: 3,000 instructions take 3 ms."""

    def cpu(self, instructions, sys_share):
        self.cpu_log.append((instructions, sys_share))
        return self.env.timeout(instructions / 1e6)


def test_an_async_reader_counts_a_read_done_but_not_processed_as_a_taken_slot():
    """Two slots, 1-ms reads, 3 ms of CPU a block: both first reads are done at 1 ms; processing the first
    to 4 ms frees one slot (third read at 4 ms); the second block, ready, issues nothing on taking it (its
    slot is still its own until processed): the fourth read goes at 7 ms, the fifth at 10 ms. Counting only
    the reads in flight would issue one more at 4 ms: three slots."""
    env, dev, paths, _s = _paths(0.0)
    session = _SlowSession(env)
    reader = AsyncReader(paths, session, 2, "direct path read", 3_000.0)

    def proc():
        for _ in range(3):
            yield from reader.next_block()
    env.process(proc())
    env.run(until=0.0105)
    assert [r[0] for r in dev.reads] == pytest.approx([0.0, 0.0, 4e-3, 7e-3, 10e-3])
    ev = paths.instance.waits.events["direct path read"]
    assert (ev.waits, ev.time) == (1, pytest.approx(1e-3))


def test_a_batch_reader_times_each_batch_from_its_own_submission():
    """Two batches of two 1-ms reads, back to back (no CPU time): each read takes 1 ms, 4 ms in all
    (timing the second batch from the first one's start would make it 6 ms)."""
    env, dev, paths, session = _paths(0.0)
    reader = BatchReader(paths, session, "Disk file I/O Calibration", 700.0)
    reader.slots = 2

    def proc():
        for _ in range(2):
            yield from reader.next_batch()
    env.process(proc())
    env.run()
    assert (reader.reads_done, reader.read_time) == (4, pytest.approx(4e-3))
    assert [r[0] for r in dev.reads] == pytest.approx([0.0, 0.0, 1e-3, 1e-3])


def test_write_behind_drain_waits_for_the_last_write_not_the_first_to_end():
    """Writes at 0 and 0.5 ms, 1 ms each, then drain(): it ends at 1.5 ms when the second is done, having
    been woken at 1 ms by the first (one wait of 1 ms booked)."""
    env, dev, session, wb = _write_behind()
    ended = []

    def job():
        yield from wb.write(8192.0)
        yield env.timeout(0.5e-3)
        yield from wb.write(8192.0)
        yield from wb.drain()
        ended.append(env.now)
    env.process(job())
    env.run()
    assert ended == [pytest.approx(1.5e-3)] and wb.in_flight == 0
    ev = session.instance.waits.events["direct path write"]
    assert (ev.waits, ev.time) == (1, pytest.approx(1e-3))
