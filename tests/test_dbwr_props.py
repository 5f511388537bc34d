"""DBWR's batching against hand arithmetic: how many writes it keeps in flight (one synchronous,
MAX_ASYNC_WRITES with async I/O, one per I/O slave, capped by max_writes), when a batch starts
(WRITE_BATCH or the free-buffer limit's worth dirty, else the TIMEOUT), and the free buffer and
checkpoint waits. Writes take a fixed time W on a stub file layer; DBWR's CPU work takes none."""

from __future__ import annotations

import pytest
import simpy

from sim.db.dbwr import FREE_BUFFER_LIMIT, MAX_ASYNC_WRITES, TIMEOUT, WRITE_BATCH, DatabaseWriter
from sim.metrics import WaitEvents
from stubs import InstantCpu as _Cpu

W = 0.01
ROUNDS = -(-WRITE_BATCH // MAX_ASYNC_WRITES)   # write times a batch takes with async I/O (512 / 256: 2)


class _Files:
    """Every write takes W; remembers when each write started and ended, and to which file."""

    def __init__(self, env):
        self.env, self.started, self.ended, self.files = env, [], [], []

    def pick_files(self, n, ranges=None):
        return [0 if r is None else r[0] for r in (ranges or [None] * n)]

    def write_then(self, file, done):
        self.started.append(self.env.now)
        self.files.append(file)

        def end(_e):
            self.ended.append(self.env.now)
            done()
        self.env.timeout(W).callbacks.append(end)


def _dbwr(buffers, async_io=False, slaves=0, max_writes=0):
    env = simpy.Environment()
    files, waits = _Files(env), WaitEvents()
    return env, files, waits, DatabaseWriter(env, _Cpu(env), files, buffers, async_io, slaves, waits, max_writes)


def _asks_for_a_free_buffer(env, dbwr, got: list) -> None:
    """A session that asks DBWR for a free buffer now; `got` receives the time it got one."""
    def session():
        yield from dbwr.free_buffer()
        got.append(env.now)
    env.process(session())


@pytest.mark.parametrize("async_io, slaves, max_writes, width", [
    (False, 0, 0, 1), (True, 0, 0, MAX_ASYNC_WRITES), (False, 3, 0, 3), (True, 3, 0, 3),
    (True, 0, 4, 4), (False, 3, 2, 2), (False, 0, 5, 1), (True, 1, 0, 1)])
def test_writes_in_flight_are_one_async_width_slaves_or_the_max_writes_cap(async_io, slaves, max_writes, width):
    """40 buffers: limit 10, so a batch of 10 starts as soon as 10 are dirty; with w writes in
    flight it ends after ceil(10 / w) write times."""
    env, files, _, dbwr = _dbwr(40, async_io, slaves, max_writes)
    assert dbwr.width == width and dbwr.limit == FREE_BUFFER_LIMIT * 40 == dbwr.batch_size
    env.run(until=0.0001)           # DBWR waiting for its first batch
    dbwr.dirty(10)
    env.run(until=1.0)
    rounds = -(-10 // width)
    assert dbwr.written_total == dbwr.writes == 10 and dbwr.unwritten == 0
    assert max(files.ended) == pytest.approx(0.0001 + rounds * W)
    assert files.started.count(0.0001) == min(width, 10)


def test_a_short_batch_waits_for_the_timeout_and_a_full_one_does_not():
    env, files, _, dbwr = _dbwr(100_000)
    assert dbwr.batch_size == WRITE_BATCH
    dbwr.dirty(3)
    env.run(until=TIMEOUT - 0.01)
    assert dbwr.written_total == 0 and dbwr.pending == 3
    env.run(until=TIMEOUT + 1.0)
    assert files.started == pytest.approx([TIMEOUT, TIMEOUT + W, TIMEOUT + 2 * W])
    assert dbwr.dirtied_total == 3 and dbwr.written_total == 3
    dbwr.dirty(WRITE_BATCH - 1)
    env.run(until=TIMEOUT + 1.5)
    assert dbwr.written_total == 3
    dbwr.dirty(1)                   # the batch is full: DBWR wakes now
    env.run(until=TIMEOUT + 1.5 + WRITE_BATCH * W + 1e-6)
    assert dbwr.written_total == 3 + WRITE_BATCH
    assert files.started[3] == pytest.approx(TIMEOUT + 1.5)
    dbwr.dirty(0)
    dbwr.dirty(-4)
    assert dbwr.dirtied_total == 3 + WRITE_BATCH


def test_a_backlog_larger_than_a_batch_goes_out_batch_after_batch():
    """WRITE_BATCH + 10 dirty at once (async, 256 in flight): a first batch of WRITE_BATCH, and the
    next 10 only once it is written, at the next batch signal after it drains."""
    env, files, _, dbwr = _dbwr(100_000, async_io=True)
    env.run(until=0.5)
    dbwr.dirty(WRITE_BATCH + 10)
    env.run(until=0.5 + 1e-9)
    assert dbwr.batch_left + dbwr.in_flight == WRITE_BATCH and dbwr.pending == 10
    env.run(until=10.0)
    assert dbwr.written_total == WRITE_BATCH + 10
    assert files.started[:2] == [0.5, 0.5]
    assert max(files.ended[:WRITE_BATCH]) == pytest.approx(0.5 + ROUNDS * W)     # 512 over 256 in flight
    assert min(files.started[WRITE_BATCH:]) >= max(files.ended[:WRITE_BATCH]) - 1e-12


def test_free_buffer_waits_last_until_the_backlog_is_back_at_the_limit():
    """100 buffers: limit 25. 30 dirty at once (sync DBWR, one 10-ms write at a time). A session
    asking for a free buffer at 0 waits until 5 are written, 5 W: the 30 came before DBWR first
    slept, with no wake-up to post, and it still starts at once, not at its 3-s timeout (it used to).
    One asking with the backlog at the limit doesn't wait."""
    env, files, waits, dbwr = _dbwr(100)
    dbwr.dirty(30)           # before DBWR first waits
    got = []
    _asks_for_a_free_buffer(env, dbwr, got)
    env.run(until=TIMEOUT + 1.0)
    assert got == [pytest.approx(5 * W)] and files.started[0] == 0.0
    st = waits.events["free buffer waits"]
    assert st.waits == 1 and st.time == pytest.approx(5 * W)
    dbwr.dirty(25)        # exactly at the limit: no wait
    _asks_for_a_free_buffer(env, dbwr, got)
    env.run(until=TIMEOUT + 1.0 + 1e-9)
    assert got[-1] == pytest.approx(TIMEOUT + 1.0) and waits.events["free buffer waits"].waits == 1


def test_wait_written_returns_when_the_target_count_is_written():
    env, files, _, dbwr = _dbwr(40)
    env.run(until=0.5)
    dbwr.dirty(10)
    got = []

    def waiter(target):
        yield from dbwr.wait_written(target)
        got.append((target, env.now))
    env.process(waiter(4))
    env.process(waiter(0))
    env.run(until=1.0)
    assert got == [(0, 0.5), (4, pytest.approx(0.5 + 4 * W))]


def test_a_drained_batch_with_a_full_batch_pending_starts_the_next_at_once():
    """2 x WRITE_BATCH dirty at 0.5 (async, 256 in flight): the first batch (512 writes, 256 at a
    time) drains at 0.5 + 2 W; the second, already a full batch, starts then, not at DBWR's next
    timeout, and drains by 0.5 + 4 W."""
    env, files, _, dbwr = _dbwr(100_000, async_io=True)
    env.run(until=0.5)
    dbwr.dirty(2 * WRITE_BATCH)
    env.run(until=0.5 + 2 * ROUNDS * W + 1e-6)
    assert dbwr.written_total == 2 * WRITE_BATCH
    assert files.started[WRITE_BATCH] == pytest.approx(0.5 + ROUNDS * W)
    assert dbwr.writes == 2 * WRITE_BATCH
    dbwr.reset_stats()
    assert dbwr.writes == 0 and dbwr.written_total == 2 * WRITE_BATCH


def test_the_fill_rate_needs_a_watch_and_time_and_catch_up_ends_the_watch():
    env, files, _, dbwr = _dbwr(100_000)
    assert dbwr.net_fill_rate() is None                 # never watched
    dbwr.watch(1.0)
    env.run(until=1.0)
    dbwr.dirty(5)                                       # the watch begins at its first dirtying after 1.0
    assert dbwr.net_fill_rate() is None                 # no time yet
    env.run(until=2.0)
    assert dbwr.net_fill_rate() == 0.0                  # DBWR idle all the watch: it kept up
    assert dbwr.catch_up() == 0 and dbwr.fill_rate == 0.0
    assert dbwr.watch_from is None and dbwr.net_fill_rate() is None
    dbwr.watch(3.0)
    dbwr.unwatch()
    env.run(until=4.0)
    dbwr.dirty(1)
    assert dbwr.net_fill_rate() is None


class _SlowCpu:
    """DBWR's own work at 1 us an instruction: a 512-buffer batch (5,000 instructions a buffer) takes 2.56 s."""

    def __init__(self, env):
        self.env = env

    def run(self, instructions, sys_share=0.0):
        return self.env.timeout(instructions * 1e-6)


def _slow_dbwr(buffers=40):
    """An asynchronous DBWR on _SlowCpu, with its files: (env, files, dbwr)."""
    env = simpy.Environment()
    files = _Files(env)
    return env, files, DatabaseWriter(env, _SlowCpu(env), files, buffers, True, 0, WaitEvents())


def test_a_batch_is_issued_after_dbwr_has_done_its_own_work_for_it():
    """DBWR's CPU work, INSTRUCTIONS_PER_WRITE a buffer, runs before the batch's writes go out: on
    a CPU retiring 1e6 instructions/s a batch of 10 starts 10 x 5,000 / 1e6 = 0.05 s after it is due."""
    from sim.db.dbwr import INSTRUCTIONS_PER_WRITE
    env, files, dbwr = _slow_dbwr()
    env.run(until=0.5)
    dbwr.dirty(10)
    env.run(until=2.0)
    assert files.started == pytest.approx([0.5 + 10 * INSTRUCTIONS_PER_WRITE / 1e6] * 10)


def test_a_free_buffer_wait_is_timed_from_when_it_began():
    """At 0.5, 30 of 100 buffers dirty (limit 25, so a batch is due at once): a session asking then
    waits for 5 synchronous writes, 5 W, and that is the wait recorded."""
    env, files, waits, dbwr = _dbwr(100)
    env.run(until=0.5)
    dbwr.dirty(30)
    got = []
    _asks_for_a_free_buffer(env, dbwr, got)
    env.run(until=1.0)
    assert got == [pytest.approx(0.5 + 5 * W)]
    assert waits.events["free buffer waits"].time == pytest.approx(5 * W)


def test_a_range_longer_than_a_batch_is_split_at_the_batch():
    """600 dirty buffers of one file range: the first batch takes WRITE_BATCH of them, all of that
    range, and leaves the rest (88) pending in the range for the next batch, which takes them."""
    env, files, _, dbwr = _dbwr(100_000, async_io=True)
    env.run(until=0.1)
    dbwr.dirty(WRITE_BATCH + 88, files=(3, 1))
    env.run(until=0.1 + 1e-9)
    assert dbwr.batch_left + dbwr.in_flight == WRITE_BATCH and dbwr.pending == 88
    assert list(dbwr.ranges) == [[(3, 1), 88, False]]
    assert files.files == [3] * min(WRITE_BATCH, MAX_ASYNC_WRITES)
    env.run(until=10.0)
    assert dbwr.written_total == WRITE_BATCH + 88 and files.files == [3] * (WRITE_BATCH + 88)
    assert not dbwr.ranges and dbwr.unwritten == 0


def test_the_next_batch_is_gathered_once_the_last_is_issued_without_waiting_for_its_writes():
    """Two batches' worth dirty at once, 4 writes in flight: the first batch is all issued after 127 write
    times, and DBWR gathers the next then, its slots refilled as the last writes end, with no dirty() to
    wake it (it had waited for the last write to end, a barrier only when no session dirtied meanwhile)."""
    env, files, _, dbwr = _dbwr(100_000, async_io=True, max_writes=4)
    env.run(until=0.0001)
    dbwr.dirty(2 * WRITE_BATCH)
    issued = (WRITE_BATCH - 4) // 4 * W + 0.0001      # the batch's last 4 writes go out then
    env.run(until=issued + W / 2)
    assert dbwr.in_flight == 4 and dbwr.pending == 0 and dbwr.batch_left == WRITE_BATCH
    env.run(until=1000.0)
    assert dbwr.written_total == 2 * WRITE_BATCH
    assert max(files.ended) == pytest.approx(0.0001 + 2 * WRITE_BATCH // 4 * W)   # never a slot left empty


def test_dbwr_is_busy_while_it_gathers_even_when_its_last_write_ends_meanwhile():
    """Two batches' worth dirty at once, 4 writes in flight, each batch 2.56 s of gathering: the first
    batch's writes end during the second's gathering. DBWR is busy throughout (gathering, then writing),
    so its busy time over the watch is the whole span: a write ending mid-gather had stopped the clock."""
    env = simpy.Environment()
    files, waits = _Files(env), WaitEvents()
    dbwr = DatabaseWriter(env, _SlowCpu(env), files, 100_000, True, 0, waits, 4)
    dbwr.watch(0.0)
    env.run(until=0.0001)
    dbwr.dirty(2 * WRITE_BATCH)
    env.run(until=4.0)                  # gathering batch 2 from ~2.56 s; batch 1's last write ends at ~3.84 s
    assert dbwr.busy_time() == pytest.approx(4.0 - 0.0001, rel=1e-6)


def test_the_constants_are_the_documented_ones():
    """The module docstring gives each constant's value and source (estimates and Oracle 8's parameters); the
    tests above are written in terms of them, so a change to one would pass unnoticed: pin them here."""
    from sim.db.dbwr import INSTRUCTIONS_PER_WRITE, RECENT
    assert (MAX_ASYNC_WRITES, FREE_BUFFER_LIMIT, INSTRUCTIONS_PER_WRITE, WRITE_BATCH, TIMEOUT, RECENT) \
        == (256, 0.25, 5_000.0, 512, 3.0, 512)


def test_a_tiny_cache_still_holds_one_dirty_buffer_without_a_free_buffer_wait():
    """2 buffers: a quarter is half a buffer, but the limit is at least one buffer, so one dirty buffer is
    within it and a session asking for a free buffer then does not wait."""
    env, files, waits, dbwr = _dbwr(2)
    assert dbwr.limit == 1.0 == dbwr.batch_size
    dbwr.dirty(1)
    got = []
    _asks_for_a_free_buffer(env, dbwr, got)
    env.run(until=1.0)
    assert got == [0.0] and "free buffer waits" not in waits.events and dbwr.written_total == 1


def test_a_call_that_dirties_nothing_leaves_no_trace():
    """A transaction's blocks of a segment are Poisson draws, often 0 (workloads/tpcc.py): such a call, with
    its file range or as checkpoint buffers, is nothing for DBWR to write or to remember (no pending range,
    nothing in the recent window stand-in buffers replay), as if it had not been made."""
    env, files, _, dbwr = _dbwr(100_000)
    dbwr.dirty(0, files=(2, 1), checkpoint=True)
    assert dbwr.ranges is None and dbwr.dirtied_total == dbwr.unwritten == 0
    dbwr.dirty(3, files=(1, 1))
    dbwr.dirty(0, files=(2, 1))
    assert list(dbwr.ranges) == [[(1, 1), 3, False]]


class _Spread(_Files):
    """Files picked for buffers of no range come out in descending order (n - 1, ..., 0): sorting shows."""

    def pick_files(self, n, ranges=None):
        return [n - 1 - i if r is None else r[0] for i, r in enumerate(ranges or [None] * n)]


def test_checkpoint_buffers_of_no_file_range_are_written_in_the_order_dirtied_not_sorted():
    """20 buffers (limit and batch 5), one write at a time. 5 LRU buffers of any file are written sorted by
    file (0-4); 5 checkpoint buffers of any file keep the order they were picked in (4-0), as checkpoint
    buffers with a file range do: a checkpoint flag alone, with no range, still starts the bookkeeping."""
    for checkpoint, want in ((False, [0, 1, 2, 3, 4]), (True, [4, 3, 2, 1, 0])):
        env = simpy.Environment()
        files = _Spread(env)
        dbwr = DatabaseWriter(env, _Cpu(env), files, 20, False, 0, WaitEvents())
        dbwr.dirty(5, checkpoint=checkpoint)
        env.run(until=1.0)
        assert files.files == want


def test_a_batch_dirtied_while_dbwr_gathers_the_last_goes_out_right_after_it():
    """40 buffers (limit and batch 10), async, DBWR's CPU at 1 us an instruction (a batch of 10: 0.05 s). 10 dirty
    at 0.0001 s are gathered until 0.0501 s and all issued then; 10 more dirtied at 0.02 s, mid-gather, are a
    batch's worth already pending once it is out: gathered at once (to 0.1001 s), not at DBWR's 3-s timeout."""
    env, files, dbwr = _slow_dbwr()
    env.run(until=0.0001)
    dbwr.dirty(10)
    env.run(until=0.02)
    dbwr.dirty(10)
    env.run(until=1.0)
    assert files.started == pytest.approx([0.0501] * 10 + [0.1001] * 10) and dbwr.written_total == 20


def _watch_from(env, dbwr, start: float) -> None:
    """A watch from `start`: 10 buffers dirtied at 0.0001 s, one more at `start` (below a batch), run to 0.5 s."""
    dbwr.watch(start)
    env.run(until=0.0001)
    dbwr.dirty(10)
    env.run(until=start)
    dbwr.dirty(1)
    env.run(until=0.5)


def test_a_watch_that_begins_while_writes_are_in_flight_counts_them_as_busy():
    """40 buffers (batch 10), one write at a time: 10 dirty at 0.0001 s are written until 0.1001 s. A watch from
    0.05 s begins at a dirtying then, with a write in flight: DBWR is busy from 0.05 to 0.1001 s, then idle
    (one buffer pending, below a batch), so its busy time at 0.5 s is 0.0501 s."""
    env, files, _, dbwr = _dbwr(40)
    _watch_from(env, dbwr, 0.05)
    assert max(files.ended) == pytest.approx(0.1001) and dbwr.written_total == 10
    assert dbwr.busy_time() == pytest.approx(0.1001 - 0.05)


def test_a_watch_that_begins_while_dbwr_gathers_counts_the_gather_as_busy():
    """DBWR's CPU at 1 us an instruction: a batch of 10 takes 0.05 s to gather (0.0001-0.0501 s), then its 10
    writes are in flight together until 0.0601 s. A watch beginning at 0.02 s, mid-gather with no write in
    flight, counts the rest of the gather and the writes: busy from 0.02 to 0.0601 s (it had counted only the
    writes' 0.01 s, overstating DBWR's capacity)."""
    env, files, dbwr = _slow_dbwr()
    _watch_from(env, dbwr, 0.02)
    assert files.started == pytest.approx([0.0501] * 10)
    assert dbwr.busy_time() == pytest.approx(0.0601 - 0.02)


def test_a_second_watch_counts_only_its_own_busy_time():
    """A first watch sees DBWR write 10 buffers (busy 0.1 s) and ends. A second, from 1 s, sees one buffer
    dirtied and DBWR idle (waiting for a batch or its timeout): its busy time is 0, so nothing shows DBWR
    short of capacity (net fill rate 0), whatever the first watch saw."""
    env, files, _, dbwr = _dbwr(40)
    dbwr.watch(0.0)
    env.run(until=0.0001)
    dbwr.dirty(10)
    env.run(until=0.5)
    assert dbwr.busy_time() == pytest.approx(0.1)
    dbwr.unwatch()
    dbwr.watch(1.0)
    env.run(until=1.0)
    dbwr.dirty(1)
    env.run(until=1.5)
    assert dbwr.busy_time() == 0.0 and dbwr.net_fill_rate() == 0.0


def test_stand_ins_go_first_and_replay_only_the_last_recent_dirtyings():
    """1,100 calls dirtying 2 buffers each, of file i for call i, at once; one write at a time (100/s), watched
    from 0: by 1 s DBWR has written 100 and the backlog (2,100) grows, so catch_up adds the stand-ins that take
    it to the limit of 3,401: 1,301 of them, replaying 651 calls (more than RECENT: the window goes round), an
    odd count, so a call's 2 buffers are split at the end of a batch. They are older than anything pending: the
    batch after the one in flight is all stand-ins, in files of the last RECENT calls (588-1,099), and no call
    before those is written more than its own 2 buffers. Once all is written nothing is left over: every range
    taken, written = dirtied."""
    from collections import Counter
    from sim.db.dbwr import RECENT
    calls = 1100
    env, files, _, dbwr = _dbwr(13_604)
    assert dbwr.limit == 3401.0
    dbwr.watch(0.0)
    for i in range(calls):
        dbwr.dirty(2, files=(i, 1))
    env.run(until=1.005)
    before = dbwr.unwritten
    extra = dbwr.catch_up()
    assert before == 2100 and extra == 1301
    env.run(until=100.0)
    recent = set(range(calls - RECENT, calls))
    assert set(files.files[WRITE_BATCH:2 * WRITE_BATCH]) <= recent
    count = Counter(files.files)
    assert all(count[f] == 2 for f in range(calls - RECENT))
    assert len(files.files) == dbwr.written_total == dbwr.dirtied_total == 2 * calls + extra
    assert not dbwr.ranges and dbwr.unwritten == 0


class _KaioFiles(_Files):
    """A kernel async I/O path: DBWR hands it n writes at once; their calls take C each, on one process."""
    serial_issue = True
    C = 0.001

    def __init__(self, env):
        super().__init__(env)
        self.calls = []   # (when, n) of each burst of calls

    def submit_writes(self, n, done, issued):
        self.calls.append((self.env.now, n))

        def made(_e):
            for _ in range(n):
                self.write_then(None, done)
            issued()
        self.env.timeout(n * self.C).callbacks.append(made)


def test_under_kernel_async_io_dbwr_makes_a_batch_s_calls_as_one_process_then_has_them_all_in_flight():
    """One DBWR is one process: the 10 writes of a batch are one burst of 10 calls (io_submit of 10), not 10
    processes in the run queue (vmstat r 0.51 on a 3%-busy rx5670), and not 10 calls each through the run queue in
    turn (a busy rx5670's DBWR starved: -17.6% tpmC). All 10 then write at once: done at 0.0001 + 10 C + W."""
    env = simpy.Environment()
    files, waits = _KaioFiles(env), WaitEvents()
    dbwr = DatabaseWriter(env, _Cpu(env), files, 40, True, 0, waits, 0)
    assert dbwr.serial
    env.run(until=0.0001)
    dbwr.dirty(10)
    env.run(until=1.0)
    assert files.calls == [(0.0001, 10)] and dbwr.written_total == 10
    assert files.started == pytest.approx([0.0001 + 10 * _KaioFiles.C] * 10)
    assert max(files.ended) == pytest.approx(0.0001 + 10 * _KaioFiles.C + W)


def test_a_post_writes_what_is_pending_at_once_and_one_during_a_batch_waits_for_it_to_be_issued():
    """Below a batch's worth DBWR sleeps until its TIMEOUT; posted (a checkpoint LGWR waits for) it gathers what
    is pending at once. Synchronous (one write in flight), a post while a batch is being issued is taken up when
    that batch is out, not lost until the timeout: 3 dirty at 0.1 s, posted: written at 0.1, 0.1 + W, 0.1 + 2 W;
    2 more dirty and posted at 0.1 + W/2, mid-batch: written once the first three have been issued."""
    env, files, _, dbwr = _dbwr(100_000)
    assert dbwr.batch_size == WRITE_BATCH

    def lgwr():
        yield env.timeout(0.1)
        dbwr.dirty(3)
        dbwr.post()
        yield env.timeout(W / 2)
        dbwr.dirty(2)
        dbwr.post()
    env.process(lgwr())
    env.run(until=1.0)
    assert files.started == pytest.approx([0.1 + k * W for k in range(5)])
    assert dbwr.writes == 5 and not dbwr.posted
    dbwr.dirty(1)   # unposted, one buffer waits for the timeout
    env.run(until=1.0 + TIMEOUT / 2)
    assert dbwr.writes == 5


def test_a_post_made_while_dbwr_gathers_is_taken_up_as_soon_as_that_batch_is_issued():
    """40 buffers (batch 10), async, DBWR's CPU at 1 us an instruction (a buffer: 0.005 s). 10 dirty at 0.0001 s
    are gathered until 0.0501 s; 3 dirtied and posted at 0.02 s, mid-gather, are gathered as soon as the 10 are
    issued (to 0.0651 s): not only once the 10 are written (0.0601 s + 0.015 s), nor at the timeout."""
    env, files, dbwr = _slow_dbwr()
    env.run(until=0.0001)
    dbwr.dirty(10)
    env.run(until=0.02)
    dbwr.dirty(3)
    dbwr.post()
    env.run(until=1.0)
    assert files.started == pytest.approx([0.0501] * 10 + [0.0651] * 3) and not dbwr.posted


def test_a_post_outlives_a_timeout_that_fires_mid_batch():
    """Synchronous DBWR, a full batch dirty at 0.1 s: its 512 writes are issued one at a time until 0.1 + 511 W
    (5.21 s), past DBWR's TIMEOUT at 3.1 s, which finds the batch still being issued. 2 buffers dirtied and
    posted at 1 s are gathered once the batch is out and written right after it (0.1 + 512 W and 513 W): the
    timeout mid-batch keeps the post (it had dropped it: the 2 waited for the next timeout, 6.1 s)."""
    env, files, _, dbwr = _dbwr(100_000)
    env.run(until=0.1)
    dbwr.dirty(WRITE_BATCH)
    env.run(until=1.0)
    dbwr.dirty(2)
    dbwr.post()
    env.run(until=10.0)
    assert dbwr.written_total == WRITE_BATCH + 2
    assert files.started[WRITE_BATCH:] == pytest.approx([0.1 + WRITE_BATCH * W, 0.1 + (WRITE_BATCH + 1) * W])


def test_under_kernel_async_io_max_writes_caps_each_burst_of_calls():
    """Kernel async I/O with max_writes 4: a batch of 10 goes out in bursts that never take more than 4 writes
    outstanding, not as one burst of 10. Calls C, writes W: 4 calls at 0.0001 s; their writes end at 0.0141 s,
    freeing 4 slots, but the first end starts a burst of 1 (DBWR is making calls until 0.0151 s); as that is made
    it takes the 3 slots freed meanwhile (a burst of 3 then, not once the next write ends at 0.0251 s); then 1 at
    each of the next two ends, 0.0251 and 0.0281 s."""
    env = simpy.Environment()
    files = _KaioFiles(env)
    dbwr = DatabaseWriter(env, _Cpu(env), files, 40, True, 0, WaitEvents(), 4)
    assert dbwr.serial and dbwr.width == 4
    env.run(until=0.0001)
    dbwr.dirty(10)
    env.run(until=1.0)
    assert [n for _, n in files.calls] == [4, 1, 3, 1, 1]
    assert [t for t, _ in files.calls] == pytest.approx([0.0001, 0.0141, 0.0151, 0.0251, 0.0281])
    assert sum(n for _, n in files.calls) == dbwr.written_total == 10



def test_a_post_with_more_than_a_batch_pending_writes_all_of_it_at_once():
    """A post asks for what is pending now, batch after batch, not for its first batch only. Async (256 in
    flight), WRITE_BATCH + 88 dirty and posted at 0.1 s, as LGWR does when it waits for a checkpoint: the first
    batch goes out 256 at a time (0.1 s and 0.1 + W), and the 88 left, below a batch's worth, are gathered once
    it is issued and start as slots free, at 0.1 + 2 W; so a waiter for all of them is done at 0.1 + 3 W. (The
    post was cleared by the first batch: the 88 waited for DBWR's 3-s TIMEOUT, and LGWR, with every commit,
    behind them.)"""
    env, files, _, dbwr = _dbwr(100_000, async_io=True)
    got = []

    def lgwr():
        yield env.timeout(0.1)
        dbwr.dirty(WRITE_BATCH + 88)
        dbwr.post()
        yield from dbwr.wait_written(WRITE_BATCH + 88)
        got.append(env.now)
    env.process(lgwr())
    env.run(until=10.0)
    assert files.started[WRITE_BATCH:] == pytest.approx([0.1 + 2 * W] * 88)
    assert got == [pytest.approx(0.1 + 3 * W)] and not dbwr.posted