"""Latches: Oracle's spinlocks over shared-cache metadata.

A latch family (cache buffers chains, cache buffers lru chain) has many child latches; a
get picks the child that covers the block (uniformly at random for random reads). A child
is a FCFS server whose hold time is the code run under it plus the cache-line transfers it
makes: the latch word and the metadata it protects were last written by whichever CPU held
it before, which on a NUMA machine is on another socket with probability (sockets-1)/sockets
and then costs a remote-memory latency per line. That is why the same latch rate contends
more across sockets.

Each child keeps only `free_at`, the time it becomes free after every get already granted,
so a get is O(1) and schedules nothing: the wait is free_at - now. A process spins (burning
CPU) for up to `spin_time` of that wait, then sleeps on the latch's wait list for the rest
and is posted when it is free, paying a wake-up ('latch: cache buffers chains' and the
like in AWR). Contention grows with the get rate, i.e. with sessions and IOPS.

Defaults (Oracle behaviour, each an estimate where marked):
- _spin_count 2000 iterations (Oracle default); an iteration is a test and a PAUSE, about
  10 cycles on Haswell (estimate), so spin_time = 2000 x 10 / clock.
- Children: cache buffers chains = one per 32 hash buckets, with hash buckets the power
  of two at or above 2 x buffers (estimate of _db_block_hash_buckets/_db_block_hash_latches);
  cache buffers lru chain = cpu_count / 2 (Oracle8i Reference, DB_BLOCK_LRU_LATCHES default).
- Work under the latch: CBC 400 instructions (hash-chain walk, pin), LRU 800 (unlink a
  victim, link the new buffer at the head of the working set) (estimates); two cache lines
  move per get (the latch word and the chain head or buffer header) (estimate).
- Wake-up after a sleep: 20 us (semaphore post, scheduler wake-up; estimate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SPIN_COUNT = 2000
CYCLES_PER_SPIN = 10.0
LINES_PER_GET = 2
WAKEUP = 20e-6
CBC_INSTRUCTIONS = 400.0
LRU_INSTRUCTIONS = 800.0


def cbc_children(buffers: float) -> int:
    buckets = 1 << max(0, int(np.ceil(np.log2(max(2.0 * buffers, 1.0)))))
    return max(1, buckets // 32)


def lru_children(cpu_count: int) -> int:
    return max(1, cpu_count // 2)


def line_transfer(sockets: int, remote_latency: float | None, local_latency: float) -> float:
    """Mean time to pull a line last written by another CPU: remote with (s-1)/s odds."""
    if sockets <= 1:
        return 0.0
    remote = remote_latency if remote_latency is not None else local_latency
    return (sockets - 1) / sockets * remote


@dataclass
class LatchStats:
    gets: int = 0
    misses: int = 0        # gets that found the latch held (V$LATCH MISSES)
    sleeps: int = 0        # misses that gave up spinning (V$LATCH SLEEPS)
    spin_time: float = 0.0
    sleep_time: float = 0.0


class LatchFamily:
    """Child latches of one name; get() returns (CPU seconds spinning, seconds asleep)."""

    def __init__(self, env, name: str, children: int, hold: float, spin_time: float,
                 rng: np.random.Generator, wakeup: float = WAKEUP):
        if children < 1 or hold < 0.0 or spin_time < 0.0:
            raise ValueError(f"latch {name}: need children >= 1, hold >= 0, spin_time >= 0")
        self.env, self.name, self.children = env, name, children
        self.hold, self.spin_time, self.wakeup = hold, spin_time, wakeup
        self.event = f"latch: {name}"
        self.free_at = [0.0] * children
        self.rng = rng
        self._picks: list[int] = []
        self.stats = LatchStats()

    def get(self) -> tuple[float, float]:
        now = self.env._now
        if self.children > 1:   # the child covering the block: drawn in blocks of 4096
            picks = self._picks
            if not picks:
                picks = self._picks = self.rng.integers(0, self.children, 4096).tolist()
            i = picks.pop()
        else:
            i = 0
        free = self.free_at[i]
        wait = free - now if free > now else 0.0
        self.free_at[i] = (free if free > now else now) + self.hold
        st = self.stats
        st.gets += 1
        if wait <= 0.0:
            return 0.0, 0.0
        st.misses += 1
        spin = wait if wait <= self.spin_time else self.spin_time
        st.spin_time += spin
        if wait <= self.spin_time:
            return spin, 0.0
        st.sleeps += 1
        sleep = wait - spin + self.wakeup
        st.sleep_time += sleep
        return spin, sleep

    def utilisation(self, span: float) -> float:
        """Mean fraction of time a child is held (rho of one child)."""
        return self.stats.gets * self.hold / (self.children * span) if span > 0 else 0.0

    def reset_stats(self) -> None:
        self.stats = LatchStats()
