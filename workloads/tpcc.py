"""A TPC-C-like OLTP workload: terminals running the five transactions against sessions.

Each user is a terminal with its own dedicated server session. A user keys, runs one
transaction, thinks, and repeats. The transaction's work comes from what it touches in the
TPC-C schema (logical reads, block changes, redo), and its CPU from the logical reads at a
fixed cost per get: the usual reading of an AWR profile, where CPU tracks
"session logical reads". A thinking user costs one timeout and no CPU.

Constants (each with its source or the single published row it was fitted to):

- LOGICAL_READS, REDO_BYTES per type: estimated from the TPC-C schema and
  transaction profiles (TPC-C spec 2.4-2.8) assuming ~3 gets per indexed row lookup
  (root, leaf, table block), 2 per insert, 1 per update of a pinned block.
- INSTRUCTIONS_PER_GET: fitted to tseries.oltp_users, 8-user row (throughput per user with
  one strand per pipeline; nothing else shares the pipeline there).
- MPKI_REF (last-level misses per 1000 instructions with 512 KB of LLC per core): fitted to
  tseries.oltp_users, 64-user row (the fall of per-user throughput when four strands share a
  pipeline). Other LLC sizes scale by the square-root rule (Hsu, Smith & Young, 2001).
- SYSCALL_SHARE: kernel share of a shadow process's instructions (SQL*Net round trips,
  semaphore post/wait, timers); fitted to the sys column of tseries.oltp_users, 64-user row.

On another core the same instructions run at that core's speed: the path length is per
instruction set (the T2 and the UltraSPARC II are both SPARC V9), the misses per instruction
follow the last-level cache per core, and cpi_issue and memory latency come from the profile.

When the scenario gives a buffer cache (database.db_cache), the data is not all cached: the
touches on the large objects miss with the probabilities of the buffer-cache model over the
TPC-C block popularity (workloads/tpcc_blocks.py, sim/db/buffer_cache.py), with the OS page
cache as a second level when the file system caches. The rest of a transaction's gets touch the
hot blocks (item, district, index branches, the latest orders), which miss too when the cache is
small (3% of them at 100 MB of 2 KB buffers on 200 warehouses, ~2 reads a transaction). A
transaction's CPU is then split into bursts around its physical reads, and the blocks it dirties
go to DBWR.

- Undo: with database.rollback_size the rollback segments are one more segment of the buffer cache
  (tpcc_blocks.undo_segment; UNDO_BYTES per type, with its sources there): undo blocks take buffers,
  are never read, and DBWR writes each once when it is evicted before its segment wraps, or by the
  checkpoint timeout when it stays cached. REDO_BYTES is not changed by it: the figures are the
  foundation's schema estimates (no source found for redo per transaction: modelling-sourcebook), and
  at ~170 B per block change they already hold the undo change vectors Oracle logs with each change
  (undo/redo per type from UNDO_BYTES: 0.51/0.35/0.78 for New-Order/Payment/Delivery).
- PATH_LENGTH[isa]: instructions per get relative to SPARC V9, by instruction set. It carries
  both the ISA (Itanium bundles padded with NOPs, Rupley et al. WWC'02; x86 CISC denser) and the
  difference between the T5220 paper's kit and the other sources' OLTP kits, which no source
  separates. ia64: fitted to itanium.tpcc, Linux row (refitted, 0.197 -> 0.147, once that row's
  24 GB buffer cache put its physical reads and their sys time on the CPUs; 0.147 -> 0.126 with the
  NURand popularity made exact and the kit's hash clusters, which moved the reads). x86_64: fitted to
  opteron.users_by_cache, 2-way 5,000 users 8 GB row (0.395 -> 0.36 at the same change; 0.36 -> 0.39,
  seeds 1-3 -1.1%, once the checkpoint timeout's writes were held for a DBWR behind on the LRU, as
  this row's is: 0.36/0.38/0.39/0.40 gave +6.6/+1.8/-1.1/-3.1%).
- WAREHOUSE_BYTES: database bytes per warehouse, estimated from the TPC-C row sizes (stock
  100k x 306 B, customer 30k x 655 B, orders and order lines, history) plus ~20% of indexes.
- CLIENT_MEMORY, CLIENT_WORKING_SET, CLIENT_SHARE: the user (client) process when users run on
  the database server (Oracle's AMD64 paper: "the database and workload users ran on the same
  machine"). Estimates: a small OCI driver process, 0.3 MB private with 64 KB touched per
  transaction, and 15% of the server's instructions to build calls and read results.

Many users cost little: a user is one generator and one session (both with __slots__-sized
state); between two transactions a user costs one timeout (think time and the next keying
time are one wait), and nothing is scanned per user.
"""

from __future__ import annotations

from dataclasses import dataclass

import bisect
from collections import deque

import numpy as np
from simpy.events import NORMAL, Event

from sim.config import Source, param
from sim.db.buffer_cache import BufferCache
from sim.db.instance import DatabaseSpec, data_device
from sim.db.layout import DatafileLayout
from sim.metrics import Level, Mean, Tally
from sim.randomness import Draws
from sim.units import format_quantity
from workloads import tpcc_blocks

TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")

# TPC-C 5.2.3 minimum mix; keying and mean think times (s) from TPC-C 5.2.5 (sum 20.99 s
# mean cycle -> at most 12.86 tpmC per warehouse with 10 terminals each).
STANDARD_MIX = {"new_order": 0.45, "payment": 0.43, "order_status": 0.04, "delivery": 0.04, "stock_level": 0.04}
STANDARD_KEYING = {"new_order": 18.0, "payment": 3.0, "order_status": 2.0, "delivery": 2.0, "stock_level": 2.0}
STANDARD_THINK = {"new_order": 12.0, "payment": 12.0, "order_status": 10.0, "delivery": 5.0, "stock_level": 5.0}

# Schema-derived work per transaction (New-Order at its mean of 10 order lines).
LOGICAL_READS = {"new_order": 104.0, "payment": 16.0, "order_status": 16.0, "delivery": 250.0, "stock_level": 650.0}
REDO_BYTES = {"new_order": 6000.0, "payment": 1200.0, "order_status": 0.0, "delivery": 15000.0, "stock_level": 0.0}

INSTRUCTIONS_PER_GET = 38_600.0   # fitted: tseries.oltp_users, 8 users
MPKI_REF = 10.2                    # fitted: tseries.oltp_users, 64 users
SYSCALL_SHARE = 0.09              # fitted: tseries.oltp_users, 64 users, sys column
_LLC_REF_PER_CORE = 512 * 1024.0  # UltraSPARC T2: 4 MB L2 over 8 cores
PATH_LENGTH = {"sparcv9": 1.0, "ia64": 0.126, "x86_64": 0.39}   # see the docstring
WAREHOUSE_BYTES = 85 * 2**20
CLIENT_MEMORY = 0.3 * 2**20
CLIENT_WORKING_SET = 64 * 1024.0
CLIENT_SHARE = 0.15


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): commits (LGWR), reads through
# the buffer cache, its datafiles and DBWR.
USES = ("redo", "buffer_cache", "datafiles", "undo")


@dataclass(frozen=True, kw_only=True)
class Params:
    users: int = param("terminals, each with its own dedicated server session", minimum=1)
    think_time: float | None = param("mean think time, exponential (omit: the TPC-C times per type)",
                                     kind="time", default=None, minimum=0.0)
    keying_time: float | None = param("keying time (omit: the TPC-C times per type)", kind="time",
                                      default=None, minimum=0.0)
    warehouses: int | None = param("warehouses (omit: users/10, the TPC-C ratio, at least 1)",
                                   default=None, minimum=1)
    mix: dict[str, float] = param("share of each transaction type, normalised to sum to 1; a type left out is not "
                                   "run (give all five to change one share)", default=dict(STANDARD_MIX))
    sessions: int | None = param("server sessions the users share through a TP monitor (omit: a dedicated server "
                                 "per user)", default=None, minimum=1)
    hash_clusters: bool = param("stock and customer in single-table hash clusters, as in Oracle's TPC-C kits: "
                                "a lookup by id reads no index leaf (workloads/tpcc_blocks.py)", default=False)
    users_on_host: bool = param("the users' client processes run on the database server (their memory and CPU "
                                "count there)", default=False)

    def check(self, src: Source) -> None:
        for k, v in self.mix.items():
            if k not in TYPES:
                raise src.at("mix").at(k).error(f"unknown transaction type; expected one of {', '.join(TYPES)}")
            if not isinstance(v, (int, float)) or v < 0:
                raise src.at("mix").at(k).bad(v, "a share >= 0")
        if sum(self.mix.values()) <= 0:
            raise src.at("mix").bad(self.mix, "shares that add up to more than 0")


def misses_per_instruction(llc_size: float, cores_per_socket: int) -> float:
    """LLC misses per instruction for this code on a cache of this size per core."""
    per_core = llc_size / cores_per_socket
    return MPKI_REF / 1000.0 * (per_core / _LLC_REF_PER_CORE) ** -0.5


def run_server_code(system) -> None:
    """The shadow processes run Oracle's server code: its LLC miss rate on this CPU."""
    cpu = system.profile.cpu
    system.set_memory_behaviour(misses_per_instruction(cpu.llc_size, cpu.cores_per_socket))


class Workload:
    kind = "steady"
    primary = "tpm"

    def __init__(self, system, params: Params):
        self.system, self.params = system, params
        self.env = system.env
        self.instance = system.instance
        # Random numbers: what a terminal does (its transactions, think times, New-Order's lines) and
        # what its transactions' I/O finds each come from the terminal's own streams, so that two
        # what-ifs run at one seed give every terminal the same sequence of work (common random
        # numbers, synchronised per terminal: a change of timing elsewhere does not reshuffle whose
        # turn a draw is). Behind a TP monitor a request is served by whichever session is free:
        # the streams are shared there, one set for the whole workload.
        self.streams = _Streams(Draws(system.rng("tpcc")), system.rng("tpcc:io"), system.rng("tpcc:dirty"))
        mix = np.array([params.mix.get(t, 0.0) for t in TYPES], dtype=float)
        self.cum_mix = np.cumsum(mix / mix.sum()).tolist()
        # a user's phases in steady state, weighted by their share of the mean cycle
        share = dict(zip(TYPES, (mix / mix.sum()).tolist()))
        self._phases = ([(share[t] * self._times(t)[0], "keying", t) for t in TYPES] +
                        [(share[t] * self._times(t)[1], "think", t) for t in TYPES])
        self.response = {t: Tally() for t in TYPES}
        self.completed = 0
        self.finished = 0        # transactions since the start (never reset): the checkpoint pace
        cpu = system.profile.cpu
        self.path_length = INSTRUCTIONS_PER_GET * PATH_LENGTH[cpu.isa]
        self.client_share = CLIENT_SHARE if params.users_on_host else 0.0
        self.client_ws = CLIENT_WORKING_SET if params.users_on_host else 0.0
        run_server_code(system)
        # The memory account: the database fills the buffer cache; every user has a dedicated server,
        # and its own process too when it runs on the server.
        self.instance.attach_database(all_cached(system.scenario.spec, params)[0])
        self.sessions = [self.instance.new_session() for _ in range(params.sessions or params.users)]
        self.pooled = params.sessions is not None
        # TP monitor: requests (transaction type, time submitted) queued for a server session (FIFO),
        # and the idle sessions' wake-ups
        self.requests: deque = deque()
        self.idle: deque = deque()
        # what a Tuxedo-like monitor shows: requests waiting for a session, how long, sessions busy
        self.queued, self.busy = Level(self.env), Level(self.env)
        self.queue_wait = Mean()
        if params.users_on_host:
            system.vm.add_processes("client", params.users, CLIENT_MEMORY, CLIENT_WORKING_SET)
        # Then the I/O: what misses the buffer cache, with what the account leaves as page cache.
        self.io = None
        if system.datafiles is not None:
            self.io = _IoPlan(system, params, self.warehouses)
            # checkpoints are the instance's (its redo logs and timeout); the workload hands over its
            # buffer cache, redo per transaction, progress and how writes become its dirtying
            self.instance.checkpoint_cached_blocks(self.io.cache, self.io.redo_per_tx, lambda: self.finished,
                                                   self.io.set_dirty)

    def population(self) -> tuple[int, float]:
        """The terminals, and the mean time each keys and thinks a transaction (the think after one, the
        keying of the next, by the mix): the closed population sim/run.py checks the response time law on."""
        return self.params.users, sum(weight for weight, _, _ in self._phases)

    @property
    def warehouses(self) -> int:
        return warehouses_of(self.params)

    def start(self) -> None:
        if self.pooled:
            # Behind a TP monitor a terminal is only its next request while it keys and thinks: a
            # scheduled event, no process (tens of thousands of them), and the server sessions run
            # the transactions, one request after another.
            for _ in range(self.params.users):
                kind, wait = self._first_transaction(self.streams.draws)
                self._submit_after(wait, kind)
            for session in self.sessions:
                self.env.process(self._server(session))
        else:
            for i, session in enumerate(self.sessions):
                self.env.process(self._terminal(session, _Streams.of_terminal(self.system, i, self.io is not None)))

    def _submit_after(self, wait: float, kind: str) -> None:
        """A terminal submits a `kind` transaction `wait` seconds from now."""
        ev = Event(self.env)
        ev._ok, ev._value = True, kind
        ev.callbacks.append(self._submit)
        self.env.schedule(ev, NORMAL, wait)

    def _submit(self, ev) -> None:
        request = (ev._value, self.env._now)
        if self.idle:
            self.idle.popleft().succeed(request)
        else:
            self.requests.append(request)
            self.queued.add(1.0)

    def _server(self, session):
        """A server session behind the TP monitor: take the oldest request, run it, reply; the
        terminal then keys and thinks before its next."""
        env, streams, requests = self.env, self.streams, self.requests
        draws = streams.draws
        while True:
            if requests:
                kind, submitted = requests.popleft()
                self.queued.add(-1.0)
            else:
                ev = Event(env)
                self.idle.append(ev)
                kind, submitted = yield ev
            self.queue_wait.add(env._now - submitted)
            self.busy.add(1.0)
            yield from self._transaction(session, kind, streams)
            self.busy.add(-1.0)
            self._done(kind, env._now - submitted)
            _, think = self._times(kind)
            kind = self._next_kind(draws)
            self._submit_after((draws.exponential(think) if think > 0.0 else 0.0) + self._times(kind)[0], kind)

    def _times(self, kind: str) -> tuple[float, float]:
        p = self.params
        return (STANDARD_KEYING[kind] if p.keying_time is None else p.keying_time,
                STANDARD_THINK[kind] if p.think_time is None else p.think_time)

    def _next_kind(self, draws: Draws) -> str:
        """The type of a terminal's next transaction, by the mix."""
        return TYPES[min(bisect.bisect_right(self.cum_mix, draws.uniform()), len(TYPES) - 1)]

    def _first_transaction(self, draws: Draws) -> tuple[str, float]:
        """A user's first transaction and the time until it, as a user seen at a random moment
        of steady state is: keying transaction k with odds mix_k x keying_k, its remaining
        keying uniform (keying times are fixed); else thinking after transaction j with odds
        mix_j x think_j, the rest of the think exponential, then keying the next. (Starting
        every user with a whole keying time would hold back every New-Order for 18 s and
        release them together: a transient, and a measured mix off the TPC-C mix.)"""
        keyings = {t: self._times(t)[0] for t in TYPES}
        if not any(keyings.values()):      # no keying: part-way through a think time
            kind = self._next_kind(draws)
            _, think = self._times(self._thinking_after(draws))
            return kind, draws.exponential(think) if think > 0.0 else 0.01 * draws.uniform()
        u = draws.uniform() * sum(w for w, _, _ in self._phases)
        for weight, phase, t in self._phases:
            if u < weight:
                break
            u -= weight
        if phase == "keying":
            return t, draws.uniform() * keyings[t]
        kind = self._next_kind(draws)
        return kind, draws.exponential(self._times(t)[1]) + keyings[kind]

    def _thinking_after(self, draws: Draws) -> str:
        """The type a user seen thinking has just run: odds mix_j x think_j (a longer think is the
        likelier to be under way at a random moment); with equal thinks, the mix's odds."""
        thinks = [(w, t) for w, phase, t in self._phases if phase == "think"]
        u = draws.uniform() * sum(w for w, _ in thinks)
        for weight, t in thinks:
            if u < weight:
                break
            u -= weight
        return t

    def _terminal(self, session, streams: "_Streams"):
        """A user with a dedicated server session: key, think, run a transaction, over and over."""
        env, draws = self.env, streams.draws
        kind, wait = self._first_transaction(draws)
        yield env.timeout(wait)
        while True:
            start = env.now
            yield from self._transaction(session, kind, streams)
            self._done(kind, env.now - start)
            # Think after this transaction, then key the next one: one wait, no event in between.
            _, think = self._times(kind)
            kind = self._next_kind(draws)
            keying, _ = self._times(kind)
            wait = (draws.exponential(think) if think > 0.0 else 0.0) + keying
            if wait > 0.0:
                yield env.timeout(wait)

    def _transaction(self, session, kind: str, streams: "_Streams | None" = None):
        """Generator: one transaction of this type on this session: CPU, the reads the buffer cache
        misses, the blocks it leaves dirty, and the commit (`streams`: its terminal's; None: the shared)."""
        streams = streams or self.streams
        if self.system.vm.overcommit() > 0.0:
            yield from session.wake(self.client_ws)
        # New-Order has 5..15 order lines, uniformly (TPC-C 2.4.1.3); work scales with them.
        scale = (5 + int(11 * streams.draws.uniform())) / 10.0 if kind == "new_order" else 1.0
        instructions = self.path_length * LOGICAL_READS[kind] * scale * (1.0 + self.client_share)
        if self.io is None:
            yield session.cpu(instructions, SYSCALL_SHARE)
        else:
            reads = self.io.reads(kind, scale, streams.io)
            piece = instructions / (len(reads) + 1)
            for os_cached, files in reads:   # (each piece of CPU ends in its read's system call: one burst)
                yield from session.read_block(os_cached, files, piece, SYSCALL_SHARE)
            yield session.cpu(piece, SYSCALL_SHARE)
            for blocks, files, checkpoint in self.io.dirtied(kind, scale, streams.dirty):
                session.dirtied(blocks, files, checkpoint)
        if REDO_BYTES[kind] > 0.0:
            yield from session.commit(REDO_BYTES[kind] * scale)

    def _done(self, kind: str, response: float) -> None:
        self.response[kind].add(response)
        self.completed += 1
        self.finished += 1

    def reset_stats(self) -> None:
        if self.io is not None:
            self.io.reset()
        for t in self.response.values():
            t.reset()
        self.completed = 0
        for stat in (self.queued, self.busy, self.queue_wait):
            stat.reset()

    def report(self, span: float) -> dict:
        """Workload figures over a measured span (seconds)."""
        per_s = self.completed / span
        return {
            "sga_mb": self.instance.sga_size(self.warehouses * WAREHOUSE_BYTES) / 2**20,
            "warehouses": self.warehouses,   # as run (params.warehouses omitted: users / 10)
            "throughput_per_s": per_s,
            "tpm": per_s * 60.0,
            "new_order_tpm": self.response["new_order"].n / span * 60.0,
            **(self.io.report(span) if self.io is not None else {}),
            **({"tp_monitor": {"sessions": len(self.sessions), "sessions_busy": self.busy.mean(),
                               "queued": self.queued.mean(), "queue_wait_ms": 1000.0 * self.queue_wait.mean,
                               "queued_at_end": len(self.requests)}} if self.pooled else {}),
            "response": {t: {"count": tl.n, "mean": tl.mean, "p50": tl.percentile(50), "p90": tl.percentile(90),
                             "p99": tl.percentile(99)} for t, tl in self.response.items() if tl.n},
        }


class _Streams:
    """The random numbers a terminal's work is drawn from: `draws` for what it does (transaction
    types, think times, New-Order's lines), `io` for what its transactions' blocks find (misses,
    page-cache hits), `dirty` for the blocks they leave dirty. How many draws the dirty blocks take
    depends on the checkpoint pace, which moves with timing: on a stream of their own they cannot
    shift a terminal's misses under a what-if that changes only timing."""

    __slots__ = ("draws", "io", "dirty")
    BLOCK = 64   # a terminal's draws a block: ~8 transactions' worth, 1 KB a terminal (4,096 would be 64 KB)

    def __init__(self, draws: Draws, io: np.random.Generator | None, dirty: np.random.Generator | None):
        self.draws, self.io, self.dirty = draws, io, dirty

    @classmethod
    def of_terminal(cls, system, index: int, with_io: bool) -> "_Streams":
        """Terminal `index`'s own streams (its I/O streams only where its transactions do I/O)."""
        return cls(Draws(system.rng("tpcc:terminal", index), cls.BLOCK),
                   system.rng("tpcc:terminal-io", index) if with_io else None,
                   system.rng("tpcc:terminal-dirty", index) if with_io else None)


class _IoPlan:
    """Which of a transaction's touches miss the buffer cache, and what it leaves dirty."""

    def __init__(self, system, params: Params, warehouses: int):
        db = system.scenario.spec.database
        mix = {t: params.mix.get(t, 0.0) for t in TYPES}
        self.vm = system.vm
        self.datafiles = system.datafiles
        os_blocks = self.vm.page_cache_size() / db.block_size if system.datafiles.path.caches else 0.0
        segs = tpcc_blocks.segments(warehouses, db.block_size, mix, LOGICAL_READS, params.hash_clusters)
        # undo: the rollback segments' blocks take buffers and leave dirty blocks, never read (tpcc_blocks.py)
        self.writers = tpcc_blocks.updates(db.block_size)
        if db.rollback_size is not None:
            segs = segs + [tpcc_blocks.undo_segment(mix, db.block_size, db.rollback_size)]
            self.writers["undo"] = tpcc_blocks.UNDO_BYTES
        self.cache = BufferCache(segs, db.db_cache / db.block_size, os_blocks, system.datafiles.page_blocks,
                                 self.vm.page_replacement)
        odds = self.cache.odds
        # the rows inserted go to the insert point of their tables: one file (their last extent)
        self.layout = DatafileLayout(db.datafiles, db.datafile_size,
                                     {**{sg.name: sg.blocks * db.block_size for sg in segs
                                         if sg.name not in tpcc_blocks.WITHIN}, "inserts": 1.0})
        self.plan = {t: [(n, odds[s].miss, odds[s].os_hit, self._files(s))
                         for s, n in tpcc_blocks.touches(t, db.block_size, LOGICAL_READS, params.hash_clusters).items()]
                     for t in TYPES}
        # dirty blocks per transaction of each type: a segment's writes shared by its updaters
        total = sum(mix.values())
        self._mix, self._block_size = {t: mix[t] / total for t in TYPES}, db.block_size
        # mean redo per transaction: how many transactions fill a redo log (Instance.checkpoint_cached_blocks)
        self.redo_per_tx = sum(mix[t] / total * REDO_BYTES[t] for t in TYPES)
        self._appended = tpcc_blocks.appended_blocks_per_tx(mix, db.block_size)
        self.set_dirty({})   # no checkpoint writes until the instance hands them over

    def _set_write_page_hit(self, checkpoint: dict[str, tuple[float, float]]) -> None:
        """The chance a DBWR write finds its page in the OS page cache, over all writes: an evicted
        block's with its segment's write_os_hit (at its eviction), a checkpointed one's with the cache's
        checkpoint_os_hit (a delay after its change); an appended block finds its page where the block
        written just before it filled the same page, and the first block of a page finds it uncached (a
        new page of a preallocated datafile, not read since the load)."""
        odds = self.cache.odds
        hits = self.cache.checkpoint_os_hit if checkpoint else {}
        segs = [seg for seg in self.writers if seg != "undo"]
        evicted = {seg: checkpoint.get(seg, (odds[seg].writes_per_tx, 0.0)) for seg in segs}
        found = sum(ev * odds[seg].write_os_hit + ck * hits.get(seg, odds[seg].write_os_hit)
                    for seg, (ev, ck) in evicted.items())
        written = sum(ev + ck for ev, ck in evicted.values()) + self._appended
        page = self.datafiles.page_blocks
        # undo blocks are filled (and evicted) in order, as appended ones: of a page's blocks all but the
        # first find the page their predecessor's write left; the first finds it as the cache model says
        if "undo" in self.writers and "undo" in odds:
            ev, ck = checkpoint.get("undo", (odds["undo"].writes_per_tx, 0.0))
            first = ev * odds["undo"].write_os_hit + ck * hits.get("undo", odds["undo"].write_os_hit)
            found += ((page - 1) * (ev + ck) + first) / page
            written += ev + ck
        found += self._appended * (page - 1) / page
        if written > 0.0:
            self.datafiles.set_write_page_hit(found / written)

    def _files(self, segment: str) -> tuple[int, int] | None:
        """The datafiles holding a segment's blocks (a segment WITHIN another: that one's)."""
        return self.layout.of(tpcc_blocks.WITHIN.get(segment, segment))

    def set_dirty(self, checkpoint: dict[str, tuple[float, float]]) -> None:
        """Blocks left for DBWR per transaction of each type, and by segment: inserts, and each
        segment's (evicted, checkpointed) writes (BufferCache.dirty_writes; a segment not in
        `checkpoint`: eviction only)."""
        mix, odds = self._mix, self.cache.odds
        self._set_write_page_hit(checkpoint)
        self.dirty = {t: tpcc_blocks.INSERTED_BYTES.get(t, 0.0) / tpcc_blocks.usable(self._block_size) for t in TYPES}
        # ... and by segment, where the datafile layout tells segments apart
        # (mean blocks, datafiles, checkpoint?): a checkpoint's writes are DBWR's checkpoint queue's
        self.dirty_parts = {t: [(self.dirty[t], self.layout.of("inserts"), False)] for t in TYPES}
        self.checkpointed = {t: 0.0 for t in TYPES}
        for seg, per in self.writers.items():
            weight = sum(mix[t] * n for t, n in per.items())
            if not weight:
                continue
            evicted, cached = checkpoint.get(seg, (odds[seg].writes_per_tx, 0.0))
            for t, n in per.items():
                self.dirty[t] += (evicted + cached) * n / weight
                self.dirty_parts[t].append((evicted * n / weight, self._files(seg), False))
                if cached > 0.0:
                    self.checkpointed[t] += cached * n / weight
                    self.dirty_parts[t].append((cached * n / weight, self._files(seg), True))

    def reads(self, kind: str, scale: float, rng: np.random.Generator) -> list[tuple[bool, tuple | None]]:
        """The physical reads of one transaction: whether the OS page cache has the block, and
        the datafiles of its segment."""
        out: list[tuple[bool, tuple | None]] = []
        for n, miss, os_hit, files in self.plan[kind]:
            touches = n * scale    # a mean (Payment's 1.6 customer blocks): its whole part, and one more by its fraction
            whole = int(touches)
            if touches > whole and rng.random() < touches - whole:
                whole += 1
            misses = int(rng.binomial(whole, miss))
            if misses:
                cached = int(rng.binomial(misses, os_hit)) if os_hit > 0.0 else 0
                out += [(True, files)] * cached + [(False, files)] * (misses - cached)
        return out

    def dirtied(self, kind: str, scale: float, rng: np.random.Generator) -> list[tuple[int, tuple | None, bool]]:
        """The blocks one transaction leaves for DBWR, with the datafiles of their segments and
        whether a checkpoint writes them (blocks that stay cached)."""
        if self.layout.uniform:
            ckpt = self.checkpointed[kind] * scale
            mean = self.dirty[kind] * scale - ckpt
            out = [(int(rng.poisson(mean)) if mean > 0.0 else 0, None, False)]
            return out + [(int(rng.poisson(ckpt)), None, True)] if ckpt > 0.0 else out
        return [(int(rng.poisson(m * scale)), files, ck) for m, files, ck in self.dirty_parts[kind] if m > 0.0]

    def reset(self) -> None:
        pass

    def report(self, span: float) -> dict:
        return {"buffer_hit_ratio": self.cache.hit_ratio(), "page_cache_mb": self.vm.page_cache_size() / 2**20,
                "memory_overcommit_mb": self.vm.overcommit() / 2**20, **self.datafiles.lock_report()}


def warehouses_of(params: Params) -> int:
    """The warehouses given, else users / 10 (TPC-C's ten terminals a warehouse), at least 1."""
    return params.warehouses or max(1, params.users // 10)


def database_segments(spec, params: Params) -> tuple[float, ...]:
    """The bytes of each stored table and index (each a tablespace of its own with database.datafile_size): the
    database on disk, what a backup of it reads, as the device holds them (check_scenario); not warehouses x
    WAREHOUSE_BYTES, the estimate the cache sizes by (170 MB of 2 warehouses are 161.8 stored in 8-KB blocks, 189.8
    in 2-KB ones), and the rollback segments' with database.rollback_size."""
    return tuple(s.blocks * spec.database.block_size for s in stored_segments(spec, params))


def stored_segments(spec, params: Params) -> list:
    """The segments the datafiles store: every table and index not held within another (tpcc_blocks.WITHIN), and
    the rollback segments with database.db_cache and database.rollback_size."""
    db = spec.database
    mix = {t: params.mix.get(t, 0.0) for t in TYPES}
    segs = tpcc_blocks.segments(warehouses_of(params), db.block_size, mix, LOGICAL_READS, params.hash_clusters)
    if db.db_cache is not None and db.rollback_size is not None:
        segs = segs + [tpcc_blocks.undo_segment(mix, db.block_size, db.rollback_size)]
    return [s for s in segs if s.name not in tpcc_blocks.WITHIN]


def database_device(spec, params: Params, profile) -> str:
    """The device the database is on, where a backup of it reads: database.data_device's."""
    return data_device(spec.database, profile.storage.device_names())


def all_cached(spec, params: Params) -> tuple[float, str]:
    """The database the buffer cache holds without database.db_cache: every warehouse."""
    w = warehouses_of(params)
    given = "params.warehouses" if params.warehouses is not None else "params.users / 10"
    each = format_quantity(WAREHOUSE_BYTES, "size")
    return w * WAREHOUSE_BYTES, f"{given}: {w} warehouse{'s' if w != 1 else ''} of {each}"


def check_scenario(spec, profile, params: Params, src: Source) -> None:
    """TPC-C terminals (standard keying and think times) come ten to a warehouse (TPC-C 4.2.2)."""
    standard = params.think_time is None and params.keying_time is None
    if standard and params.warehouses is not None and params.users > 10 * params.warehouses:
        raise src.at("params").at("users").bad(
            params.users, f"at most 10 terminals per warehouse with TPC-C keying and think times "
                          f"({10 * params.warehouses} for {params.warehouses} warehouses)")
    db = spec.database
    mix = {t: params.mix.get(t, 0.0) for t in TYPES}
    warehouses = warehouses_of(params)
    if db.db_cache is not None and db.rollback_size is not None:
        if tpcc_blocks.undo_blocks_per_tx(mix, db.block_size) <= 0.0:
            raise src.at("database").at("rollback_size").bad(
                format_quantity(db.rollback_size, "size"),
                "no database.rollback_size with a params.mix of transactions that change nothing (order_status, "
                "stock_level): no undo is written, so it would change nothing; leave it out")
    # the database must fit on the device that holds its datafiles (100,000 warehouses, 7.3 TB, ran on 1.1 TB),
    # all cached too: the cache holds a copy of what is stored there
    segs = stored_segments(spec, params)
    size, name = sum(s.blocks for s in segs) * db.block_size, data_device(db, profile.storage.device_names())
    if size > profile.storage.capacity(name):
        key = "warehouses" if params.warehouses is not None else "users"   # users: warehouses = users / 10
        where = "" if db.data_device else " (no database.data_device: the profile's first device)"
        raise src.at("params").at(key).bad(
            getattr(params, key), f"a database that fits on device {name!r}{where}: {warehouses} warehouses of "
            f"{format_quantity(db.block_size, 'size')} blocks are {format_quantity(size, 'size')}, the device holds "
            f"{format_quantity(profile.storage.capacity(name), 'size')} (set by {profile.storage.capacity_keys(name)})")
    if db.db_cache is None:
        if db.block_size != DatabaseSpec.block_size:   # all cached: the block size only shapes the cache's misses
            raise src.at("database").at("block_size").bad(
                format_quantity(db.block_size, "size"),
                "no database.block_size without database.db_cache: with no buffer cache size the data is all cached, "
                "so how rows pack into blocks changes no read or write and the setting would change nothing (give "
                "database.db_cache, or leave this key out)")
        return   # all cached: no datafiles in the model
    if db.datafile_size is not None:
        # a tablespace per table and index, plus the insert point (as _IoPlan lays them out)
        need = len(segs) + 1
        if db.datafiles < need:
            raise src.at("database").at("datafiles").bad(
                db.datafiles, f"at least {need} with datafile_size set: one tablespace per TPC-C table "
                              f"and index (and the rollback segments, with rollback_size), and one for the rows "
                              f"inserted")
