"""The instance: parameters derived from cpu_count, sessions, background processes, waits."""

from __future__ import annotations

from dataclasses import dataclass

from sim.config import Source, param
from sim.db.redo import LogWriter
from sim.db.session import Session
from sim.metrics import WaitEvents


@dataclass(frozen=True, kw_only=True)
class DatabaseSpec:
    block_size: float = param("db_block_size", kind="size", default="8 KB", positive=True)
    db_cache: float | None = param("db_cache_size: the buffer cache (omit: the workload's data is fully cached)",
                                   kind="size", default=None, positive=True)
    cpu_count: int | None = param("cpu_count (omit: every strand the OS sees, as Oracle sets it)",
                                  default=None, minimum=1)
    redo_device: str | None = param("storage device (disk group or array) holding the online redo logs "
                                    "(omit: the profile's first)", default=None)
    shared_pool: float = param("shared_pool_size plus the other SGA pools (large, java) and the fixed SGA",
                               kind="size", default="256 MB", minimum=0.0)
    log_buffer: float = param("log_buffer", kind="size", default="1 MB", minimum=0.0)
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


class Instance:
    """An Oracle-like instance running on an OS (dispatcher and devices), not on hardware."""

    def __init__(self, env, dispatcher, devices: dict, spec: DatabaseSpec, vm=None):
        self.env, self.dispatcher, self.spec, self.vm = env, dispatcher, spec, vm
        self.cpu_count = spec.cpu_count or dispatcher.cpu.cpu_count
        self.waits = WaitEvents()
        redo = spec.redo_device or next(iter(devices))
        self.lgwr = LogWriter(env, dispatcher, devices[redo], spec.lgwr_instructions_per_write, spec.lgwr_sys_share)
        self.sessions: list[Session] = []
        if vm is not None:
            vm.map_shared("sga_pools", spec.shared_pool + spec.log_buffer)
            vm.add_processes("oracle_background", 1, spec.background_memory, spec.background_memory)

    def sga_size(self, database_bytes: float) -> float:
        """SGA as Oracle reports it: the pools plus the buffer cache (by default the whole database)."""
        return self.spec.shared_pool + self.spec.log_buffer + (self.spec.db_cache or database_bytes)

    def attach_database(self, database_bytes: float) -> None:
        """The workload's database: the buffer cache fills with its blocks, so the resident part of
        the buffer cache is the smaller of db_cache_size and the database."""
        if self.vm is not None:
            self.vm.map_shared("sga_buffer_cache", min(self.spec.db_cache or database_bytes, database_bytes))

    def new_session(self) -> Session:
        s = Session(self, len(self.sessions))
        self.sessions.append(s)
        if self.vm is not None:
            self.vm.add_processes("oracle_server", 1, self.spec.server_memory, self.spec.server_working_set)
        return s

    def reset_stats(self) -> None:
        self.waits.reset()
        self.lgwr.reset_stats()


def check_devices(spec: DatabaseSpec, devices: list[str], src: Source) -> None:
    if spec.redo_device is not None and spec.redo_device not in devices:
        raise src.at("database").at("redo_device").bad(
            spec.redo_device, "one of the profile's storage devices: " + ", ".join(devices))
