"""LGWR and group commit (sim/db/redo.py) against a hand-worked timeline: a commit posts LGWR and
waits; LGWR writes what the log buffer holds in one sequential write of whole 512-byte redo blocks
(no larger than the buffer); commits that arrive while a write is in flight go together in the next one. The CPU and the log
device are stubs with fixed times, so every time below is exact."""

from __future__ import annotations

import pytest
import simpy

from sim.db.redo import REDO_BLOCK, LogWriter

MS = 1e-3
CPU = 1 * MS          # LGWR's CPU per write (the stub: 1 ns an instruction, 1e6 instructions)
WRITE = 4 * MS        # one log write on the stub device, whatever its size


class _Cpu:
    """Fires after the run queue's wait (queued) and the instructions' time, worth the time on the strand,
    as the dispatcher's run does."""
    def __init__(self, env, queued=0.0):
        self.env, self.calls, self.queued = env, [], queued

    def run(self, instructions, sys_share=0.0):
        self.calls.append((instructions, sys_share))
        return self.env.timeout(self.queued + instructions * 1e-9, value=instructions * 1e-9)


class _LogDevice:
    def __init__(self, env):
        self.env, self.ios = env, []

    def submit(self, kind, nbytes, sequential=False):
        self.ios.append((kind, nbytes, sequential, round(self.env.now / MS, 6)))   # ms
        return self.env.timeout(WRITE)


def _lgwr():
    env = simpy.Environment()
    cpu, dev = _Cpu(env), _LogDevice(env)
    return env, cpu, dev, LogWriter(env, cpu, dev, 1e6, 0.7)


def _commits(env, lgwr, posts):
    """Post (time, redo bytes) commits; return each commit's completion time, in ms."""
    done = {}

    def post(k, at, nbytes):
        yield env.timeout(at)
        ev = lgwr.commit(nbytes)
        ev.callbacks.append(lambda _e: done.__setitem__(k, round(env.now / MS, 6)))
    for k, (at, nbytes) in enumerate(posts):
        env.process(post(k, at, nbytes))
    return done


def test_group_commit_timeline_and_whole_redo_blocks():
    """100 bytes at 0.5 ms: LGWR wakes, 1 ms of CPU, a 512-byte write (one block at least) done at
    5.5 ms. 600 and 1 bytes at 1 and 3 ms arrive while it is in flight: one write of 601 -> 1024
    bytes right after, done at 10.5 ms. LGWR then sleeps; 1024 bytes at 20 ms (whole blocks already:
    not rounded up) done at 25 ms; 513 bytes at 30 ms: 1024, done at 35 ms."""
    assert REDO_BLOCK == 512
    env, cpu, dev, lgwr = _lgwr()
    assert lgwr.generated == lgwr.submitted == 0.0 and not lgwr.syncs
    done = _commits(env, lgwr, [(0.5 * MS, 100.0), (1 * MS, 600.0), (3 * MS, 1.0), (20 * MS, 1024.0),
                                (30 * MS, 513.0)])
    env.run(until=4 * MS)
    # 601 bytes for the next write; the first commit's in the write in flight
    assert lgwr.generated - lgwr.submitted == 601.0 and [p for p, _e in lgwr.syncs] == [100.0, 700.0, 701.0]
    env.run()
    assert done == {0: 5.5, 1: 10.5, 2: 10.5, 3: 25, 4: 35}
    assert dev.ios == [("write", 512, True, 1.5), ("write", 1024, True, 6.5), ("write", 1024, True, 21),
                       ("write", 1024, True, 31)]
    assert cpu.calls == [(1e6, 0.7)] * 4
    assert (lgwr.writes, lgwr.commits, lgwr.bytes) == (4, 5, 3584.0)
    assert lgwr.generated == lgwr.written
    lgwr.reset_stats()
    assert (lgwr.writes, lgwr.commits, lgwr.bytes) == (0, 0, 0.0)


def test_lgwr_busy_share_is_its_writes_time_over_the_window():
    """The same timeline: LGWR writes 0.5-5.5, 5.5-10.5, 20-25 and 30-35 ms (1 ms CPU + 4 ms write each), idle
    between. A write in hand counts up to now; a reset in the middle of one leaves its rest to the new window."""
    env, _cpu, _dev, lgwr = _lgwr()
    _commits(env, lgwr, [(0.5 * MS, 100.0), (1 * MS, 600.0), (3 * MS, 1.0), (20 * MS, 1024.0), (30 * MS, 513.0)])
    env.run(until=8 * MS)
    assert lgwr.utilisation() == pytest.approx(7.5 / 8)
    env.run(until=22 * MS)
    assert lgwr.utilisation() == pytest.approx(12.0 / 22)
    lgwr.reset_stats()
    env.run(until=40 * MS)
    assert lgwr.utilisation() == pytest.approx((3.0 + 5.0) / 18)


class _LogFile(_LogDevice):
    """A log file through a file system: each append first waits `queued` for a strand for its path's CPU, then
    writes; its event is worth that wait, as sim/os/filesystem.py's LogFile's is."""
    def __init__(self, env, queued):
        super().__init__(env)
        self.queued = queued

    def submit(self, kind, nbytes, sequential=False):
        def append():
            yield self.env.timeout(self.queued)
            yield super(_LogFile, self).submit(kind, nbytes, sequential)
            return self.queued
        return self.env.process(append())


def test_lgwr_busy_leaves_out_its_wait_for_a_strand_inside_a_log_file_write():
    """One commit at 0: CPU 0-1 ms, the append queued 1-3 ms for a strand, written 3-7 ms: busy 5 of 10 ms."""
    env = simpy.Environment()
    lgwr = LogWriter(env, _Cpu(env), _LogFile(env, queued=2 * MS), 1e6, 0.7)
    done = _commits(env, lgwr, [(0.0, 100.0)])
    env.run(until=10 * MS)
    assert done == {0: 7.0}
    assert lgwr.utilisation() == pytest.approx(5.0 / 10)


def test_lgwr_busy_leaves_out_its_wait_for_a_strand():
    """A saturated CPU keeps LGWR 2 ms in the run queue before each write's 1 ms of CPU: that wait is the CPU's
    bound, not LGWR's. One commit at 0: queued 0-2, CPU 2-3, write 3-7 ms; busy 5 of 10 ms, not 7."""
    env = simpy.Environment()
    lgwr = LogWriter(env, _Cpu(env, queued=2 * MS), _LogDevice(env), 1e6, 0.7)
    done = _commits(env, lgwr, [(0.0, 100.0)])
    env.run(until=10 * MS)
    assert done == {0: 7.0}
    assert lgwr.utilisation() == pytest.approx(5.0 / 10)


def test_a_write_waits_for_its_log_switch_and_commits_meanwhile_go_in_the_next_write():
    """With sized logs LGWR asks the checkpoints before each write, with the write's whole-block size;
    a 3-ms stall before the second write delays it (and its commit), and a commit posted during the
    stall is not in that write but in the one after."""
    env, cpu, dev, lgwr = _lgwr()
    asked = []

    class _Switches:
        def before_write(self, nbytes):
            asked.append((nbytes, round(env.now / MS, 6)))
            if len(asked) == 2:
                yield env.timeout(3 * MS)
    lgwr.checkpoints = _Switches()
    done = _commits(env, lgwr, [(0.0, 10.0), (1 * MS, 700.0), (6 * MS, 20.0)])
    env.run()
    # write 1 at 0: CPU to 1 ms, device to 5 ms; write 2 (700 -> 1024) asked at 5, stalls to 8,
    # CPU to 9, device to 13; the commit of 6 ms waits for write 3: CPU to 14, device to 18
    assert asked == [(512, 0), (1024, 5), (512, 13)]
    assert done == {0: 5, 1: 13, 2: 18}
    assert [b for _k, b, _s, _t in dev.ios] == [512, 1024, 512]
    # LGWR's busy time leaves out the 3-ms stall for the checkpoint (DBWR's bound, not LGWR's): three writes of
    # 1 ms CPU + 4 ms device, 15 of the 18 ms
    assert lgwr.utilisation() == pytest.approx(15.0 / 18)


def test_a_commit_posted_before_lgwr_first_runs_is_written_at_once():
    """No lost wake-up at the start: a commit posted as the instance comes up, before LGWR's first
    step, is in LGWR's first write (CPU 1 ms + write 4 ms) and LGWR then sleeps: one write only."""
    env, cpu, dev, lgwr = _lgwr()
    ev = lgwr.commit(10.0)
    env.run()
    assert ev.processed and env.now == pytest.approx(5 * MS)
    assert len(dev.ios) == 1 and lgwr.writes == 1


def _session(buffer_size):
    from types import SimpleNamespace
    from sim.db.session import Session
    from sim.metrics import WaitEvents
    env = simpy.Environment()
    cpu, dev = _Cpu(env), _LogDevice(env)
    lgwr = LogWriter(env, cpu, dev, 1e6, 0.7, buffer_size=buffer_size)
    inst = SimpleNamespace(env=env, lgwr=lgwr, waits=WaitEvents(), dispatcher=cpu)
    return env, dev, lgwr, inst, Session(inst, 0)


@pytest.mark.parametrize("kb", [12, 10])
def test_redo_beyond_a_third_of_the_buffer_is_written_before_the_commit(kb):
    """A 30 KB buffer flushes at 10 KB ('a third of the buffer', reached, not passed): 12 KB, or exactly 10 KB, of
    redo put at 0 is written at once (CPU 1 ms, device to 5 ms), with no commit waiting; the commit of 1 KB at
    8 ms then waits for its own 1 KB alone (to 13 ms)."""
    env, dev, lgwr, inst, session = _session(30 * 1024)
    assert lgwr.flush_at == 10 * 1024

    def work():
        yield from session.redo(kb * 1024)
        yield env.timeout(8 * MS)
        yield from session.commit(1024)
    env.process(work())
    env.run()
    assert [(b, t) for _k, b, _s, t in dev.ios] == [(kb * 1024, 1.0), (1024, 9.0)]
    assert inst.waits.events["log file sync"].time == pytest.approx(5 * MS)
    assert "log buffer space" not in inst.waits.events and lgwr.commits == 1


def test_no_write_is_larger_than_the_log_buffer_and_a_full_buffer_makes_sessions_wait():
    """100 KB of redo through a 16 KB buffer: written in pieces of at most 16 KB, the session waiting for room
    ('log buffer space') while each is written; the commit waits for the last. Before the buffer was modelled
    SQL*Loader's conventional path wrote 17.6 MB of redo in one write whatever log_buffer said (helper probe)."""
    env, dev, lgwr, inst, session = _session(16 * 1024)

    def work():
        yield from session.commit(100 * 1024)
    env.process(work())
    env.run()
    sizes = [b for _k, b, _s, _t in dev.ios]
    assert sum(sizes) == 100 * 1024 and max(sizes) <= 16 * 1024 and len(sizes) >= 100 // 16
    space = inst.waits.events["log buffer space"]
    assert space.waits >= 1 and space.time > 0.0
    assert lgwr.generated == lgwr.written == 100 * 1024 and lgwr.commits == 1
    # the end: 100 KB in writes of 5 ms each (1 ms CPU + 4 ms device), one after another
    assert env.now == pytest.approx(len(sizes) * 5 * MS)


def test_a_commit_whose_redo_is_already_written_returns_at_once_and_counts():
    """Redo put and written before the commit (a long transaction's): the commit has nothing left to wait for,
    yet it is a commit (commits per log write had left it out; review). It records no 'log file sync': Oracle
    waits only for redo not yet written (a 0-s wait had been counted, lowering the event's average)."""
    env, dev, lgwr, inst, session = _session(30 * 1024)

    def work():
        yield from session.redo(12 * 1024)   # over the 10 KB trigger: written at once
        yield env.timeout(10 * MS)
        yield from session.commit(0.0)
    env.process(work())
    env.run()
    assert lgwr.commits == 1 and lgwr.writes == 1
    assert "log file sync" not in inst.waits.events


def test_redo_that_exactly_fills_the_buffer_fits_without_waiting():
    """6 KB put (under the 10 KB trigger of a 30 KB buffer: no write) and a commit of 24 KB at once: 6 + 24 KB
    is the buffer exactly, so the commit's redo goes in with no 'log buffer space' wait and LGWR writes the
    30 KB in one write (CPU 1 ms, device 1-5 ms): the commit waits 5 ms."""
    env, dev, lgwr, inst, session = _session(30 * 1024)

    def work():
        yield from session.redo(6 * 1024)
        yield from session.commit(24 * 1024)
    env.process(work())
    env.run()
    assert [(b, t) for _k, b, _s, t in dev.ios] == [(30 * 1024, 1.0)]
    assert "log buffer space" not in inst.waits.events
    assert inst.waits.events["log file sync"].time == pytest.approx(5 * MS) and lgwr.commits == 1


def test_a_session_waiting_for_room_starts_a_write_of_redo_below_the_trigger():
    """9 KB put into a 30 KB buffer (under its 10 KB trigger: LGWR stays asleep), then 25 KB more, which does
    not fit: the session waiting for room must itself get LGWR to write the 9 KB (CPU 1 ms, device 1-5 ms),
    else nothing ever frees the buffer. At 5 ms the 25 KB goes in (over the trigger: written 6-10 ms) and the
    commit of nothing more waits for it: 'log buffer space' 5 ms, 'log file sync' 5 ms."""
    env, dev, lgwr, inst, session = _session(30 * 1024)

    def work():
        yield from session.redo(9 * 1024)
        yield from session.redo(25 * 1024)
        yield from session.commit(0.0)
    env.process(work())
    env.run()
    assert [(b, t) for _k, b, _s, t in dev.ios] == [(9 * 1024, 1.0), (25 * 1024, 6.0)]
    space, sync = inst.waits.events["log buffer space"], inst.waits.events["log file sync"]
    assert (space.waits, space.time) == (1, pytest.approx(5 * MS))
    assert (sync.waits, sync.time) == (1, pytest.approx(5 * MS))
    assert lgwr.generated == lgwr.written == 34 * 1024 and env.now == pytest.approx(10 * MS)


def test_a_buffer_of_part_of_a_redo_block_still_writes_all_it_holds():
    """A 10,000-byte buffer is 19.5 redo blocks: a full buffer's redo is written as 20 blocks (10,240 bytes),
    the buffer's last part-block rounded up, not cut to the 19 whole blocks (9,728 bytes, less than the redo)."""
    env, cpu, dev, _ = _lgwr()
    lgwr = LogWriter(env, cpu, dev, 1e6, 0.7, buffer_size=10_000.0)
    assert lgwr.has_room(10_000.0) and lgwr.largest_write == 20 * REDO_BLOCK
    lgwr.commit(10_000.0)
    env.run()
    assert [b for _k, b, _s, _t in dev.ios] == [20 * REDO_BLOCK]
    assert lgwr.bytes >= lgwr.generated == lgwr.written == 10_000.0


def test_a_write_of_a_full_buffer_is_no_larger_than_the_buffer_whatever_the_rounding():
    """Positions are float sums of redo sizes: at X = 18,001.8 bytes written, X + 16 KB - X is 16 KB plus a
    rounding bit, which rounded up to whole redo blocks would be 33 blocks. An empty 16 KB buffer takes
    16 KB of redo (has_room) and LGWR writes it as 16 KB, the buffer's 32 blocks, not one block more."""
    env, cpu, dev, _ = _lgwr()
    lgwr = LogWriter(env, cpu, dev, 1e6, 0.7, buffer_size=16 * 1024)
    for n in (9000.9, 9000.9):
        lgwr.commit(n)
        env.run()
    x, b = lgwr.written, 16 * 1024.0
    assert x == lgwr.generated and (x + b) - x > b      # the rounding this is about
    assert lgwr.has_room(b)
    lgwr.commit(b)
    env.run()
    assert [n for _k, n, _s, _t in dev.ios] == [18 * REDO_BLOCK, 18 * REDO_BLOCK, 32 * REDO_BLOCK]
    assert lgwr.written == lgwr.generated and lgwr.commits == 3


def test_lgwr_busy_window_reset_in_the_middle_of_its_cpu_or_its_write():
    """A reset in the middle of a write's CPU counts only the CPU after it; one in the middle of its device time
    counts only the device time after it, also while the write is still in hand (never above 100%). One commit at
    0.5 ms: CPU 0.5-1.5, device 1.5-5.5 ms. Reset at 1.0 ms: busy 0.5 (CPU) + 4 (device) over 1-10 ms = 4.5 / 9.
    Reset at 3.0 ms, read at 4.0: the write in hand since 1.5, counted from 3.0: 1 of 1 ms. Read at the reset's
    own instant: no window yet, 0."""
    env, _cpu, _dev, lgwr = _lgwr()
    assert lgwr.utilisation() == 0.0                 # t = 0: an empty window
    _commits(env, lgwr, [(0.5 * MS, 100.0)])
    env.run(until=1.0 * MS)
    lgwr.reset_stats()
    assert lgwr.utilisation() == 0.0                 # now == since: 0, no division by an empty window
    env.run(until=10 * MS)
    assert lgwr.utilisation() == pytest.approx(4.5 / 9)
    env, _cpu, _dev, lgwr = _lgwr()
    _commits(env, lgwr, [(0.5 * MS, 100.0)])
    env.run(until=3.0 * MS)
    lgwr.reset_stats()
    env.run(until=4.0 * MS)
    assert lgwr.started == pytest.approx(1.5 * MS)   # the write in hand
    assert lgwr.utilisation() == pytest.approx(1.0)
    env.run(until=7.0 * MS)                           # done at 5.5: 2.5 of 4 ms
    assert lgwr.utilisation() == pytest.approx(2.5 / 4)


def test_a_commit_whose_redo_does_not_fit_times_log_file_sync_from_its_last_piece():
    """40 KB committed through a 30 KB buffer: 30 KB goes in at once (over the 10 KB trigger: CPU 0-1 ms, device
    1-5 ms); the last 10 KB waits for that write ('log buffer space' 5 ms), goes in at 5 ms and is written 6-10 ms.
    'log file sync' is the 5 ms from then, not the 10 ms since the commit began (the room is its own wait)."""
    env, dev, lgwr, inst, session = _session(30 * 1024)
    env.process(session.commit(40 * 1024))
    env.run()
    assert [(b, t) for _k, b, _s, t in dev.ios] == [(30 * 1024, 1.0), (10 * 1024, 6.0)]
    space, sync = inst.waits.events["log buffer space"], inst.waits.events["log file sync"]
    assert (space.waits, space.time) == (1, pytest.approx(5 * MS))
    assert (sync.waits, sync.time) == (1, pytest.approx(5 * MS))


def test_two_sessions_waiting_for_room_take_it_in_turn():
    """9 KB in a 30 KB buffer, then two sessions each with 25 KB, which does not fit: both wait for the 9 KB's
    write (CPU 0-1 ms, device 1-5 ms). At 5 ms the first puts its 25 KB; the second, woken too, finds the buffer
    full again and waits on for that write (6-10 ms) before its own goes in (written 11-15 ms): 'log buffer
    space' 5 + 10 ms, and the buffer never holds more than its 30 KB."""
    env, dev, lgwr, inst, first = _session(30 * 1024)
    second = type(first)(inst, 1)
    most = []

    def work(session, put_first):
        if put_first:
            yield from session.redo(9 * 1024)
        yield from session.redo(25 * 1024)
        most.append(lgwr.generated - lgwr.written)
    env.process(work(first, True))
    env.process(work(second, False))
    env.run()
    assert [(b, t) for _k, b, _s, t in dev.ios] == [(9 * 1024, 1.0), (25 * 1024, 6.0), (25 * 1024, 11.0)]
    space = inst.waits.events["log buffer space"]
    assert (space.waits, space.time) == (2, pytest.approx(15 * MS))
    assert max(most) <= 30 * 1024 and lgwr.written == lgwr.generated == 59 * 1024


def test_a_write_in_flight_holds_its_room_and_its_commit_until_it_ends():
    """12 KB put at 0 (over the 10 KB trigger of a 30 KB buffer: CPU 0-1 ms, device 1-5 ms). At 2 ms its session
    commits nothing more: its redo is in the write in flight, not yet on disk, so it waits for that write's end
    ('log file sync' 3 ms, no write of its own). Another session's 20 KB at 2 ms does not fit beside the 12 KB
    being written: 'log buffer space' 3 ms, then its own write (6-10 ms)."""
    env, dev, lgwr, inst, first = _session(30 * 1024)
    other = type(first)(inst, 1)

    def committer():
        yield from first.redo(12 * 1024)
        yield env.timeout(2 * MS)
        yield from first.commit(0.0)

    def writer():
        yield env.timeout(2 * MS)
        yield from other.redo(20 * 1024)
    env.process(committer())
    env.process(writer())
    env.run()
    assert [(b, t) for _k, b, _s, t in dev.ios] == [(12 * 1024, 1.0), (20 * 1024, 6.0)]
    space, sync = inst.waits.events["log buffer space"], inst.waits.events["log file sync"]
    assert (space.waits, space.time) == (1, pytest.approx(3 * MS))
    assert (sync.waits, sync.time) == (1, pytest.approx(3 * MS)) and lgwr.commits == 1


def test_redo_put_during_a_write_is_not_on_disk_until_the_next():
    """A commit of 100 bytes at 0 is written 1-5 ms (512 bytes); 1 KB put at 2 ms (under the trigger) is not in
    that write: a commit of nothing more at 6 ms waits for a write of its own (CPU 6-7, device 7-11 ms),
    'log file sync' 5 ms."""
    env, dev, lgwr, inst, session = _session(30 * 1024)
    other = type(session)(inst, 1)

    def work():
        yield from session.commit(100.0)
        yield env.timeout(1 * MS)
        yield from session.commit(0.0)

    def put():
        yield env.timeout(2 * MS)
        yield from other.redo(1024.0)
    env.process(work())
    env.process(put())
    env.run()
    assert [(b, t) for _k, b, _s, t in dev.ios] == [(512, 1.0), (1024, 7.0)]
    sync = inst.waits.events["log file sync"]
    assert (sync.waits, sync.time) == (2, pytest.approx(10 * MS)) and lgwr.written == lgwr.generated == 1124.0
