"""The I/O paths of sim/os/filesystem.py by hand: the CPU each path charges per I/O (the
module's instruction counts added up), what goes to the disk on a page-cache hit and miss, the
share of buffered writes that read their page first, which file a read or write picks, and the
log file's wrap-around."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim.os.filesystem import PATHS, FileSystem, LogFile
from stubs import RecordingVolume


class _Cpu:
    def __init__(self, env):
        self.env, self.log = env, []

    def run(self, instructions, sys_share=0.0):
        self.log.append((instructions, sys_share))
        return self.env.timeout(0.0, value=0.0)   # (worth its time on a strand, as the dispatcher's)


def _Disk(env, capacity=None):
    return RecordingVolume(env, slot=3, capacity=capacity)


def _fs(path, block=2048.0, page=8192.0, async_io=True, files=4, seed=1):
    env = simpy.Environment()
    cpu, disk = _Cpu(env), _Disk(env)
    fs = FileSystem(env, cpu, disk, PATHS[path], files, block, async_io, np.random.default_rng(seed), page_size=page)
    return env, cpu, disk, fs


# a 2 KB block: the copy of 2 KB is 1,000 instructions; Quick I/O pays a tenth of the file system's 10,000
READ = {"raw": 20_000, "quick_io": 21_000, "cached_quick_io": 22_000, "vxfs_buffered": 31_000,
        "vxfs_direct": 30_000, "ufs_buffered": 31_000, "ufs_direct": 30_000, "linux_buffered": 31_000}


KAIO = {"raw", "quick_io", "cached_quick_io"}   # character devices: kernel async I/O


def test_the_paths_as_documented():
    """(file system, page cache, file lock, KAIO, reads take the lock, direct writes, library threads' async I/O)
    per path."""
    want = {"raw": (False, False, False, True, True, False, True), "quick_io": (True, False, False, True, True, False, True),
            "cached_quick_io": (True, True, False, True, True, True, True),
            "vxfs_buffered": (True, True, True, False, True, False, True),
            "vxfs_direct": (True, False, True, False, True, False, True),
            "ufs_buffered": (True, True, True, False, True, False, True),
            "ufs_direct": (True, False, True, False, True, False, True),
            "linux_buffered": (True, True, True, False, False, False, False)}
    got = {k: (p.file_system, p.caches, p.file_lock, p.kaio, p.readers_lock, p.direct_writes, p.library_aio)
           for k, p in PATHS.items()}
    assert got == want


def test_the_default_page_is_4_kb():
    env = simpy.Environment()
    disk = _Disk(env)
    fs = FileSystem(env, _Cpu(env), disk, PATHS["ufs_buffered"], 1, 2048.0, False, np.random.default_rng(0))
    env.process(fs.read(False))
    env.run()
    assert [d[1:3] for d in disk.log] == [("read", 4096.0)] and fs.page_blocks == 2


@pytest.mark.parametrize("path", ["raw", "quick_io", "cached_quick_io"])
def test_write_then_charges_the_write_cpu_as_system_time(path):
    env, cpu, disk, fs = _fs(path, async_io=False)
    ended = []
    fs.write_then(0, lambda: ended.append(env.now))
    env.run()
    assert cpu.log == [(READ[path], 1.0)] and [d[1:3] for d in disk.log] == [("write", 2048.0)] and ended == [1.0]


def test_a_read_releases_its_file_lock_for_a_later_write():
    env, cpu, disk, fs = _fs("ufs_buffered", files=1)
    done = []

    def later_writer():
        yield env.timeout(0.5)
        yield from fs.write(0)
        done.append(env.now)
    env.process(fs.read(True))     # a page-cache hit: in and out of the lock at 0
    env.process(fs.read(False))    # a miss: holds the lock shared until its disk read ends at 1 s
    env.process(later_writer())
    env.run()
    assert done == [pytest.approx(2.0)]    # waits for the miss only, then writes 1 s


@pytest.mark.parametrize("path", sorted(PATHS))
def test_cpu_per_read_and_write_adds_up_the_path(path):
    for async_io in (True, False):
        env, cpu, disk, fs = _fs(path, async_io=async_io)
        env.process(fs.read(False))
        env.process(fs.write(0))
        env.run()
        # library threads emulate async I/O where the kernel cannot (no KAIO) on Solaris: 15,000 per write; Oracle on
        # Linux writes file system files synchronously
        threads = async_io and path not in KAIO and path != "linux_buffered"
        assert cpu.log == [(READ[path], 1.0), (READ[path] + (15_000 if threads else 0), 1.0)]
        assert fs.async_threads == threads


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_page_cache_hit_costs_half_a_syscall_a_lookup_and_the_copy_and_no_disk(path):
    env, cpu, disk, fs = _fs(path)
    env.process(fs.read(True))
    env.run()
    if PATHS[path].caches:
        assert cpu.log == [(10_000 + 8_000 + 1_000, 1.0)] and disk.log == []
        assert (fs.cache_hits, fs.reads) == (1, 0)
    else:   # nothing to hit: a disk read of the block
        assert cpu.log == [(READ[path], 1.0)] and [d[1:3] for d in disk.log] == [("read", 2048)]
        assert (fs.cache_hits, fs.reads) == (0, 1)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_miss_reads_a_whole_page_where_the_path_caches_and_the_block_otherwise(path):
    for block, page in ((2048.0, 8192.0), (8192.0, 4096.0)):
        env, cpu, disk, fs = _fs(path, block=block, page=page)
        env.process(fs.read(False))
        env.run()
        want = max(block, page) if PATHS[path].caches else block
        assert [d[1:3] for d in disk.log] == [("read", want)]
        assert fs.page_blocks == max(1, int(page // block))


@pytest.mark.parametrize("path", ["raw", "ufs_buffered"])
def test_the_cpu_up_to_a_read_is_the_calls_burst_and_the_call_is_timed_from_its_share_of_it(path):
    """A session's 180,000 instructions (a tenth in the kernel) up to the read and the call's own 20,000 or 31,000
    are one burst, at their blended kernel share; after 3 ms in the run queue and 1 ns an instruction, the call
    began its share of the burst before the burst ended, so its wait holds neither the queue nor the user's CPU."""
    class QueuedCpu(_Cpu):
        def run(self, instructions, sys_share=0.0):
            self.log.append((instructions, sys_share))
            return self.env.timeout(3e-3 + instructions * 1e-9, value=instructions * 1e-9)
    env = simpy.Environment()
    cpu = QueuedCpu(env)
    fs = FileSystem(env, cpu, _Disk(env), PATHS[path], 4, 2048.0, True, np.random.default_rng(1), page_size=8192.0)
    call = READ[path]
    proc = env.process(fs.read(False, None, 180_000.0, 0.1))
    env.run()
    assert cpu.log == [(180_000.0 + call, pytest.approx((18_000.0 + call) / (180_000.0 + call)))]
    burst_end = 3e-3 + (180_000 + call) * 1e-9
    assert proc.value == pytest.approx(burst_end - call * 1e-9, abs=1e-15)


@pytest.mark.parametrize("path, end", [("ufs_buffered", 2.0), ("linux_buffered", 1.5), ("raw", 1.5)])
def test_a_read_is_timed_from_its_call_and_waits_for_a_write_to_its_file_only_where_readers_lock(path, end):
    """One file; a write holds its lock from 0 to 1 s (its disk write, 1 s; the page is cached: no read first).
    A read called at 0.5 s (no CPU time: the stub's strand is instant) begins then. On UFS it waits for the lock
    and reads 1-2 s; Linux readers take no lock and raw has none: it reads 0.5-1.5. Either way it began at 0.5:
    the lock's wait is part of the read's."""
    env, cpu, disk, fs = _fs(path, files=1)
    out = []

    def reader():
        yield env.timeout(0.5)
        began = yield from fs.read(False)
        out.append((began, env.now))
    env.process(fs.write(0))
    env.process(reader())
    env.run()
    assert out == [(0.5, end)]


def test_the_share_of_partial_writes_that_read_their_page_is_the_page_cache_miss_share():
    n = 4000
    for hit in (0.0, 0.3, 0.8, 1.0):
        env, cpu, disk, fs = _fs("ufs_buffered")
        fs.set_write_page_hit(hit)
        for i in range(n):
            env.process(fs.write(i))
        env.run()
        reads = sum(1 for d in disk.log if d[1] == "read")
        assert reads == fs.pages_read_for_writes and fs.writes == n
        sd = (n * hit * (1 - hit)) ** 0.5
        assert abs(reads - n * (1 - hit)) <= 4 * sd + 1e-9
        assert fs.lock_report()["write_page_reads_pct"] == pytest.approx(100.0 * reads / n)
    # a chance outside [0, 1] is clamped
    env, cpu, disk, fs = _fs("ufs_buffered")
    fs.set_write_page_hit(1.7)
    assert fs.write_page_hit == 1.0
    fs.set_write_page_hit(-0.2)
    assert fs.write_page_hit == 0.0


@pytest.mark.parametrize("block, page, reads", [(2048.0, 8192.0, True), (8192.0, 8192.0, False),
                                                 (16384.0, 8192.0, False)])
def test_only_a_write_of_less_than_a_page_reads_the_page(block, page, reads):
    env, cpu, disk, fs = _fs("vxfs_buffered", block=block, page=page)
    fs.set_write_page_hit(0.0)
    env.process(fs.write(0))
    env.run()
    want = ([("read", page)] if reads else []) + [("write", max(block, page))]
    assert [d[1:3] for d in disk.log] == want
    # the page read and its write are at one place (the volume's random one); a whole write goes anywhere
    assert [d[3] for d in disk.log] == ([3 * page, 3 * page] if reads else [None])


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_write_goes_to_disk_as_the_whole_pages_it_dirtied_where_it_goes_through_the_page_cache(path):
    """The page cache keeps one dirty bit a page: a 2 KB block written into an 8 KB page is
    flushed as the 8 KB page (an 8 KB block on 4 KB pages as its two pages); a direct path and
    Cached Quick I/O's direct writes put the block alone on disk. write() and write_then() alike."""
    for block, page in ((2048.0, 8192.0), (8192.0, 4096.0)):
        p = PATHS[path]
        want = max(block, page) if p.caches and not p.direct_writes else block
        env, cpu, disk, fs = _fs(path, block=block, page=page)
        fs.set_write_page_hit(1.0)
        env.process(fs.write(0))
        fs.write_then(1, lambda: None)
        env.run()
        assert [d[1:3] for d in disk.log] == [("write", want)] * 2


def test_reads_pick_files_within_their_range_wrapping_at_the_last_file():
    env, cpu, disk, fs = _fs("raw", files=5)
    picked = {fs._pick((3, 4)) for _ in range(400)}
    assert picked == {3, 4, 0, 1}
    assert {fs._pick(None) for _ in range(400)} == {0, 1, 2, 3, 4}
    assert set(fs.pick_files(300)) == {0, 1, 2, 3, 4} and len(fs.pick_files(7)) == 7
    assert fs.pick_files(3, [(1, 1), (4, 1), (4, 2)])[:2] == [1, 4]


def test_a_write_locks_the_file_it_is_given_modulo_the_files_and_a_read_of_another_does_not_wait():
    """Two files, 1 s per I/O: a write to file 5 (= file 1 of 2) at 0 holds file 1 until 1 s.
    A read of file 1 at 0.5 s waits until 1 s; a read of file 0 does not wait."""
    for read_file, end, wait in ((1, 2.0, 0.5), (0, 1.5, 0.0)):
        env, cpu, disk, fs = _fs("ufs_direct", files=2)
        done = []

        def reader():
            yield env.timeout(0.5)
            yield from fs.read(False, files=(read_file, 1))
            done.append(env.now)

        def other():
            yield env.timeout(0.5)
            yield from fs.read(False, files=(0, 1))   # file 0: never waits
        env.process(fs.write(5))
        env.process(reader())
        env.process(other())
        env.run()
        assert done == [pytest.approx(end)]
        rep = fs.lock_report()
        assert rep["file_lock_read_wait_ms"] == pytest.approx(1000.0 * wait / 2)   # the mean of two reads
        # file 1 held by the writer 1 s of the run, file 0 never: the mean over the two files
        assert rep["file_lock_write_held_pct"] == pytest.approx(100.0 * 1.0 / env.now / 2)


def test_reset_stats_forgets_what_came_before():
    env, cpu, disk, fs = _fs("ufs_buffered", files=1)
    fs.set_write_page_hit(0.0)
    env.process(fs.write(0))
    env.process(fs.read(True))
    env.process(fs.read(False))
    env.run()
    assert (fs.reads, fs.writes, fs.cache_hits, fs.pages_read_for_writes) == (1, 1, 1, 1)
    assert fs.lock_report()["file_lock_read_wait_ms"] > 0
    fs.reset_stats()
    assert (fs.reads, fs.writes, fs.cache_hits, fs.pages_read_for_writes) == (0, 0, 0, 0)
    rep = fs.lock_report()
    assert rep["file_lock_read_wait_ms"] == 0.0 and rep["file_lock_write_wait_ms"] == 0.0
    assert rep["write_page_reads_pct"] == 0.0


def test_write_page_reads_are_reported_only_where_writes_can_read_pages():
    assert "write_page_reads_pct" not in _fs("ufs_direct")[3].lock_report()
    assert "write_page_reads_pct" in _fs("ufs_buffered")[3].lock_report()
    assert _fs("raw")[3].lock_report() == {}


def _log(path, sizes, size=None, capacity=None):
    env = simpy.Environment()
    cpu, disk = _Cpu(env), _Disk(env, capacity)
    log = LogFile(env, cpu, disk, PATHS[path], 8192.0, size=size)

    def lgwr():
        for n in sizes:
            yield log.submit("write", n, sequential=True)
    env.process(lgwr())
    env.run()
    return cpu.log, [d[1:] for d in disk.log], log


def test_the_log_pays_file_system_and_copy_cpu_by_path():
    # buffered: 10,000 + 500 per KB copied; Cached Quick I/O: 1,000 + the copy; raw: nothing
    assert _log("ufs_buffered", [3072])[0] == [(10_000 + 1_500, 1.0)]
    assert _log("cached_quick_io", [3072])[0] == [(1_000 + 1_500, 1.0)]
    assert _log("quick_io", [3072])[0] == [(1_000, 1.0)]
    assert _log("raw", [3072])[0] == [(0.0, 1.0)]
    assert _log("raw", [3072])[1] == [("write", 3072, 0.0, True)]   # sequential, at its place in the log


def test_a_buffered_log_reads_its_new_pages_at_their_place_and_never_straddles_the_log_end():
    """A 16 KB log of 8 KB pages. 3 KB: page 0 read at 0, written. 5 KB (3-8 KB): ends at a page
    boundary: no read, page 0 rewritten. 7 KB (8-15 KB): page 1 read and written at 8 KB. 3 KB:
    only 1 KB is left before the log's end, so it begins the next circle (16-19 KB: page 2, at 0)."""
    _cpu, io, log = _log("ufs_buffered", [3072, 5120, 7168, 3072], size=16384.0)
    assert io == [("read", 8192.0, 0.0, False), ("write", 8192.0, 0.0, True),
                  ("write", 8192.0, 0.0, True),
                  ("read", 8192.0, 8192.0, False), ("write", 8192.0, 8192.0, True),
                  ("read", 8192.0, 0.0, False), ("write", 8192.0, 0.0, True)]
    assert all(off + n <= 16384.0 for _k, n, off, _s in io)
    assert log.position == 16384 + 3072
    # a write that exactly fills the log's end stays there; a log smaller than a page holds one page
    assert [o for _k, _n, o, _s in _log("ufs_buffered", [8192, 8192, 8192], size=16384.0)[1]] == [0.0, 8192.0, 0.0]
    assert _log("ufs_buffered", [8192, 8192], size=100.0)[2].size == 8192.0
    # without a size, the device's capacity is the wrap
    _cpu, io, _ = _log("ufs_buffered", [3072, 14336], capacity=8192.0 * 3)
    assert io[2] == ("read", 8192.0, 16384.0, False)


def test_an_unbuffered_log_file_wraps_in_its_circle_of_logs_too():
    """Through a direct path the log's writes go to their places in the circle of logs (16 KB
    here: the third 8 KB write is back at 0), not on along the whole device."""
    _cpu, io, log = _log("quick_io", [8192, 8192, 8192, 5000, 8192], size=16384.0)
    assert [(n, o) for _k, n, o, _s in io] == [(8192, 0.0), (8192, 8192.0), (8192, 0.0), (5000, 8192.0),
                                                (8192, 0.0)]   # 3 KB left at 13 KB: the next circle
    assert log.position == 2 * 16384 + 8192


def test_an_append_is_worth_its_wait_for_a_strand():
    """The path's CPU (10,000 + 500 per KB copied: 11,500 instructions, 11.5 us at 1 ns each) waits 3 ms for a
    strand first: the append's event is worth those 3 ms (the writer's wait, not the log's), buffered or not."""
    class QueuedCpu:
        def __init__(self, env):
            self.env = env

        def run(self, instructions, sys_share=0.0):
            return self.env.timeout(3e-3 + instructions * 1e-9, value=instructions * 1e-9)
    for path in ("ufs_buffered", "quick_io"):
        env = simpy.Environment()
        log = LogFile(env, QueuedCpu(env), _Disk(env), PATHS[path], 8192.0)
        ev = log.submit("write", 3072, sequential=True)
        env.run()
        assert ev.value == pytest.approx(3e-3, abs=1e-12)


def test_a_log_passes_anything_but_appends_straight_to_the_device():
    env = simpy.Environment()
    cpu, disk = _Cpu(env), _Disk(env)
    log = LogFile(env, cpu, disk, PATHS["ufs_buffered"], 8192.0)
    log.submit("read", 4096.0, 12288.0, True)
    log.submit("write", 4096.0, 12288.0, True)
    log.submit("write", 4096.0)
    env.run()
    assert cpu.log == [] and log.position == 0.0
    assert [d[1:] for d in disk.log] == [("read", 4096.0, 12288.0, True), ("write", 4096.0, 12288.0, True),
                                        ("write", 4096.0, None, False)]


def test_a_write_given_no_file_locks_a_file_picked_uniformly():
    """write() with no file (a writer that does not order its writes by file) takes the lock of a file drawn
    uniformly, as a read does: 4,000 writes over 4 files lock each about 1,000 times (binomial, p = 1/4:
    within 4 sd = 4 x 27), none left out."""
    n = 4000
    env, cpu, disk, fs = _fs("ufs_direct", files=4)
    for _ in range(n):
        env.process(fs.write())
    env.run()
    counts = [lock.stats()["write_acquires"] for lock in fs.locks]
    sd = (n * 0.25 * 0.75) ** 0.5
    assert sum(counts) == n and all(abs(c - n / 4) <= 4 * sd for c in counts)


def test_a_log_size_that_is_not_whole_pages_is_cut_to_whole_pages():
    """Logs of 20,000 bytes on 8 KB pages hold two whole pages (16 KB): through the page cache a third
    8 KB append is back at the start. A circle of 20,000 bytes would begin its next turn mid-page, at byte
    20,000: the append's two pages written at 16 KB, past the logs' end."""
    _cpu, io, log = _log("ufs_buffered", [8192, 8192, 8192], size=20_000.0)
    assert log.size == 16384.0
    assert [(k, n, o) for k, n, o, _s in io] == [("write", 8192.0, 0.0), ("write", 8192.0, 8192.0),
                                                  ("write", 8192.0, 0.0)]
    assert all(off + n <= log.size for _k, n, off, _s in io)
