"""The OS dispatcher: which process runs on which strand, and who waits in the run queue.

Runnable processes go to an idle strand, spreading across cores first (the least busy
core, then its least busy pipeline group), as the Solaris and Linux schedulers do on CMT
and SMT chips, and across sockets among cores equally busy (a chip's first core, then the
next chip's: both schedulers balance load over chips, Solaris by its locality groups). With every strand busy they wait in a FIFO run queue (vmstat's `r`). A
burst runs at most one quantum at a time; when its quantum ends and others are waiting it
goes to the back of the queue (time slicing). While nobody waits, a long burst is not cut into
quanta (an event each): it runs whole, and is cut back to its present quantum's end the moment a
burst has to wait. CPU time is tagged usr or sys by the share of
the burst spent in the kernel.
"""

from __future__ import annotations

from collections import deque

import simpy
from simpy.events import Event

from sim.hardware.cpu import Cpu


class _Burst:
    """A CPU burst in progress; run() fills it in (no __init__: one Python call less per burst)
    and _start() sets its strand and start time. on_cpu counts its time on strands, not in the run queue.
    whole: it runs past a slice's end (nobody was waiting), from `origin`, its group's virtual time at its start."""

    __slots__ = ("remaining", "sys_share", "code", "event", "strand", "started", "on_cpu", "whole", "origin")


class Dispatcher:
    def __init__(self, env: simpy.Environment, cpu: Cpu, quantum: float = 0.010):
        self.env, self.cpu, self.quantum = env, cpu, quantum
        spec = cpu.spec
        # Idle strands per pipeline group, and busy-strand counts per core and group.
        self._idle: list[list[int]] = [list(reversed(g.strands)) for g in cpu.groups]
        self._core_busy = [0] * spec.cores
        self._group_busy = [0] * len(cpu.groups)
        self._groups_of_core = [[g.index for g in cpu.groups if g.core == c] for c in range(spec.cores)]
        # Cores bucketed by busy strands, so that "least busy core" costs O(strands per core); a bucket holds
        # places, which number the cores socket by socket in turn (place 1 is the second socket's first core),
        # so that the lowest place of equals spreads the load over the sockets.
        sockets, per_socket = spec.sockets, spec.cores // spec.sockets
        self._core_of_place = [(p % sockets) * per_socket + p // sockets for p in range(spec.cores)]
        self._place_of_core = [0] * spec.cores
        for p, c in enumerate(self._core_of_place):
            self._place_of_core[c] = p
        self._by_busy: list[set[int]] = [set() for _ in range(spec.strands_per_core + 1)]
        self._by_busy[0].update(range(spec.cores))
        self.runq: deque[_Burst] = deque()
        self._on_strand: list[_Burst | None] = [None] * spec.strands
        # bursts running whole, cut to a slice when one has to wait: a dict, so that they are cut in the order they
        # started (a set's order is their addresses': the cuts' wake-ups, and so the results, varied run to run)
        self._whole: dict[_Burst, None] = {}
        self.busy_strands = 0
        # Time-weighted statistics (reset after warm-up).
        self._t_last = env.now
        self.area_runq = 0.0
        self.strand_busy_time = [0.0] * spec.strands
        self.involuntary_switches = 0
        self.stats_since = env.now
        self._slice_cache = 0.0
        self._slice_rates: tuple | None = None   # the rates _slice_cache was counted at
        self._cpu_count = cpu.cpu_count
        self._group_of_strand = cpu.group_of_strand
        self._groups = cpu.groups
        self._on_slice_done = self._slice_done   # bound once: passed with every slice

    # ------------------------------------------------------------ public API

    def run(self, instructions: float, sys_share: float = 0.0, code: int = 0) -> simpy.Event:
        """An event that fires when `instructions` have executed on some strand; its value is the seconds
        they spent on strands (without the run queue's wait). `code`: whose code runs them, where the cores tell
        several apart (a batch job beside a workload: Cpu's codes); the OS's and background processes' are 0's."""
        ev = Event(self.env)
        if instructions <= 0.0:
            ev.succeed(0.0)
            return ev
        burst = _Burst()
        burst.remaining, burst.sys_share, burst.code, burst.event = float(instructions), sys_share, code, ev
        burst.on_cpu = 0.0
        burst.whole = False
        if self.busy_strands < self._cpu_count:
            self._start(burst)
        else:
            if self._whole:
                self._cut_whole()
            now = self.env._now   # _account(), inlined: every burst queues on a saturated CPU
            self.area_runq += (now - self._t_last) * len(self.runq)
            self._t_last = now
            self.runq.append(burst)
        return ev

    def run_queue_length(self) -> int:
        return len(self.runq)

    # ------------------------------------------------------------ placement

    def _slice(self) -> float:
        """Instructions a strand retires in one quantum at the cores' present rates with every strand of its
        pipeline busy: the length of a time slice. A slice ends in a switch only with bursts waiting, and then
        every strand is busy (sized for a strand alone, it lasted 1.4-1.7 quanta on CMT and Hyper-Threading
        cores; the rates change with memory latency and miss rate: a slice counted once, at the first rate,
        lasted longer in time as the strands slowed)."""
        rates = self._groups[0].rates
        if rates is not self._slice_rates:
            self._slice_rates = rates
            self._slice_cache = rates[-1] * self.quantum
        return self._slice_cache

    def _slice_of(self, code: int) -> float:
        """_slice() for a burst of code `code`: a quantum at its own code's rate, where the cores tell several apart
        (one that misses less retires more in a quantum: sized at code 0's rate, an RMAN compressor's slice lasted
        r0/r1 of a quantum, 0.54 on an UltraSPARC II, and a backup beside 64 users took 129 s there, not 117)."""
        return self._slice() if not code else self._groups[0].full_rate(code) * self.quantum

    def _start(self, burst: _Burst) -> None:
        """Put a burst on an idle strand: the least busy core (the lowest place of equals: socket by
        socket in turn), then its least busy pipeline group. Called only while a strand is idle."""
        now = self.env._now
        # No _account() here: the run queue's length changes only in run() and _slice_done(), which
        # account for it first; a burst starts either from run() with the queue empty (a strand is idle)
        # or from _slice_done() at the instant it accounted, so the area would grow by exactly 0.
        by_busy, core_busy = self._by_busy, self._core_busy
        for places in by_busy:
            if places:
                place = min(places)
                break
        core = self._core_of_place[place]
        groups = self._groups_of_core[core]
        gi = groups[0]
        group_busy = self._group_busy
        if len(groups) > 1:
            for g in groups:
                if group_busy[g] < group_busy[gi]:
                    gi = g
        strand = self._idle[gi].pop()
        n = core_busy[core]
        by_busy[n].discard(place)
        core_busy[core] = n + 1
        by_busy[n + 1].add(place)
        group_busy[gi] += 1
        self.busy_strands += 1
        burst.strand = strand
        burst.started = now
        self._on_strand[strand] = burst
        run = burst.remaining
        if burst.code:
            length = self._slice_of(burst.code)
        else:
            length = self._slice_cache if self._groups[0].rates is self._slice_rates else self._slice()
        group = self._groups[gi]
        if run > length and self.runq:
            run = length
        burst.remaining -= run
        group.start(run, burst.sys_share, self._on_slice_done, burst, burst.code)
        if run > length:
            self._run_whole(burst, group)

    def _run_whole(self, burst: _Burst, group) -> None:
        """A burst longer than a slice with nobody waiting runs to its end in one go (a slice at a time it cost
        an event a quantum: a 17-hour load had 6 million): if a burst comes to wait before it ends, _cut_whole
        ends it at its slice's end, where slicing would have."""
        burst.whole = True
        burst.origin = group.clock(burst.code)
        self._whole[burst] = None

    def _cut_whole(self) -> None:
        """A burst is about to wait: every burst running whole ends at the end of its present slice instead (the
        quantum's multiple of instructions since its start), and goes to the back of the queue then."""
        length = self._slice()
        group_of = self._group_of_strand
        for burst in self._whole:
            burst.remaining += group_of[burst.strand].cut(burst, self._slice_of(burst.code) if burst.code else length,
                                                          burst.origin)
            burst.whole = False
        self._whole.clear()

    def _slice_done(self, burst: _Burst) -> None:
        strand = burst.strand
        now = self.env._now
        ran = now - burst.started
        self.strand_busy_time[strand] += ran
        burst.on_cpu += ran
        if burst.whole:
            burst.whole = False
            del self._whole[burst]
        runq = self.runq
        group = self._group_of_strand[strand]
        if burst.remaining > 0.0 and not runq:
            # A slice cut short for a waiter that has since found a strand: keep this one and run the rest whole.
            burst.started = now
            run, burst.remaining = burst.remaining, 0.0
            group.start(run, burst.sys_share, self._on_slice_done, burst, burst.code)
            self._run_whole(burst, group)
            return
        self.area_runq += (now - self._t_last) * len(runq)   # _account(), inlined
        self._t_last = now
        # release the strand
        core, gi = group.core, group.index
        place = self._place_of_core[core]
        by_busy, core_busy = self._by_busy, self._core_busy
        n = core_busy[core]
        by_busy[n].discard(place)
        core_busy[core] = n - 1
        by_busy[n - 1].add(place)
        self._group_busy[gi] -= 1
        self._idle[gi].append(strand)
        self._on_strand[strand] = None
        self.busy_strands -= 1
        if burst.remaining > 0.0:
            self.involuntary_switches += 1
            runq.append(burst)
            if runq:
                self._start(runq.popleft())
            return
        if runq:
            self._start(runq.popleft())
        # The burst is done: its waiter resumes now, from here, as the event loop would resume it
        # a moment later at this same instant (one event fewer per burst; the strand is already
        # someone else's if a burst was waiting for one).
        ev = burst.event
        ev._ok = True
        ev._value = burst.on_cpu
        callbacks, ev.callbacks = ev.callbacks, None
        for callback in callbacks:
            callback(ev)

    # ------------------------------------------------------------ statistics

    def _account(self) -> None:
        now = self.env.now
        self.area_runq += (now - self._t_last) * len(self.runq)
        self._t_last = now

    def reset_stats(self) -> None:
        self._account()
        self.area_runq = 0.0
        # a burst in flight adds its whole time on the strand when it ends: start its strand below zero by the
        # part it ran before now
        now = self.env.now
        self.strand_busy_time = [0.0 if b is None else b.started - now for b in self._on_strand]
        self.involuntary_switches = 0
        self.stats_since = self.env.now
        self.cpu.reset_stats()

    def run_queue_area_now(self) -> float:
        """Runnable-not-running process-seconds since the last reset, read-only."""
        return self.area_runq + (self.env.now - self._t_last) * len(self.runq)

    def mean_run_queue(self) -> float:
        self._account()
        return self.area_runq / max(self.env.now - self.stats_since, 1e-12)

    def strand_utilisation(self) -> list[float]:
        """mpstat's view: fraction of time each strand had a process on it (bursts in flight counted up
        to now)."""
        now = self.env.now
        span = max(now - self.stats_since, 1e-12)
        return [min(1.0, (t if b is None else t + now - b.started) / span)
                for t, b in zip(self.strand_busy_time, self._on_strand)]
