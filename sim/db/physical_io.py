"""What a physical read costs a shadow process, by path ("everything is a CPU problem").

Three ways Oracle reads a block, each with its own CPU and its own wait:

- SGA-buffered single-block read ('db file sequential read'): find the block in the
  buffer cache under a cache-buffers-chains latch; on a miss take a cache-buffers-lru-chain
  latch to replace the coldest buffer, issue a synchronous read and wait for it, then make
  the buffer current and pin it. Shared-cache work on top of the SQL's own.
- Direct path read into the PGA ('direct path read'): no buffer lookup, no latches, no
  replacement; the block lands in process memory. Reads are asynchronous with a number of
  I/O slots per session (Oracle's default is 2 slots, then adaptive: 10365 trace
  "Number slots 2", M. Hatem 2015 after F. Hoogland), so a session processes one block
  while the next is in flight.
- Asynchronous reads into process memory that nobody looks at (CALIBRATE_IO,
  'Disk file I/O Calibration'): only the system calls, submitted and reaped a batch at a
  time (BatchReader).

A read is one CPU burst (the work after the previous block plus the set-up of the next:
they are contiguous) and one device wait, plus a latch sleep when a latch is contended:
a few events per read whatever the load.
"""

from __future__ import annotations

from dataclasses import dataclass

import simpy

from sim.db.latches import CBC_INSTRUCTIONS, LRU_INSTRUCTIONS, LatchFamily


@dataclass(frozen=True)
class ReadCosts:
    """Instructions per block, by path (the workload supplies them, with their sources)."""

    sql: float            # the SQL's own work per block, read system call included (every path)
    cache: float          # SGA path only: buffer header, hash chain and working-set upkeep
    sys_share: float      # kernel share of the shadow process's CPU


class ReadPaths:
    """The read paths of one instance against one device."""

    def __init__(self, instance, device, costs: ReadCosts, block_size: float, strand_rate: float,
                 cbc: LatchFamily, lru: LatchFamily, hit_ratio: float, rng):
        self.instance, self.env, self.device = instance, instance.env, device
        self.costs, self.block_size = costs, block_size
        self.strand_rate = strand_rate     # instructions/s of a strand alone: converts spinning to work
        self.cbc, self.lru = cbc, lru
        self.hit_ratio = hit_ratio
        self.rng = rng
        self._u: list[float] = []
        self.logical_reads = 0
        self.physical_reads = 0

    def _uniform(self) -> float:
        if not self._u:
            self._u = self.rng.random(4096).tolist()
        return self._u.pop()

    def _sleep(self, latch: LatchFamily, seconds: float):
        yield self.env.timeout(seconds)
        self.instance.waits.add(latch.event, seconds)

    def sga_read(self, session, extra_instructions: float = 0.0):
        """Generator: one block through the buffer cache; True if it was read from storage."""
        self.logical_reads += 1
        spin, sleep = self.cbc.get()
        work = self.costs.sql + CBC_INSTRUCTIONS + extra_instructions
        physical = self.hit_ratio <= 0.0 or self._uniform() >= self.hit_ratio
        if sleep > 0.0:
            yield from self._sleep(self.cbc, sleep)
        if physical:
            spin2, sleep2 = self.lru.get()
            spin += spin2
            work += self.costs.cache + LRU_INSTRUCTIONS
            if sleep2 > 0.0:
                yield from self._sleep(self.lru, sleep2)
        yield session.cpu(work + spin * self.strand_rate, self.costs.sys_share)
        if physical:
            inst = self.instance
            if inst.dbwr is not None:   # the block needs a free buffer: wait for DBWR if it is behind
                yield from inst.dbwr.free_buffer()
            start = self.env.now
            yield self.device.submit("read", self.block_size)
            inst.waits.add("db file sequential read", self.env.now - start)
            inst.physical_reads += 1   # AWR's physical reads, as Session.read_block counts them
            self.physical_reads += 1
        return physical


class AsyncReader:
    """One process keeping up to `slots` asynchronous block reads in flight.

    Like io_getevents, next_block() takes whichever read has completed (in any order),
    waiting (recorded under `event`) only if none has; it then runs `instructions` of CPU
    for that block and for issuing the next read. A slot stays taken from the issue until
    the block is processed. O(1) per read: a completion only bumps a counter.
    """

    __slots__ = ("paths", "session", "slots", "event", "instructions", "in_flight", "ready", "_waiter")

    def __init__(self, paths: ReadPaths, session, slots: int, event: str, instructions: float):
        self.paths, self.session, self.slots = paths, session, slots
        self.event, self.instructions = event, instructions
        self.in_flight = 0
        self.ready = 0
        self._waiter = None

    def _issue(self) -> None:
        self.in_flight += 1
        self.paths.device.submit("read", self.paths.block_size).callbacks.append(self._completed)

    def _completed(self, _ev) -> None:
        self.in_flight -= 1
        self.ready += 1
        if self._waiter is not None:
            waiter, self._waiter = self._waiter, None
            waiter.succeed()

    @property
    def busy(self) -> bool:
        return self.in_flight + self.ready > 0

    def next_block(self):
        paths, env = self.paths, self.paths.env
        while self.in_flight + self.ready < self.slots:
            self._issue()
        if not self.ready:
            start = env.now
            self._waiter = env.event()
            yield self._waiter
            paths.instance.waits.add(self.event, env.now - start)
        self.ready -= 1
        paths.physical_reads += 1
        yield self.session.cpu(self.instructions, paths.costs.sys_share)
        if self.in_flight + self.ready < self.slots:
            self._issue()


class BatchReader:
    """One process submitting `slots` asynchronous reads at once and reaping the whole batch
    (one io_submit, then io_getevents for all of them) before the next: a batch costs its
    slowest read. The wait is recorded under `event`; then `instructions` of CPU per read.
    Setting `slots` to 0 retires the process after its current batch. Each read's latency,
    submission to completion, is summed in `read_time` over `reads_done` reads, whatever the
    device (what CALIBRATE_IO reports).
    """

    __slots__ = ("paths", "session", "slots", "event", "instructions", "pending", "_done", "_start",
                 "read_time", "reads_done")

    def __init__(self, paths: ReadPaths, session, event: str, instructions: float):
        self.paths, self.session, self.event, self.instructions = paths, session, event, instructions
        self.slots = self.pending = self.reads_done = 0
        self.read_time = self._start = 0.0
        self._done = None

    def _completed(self, _ev) -> None:
        self.read_time += self.paths.env.now - self._start   # the whole batch was submitted at _start
        self.reads_done += 1
        self.pending -= 1
        if not self.pending:
            self._done.succeed()

    def next_batch(self):
        """Generator: one batch of `slots` reads; returns how many were read."""
        paths, env = self.paths, self.paths.env
        k = self.pending = self.slots
        if not k:
            return 0
        self._done = env.event()
        start = self._start = env.now
        for _ in range(k):
            paths.device.submit("read", paths.block_size).callbacks.append(self._completed)
        yield self._done
        paths.instance.waits.add(self.event, env.now - start)
        paths.physical_reads += k
        yield self.session.cpu(k * self.instructions, paths.costs.sys_share)
        return k


class ReadAhead:
    """One process reading `nbytes` from `offset` of a device in order, `buffer` bytes at a time, with the next
    read already in flight while it works on the current buffer (an RMAN channel's asynchronous reads of a
    datafile; the OS reading ahead of sqlldr's parser). next_buffer() waits for the current buffer, recorded
    under `event`, issues the next read and returns the bytes got; `left` is what is still to come."""

    __slots__ = ("instance", "env", "device", "buffer", "event", "position", "left", "_next")

    def __init__(self, session, device, offset: float, nbytes: float, buffer: float, event: str):
        self.instance, self.env, self.device = session.instance, session.env, device
        self.buffer, self.event = buffer, event
        self.position, self.left = offset, nbytes
        self._next = device.submit("read", min(buffer, nbytes), offset)

    def next_buffer(self):
        """Generator: wait for the buffer in flight; returns its bytes."""
        env = self.env
        n = min(self.buffer, self.left)
        start = env.now
        yield self._next
        self.instance.waits.add(self.event, env.now - start)
        self.position += n
        self.left -= n
        if self.left > 0:
            self._next = self.device.submit("read", min(self.buffer, self.left), self.position)
        return n


class WriteBehind:
    """One process's asynchronous writes to a device (a backup piece's output buffers, a direct load's
    formatted blocks): it hands a write over and goes on working, with at most `slots` writes in flight.
    With every slot taken, write() waits for one to complete; drain() waits for all of them, as a job must
    before it is done. Oracle records such waits only then, under `event` (Oracle Database Reference 12.1,
    C.3.43 'direct path write': "if the session has no free slot ... or at the end of the operation")."""

    __slots__ = ("instance", "env", "device", "slots", "event", "in_flight", "_waiters")

    def __init__(self, session, device, slots: int, event: str):
        self.instance, self.env, self.device = session.instance, session.env, device
        self.slots, self.event = slots, event
        self.in_flight = 0
        self._waiters: list[simpy.Event] = []   # woken at each completion, each to look again

    def write(self, nbytes: float):
        """Generator: issue one write (where the device puts it), first waiting for a free slot if none is."""
        if self.in_flight >= self.slots:
            yield from self._wait(lambda: self.in_flight < self.slots)
        self.in_flight += 1
        self.device.submit("write", nbytes).callbacks.append(self._done)

    def drain(self):
        """Generator: wait until every write issued has completed."""
        if self.in_flight:
            yield from self._wait(lambda: self.in_flight == 0)

    def _wait(self, ready):
        start = self.env.now
        while not ready():
            woken = simpy.Event(self.env)
            self._waiters.append(woken)
            yield woken
        self.instance.waits.add(self.event, self.env.now - start)

    def _done(self, _event) -> None:
        self.in_flight -= 1
        waiters, self._waiters = self._waiters, []
        for woken in waiters:
            woken.succeed()
