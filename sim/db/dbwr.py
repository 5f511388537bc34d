"""DBWR: the database writer turns dirty buffers into datafile writes.

Sessions hand over the blocks they dirtied; DBWR writes them in batches: it sleeps until
WRITE_BATCH buffers are dirty or its TIMEOUT expires, then issues the whole batch at once. With asynchronous
I/O (disk_asynch_io) it keeps up to MAX_ASYNC_WRITES writes in flight (kernel AIO or library
threads, as the file system allows); with dbwr_io_slaves it hands each block to one of that
many I/O slave processes, each writing synchronously, one block at a time. `max_writes`
(Oracle's _db_writer_max_writes, "max number of outstanding DB Writer IOs"; 0: no limit)
caps either. DBWR gathers the next batch once the last is all issued, without waiting for its writes to
complete (Oracle's later References: DBWR "does not wait for all of the outstanding I/Os"; 8i's says its
'db file parallel write' ends at the last I/O, a barrier that costs the UE10000's DBWR-bound rows 4-7%:
experiments/veritas_io_config_by_sga.yaml). With a batch in file order and a single-writer lock per
file, a few writes in flight all queue on one or two files' locks, so those files stay write-locked
while the batch drains file after file and their readers wait behind the queued writers.

When the backlog of dirty buffers not yet written passes FREE_BUFFER_LIMIT of the cache, a
session that needs a free buffer for a read waits ("free buffer waits") until DBWR catches
up. The buffers the LRU scan hands over are written in file order (DBWR sorts the buffers it
gathers by file and block, so that each file's writes go out together): where the file system gives every file a
single-writer lock, the writers of a batch queue file after file behind one lock at a time,
and each file's readers wait while its share of the batch drains. Checkpoint writes (changed
blocks that stay cached, written because a checkpoint or log_checkpoint_timeout needs them,
sim/db/checkpoint.py) are not sorted: from Oracle 8 on dirty buffers are queued "in the order
that they were first made dirty" and the checkpoint is advanced by writing them in that
(low-RBA) order (J. Lewis, "How have the log_checkpoint_interval and log_checkpoint_timeout
changed from version 7?", Oracle Users' Co-Operative FAQ, 2002; R. Velpuri et al., Oracle8
Backup and Recovery Handbook, pp. 246-7: DBWR writes them in ascending low redo order). A batch
issues its LRU buffers sorted by file, then its checkpoint-queue buffers in the order they were
dirtied: those spread over the files, so several file locks are written at once.

Constants (estimates): MAX_ASYNC_WRITES = 256 writes DBWR keeps queued with async I/O;
FREE_BUFFER_LIMIT = 1/4 of the buffers may be dirty before the LRU scan finds none free (the
scan depth, _db_block_max_scan_pct, is 40% in 10g; no 8i value found);
INSTRUCTIONS_PER_WRITE = 5,000 of DBWR's own work per buffer (LRU/checkpoint queues, latches);
WRITE_BATCH = 512 buffers, the order of Oracle 8's _db_block_write_batch, the most DBWR gathers
into one batch (a larger backlog is written batch after batch); TIMEOUT = 3 s, DBWR's
idle wake-up ("rdbms ipc message" timeout). A checkpoint LGWR has to wait for (a log switch onto a log
whose checkpoint is incomplete, sim/db/checkpoint.py) posts DBWR (`post`): it gathers what is pending at
once, below a batch's worth, rather than sleeping out its timeout while every commit waits (1 KB logs had
held a T5220 to 2.5 transactions/s, each switch waiting ~3 s, the timeout).

Steady state without the wait (`watch` then `catch_up`): over the watched part of the warm-up
DBWR's backlog fills at the dirtying rate minus the write rate. A DBWR that writes all the time
writes at its capacity; one that also idles writes what it is given, at a capacity of its writes
per second of busy time (busy: writes in flight). The net fill rate is then the dirtying rate
minus that capacity: g = dirtied/s - written/s / busy share. With g > 0 the backlog can only grow
until free buffer waits hold it at FREE_BUFFER_LIMIT (then transactions run at DBWR's write
rate / writes per transaction); with g <= 0 DBWR keeps up (or drains what it has) and is left
alone. The published runs are taken as long enough for any g > 0 to fill the cache to the limit
(the fill's fixed point; at 2.5GB and g = 17/s that is ~5 h), so the decision is the sign of g,
not a growth of so many buffers in the watch: near g = 0 the two regimes meet (at the limit
transactions run at the write rate, which then equals the dirtying rate), so which side a run
falls on moves its throughput little, except where a checkpoint timeout is set: a DBWR behind
keeps the timeout's writes held (sim/db/checkpoint.py), so its writes per transaction drop to the
evictions' (UFS direct 2.5 GB, 6 slaves behind against 7 keeping up: 1.8 against 3.0 a
transaction). Reaching the limit takes hours simulated with a slow net fill; `catch_up` moves
the backlog there at once with stand-in buffers, counted as dirtied and written like any other,
so only the time to get there is skipped. At the limit the backlog is a
first-in first-out delay of 10-31 min on the UE10000 rows (128k-321k buffers at 150-260 writes/s),
longer than a run: the buffers written in the measured window are all stand-ins. In the steady
state a run stands for, what DBWR writes was dirtied one such delay earlier under the same
conditions, so a stand-in takes the files and checkpoint flag of what the sessions are dirtying
when DBWR comes to write it (one of the last RECENT entries, replayed in turn). Copies of the watch (the
warm-up, before the limit's free buffer waits slowed the transactions) held a run at the warm-up's
mix for the whole backlog: 120-s runs read 3-7% under the level 3,000-s runs settle at (UFS direct
2.5GB, seeds 1-3: 4,212/4,502/4,437 TPM against 4,617/4,661/4,610 over the last 500 s).
"""

from __future__ import annotations

from collections import deque

import simpy

MAX_ASYNC_WRITES = 256
FREE_BUFFER_LIMIT = 0.25
INSTRUCTIONS_PER_WRITE = 5_000.0
WRITE_BATCH = 512
TIMEOUT = 3.0
RECENT = 512    # entries (one segment's blocks of one transaction each) a stand-in's files come from: the
                # last few seconds of dirtying on the UE10000 rows (~50-200 a second); at the limit DBWR writes them
                # as fast as they come, so a stand-in replays a call a fixed lag (< RECENT) behind the newest
STAND_IN = object()   # the file range of catch_up's buffers (see _replay)


class DatabaseWriter:
    def __init__(self, env: simpy.Environment, dispatcher, datafiles, buffers: float, async_io: bool,
                 io_slaves: int, waits, max_writes: int = 0):
        self.env, self.dispatcher, self.datafiles, self.waits = env, dispatcher, datafiles, waits
        self.limit = max(1.0, FREE_BUFFER_LIMIT * buffers)
        self.width = io_slaves if io_slaves > 0 else (MAX_ASYNC_WRITES if async_io else 1)
        if max_writes > 0:
            self.width = min(self.width, max_writes)
        self.batch_size = min(WRITE_BATCH, self.limit)
        self.pending = 0          # dirty buffers not yet in a batch
        self.batch_left = 0       # buffers of the current batch not yet issued
        self.in_flight = 0
        self.wakeup: simpy.Event | None = None
        self.freed: simpy.Event | None = None
        self.writes = 0
        self.dirtied_total = 0    # blocks ever handed over, and ever written (checkpoints, sim/db/checkpoint.py)
        self.written_total = 0
        self.progress: simpy.Event | None = None
        self.order: deque = deque()   # files of the batch's buffers not yet issued, in issue order (_batch_files)
        self.ranges: deque | None = None   # [file range, buffers, checkpoint?] of the pending buffers, oldest first
        self.watch_from: float | None = None   # watch the backlog from this time (see catch_up)
        self._watched: int | None = None       # the backlog when the watch began
        self._w0 = (0.0, 0, 0)                 # (time, dirtied_total, written_total) when it began
        self._busy = 0.0                       # time with writes in flight since then (to _busy_from)
        self._busy_from: float | None = None   # writes in flight since this time (None: idle)
        self._recent: list = []                # (file range, buffers, checkpoint?) of the last RECENT dirty() calls
        self._recent_next = 0                  # where the next one goes once RECENT are kept
        self._replayed = 0                     # the next of them a stand-in buffer takes (_replay)
        self.fill_rate: float | None = None    # net fill rate g (buffers/s) the last catch_up saw
        self._gathering = False                # gathering a batch (busy, writes in flight or not)
        self.posted = False                    # asked to write what is pending now (post)
        # with kernel async I/O DBWR makes its writes' system calls itself: one process on a strand, not up to
        # `width` bursts at once in the run queue (I/O slaves and library threads are processes of their own)
        self.serial = io_slaves <= 0 and async_io and getattr(datafiles, "serial_issue", False)
        self._issuing = False                  # (serial) its calls on a strand now
        env.process(self._run())

    def dirty(self, n: int, files: tuple[int, int] | None = None, checkpoint: bool = False) -> None:
        """n more dirty buffers, of a segment in the datafile range `files` (None: any file);
        `checkpoint`: written off the checkpoint queue, in the order they were dirtied, not
        sorted by file with the buffers the LRU scan hands over (see _batch_files)."""
        if n <= 0:
            return
        if self._watched is None and self.watch_from is not None and self.env.now >= self.watch_from:
            self._watched = self.unwritten
            self._w0 = (self.env.now, self.dirtied_total, self.written_total)
            self._busy = 0.0
            self._busy_from = self.env.now if self.in_flight or self._gathering else None   # (a gather is busy too)
        if (files is not None or checkpoint) and self.ranges is None:
            self.ranges = deque([[None, self.pending, False]] if self.pending else [])
        if self.ranges is not None:
            self.ranges.append([files, n, checkpoint])
            if len(self._recent) < RECENT:
                self._recent.append((files, n, checkpoint))
            else:
                self._recent[self._recent_next] = (files, n, checkpoint)
                self._recent_next = (self._recent_next + 1) % RECENT
        self.pending += n
        self.dirtied_total += n
        if self.pending >= self.batch_size and not self.batch_left and self.wakeup is not None \
                and not self.wakeup.triggered:
            self.wakeup.succeed()

    @property
    def unwritten(self) -> int:
        return self.pending + self.batch_left + self.in_flight

    def free_buffer(self):
        """Generator: a session needs a free buffer; wait while too many buffers are dirty."""
        if self.unwritten <= self.limit:
            return
        start = self.env.now
        while self.unwritten > self.limit:
            if self.freed is None or self.freed.triggered:
                self.freed = simpy.Event(self.env)
            yield self.freed
        self.waits.add("free buffer waits", self.env.now - start)

    def post(self) -> None:
        """Write what is pending now, without waiting for a batch's worth or the timeout: a checkpoint someone waits
        for. Taken up once the batch being issued is out, if one is."""
        self.posted = True
        if not self.batch_left and self.wakeup is not None and not self.wakeup.triggered:
            self.wakeup.succeed()

    def wait_written(self, target: int):
        """Generator: wait until `target` blocks have been written since startup."""
        while self.written_total < target:
            if self.progress is None or self.progress.triggered:
                self.progress = simpy.Event(self.env)
            yield self.progress

    def _run(self):
        env = self.env
        while True:
            self.wakeup = simpy.Event(env)
            # a batch is gathered once the last one is all issued, its writes in flight or not (DBWR does not wait
            # for them): with a batch's worth already pending it goes at once, else it waits to be woken with one
            # (dirty(), or _issue once the last batch is out) or for the timeout
            if (self.pending < self.batch_size and not self.posted) or self.batch_left:
                yield self.wakeup | env.timeout(TIMEOUT)
            if not self.pending or self.batch_left:
                self.posted = self.posted and bool(self.pending)   # (what a post wanted is in hand already)
                continue   # nothing to do, or the last batch is still being issued
            n = min(self.pending, WRITE_BATCH)   # a backlog goes out batch by batch, never as one
            self.posted = self.posted and self.pending > n   # (a post wants the rest too: the next batch at once)
            if self._watched is not None and self._busy_from is None:
                self._busy_from = env.now   # busy from gathering the batch on
            self._gathering = True
            yield self.dispatcher.run(INSTRUCTIONS_PER_WRITE * n, 0.0)
            self._gathering = False
            self.pending -= n
            self.batch_left += n
            self.order.extend(self._batch_files(n))
            self._issue()

    def _batch_files(self, n: int) -> list[int]:
        """The files of the next n writes, in the order DBWR issues them: the buffers of the
        LRU write list sorted by file, then the checkpoint queue's in the order they were dirtied."""
        taken = self._take_ranges(n)
        if taken is None:
            return sorted(self.datafiles.pick_files(n))
        files = self.datafiles.pick_files(n, [r for r, _ in taken])
        return (sorted(f for f, (_, ck) in zip(files, taken) if not ck)
                + [f for f, (_, ck) in zip(files, taken) if ck])

    def _take_ranges(self, n: int) -> list | None:
        """(file range, checkpoint?) of the n oldest pending buffers (None if no range or
        checkpoint buffer was ever given)."""
        if self.ranges is None:
            return None
        out: list = []
        while len(out) < n and self.ranges:
            entry = self.ranges[0]
            k = min(entry[1], n - len(out))
            out += self._replay(k) if entry[0] is STAND_IN else [(entry[0], entry[2])] * k
            entry[1] -= k
            if not entry[1]:
                self.ranges.popleft()
        return out + [(None, False)] * (n - len(out))

    def _replay(self, k: int) -> list:
        """(file range, checkpoint?) of k stand-in buffers: the recent dirty() calls in turn, each
        for as many of its buffers as are still wanted."""
        recent, out = self._recent, []
        if not recent:
            return [(None, False)] * k
        while len(out) < k:
            files, m, ck = recent[self._replayed % len(recent)]
            self._replayed += 1
            out += [(files, ck)] * min(m, k - len(out))
        return out

    def _issue(self) -> None:
        if self._watched is not None and self._busy_from is None and self.batch_left:
            self._busy_from = self.env.now
        room = min(self.batch_left, self.width - self.in_flight)
        if self.serial and room > 0 and not self._issuing:   # one process: its calls for all it may issue, at once
            self._issuing = True
            self.batch_left -= room
            self.in_flight += room
            for _ in range(room):
                self.order.popleft()   # (no file lock on a kernel async I/O path: the file does not matter)
            self.datafiles.submit_writes(room, self._written, self._issued)
        while not self.serial and self.batch_left and self.in_flight < self.width:
            self.batch_left -= 1
            self.in_flight += 1
            self.datafiles.write_then(self.order.popleft(), self._written)
        if not self.batch_left and (self.pending >= self.batch_size or self.posted) and self.wakeup is not None \
                and not self.wakeup.triggered:   # the batch is out and the next is due (or posted for)
            self.wakeup.succeed()

    def _issued(self) -> None:
        """(serial) DBWR's calls are made: it issues what has come due meanwhile."""
        self._issuing = False
        self._issue()

    def _written(self) -> None:
        self.in_flight -= 1
        self.writes += 1
        self.written_total += 1
        if self.progress is not None and not self.progress.triggered:
            self.progress.succeed()
        self._issue()
        if not self.in_flight and not self._gathering and self._busy_from is not None:   # DBWR idle: its busy time
            self._busy += self.env.now - self._busy_from
            self._busy_from = None
        if self.freed is not None and not self.freed.triggered and self.unwritten <= self.limit:
            self.freed.succeed()

    def watch(self, since: float) -> None:
        """Watch the backlog from time `since` on, for catch_up (no event is scheduled)."""
        self.watch_from, self._watched, self._busy_from = since, None, None

    def unwatch(self) -> None:
        """End the watch, leaving the backlog as it is."""
        self.watch_from, self._watched, self._busy_from = None, None, None

    def busy_time(self) -> float:
        """Seconds with writes in flight (or a batch being gathered) since the watch began."""
        return self._busy + (self.env.now - self._busy_from if self._busy_from is not None else 0.0)

    def yet_to_write(self) -> bool:
        """Whether the watch so far saw buffers dirtied but none of DBWR's writes end: it is waiting for a
        batch's worth or its TIMEOUT, so its capacity, and whether it keeps up, is not known yet."""
        if self._watched is None:
            return False
        _t0, dirtied0, written0 = self._w0
        return self.dirtied_total > dirtied0 and self.written_total == written0

    def net_fill_rate(self) -> float | None:
        """The backlog's net fill rate g (buffers/s) over the watch so far: dirtied/s minus DBWR's
        capacity, its writes per second of busy time (None: not watched yet, or no time; 0 if DBWR
        idled all the watch, waiting for a batch or its timeout: nothing shows it short of capacity)."""
        if self._watched is None:
            return None
        t0, dirtied0, written0 = self._w0
        span = self.env.now - t0
        if span <= 0.0:
            return None
        busy = self.busy_time()
        dirtied, written = self.dirtied_total - dirtied0, self.written_total - written0
        if busy <= 0.0:   # idle all the watch (waiting for a batch or its timeout): it kept up
            return 0.0
        return (dirtied - written * span / busy) / span

    def catch_up(self) -> int:
        """End the watch. If the backlog's net fill rate (net_fill_rate) is positive, DBWR writes
        less than the sessions dirty even when it writes all the time: add the stand-in buffers
        that take the backlog to FREE_BUFFER_LIMIT, the fill's fixed point, older than any pending
        (written first, each with the files of what is being dirtied when it is written: _replay).
        Returns how many (0: nothing changed)."""
        g = self.net_fill_rate()
        self.fill_rate = g
        self.unwatch()
        if g is None or g <= 0.0:
            return 0
        extra = int(self.limit) - self.unwritten
        if extra <= 0:
            return 0
        if self.ranges is not None:
            self.ranges.appendleft([STAND_IN, extra, False])
        self.pending += extra
        self.dirtied_total += extra
        return extra

    def reset_stats(self) -> None:
        self.writes = 0
