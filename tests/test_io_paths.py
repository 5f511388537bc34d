"""The database's I/O: the buffer-cache model against an exact LRU, memory limits, and the
file-system paths' locking and caching."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from sim import scenario
from sim.analytic import lru_simulate
from sim.config import ConfigError
from sim.db.buffer_cache import BufferCache, Segment
from sim.os.filesystem import PATHS, FileSystem, LogFile
from sim.os.rwlock import RWLock as FileLock
from sim.run import run
from stubs import InstantCpu as _Cpu
from stubs import RecordingVolume as _Disk
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


def test_hash_clusters_drop_the_id_index_leaves():
    """Hash-clustered stock and customer: a lookup by id reads the table block only, so the
    cold touches per transaction fall by exactly the id-index leaves (New-Order: 10 stock + 1
    customer leaf), the by-name lookups keep theirs, and no cache size misses more."""
    assert tpcc_blocks.cold_touches("new_order", 2048, True) == {"stock": 10.0, "customer": 1.0}
    assert tpcc_blocks.cold_touches("payment", 2048, True)["customer_index"] == 0.6
    plain = tpcc_blocks.segments(200, 2048, STANDARD_MIX, LOGICAL_READS)
    hashed = tpcc_blocks.segments(200, 2048, STANDARD_MIX, LOGICAL_READS, hash_clusters=True)
    assert {s.name: s.touches for s in hashed}["stock_index"] == 0.0
    total = lambda segs: sum(s.touches for s in segs)  # noqa: E731
    assert total(hashed) == pytest.approx(total(plain))      # the gets stay: they move to hot blocks
    for blocks in (51_200, 1_310_720):                        # 100 MB and 2.5 GB of 2 KB buffers
        p, h = BufferCache(plain, blocks), BufferCache(hashed, blocks)
        assert h.hit_ratio() >= p.hit_ratio()
        assert h.odds["stock"].miss <= p.odds["stock"].miss   # the leaves' room holds table blocks


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
    """The UE10000's 6 GB under a 64-bit kernel (500 MB, not the 32-bit 400 MB) and a 33 MB shared pool
    and log buffer: a 6 GB cache makes 6,677 MB locked, 6.52 GB over 6.00; a 5 GB one maps whole (the 200
    warehouses are larger) and leaves the page cache 6,144 - 5,709 committed - the 96 MB free reserve."""
    r = run(_ue(**{"database.db_cache": "6 GB", "database.oracle_bits": 64, "os.bits": 64}))
    assert r.status == "out_of_memory" and r.tpm is None
    assert r.message.startswith("kernel and SGA (6,677.0 MB, locked in memory: kernel 500.0, ")
    assert r.message.endswith(") exceed physical memory 6,144.0 MB by 533.0 MB")
    ok = run(_ue(**{"database.db_cache": "5 GB", "database.oracle_bits": 64, "os.bits": 64}))
    assert ok.status == "ok" and ok.tpm > 0
    mem = ok.extra["memory"]
    assert (mem["kernel_mb"], mem["sga_pools_mb"], mem["sga_buffer_cache_mb"]) == (500.0, 33.0, 5120.0)
    assert mem["committed_mb"] == 500 + 33 + 5120 + mem["oracle_background_mb"] + mem["oracle_server_mb"] == 5709
    assert mem["overcommit_mb"] == 0.0 and mem["page_cache_mb"] == 6144 - 5709 - 96


def test_cached_quick_io_reads_from_the_page_cache_and_raw_does_not():
    raw = run(_ue(**{"os.filesystem": "raw"}))
    cqio = run(_ue(**{"os.filesystem": "cached_quick_io"}))
    assert raw.extra["os_cache_hits_per_s"] == 0
    assert cqio.extra["os_cache_hits_per_s"] > 0.5 * cqio.extra["physical_reads_per_s"]
    assert cqio.tpm > raw.tpm


class _Files:
    """Datafiles for DBWR alone: each write takes 10 ms; remembers the batch sizes and ranges DBWR
    asks files for and the order of the files written. A buffer goes to the first file of its
    range (0 with none) unless `pick(n)` picks the files."""

    def __init__(self, env, pick=None):
        self.env, self.pick, self.batches, self.asked, self.order = env, pick, [], [], []

    def pick_files(self, n, ranges=None):
        self.batches.append(n)
        self.asked.append(None if ranges is None else list(ranges))
        if self.pick is not None:
            return self.pick(n)
        return [0 if r is None else r[0] for r in (ranges or [None] * n)]

    def write_then(self, file, done):
        self.order.append(file)
        self.env.timeout(0.01).callbacks.append(lambda _e: done())


def _fs(path, page_hit, files=2):
    env = simpy.Environment()
    disk = _Disk(env)
    fs = FileSystem(env, _Cpu(env), disk, PATHS[path], files, 2048, True, np.random.default_rng(1), page_size=8192)
    fs.set_write_page_hit(page_hit)
    return env, disk, fs


def test_buffered_write_of_part_of_an_uncached_page_reads_it_first_under_the_file_lock():
    env, disk, fs = _fs("ufs_buffered", 0.0)
    env.process(fs.write(0))

    def reader():
        yield env.timeout(0.5)
        yield from fs.read(False)
    env.process(reader())
    env.run()
    # page read (8 KB), the page written back (8 KB), then the reader, who waited for both, fills a page
    assert [d[:3] for d in disk.log] == [(0.0, "read", 8192), (1.0, "write", 8192), (2.0, "read", 8192)]
    assert fs.lock_report()["write_page_reads_pct"] == 100.0


@pytest.mark.parametrize("path, page_hit, written", [("ufs_buffered", 1.0, 8192), ("cached_quick_io", 0.0, 2048),
                                                     ("ufs_direct", 0.0, 2048)])
def test_no_read_before_write_when_cached_or_written_directly(path, page_hit, written):
    env, disk, fs = _fs(path, page_hit)
    env.process(fs.write(1))
    env.run()
    assert [d[:3] for d in disk.log] == [(0.0, "write", written)]   # a cached page goes out whole


@pytest.mark.parametrize("path", ["raw", "cached_quick_io", "ufs_buffered", "vxfs_direct"])
def test_write_then_does_what_write_does_and_calls_back_at_its_end(path):
    """DBWR's callback form of a write (chained callbacks where no lock or page read is
    involved, a process otherwise) issues the same disk I/O at the same times and ends when
    the generator form does."""
    ends = {}
    logs = {}
    for form in ("generator", "callback"):
        env, disk, fs = _fs(path, 0.0)
        if form == "generator":
            def writer():
                yield from fs.write(0)
                ends[form] = env.now
            env.process(writer())
        else:
            fs.write_then(0, lambda: ends.__setitem__(form, env.now))
        env.run()
        logs[form] = (disk.log, fs.writes)
    assert logs["callback"] == logs["generator"] and ends["callback"] == ends["generator"] > 0.0


def _log_writes(path, sizes):
    env = simpy.Environment()
    disk = _Disk(env)
    log = LogFile(env, _Cpu(env), disk, PATHS[path], 8192)

    def lgwr():
        for n in sizes:
            yield log.submit("write", n, sequential=True)
    env.process(lgwr())
    env.run()
    return [(kind, n) for _, kind, n, _o, _s in disk.log]


def test_buffered_redo_writes_whole_pages_and_reads_each_new_partial_page_first():
    """3 KB, 3 KB, 3 KB, 8 KB appended to a log of 8 KB pages: the first write starts page 0
    (read it, write it), the second stays in it (cached: rewrite it), the third and fourth
    each end in a new page they do not cover whole (read it, write both pages touched)."""
    assert _log_writes("ufs_buffered", [3072, 3072, 3072, 8192]) == [
        ("read", 8192), ("write", 8192), ("write", 8192),
        ("read", 8192), ("write", 16384), ("read", 8192), ("write", 16384)]


@pytest.mark.parametrize("path", ["vxfs_direct", "cached_quick_io"])
def test_direct_redo_writes_just_the_redo(path):
    assert _log_writes(path, [3072, 3072, 8192]) == [("write", 3072), ("write", 3072), ("write", 8192)]


def test_redo_on_a_buffered_file_lengthens_log_file_sync_and_raw_writes_to_the_drive():
    from sim.system import System
    base = {"os.filesystem": "vxfs_direct", "database.db_cache": "1 GB"}
    plain = System(_ue(**base))   # raw, the default: LGWR writes to the redo drive itself
    assert plain.instance.lgwr.device is plain.devices["redo"]
    as_file = System(_ue(**base, **{"os.redo_filesystem": "ufs_buffered"}))
    assert isinstance(as_file.instance.lgwr.device, LogFile) and as_file.instance.lgwr.device.device is as_file.devices["redo"]
    raw = run(_ue(**base))
    buffered = run(_ue(**base, **{"os.redo_filesystem": "ufs_buffered"}))
    sync = {r: {e["event"]: e["avg_ms"] for e in x.to_dict()["top_events"]}["log file sync"]
            for r, x in (("raw", raw), ("buffered", buffered))}
    assert sync["buffered"] > sync["raw"]
    with pytest.raises(ConfigError) as err:
        _ue(**{"os.redo_filesystem": "zfs"})
    assert "os.redo_filesystem" in str(err.value)


def test_dbwr_writes_a_backlog_in_bounded_batches_each_in_file_order():
    """600 dirty buffers at once: one batch of WRITE_BATCH, then the rest, each sorted by file."""
    from sim.db.dbwr import WRITE_BATCH, DatabaseWriter
    from sim.metrics import WaitEvents

    env = simpy.Environment()
    rng = np.random.default_rng(3)
    files = _Files(env, pick=lambda n: rng.integers(7, size=n).tolist())
    dbwr = DatabaseWriter(env, _Cpu(env), files, 10_000, True, 0, WaitEvents())
    dbwr.dirty(600)
    env.run(until=10.0)
    first, rest = files.order[:WRITE_BATCH], files.order[WRITE_BATCH:]
    assert files.batches == [WRITE_BATCH, 600 - WRITE_BATCH] and len(files.order) == 600
    assert first == sorted(first) and rest == sorted(rest) and rest != sorted(files.order)[WRITE_BATCH:]


def test_each_segment_gets_its_own_consecutive_files_as_many_as_its_size_needs():
    from sim.db.layout import DatafileLayout
    mb = 2**20
    layout = DatafileLayout(10, 100 * mb, {"big": 350 * mb, "small": 1.0, "exact": 200 * mb})
    assert layout.ranges == {"big": (0, 4), "small": (4, 1), "exact": (5, 2)} and not layout.uniform
    assert DatafileLayout(10, None, {"big": 350 * mb}).uniform          # no size: any block in any file
    grown = DatafileLayout(3, 1 * mb, {"a": 50 * mb, "b": 10 * mb})     # files too small: they grow to fit
    assert sum(n for _, n in grown.ranges.values()) <= 3 and all(n >= 1 for _, n in grown.ranges.values())


def test_segments_fill_the_files_exactly_and_files_grow_only_as_far_as_needed():
    """Segments that need every file (3 + 7 of 10) keep their sizes; as many segments as files get one
    each, an empty segment one too; 30 + 10 MB on four 1-MB files: the files grow in 5% steps to the
    first size that fits (10.4 MB: 3 + 1 files, all four used, not 2 + 1 at twice the size)."""
    from sim.db.layout import DatafileLayout
    mb = 2**20
    full = DatafileLayout(10, 100 * mb, {"a": 300 * mb, "b": 700 * mb})
    assert full.ranges == {"a": (0, 3), "b": (3, 7)} and full.of("b") == (3, 7)
    assert DatafileLayout(3, 100 * mb, {"a": 1.0, "b": 50 * mb, "empty": 0.0}).ranges == \
        {"a": (0, 1), "b": (1, 1), "empty": (2, 1)}
    assert DatafileLayout(2, 100 * mb, {"a": 1.0, "b": 1.0, "c": 1.0}).uniform     # more segments than files
    assert DatafileLayout(4, 1 * mb, {"a": 30 * mb, "b": 10 * mb}).ranges == {"a": (0, 3), "b": (3, 1)}


def test_a_read_waits_only_for_writes_to_its_own_files():
    """The single-writer lock is per file: a write to file 0 (1 s) delays a read of file 0
    issued at 0.5 s to 1.0 s, while a read of files 2-3 goes straight to disk."""
    env, disk, fs = _fs("vxfs_direct", 1.0, files=4)
    env.process(fs.write(0))
    done = {}

    def reader(name, files):
        yield env.timeout(0.5)
        yield from fs.read(False, files)
        done[name] = env.now
    env.process(reader("same", (0, 1)))
    env.process(reader("other", (2, 2)))
    env.run()
    assert done == {"same": 2.0, "other": 1.5}
    assert all(2 <= f <= 3 for f in fs.pick_files(50, [(2, 2)] * 50))


def test_dbwr_writes_each_buffer_in_the_files_of_its_segment_oldest_first():
    from sim.db.dbwr import DatabaseWriter
    from sim.metrics import WaitEvents

    env = simpy.Environment()
    files = _Files(env)
    dbwr = DatabaseWriter(env, _Cpu(env), files, 10_000, True, 0, WaitEvents())
    dbwr.dirty(2)                      # before any range is known: any file
    dbwr.dirty(3, (5, 2))
    dbwr.dirty(1, (9, 1))
    env.run(until=5.0)
    assert files.asked == [[None, None, (5, 2), (5, 2), (5, 2), (9, 1)]]


def test_dbwr_sorts_the_lru_buffers_of_a_batch_by_file_and_writes_checkpoint_buffers_in_the_order_dirtied():
    """A batch: the buffers the LRU scan hands over sorted by file (one file after another over
    the file locks), then those of the checkpoint queue in the order they were first dirtied
    (8i queues dirty buffers by low RBA and writes them in that order: J. Lewis, "How have the
    log_checkpoint_interval and log_checkpoint_timeout changed from version 7?", Oracle Users'
    Co-Operative FAQ, 2002): spread over files, not grouped."""
    from sim.db.dbwr import DatabaseWriter
    from sim.metrics import WaitEvents

    env = simpy.Environment()
    files = _Files(env)
    dbwr = DatabaseWriter(env, _Cpu(env), files, 10_000, True, 0, WaitEvents())
    for f, ck in [(7, True), (3, False), (2, True), (9, True), (1, False), (3, True), (0, False), (8, True)]:
        dbwr.dirty(1, (f, 1), checkpoint=ck)
    env.run(until=5.0)
    assert files.order == [0, 1, 3] + [7, 2, 9, 3, 8]
    assert dbwr.written_total == dbwr.dirtied_total == 8


@pytest.mark.parametrize("max_writes", [1, 2, 0])
def test_dbwr_max_writes_caps_what_is_outstanding_and_a_sorted_batch_drains_file_by_file(max_writes):
    """40 dirty buffers over 4 locked files, each write 1 s on a disk without queueing. Sorted by
    file, N writes in flight queue on one file's lock except where two files meet: the batch
    takes 40 s with one in flight, 40 - 3 with two (one overlap per file boundary), and as
    long as the busiest file's share with no cap (the files drain side by side)."""
    from sim.db.dbwr import DatabaseWriter
    from sim.metrics import WaitEvents
    env, disk, fs = _fs("vxfs_direct", 1.0, files=4)
    outstanding, peak = [0], [0]
    write = fs.write

    def counted(file=None):
        outstanding[0] += 1
        peak[0] = max(peak[0], outstanding[0])
        yield from write(file)
        outstanding[0] -= 1
    fs.write = counted
    dbwr = DatabaseWriter(env, _Cpu(env), fs, 10_000, True, 0, WaitEvents(), max_writes=max_writes)
    dbwr.dirty(40)
    env.run(until=100.0)
    assert dbwr.writes == 40
    starts = [t for t, kind, *_ in disk.log if kind == "write"]
    drain = max(starts) + 1.0 - min(starts)
    per_file = [s["write_acquires"] for s in (lock.stats() for lock in fs.locks)]
    assert min(per_file) >= 2
    expected = {1: 40.0, 2: 37.0, 0: float(max(per_file))}[max_writes]
    assert drain == pytest.approx(expected)
    assert peak[0] == (max_writes or 40)


def test_dbwr_max_writes_must_not_be_negative():
    with pytest.raises(ConfigError) as err:
        _ue(**{"database.dbwr_max_writes": -1})
    assert "database.dbwr_max_writes" in str(err.value)


def test_the_page_cache_policy_reaches_both_level2_forms():
    """os.page_replacement is passed down whether pages hold one block or several: level 1 (the
    buffer cache) is the same LRU either way, and a FIFO page cache well above it finds fewer of
    its misses than an LRU one (a hit does not keep a page); per block, it is
    che_two_level_grouped with each block its own unit."""
    from sim.analytic import che_two_level_grouped

    rates = 1.0 / np.arange(1, 2001) ** 0.8
    seg = Segment("t", rates, np.ones_like(rates))
    for page_blocks in (1, 4):
        lru = BufferCache([seg], 100.0, 800.0, page_blocks)
        fifo = BufferCache([seg], 100.0, 800.0, page_blocks, "fifo")
        assert fifo.odds["t"].miss == pytest.approx(lru.odds["t"].miss, rel=1e-9), page_blocks
        assert fifo.odds["t"].os_hit < lru.odds["t"].os_hit - 0.005, page_blocks
    h1, h2 = che_two_level_grouped(rates, 100.0, 800.0, np.arange(rates.size), policy="fifo")
    expected = float(np.dot(rates * (1.0 - h1), h2) / np.dot(rates, 1.0 - h1))
    assert BufferCache([seg], 100.0, 800.0, 1, "fifo").odds["t"].os_hit == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("profile, storage", [("ue10000", "data"), ("opteron-2way", "external"), ("rx5670", "data"),
                                              ("t5220", "array")])
def test_a_database_placed_nowhere_goes_on_the_profiles_database_storage_redo_with_it(profile, storage):
    """Unplaced, the datafiles go on the profile's first device (its database storage, not the boot drive or
    the separate redo group) and the online logs with them, as Oracle Managed Files put them."""
    from sim.system import System
    s = System(scenario.load(None, {"users": 4, "database.db_cache": "1 GB"}, profile=profile, workload="tpcc"))
    assert s.datafiles.volume is s.devices[storage]
    assert s.instance.lgwr.device is s.devices[storage]
    placed = System(scenario.load(None, {"users": 4, "database.db_cache": "1 GB", "database.redo_device": "redo"},
                                  profile="ue10000", workload="tpcc"))
    assert placed.datafiles.volume is placed.devices["data"] and placed.instance.lgwr.device is placed.devices["redo"]


@pytest.mark.parametrize("workload, params", [
    ("ctas", {"table_size": "200 MB"}), ("create_index", {"table_size": "200 MB"}),
    ("rman", {"channels": 1, "datafiles_mb": [50.0], "compressed": False}),
    ("sqlldr", {"data_size": "50 MB", "direct": True})])
def test_a_batch_job_placed_nowhere_runs_on_the_database_storage_of_any_profile(workload, params):
    """The T-series names ('array', 'internal') are not defaults: on the UE10000 the job's data is on its
    36-drive stripe; only SQL*Loader's input file goes apart, on the one other device."""
    r = run(scenario.load(None, params, profile="ue10000", workload=workload))
    assert r.status == "ok" and r.devices["data"]["iops"] > 0
    assert (r.devices["redo"]["iops"] > 0) == (workload == "sqlldr")


def test_a_lightly_loaded_server_has_no_run_queue_from_dbwr_batches():
    """DBWR is one process: with kernel async I/O (raw, Quick I/O) it makes its writes' system calls itself, one
    after another. Each of a batch's up to 256 writes had been a CPU burst of its own, all submitted at once, so one
    DBWR stood in vmstat's run queue as hundreds of runnable processes (rx5670 3% busy: r 0.51; found by an audit
    of the reports against the operational laws)."""
    sc = scenario.load(None, {"users": 2000, "warehouses": 6500, "sessions": 64, "hash_clusters": True,
                              "database.db_cache": "24 GB", "database.redo_device": "redo", "run.warmup": "15 s",
                              "run.batch": "2 s", "run.min_batches": 10, "run.max_time": "10 s"},
                       profile="rx5670", workload="tpcc")
    r = run(sc)
    busy = 100.0 - r.cpu_idle
    assert busy < 10.0 and r.extra["physical_writes_per_s"] > 100.0   # light CPU load, DBWR writing
    # 4 CPUs a few % busy: M/M/4 would queue ~1e-5; a single DBWR could add at most 1 runnable process, and then rarely
    assert r.run_queue < 0.05


def test_disk_reads_are_never_negative_when_every_read_hits_the_page_cache():
    """The load profile's OS page-cache hits and disk reads count the same reads, as they end: counted as a hit
    when it began and as a physical read when it ended, a read under way at the window's edge made a window whose
    reads all hit the page cache print 'disk reads/s -0.2' (t5440, ufs_buffered: 5,961 hits against 5,959 reads)."""
    sc = scenario.load(None, {"users": 64, "think_time": "0 s", "keying_time": "0 s", "database.db_cache": "200 MB",
                              "os.filesystem": "ufs_buffered", "run.max_time": "3 s"},
                       profile="t5440", workload="tpcc")
    x = run(sc).extra
    assert x["os_cache_hits_per_s"] <= x["physical_reads_per_s"]
    assert x["disk_reads_per_s"] >= 0.0


def test_oracle_on_linux_writes_file_system_files_synchronously_whatever_disk_asynch_io_says():
    """Oracle on Linux does not emulate async I/O with library threads: on file system files it is synchronous
    unless filesystemio_options is asynch, "none" by default (Red Hat's tuning guide for 9i and 10g, 12.3). With
    disk_asynch_io true, linux_buffered had written a batch as up to 256 library threads at once, each its own
    runnable process (an opteron-2way 7% busy showed r 0.27). Now the run is the run with it false, event for
    event; Solaris's buffered paths keep their library threads."""
    def opteron(asynch: bool):
        return run(scenario.load(None, {
            "users": 200, "think_time": "0.2 s", "keying_time": "0 s", "warehouses": 10, "users_on_host": True,
            "database.db_cache": "64 MB", "database.disk_asynch_io": asynch, "database.redo_device": "external",
            "database.data_device": "external", "os.filesystem": "linux_buffered", "run.seed": 5,
            "run.warmup": "2 s", "run.batch": "0.5 s", "run.min_batches": 2, "run.max_time": "4 s"},
            profile="opteron-2way", workload="tpcc"))
    on, off = opteron(True), opteron(False)
    assert on.extra["physical_writes_per_s"] > 50.0   # DBWR writing
    assert (on.events, on.tpm, on.run_queue, on.cpu_sys) == (off.events, off.tpm, off.run_queue, off.cpu_sys)
    env = simpy.Environment()
    for path, threads in [("linux_buffered", False), ("vxfs_buffered", True), ("ufs_direct", True), ("raw", False)]:
        fs = FileSystem(env, _Cpu(env), _Disk(env), PATHS[path], 1, 8192.0, True, np.random.default_rng(0))
        assert (fs.async_io, fs.async_threads) == (path != "linux_buffered", threads)
