"""DBWR's steady state without the wait: a writer slower than the dirtying is moved to its
free-buffer limit at the end of the warm-up (DatabaseWriter.catch_up); one that keeps up is not."""

from __future__ import annotations

import dataclasses

import pytest
import simpy

from sim import scenario
from sim.db.dbwr import FREE_BUFFER_LIMIT, WRITE_BATCH, DatabaseWriter
from sim.metrics import WaitEvents
from sim.run import run
from stubs import InstantCpu as _Cpu

WRITE = 0.01   # one write at a time, 10 ms each: DBWR writes at most 100 blocks/s


class _Files:
    """Four files; writes take WRITE each; remembers which file each write went to."""

    def __init__(self, env):
        self.env, self.written = env, []

    def pick_files(self, n, ranges=None):
        return [0 if r is None else r[0] for r in (ranges or [None] * n)]

    def write_then(self, file, done):
        self.written.append(file)
        self.env.timeout(WRITE).callbacks.append(lambda _e: done())


def _writer(rate, buffers=8_000):
    """DBWR (one write in flight) and a session dirtying one block per transaction at `rate`
    a second when never held, each transaction first taking a free buffer (a read)."""
    env = simpy.Environment()
    waits = WaitEvents()
    dbwr = DatabaseWriter(env, _Cpu(env), _Files(env), buffers, False, 0, waits)
    done = [0]

    def session():
        while True:
            yield from dbwr.free_buffer()
            dbwr.dirty(1, (done[0] % 4, 1))   # files 0-3 in turn
            done[0] += 1
            yield env.timeout(1.0 / rate)
    env.process(session())
    return env, dbwr, waits, done


def test_a_writer_slower_than_the_dirtying_reaches_the_free_buffer_equilibrium_at_once():
    """Dirtying 300/s against 100 writes/s: the backlog grows 200/s and would reach the 2,000-buffer
    limit only after ~10 s; watched over 2-6 s, it is moved there at the end of a 6-s warm-up,
    in the same mix of files. From then on transactions run at the write rate (1 write each):
    X = 100/s, with free buffer waits; nothing is lost (written <= dirtied, all written in the end)."""
    env, dbwr, waits, done = _writer(300.0)
    dbwr.watch(2.0)
    env.run(until=6.0)
    before = dbwr.unwritten
    assert before < 0.75 * dbwr.limit
    extra = dbwr.catch_up()
    assert extra == int(FREE_BUFFER_LIMIT * 8_000) - before
    assert dbwr.unwritten == dbwr.limit and dbwr.dirtied_total - dbwr.written_total == dbwr.unwritten
    ranges, replayed = type(dbwr.ranges)(list(e) for e in dbwr.ranges), dbwr._replayed
    assert sorted(f[0] for f, _ in dbwr._take_ranges(4)) == [0, 1, 2, 3]   # still one file after another
    dbwr.ranges, dbwr._replayed = ranges, replayed
    assert sum(k for _, k, _ in dbwr.ranges) == dbwr.pending
    env.run(until=10.0)                                                # a second warm-up
    start, written = done[0], dbwr.written_total
    env.run(until=20.0)
    assert (done[0] - start) / 10.0 == pytest.approx(100.0, rel=0.02)
    assert (dbwr.written_total - written) / 10.0 == pytest.approx(100.0, rel=0.02)
    assert waits.events["free buffer waits"].time > 5.0
    assert dbwr.written_total <= dbwr.dirtied_total
    assert abs(dbwr.unwritten - dbwr.limit) <= 1
    dirtied = dbwr.dirtied_total
    env.run(until=20.0 + dbwr.unwritten * WRITE + 10.0)    # every block dirtied by 20 s gets written
    assert dbwr.written_total >= dirtied


def test_a_writer_that_keeps_up_is_left_alone():
    """Dirtying 50/s against 100 writes/s: DBWR empties its backlog after each batch; nothing moves."""
    env, dbwr, _, _ = _writer(50.0)
    dbwr.watch(10.0)
    env.run(until=30.0)
    state = (dbwr.pending, dbwr.batch_left, dbwr.in_flight, dbwr.dirtied_total, dbwr.written_total)
    assert dbwr.catch_up() == 0
    assert (dbwr.pending, dbwr.batch_left, dbwr.in_flight, dbwr.dirtied_total, dbwr.written_total) == state


def test_a_run_whose_dbwr_keeps_up_is_bit_identical_with_and_without_settling():
    """UE10000 on raw, KAIO DBWR: it keeps up, so the option changes nothing, event for event."""
    base = {"users": 4, "think_time": "0 s", "keying_time": "0 s", "warehouses": 200, "database.block_size": "2 KB",
            "database.db_cache": "100 MB", "database.redo_device": "redo", "database.oracle_bits": 32, "os.bits": 32,
            "run.warmup": "4 s", "run.batch": "1 s", "run.min_batches": 2, "run.max_time": "2 s"}
    results = [run(scenario.load(None, {**base, "run.settle_writer": on}, profile="ue10000", workload="tpcc"))
               for on in (True, False)]
    a, b = (dataclasses.asdict(r) for r in results)
    for r in (a, b):
        r.pop("wall_time")
        r["inputs"].pop("run.settle_writer", None)
    assert "dbwr_backlog_skipped" not in a["extra"]
    assert a == b


def test_a_dbwr_that_has_not_written_by_the_end_of_the_warm_up_is_watched_until_it_has():
    """One synchronous I/O slave on UFS direct writes ~94 blocks/s against ~214 dirtied. Dirtying under 256
    buffers/s, it waits for its 3-s timeout before its first batch, so a 1-s warm-up's watch saw no write of
    its and had judged it keeping up (5,660 TPM, against 1,740 after an 8-s warm-up). The warm-up now goes on
    until it has written: it is found behind and settled at its free-buffer limit."""
    over = {"users": 6, "think_time": "29 ms", "keying_time": "0 s", "warehouses": 200, "database.block_size": "2 KB",
            "database.redo_device": "redo", "database.db_cache": "1 GB", "os.filesystem": "ufs_direct",
            "database.dbwr_io_slaves": 1, "run.warmup": "1 s", "run.batch": "0.5 s", "run.min_batches": 2,
            "run.max_time": "1 s"}
    r = run(scenario.load(None, over, profile="ue10000", workload="tpcc"))
    assert r.extra["dbwr_net_fill_per_s"] > 50.0 and r.extra["dbwr_backlog_skipped"] > 0
    assert r.tpm < 2500.0


def _ufs_buffered(redo_log_size):
    """The veritas UFS buffered 100MB row, short: DBWR (8 writes over the file locks) cannot keep up."""
    over = {"users": 6, "think_time": "6 ms", "keying_time": "0 s", "warehouses": 200, "hash_clusters": True,
            "database.block_size": "2 KB", "database.db_cache": "100 MB", "database.redo_device": "redo",
            "database.data_device": "data", "database.datafiles": 59, "database.datafile_size": "868 MB",
            "database.oracle_bits": 32, "database.dbwr_max_writes": 8, "database.disk_asynch_io": False,
            "database.dbwr_io_slaves": 20, "os.bits": 32, "os.filesystem": "ufs_buffered",
            "os.redo_filesystem": "ufs_buffered", "run.warmup": "20 s", "run.batch": "1 s",
            "run.min_batches": 2, "run.max_time": "2 s"}
    if redo_log_size is not None:
        over["database.redo_log_size"] = redo_log_size
    return run(scenario.load(None, over, profile="ue10000", workload="tpcc"))


def test_log_switch_checkpoints_settle_dbwr_only_where_the_free_buffer_limit_binds_first():
    """Logs of 4 GB: LGWR could stop on an incomplete checkpoint only with ~2 logs' worth of
    dirtied buffers unwritten, far past the 12,800-buffer free-buffer limit of a 100 MB cache:
    DBWR is settled there, as without sized logs. Logs of 1 MB: their bound (a few hundred
    buffers) comes first, so the run keeps its own pace (nothing skipped)."""
    none, big, small = (_ufs_buffered(s) for s in (None, "4 GB", "1 MB"))
    assert none.extra.get("dbwr_backlog_skipped", 0) > 0
    assert big.extra.get("dbwr_backlog_skipped", 0) > 0
    assert "dbwr_backlog_skipped" not in small.extra


@pytest.mark.parametrize("rate, capacity_share", [(300.0, 1.0), (110.0, 1.0), (50.0, 0.5), (95.0, 0.95)])
def test_the_net_fill_rate_is_the_dirtying_rate_minus_the_writes_per_busy_second(rate, capacity_share):
    """Closed form: one 10-ms write at a time is 100 writes per busy second, whatever share of the time
    DBWR is busy, so g = rate - 100 (a writer that keeps up is busy rate/100 of the time). A cache
    large enough (50,000-buffer limit) that no backlog reaches its limit within the 90 s."""
    env, dbwr, _, _ = _writer(rate, buffers=200_000)
    dbwr.watch(30.0)
    env.run(until=90.0)
    assert dbwr.net_fill_rate() == pytest.approx(rate - 1.0 / WRITE, abs=1.5)
    assert dbwr.busy_time() / (env.now - dbwr._w0[0]) == pytest.approx(capacity_share, abs=0.03)


@pytest.mark.parametrize("since, until", [(2.0, 8.0), (10.0, 40.0), (20.0, 60.0)])
def test_a_slow_fill_settles_whatever_the_watch_length(since, until):
    """Dirtying 110/s against 100 writes/s: the backlog fills at 10/s, 60 buffers over a 6-s watch and
    400 over 40 s, all under the batch (512) that the test before this one asked to see grow: every
    watch length now moves it to the same state, the free-buffer limit (5,000 of 20,000 buffers),
    with the 10/s it saw; nothing is lost from the counts."""
    env, dbwr, _, _ = _writer(110.0, buffers=20_000)
    dbwr.watch(since)
    env.run(until=until)
    grown = dbwr.unwritten
    assert grown - dbwr._watched < WRITE_BATCH and grown < 0.5 * dbwr.limit
    extra = dbwr.catch_up()
    assert extra == int(dbwr.limit) - grown
    assert dbwr.fill_rate == pytest.approx(10.0, abs=1.0)
    assert dbwr.unwritten == dbwr.limit and dbwr.dirtied_total - dbwr.written_total == dbwr.unwritten


def test_two_seeds_of_a_near_balanced_writer_reach_the_same_regime():
    """The dirtying jittered (exponential gaps, two seeds), mean 110/s against 100 writes/s: both seeds
    settle at the limit, and from then on run at the write rate within 3% of each other."""
    import random
    rates = []
    for seed in (1, 2):
        rng = random.Random(seed)
        env = simpy.Environment()
        dbwr = DatabaseWriter(env, _Cpu(env), _Files(env), 8_000, False, 0, WaitEvents())
        done = [0]

        def session():
            while True:
                yield from dbwr.free_buffer()
                dbwr.dirty(1, (done[0] % 4, 1))
                done[0] += 1
                yield env.timeout(rng.expovariate(110.0))
        env.process(session())
        dbwr.watch(10.0)
        env.run(until=30.0)
        assert dbwr.catch_up() > 0
        env.run(until=40.0)
        start = done[0]
        env.run(until=60.0)
        rates.append((done[0] - start) / 20.0)
    assert rates[0] == pytest.approx(100.0, rel=0.03) and rates[1] == pytest.approx(rates[0], rel=0.03)


def test_catch_up_never_takes_the_backlog_above_the_limit_nor_loses_a_dirtied_buffer():
    """Invariant over a run at the limit: after catch_up the backlog is at most the limit (plus the one
    buffer a session dirties after its free buffer), dirtied - written = unwritten at every step, and a
    second catch_up at the limit adds nothing."""
    env, dbwr, _, _ = _writer(300.0)
    dbwr.watch(2.0)
    env.run(until=6.0)
    dbwr.catch_up()
    for t in range(7, 30):
        env.run(until=float(t))
        assert dbwr.unwritten <= dbwr.limit + 1
        assert dbwr.dirtied_total - dbwr.written_total == dbwr.unwritten
    dbwr.watch(env.now)
    env.run(until=40.0)
    before = dbwr.dirtied_total
    assert dbwr.catch_up() == 0 and dbwr.dirtied_total == before


def test_a_writer_idle_all_the_watch_is_left_alone():
    """Dirtying 50/s: DBWR's first batch (150 buffers at its 3-s timeout) is written by 4.5 s; a watch
    from 4.6 to 5.9 s sees 65 dirtied and nothing written, DBWR waiting for its next timeout: no
    sign of a shortfall (g = 0), nothing moves."""
    env, dbwr, _, _ = _writer(50.0)
    dbwr.watch(4.6)
    env.run(until=5.9)
    assert dbwr.written_total == 150 and dbwr.unwritten > 0
    assert dbwr.net_fill_rate() == 0.0
    assert dbwr.catch_up() == 0 and dbwr.unwritten < WRITE_BATCH


def test_stand_in_buffers_are_written_in_the_mix_dirtied_when_dbwr_writes_them_not_the_watchs():
    """Two writes in flight (200/s) against 300 dirtied/s. Over the 4-s watch the sessions dirty file 0
    half the time and files 1-3 the rest; from 6 s on (after catch_up) they dirty file 0 only a sixth of
    the time. The ~11,000 stand-in buffers catch_up adds take ~55 s to write; once the last RECENT
    dirtyings (~2 s of them here) are all of the new mix, the stand-ins are written in it (1/6 file 0),
    not in the watch's (1/2): in the steady state a run stands for, what
    DBWR writes was dirtied a backlog's delay earlier under the same conditions. Counted as before:
    the backlog at the limit, nothing lost."""
    env = simpy.Environment()
    files = _Files(env)
    dbwr = DatabaseWriter(env, _Cpu(env), files, 48_000, True, 0, WaitEvents(), max_writes=2)
    watch_mix, later_mix = (0, 0, 0, 1, 2, 3), (0, 1, 2, 3, 1, 2)

    def session():
        i = 0
        while True:
            yield from dbwr.free_buffer()
            dbwr.dirty(1, ((watch_mix if env.now < 6.0 else later_mix)[i % 6], 1))
            i += 1
            yield env.timeout(1.0 / 300.0)
    env.process(session())
    dbwr.watch(2.0)
    env.run(until=6.0)
    first = dbwr.written_total + dbwr.batch_left + dbwr.in_flight   # the writes before the stand-ins'
    extra = dbwr.catch_up()
    assert extra > 10_000 and dbwr.unwritten == dbwr.limit
    assert dbwr.dirtied_total - dbwr.written_total == dbwr.unwritten
    env.run(until=21.0)
    start = len(files.written)
    env.run(until=36.0)                        # ~3,000 writes, all of stand-ins (older than the pending)
    written = files.written[start:]
    assert len(written) > 2_500 and dbwr.written_total <= first + extra
    assert written.count(0) / len(written) == pytest.approx(1 / 6, abs=0.02)
    assert dbwr.dirtied_total - dbwr.written_total == dbwr.unwritten <= dbwr.limit + 1
