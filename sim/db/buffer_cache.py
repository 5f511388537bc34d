"""The buffer cache as an LRU over the workload's block popularity (Che's approximation).

A workload describes what it reads as segments (a table, an index, ...): per block, how
often it is touched per transaction, and what share of the touches change it. The cache
(and, below it, the OS page cache when the file system caches) is solved once per run:

- level-1 hit probability per block by Che (`sim.analytic.che_two_level_hits`), and the
  level-2 hit probability of a level-1 miss by the renewal form of the two-level model, with
  the page cache replacing pages as the OS does (`os_policy`: "lru", or "fifo" for Solaris 7,
  sim/os/vm.py; `sim.analytic.che_two_level_grouped`);
- the dirty blocks DBWR must write per transaction: a block stays for a residency of K
  touches (geometric, mean 1 / P(miss)) and is written at eviction if any touch changed it,
  P(clean) = p (1 - u) / (1 - (1 - p)(1 - u)) with p = P(miss), u = update share;
- and, when logs fill and start checkpoints every n transactions, the blocks that stay cached
  but were changed since the last checkpoint: a block changed c times per transaction is
  dirty at a checkpoint with probability 1 - exp(-c n) (changes as a Poisson stream; repeated
  changes between two checkpoints cost one write); with a checkpoint timeout instead (no
  changed block unwritten longer than n transactions), c / (1 + c n) writes per transaction;
  with both (`both_writes`), the exact rate of "written at the sooner of the two" (see
  `sooner_checkpoint_writes`). These three count a block as if it never left the cache.
- `dirty_writes` puts eviction and checkpoints together, as DBWR meets them: a block changed
  while clean starts a dirty episode that one write ends, at its eviction or at its checkpoint,
  whichever comes first (a block the timeout wrote and the cache then evicts clean costs no
  second write). With D the mean length of an episode, writes = c / (1 + c D) a transaction
  (renewal: the block is clean, and so can be dirtied, a share 1 - w D of the time). See
  `episode_writes`.

The OS page cache caches pages, not database blocks: where a page holds several blocks
(`page_blocks`: 8 KB Solaris pages on UltraSPARC over 2 KB Oracle blocks hold 4), level 2
is solved over pages of consecutive blocks (`sim.analytic.che_two_level_grouped`): a cold
block sharing a page with hot ones rides along, and a page holding one wanted block spends
a whole page of memory on it. `write_os_hit` is then the chance that the page of a block
DBWR writes at its eviction is still in the page cache (else a buffered write of a part of a
page must first read the page): not the time-average h2 of the block's next read but the
presence a residency after the read that left the page there (`sim.analytic.
level2_hit_at_eviction`: near 1 when blocks stay in the buffer cache briefly against a page's
stay in the page cache, near 0 the other way round). A block a checkpoint writes while it
stays cached finds its page as its own previous access (its read, or its last write, whose
page read left the page) left it a checkpoint delay earlier (`checkpoint_os_hit`, set by
`dirty_writes`; `sim.analytic.level2_hit_at_checkpoint`).

Touches that follow a segment's own at a short remove (`Retouch`: Stock-Level re-reading the stock
rows New-Order read for its district's last 20 orders) are not independent references: the cache is
solved with the segment standing in as independent references of the same occupancy (a block is
cached if touched within Che's time T, `sim.analytic.retouch_rate`), and a re-touch misses only if
its block left the cache since (`sim.analytic.retouch_miss`).

Sessions then draw, per transaction and segment, how many touches miss (binomial): what
used to be a single CPU burst becomes bursts separated by 'db file sequential read'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from scipy.optimize import brentq
from scipy.special import gammainc

from sim.analytic import (che_time, che_two_level_grouped, che_two_level_hits, level2_hit_after,
                          level2_hit_at_checkpoint, level2_hit_at_eviction, retouch_miss, retouch_rate)


@dataclass(frozen=True)
class Retouch:
    """Touches of a segment's blocks that follow the segment's own touches: each of those brings a
    Poisson(`per_touch`) number more, at uniform times within the next `window` transactions (Stock-Level
    re-reads the stock New-Order read for its district's last 20 orders). They add to a block's stay less
    than as many independent touches would, and miss only where the block left the cache since
    (sim.analytic.retouch_rate, retouch_miss). `name` keys their odds; they change nothing."""

    name: str
    per_touch: float
    window: float


@dataclass(frozen=True)
class Segment:
    """One object's blocks, bucketed: `counts[i]` blocks each touched `rates[i]` times per
    transaction; `update_share` of the touches change the block. `read_on_miss` False: a touch
    that misses reads nothing (a block reused as new, as undo blocks are when their rollback segment
    wraps): the segment takes buffers and leaves dirty blocks but is not in the hit ratio."""

    name: str
    rates: np.ndarray
    counts: np.ndarray
    update_share: float = 0.0
    read_on_miss: bool = True
    adjacent: bool = False   # a bucket's blocks lie side by side (rows ordered key first): pages hold one bucket's
    retouch: Retouch | None = None   # touches that follow this segment's own (`rates` counts only those)

    @property
    def blocks(self) -> float:
        return float(np.sum(self.counts))

    @property
    def touches(self) -> float:
        """Touches per transaction, re-touches included."""
        own = float(np.dot(self.rates, self.counts))
        return own * (1.0 + self.retouch.per_touch) if self.retouch else own


@dataclass(frozen=True)
class SegmentOdds:
    miss: float          # P(a touch misses the buffer cache)
    os_hit: float        # P(a miss is found in the OS page cache)
    writes_per_tx: float  # dirty blocks written by DBWR per transaction
    write_os_hit: float = 0.0  # P(the page of a block DBWR writes is in the OS page cache)


class BufferCache:
    """Hit and write figures for every segment, for a cache of `blocks` buffers over an OS
    cache of `os_blocks` (0: the file system does not cache) that replaces its pages by
    `os_policy` ("lru" or "fifo": os.page_replacement)."""

    def __init__(self, segments: list[Segment], blocks: float, os_blocks: float = 0.0, page_blocks: int = 1,
                 os_policy: str = "lru"):
        # touches per transaction as the workload gave them (re-touches apart), before retouched segments
        # stand in as independent references: of the same occupancy to solve the caches (`occupied`), of
        # the same misses to count what leaves the cache (`self.segments`: dirty writes; _leaving_equivalent)
        self._touches = {s.name: float(np.dot(s.rates, s.counts)) for s in segments}
        self._retouches = {s.name: s.retouch for s in segments if s.retouch}
        self.retouch_time = t = _retouch_time(segments, blocks)
        occupied = [_occupancy_equivalent(s, t) if s.retouch else s for s in segments]
        segments = [_leaving_equivalent(s, t) if s.retouch else s for s in segments]
        # what the page cache is sent: the misses, not the occupancy stand-in's r_eff P0
        sent = {s.name: float(np.sum(s.rates)) / float(np.sum(o.rates))
                for s, o in zip(segments, occupied) if s.name in self._retouches and np.sum(o.rates) > 0.0}
        self.segments = segments
        self.blocks, self.os_blocks = blocks, os_blocks
        rates = np.concatenate([s.rates for s in occupied])
        leaving = np.concatenate([s.rates for s in segments])
        counts = np.concatenate([s.counts for s in segments])
        shares = np.concatenate([np.full(len(s.rates), s.update_share) for s in segments])
        if page_blocks > 1 and os_blocks > 0.0:
            h1, h2, t1, t2, unit_miss = _paged_hits(occupied, blocks, os_blocks / page_blocks, page_blocks, os_policy,
                                                    with_times=True, miss_scale=sent)
        elif os_blocks > 0.0:   # each block its own level-2 unit
            scale = np.concatenate([np.full(len(s.rates), sent.get(s.name, 1.0)) for s in segments]) if sent else None
            h1, h2, t1, t2, unit_miss = che_two_level_grouped(rates, blocks, os_blocks, np.arange(len(rates)), counts,
                                                              counts, os_policy, with_times=True, miss_scale=scale)
        else:
            h1, h2 = che_two_level_hits(rates, blocks, 0.0, counts=counts)
        self.os_policy = os_policy
        self._t2, self._other = 0.0, np.zeros_like(h2)   # level 2's time, the page's other blocks' misses
        self._h2, self._t1 = h2, math.inf
        if os_blocks > 0.0:
            self._t1, self._t2, self._other = t1, t2, np.maximum(unit_miss - leaving * (1.0 - h1), 0.0)
            # at a dirty block's eviction, not at its next read (level2_hit_at_eviction)
            h_write = level2_hit_at_eviction(leaving, t1, t2, h2, self._other, shares, os_policy)
        else:
            h_write = np.zeros_like(h2)
        # P(page cached) at the checkpoint writes of the last dirty_writes call, per segment
        self.checkpoint_os_hit: dict[str, float] = {}
        self.odds: dict[str, SegmentOdds] = {}
        self._hits: dict[str, np.ndarray] = {}
        start = 0
        for s in segments:
            n = len(s.rates)
            r, m, a, b, bw = s.rates, s.counts, h1[start:start + n], h2[start:start + n], h_write[start:start + n]
            start += n
            self._hits[s.name] = a
            demand = r * m
            total = float(demand.sum())
            miss_rate = demand * (1.0 - a)             # misses per transaction, per bucket
            misses = float(miss_rate.sum())
            p, u = 1.0 - a, s.update_share
            with np.errstate(invalid="ignore", divide="ignore"):
                clean = np.where(p > 0.0, p * (1.0 - u) / (1.0 - (1.0 - p) * (1.0 - u)), 1.0)
            written = miss_rate * (1.0 - clean) if u > 0.0 else np.zeros_like(miss_rate)
            writes = float(written.sum())
            self.odds[s.name] = SegmentOdds(
                miss=misses / total if total else 0.0,
                os_hit=min(1.0, float(np.dot(miss_rate, b)) / misses) if misses else 0.0,   # rounding can pass 1
                writes_per_tx=writes,
                write_os_hit=min(1.0, float(np.dot(written, bw)) / writes) if writes else 0.0)
            again = self._retouches.get(s.name)
            if again:
                # a re-touch that misses comes between Che's time and the window after the touch it follows,
                # so its page is there as that touch left it (level2_hit_after), not as a read finds it
                found = b if os_blocks <= 0.0 or not misses else level2_hit_after(
                    b, self._other[start - n:start], self._t2, t, again.window, os_policy)
                self.odds[again.name] = SegmentOdds(
                    miss=self.odds[s.name].miss * retouch_miss(again.per_touch, again.window, t),
                    os_hit=min(1.0, float(np.dot(miss_rate, found)) / misses) if misses else 0.0, writes_per_tx=0.0)

    def checkpoint_writes(self, transactions: float) -> dict[str, float]:
        """Writes per transaction, per segment, of cached blocks that checkpoints every
        `transactions` transactions find dirty."""
        out = {}
        for s in self.segments:
            change = s.rates * s.update_share
            out[s.name] = float(np.dot(s.counts * self._hits[s.name], -np.expm1(-change * transactions))) / transactions
        return out

    def timeout_writes(self, transactions: float) -> dict[str, float]:
        """Writes per transaction, per segment, of cached blocks when no changed block stays
        unwritten for more than `transactions` transactions (an incremental checkpoint with a
        timeout): a cached block changed c times per transaction waits 1/c for its first change,
        then is written `transactions` later (changes in between cost no more writes), so it
        is written c / (1 + c n) times per transaction (a renewal cycle of 1/c + n)."""
        out = {}
        for s in self.segments:
            change = s.rates * s.update_share
            out[s.name] = float(np.dot(s.counts * self._hits[s.name], change / (1.0 + change * transactions)))
        return out

    def both_writes(self, period: float, span: float) -> dict[str, float]:
        """Writes per transaction, per segment, of cached blocks under both regimes at once: a
        checkpoint every `period` transactions (log switches) and no changed block unwritten for
        more than `span` (the timeout): each changed block is written at the sooner of the two
        (`sooner_checkpoint_writes`). `period` -> infinity gives timeout_writes(span), `span` >=
        `period` gives checkpoint_writes(period)."""
        out = {}
        for s in self.segments:
            change = s.rates * s.update_share
            out[s.name] = float(np.dot(s.counts * self._hits[s.name], sooner_checkpoint_writes(change, period, span)))
        return out

    def dirty_writes(self, period: float | None = None, span: float | None = None) -> dict[str, tuple[float, float]]:
        """(evicted, checkpointed) writes per transaction, per segment, with every dirty episode
        written once, at the sooner of its eviction and its checkpoint (`episode_writes`): log
        switches every `period` transactions and/or a timeout of `span` (None: that regime is off;
        both None: eviction only, `SegmentOdds.writes_per_tx`). Also sets `checkpoint_os_hit`: per
        segment with checkpoint writes, P(the page is cached) at them (sim.analytic.level2_hit_at_checkpoint:
        the write comes a delay after the change that dirtied the block, the timeout's `span`, else half the
        log-switch `period`, the mean wait of a rarely changed block: a rough figure, sized logs being a
        what-if here; a checkpointed block's first write of its stay, one a dirtied stay, follows its read)."""
        out = {}
        self.checkpoint_os_hit = {}
        for s, h2, other in zip(self.segments, self._split(self._h2), self._split(self._other)):
            p = 1.0 - self._hits[s.name]
            ev, ck = episode_writes(s.rates * s.update_share, s.rates, p, period, span)
            out[s.name] = (float(np.dot(s.counts, ev)), float(np.dot(s.counts, ck)))
            if out[s.name][1] > 0.0 and self.os_blocks > 0.0:
                # the share of checkpoint writes that are the first of a block's stay: one a dirtied stay
                u = s.update_share
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # a tiny ck: capped at 1 below
                    clean = np.where(p > 0.0, p * (1.0 - u) / (1.0 - (1.0 - p) * (1.0 - u)), 1.0)
                    dirtied = s.rates * p * (1.0 - clean)
                    first = np.where(ck > 0.0, np.minimum(dirtied / np.where(ck > 0.0, ck, 1.0), 1.0), 0.0)
                delay = span if period is None else (period / 2.0 if span is None else min(span, period / 2.0))
                hit = level2_hit_at_checkpoint(s.rates, u, delay, self._t1, self._t2, other, self.os_policy, h2, first)
                self.checkpoint_os_hit[s.name] = min(1.0, float(np.dot(s.counts * ck, hit)) / out[s.name][1])
        return out

    def _split(self, values: np.ndarray) -> list[np.ndarray]:
        """A per-bucket array of all segments, cut into one per segment."""
        return np.split(values, np.cumsum([len(s.rates) for s in self.segments])[:-1])

    def streams(self) -> list[tuple[str, float]]:
        """(odds key, touches per transaction) of every stream of touches that reads on a miss: each
        segment's own touches, and its re-touches under their own key."""
        out = []
        for s in self.segments:
            if s.read_on_miss:
                out.append((s.name, self._touches[s.name]))
                if s.name in self._retouches:
                    out.append((self._retouches[s.name].name, self._touches[s.name] * self._retouches[s.name].per_touch))
        return out

    def hit_ratio(self) -> float:
        """Share of all touches found in the buffer cache (AWR's 'Buffer Hit %' / 100)."""
        streams = self.streams()
        total = sum(n for _, n in streams)
        missed = sum(n * self.odds[name].miss for name, n in streams)
        return 1.0 - missed / total if total else 1.0


def _retouch_time(segments: list[Segment], blocks: float) -> float:
    """Che's characteristic time of a cache of `blocks` buffers over segments some of which are re-touched
    (inf: no re-touches, not needed). Occupancy sum m (1 - e^{-r'(T) T}) = blocks, with r' retouch_rate's:
    r <= r' <= r (1 + per_touch), so T lies between che_time of those two sets of rates."""
    if not any(s.retouch for s in segments):
        return math.inf

    def rates(t: float) -> np.ndarray:
        return np.concatenate([retouch_rate(s.rates, s.retouch.per_touch, s.retouch.window, t) if s.retouch
                               else s.rates for s in segments])

    counts = np.concatenate([s.counts for s in segments])
    most = np.concatenate([s.rates * (1.0 + s.retouch.per_touch) if s.retouch else s.rates for s in segments])
    lo, hi = che_time(most, blocks, counts=counts), che_time(np.concatenate([s.rates for s in segments]), blocks,
                                                               counts=counts)
    if lo <= 0.0 or math.isinf(lo) or lo >= hi:   # nothing or everything cached (same blocks touched)
        return lo

    def excess(log_t: float) -> float:
        t = math.exp(log_t)
        return float(np.dot(counts, -np.expm1(-rates(t) * t))) - blocks

    # lo and hi are roots to che_time's tolerance: with very rare re-touches both may be on one side
    if excess(math.log(lo)) >= 0.0:
        return lo
    if excess(math.log(hi)) <= 0.0:
        return hi
    return math.exp(brentq(excess, math.log(lo), math.log(hi), xtol=1e-12))


def _leaving_equivalent(s: Segment, t: float) -> Segment:
    """A retouched segment as independent references that miss as often (r (1 + k f), f the re-touches'
    miss factor, retouch_miss), changed as often as before: a block's stay then ends as often as it does
    (the residency argument of the dirty writes; against a simulated block in Che's TTL cache within 0.1%,
    where the occupancy stand-in overstates stock's eviction writes by up to 9%)."""
    factor = 1.0 + s.retouch.per_touch * retouch_miss(s.retouch.per_touch, s.retouch.window, t)
    return replace(s, rates=s.rates * factor, update_share=s.update_share / factor, retouch=None)


def _occupancy_equivalent(s: Segment, t: float) -> Segment:
    """A retouched segment as independent references of the same occupancy at characteristic time t
    (retouch_rate: one factor for all its buckets): what the caches are solved over (its changes are
    counted over _leaving_equivalent's)."""
    factor = float(retouch_rate(np.ones(1), s.retouch.per_touch, s.retouch.window, t)[0])
    return replace(s, rates=s.rates * factor, retouch=None)


def episode_writes(change: np.ndarray, rate: np.ndarray, miss: np.ndarray, period: float | None = None,
                   span: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(evicted, checkpointed) writes per transaction of one block per bucket: touched `rate` (r)
    times per transaction, `change` (c) of them changes, missing the cache with P `miss` (p).

    Che's cache is a TTL: a block leaves T = -ln(p) / r transactions after its last touch, so from
    a touch (a change is one) it is evicted after E = T + X, X the touch gaps shorter than T before
    the first longer one: a geometric number of them (none with P p), mean E[E] = (1/p - 1) / r.
    A dirty episode (from the change that dirtied a clean block to its write) lasts D = min(E, the
    checkpoint's delay) and the block writes c / (1 + c E[D]) a transaction, the checkpoint's share
    being P(checkpoint first). Eviction alone (both regimes off) is exact: c / (1 + c E[E]) is the
    residency argument's r p u / (p + u - p u).
    - Timeout of n (`span` alone): D = min(E, n). X is taken as 0 with P p and else exponential of
      its mean (a geometric sum of gaps; exact in the limits p -> 0 and T -> 0), so for n > T
      E[D] = T + E[X] (1 - e^{-(n - T)/m}), m = E[X] / (1 - p), and P(timeout first) = (1 - p) e^{-(n - T)/m};
      for n <= T the timeout always comes first: c / (1 + c n), as timeout_writes.
    - Log switches (`period`, with or without a timeout): an always-cached block's exact rate w_c
      (`sooner_checkpoint_writes`) is an episode of d_c = 1/w_c - 1/c; with eviction, the two end an
      episode as competing rates, D = 1 / (1/d_c + 1/E[E]) (exact when either is off)."""
    c = np.asarray(change, dtype=float)
    r = np.asarray(rate, dtype=float)
    p = np.clip(np.asarray(miss, dtype=float), 0.0, 1.0)
    live = (c > 0.0) & (r > 0.0)
    cs, rs, ps = c[live], r[live], p[live]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        evict = np.where(ps > 0.0, (1.0 / ps - 1.0) / rs, np.inf)           # E[E]
        if period is not None:
            wc = (sooner_checkpoint_writes(cs, period, span) if span is not None
                  else -np.expm1(-cs * period) / period)
            # 1/w_c - 1/c cancels for rarely changed blocks: there a change falls at a uniform phase,
            # and waits for the next switch (C/2 on average) or the timeout, whichever is sooner
            rare = cs * period < 1e-6
            uniform = span - span * span / (2.0 * period) if span is not None and span < period else period / 2.0
            dc = np.where(rare, uniform, np.maximum(1.0 / np.where(rare, 1.0, wc) - 1.0 / cs, 0.0))
            first = np.where(np.isinf(evict), 1.0, evict / (dc + evict))     # P(checkpoint first)
            episode = np.where(np.isinf(evict), dc, dc * evict / (dc + evict))
        elif span is not None:
            x = -np.log(np.where(ps > 0.0, ps, 1.0))                        # r T (0 where p = 1)
            ttl = np.where(ps > 0.0, x / rs, np.inf)
            # E[X] = T (e^x - 1 - x) / x, by its series where x is small (cancellation)
            gaps = np.where(x > 1e-4, (np.expm1(x) - x) / np.where(x > 0.0, rs, 1.0),
                            ttl * (x / 2.0 + x * x / 6.0))
            q = -np.expm1(-x)
            left = span - ttl
            decay = np.maximum(left, 0.0) * q / np.where(gaps > 0.0, gaps, 1.0)
            tail = np.where(q > 0.0, np.exp(-decay), 0.0)
            gone = np.where(q > 0.0, -np.expm1(-decay), 1.0)   # 1 - tail, kept where decay is ~1e-150
            after = left > 0.0
            # e^{rT} past a double (P(miss) ~1e-320): the gaps never end, the timeout always comes first
            endless = ~np.isfinite(gaps)
            episode = np.where(after & ~endless, ttl + np.where(endless, 0.0, gaps) * gone, span)
            first = np.where(after & ~endless, q * tail, 1.0)
        else:
            episode, first = evict, np.zeros_like(cs)
        w = np.where(np.isinf(episode), 0.0, cs / (1.0 + cs * np.where(np.isinf(episode), 0.0, episode)))
    evicted, checkpointed = np.zeros_like(c), np.zeros_like(c)
    evicted[live], checkpointed[live] = w * (1.0 - first), w * first
    return evicted, checkpointed


_CHUNK = 1 << 20   # elements of the (bucket x term) array evaluated at once (8 MB): bounds memory, not accuracy


def sooner_checkpoint_writes(change: np.ndarray, period: float, span: float) -> np.ndarray:
    """Long-run writes per transaction of a block changed as a Poisson stream of `change` (c) per
    transaction (an array: one per bucket) when it is written at the sooner of the next of the
    checkpoints every `period` (C) transactions and `span` (n) transactions after its first change
    since it was last written (log_checkpoint_timeout); changes while it is dirty cost nothing more.

    Exact, by the phase theta in [0, C) since the last checkpoint (time-averaged, so the same for
    any phase of the schedule): each checkpoint leaves the block clean, so the chance u(theta) it
    is clean starts at 1; a clean block is dirtied at rate c, and one dirtied at theta - n is
    written by the timeout at theta if no checkpoint came between (theta >= n):
        u'(theta) = -c u(theta) + c u(theta - n) [theta >= n],  u = exp(-c theta) on [0, n].
    By steps (v = exp(c theta) u, v' = c exp(c n) v(theta - n)) its solution is a sum of Poisson
    terms, u(theta) = sum_{k=0}^{floor(theta/n)} exp(-x_k) x_k^k / k!, x_k = c (theta - k n).
    Every dirtying is followed by one write in the same cycle, so writes per cycle = c times the
    integral of u over [0, C), and per transaction
        w = (1/C) sum_{k=0}^{floor(C/n)} P(k + 1, c (C - k n))
    with P the regularised lower incomplete gamma function. With n >= C only k = 0 is left:
    (1 - exp(-c C)) / C, checkpoint_writes; as C -> infinity, c / (1 + c n), timeout_writes.

    The terms fall from 1 to 0 around k* = c C / (1 + c n) over a few sqrt(c C) / (1 + c n):
    the terms more than 12 Poisson standard deviations (+12) below are 1 and above are 0 to
    double precision, so only a window around k* is evaluated (the terms below it are counted),
    which keeps the cost per bucket ~ 24 sqrt(C / n) at most, whatever C / n."""
    shape = np.shape(change)
    c = np.asarray(change, dtype=float).ravel()
    if not (period > 0.0 and span > 0.0):
        raise ValueError(f"sooner_checkpoint_writes: period and span must be > 0 transactions, got {period}, {span}")
    if span >= period:
        return (-np.expm1(-c * period) / period).reshape(shape)
    last = np.floor(period / span)          # the last k with C - k n >= 0
    cc = c * period
    mid = cc / (1.0 + c * span)
    half = (12.0 * np.sqrt(cc) + 12.0) / (1.0 + c * span) + 2.0
    lo = np.clip(np.floor(mid - half), 0.0, last)
    hi = np.clip(np.ceil(mid + half), 0.0, last)
    width = int(np.max(hi - lo)) + 1 if c.size else 1
    total = lo.copy()                         # terms 0 .. lo - 1: each 1
    rows = max(1, _CHUNK // width)
    j = np.arange(width, dtype=float)
    for start in range(0, c.size, rows):
        sl = slice(start, start + rows)
        k = lo[sl, None] + j[None, :]
        x = c[sl, None] * (period - k * span)
        terms = np.where(k <= hi[sl, None], gammainc(k + 1.0, np.maximum(x, 0.0)), 0.0)
        total[sl] += terms.sum(axis=1)
    return (total / period).reshape(shape)


def _paged_hits(segments: list[Segment], blocks: float, os_pages: float, page_blocks: int, policy: str = "lru",
                with_times: bool = False, miss_scale: dict[str, float] | None = None):
    """(h1, h2) per bucket of every segment, level 2 over pages of `page_blocks` consecutive
    blocks. A bucket whose m identical blocks lie side by side (a segment of one bucket, or an
    `adjacent` one with m >= P) becomes `page_blocks` items of m / P blocks each sharing a unit of
    m / P pages; a per-block array (equal counts: one entry per block position, `counts` copies of
    it, e.g. one per warehouse) is cut into runs of P.
    `with_times`: (h1, h2, t1, t2, unit_miss) as che_two_level_grouped's, unit_miss per bucket.
    `miss_scale`: per segment, its level-1 misses against its rates' (che_two_level_grouped)."""
    rates, counts, group, gcounts, back, scales = [], [], [], [], [], []
    start = ngroups = 0
    for s in segments:
        n = len(s.rates)
        scale = (miss_scale or {}).get(s.name, 1.0)
        if n == 1 or (s.adjacent and float(s.counts.min()) >= page_blocks):
            m = np.asarray(s.counts, dtype=float) / page_blocks
            rates.append(np.repeat(np.asarray(s.rates, dtype=float), page_blocks))
            scales.append(np.full(n * page_blocks, scale))
            counts.append(np.repeat(m, page_blocks))
            group.append(ngroups + np.repeat(np.arange(n), page_blocks))
            gcounts.append(m)
            back.append(start + page_blocks * np.arange(n))
            ngroups += n
            start += n * page_blocks
            continue
        if not np.all(s.counts == s.counts[0]):
            raise ValueError(f"segment {s.name!r}: pages need one entry per block position (equal counts)")
        pages = -(-n // page_blocks)
        pad = pages * page_blocks - n
        rates.append(np.concatenate([s.rates, np.zeros(pad)]))
        scales.append(np.full(n + pad, scale))
        counts.append(np.full(n + pad, float(s.counts[0])))
        group.append(ngroups + np.arange(n + pad) // page_blocks)
        gcounts.append(np.full(pages, float(s.counts[0])))
        back.append(start + np.arange(n))
        ngroups += pages
        start += n + pad
    out = che_two_level_grouped(np.concatenate(rates), blocks, os_pages, np.concatenate(group),
                                np.concatenate(counts), np.concatenate(gcounts), policy, with_times=True,
                                miss_scale=np.concatenate(scales) if miss_scale else None)
    idx = np.concatenate(back)
    h1, h2, t1, t2, unit_miss = out
    if with_times:
        return h1[idx], h2[idx], t1, t2, unit_miss[idx]
    return h1[idx], h2[idx]
