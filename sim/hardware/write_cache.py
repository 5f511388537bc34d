"""A RAID controller's write-back cache: battery-backed memory that acknowledges a write as soon
as it holds it, and destages it to the drives later, at the drives' own speed.

A write is acknowledged once it has crossed the bus into the cache (controller overhead plus
the transfer). It stays there, dirty, until the controller destages it. The controller keeps
DESTAGE_PER_DRIVE destage writes per drive in flight and takes the next one from all the data
that is dirty, in one sweep across the volume (C-LOOK by offset): the more is dirty, the
closer together the destages land and the shorter the seeks between them (on drives with a
seek curve), so the array writes faster as the cache fills (Ruemmler & Wilkes, "UNIX disk
access patterns", 1993; the write-back caches of RAID controllers destage in this way). A
random destage on RAID5 is the volume's read-modify-write (two reads, two writes). Sequential
writes (a redo log) are destaged in order ahead of random ones and, gathered into whole
stripes, with parity computed from the new data alone (no reads).

A write that finds the cache full waits, in arrival order, for a destage to make room: then
the host writes no faster than the drives destage. The cache holds data only (parity is
computed at destage); a write larger than the whole cache goes straight through.

DESTAGE_PER_DRIVE = 2 (estimate): enough tagged commands queued per drive that it never idles
between two destages, few enough to leave reads a short queue.

A steady state, not the fill (`watch` then `settle`): a cache that fills more slowly than a run's
warm-up (512 MB at a net 1-3 MB/s takes minutes) acknowledges every write at bus speed through a
short run and then, full, at the destage rate: the run would report the fill, a transient. Over
the watch the cache fills at the rate it accepts bytes less its destage capacity (bytes destaged per
second with destages in flight); where that is positive it would fill whatever the run's length,
and `settle` fills it at once with stand-in writes (random places on the volume, of the watch's
mean write size), destaged like any others: only the time to get there is skipped.
"""

from __future__ import annotations

import bisect
from collections import deque

import simpy

from sim.metrics import Mean

DESTAGE_PER_DRIVE = 2


class WriteBackCache:
    def __init__(self, env: simpy.Environment, volume, size: float):
        self.env, self.volume, self.size = env, volume, size
        self.free = size
        self.depth = DESTAGE_PER_DRIVE * len(volume.disks)
        self.ctrl = volume.controllers[0] if volume.controllers else None
        self.overhead = volume.disks[0].overhead
        self.dirty: list = []                 # random writes: (offset, seq, bytes), ascending
        self.log: deque = deque()             # sequential writes, in arrival order: (offset, bytes)
        self.waiting: deque = deque()         # writes waiting for room: (bytes, offset, sequential, event, since)
        self.cursor = 0.0
        self.in_flight = 0
        self._seq = 0
        self.writes = self.destages = 0
        self.full_wait = Mean()               # time a write waited for room (every write, 0 if none)
        self.accepted_total = self.destaged_total = 0.0   # bytes ever taken in and destaged (never reset)
        self.fill_rate: float | None = None   # net fill rate (bytes/s) the last settle saw
        self._watch_from: float | None = None
        self._w0: tuple | None = None         # (time, accepted, destaged, writes) when the watch began
        self._busy = 0.0                      # seconds with destages in flight since then
        self._busy_from: float | None = None

    def write(self, nbytes: float, offset: float, sequential: bool) -> simpy.Event:
        """Accept a write at `offset` into the volume; the event fires when it is acknowledged."""
        if nbytes > self.size:
            return self.volume.submit("write", nbytes, offset, sequential, through=True)
        done = simpy.Event(self.env)
        self.writes += 1
        if self._w0 is None and self._watch_from is not None and self.env.now >= self._watch_from:
            self._w0 = (self.env.now, self.accepted_total, self.destaged_total, self.writes - 1)
            self._busy, self._busy_from = 0.0, (self.env.now if self.in_flight else None)
        if not self.waiting and nbytes <= self.free:
            self.full_wait.add(0.0)
            self._accept(nbytes, offset, sequential, done)
        else:
            self.waiting.append((nbytes, offset, sequential, done, self.env.now))
        return done

    def occupancy(self) -> float:
        """Share of the cache holding data not yet on the drives."""
        return 1.0 - self.free / self.size

    def _accept(self, nbytes: float, offset: float, sequential: bool, done: simpy.Event) -> None:
        self.free -= nbytes
        self.accepted_total += nbytes
        ack = self.env.timeout(self.overhead)

        def landed(_e=None):
            if sequential:
                self.log.append((offset, nbytes))
            else:
                self._seq += 1
                bisect.insort(self.dirty, (offset, self._seq, nbytes))
            done.succeed()
            self._destage()
        if self.ctrl is None:
            ack.callbacks.append(landed)
        else:
            ack.callbacks.append(lambda _e: self.ctrl.transfer(nbytes).callbacks.append(landed))

    def _destage(self) -> None:
        while self.in_flight < self.depth and (self.log or self.dirty):
            if self.log:
                offset, nbytes = self.log.popleft()
                sequential = True
            else:
                i = bisect.bisect_left(self.dirty, (self.cursor,))
                offset, _, nbytes = self.dirty.pop(i if i < len(self.dirty) else 0)
                self.cursor = offset
                sequential = False
            if self.in_flight == 0 and self._w0 is not None:
                self._busy_from = self.env.now
            self.in_flight += 1
            ev = self.volume.submit("write", nbytes, offset, sequential, through=True)
            ev.callbacks.append(lambda _e, n=nbytes: self._destaged(n))

    def _destaged(self, nbytes: float) -> None:
        self.in_flight -= 1
        self.destages += 1
        self.free += nbytes
        self.destaged_total += nbytes
        if self.in_flight == 0 and self._busy_from is not None:
            self._busy += self.env.now - self._busy_from
            self._busy_from = None
        while self.waiting and self.waiting[0][0] <= self.free:
            n, offset, sequential, done, since = self.waiting.popleft()
            self.full_wait.add(self.env.now - since)
            self._accept(n, offset, sequential, done)
        self._destage()

    def watch(self, since: float) -> None:
        """Watch the fill from time `since` on, for settle (no event is scheduled)."""
        self._watch_from, self._w0, self._busy_from = since, None, None

    def net_fill_rate(self) -> float | None:
        """Bytes/s the cache fills at over the watch so far: taken in, less the destage capacity (bytes
        destaged per second with destages in flight; None: no watch or no write yet, 0: never busy)."""
        if self._w0 is None or self.env.now <= self._w0[0]:
            return None
        t0, accepted0, destaged0, _ = self._w0
        span = self.env.now - t0
        busy = self._busy + (self.env.now - self._busy_from if self._busy_from is not None else 0.0)
        if busy <= 0.0:
            return 0.0
        return ((self.accepted_total - accepted0) - (self.destaged_total - destaged0) * span / busy) / span

    def settle(self) -> float:
        """End the watch; if the cache fills (net_fill_rate > 0), fill it now with stand-in writes of the
        watch's mean size at random places, in C-LOOK order with what is dirty. Returns the bytes added."""
        g = self.fill_rate = self.net_fill_rate()
        w0, self._watch_from, self._w0, self._busy_from = self._w0, None, None, None
        writes = self.writes - w0[3] if w0 is not None else 0
        if g is None or g <= 0.0 or writes <= 0 or self.waiting:
            return 0.0
        size = (self.accepted_total - w0[1]) / writes
        n = int(self.free // size)
        if n <= 0:
            return 0.0
        stand_ins = []
        for _ in range(n):
            self._seq += 1
            stand_ins.append((self.volume.random_offset(size), self._seq, size))
        self.dirty = sorted(self.dirty + stand_ins)
        self.free -= n * size
        self.accepted_total += n * size
        self._destage()
        return n * size

    def reset_stats(self) -> None:
        self.writes = self.destages = 0
        self.full_wait.reset()
