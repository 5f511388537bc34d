"""A session (sim/db/session.py) by hand: what it waits for, and under which AWR event it records the time.

The instance around the session is a stand-in whose devices, LGWR, DBWR and VM take fixed times, so every
wait has an exact expected value (float arithmetic only: 1e-12 s).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import simpy

from sim.db.session import Session
from sim.hardware.cpu import Cpu, MemoryBehaviour
from sim.hardware.profile import CpuSpec
from sim.metrics import WaitEvents
from sim.os.dispatcher import Dispatcher


class _Device:
    """Serves every request in `service` s, any number at once; remembers what it was asked."""

    def __init__(self, env, service):
        self.env, self.service, self.requests = env, service, []

    def submit(self, kind, nbytes, offset=None):
        self.requests.append((kind, nbytes, offset, self.env.now))
        return self.env.timeout(self.service)


class _Lgwr:
    def __init__(self, env):
        self.env, self.posted = env, []

    def has_room(self, redo_bytes):
        return True                      # the log buffer never full here (tests/test_redo_props.py: when it is)

    def commit(self, redo_bytes):
        self.posted.append(redo_bytes)
        return self.env.timeout(0.003)   # the log write that covers this commit ends 3 ms later


class _Dbwr:
    """Too many dirty buffers until 2 ms from now."""

    def __init__(self, env):
        self.env, self.dirtied = env, []

    def free_buffer(self):
        yield self.env.timeout(0.002)

    def dirty(self, blocks, files, checkpoint):
        self.dirtied.append((blocks, files, checkpoint))


class _Datafiles:
    def __init__(self, env):
        self.env, self.reads, self.work = env, [], []

    def read(self, os_cached, files, cpu=0.0, sys_share=0.0):
        self.reads.append((os_cached, files))
        self.work.append((cpu, sys_share))
        began = self.env.now
        yield self.env.timeout(0.0001 if os_cached else 0.005)
        return began


class _Vm:
    def __init__(self, env, overcommit, seconds_per_mb):
        self.env, self._over, self.per_mb, self.asked = env, overcommit, seconds_per_mb, []

    def overcommit(self):
        return self._over

    def page_in(self, working_set, owed=0.0):
        self.asked.append((working_set, owed))
        if self.per_mb:
            yield self.env.timeout(self.per_mb * working_set / 2**20)
        return owed + 0.25    # what the next wake owes: the session keeps it


def _instance(dbwr=True, vm=None):
    env = simpy.Environment()
    spec = CpuSpec(model="t", isa="sparcv9", sockets=1, cores_per_socket=1, strands_per_core=1,
                   pipelines_per_core=1, clock=1e9, cpi_issue=1.0, llc_size=4 * 2**20)
    cpu = Cpu(env, spec)
    cpu.set_behaviour(MemoryBehaviour(0.0, 0.0))   # 1e9 instructions a second
    inst = SimpleNamespace(env=env, dispatcher=Dispatcher(env, cpu), lgwr=_Lgwr(env), waits=WaitEvents(),
                           dbwr=_Dbwr(env) if dbwr else None, datafiles=_Datafiles(env), physical_reads=0,
                           vm=vm(env) if vm else None, spec=SimpleNamespace(server_working_set=2**20),
                           cf_enqueue=simpy.Resource(env, 1), control_file=_Device(env, 0.002))
    return env, inst, Session(inst, 7)


def _waits(inst):
    return {name: (st.waits, round(st.time, 12)) for name, st in inst.waits.events.items()}


def _run(env, gen):
    """Run one generator of the session to its end, started 1 s later than now (a wait measured from 0
    would hide a start time added instead of subtracted)."""
    def proc():
        yield env.timeout(1.0)
        yield from gen
    env.process(proc())
    env.run()


def test_cpu_is_a_burst_on_the_dispatcher():
    env, inst, s = _instance()

    def work():
        yield s.cpu(2e6, 0.5)
    _run(env, work())
    assert env.now == pytest.approx(1.002, rel=1e-12)            # 2e6 instructions at 1e9 a second
    busy, sys = inst.dispatcher.cpu.strand_time()
    assert busy == pytest.approx(0.002, rel=1e-12) and sys == pytest.approx(0.001, rel=1e-12)
    assert inst.waits.events == {}                                 # CPU is not a wait


def test_commit_waits_log_file_sync_for_the_log_write():
    env, inst, s = _instance()
    _run(env, s.commit(4096.0))
    assert inst.lgwr.posted == [4096.0] and _waits(inst) == {"log file sync": (1, 0.003)}


@pytest.mark.parametrize("dbwr", [True, False])
def test_a_buffer_miss_waits_for_a_free_buffer_then_reads_one_block(dbwr):
    env, inst, s = _instance(dbwr=dbwr)
    _run(env, s.read_block(files=(2, 5)))   # not in the OS page cache unless said
    # the free-buffer wait (DBWR's to record) is not part of the read's 5 ms
    assert env.now == pytest.approx(1.007 if dbwr else 1.005, rel=1e-12)
    assert _waits(inst) == {"db file sequential read": (1, 0.005)}
    assert inst.physical_reads == 1 and inst.datafiles.reads == [(False, (2, 5))]
    _run(env, s.read_block(True))
    assert inst.physical_reads == 2 and inst.datafiles.reads[-1] == (True, None)
    assert _waits(inst) == {"db file sequential read": (2, 0.0051)}


def test_a_buffer_miss_hands_its_cpu_and_kernel_share_to_the_read():
    """The instructions run up to the read and their kernel share go to the datafiles' read as given (the strand
    that runs them makes the call): 2e6 instructions at 25% in the kernel, not swapped; none by default."""
    env, inst, s = _instance()
    _run(env, s.read_block(False, (0, 1), 2e6, 0.25))
    _run(env, s.read_block())
    assert inst.datafiles.work == [(2e6, 0.25), (0.0, 0.0)]

def test_dirtied_blocks_go_to_dbwr_and_nowhere_without_it():
    env, inst, s = _instance()
    s.dirtied(3, (0, 4), True)
    s.dirtied(2)
    assert inst.dbwr.dirtied == [(3, (0, 4), True), (2, None, False)]
    env, inst, s = _instance(dbwr=False)
    s.dirtied(3)   # all data cached: no writer, nothing to do


def test_waking_pages_in_only_when_memory_is_overcommitted():
    # no VM modelled, or nothing overcommitted: no fault, no wait
    for vm in (None, lambda env: _Vm(env, 0.0, 0.001)):
        env, inst, s = _instance(vm=vm)
        _run(env, s.wake(2**20))
        assert env.now == 1.0 and inst.waits.events == {}
        assert vm is None or inst.vm.asked == []
    # overcommitted: the server's working set (1 MB) and its client's (1 MB) come back at 1 ms per MB
    env, inst, s = _instance(vm=lambda env: _Vm(env, 1.0, 0.001))
    _run(env, s.wake(2**20))
    assert inst.vm.asked == [(2 * 2**20, 0.0)] and _waits(inst) == {"OS page in (swap)": (1, 0.002)}
    # overcommitted but nothing of this process was paged out: no wait recorded; the part of a page it owes
    # goes to its next wake
    env, inst, s = _instance(vm=lambda env: _Vm(env, 1.0, 0.0))
    _run(env, s.wake())
    _run(env, s.wake())
    assert inst.vm.asked == [(2**20, 0.0), (2**20, 0.25)] and inst.waits.events == {} and s.page_owed == 0.5


def test_a_synchronous_io_is_waited_for_under_its_event():
    env, inst, s = _instance()
    dev = _Device(env, 0.004)
    _run(env, s.io(dev, "read", 8192.0, 1e6))
    _run(env, s.io(dev, "write", 1e6, None, "direct path write"))
    assert dev.requests == [("read", 8192.0, 1e6, 1.0), ("write", 1e6, None, 2.004)]
    assert _waits(inst) == {"db file sequential read": (1, 0.004), "direct path write": (1, 0.004)}


def test_writes_behind_wait_only_for_a_free_slot_and_at_the_drain():
    """2 slots, writes of 4 ms issued after 1 ms of work each: the first two go at once, the third
    waits for the first's end (2 ms), and the drain for the second's and the third's (4 ms). Waits
    are recorded only then, under the event given, as Oracle records 'direct path write'."""
    from sim.db.physical_io import WriteBehind
    env, inst, s = _instance()
    dev = _Device(env, 0.004)
    out = WriteBehind(s, dev, 2, "direct path write")

    def load():
        for _ in range(3):
            yield s.cpu(1e6)                    # 1 ms
            yield from out.write(1e6)
        assert out.in_flight == 2
        yield from out.drain()
        assert out.in_flight == 0
    _run(env, load())
    assert [round(t, 9) for *_, t in dev.requests] == [1.001, 1.002, 1.005]
    assert _waits(inst) == {"direct path write": (2, 0.006)}
    assert env.now == pytest.approx(1.009)


def test_writes_behind_shared_by_two_processes_wake_both():
    """One slot, two processes each writing twice (4 ms a write) then draining: every write is issued in
    turn as the slot frees and none is lost; both finish (a single wake-up event had left one waiting for
    ever): the first when its writes are done and none is in flight, the other after its own."""
    from sim.db.physical_io import WriteBehind
    env, inst, s = _instance()
    dev = _Device(env, 0.004)
    out = WriteBehind(s, dev, 1, "direct path write")
    done = []

    def writer(name):
        for _ in range(2):
            yield from out.write(1e6)
        yield from out.drain()
        done.append((name, round(env.now, 9)))
    env.process(writer("a"))
    env.process(writer("b"))
    env.run()
    assert len(dev.requests) == 4 and [round(t, 9) for *_, t in dev.requests] == [0.0, 0.004, 0.008, 0.012]
    assert done == [("a", 0.008), ("b", 0.016)]


def test_control_file_transactions_queue_for_the_cf_enqueue():
    # two sessions at once, 3 writes of 16 KB to 2 copies each (2 ms, the copies in parallel): the second
    # waits 6 ms for the enqueue, then writes for 6 ms; the first's get, granted at once, is no wait
    env, inst, s = _instance()
    s2 = Session(inst, 8)
    done = []

    def txn(sess):
        yield env.timeout(1.0)
        yield from sess.control_file_transaction(3, 16384.0, 2)
        done.append(env.now)
    env.process(txn(s))
    env.process(txn(s2))
    env.run()
    assert done == [pytest.approx(1.006, rel=1e-12), pytest.approx(1.012, rel=1e-12)]
    assert _waits(inst) == {"enq: CF - contention": (1, 0.006), "control file parallel write": (6, 0.012)}
    writes = inst.control_file.requests
    assert len(writes) == 12 and {(k, n) for k, n, _o, _t in writes} == {("write", 16384.0)}
    assert [t for *_x, t in writes[:2]] == [1.0, 1.0]   # both copies of a write at once


def test_a_control_file_write_waits_for_its_slowest_copy():
    """Each write goes to every copy at once and ends when the last copy is written: with copies of 2 and 4 ms,
    two writes take 4 ms each (8 ms in all), not the faster copy's 2 ms; no other session: no enqueue wait."""
    env, inst, s = _instance()
    times = iter([0.002, 0.004] * 2)
    inst.control_file = SimpleNamespace(submit=lambda kind, nbytes: env.timeout(next(times)))
    _run(env, s.control_file_transaction(2, 16384.0, 2))
    assert env.now == pytest.approx(1.008, rel=1e-12)
    assert _waits(inst) == {"control file parallel write": (2, 0.008)}


def test_a_timed_wait_takes_its_time_and_is_recorded():
    env, inst, s = _instance()
    _run(env, s.wait("SQL*Net message from client", 1.5))
    _run(env, s.wait("SQL*Net message from client", 0.5))
    assert env.now == 4.0 and _waits(inst) == {"SQL*Net message from client": (2, 2.0)}
    assert s.sid == 7 and s.instance is inst and s.env is env
