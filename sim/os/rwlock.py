"""The per-file reader/writer lock of a POSIX file system (the inode rwlock).

Every read() and write() of a regular file takes its inode's rwlock: shared for a read,
exclusive for a write, for the whole system call. With Oracle's datafiles opened O_DSYNC a
write returns only when the block is on disk, so the lock is held for the write's full disk
time; readers of that file wait behind it, and a writer waits until the reads in progress
on that file finish ("DBWn must wait for all those reads to complete before it can acquire
the file system read/write lock ... Once DBWn has acquired the lock, all readers must wait
for its write to complete", Ixora, Oracle Internals Notes, "File System Read/Write Locks").
The lock is taken for direct I/O too (ibid.). Raw devices and Quick I/O files have no such
lock (VERITAS File System Administrator's Guide, "Avoiding kernel write locks").

Solaris rwlocks prefer writers: a waiting writer blocks new readers, and when a writer
releases, the next waiting writer goes first; readers are let in together when no writer
waits (the Solaris 2.6-era kernel, rwlock.c 1.55 96/09/10 SMI: rw_enter as reader sleeps
while `writewanted` is set; rw_exit_wakeup from a writer releases one waiting writer if
`writewanted`, else every waiting reader; the last reader out releases a writer). UFS takes
this lock as the inode's i_rwlock, writer for a write (direct or not) and reader for a read,
until Solaris 8 1/01 let direct rewrites share it ("Improved UFS Direct I/O Concurrency",
Solaris 8 System Administration Supplement). Per acquire and release the work is O(1)
(plus waking the waiting readers at once).

Statistics are time-weighted (Law's method: areas under the level curves): the fraction of
time a writer holds the lock, the mean number of readers holding it, the mean numbers of
readers and writers waiting; and the tallies of waits. Little's law ties them together:
mean waiting = arrival rate x mean wait.
"""

from __future__ import annotations

from collections import deque

import simpy


class RWLock:
    """A writer-preferring reader/writer lock with time-weighted statistics."""

    __slots__ = ("env", "readers", "writer", "waiting_writers", "waiting_readers", "_since", "_start",
                 "write_held_area", "readers_area", "waiting_readers_area", "waiting_writers_area",
                 "read_acquires", "write_acquires", "read_wait_total", "write_wait_total", "_asked")

    def __init__(self, env: simpy.Environment):
        self.env = env
        self.readers = 0
        self.writer = False
        self.waiting_writers: deque = deque()
        self.waiting_readers: list = []
        self._asked: dict = {}   # waiting event -> time it asked
        self.reset_stats()

    # --- statistics -------------------------------------------------------------------
    def _advance(self) -> None:
        now = self.env.now
        dt = now - self._since
        if dt > 0.0:
            if self.writer:
                self.write_held_area += dt
            self.readers_area += self.readers * dt
            self.waiting_readers_area += len(self.waiting_readers) * dt
            self.waiting_writers_area += len(self.waiting_writers) * dt
        self._since = now

    def reset_stats(self) -> None:
        self._since = self._start = self.env.now
        self.write_held_area = self.readers_area = 0.0
        self.waiting_readers_area = self.waiting_writers_area = 0.0
        self.read_acquires = self.write_acquires = 0
        self.read_wait_total = self.write_wait_total = 0.0

    def stats(self) -> dict:
        """Time-weighted levels since the last reset, and the waits of grants made since."""
        self._advance()
        span = self.env.now - self._start
        per = (lambda a: a / span) if span > 0.0 else (lambda a: 0.0)
        return {
            "write_held": per(self.write_held_area),
            "readers_holding": per(self.readers_area),
            "readers_waiting": per(self.waiting_readers_area),
            "writers_waiting": per(self.waiting_writers_area),
            "read_acquires": self.read_acquires,
            "write_acquires": self.write_acquires,
            "read_wait_total": self.read_wait_total,
            "write_wait_total": self.write_wait_total,
        }

    # --- locking ----------------------------------------------------------------------
    def acquire(self, exclusive: bool) -> simpy.Event:
        """An event that fires when the lock is granted (already fired if free)."""
        self._advance()
        ev = simpy.Event(self.env)
        if exclusive:
            if not self.writer and not self.readers and not self.waiting_writers:
                self.writer = True
                self.write_acquires += 1
                ev.succeed()
            else:
                self._asked[ev] = self.env.now
                self.waiting_writers.append(ev)
        elif not self.writer and not self.waiting_writers:
            self.readers += 1
            self.read_acquires += 1
            ev.succeed()
        else:
            self._asked[ev] = self.env.now
            self.waiting_readers.append(ev)
        return ev

    def release(self, exclusive: bool) -> None:
        self._advance()
        if exclusive:
            self.writer = False
        else:
            self.readers -= 1
        if self.writer or self.readers:
            return
        now = self.env.now
        if self.waiting_writers:
            ev = self.waiting_writers.popleft()
            self.writer = True
            self.write_acquires += 1
            self.write_wait_total += now - self._asked.pop(ev)
            ev.succeed()
        elif self.waiting_readers:
            waiting, self.waiting_readers = self.waiting_readers, []
            self.readers += len(waiting)
            self.read_acquires += len(waiting)
            for ev in waiting:
                self.read_wait_total += now - self._asked.pop(ev)
                ev.succeed()
