"""LGWR: redo reaches the log through the log buffer, with group commit.

Sessions copy their redo into the log buffer (database.log_buffer bytes) and a committing session
posts LGWR and waits ("log file sync"). LGWR writes what the buffer holds in one sequential write;
redo that arrives while a write is in flight goes in the next one, so one write carries more
commits as the load grows (group commit). Without a commit LGWR also writes once the buffer holds
FLUSH_BYTES or a third of its size, so a long transaction's redo is mostly on disk by its commit.
A write's bytes stay in the buffer until it completes: a session whose redo does not fit waits for
room ("log buffer space"), and no write is larger than the buffer. (LGWR's 3-second timeout is
left out: every workload here commits far more often.)
"""

from __future__ import annotations

from collections import deque

import simpy
from simpy.events import PENDING

REDO_BLOCK = 512  # bytes: log writes are whole redo blocks
# LGWR writes "when the redo log buffer is one-third full" or "when one megabyte of changes are in the
# buffer", whichever comes first (Oracle Database Concepts 11g R2, "Log Writer Process (LGWR)")
FLUSH_BYTES = 1024.0 * 1024.0


class LogWriter:
    def __init__(self, env: simpy.Environment, dispatcher, device, instructions_per_write: float,
                 sys_share: float, buffer_size: float = 1024.0 * 1024.0):
        self.env, self.dispatcher, self.device = env, dispatcher, device
        self.instructions_per_write = instructions_per_write
        self.sys_share = sys_share
        self.buffer_size = buffer_size
        self.flush_at = min(FLUSH_BYTES, buffer_size / 3.0)
        self.largest_write = -(-buffer_size // REDO_BLOCK) * REDO_BLOCK   # the buffer's redo blocks
        # positions in the stream of redo since the start: put in the buffer, in a write, on disk
        self.generated = self.submitted = self.written = 0.0
        self.syncs: deque = deque()                  # (position, event) of the commits waiting
        self.room_waiters: list[simpy.Event] = []    # sessions waiting for room in the buffer
        self.checkpoints = None   # LogSwitchCheckpoints when the logs are sized (sim/db/checkpoint.py)
        self.wakeup: simpy.Event | None = None
        self.writes = 0
        self.commits = 0
        self.bytes = 0.0
        # seconds working since reset_stats: on a strand and writing the log (its queue at a device it shares
        # included), not waiting for a strand (a CPU bound) or for a checkpoint (DBWR's)
        self.busy = 0.0
        self.since = 0.0       # reset_stats's time
        self.started = None    # the write at the device's start, None otherwise
        env.process(self._run())

    def has_room(self, redo_bytes: float) -> bool:
        """Whether the buffer holds `redo_bytes` more now (a write's bytes are held until it completes). An empty
        buffer takes a buffer's worth whatever the rounding of the positions (X + B - X may exceed B)."""
        unwritten = self.generated - self.written
        return redo_bytes <= self.buffer_size and (unwritten <= 0.0 or unwritten + redo_bytes <= self.buffer_size)

    def room(self) -> simpy.Event:
        """An event that fires when the write in flight (or the next, started now) completes and frees room."""
        ev = simpy.Event(self.env)
        self.room_waiters.append(ev)
        self._wake()
        return ev

    def put(self, redo_bytes: float) -> None:
        """Copy redo into the buffer (check has_room first); LGWR starts a write once FLUSH_BYTES or a third
        of the buffer waits."""
        self.generated += redo_bytes
        if self.generated - self.submitted >= self.flush_at:
            self._wake()

    def commit(self, redo_bytes: float) -> simpy.Event:
        """Put this transaction's last redo and post LGWR; the event fires once all its redo is on disk."""
        self.generated += redo_bytes
        ev = simpy.Event(self.env)
        if self.generated <= self.written:   # (nothing of it left unwritten: its redo went out before it)
            self.commits += 1
            ev.succeed()
            return ev
        self.syncs.append((self.generated, ev))
        self._wake()
        return ev

    def _wake(self) -> None:
        wakeup = self.wakeup
        if wakeup is not None and wakeup._value is PENDING:   # not wakeup.triggered
            wakeup.succeed()

    def _due(self) -> bool:
        unwritten = self.generated - self.submitted
        return unwritten > 0.0 and (bool(self.syncs) or bool(self.room_waiters) or unwritten >= self.flush_at)

    def _run(self):
        env = self.env
        while True:
            if not self._due():
                self.wakeup = simpy.Event(env)
                yield self.wakeup
                continue
            upto = self.generated
            nbytes = upto - self.submitted
            self.submitted = upto
            # whole redo blocks, and no more than the buffer holds ((X + B) - X may exceed B in floating point)
            nbytes = min(self.largest_write, max(REDO_BLOCK, -(-nbytes // REDO_BLOCK) * REDO_BLOCK))
            if self.checkpoints is not None:
                yield from self.checkpoints.before_write(nbytes)
            on_cpu = yield self.dispatcher.run(self.instructions_per_write, self.sys_share)
            self.busy += max(0.0, min(on_cpu or 0.0, env.now - self.since))   # (its CPU ends now)
            self.started = env.now
            queued = yield self.device.submit("write", nbytes, sequential=True)
            self.written = upto
            # a log file's path worth its wait for a strand (sim/os/filesystem.py): not the log's time
            queued = queued if isinstance(queued, float) else 0.0
            self.busy += max(0.0, env.now - max(self.started, self.since) - queued)
            self.started = None
            self.writes += 1
            self.bytes += nbytes
            syncs = self.syncs
            while syncs and syncs[0][0] <= upto:
                syncs.popleft()[1].succeed()
                self.commits += 1
            waiters, self.room_waiters = self.room_waiters, []
            for ev in waiters:
                ev.succeed()

    def utilisation(self) -> float:
        """The share of the time since reset_stats LGWR was working (on a strand or at the log device): one
        process, so near 1 it bounds the commits its writes can carry."""
        now = self.env.now
        busy = self.busy + (now - max(self.started, self.since) if self.started is not None else 0.0)
        return busy / (now - self.since) if now > self.since else 0.0

    def reset_stats(self) -> None:
        self.writes = self.commits = 0
        self.bytes = 0.0
        self.busy, self.since = 0.0, self.env.now
