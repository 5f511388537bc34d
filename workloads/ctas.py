"""CREATE TABLE ... AS SELECT in parallel, nologging: producers scan, consumers write by direct path.

The producers scan the source table; the consumers format blocks and write them by direct path (no
redo, no buffer cache).

Producers read their granules with direct-path multiblock reads (db_file_multiblock_read_count
= 128 x 8 KB, the 11g default). Under parallel_degree_policy=auto, In-Memory PX (T-series
paper, "In-Memory Parallel Execution") reads a table that fits in the buffer cache from the
cache instead of the disks: a CPU cost per MB and no I/O. The source table is assumed cached
by earlier runs of the same statement.

Constants (each with its source or the single published row it was fitted to):
- table_size default 10 GB: the paper does not give the DSS table's size; fitted to
  tseries.ctas, row parallel_max_servers=64 (elapsed). Refitted from 15 GB when the array became
  an ASM normal-redundancy group: that row moves 3 x the table over the FC HBA (read once, write
  twice), the In-Memory PX row 2 x, which is why enabling auto DOP saves a third, not half.
- INSTRUCTIONS_PER_MB = 6 M: scan, row copy and block formatting per MB (producer 1/3,
  consumer 2/3); estimate: ~50 instructions per byte moved, typical of row-at-a-time code.
- CACHED_READ_INSTRUCTIONS_PER_MB = 2 M: logical reads of 128 buffers per MB (~15 k each).
- SYS_SHARE = 0.1: kernel share (I/O system calls); estimate.
- MPKI = 4: as create_index (estimate).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.config import Source, param
from sim.db.px import PxStatement
from sim.units import format_quantity
from workloads.batch import MB, ParallelStatement, StatementParams, device_checker, device_of, UNPLACED

INSTRUCTIONS_PER_MB = 6e6
PRODUCER_SHARE = 1.0 / 3.0
CACHED_READ_INSTRUCTIONS_PER_MB = 2e6
SYS_SHARE = 0.1
MPKI = 4.0


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): one parallel statement; the
# buffer cache size decides an in-memory scan under auto DOP.
USES = ("parallel", "buffer_cache", "cpu_count")


def idle(params) -> dict[str, str]:
    """The parts of USES these parameters leave idle, each with the parameter that says so."""
    if params.in_memory is None:
        return {}
    return {"buffer_cache": f"in_memory: {str(params.in_memory).lower()} (given, the buffer cache size no longer "
                            "decides whether the scan is in memory)"}


@dataclass(frozen=True, kw_only=True)
class Params(StatementParams):
    table_size: float = param("size of the source table", kind="size", default="10 GB", positive=True)
    source_device: str | None = param("storage device of the source table " + UNPLACED, default=None)
    target_device: str | None = param("storage device of the new table " + UNPLACED, default=None)
    read_size: float = param("bytes per direct-path read", kind="size", default="1 MB", positive=True)
    in_memory: bool | None = param("read the source from the buffer cache (omit: In-Memory PX, i.e. under "
                                   "parallel_degree_policy=auto when the table fits in the buffer cache)",
                                   default=None)


_check_devices = device_checker("source_device", "target_device", whole_blocks=("read_size",),
                                fits=(("table_size", "source_device"),))


def check_scenario(spec, profile, params: Params, src: Source) -> None:
    _check_devices(spec, profile, params, src)
    if params.in_memory and params.read_size != Params.read_size:   # (64 KB and 1 MB had given the same run)
        raise src.at("params").at("read_size").bad(
            format_quantity(params.read_size, "size"), "no read_size with in_memory: true: the scan reads the buffer "
            "cache, no block from storage, so it would change nothing (leave it out, or in_memory: false)")


def in_memory(db, params: Params) -> bool:
    """Whether the scan reads the buffer cache: as given, else In-Memory PX (auto DOP, the table fits the cache)."""
    if params.in_memory is not None:
        return params.in_memory
    return db.parallel.parallel_degree_policy == "auto" and (db.db_cache is None or params.table_size <= db.db_cache)


def all_cached(spec, params: Params) -> tuple[float, str]:
    """What the buffer cache holds without database.db_cache: the table scanned in memory (all of it: a 300 GB
    table on the T5220's 64 GB is out of memory); a direct-path scan fills none of it."""
    if in_memory(spec.database, params):
        return params.table_size, "params.table_size, scanned in memory"
    return 0.0, "a direct-path scan"


class Workload(ParallelStatement):
    def __init__(self, system, params: Params):
        super().__init__(system, params, mpki=MPKI, total_bytes=params.table_size)
        inst = system.instance
        self.in_memory = in_memory(inst.spec, params)
        inst.attach_database(all_cached(system.scenario.spec, params)[0])

    def job(self):
        p, inst = self.params, self.instance
        produce = INSTRUCTIONS_PER_MB * PRODUCER_SHARE
        names = list(self.system.devices)
        device = self.system.devices[device_of(p, "source_device", names)]
        if self.in_memory:
            produce += CACHED_READ_INSTRUCTIONS_PER_MB
            device = None   # logical reads: CPU, no physical read and no 'direct path read' wait
        consume_ipm = INSTRUCTIONS_PER_MB * (1.0 - PRODUCER_SHARE)
        target = self.system.devices[device_of(p, "target_device", names)]

        def consume(session, nbytes):
            yield session.cpu(consume_ipm * nbytes / MB, SYS_SHARE)
            yield from session.io(target, "write", nbytes, None, "direct path write")
            self.done_bytes += nbytes

        def statement(dop):
            return PxStatement(inst, dop=dop, device=device, segment_offset=0.0, segment_bytes=p.table_size,
                               read_size=p.read_size, read_event="direct path read", message_bytes=MB,
                               produce_instructions_per_mb=produce, consume=consume, sys_share=SYS_SHARE)
        yield from self.run_parallel(p.table_size, p.table_size / MB * INSTRUCTIONS_PER_MB, statement)

    def report(self, span: float) -> dict:
        return {**super().report(span), "in_memory": self.in_memory}
