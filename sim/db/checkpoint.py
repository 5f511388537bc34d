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
"""

from __future__ import annotations

from collections import deque


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
            yield from self.dbwr.wait_written(target)
            self.waits.add("log file switch (checkpoint incomplete)", self.env.now - start)
