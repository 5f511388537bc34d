"""LGWR: redo from commits reaches the log with group commit.

A committing session posts LGWR and waits ("log file sync"). LGWR writes everything in the
log buffer in one sequential write; commits that arrive while a write is in flight wait for
the next one, so one write carries more commits as the load grows (group commit).
"""

from __future__ import annotations

import simpy
from simpy.events import PENDING

REDO_BLOCK = 512  # bytes: log writes are whole redo blocks


class LogWriter:
    def __init__(self, env: simpy.Environment, dispatcher, device, instructions_per_write: float,
                 sys_share: float):
        self.env, self.dispatcher, self.device = env, dispatcher, device
        self.instructions_per_write = instructions_per_write
        self.sys_share = sys_share
        self.pending: list[simpy.Event] = []
        self.pending_bytes = 0.0
        self.checkpoints = None   # LogSwitchCheckpoints when the logs are sized (sim/db/checkpoint.py)
        self.wakeup: simpy.Event | None = None
        self.writes = 0
        self.commits = 0
        self.bytes = 0.0
        env.process(self._run())

    def commit(self, redo_bytes: float) -> simpy.Event:
        """Post LGWR with this transaction's redo; the event fires once it is on disk."""
        ev = simpy.Event(self.env)
        self.pending.append(ev)
        self.pending_bytes += redo_bytes
        wakeup = self.wakeup
        if wakeup is not None and wakeup._value is PENDING:   # not wakeup.triggered
            wakeup.succeed()
        return ev

    def _run(self):
        env = self.env
        while True:
            if not self.pending:
                self.wakeup = simpy.Event(env)
                yield self.wakeup
            batch, nbytes = self.pending, self.pending_bytes
            self.pending, self.pending_bytes = [], 0.0
            nbytes = max(REDO_BLOCK, -(-nbytes // REDO_BLOCK) * REDO_BLOCK)
            if self.checkpoints is not None:
                yield from self.checkpoints.before_write(nbytes)
            yield self.dispatcher.run(self.instructions_per_write, self.sys_share)
            yield self.device.submit("write", nbytes, sequential=True)
            self.writes += 1
            self.commits += len(batch)
            self.bytes += nbytes
            for ev in batch:
                ev.succeed()

    def reset_stats(self) -> None:
        self.writes = self.commits = 0
        self.bytes = 0.0
