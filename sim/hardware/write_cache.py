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

A steady state, not the fill (`watch`, `settle`, `stays_full`): a cache that fills more slowly
than a run's warm-up (512 MB at a net 1-3 MB/s takes minutes) acknowledges every write at bus speed
through a short run and then, full, makes writes wait for destages: the run would report the fill, a
transient. Over a watch the destager's capacity shows only while it is saturated (all DESTAGE_PER_DRIVE
slots busy; a destager with a free slot keeps up): where it was saturated SATURATED of the time and
took in at least MARGIN more than it destaged, the cache is filling, and `settle` fills it at once
with stand-ins (random writes of the watch's mean random-write size, destaged like any others). The
destage rate rises as the cache fills (C-LOOK), so a cache filling at low occupancy may level off part
full: a full cache whose writes then stop waiting for room (`stays_full` false: most got room at once)
is draining to such a level, and `unfill` takes back the stand-ins not yet destaged.
SATURATED = 0.9 and MARGIN = 0.1 (estimates): a filling cache's destager is saturated all the time,
and 10% is several times the noise of a few seconds' destage count.
"""

from __future__ import annotations

import bisect
from collections import deque

import simpy

from sim.metrics import Mean

DESTAGE_PER_DRIVE = 2
SATURATED = 0.9
MARGIN = 0.1


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
        # the steady-state start (settle): totals never reset, and the watch's starting point and saturated time
        self.accepted_total = self.destaged_total = 0.0   # bytes taken in and destaged
        self.random_bytes, self.random_writes = 0.0, 0   # random writes taken in
        self.writes_total = self.waited = 0   # writes asked for, and of them those that waited for room
        self.fill_rate: float | None = None   # net fill rate (bytes/s) the last settle saw
        self._watch_from: float | None = None
        self._w0: tuple | None = None         # (time, accepted, destaged, writes, random bytes, random writes, waited)
        self._sat = 0.0                       # seconds with every destage slot busy since then
        self._sat_from: float | None = None

    def write(self, nbytes: float, offset: float, sequential: bool) -> simpy.Event:
        """Accept a write at `offset` into the volume; the event fires when it is acknowledged. (The volume
        sends a write larger than the cache past it, to the drives: here it would wait for room forever.)"""
        if nbytes > self.size:
            raise ValueError(f"a write of {nbytes:.0f} bytes is larger than the {self.size:.0f}-byte cache")
        done = simpy.Event(self.env)
        self.writes += 1
        if self._w0 is None and self._watch_from is not None and self.env.now >= self._watch_from:
            self._w0 = (self.env.now, self.accepted_total, self.destaged_total, self.writes_total, self.random_bytes,
                        self.random_writes, self.waited)
            self._sat, self._sat_from = 0.0, (self.env.now if self.in_flight >= self.depth else None)
        self.writes_total += 1
        if not self.waiting and nbytes <= self.free:
            self.full_wait.add(0.0)
            self._accept(nbytes, offset, sequential, done)
        else:
            self.waited += 1
            self.waiting.append((nbytes, offset, sequential, done, self.env.now))
        return done

    def occupancy(self) -> float:
        """Share of the cache holding data not yet on the drives."""
        return 1.0 - self.free / self.size

    def _accept(self, nbytes: float, offset: float, sequential: bool, done: simpy.Event) -> None:
        self.free -= nbytes
        self.accepted_total += nbytes
        if not sequential:
            self.random_bytes += nbytes
            self.random_writes += 1
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
            self.in_flight += 1
            if self.in_flight == self.depth and self._w0 is not None:
                self._sat_from = self.env.now
            ev = self.volume.submit("write", nbytes, offset, sequential, destage=True)
            ev.callbacks.append(lambda _e, n=nbytes: self._destaged(n))

    def _destaged(self, nbytes: float) -> None:
        self.in_flight -= 1
        self.destages += 1
        self.free += nbytes
        self.destaged_total += nbytes
        if self._sat_from is not None:   # a slot is free (the next destage, if any, takes it back at once)
            self._sat += self.env.now - self._sat_from
            self._sat_from = None
        self._admit()
        self._destage()

    def _admit(self) -> None:
        """Let in the writes waiting for room, in arrival order, as far as it goes."""
        while self.waiting and self.waiting[0][0] <= self.free:
            n, offset, sequential, done, since = self.waiting.popleft()
            self.full_wait.add(self.env.now - since)
            self._accept(n, offset, sequential, done)

    def watch(self, since: float) -> None:
        """Watch the fill from time `since` on, for settle or stays_full (no event is scheduled)."""
        self._watch_from, self._w0, self._sat_from = since, None, None

    def _end_watch(self) -> tuple | None:
        w0 = self._w0
        self._watch_from, self._w0, self._sat_from = None, None, None
        return w0

    def net_fill_rate(self) -> float | None:
        """Bytes/s the cache fills at over the watch so far, where its destager ran saturated (SATURATED of
        the time: bytes in less its capacity, bytes destaged); 0 where it was not (it keeps up); None: no
        watch, or no write yet."""
        if self._w0 is None or self.env.now <= self._w0[0]:
            return None
        t0, accepted0, destaged0 = self._w0[:3]
        span = self.env.now - t0
        sat = self._sat + (self.env.now - self._sat_from if self._sat_from is not None else 0.0)
        if sat < SATURATED * span:
            return 0.0
        return ((self.accepted_total - accepted0) - (self.destaged_total - destaged0)) / span

    def settle(self) -> float:
        """End the watch; if the cache is filling (net_fill_rate at least MARGIN of the destage rate), fill
        it now with stand-ins of the watch's mean random-write size, at random places, in C-LOOK order with
        what is dirty. Returns the bytes added."""
        g = self.fill_rate = self.net_fill_rate()
        destaged = (self.destaged_total - self._w0[2]) / (self.env.now - self._w0[0]) if g is not None else 0.0
        w0 = self._end_watch()
        if g is None or g < MARGIN * destaged or g <= 0.0 or self.waiting:
            return 0.0
        writes = self.random_writes - w0[5]
        size = (self.random_bytes - w0[4]) / writes if writes > 0 else 0.0
        n = int(self.free // size) if size > 0.0 else 0
        if n <= 0:
            return 0.0
        stand_ins = [(self.volume.random_offset(size), -(i + 1), size) for i in range(n)]   # seq < 0: a stand-in
        self.dirty = sorted(self.dirty + stand_ins)
        self.free -= n * size
        self.accepted_total += n * size
        self._destage()
        return n * size

    def stays_full(self) -> bool:
        """End the watch: whether most writes since it began waited for room (the cache stays full). Where
        they did not, it got room faster than writes came: it is draining to a level part full."""
        w0 = self._end_watch()
        writes = self.writes_total - w0[3] if w0 is not None else 0
        return writes > 0 and self.waited - w0[6] > writes / 2

    def unfill(self, everything: bool = False) -> float:
        """Take back the stand-ins settle added that are not yet destaged (`everything`: every random write not
        yet destaged, the real ones too); returns their bytes."""
        kept = [] if everything else [e for e in self.dirty if e[1] >= 0]
        removed = sum(e[2] for e in self.dirty) - sum(e[2] for e in kept)
        self.dirty = kept
        self.free += removed
        self.accepted_total -= removed
        self._admit()
        return removed

    def reset_stats(self) -> None:
        self.writes = self.destages = 0
        self.full_wait.reset()
