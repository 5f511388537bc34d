"""What every batch job shares: it runs to completion once and reports its elapsed time.

A batch workload sets `self.done` when its job ends, tells the run how far it has got
(`progress`), and reports the instance's parallel figures beside its own.

A parallel statement (create index, CTAS) also shares how it gets its servers: the optimizer
estimates the serial run (the scan at CALIBRATED_IO_RATE plus the CPU at one strand's speed,
system statistics), the instance's DOP policy turns that into a degree, and the statement
holds two server sets (producers and consumers) while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import simpy

from sim.config import param
from sim.units import format_quantity

MB = 1024.0 * 1024.0
CALIBRATED_IO_RATE = 200.0 * MB     # Oracle 11.2.0.2 default max_pmbps when I/O calibration has not run


UNPLACED = "(omit: the profile's first device, its database storage)"


def device_of(params, key: str, names: list[str]) -> str:
    """The device a batch job's `key` names, or, omitted, the profile's first (every profile lists the
    storage its source ran the database on first, as tpcc's database.data_device defaults)."""
    value = getattr(params, key)
    return names[0] if value is None else value


def device_checker(*keys: str, whole_blocks: tuple[str, ...] = (), fits: tuple[tuple[str, str], ...] = ()):
    """A check_scenario for workloads whose params name storage devices under `keys`, give I/O
    sizes that must be whole database blocks under `whole_blocks` (check_whole_blocks), and
    sizes of data that must fit on a device: `fits` pairs (size key, device key)."""
    def check_scenario(spec, profile, params, src) -> None:
        names = profile.storage.device_names()
        for key in keys:
            value = getattr(params, key)
            if value is not None and value not in names:
                raise src.at("params").at(key).bad(value, "one of the profile's devices: " + ", ".join(names))
        check_whole_blocks(spec, params, src, *whole_blocks)
        for size_key, device_key in fits:
            check_fits(spec, profile, src, size_key, getattr(params, size_key), device_of(params, device_key, names))
    return check_scenario


def check_fits(spec, profile, src, key: str, size: float, device: str, what: str = "that holds it",
               value: float | None = None) -> None:
    """Data larger than the device that holds it cannot be created (a 1 TB table on a 438 GB array
    would otherwise run): refused, naming the size, the device and what it holds. `what` says which
    data the device holds and `value` is the key's own value where `size` is not (sqlldr: the loaded
    table, or the input and the table on one device)."""
    capacity = profile.storage.capacity(device)
    if size > capacity:
        default = "" if key in spec.params else f" (the default: give a smaller {key})"
        raise src.at("params").at(key).bad(
            format_quantity(size if value is None else value, "size"), f"at most the capacity of device {device!r} "
            f"{what}, {format_quantity(capacity, 'size')} (set by {profile.storage.capacity_keys(device)}){default}")


def check_whole_blocks(spec, params, src, *keys: str) -> None:
    """I/O sizes that Oracle makes of whole database blocks (a multiblock read is
    db_file_multiblock_read_count blocks; a direct-path write writes formatted blocks)."""
    block = spec.database.block_size
    for key in keys:
        size = getattr(params, key)
        if size % block:
            raise src.at("params").at(key).bad(
                format_quantity(size, "size"), f"a whole number of database blocks (database.block_size: "
                f"{format_quantity(block, 'size')}), e.g. "
                f"{format_quantity(block * max(1, round(size / block)), 'size')}")


class BatchWorkload:
    kind = "batch"
    primary = "elapsed"

    def __init__(self, system, params, *, mpki: float, total_bytes: float):
        """`mpki`: last-level cache misses per 1000 instructions of the job's code; `total_bytes`:
        the work `progress` counts against."""
        self.system, self.params = system, params
        self.env = system.env
        self.instance = system.instance
        self.done = simpy.Event(self.env)
        self.tenant = system.instance.tenant   # (whose code: a job beside a workload changes its miss rate as it runs)
        system.set_memory_behaviour(mpki / 1000.0)
        self.total_bytes = total_bytes
        self.done_bytes = 0.0

    def start(self) -> None:
        self.env.process(self._main())

    def _main(self):
        yield from self.job()
        self.done.succeed()

    def job(self):  # pragma: no cover - each workload defines its job
        raise NotImplementedError

    def progress(self) -> float:
        return min(1.0, self.done_bytes / self.total_bytes)

    def report(self, span: float) -> dict:
        return {"elapsed_s": span, **self.instance.px.report()}

    def strand_rate(self) -> float:
        """Instructions per second of one strand alone: what the optimizer's CPU speed measures."""
        return self.system.cpu.groups[0].rates[1]


@dataclass(frozen=True, kw_only=True)
class StatementParams:
    """What a user may say of any parallel statement, whatever it does."""
    dop: int | None = param("fixed degree of parallelism (omit: the instance's policy decides)",
                            default=None, minimum=1)


class ParallelStatement(BatchWorkload):
    """A batch job that is one parallel statement over a producer and a consumer set."""

    def __init__(self, system, params, *, mpki: float, total_bytes: float):
        super().__init__(system, params, mpki=mpki, total_bytes=total_bytes)
        self.dop_used = 1

    def run_parallel(self, scan_bytes: float, instructions: float, statement):
        """Generator: size the DOP (the params' fixed `dop`, else the policy), get the servers,
        run `statement(dop)` (a PxStatement), release them."""
        px = self.instance.px
        serial = scan_bytes / CALIBRATED_IO_RATE + instructions / self.strand_rate()
        # (known before the servers are spawned: a run cut while they start reports the DOP they start for)
        dop = yield from px.acquire(px.dop(2, serial, self.params.dop), 2, self._granted)
        self.dop_used = dop
        yield from statement(dop).run()
        px.release(dop, 2)

    def _granted(self, dop: int) -> None:
        self.dop_used = dop

    def report(self, span: float) -> dict:
        return {**super().report(span), "dop": self.dop_used}
