"""The instance: parameters derived from cpu_count, sessions, background processes, waits."""

from __future__ import annotations

from dataclasses import dataclass

from sim.config import Source, param
from sim.db import px
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
    # LGWR's own CPU per log write: post/wait handling, redo copy and the write system call.
    # Estimate: ~40 us on a ~1 GIPS core (Oracle 'redo write time' minus device time in typical
    # AWR reports); half of it in the kernel.
    lgwr_instructions_per_write: float = param("LGWR instructions per log write", default=40_000.0, minimum=0.0)
    lgwr_sys_share: float = param("share of LGWR's CPU spent in the kernel", default=0.5, minimum=0.0, maximum=1.0)
    parallel: px.ParallelSpec = param("parallel execution parameters (parallel_max_servers, ...)", default={})
    control_file_device: str | None = param("storage device holding the control files (omit: the redo device)",
                                            default=None)


class Instance:
    """An Oracle-like instance running on an OS (dispatcher and devices), not on hardware."""

    def __init__(self, env, dispatcher, devices: dict, spec: DatabaseSpec):
        self.env, self.dispatcher, self.spec = env, dispatcher, spec
        self.cpu_count = spec.cpu_count or dispatcher.cpu.cpu_count
        self.waits = WaitEvents()
        redo = spec.redo_device or next(iter(devices))
        self.lgwr = LogWriter(env, dispatcher, devices[redo], spec.lgwr_instructions_per_write, spec.lgwr_sys_share)
        self.devices = devices
        self.control_file = devices[spec.control_file_device or redo]
        self.px = px.PxPool(env, dispatcher, spec.parallel, self.cpu_count)
        self.sessions: list[Session] = []

    def new_session(self) -> Session:
        s = Session(self, len(self.sessions))
        self.sessions.append(s)
        return s

    def reset_stats(self) -> None:
        self.waits.reset()
        self.lgwr.reset_stats()


def check_devices(spec: DatabaseSpec, devices: list[str], src: Source) -> None:
    for key in ("redo_device", "control_file_device"):
        value = getattr(spec, key)
        if value is not None and value not in devices:
            raise src.at("database").at(key).bad(value, "one of the profile's storage devices: " + ", ".join(devices))
    px.check(spec.parallel, src.at("database").at("parallel"))
