"""Cores, strands and pipelines: how fast a burst of instructions runs.

A running strand alternates between issuing instructions and stalling on a memory miss.
Strands that share an issue pipeline form a *pipeline group* (an UltraSPARC T2 core is two
groups of four strands; a Haswell core with Hyper-Threading one group of two; an Opteron
core one group of one). With n busy strands in a group, the group's instruction rate is
the throughput of a finite-source queue (machine repairman, M/M/1//n): strands "think" for
the stall time and queue for the pipeline for the issue time between two misses. Each busy
strand progresses at X(n)/n: processor sharing with a load-dependent rate.

Where a batch job runs beside a workload, the strands run two codes that miss at different
rates (RMAN's compressors a quarter as often as Oracle's OLTP code): a pipeline issues from its
ready strands in turn, so the code that stalls less is ready more often and gets more of it. A
MixedPipelineGroup gives each code its own per-strand rate from a multi-class repairman (exact
MVA over the mix of busy strands) and runs each code's bursts in its own virtual time.

Processor sharing is done in virtual time, so an event happens only when a group's busy
count changes: the group's virtual clock counts instructions completed by each busy strand;
a burst's finish tag is the virtual time at its start plus its instructions; one pending
timeout fires at the earliest tag, and a timeout made stale by a later change is ignored
(only the latest one is acted on) (`reference/engine-baselines.md`: 5.7x faster than interrupting bursts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from heapq import heapify, heappop, heappush

import numpy as np
import simpy
from simpy.events import NORMAL

from sim.analytic import repairman, repairman_classes
from sim.engine import Wakeup
from sim.hardware.profile import CpuSpec

# A burst whose finish tag is within this many instructions of the virtual clock is done:
# floating-point slack from summing rate*dt, far below one instruction.
_TAG_SLACK = 1e-6
_ULPS = 1e-15  # about four units in the last place of a double, relative
_NO_ARG = object()     # start() without an argument for done()
_NO_CALLBACKS = ()     # a stale wake-up's callbacks: SimPy's loop pops it and runs nothing


@dataclass(frozen=True)
class MemoryBehaviour:
    """How a workload's instruction stream uses memory on this core type.

    misses_per_instruction: last-level cache misses that stall the strand, per instruction.
    stall_cycles: cycles one miss stalls a strand running alone (memory latency x clock / MLP).
    mlp: the memory-level parallelism behind stall_cycles. An out-of-order core with
      simultaneous multithreading (Hyper-Threading) partitions its reorder, load and store
      buffers between the active threads (Intel 64 and IA-32 Optimization Reference Manual,
      "Partitioned Resources": each logical processor gets half the entries), so with n busy
      strands each has 1/n of the window and overlaps 1/n as many misses: a miss stalls
      latency / max(1, mlp/n), i.e. stall_cycles x min(n, mlp). In-order strands (mlp 1)
      are unaffected.
    """

    misses_per_instruction: float
    stall_cycles: float
    mlp: float = 1.0
    codes: tuple[float, ...] = ()   # where several codes run (a batch job beside a workload): each one's misses
                                    #   per instruction, by code number (MixedPipelineGroup)


@lru_cache(maxsize=4096)
def rate_table(strands: int, pipelines: int, cpi_issue: float, mpi: float, stall_cycles: float,
               clock: float, mlp: float = 1.0) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-strand instruction rate (1/s) and pipeline utilisation for 0..strands busy strands.

    The issue time between two misses is cpi_issue/mpi cycles (the repairman's service), the
    stall its think time. With no misses a strand is never stalled and strands simply share
    the pipelines. With n busy strands a miss stalls stall_cycles x min(n, mlp) (see
    MemoryBehaviour: the window is split between the strands).
    """
    rates, utils = [0.0], [0.0]
    for n in range(1, strands + 1):
        stall = stall_cycles * min(float(n), max(mlp, 1.0))
        if mpi <= 0.0 or stall_cycles <= 0.0:
            busy = min(n, pipelines)
            per_strand_ipc = busy / (n * cpi_issue)
        else:
            run_cycles = cpi_issue / mpi
            runs_per_cycle, busy = repairman(n, stall, run_cycles, pipelines)
            per_strand_ipc = runs_per_cycle * (1.0 / mpi) / n
        rates.append(per_strand_ipc * clock)
        utils.append(busy / pipelines)
    return tuple(rates), tuple(utils)


@lru_cache(maxsize=1024)
def mixed_rate_table(strands: int, cpi_issue: float, mpis: tuple[float, ...], stall_cycles: float, clock: float,
                     mlp: float = 1.0) -> tuple:
    """Per-strand instruction rate (1/s) of each code, and pipeline utilisation, for every mix of busy strands
    that fits in the group: entry sum_k n_k (strands+1)^k holds (rates by code, utilisation) with n_k strands
    running code k (None where the n_k add up to more than the strands).

    Codes differ in their misses per instruction only: they share the pipeline and see one memory latency. A
    fine-grained multithreaded pipeline issues from its ready strands in turn (processor sharing), so each code's
    strands issue cpi_issue cycles per instruction there and stall mpi_k x stall cycles per instruction away from
    it: a multi-class repairman, exact by MVA (sim.analytic.repairman_classes). A code alone is rate_table's.
    """
    base = strands + 1
    table: list = [None] * base ** len(mpis)
    pure = [rate_table(strands, 1, cpi_issue, m, stall_cycles, clock, mlp) for m in mpis]
    for counts in np.ndindex(*(base,) * len(mpis)):
        busy = sum(counts)
        if busy > strands:
            continue
        key = sum(n * base ** k for k, n in enumerate(counts))
        alone = [k for k, n in enumerate(counts) if n]
        if len(alone) <= 1:   # one code (or none) busy: its own table, to the last digit
            k = alone[0] if alone else 0
            rates = [0.0] * len(mpis)
            rates[k] = pure[k][0][busy]
            table[key] = (tuple(rates), pure[k][1][busy])
            continue
        stall = stall_cycles * min(float(busy), max(mlp, 1.0))
        ipc, util = repairman_classes(counts, [m * stall for m in mpis], [cpi_issue] * len(mpis))
        table[key] = (tuple(x / n * clock if n else 0.0 for x, n in zip(ipc, counts)), util)
    return tuple(table)


def _cut(heap: list, vt: float, arg, boundary: float, origin: float) -> float | None:
    """PipelineGroup.cut's work on one heap of bursts in virtual time `vt`: the instructions taken off the burst
    started with `arg` (0 where its finish comes first), None where it is not in this heap."""
    for i, entry in enumerate(heap):
        if entry[4] is arg:
            end = origin + max(1, math.ceil((vt - origin) / boundary - 1e-9)) * boundary
            if end >= entry[0]:
                return 0.0
            heap[i] = (end,) + entry[1:]
            heapify(heap)
            return entry[0] - end
    return None


class PipelineGroup:
    """Strands sharing issue pipelines; bursts progress by processor sharing in virtual time."""

    __slots__ = ("env", "index", "core", "strands", "pipelines", "spec", "rates", "utils", "busy",
                 "vt", "t_last", "heap", "pending", "seq", "busy_sys", "area_busy", "area_issue",
                 "area_sys", "instructions", "overlap", "stalled", "_callbacks")

    def __init__(self, env: simpy.Environment, index: int, core: int, strands: tuple[int, ...],
                 pipelines: int, spec: CpuSpec):
        self.env, self.index, self.core, self.strands = env, index, core, strands
        self.pipelines, self.spec = pipelines, spec
        self.rates: tuple[float, ...] = ()
        self.utils: tuple[float, ...] = ()
        self.busy = 0
        self.busy_sys = 0.0  # busy strands weighted by the sys share of their bursts
        self.vt = 0.0
        self.t_last = env.now
        self.heap: list = []
        self.pending: Wakeup | None = None  # the one wake-up that is not stale (a later one makes it stale)
        self._callbacks = (self._fire,)   # shared by every wake-up: SimPy only reads it
        self.seq = 0
        self.area_busy = self.area_issue = self.area_sys = 0.0
        self.instructions = 0.0
        self.overlap: tuple[float, ...] = ()   # min(n, mlp) with n strands busy: a miss stalls stall_cycles x it
        self.stalled = 0.0   # instructions x that factor: their mean is what a miss's stall is, over stall_cycles

    def set_behaviour(self, mem: MemoryBehaviour) -> None:
        self._advance()
        self.rates, self.utils = rate_table(len(self.strands), self.pipelines, self.spec.cpi_issue,
                                            mem.misses_per_instruction, mem.stall_cycles, self.spec.clock,
                                            mem.mlp)
        self.overlap = tuple(min(float(n), max(mem.mlp, 1.0)) for n in range(len(self.strands) + 1))
        self._reschedule()

    def _advance(self) -> None:
        now = self.env._now
        dt = now - self.t_last
        busy = self.busy
        if dt > 0.0 and busy:
            done = dt * self.rates[busy]
            retired = done * busy
            self.vt += done
            self.instructions += retired
            self.stalled += retired * self.overlap[busy]
            self.area_busy += dt * busy
            self.area_issue += dt * self.utils[busy]
            self.area_sys += dt * self.busy_sys
        self.t_last = now

    def areas_now(self) -> tuple[float, float, float]:
        """(busy, sys, issuing) strand-seconds up to now, computed without bringing the group up to date: the
        same sums _advance would make, and no split integration step (sim/timeline.py reads them mid-run)."""
        dt, busy = self.env._now - self.t_last, self.busy
        if dt > 0.0 and busy:
            return (self.area_busy + dt * busy, self.area_sys + dt * self.busy_sys,
                    self.area_issue + dt * self.utils[busy])
        return self.area_busy, self.area_sys, self.area_issue

    def clock(self, code: int = 0) -> float:
        """The virtual time of code `code`'s bursts: instructions each has retired since the start (one code here)."""
        return self.vt

    def start(self, instructions: float, sys_share: float, done, arg=_NO_ARG, code: int = 0) -> None:
        """Run `instructions` on one more strand of this group; call done() (done(arg) if an arg is
        given) when finished. `code`: whose code it is, where a MixedPipelineGroup tells them apart."""
        # _reschedule() inlined: this runs once per slice of every burst.
        self._advance()
        env = self.env
        now = env._now
        busy = self.busy
        self.seq += 1
        heap = self.heap
        heappush(heap, (self.vt + instructions, self.seq, sys_share, done, arg))
        self.busy = busy = busy + 1
        self.busy_sys += sys_share
        delay = (heap[0][0] - self.vt) / self.rates[busy]
        if self.pending is not None:
            self.pending.callbacks = _NO_CALLBACKS
        wake = self.pending = Wakeup()
        wake.callbacks = self._callbacks
        heappush(env._queue, (now + (delay if delay > 0.0 else 0.0), NORMAL, next(env._eid), wake))

    def retiring(self) -> float:
        """Instructions per second this group retires now."""
        return self.rates[self.busy] * self.busy

    def full_rate(self, code: int = 0) -> float:
        """Per-strand instruction rate of code `code` with every strand of the group busy running it (one code here):
        what sizes the dispatcher's time slice."""
        return self.rates[-1]

    def cut(self, arg, boundary: float, origin: float) -> float:
        """End the burst started with `arg` at its next multiple of `boundary` instructions after virtual time
        `origin` (its start) instead of at its finish, if that comes first; returns the instructions taken off it.
        One exactly at a multiple ends now (a slice ending at this instant, as an arrival at a slice's end finds
        it when the arrival was scheduled first); one just started runs its first slice."""
        self._advance()
        taken = _cut(self.heap, self.vt, arg, boundary, origin)
        if taken:
            self._reschedule()
        return taken or 0.0

    def _reschedule(self) -> None:
        if self.pending is not None:
            self.pending.callbacks = _NO_CALLBACKS
        if self.heap:
            self._wake_in((self.heap[0][0] - self.vt) / self.rates[self.busy])
        else:
            self.pending = None

    def _wake_in(self, delay: float) -> None:
        """The one wake-up that is not stale, `delay` s from now (start and _fire push theirs inline)."""
        env = self.env
        wake = self.pending = Wakeup()
        wake.callbacks = self._callbacks
        heappush(env._queue, (env._now + (delay if delay > 0.0 else 0.0), NORMAL, next(env._eid), wake))

    def _fire(self, ev: Wakeup) -> None:
        if ev is not self.pending:
            return  # stale: superseded by a later change of the busy count
        # _reschedule() inlined: this runs once per slice of every burst.
        self._advance()
        env = self.env
        now = env._now
        busy, rates = self.busy, self.rates
        vt = self.vt
        heap = self.heap
        finished = []
        # A timeout can fire a hair short of its tag: simulated time has finite resolution, and
        # so has vt. Accept what the float spacing of either cannot tell apart from done.
        limit = vt + _TAG_SLACK + _ULPS * (vt + rates[busy] * now)
        while heap and heap[0][0] <= limit:
            entry = heappop(heap)
            busy -= 1
            self.busy_sys -= entry[2]
            finished.append(entry)
        self.busy = busy
        if not busy:
            self.busy_sys = 0.0
        ev.callbacks = _NO_CALLBACKS
        if heap:
            delay = (heap[0][0] - vt) / rates[busy]
            wake = self.pending = Wakeup()
            wake.callbacks = self._callbacks
            heappush(env._queue, (now + (delay if delay > 0.0 else 0.0), NORMAL, next(env._eid), wake))
        else:
            self.pending = None
        for _tag, _seq, _sys, done, arg in finished:
            if arg is _NO_ARG:
                done()
            else:
                done(arg)

    def reset_stats(self) -> None:
        self._advance()
        self.area_busy = self.area_issue = self.area_sys = 0.0
        self.instructions = self.stalled = 0.0


class MixedPipelineGroup(PipelineGroup):
    """A pipeline group whose strands run several codes that miss the cache at different rates (a batch job
    beside a workload): each code's bursts progress by processor sharing at its own rate (mixed_rate_table), in
    its own virtual time, so the code that misses less keeps its speed and the other its stalls. Attributes
    as PipelineGroup's (rates: code 0's own table); `by_code` counts each code's [strand-seconds, instructions,
    the same x the stall factor, misses at its rate]: the memory's misses, and a CPI stack of its own."""

    __slots__ = ("mpis", "table", "counts", "strides", "key", "vts", "heaps", "by_code")

    def __init__(self, env: simpy.Environment, index: int, core: int, strands: tuple[int, ...],
                 pipelines: int, spec: CpuSpec, codes: int):
        super().__init__(env, index, core, strands, pipelines, spec)
        self.mpis: tuple[float, ...] = (0.0,) * codes
        self.table: tuple = ()
        self.counts = [0] * codes
        self.strides = [(len(strands) + 1) ** k for k in range(codes)]
        self.key = 0   # sum of counts x strides: the table's entry for the present mix
        self.vts = [0.0] * codes
        self.heaps: list[list] = [[] for _ in range(codes)]
        self.by_code = [[0.0] * 4 for _ in range(codes)]

    def set_behaviour(self, mem: MemoryBehaviour) -> None:
        self._advance()
        mpis = mem.codes or (mem.misses_per_instruction,) * len(self.counts)
        self.mpis = mpis
        self.rates, self.utils = rate_table(len(self.strands), self.pipelines, self.spec.cpi_issue, mpis[0],
                                            mem.stall_cycles, self.spec.clock, mem.mlp)
        self.table = mixed_rate_table(len(self.strands), self.spec.cpi_issue, mpis, mem.stall_cycles,
                                      self.spec.clock, mem.mlp)
        self.overlap = tuple(min(float(n), max(mem.mlp, 1.0)) for n in range(len(self.strands) + 1))
        self._reschedule()

    def clock(self, code: int = 0) -> float:
        return self.vts[code]

    def full_rate(self, code: int = 0) -> float:
        # code `code` on every strand: its own table's (code 0's is rates[-1], to the bit)
        return self.table[len(self.strands) * self.strides[code]][0][code]

    def _advance(self) -> None:
        now = self.env._now
        dt = now - self.t_last
        busy = self.busy
        if dt > 0.0 and busy:
            rates, util = self.table[self.key]
            vts, mpis, by_code, overlap = self.vts, self.mpis, self.by_code, self.overlap[busy]
            retired = 0.0
            k = 0
            for n in self.counts:   # (a plain loop: this runs at every change of the mix)
                if n:
                    done = dt * rates[k]
                    vts[k] += done
                    ran = done * n
                    retired += ran
                    tally = by_code[k]
                    tally[0] += dt * n
                    tally[1] += ran
                    tally[2] += ran * overlap
                    tally[3] += ran * mpis[k]
                k += 1
            self.instructions += retired
            self.stalled += retired * overlap
            self.area_busy += dt * busy
            self.area_issue += dt * util
            self.area_sys += dt * self.busy_sys
        self.t_last = now

    def areas_now(self) -> tuple[float, float, float]:
        dt, busy = self.env._now - self.t_last, self.busy
        if dt > 0.0 and busy:
            return (self.area_busy + dt * busy, self.area_sys + dt * self.busy_sys,
                    self.area_issue + dt * self.table[self.key][1])
        return self.area_busy, self.area_sys, self.area_issue

    def retiring(self) -> float:
        return sum(r * n for r, n in zip(self.table[self.key][0], self.counts)) if self.busy else 0.0

    def start(self, instructions: float, sys_share: float, done, arg=_NO_ARG, code: int = 0) -> None:
        self._advance()
        self.seq += 1
        heappush(self.heaps[code], (self.vts[code] + instructions, self.seq, sys_share, done, arg))
        self.counts[code] += 1
        self.key += self.strides[code]
        self.busy += 1
        self.busy_sys += sys_share
        self._reschedule()

    def cut(self, arg, boundary: float, origin: float) -> float:
        self._advance()
        for vt, heap in zip(self.vts, self.heaps):   # (the burst's code's heap, in its code's clock)
            taken = _cut(heap, vt, arg, boundary, origin)
            if taken is not None:
                if taken:
                    self._reschedule()
                return taken
        return 0.0

    def _reschedule(self) -> None:
        if self.pending is not None:
            self.pending.callbacks = _NO_CALLBACKS
        if self.busy:
            rates, vts = self.table[self.key][0], self.vts
            delay, k = math.inf, 0
            for heap in self.heaps:   # the earliest finish over the codes' own clocks
                if heap:
                    d = (heap[0][0] - vts[k]) / rates[k]
                    if d < delay:
                        delay = d
                k += 1
            self._wake_in(delay)
        else:
            self.pending = None

    def _fire(self, ev: Wakeup) -> None:
        if ev is not self.pending:
            return
        self._advance()
        now = self.env._now
        rates = self.table[self.key][0]
        finished = []
        for k, heap in enumerate(self.heaps):   # (as PipelineGroup._fire: a tag within float spacing is done)
            vt = self.vts[k]
            limit = vt + _TAG_SLACK + _ULPS * (vt + rates[k] * now)
            while heap and heap[0][0] <= limit:
                entry = heappop(heap)
                self.counts[k] -= 1
                self.key -= self.strides[k]
                self.busy -= 1
                self.busy_sys -= entry[2]
                finished.append(entry)
        if not self.busy:
            self.busy_sys = 0.0
        ev.callbacks = _NO_CALLBACKS
        self.pending = None
        self._reschedule()
        for _tag, _seq, _sys, done, arg in finished:   # (PipelineGroup._fire's loop: inline there, on the hot path)
            if arg is _NO_ARG:
                done()
            else:
                done(arg)

    def reset_stats(self) -> None:
        super().reset_stats()
        self.by_code = [[0.0] * 4 for _ in self.counts]


class Cpu:
    """All cores of a server: strands numbered 0..cpu_count-1, core by core."""

    def __init__(self, env: simpy.Environment, spec: CpuSpec, codes: int = 1):
        """`codes`: how many codes with their own miss rates its strands run (MixedPipelineGroup where over 1)."""
        self.env, self.spec, self.codes = env, spec, codes
        per_group = spec.strands_per_pipeline
        self.groups: list[PipelineGroup] = []
        self.group_of_strand: list[PipelineGroup] = []
        for core in range(spec.cores):
            for p in range(spec.pipelines_per_core):
                first = core * spec.strands_per_core + p * per_group
                strands = tuple(range(first, first + per_group))
                group = (PipelineGroup(env, len(self.groups), core, strands, 1, spec) if codes == 1 else
                         MixedPipelineGroup(env, len(self.groups), core, strands, 1, spec, codes))
                self.groups.append(group)
                self.group_of_strand.extend([group] * per_group)
        self.behaviour: MemoryBehaviour | None = None
        self.stats_since = env.now

    @property
    def cpu_count(self) -> int:
        return self.spec.strands

    def set_behaviour(self, mem: MemoryBehaviour) -> None:
        """Set (or update, e.g. as memory latency changes) the stall model on every core."""
        self.behaviour = mem
        for g in self.groups:
            g.set_behaviour(mem)

    def execute(self, strand: int, instructions: float, sys_share: float, done) -> None:
        self.group_of_strand[strand].start(instructions, sys_share, done)

    def instruction_rate(self) -> float:
        """Instructions per second the whole CPU is retiring right now."""
        return sum(g.retiring() for g in self.groups if g.busy)

    def reset_stats(self) -> None:
        for g in self.groups:
            g.reset_stats()
        self.stats_since = self.env.now

    def core_utilisation(self) -> list[float]:
        """corestat's view: fraction of each core's issue capacity used (pipelines issuing)."""
        span = max(self.env.now - self.stats_since, 1e-12)
        per_core = [0.0] * self.spec.cores
        for g in self.groups:
            g._advance()
            per_core[g.core] += g.area_issue / span / self.spec.pipelines_per_core
        return per_core

    def strand_time(self) -> tuple[float, float]:
        """(busy strand-seconds, of which sys) since the last reset."""
        busy = sys = 0.0
        for g in self.groups:
            g._advance()
            busy += g.area_busy
            sys += g.area_sys
        return busy, sys

    def areas_now(self) -> tuple[float, float, float]:
        """(busy strand-seconds, of which sys, pipeline-issuing seconds) since the last reset, read-only."""
        busy = sys = issue = 0.0
        for g in self.groups:
            b, s, i = g.areas_now()
            busy, sys, issue = busy + b, sys + s, issue + i
        return busy, sys, issue

    def instructions_retired(self) -> float:
        return self.counters()[0]

    def counters(self) -> tuple[float, float]:
        """(instructions retired, the same weighted as stall_weighted_instructions) since the last reset, in one
        pass: the memory's feedback asks every 20 ms. An idle group has nothing to bring up to date."""
        retired = stalled = 0.0
        for g in self.groups:
            if g.busy:
                g._advance()
            retired += g.instructions
            stalled += g.stalled
        return retired, stalled

    def misses(self) -> float:
        """LLC misses of the instructions retired since the last reset, each code's at its own rate (several codes)."""
        return sum(misses for *_counts, misses in self.by_code())

    def by_code(self) -> list[tuple[float, float, float, float]]:
        """Each code's (strand-seconds, instructions, instructions x their stall factor min(n, mlp), misses) since
        the last reset, where the cores run several (Cpu(codes=...)): what gives each its own CPI stack."""
        sums = [[0.0] * 4 for _ in range(self.codes)]
        for g in self.groups:
            if g.busy:
                g._advance()
            for total, tally in zip(sums, g.by_code):
                for i, v in enumerate(tally):
                    total[i] += v
        return [tuple(total) for total in sums]

    def stall_weighted_instructions(self) -> float:
        """Instructions retired, each weighted by min(busy strands of its pipeline group, mlp): over the
        instructions, the factor a miss's stall had on stall_cycles (1 on an in-order or lone strand; with
        Hyper-Threading the window is split and a miss stalls longer: MemoryBehaviour)."""
        return self.counters()[1]
