"""Log switches and the checkpoints they start: why a cached database still writes.

The online redo logs are `groups` files of `size` bytes used in a circle. When LGWR fills one
it switches to the next and a checkpoint begins: DBWR must write every buffer that was dirty
at the switch. A log can be overwritten only once the checkpoint started when it filled has
completed; if LGWR comes round to it first, it stops, and every commit behind it waits
("log file switch (checkpoint incomplete)"). So however large the buffer cache, redo can be
generated no faster than DBWR writes the blocks it dirties: a database that is all cached
is held to DBWR's write rate once checkpoints fall behind.

DBWR writes the blocks handed to it in order, so "the checkpoint of switch s is complete"
is "DBWR has written as many blocks as had been dirtied at switch s": two counters and a
short list of marks, O(1) per log write.

A changed block is written once, by whichever comes first: its eviction or a checkpoint.
`CachedBlockCheckpoints` turns the two regimes (a checkpoint at every log switch;
log_checkpoint_timeout) into (evicted, checkpointed) writes per transaction, per segment of a
workload's buffer cache (BufferCache.dirty_writes, sim/db/buffer_cache.py), the timeout's span
paced by the run's own measured throughput; with both, a cached block is written at the sooner
of the two (exact for Poisson changes: sooner_checkpoint_writes).

The timeout's writes are held through the warm-up (`release`), so that the warm-up's test of
whether DBWR keeps up (sim/db/dbwr.py catch_up) sees the LRU's writes alone, as an instance
started for the run does (db_block_buffers is fixed at startup in 8i): its first timeout writes
come 1,800 s in, after its LRU has shown whether DBWR keeps up. Where DBWR keeps up they start at
the warm-up's end; where it is behind they stay held for good and every changed block is written
once, when it is evicted. The timeout's incremental checkpoint is a low-priority request: Oracle
8.0.3 flushes for one "(kcbscc/100)*kcbswc" buffers, kcbscc being the "percentage of write batch
for low priority checkpoint request" (16% of a 50-buffer write clump kcbswc: K. Gopalakrishnan's
listing and G. Reddy's explanation, oracle-l, 7 Sep 2000). Read literally that is a reserved share
of DBWR's writes, not only its spare time; holding the timeout altogether for a DBWR behind is
this model's limit of that share (a 16% share, measured at the same dbwr_max_writes: writes a
transaction +5..+13%, DBWR faster with a sixth of its writes spread over the file locks; the
veritas notes, round 27). No 8i source gives the share; 10g lists incremental checkpoints as
medium priority.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

PACE_WINDOW = 5.0   # s: a checkpoint timeout's span is re-estimated from each 5 s of throughput (a choice:
                    # long enough for a few hundred transactions, short against a 20-s warm-up)


class LogSwitchCheckpoints:
    def __init__(self, env, dbwr, size: float, groups: int, waits):
        self.env, self.dbwr, self.size, self.groups, self.waits = env, dbwr, size, groups, waits
        self.used = 0.0                 # bytes written into the current log
        self.marks: deque[int] = deque()   # DBWR's dirtied count at each switch not yet reused
        self.switches = 0

    def before_write(self, nbytes: float):
        """Generator run by LGWR before it writes `nbytes`: switch logs when the current one is
        full, waiting while the log it switches to still holds redo of an incomplete checkpoint."""
        if self.used + nbytes <= self.size or self.used == 0.0:
            self.used += nbytes
            return
        self.switches += 1
        self.marks.append(self.dbwr.dirtied_total)
        self.used = nbytes
        if len(self.marks) < self.groups:
            return          # the next log has never been filled
        target = self.marks.popleft()   # the checkpoint started when the next log filled
        if self.dbwr.written_total < target:
            start = self.env.now
            self.dbwr.post()   # the checkpoint is wanted now: DBWR writes what is pending, not at its next batch
            yield from self.dbwr.wait_written(target)
            self.waits.add("log file switch (checkpoint incomplete)", self.env.now - start)


class CachedBlockCheckpoints:
    """(evicted, checkpointed) writes per transaction, per segment, of changed blocks under the
    checkpoint regimes a database sets (each dirty episode written once, at the sooner of its
    eviction and its checkpoint): a checkpoint at every log switch (`redo_log_size`, with
    the workload's mean `redo_per_tx` bytes a transaction: one every redo_log_size / redo_per_tx
    transactions) and/or `timeout` (log_checkpoint_timeout, s: how many transactions it spans
    follows the throughput, `at_throughput` and `pace`). `cache` is the workload's BufferCache."""

    def __init__(self, cache, redo_log_size: float | None, redo_per_tx: float, timeout: float | None):
        self.cache, self.timeout = cache, timeout
        # transactions between two log switches (None: no sized logs, or no redo to fill them)
        self.period: float | None = (redo_log_size / redo_per_tx
                                     if redo_log_size is not None and redo_per_tx > 0.0 else None)
        # with sized redo logs, each checkpoint also writes the cached blocks changed since the last one
        self.log_switch: dict[str, tuple[float, float]] = (cache.dirty_writes(period=self.period)
                                                           if self.period is not None else {})
        self.held = True   # the timeout adds no writes until release()
        self._apply: Callable[[dict], None] | None = None   # pace's: sets the writes per transaction

    def release(self) -> None:
        """Let the timeout's writes begin (from pace's next window)."""
        self.held = False

    def hold(self) -> None:
        """Stop the timeout's writes: back to the log switches' (or the evictions') alone, at once."""
        self.held = True
        if self._apply is not None:
            self._apply(self.log_switch)

    def at_throughput(self, per_s: float) -> dict[str, tuple[float, float]] | None:
        """With a timeout, the (evicted, checkpointed) writes per transaction per segment at `per_s`
        transactions a second (None without a timeout or without throughput: the log-switch writes
        stand). With both regimes a changed block is written at the soonest of the timeout, the
        next log switch and its eviction (BufferCache.dirty_writes)."""
        if self.timeout is None or per_s <= 0.0:
            return None
        return self.cache.dirty_writes(self.period, self.timeout * per_s)

    def pace(self, env, finished: Callable[[], int], apply: Callable[[dict[str, float]], None]):
        """Process: every PACE_WINDOW, the throughput of the window just gone (from `finished()`,
        the workload's count of transactions since the start) sets how many transactions the
        timeout spans, and `apply` gets the writes per transaction per segment (until release() and
        its next window ends the timeout adds no writes; log-switch writes apply from the start)."""
        self._apply = apply
        last = finished()
        while True:
            yield env.timeout(PACE_WINDOW)
            writes = None if self.held else self.at_throughput((finished() - last) / PACE_WINDOW)
            if writes is not None:
                apply(writes)
            last = finished()
