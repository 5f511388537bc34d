"""Storage devices: a disk is a server whose service time is seek + rotation + transfer.

This module knows drives, controllers and arrays; it knows nothing of files or Oracle.
An I/O is (kind 'read'/'write', bytes, sequential?) and completes as a SimPy event.
"""

from __future__ import annotations

import bisect
import math
from collections import OrderedDict, deque

import numpy as np
import simpy
from simpy.events import NORMAL

from sim.engine import wake_after
from sim.hardware.profile import DiskSpec, data_disks
from sim.hardware.write_cache import WriteBackCache
from sim.metrics import Level, Mean
from sim.randomness import Draws

_DRAW_BLOCK = 256   # uniforms a drive or volume draws at once: few enough that 36 drives hold little


class DeviceStats:
    """The iostat view of a device: I/Os, bytes, busy level, response and service times.

    Drives and flash arrays keep the same counters under the same names, which the run's
    iostat collection reads; the warm-up is deleted with reset_stats().
    """

    def _init_stats(self, env: simpy.Environment) -> None:
        self.ios = 0
        self.writes = 0             # of the ios (iostat's w/s; r/s the rest)
        self.bytes = 0.0
        self.util = Level(env)
        self.response = Mean()      # submit to completion, as the host sees it
        self.service = Mean()       # service alone

    def reset_stats(self) -> None:
        self.ios = self.writes = 0
        self.bytes = 0.0
        self.util.reset()
        self.response.reset()
        self.service.reset()


class Disk(DeviceStats):
    """One drive with its queue, served in arrival order (FCFS) or by the elevator.

    Service time (Stallings, Computer Organization and Architecture, 6.1):
    T = seek + rotational latency + bytes / media rate. With a seek curve (track_seek and
    full_seek in the spec) the seek depends on the distance d the head travels, as a fraction
    of the full stroke: track + (full - track) * sqrt(d), the short-seek regime of Ruemmler &
    Wilkes (1994), where the arm accelerates then decelerates; averaged over two uniform
    points this is track + 8/15 (full - track). Without a curve a random I/O pays avg_seek.
    The elevator (LOOK: keep moving the same way while requests lie ahead, then reverse)
    serves the queued request nearest ahead of the head, so the deeper the queue the shorter
    the seeks: throughput rises with queue depth. A sequential read (the next block of a scan)
    pays neither seek nor rotation: the drive reads ahead. A write-back cache acknowledges a
    write after the transfer.

    A write the drive must put on the platter itself (its write cache off) has no read-ahead
    to hide behind: it waits for its sector to come round. On the head's track (the next block of a
    log, or the block just read by a read-modify-write) that wait is not a random half turn
    but follows from where the last access ended and how long ago: the platter turns
    `media_rate x rotation` bytes a revolution past the head. A log write issued once the
    last is done (LGWR's are synchronous) finds its sector just gone, and waits most of a
    turn less the gap; a write queued behind the last (tagged queuing) streams on without a
    loss; rewriting what was just read waits a whole turn less the transfer (a RAID5 small
    write's read-modify-write, a buffered file's page read before its write). A write whose place
    lies off the head's track (a log's next write after the head served a datafile) seeks and waits
    a random turn, as any other; a read served from the read-ahead moves no head.

    Read-ahead (segmented cache, e.g. Seagate Cheetah product manuals 4.5.2 "Prefetch"): a
    read at a known offset that continues one of the last `cache_segments` read streams is a
    prefetch hit and pays the transfer alone; any other read seeks and takes a segment from the
    least recently used stream. More interleaved streams than segments make every read seek.
    """

    def __init__(self, env: simpy.Environment, name: str, spec: DiskSpec, rng: np.random.Generator,
                 overhead: float = 0.0, queue: str = "fcfs", band: float = 1.0):
        if queue not in ("fcfs", "elevator"):
            raise ValueError(f"queue discipline must be 'fcfs' or 'elevator', got {queue!r}")
        self.env, self.name, self.spec, self.rng = env, name, spec, rng
        self._on_served = (self._finish,)   # the callbacks of the timer that ends each service
        self._serving = None
        self.draws = Draws(rng, _DRAW_BLOCK)   # (the rng's own uniforms, a block at a time: the same numbers)
        self.overhead = overhead
        self.write_back = spec.write_cache   # off behind a controller's write-back cache (sim/hardware/write_cache.py)
        self.elevator = queue == "elevator"
        self.band = band  # fraction of the stroke holding data (a volume smaller than the drives)
        self.queue: deque = deque()
        self._sorted: list = []   # elevator: (position, seq, request), ascending
        self._seq = 0
        self.busy = False
        self.head = 0.0
        self.direction = 1
        self.rotation = 1.0 / spec.rpm
        self.track = spec.media_rate * self.rotation   # bytes that pass under the head in one turn
        self._end: float | None = None   # where on the drive (bytes) the last access ended, if known
        self._end_time = 0.0             # and when
        self.curve = spec.full_seek is not None
        self.streams: OrderedDict[float, None] = OrderedDict()  # end offsets of prefetching streams
        self.prefetch_hits = 0
        self._init_stats(env)

    def seek_time(self, distance: float) -> float:
        """Seek over `distance` (fraction of the full stroke, 0..1)."""
        if not self.curve:
            return self.spec.avg_seek
        if distance <= 0.0:
            return 0.0
        return self.spec.track_seek + (self.spec.full_seek - self.spec.track_seek) * math.sqrt(distance)

    def service_time(self, kind: str, nbytes: float, sequential: bool, position: float | None = None,
                     offset: float | None = None, queued: bool = False) -> float:
        """Seconds to serve an I/O starting now. `offset` (bytes into the drive) if the caller
        knows it, else taken from `position`, or for a sequential I/O the end of the last access;
        `queued`: it waited behind the last access, so its command was ready when that ended."""
        t = self.overhead + nbytes / self.spec.media_rate
        if kind == "write" and self.write_back:
            return t
        if offset is None:
            if sequential:
                offset = self._end
            if offset is None and position is not None:
                offset = position * self.spec.capacity
        end, self._end = self._end, None if offset is None else offset + nbytes
        now = self.env.now
        if kind == "read" and sequential and end is not None and offset is not None and abs(offset - end) >= self.track:
            self._end = end   # a read-ahead hit on another stream: served from the drive's cache, the head stays
            return t
        if kind == "write" and end is not None and offset is not None and abs(offset - end) < self.track:
            # on the head's track: wait for the sector, from where the platter is now; queued behind
            # the last, its command was ready as that ended (overhead overlapped): it starts at once
            if queued:
                t -= self.overhead
            start = now if queued else now + self.overhead
            turns = (offset - end) / self.track - (start - self._end_time) / self.rotation
            t += (turns % 1.0) * self.rotation
        elif not sequential or (kind == "write" and end is not None and offset is not None):
            # a random I/O, or a write that must leave the head's track for its place (a log's
            # next write after the head served a datafile): seek and rotate as any other
            if position is None:
                t += self.spec.avg_seek
            else:
                t += self.seek_time(abs(position - self.head))
                self.head = position
            t += self.draws.uniform() * self.rotation
        self._end_time = now + t
        return t

    def _prefetch_hit(self, offset: float, nbytes: float) -> bool:
        """Does a read at this offset continue a stream the drive is prefetching for?"""
        streams = self.streams
        hit = streams.pop(offset, False) is None
        streams[offset + nbytes] = None
        if len(streams) > self.spec.cache_segments:
            streams.popitem(last=False)
        self.prefetch_hits += hit
        return hit

    def submit(self, kind: str, nbytes: float, sequential: bool = False,
               position: float | None = None, offset: float | None = None, then=None) -> simpy.Event | None:
        """Queue an I/O at `position` (fraction of the stroke; omitted: a random place in the
        band holding data) and return the event that fires when it completes; or, given `then`,
        call it at completion instead (a volume chaining the bus transfer saves an event). With
        an offset (bytes into this drive, known to the caller) a read may hit the read-ahead."""
        ev = simpy.Event(self.env) if then is None else then
        if offset is not None and kind == "read" and self.spec.cache_segments:
            sequential = sequential or self._prefetch_hit(offset, nbytes)
        if position is None and not sequential and self.curve:
            position = self.draws.uniform() * self.band
        req = (kind, nbytes, sequential, ev, self.env.now, position, offset)   # ev: an Event or `then`
        if self.elevator and position is not None:
            self._seq += 1
            bisect.insort(self._sorted, (position, self._seq, req))
        else:
            self.queue.append(req)
        if not self.busy:
            self._next()
        return ev

    def queued(self) -> int:
        return len(self.queue) + len(self._sorted)

    def _pick(self):
        if self.queue:   # FCFS, or I/O without a position: in arrival order, ahead of sorted ones
            return self.queue.popleft()
        srt = self._sorted
        i = bisect.bisect_left(srt, (self.head, -1))
        if self.direction > 0 and i == len(srt):
            self.direction = -1
        elif self.direction < 0 and i == 0:
            self.direction = 1
        return srt.pop(i if self.direction > 0 else i - 1)[2]

    def _next(self) -> None:
        if not self.queue and not self._sorted:
            self.busy = False
            self.util.set(0)
            return
        self.busy = True
        self.util.set(1)
        kind, nbytes, sequential, ev, arrived, position, offset = self._pick()
        s = self.service_time(kind, nbytes, sequential, position, offset, queued=arrived < self.env.now)
        self._serving = (ev, arrived, nbytes, s, kind == "write")   # (one at a time: the drive's own timer)
        wake_after(self.env, s, self._on_served)

    def _finish(self, _wake) -> None:
        ev, arrived, nbytes, service, write = self._serving
        self.ios += 1
        self.writes += write
        self.bytes += nbytes
        self.service.add(service)
        self.response.add(self.env.now - arrived)
        if isinstance(ev, simpy.Event):
            ev.succeed()
        else:
            ev()
        self._next()


class Controller:
    """A controller, bus or port: a FCFS pipe that moves each I/O's bytes at its bandwidth."""

    def __init__(self, env: simpy.Environment, name: str, bandwidth: float):
        self.env, self.name, self.bandwidth = env, name, bandwidth
        self.free_at = 0.0   # when the bytes already booked are across
        self.bytes = 0.0     # booked since reset_stats
        self.booked = 0.0    # seconds of transfer booked since reset_stats (with what was still queued then)
        self.since = 0.0

    def reserve(self, nbytes: float) -> float:
        """Book nbytes after whatever is already queued on the pipe; the time they are across."""
        start = max(self.env.now, self.free_at)
        self.free_at = start + nbytes / self.bandwidth
        self.bytes += nbytes
        self.booked += nbytes / self.bandwidth
        return self.free_at

    def transfer(self, nbytes: float, done: simpy.Event | None = None) -> simpy.Event:
        """Occupy the bus for nbytes/bandwidth after whatever is already queued on it; the
        returned event (`done`, if given: a pending event, fired when the bytes are across,
        as a timeout would be, without a second event to relay it) fires when they are."""
        env = self.env
        across = self.reserve(nbytes)
        if done is None:
            return env.timeout(across - env.now)
        done._ok, done._value = True, None
        env.schedule(done, NORMAL, across - env.now)
        return done

    def utilisation(self) -> float:
        """The share of the time since reset_stats the pipe was moving bytes: FCFS keeps it busy without a gap
        from a transfer's start to free_at, so it is what was booked less what is still queued."""
        span = self.env.now - self.since
        return (self.booked - max(0.0, self.free_at - self.env.now)) / span if span > 0 else 0.0

    def reset_stats(self) -> None:
        self.since, self.bytes = self.env.now, 0.0
        self.booked = max(0.0, self.free_at - self.env.now)   # (still to move: the next window's busy time)


class Volume:
    """A logical device over member disks, as a volume manager or ASM builds it.

    layout 'stripe': RAID0 / VxVM stripe / ASM (stripe unit = allocation unit); 'mirror':
    RAID1 (reads from the shorter queue, writes to all); 'raid5': striped with rotating parity,
    a small write costs two reads then two writes (Stallings); 'normal': ASM normal redundancy,
    striped like 'stripe' with each allocation unit's mirror copy on a partner drive in the
    other half of the group (another failure group): the host writes every piece twice, through
    the controller each time, and reads the primary copy (Oracle ASM Administrator's Guide,
    "Mirroring, Redundancy, and Failure Group Options"). A RAID5 write that covers whole
    stripe rows (or a write-back cache's sequential destage) computes parity from the new data
    and writes alone; any other pays read-modify-write, each row's parity on that row's parity
    drive. An I/O without an offset lands at a uniformly random place aligned to its size, as
    random OLTP I/O does (a block never straddles a stripe unit that is a multiple of it); one
    with an offset tells each drive where its piece lies (drive read-ahead needs it). A volume
    of `size` smaller than its disks occupies the start of each: its heads stay within that band.
    Each drive piece crosses the controller (the host's bus or link), as with a volume manager's
    striping, mirroring or parity; with a write-back cache (attach_cache) the volume is a RAID box
    behind the controller, which carries a write's bytes once, into the box: its parity, its
    read-modify-write and its destage stay inside (with 'normal' too: its second copy is made at destage,
    as the box's mirroring, where ASM would send it across the controller and hold it in the cache too).
    """

    def __init__(self, env: simpy.Environment, name: str, disks: list[Disk], rng: np.random.Generator,
                 layout: str = "stripe", stripe_unit: float = 64 * 1024,
                 controllers: list[Controller] | None = None, size: float | None = None):
        if not disks:
            raise ValueError(f"volume {name!r} has no disks")
        if layout == "raid5" and len(disks) < 2:
            raise ValueError(f"volume {name!r}: RAID5 needs at least 2 disks (data and parity), got {len(disks)}")
        self.env, self.name, self.disks, self.rng = env, name, disks, rng
        self.draws = Draws(rng, _DRAW_BLOCK)
        self.layout, self.stripe_unit = layout, stripe_unit
        self.controllers = controllers or []
        full = data_disks(layout, len(disks)) * disks[0].spec.capacity
        self.capacity = min(size, full) if size else full
        band = self.capacity / full
        for d in disks:
            d.band = band
        self.cache = None   # a controller's write-back cache, if attach_cache() gave one
        self.append_at = 0.0   # where the next sequential I/O without an offset goes
        self.ios = self.writes = 0
        self.bytes = 0.0
        self.response = Mean()   # submit to completion of the host's I/Os: drives, controllers and the cache

    def _disk_io(self, index: int, kind: str, nbytes: float, sequential: bool, local: float | None = None,
                 located: bool = False, host: bool = True):
        """One piece on one drive; `host`: its bytes cross the host's controller (a destage's stay in the box)."""
        disk = self.disks[index]
        position = None if local is None else min(1.0, local / disk.spec.capacity)
        if not self.controllers or not host:
            return disk.submit(kind, nbytes, sequential, position, local if located else None)
        ctrl = self.controllers[index % len(self.controllers)]
        done = simpy.Event(self.env)
        # the drive's completion books the bus transfer, whose end fires the caller's event
        disk.submit(kind, nbytes, sequential, position, local if located else None,
                    then=lambda: ctrl.transfer(nbytes, done))
        return done

    def attach_cache(self, size: float) -> None:
        """Put a controller write-back cache of `size` bytes in front of the drives: writes land
        there and reach the drives at destage, paying positioning (the drives' own write caches off)."""
        for d in self.disks:
            d.write_back = False
        self.cache = WriteBackCache(self.env, self, size)

    def _append(self, nbytes: float) -> float:
        """A sequential I/O without an offset (a raw log's next write) continues the last one,
        back at the start when it would run past the end (a log's writes never straddle its end)."""
        offset = self.append_at if self.append_at + nbytes <= self.capacity else 0.0
        self.append_at = offset + nbytes
        return offset

    def random_offset(self, nbytes: float) -> float:
        """A random I/O's place: a whole block at a block-aligned offset, as Oracle's are."""
        slots = max(1, int(self.capacity // nbytes)) if nbytes > 0 else 1
        return min(int(self.draws.uniform() * slots), slots - 1) * nbytes

    def submit(self, kind: str, nbytes: float, offset: float | None = None, sequential: bool = False,
               destage: bool = False) -> simpy.Event:
        """An I/O at an offset into the volume (None: a random one). With a write-back cache a
        write lands in the cache (one larger than the cache goes past it, to the drives), and
        a `destage` is the cache's own write to the drives: inside the RAID box, so its bytes (and its
        read-modify-write's) do not cross the host's controller, which carried them once into the cache.
        Counted as iostat counts, when it completes (the host's I/O: a destage is the drives'), with its
        response as the host sees it: from submit until its last piece is across the controller."""
        arrived = self.env.now
        ev = self._submit(kind, nbytes, offset, sequential, host=not destage, gathered=destage)
        if not destage:
            if ev.callbacks is None:   # (done already)
                self._completed(kind, nbytes, arrived)
            else:
                ev.callbacks.append(lambda _e: self._completed(kind, nbytes, arrived))
        return ev

    def _completed(self, kind: str, nbytes: float, arrived: float) -> None:
        self.ios += 1
        self.writes += kind == "write"
        self.bytes += nbytes
        self.response.add(self.env.now - arrived)

    def _submit(self, kind: str, nbytes: float, offset: float | None, sequential: bool, host: bool = True,
                gathered: bool = False) -> simpy.Event:
        """`host`: from the host, across its controller (else inside the box, past the cache); `gathered`: a
        sequential destage, which the cache gathered into whole RAID5 rows."""
        caching = kind == "write" and self.cache is not None
        located = offset is not None or sequential
        if offset is None:
            offset = self._append(nbytes) if sequential else self.random_offset(nbytes)
        if caching and host:
            if nbytes <= self.cache.size:
                return self.cache.write(nbytes, offset, sequential)
            # larger than the cache: across the host's controller into the box once, then past the cache to the drives
            done = simpy.Event(self.env)
            link = self.controllers[0].transfer(nbytes) if self.controllers else self.env.timeout(0.0)
            link.callbacks.append(lambda _e: self._submit(kind, nbytes, offset, sequential, host=False)
                                  .callbacks.append(lambda _e2: done.succeed()))
            return done
        if self.layout == "mirror":
            if kind == "read":
                i = min(range(len(self.disks)), key=lambda k: self.disks[k].queued() + self.disks[k].busy)
                return self._disk_io(i, kind, nbytes, sequential, offset, located, host)
            return simpy.AllOf(self.env, [self._disk_io(i, kind, nbytes, sequential, offset, located, host)
                                          for i in range(len(self.disks))])
        width = len(self.disks) - 1 if self.layout == "raid5" and len(self.disks) > 1 else len(self.disks)
        su = self.stripe_unit
        unit = int(offset // su)
        if self.layout == "stripe" and offset + nbytes <= (unit + 1) * su:
            # the common case, one piece on one drive (an OLTP block): the loop below, unrolled
            stripe_row, disk = divmod(unit, width)
            return self._disk_io(disk, kind, nbytes, sequential, stripe_row * su + (offset - unit * su), located, host)
        parts: dict[int, list[float]] = {}   # disk -> [bytes, offset on that disk]
        rows: dict[int, list[float]] = {}    # RAID5: stripe row -> [largest piece, lowest offset in a unit, bytes,
        #                                      where in the row the I/O starts]
        covered = 0.0                        # RAID5: bytes in rows the I/O covers whole
        pos, end = offset, offset + nbytes
        while pos < end:
            unit = int(pos // su)
            chunk = min(end, (unit + 1) * su) - pos
            stripe_row = unit // width
            disk = unit % width
            if self.layout == "raid5":  # rotating parity: skip the parity disk of this row
                parity = stripe_row % len(self.disks)
                disk = disk if disk < parity else disk + 1
                within = pos - unit * su
                row_start = stripe_row * width * su
                row = rows.setdefault(stripe_row, [chunk, within, 0.0, pos - row_start])
                row[0], row[1], row[2] = max(row[0], chunk), min(row[1], within), row[2] + chunk
                if offset <= row_start and end >= row_start + width * su:
                    covered += chunk
            local = stripe_row * su + (pos - unit * su)
            part = parts.setdefault(disk, [0.0, local])
            part[0] += chunk
            pos += chunk
        if self.layout == "raid5" and kind == "write":
            return self._raid5_write(parts, rows, sequential, located,
                                     full=covered >= nbytes or (sequential and gathered), host=host)
        evs = [self._disk_io(d, kind, b, sequential, loc, located, host) for d, (b, loc) in parts.items()]
        if self.layout == "normal" and kind == "write":
            partner = len(self.disks) // 2 or 1
            evs += [self._disk_io((d + partner) % len(self.disks), kind, b, sequential, loc, located, host)
                    for d, (b, loc) in parts.items()]
        return evs[0] if len(evs) == 1 else simpy.AllOf(self.env, evs)

    def _raid5_write(self, parts: dict[int, list[float]], rows: dict[int, list[float]], sequential: bool,
                     located: bool, full: bool, host: bool = True) -> simpy.Event:
        """Each row's parity goes to that row's parity drive. Whole rows (or a cache's sequential
        destage, which gathers them into whole rows): write data and parity at once, one parity
        byte per data byte of the row's data drives. Otherwise read-modify-write: read old data
        and parity (over the union of the pieces' ranges in their units), then write both. A whole-row
        write's parity lies where its data starts in the row, scaled to one unit (a log destaged piece
        by piece writes its parity contiguously, as its data). The old data's reads are reads like any
        other: the drive's read-ahead decides whether they position."""
        su, n = self.stripe_unit, len(self.disks)
        parity: dict[int, list[float]] = {}   # drive -> [parity bytes, offset of its first piece]
        for row, (largest, within, nbytes, start) in rows.items():
            part = parity.setdefault(row % n, [0.0, row * su + (start / (n - 1) if full else within)])
            part[0] += nbytes / (n - 1) if full else largest

        def writes():
            return [self._disk_io(d, "write", b, sequential, loc, located, host)
                    for pieces in (parts, parity) for d, (b, loc) in pieces.items()]
        if full:
            evs = writes()
            return evs[0] if len(evs) == 1 else simpy.AllOf(self.env, evs)
        reads = [self._disk_io(d, "read", b, False, loc, located, host)
                 for pieces in (parts, parity) for d, (b, loc) in pieces.items()]
        done = simpy.Event(self.env)
        simpy.AllOf(self.env, reads).callbacks.append(
            lambda _e: simpy.AllOf(self.env, writes()).callbacks.append(lambda _e2: done.succeed()))
        return done

    def reset_stats(self) -> None:
        self.ios = self.writes = 0
        self.bytes = 0.0
        self.response.reset()
        for d in self.disks:
            d.reset_stats()
        for c in self.controllers:
            c.reset_stats()
        if self.cache is not None:
            self.cache.reset_stats()
