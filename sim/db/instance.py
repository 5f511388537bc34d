"""The instance: parameters derived from cpu_count, sessions, background processes, waits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import simpy

from sim.config import Source, param
from sim.units import format_quantity
from sim.db.checkpoint import CachedBlockCheckpoints, LogSwitchCheckpoints
from sim.db.dbwr import DatabaseWriter
from sim.db import px
from sim.db.redo import LogWriter
from sim.db.session import Session
from sim.metrics import WaitEvents


# The block sizes Oracle accepts: DB_BLOCK_SIZE "2048 to 32768" (Oracle Database Reference 10.2/11.2,
# DB_BLOCK_SIZE), a power of two, as the nonstandard-size caches DB_2K/4K/8K/16K/32K_CACHE_SIZE list them;
# "32-bit operating systems support a maximum DB_BLOCK_SIZE value of 16384" (11.2 Reference): scenario.py.
BLOCK_SIZES = ("2 KB", "4 KB", "8 KB", "16 KB", "32 KB")
# The smallest buffer cache Oracle takes: DB_BLOCK_BUFFERS "Range of values: 4 to an operating system
# specific maximum" (Oracle8i Reference 8.1.6, DB_BLOCK_BUFFERS); from 9i db_cache_size is rounded up to
# whole granules (4 MB or more), so 4 blocks is the least any release holds.
MIN_CACHE_BLOCKS = 4
# The smallest log buffer: the log buffer is a circle of redo log blocks, written by LGWR to the log files in
# the same 512-byte blocks (the redo block size on Solaris and Linux: ORA-00336's 'log file size 4096 blocks
# is less than minimum 8192 blocks' for a 2 MB file, 10.2); less than one such block holds no redo at all.
# (The 8i-10.1 References give LOG_BUFFER's range as 'operating system-dependent'; 11.2 raises it to 2 MB.)
REDO_BLOCK = 512
# The most datafiles a database has: "Database files, Maximum per database: 65533" (Oracle Database Reference,
# Physical Database Limits: the same figure in 8i 8.1.6, 9i, 10g and 11.2).
MAX_DATAFILES = 65533


@dataclass(frozen=True, kw_only=True)
class DatabaseSpec:
    block_size: float = param("db_block_size", kind="size", default="8 KB", choices=BLOCK_SIZES)
    db_cache: float | None = param("db_cache_size: the buffer cache (omit: the workload's data is fully cached)",
                                   kind="size", default=None, positive=True)
    cpu_count: int | None = param("cpu_count (omit: every strand the OS sees, as Oracle sets it)",
                                  default=None, minimum=1)
    redo_device: str | None = param("storage device (disk group or array) holding the online redo logs "
                                    "(omit: the datafiles' device)", default=None)
    shared_pool: float = param("shared_pool_size plus the other SGA pools (large, java) and the fixed SGA",
                               kind="size", default="32 MB", minimum=0.0)
    log_buffer: float = param("log_buffer: LGWR writes at a third of it (or 1 MB), no write is larger, and a session "
                              "whose redo finds it full waits ('log buffer space'; sim/db/redo.py)", kind="size",
                              default="1 MB", minimum=0.0)
    redo_log_size: float | None = param("size of each online redo log file: a full log starts a checkpoint (omit: "
                                        "logs so large that none fills during a run, as benchmark kits size them)",
                                        kind="size", default=None, positive=True)
    redo_log_groups: int = param("online redo log groups used in a circle", default=3, minimum=2)
    # Oracle8i Reference 8.1.6, LOG_CHECKPOINT_TIMEOUT: "no buffer will remain dirty (in the cache) for
    # more than integer seconds"; the default is 1800 s from 8.1.5 on (Enterprise Edition; 900 s otherwise).
    log_checkpoint_timeout: float | None = param("log_checkpoint_timeout: a changed buffer is written within this "
                                                 "time even if it stays cached (omit: no time-based checkpoint)",
                                                 kind="time", default=None, positive=True)
    # Rollback segments (manual undo, Oracle 8i): every transaction that changes rows writes undo records into
    # one of them, and each is used in a circle of extents (Oracle8i Concepts, "Rollback Segments"); Oracle
    # spreads transactions over the online segments, so with all of them in use what decides whether an undo
    # block is still cached when its segment wraps is their total size (workloads/tpcc.py, tpcc_blocks.py).
    rollback_size: float | None = param("total size of the online rollback segments (init.ora rollback_segments; "
                                        "omit: undo is not modelled)", kind="size", default=None, positive=True)
    # Private memory of one dedicated server process (Oracle 9i/10g, 64-bit). Estimate: UGA + PGA of an
    # OLTP session with small sort areas ~0.6 MB, private pages of the oracle image (data, bss,
    # relocations) and stack ~0.9 MB. The working set is what one call touches: UGA, stack top, cursors.
    server_memory: float = param("private memory of one dedicated server process", kind="size",
                                 default="1.5 MB", minimum=0.0)
    server_working_set: float = param("part of it touched by every call", kind="size", default="256 KB",
                                      minimum=0.0)
    # Background processes (PMON, SMON, DBWR, LGWR, CKPT, RECO, ...): estimate 10 x 5 MB.
    background_memory: float = param("private memory of all background processes together", kind="size",
                                     default="50 MB", minimum=0.0)
    # LGWR's own CPU per log write: post/wait handling, redo copy and the write system call.
    # Estimate: ~40 us on a ~1 GIPS core (Oracle 'redo write time' minus device time in typical
    # AWR reports); half of it in the kernel.
    lgwr_instructions_per_write: float = param("LGWR instructions per log write", default=40_000.0, minimum=0.0)
    lgwr_sys_share: float = param("share of LGWR's CPU spent in the kernel", default=0.5, minimum=0.0, maximum=1.0)
    # Datafiles and DBWR (used when db_cache is given: the data is then not all cached)
    data_device: str | None = param("storage device holding the datafiles (omit: the profile's first, its "
                                    "database storage)", default=None)
    datafiles: int = param("datafiles the data is spread over (each has its own file lock on a file system)",
                           default=59, minimum=1, maximum=MAX_DATAFILES)
    datafile_size: float | None = param("size of each datafile: every table and index then has its own tablespace of "
                                        "as many files as it needs, and its I/O goes to those files, as a backup "
                                        "beside the workload reads them (omit: every block equally likely in any "
                                        "datafile)", kind="size", default=None, positive=True)
    disk_asynch_io: bool = param("disk_asynch_io: DBWR writes asynchronously (where os.filesystem has async I/O: "
                                 "not linux_buffered)", default=True)
    dbwr_io_slaves: int = param("dbwr_io_slaves: I/O slaves writing synchronously for DBWR (0: none)",
                                default=0, minimum=0)
    dbwr_max_writes: int = param("_db_writer_max_writes: most DBWR writes outstanding at once (0: as many as its "
                                 "async I/O or I/O slaves allow)", default=0, minimum=0)
    oracle_bits: Literal[32, 64] = param("32- or 64-bit Oracle (32-bit: the SGA must fit its address space)",
                                         default=64)

    parallel: px.ParallelSpec = param("parallel execution parameters (parallel_max_servers, ...)", default={})
    control_file_device: str | None = param("storage device holding the control files (omit: the redo device)",
                                            default=None)

    def check(self, src: Source) -> None:
        if self.db_cache is not None and self.db_cache < MIN_CACHE_BLOCKS * self.block_size:
            least = format_quantity(MIN_CACHE_BLOCKS * self.block_size, "size")
            raise src.at("db_cache").bad(
                format_quantity(self.db_cache, "size"),
                f"at least {MIN_CACHE_BLOCKS} database blocks, {least} with database.block_size "
                f"{format_quantity(self.block_size, 'size')} (Oracle's smallest buffer cache: DB_BLOCK_BUFFERS from "
                f"{MIN_CACHE_BLOCKS}, Oracle8i Reference; later releases round up to whole granules of 4 MB or more)")
        if self.log_buffer < REDO_BLOCK:
            raise src.at("log_buffer").bad(
                format_quantity(self.log_buffer, "size"),
                f"at least one redo log block, {REDO_BLOCK} B (the log buffer holds redo in {REDO_BLOCK}-byte log "
                "blocks; Oracle 11.2's smallest LOG_BUFFER is 2 MB)")
        if self.oracle_bits == 32 and self.sga > SGA_LIMIT_32:   # (the shared pool alone, where no db_cache is given)
            key, parts = ("db_cache", "buffer cache + shared pool") if self.db_cache is not None \
                else ("shared_pool", "shared pool")
            raise src.at(key).bad(
                f"{getattr(self, key) / 2**30:.2f} GB",
                f"an SGA ({parts} = {self.sga / 2**30:.2f} GB) within the "
                f"{SGA_LIMIT_32 / 2**30:.2f} GB that 32-bit Oracle can map; use oracle_bits: 64 for more")

    @property
    def sga(self) -> float:
        return (self.db_cache or 0.0) + self.shared_pool


# 32-bit Oracle maps the SGA, its text, libraries, heap and stack in one 4 GB address space:
# "the largest SGA size that can be allocated by Oracle is about 4GB" (VERITAS 1999); the
# other mappings take ~256 MB (estimate).
SGA_LIMIT_32 = 4 * 2**30 - 256 * 2**20


def check_all_cached_sga(spec: DatabaseSpec, database_bytes: float, what: str, src: Source) -> None:
    """Without database.db_cache the buffer cache holds the workload's whole database (Instance.sga_size):
    under 32-bit Oracle that SGA must fit SGA_LIMIT_32 too. DatabaseSpec.check sees only the shared pool
    then; the workload knows the database (its module's all_cached: `database_bytes`, set by `what`)."""
    sga = spec.shared_pool + database_bytes   # as DatabaseSpec.sga, with the cache holding the database
    if spec.oracle_bits != 32 or spec.db_cache is not None or sga <= SGA_LIMIT_32:
        return
    raise src.at("database").at("db_cache").error(
        f"omitted, so the buffer cache holds the whole database ({what}), {database_bytes / 2**30:.2f} GB; expected "
        f"an SGA (database + shared pool = {sga / 2**30:.2f} GB) within the {SGA_LIMIT_32 / 2**30:.2f} GB that "
        "32-bit Oracle can map: give database.db_cache, or use oracle_bits: 64")


def _counting(run, seconds: dict, tenant: str, code: int):
    """A session's cpu() that runs its bursts as code `code` and sums the strand-seconds each took in
    seconds[tenant] (the burst's event gives them)."""
    def took(ev):
        seconds[tenant] += ev.value

    def cpu(instructions: float, sys_share: float = 0.0):
        ev = run(instructions, sys_share, code)
        ev.callbacks.append(took)
        return ev
    return cpu


class Instance:
    """An Oracle-like instance running on an OS (dispatcher and devices), not on hardware."""

    def __init__(self, env, dispatcher, devices: dict, spec: DatabaseSpec, datafiles=None, vm=None):
        self.env, self.dispatcher, self.spec, self.vm = env, dispatcher, spec, vm
        self.cpu_count = spec.cpu_count or dispatcher.cpu.cpu_count
        self.waits = WaitEvents()
        redo = redo_device(spec, list(devices))
        self.lgwr = LogWriter(env, dispatcher, devices[redo], spec.lgwr_instructions_per_write, spec.lgwr_sys_share,
                              spec.log_buffer)
        self.devices = devices
        self.control_file = devices[spec.control_file_device or redo]
        self.cf_enqueue = simpy.Resource(env, 1)   # the CF enqueue: one control-file transaction at a time
        self.px = px.PxPool(env, dispatcher, spec.parallel, self.cpu_count)
        self.sessions: list[Session] = []
        # of several workloads (a background job beside one), whose sessions new_session() makes now, and each
        # one's code number on the cores, in the order served (serve); None: one workload, nothing counted
        self.tenant: str | None = None
        self.codes: dict[str, int] = {}
        self.cpu_by: dict[str, float] = {}   # strand-seconds of each one's sessions since the last reset (db_cpu)
        self._databases: dict[str | None, float] = {}   # attach_database's, by workload: one buffer cache holds all
        # datafiles through the OS's file system, and DBWR, when the data is not all cached
        self.datafiles = datafiles
        self.dbwr = None
        if datafiles is not None:
            self.dbwr = DatabaseWriter(env, dispatcher, datafiles, spec.db_cache / spec.block_size,
                                       datafiles.async_io, spec.dbwr_io_slaves, self.waits, spec.dbwr_max_writes)
            if spec.redo_log_size is not None:
                self.lgwr.checkpoints = LogSwitchCheckpoints(env, self.dbwr, spec.redo_log_size,
                                                             spec.redo_log_groups, self.waits)
        self.cached_block_checkpoints: CachedBlockCheckpoints | None = None   # checkpoint_cached_blocks
        self.physical_reads = 0
        if vm is not None:
            vm.map_shared("sga_pools", spec.shared_pool + spec.log_buffer)
            vm.add_processes("oracle_background", 1, spec.background_memory, spec.background_memory)
            if spec.dbwr_io_slaves:
                vm.add_processes("dbwr_io_slave", spec.dbwr_io_slaves, spec.server_memory, spec.server_working_set)

    def sga_size(self, database_bytes: float) -> float:
        """SGA as Oracle reports it: the pools plus the buffer cache (by default the whole database)."""
        return self.spec.shared_pool + self.spec.log_buffer + (self.spec.db_cache or database_bytes)

    def attach_database(self, database_bytes: float) -> None:
        """The workload's database: the buffer cache fills with its blocks, so the resident part of
        the buffer cache is the smaller of db_cache_size and the database (all of db_cache_size
        where the OS allocates and locks the SGA whole, as Solaris ISM does)."""
        if self.vm is not None:
            self._databases[self.tenant] = database_bytes
            database_bytes = sum(self._databases.values())
            cache = self.spec.db_cache or database_bytes
            self.vm.map_shared("sga_buffer_cache", cache if self.vm.locks_shared_memory else min(cache, database_bytes))

    def checkpoint_cached_blocks(self, cache, redo_per_tx: float, finished, set_dirty) -> None:
        """Checkpoint writes of the changed blocks that stay in a workload's buffer cache, under this
        instance's redo_log_size and log_checkpoint_timeout (sim/db/checkpoint.py). The workload hands
        over only what is its own: `cache` (its BufferCache, by segment), its mean `redo_per_tx` bytes,
        `finished()` (its transactions since the start: the timeout's pace) and `set_dirty`, which turns
        writes per transaction per segment into its transactions' dirtying. `set_dirty` gets the
        log-switch writes now and, with a timeout, the paced writes every PACE_WINDOW."""
        ck = CachedBlockCheckpoints(cache, self.spec.redo_log_size, redo_per_tx, self.spec.log_checkpoint_timeout)
        self.cached_block_checkpoints = ck
        set_dirty(ck.log_switch)
        if ck.timeout is not None:   # started before any transaction: the clock has not moved yet
            self.env.process(ck.pace(self.env, finished, set_dirty))

    def serve(self, tenant: str) -> None:
        """Sessions made from now work for workload `tenant`: they run its code (the cores' code number
        code(tenant), the first served 0's, as the background processes), and count their DB CPU by it."""
        if tenant not in self.codes and len(self.codes) == self.dispatcher.cpu.codes:
            raise ValueError(f"serve({tenant!r}): the cores tell {len(self.codes)} workloads' code apart "
                             f"({', '.join(self.codes)}); build the System from a scenario with a background job")
        self.tenant = tenant
        self.codes.setdefault(tenant, len(self.codes))
        self.cpu_by.setdefault(tenant, 0.0)

    def code(self, tenant: str | None) -> int:
        """The cores' number for workload `tenant`'s code (0 for one workload, unserved)."""
        return self.codes.get(tenant, 0)

    def db_cpu(self, tenant: str | None) -> float:
        """Strand-seconds since the last reset of workload `tenant`'s sessions: its DB CPU where several share
        the instance (the strands' time would count the other's too). Of one workload (tenant None): every
        strand's, as the OS accounts its threads, the background processes' with them."""
        if tenant is None:
            return self.dispatcher.cpu.strand_time()[0]
        return self.cpu_by[tenant]

    def new_session(self) -> Session:
        s = Session(self, len(self.sessions))
        if self.tenant is not None:
            s.cpu = _counting(self.dispatcher.run, self.cpu_by, self.tenant, self.codes[self.tenant])
        self.sessions.append(s)
        if self.vm is not None:
            self.vm.add_processes("oracle_server", 1, self.spec.server_memory, self.spec.server_working_set)
        return s

    def watch_writer(self, since: float) -> None:
        """Start watching DBWR's backlog at time `since` (of the warm-up), for settle_writer."""
        if self.dbwr is not None:
            self.dbwr.watch(since)

    def unwatch_writer(self) -> None:
        if self.dbwr is not None:
            self.dbwr.unwatch()

    def writer_fill_rate(self) -> float:
        """The watched DBWR's backlog's net fill rate so far (DatabaseWriter.net_fill_rate; 0 if unknown)."""
        g = self.dbwr.net_fill_rate() if self.dbwr is not None else None
        return g if g is not None else 0.0

    def writer_unjudged(self) -> bool:
        """Whether a watched DBWR has yet to write anything since the watch began (DatabaseWriter.yet_to_write):
        settle_writer could not tell whether it keeps up."""
        return self.dbwr is not None and self.dbwr.yet_to_write()

    def checkpoint_bound(self) -> float | None:
        """With log-switch checkpoints, the most buffers DBWR can leave unwritten before LGWR
        stops on a log whose checkpoint is incomplete: what is dirtied while the other
        groups - 1 logs fill (sim/db/checkpoint.py), at the dirtied-per-redo-byte rate seen so
        far. None without checkpoints or before any redo."""
        ck = self.lgwr.checkpoints
        if ck is None or self.dbwr is None or self.lgwr.bytes <= 0.0:
            return None
        return (ck.groups - 1) * ck.size * self.dbwr.dirtied_total / self.lgwr.bytes

    def settle_writer(self) -> int:
        """At the end of the warm-up: move a watched DBWR that cannot keep up (its backlog's net
        fill rate is positive) to its free-buffer-limit steady state (DatabaseWriter.catch_up);
        returns the buffers dirtied to get there (0 if it was not watched). Under log-switch
        checkpoints only where their bound is the larger, so the free-buffer limit is met first;
        otherwise the backlog heads for the checkpoints' bound and the run keeps its own pace."""
        if self.dbwr is None:
            return 0
        bound = self.checkpoint_bound()
        if bound is not None and bound < self.dbwr.limit:
            self.dbwr.unwatch()
            return 0
        return self.dbwr.catch_up()

    def writer_behind(self) -> bool:
        """Whether settle_writer found DBWR behind on the LRU: its backlog's net fill rate over the
        watch was positive (DatabaseWriter.catch_up), whether catch_up moved the backlog to the
        free-buffer limit or found it there already. False if DBWR was not watched (run.settle_writer
        false; under log-switch checkpoints whose bound comes first)."""
        return self.dbwr is not None and self.dbwr.fill_rate is not None and self.dbwr.fill_rate > 0.0

    def release_checkpoints(self, writer_behind: bool) -> bool:
        """At the end of the warm-up: start the timeout's checkpoint writes unless DBWR is behind on
        the LRU (`writer_behind`: settle_writer found it so, writer_behind()): the limit, taken here,
        of the share of DBWR's writes a low-priority checkpoint gets (sim/db/checkpoint.py). True if
        writes start."""
        ck = self.cached_block_checkpoints
        if ck is None or ck.timeout is None or not ck.held or writer_behind:
            return False
        ck.release()
        return True

    def hold_checkpoints(self) -> None:
        """Hold the timeout's checkpoint writes again: DBWR, found keeping up, fell behind once they
        filled a controller's write cache (sim/run.py)."""
        ck = self.cached_block_checkpoints
        if ck is not None and ck.timeout is not None:
            ck.hold()

    def reset_stats(self) -> None:
        self.waits.reset()
        self.cpu_by.update(dict.fromkeys(self.cpu_by, 0.0))   # (in place: the sessions' cpu() holds this dict)
        self.lgwr.reset_stats()
        self.physical_reads = 0
        if self.datafiles is not None:
            self.datafiles.reset_stats()
            self.dbwr.reset_stats()


def check_devices(spec: DatabaseSpec, devices: list[str], src: Source) -> None:
    for key in ("redo_device", "data_device", "control_file_device"):
        value = getattr(spec, key)
        if value is not None and value not in devices:
            raise src.at("database").at(key).bad(value, "one of the profile's storage devices: " + ", ".join(devices))
    px.check(spec.parallel, src.at("database").at("parallel"))


def data_device(spec: DatabaseSpec, devices: list[str]) -> str:
    """The device holding the datafiles: as configured, else the profile's first (every profile lists the
    storage its source ran the database on first; the others are its internal or boot drives, or a separate
    redo group)."""
    return spec.data_device or devices[0]


def redo_device(spec: DatabaseSpec, devices: list[str]) -> str:
    """The device holding the online redo logs: as configured, else the datafiles' device, where Oracle
    creates them when no separate destination is given (Oracle Managed Files: online logs go to
    DB_CREATE_FILE_DEST unless DB_CREATE_ONLINE_LOG_DEST_n is set; Administrator's Guide 11.2, "Using
    Oracle Managed Files")."""
    return spec.redo_device or data_device(spec, devices)
