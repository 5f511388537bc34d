"""Parallel execution: the PX server pool, degree-of-parallelism policies, statement queuing,
producer/consumer server sets and granules.

Parameter defaults derive from cpu_count as the T-series paper's Table 4 shows (Oracle 11gR2):

    parallel_max_servers     = 5 x parallel_threads_per_cpu x cpu_count x concurrent_parallel_users
                               (= 10 x cpu_count: Table 4's formula; 640 with cpu_count 64), at most
                               3,600 (the parameter's range in the Oracle 11.2 Reference: 0 to 3600)
    parallel_servers_target  = 4 x cpu_count x parallel_threads_per_cpu        (Table 4)
    parallel_degree_limit    = cpu_count x parallel_threads_per_cpu           ("CPU", Table 4)
    default DOP              = parallel_threads_per_cpu x cpu_count           ("twice cpu_count")

parallel_threads_per_cpu stays 2 ("operating system-dependent, usually 2", Oracle 11.2
Reference) on both T-series machines: the paper's "default DOP is twice cpu_count" and the
T5220's default parallel_max_servers of 640 (= 10 x 64) both need 2. The T5220 table's
"Default (256)" parallel_servers_target is not 4 x 64 x 2 = 512: it is the formula of later
11.2 patch sets, parallel_threads_per_cpu x cpu_count x concurrent_parallel_users x 2 (Oracle
11.2 Reference, PARALLEL_SERVERS_TARGET) = 2 x 64 x 1 x 2. No single parallel_threads_per_cpu
makes both tables agree, so the model keeps Table 4's formula and the T5220 experiments state
the value their table states.

Mechanisms:
- The pool holds started server processes; a statement that needs more than are started has
  them spawned one at a time (11g's process spawner, PSP0, is one process).
- Statement queuing (parallel_degree_policy=auto): a statement waits, first in first out,
  while busy servers + its servers > parallel_servers_target. A statement never needs more than
  the target on its own (auto DOP is capped to it), so it never waits for itself.
- Downgrade: a statement gets at most the servers parallel_max_servers leaves free.
- Granules: a scan is cut into block ranges, GRANULES_PER_SERVER per producer, handed out
  first come first served, so a slow producer takes fewer.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Callable, Literal

import simpy

from sim.config import Source, param

# Block-range granules per producer: "roughly 13 granules per PX server" (Oracle parallel
# execution white papers, 11gR2 "Parallel Execution Fundamentals"); an estimate of the heuristic.
GRANULES_PER_SERVER = 13
# CPU to spawn one server process (fork/exec of the oracle binary, SGA attach, PGA set-up),
# mostly in the kernel. Estimate: tens of milliseconds of one T2 strand (~20 M instructions).
SPAWN_INSTRUCTIONS = 20e6
SPAWN_SYS_SHARE = 0.8
MAX_SERVERS_LIMIT = 3600   # the largest parallel_max_servers 11.2 takes (Oracle 11.2 Reference, its range of values)


@dataclass(frozen=True, kw_only=True)
class ParallelSpec:
    parallel_threads_per_cpu: int = param("parallel_threads_per_cpu", default=2, minimum=1)
    # no parameter but the defaults' factor for the memory management in use: 1 with none automatic, 2 with
    # PGA_AGGREGATE_TARGET, 4 with MEMORY_TARGET or SGA_TARGET (Oracle 11.2 Reference, PARALLEL_MAX_SERVERS); any
    # other value stands for no configuration Oracle has
    concurrent_parallel_users: Literal[1, 2, 4] = param("concurrent_parallel_users of the defaults' formulas (1: no "
                                                        "automatic memory management, 2: PGA_AGGREGATE_TARGET, 4: "
                                                        "MEMORY_TARGET or SGA_TARGET)", default=1)
    # Oracle 11.2 Reference: PARALLEL_MAX_SERVERS "Range of values: 0 to 3600"
    parallel_max_servers: int | None = param("parallel_max_servers (omit: the cpu_count default)",
                                             default=None, minimum=0, maximum=MAX_SERVERS_LIMIT)
    # Oracle 11.2 Reference: PARALLEL_SERVERS_TARGET "Range of values: 0 to PARALLEL_MAX_SERVERS"; a larger value
    # is taken as parallel_max_servers (parameters()): no statement may hold more servers than that anyway
    parallel_servers_target: int | None = param("parallel_servers_target (omit: the cpu_count default; above "
                                                "parallel_max_servers, as given or derived, it acts as "
                                                "parallel_max_servers)", default=None, minimum=0)
    parallel_degree_policy: Literal["manual", "limited", "auto"] = param("parallel_degree_policy",
                                                                         default="manual")
    parallel_degree_limit: int | None = param("parallel_degree_limit (omit: CPU)", default=None, minimum=1)
    parallel_min_time_threshold: float = param("parallel_min_time_threshold: auto DOP leaves shorter "
                                               "statements serial and aims at about this long a run per server",
                                               kind="time", default="10 s", positive=True)
    # Oracle 11.2 Reference: PARALLEL_MIN_SERVERS "Range of values: 0 to value of PARALLEL_MAX_SERVERS" (ORA-12851
    # refuses a larger one; check() where parallel_max_servers is given, the pool clamps to a derived one)
    parallel_min_servers: int = param("parallel_min_servers: started with the instance (at most parallel_max_servers: "
                                      "above a derived one, that many are started)", default=0, minimum=0,
                                      maximum=MAX_SERVERS_LIMIT)


def parameters(spec: ParallelSpec, cpu_count: int) -> dict[str, int]:
    """The instance's parallel parameters: given values, or their cpu_count defaults."""
    t = spec.parallel_threads_per_cpu
    pms = spec.parallel_max_servers if spec.parallel_max_servers is not None else \
        min(MAX_SERVERS_LIMIT, 5 * t * cpu_count * spec.concurrent_parallel_users)
    pst = spec.parallel_servers_target if spec.parallel_servers_target is not None else 4 * cpu_count * t
    return {
        "cpu_count": cpu_count,
        "parallel_threads_per_cpu": t,
        "parallel_max_servers": pms,
        "parallel_servers_target": min(pst, pms),
        "parallel_degree_limit": spec.parallel_degree_limit or cpu_count * t,
        "default_dop": cpu_count * t,
    }


def check(spec: ParallelSpec, src: Source) -> None:
    if spec.parallel_min_servers and spec.parallel_max_servers is not None \
            and spec.parallel_min_servers > spec.parallel_max_servers:
        raise src.at("parallel_min_servers").bad(spec.parallel_min_servers,
                                                 f"at most parallel_max_servers ({spec.parallel_max_servers})")


class PxPool:
    """The instance's parallel execution servers."""

    def __init__(self, env: simpy.Environment, dispatcher, spec: ParallelSpec, cpu_count: int):
        self.env, self.dispatcher, self.spec = env, dispatcher, spec
        self.params = parameters(spec, cpu_count)
        self.started = min(spec.parallel_min_servers, self.params["parallel_max_servers"])
        self.busy = 0
        self.admitted = 0   # servers of queued statements let in by a release, not yet taken (busy) by them
        self.spawning = 0   # servers being spawned for statements that hold them (busy, not yet started)
        self.queue: deque[tuple[int, simpy.Event]] = deque()
        self.spawner = simpy.Resource(env, 1)   # PSP0
        self.statements = self.queued = self.downgraded = 0
        self.queue_time = 0.0
        self.peak_busy = 0

    # ----------------------------------------------------------- degree of parallelism

    def dop(self, sets: int, serial_estimate: float, fixed: int | None = None) -> int:
        """The degree a statement asks for under the instance's policy.

        manual: the object's fixed degree, else the default DOP. auto (and limited without a
        fixed degree): serial below parallel_min_time_threshold, else enough servers for each to
        run about one threshold of the optimizer's serial estimate, within parallel_degree_limit
        and within what parallel_servers_target lets one statement hold."""
        p, policy = self.params, self.spec.parallel_degree_policy
        if policy == "manual" or (policy == "limited" and fixed is not None):
            return max(1, fixed if fixed is not None else p["default_dop"])
        if serial_estimate < self.spec.parallel_min_time_threshold:
            return 1
        dop = math.ceil(serial_estimate / self.spec.parallel_min_time_threshold)
        dop = min(dop, p["parallel_degree_limit"])
        return max(1, min(dop, p["parallel_servers_target"] // sets or 1))

    # ----------------------------------------------------------- servers

    def acquire(self, dop: int, sets: int, granted_now: Callable[[int], None] | None = None):
        """Generator: wait (queuing) for servers for `sets` sets of `dop`; returns the DOP granted
        (downgraded if parallel_max_servers leaves fewer free; 1 means serial, no servers).
        `granted_now(dop)` learns it as soon as it is decided, before servers are spawned for it."""
        self.statements += 1
        if dop <= 1:
            return 1
        want = dop * sets
        if self.spec.parallel_degree_policy == "auto":
            target = self.params["parallel_servers_target"]
            if self.queue or self.busy + self.admitted + want > target:
                ev = simpy.Event(self.env)
                self.queue.append((want, ev))
                self.queued += 1
                t0 = self.env.now
                yield ev
                self.queue_time += self.env.now - t0
                self.admitted -= want
        free = self.params["parallel_max_servers"] - self.busy - self.admitted
        granted = min(dop, free // sets)
        if granted < dop:
            self.downgraded += 1
        if granted_now is not None:
            granted_now(max(1, granted))
        if granted <= 1:
            return 1
        self.busy += granted * sets
        self.peak_busy = max(self.peak_busy, self.busy)
        # servers neither started nor being spawned for a statement that started before this one
        missing = self.busy - self.started - self.spawning
        if missing > 0:
            self.spawning += missing
            for _ in range(missing):
                with self.spawner.request() as req:
                    yield req
                    yield self.dispatcher.run(SPAWN_INSTRUCTIONS, SPAWN_SYS_SHARE)
                self.started += 1
                self.spawning -= 1
        return granted

    def release(self, dop: int, sets: int) -> None:
        if dop <= 1:
            return
        self.busy -= dop * sets
        target = self.params["parallel_servers_target"]
        # let statements in first come first served while they fit; the ones let in take their
        # servers only when they resume, so count them (admitted) against the target meanwhile
        while self.queue and self.busy + self.admitted + self.queue[0][0] <= target:
            want, ev = self.queue.popleft()
            self.admitted += want
            ev.succeed()

    def report(self) -> dict:
        return {**self.params, "px_statements": self.statements, "px_queued": self.queued,
                "px_downgraded": self.downgraded, "px_queue_time_s": self.queue_time,
                "px_servers_started": self.started, "px_peak_busy": self.peak_busy,
                # (held by statements, not yet started: a job cut at run.max_time while PSP0 spawns them)
                "px_servers_spawning": self.spawning}


def granules(size: float, producers: int, block: float) -> list[tuple[float, float]]:
    """Block-range granules (offset, bytes) covering `size` bytes, GRANULES_PER_SERVER per producer: whole blocks,
    a last part block read as a block (as one under a block is)."""
    blocks = max(1, math.ceil(size / block))
    n = max(1, min(blocks, GRANULES_PER_SERVER * producers))
    edges = [round(i * blocks / n) for i in range(n + 1)]
    return [(a * block, (b - a) * block) for a, b in zip(edges, edges[1:]) if b > a]


class PxStatement:
    """One parallel statement: a producer set scans granules of a segment and passes the rows
    (as MB-sized table-queue work items) to a consumer set; each consumer then runs `finish`.

    A serial statement (DOP 1) is one process doing both halves in turn. Rows go from producers to
    consumers through one shared table queue: range or hash distribution spreads each
    granule's rows over all consumers, so in aggregate every consumer draws from the same
    stream. The queue holds two messages per consumer (bounded table-queue buffers), so a
    slow consumer set holds the producers back. A `device` of None: the buffer cache holds the
    segment, so the producers read no block from storage (In-Memory PX) and pay the CPU alone.
    """

    def __init__(self, instance, *, dop: int, device, segment_offset: float, segment_bytes: float,
                 read_size: float, read_event: str, message_bytes: float,
                 produce_instructions_per_mb: float, consume, finish=None, sys_share: float = 0.0):
        self.instance, self.env = instance, instance.env
        self.dop, self.device = dop, device
        self.offset, self.size = segment_offset, segment_bytes
        self.read_size, self.read_event = read_size, read_event
        self.message_bytes = message_bytes
        self.produce_ipm = produce_instructions_per_mb
        self.consume, self.finish, self.sys_share = consume, finish, sys_share
        self.scanned = 0.0
        self.consumed = 0.0

    def run(self):
        """Generator: the whole statement, from the first granule to the last consumer's finish."""
        env = self.env
        grans = deque(granules(self.size, self.dop, self.instance.spec.block_size))
        if self.dop == 1:
            # serial: one process processes what it read before reading on (a producer and a consumer
            # overlapped the scan with the writes: more DB time than elapsed time)
            session = self.instance.new_session()
            yield from self._producer(session, grans, lambda n: self._take(session, n))
            if self.finish is not None:
                yield from self.finish(session, 0, self.consumed)
            return
        tq = simpy.Store(env, capacity=2 * self.dop)
        def put(nbytes):
            yield tq.put(nbytes)
        producers = [env.process(self._producer(self.instance.new_session(), grans, put)) for _ in range(self.dop)]
        consumers = [env.process(self._consumer(self.instance.new_session(), tq, i)) for i in range(self.dop)]
        yield simpy.AllOf(env, producers)
        for _ in range(self.dop):
            yield tq.put(None)
        yield simpy.AllOf(env, consumers)

    def _take(self, session, nbytes: float):
        """Generator: the serial process consumes what it has just read."""
        yield from self.consume(session, nbytes)
        self.consumed += nbytes

    def _producer(self, session, grans: deque, hand_on):
        """`hand_on(bytes)`: a generator that puts them on the table queue, or (serial) consumes them."""
        mb = 1024.0 * 1024.0
        while grans:
            offset, nbytes = grans.popleft()
            pending = 0.0
            pos, end = offset, offset + nbytes
            while pos < end:
                n = min(self.read_size, end - pos)
                if self.device is not None:   # (None: the buffer cache holds the segment, no physical read)
                    yield from session.io(self.device, "read", n, self.offset + pos, self.read_event)
                pos += n
                pending += n
                if pending >= self.message_bytes or pos >= end:
                    yield session.cpu(self.produce_ipm * pending / mb, self.sys_share)
                    self.scanned += pending
                    yield from hand_on(pending)
                    pending = 0.0

    def _consumer(self, session, tq: simpy.Store, index: int):
        got = 0.0
        while True:
            item = yield tq.get()
            if item is None:
                break
            yield from self.consume(session, item)
            got += item
            self.consumed += item
        if self.finish is not None:
            yield from self.finish(session, index, got)
