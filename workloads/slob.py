"""SLOB: sessions doing random single-block reads over a schema far larger than the SGA.

Each session loops over random blocks of its schema with no think time. With
read_path 'sga' every block goes through the buffer cache (db file sequential read); access
is uniform, so the LRU hit ratio is cache/schema (exact for uniform independent references):
with SLOB's physical-I/O set-up, a schema far larger than database.db_cache, essentially
every read is physical; without database.db_cache the schema is all cached, as the setting
says for every workload (SLOB's LIO test: reads at CPU speed with no I/O). With read_path
'direct' (SLOB's full-scan trick: serial direct path reads of single blocks) blocks go to the
PGA with asynchronous I/O slots and no shared-cache work.
UPDATE_PCT of the operations modify the block they read (always through the SGA: direct
path never updates) and commit (LGWR, log file sync). A changed buffer is written by DBWR
once it leaves the cache (sim/db/dbwr.py, to the datafiles' device, which must hold the schema), so an
update hands DBWR a dirty buffer unless it finds its buffer dirty already (updated since it
was read in: see dirtying_share); a read that needs a free buffer waits for DBWR when it is
behind (free buffer waits). A cache that holds the schema has no DBWR here, as for tpcc.
Throughput counts operations (logical reads), IOPS the physical ones.

What a read costs comes from sim/db/physical_io.py; the workload supplies instructions:

- SQL_INSTRUCTIONS (the SQL's own work per block plus the read system call and the kernel
  I/O path, the same on every path): fitted to haswell.slob_sga_vs_pga, direct-path row
  (IOPS per DB CPU second).
- CACHE_INSTRUCTIONS (SGA path only: buffer header set-up, hash-chain insert and removal,
  working-set upkeep, beyond the latch gets in sim/db/latches.py): fitted to
  haswell.slob_sga_vs_pga, SGA row (IOPS per DB CPU second).
- UPDATE_INSTRUCTIONS and UPDATE_REDO (change vector, undo, redo of one row update):
  estimates (a single-row update generates about 0.5-1 KB of redo in AWR profiles).
- SYS_SHARE 0.3: kernel share of a SLOB session's CPU (pread/io_submit, block layer, HBA
  driver, completion interrupt): estimate; no published usr/sys split.
- Memory behaviour: the Oracle-code LLC miss rate of workloads/tpcc.py (fitted there, on
  the T5220) with its square-root rule for the LLC per core: the same server code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from sim.config import Source, param
from sim.db.latches import (CBC_INSTRUCTIONS, CYCLES_PER_SPIN, LINES_PER_GET, LRU_INSTRUCTIONS, SPIN_COUNT,
                            LatchFamily, cbc_children, line_transfer, lru_children)
from sim.db.instance import data_device as instance_data_device
from sim.db.physical_io import AsyncReader, ReadCosts, ReadPaths
from workloads.batch import check_fits
from workloads.tpcc import run_server_code

SQL_INSTRUCTIONS = 55_500.0       # fitted: haswell.slob_sga_vs_pga, direct-path row
CACHE_INSTRUCTIONS = 28_800.0     # fitted: haswell.slob_sga_vs_pga, SGA row
UPDATE_INSTRUCTIONS = 30_000.0    # estimate
UPDATE_REDO = 700.0               # bytes, estimate
SYS_SHARE = 0.3                   # estimate
ASYNC_IO_INSTRUCTIONS = 15_000.0  # estimate: io_submit + io_getevents + block layer per 8 KB read


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): UPDATE_PCT commits; read_path
# sga reads through the buffer cache (its own read path, not through the datafiles).
USES = ("redo", "buffer_cache", "cpu_count")
# Why the datafile settings are refused (sim/scenario.py): the reads do not go through them, and DBWR, which
# writes what updates change, runs with its defaults.
WHY_NOT = {"datafiles": "reads its schema on a path of its own, not through datafiles (DBWR writes the blocks "
                        "its updates change with its default settings)"}


def idle(params) -> dict[str, str]:
    """The parts of USES these parameters leave idle, each with the parameter that says so."""
    out = {}
    if params.update_pct == 0:
        out["redo"] = "update_pct: 0 (no operation updates a block, so none commits)"
    if params.read_path == "direct":
        out["buffer_cache"] = "read_path: direct (blocks are read into the PGA, not through the buffer cache)"
    return out


@dataclass(frozen=True, kw_only=True)
class Params:
    sessions: int = param("SLOB sessions (dedicated server processes), no think time", minimum=1)
    schema_size: float = param("size of the schema the sessions read", kind="size", default="1 TB", positive=True)
    read_path: Literal["sga", "direct"] = param("through the buffer cache, or direct path into the PGA",
                                                default="sga")
    update_pct: float = param("UPDATE_PCT: share of operations that update the block read", default=0.0,
                              minimum=0.0, maximum=100.0)
    direct_io_slots: int = param("asynchronous I/O slots per session on the direct path (Oracle default 2)",
                                 default=2, minimum=1)
    device: str | None = param("storage device holding the schema (omit: the first flash array, else the "
                               "first device)", default=None)

    def check(self, src: Source) -> None:
        if self.read_path == "direct" and self.update_pct > 0:
            raise src.at("update_pct").bad(self.update_pct, "0 with read_path 'direct': direct path never "
                                                            "updates (use read_path 'sga')")


def data_device(profile, name: str | None) -> str:
    if name is not None:
        return name
    return next(iter(profile.storage.flash_arrays), None) or profile.storage.device_names()[0]


def check_data_fits(spec, profile, device: str | None, size: float, key: str, src: Source) -> None:
    """The schema on its device (data_device: the default one if not given) must fit there."""
    check_fits(spec, profile, src, key, size, data_device(profile, device))


def check_scenario(spec, profile, params: Params, src: Source) -> None:
    names = profile.storage.device_names()
    if params.device is not None and params.device not in names:
        raise src.at("params").at("device").bad(params.device, "one of the profile's devices: " + ", ".join(names))
    db = spec.database
    if params.update_pct > 0 and db.db_cache is not None:   # DBWR writes the changed blocks to the datafiles' device
        schema, files = data_device(profile, params.device), instance_data_device(db, names)
        if files != schema:
            raise src.at("params").at("device").bad(
                schema, f"the datafiles' device, {files} (the profile's first): with update_pct and a "
                f"database.db_cache, DBWR writes the blocks updates change there (give params.device: {files}, "
                f"or update_pct: 0)")
    check_data_fits(spec, profile, params.device, params.schema_size, "schema_size", src)
    if params.read_path == "sga" and params.direct_io_slots != Params.direct_io_slots:   # and nothing would use it
        raise src.at("params").at("direct_io_slots").bad(
            params.direct_io_slots, "no direct_io_slots with read_path 'sga': reads through the buffer cache are "
            "synchronous, one at a time per session (give read_path: direct, or leave direct_io_slots out)")


def database_segments(spec, params: Params) -> tuple[float, ...]:
    """Its tables and indexes as a backup reads them: the schema, one table."""
    return (params.schema_size,)


def database_device(spec, params: Params, profile) -> str:
    """The device the schema is on, where a backup of it reads: params.device's."""
    return data_device(profile, params.device)


def all_cached(spec, params: Params) -> tuple[float, str]:
    """What the buffer cache holds without database.db_cache: the schema on the SGA path, nothing direct."""
    if params.read_path == "direct":
        return 0.0, "params.read_path: direct (no block is read into the buffer cache)"
    return params.schema_size, "params.schema_size"


def build_read_paths(system, device_name: str, schema_size: float, rng_name: str) -> ReadPaths:
    """The instance's read paths for a schema on a device, with latches sized as Oracle sizes them."""
    profile, spec = system.profile, system.scenario.spec.database
    cpu, mem = profile.cpu, profile.memory
    block = spec.block_size
    cache = spec.db_cache if spec.db_cache is not None else schema_size   # omitted: the schema is all cached
    hit = min(1.0, cache / schema_size) if schema_size > 0 else 1.0
    buffers = max(cache / block, 1.0)
    rate = system.single_strand_rate()
    xfer = LINES_PER_GET * line_transfer(cpu.sockets, mem.remote_latency, mem.latency)
    spin = SPIN_COUNT * CYCLES_PER_SPIN / cpu.clock
    cbc = LatchFamily(system.env, "cache buffers chains", cbc_children(buffers), CBC_INSTRUCTIONS / rate + xfer,
                      spin, system.rng(f"{rng_name}:cbc"))
    lru = LatchFamily(system.env, "cache buffers lru chain", lru_children(system.instance.cpu_count),
                      LRU_INSTRUCTIONS / rate + xfer, spin, system.rng(f"{rng_name}:lru"))
    costs = ReadCosts(sql=SQL_INSTRUCTIONS, cache=CACHE_INSTRUCTIONS, sys_share=SYS_SHARE)
    return ReadPaths(system.instance, system.devices[device_name], costs, block, rate, cbc, lru, hit,
                     system.rng(f"{rng_name}:hits"))


def io_report(system, paths: ReadPaths, reads: int, span: float, wait_event: str, tenant: str | None = None) -> dict:
    """IOPS and the CPU cost of an I/O as AWR and Closson's tables state them (`tenant`: whose sessions' CPU,
    where a background job shares the instance; None: one workload's)."""
    busy = system.instance.db_cpu(tenant)   # DB CPU: thread (strand) time, as the OS accounts it
    iops = reads / span
    ev = system.instance.waits.events.get(wait_event)
    out = {
        "iops": iops,
        "db_cpu_per_s": busy / span,
        "iops_per_db_cpu": reads / busy if busy > 0 else float("nan"),
        "iops_per_core": iops / system.profile.cpu.cores,
        # (reads but no wait: each had completed when its session took it, a wait of 0 each; no read: undefined)
        "avg_read_wait_ms": 1000.0 * ev.time / ev.waits if ev and ev.waits else 0.0 if reads > 0 else float("nan"),
        "read_wait_event": wait_event,
    }
    for latch in (paths.cbc, paths.lru):
        st = latch.stats
        out[f"latch.{latch.name}.gets_per_s"] = st.gets / span
        out[f"latch.{latch.name}.miss_pct"] = 100.0 * st.misses / st.gets if st.gets else 0.0
        out[f"latch.{latch.name}.sleeps"] = st.sleeps
    return out


def dirtying_share(hit: float, update: float) -> float:
    """The share of updates that find their buffer clean, so that DBWR has one more buffer to write.
    Uniform references under LRU: a block is read in by a miss and then hit a geometric number of
    times (mean hit / (1 - hit)); it is written once if any of those accesses, each an update with
    odds `update`, changed it. Writes per access (1 - hit) update / (1 - hit + hit update), so per
    update (1 - hit) / (1 - hit (1 - update)): 1 when nothing is cached, 0 when all is."""
    if update <= 0.0:
        return 0.0
    return (1.0 - hit) / (1.0 - hit * (1.0 - update)) if hit < 1.0 else 0.0


class Workload:
    kind = "steady"
    primary = "iops"

    def __init__(self, system, params: Params):
        self.system, self.params = system, params
        self.env = system.env
        self.instance = system.instance
        self.tenant = system.instance.tenant   # (whose sessions' CPU is its DB CPU, beside a background job)
        run_server_code(system)
        self.device = data_device(system.profile, params.device)
        self.paths = build_read_paths(system, self.device, params.schema_size, "slob")
        if params.read_path == "sga":   # the buffer cache fills with the schema (all of it without db_cache)
            self.instance.attach_database(all_cached(system.scenario.spec, params)[0])
        self.rng = system.rng("slob")
        self.completed = 0    # operations (logical reads): SLOB's throughput, its LIOPS when the schema is cached
        self.physical = 0     # those read from storage: its IOPS

    def start(self) -> None:
        for _ in range(self.params.sessions):
            session = self.instance.new_session()
            rng = np.random.default_rng(self.rng.integers(2**63))
            loop = self._direct if self.params.read_path == "direct" else self._buffered
            self.env.process(loop(session, rng))

    def _buffered(self, session, rng):
        paths, p = self.paths, self.params
        yield self.env.timeout(rng.uniform(0.0, 1e-3))   # sessions log on over a millisecond
        update = p.update_pct / 100.0
        dirtying = dirtying_share(paths.hit_ratio, update)
        while True:
            is_update = update > 0.0 and rng.random() < update
            physical = yield from paths.sga_read(session, UPDATE_INSTRUCTIONS if is_update else 0.0)
            self.completed += 1       # a SLOB operation: a logical read, from the cache or from storage
            if physical:
                self.physical += 1
            if is_update:
                if rng.random() < dirtying:
                    session.dirtied(1)
                yield from session.commit(UPDATE_REDO)

    def _direct(self, session, rng):
        yield self.env.timeout(rng.uniform(0.0, 1e-3))
        reader = AsyncReader(self.paths, session, self.params.direct_io_slots, "direct path read",
                             SQL_INSTRUCTIONS)
        while True:
            yield from reader.next_block()
            self.completed += 1
            self.physical += 1        # a direct path read is always one from storage

    def reset_stats(self) -> None:
        self.completed = self.physical = 0
        for latch in (self.paths.cbc, self.paths.lru):
            latch.reset_stats()

    def report(self, span: float) -> dict:
        per_s = self.completed / span
        event = "direct path read" if self.params.read_path == "direct" else "db file sequential read"
        out = {"throughput_per_s": per_s, "tpm": per_s * 60.0,
               **io_report(self.system, self.paths, self.physical, span, event, self.tenant)}
        if self.params.read_path == "sga" and self.completed:   # as AWR's Buffer Hit %: logical reads not physical
            out["buffer_hit_ratio"] = 1.0 - self.physical / self.completed
        return out
