"""CREATE INDEX in parallel: producers scan the table, consumers sort and build the index.

Each consumer sorts its key range and builds its piece of the index; the query coordinator stitches
the pieces.

The paper's statement: `create unique index icust2 on cust (c_last, c_w_id, c_d_id, c_first,
c_id) ... compute statistics` on a 2 GB customer table (T-series paper, Parallel Index
Creation). Producers read their granules with single-block reads: the AWR of the paper's run
is dominated by "db file sequential read" on the table's tablespace (CUST_0), so `read_size`
is one block of that tablespace (default 8 KB; the paper's experiment states CUST_0's 2 KB, with
its sources). Every producer is one read stream; when more streams interleave on a
drive than it has read-ahead segments, every read seeks (sim/hardware/storage.py, Disk): that
is the read bottleneck the paper found with the default parallel_servers_target, and why it
vanishes with fewer servers.

Constants (each with its source or the single published row it was fitted to):
- ROW_BYTES = 700: a TPC-C CUSTOMER row is ~655 bytes of columns (TPC-C spec 1.3.1) plus row
  and block overhead; 2 GB is then ~3 M rows (~100 warehouses).
- KEY_BYTES = 60: the index entry (c_last 16, c_w_id, c_d_id, c_first 16, c_id, rowid, overhead).
- INSTRUCTIONS_PER_ROW = 800,000: fitted to tseries.create_index, row parallel_servers_target=32
  (elapsed). Split 10% producer (fetch row, extract key, send) and 90% consumer (receive,
  sort insert, build, statistics): an estimate.
- SYS_SHARE = 0.4: kernel share of the servers' CPU (PX messaging IPC, read system calls);
  fitted to the same row's sys column.
- MPKI = 4: last-level cache misses per 1000 instructions of a sort/scan: an estimate.
- Auto DOP's serial estimate: as every parallel statement's (workloads/batch.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.config import param
from sim.db.instance import BLOCK_SIZES
from sim.scenario import MAX_BLOCK_SIZE_32
from sim.units import format_quantity
from sim.db.px import PxStatement
from workloads.batch import MB, ParallelStatement, StatementParams, device_checker, device_of, UNPLACED

ROW_BYTES = 700.0
KEY_BYTES = 60.0
INSTRUCTIONS_PER_ROW = 800_000.0    # fitted: tseries.create_index, parallel_servers_target=32
PRODUCER_SHARE = 0.1
SYS_SHARE = 0.4                     # fitted: tseries.create_index, parallel_servers_target=32, sys
MPKI = 4.0


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): one parallel statement;
# direct-path writes, no commits.
USES = ("parallel", "cpu_count")


@dataclass(frozen=True, kw_only=True)
class Params(StatementParams):
    table_size: float = param("size of the table indexed", kind="size", default="2 GB", positive=True)
    table_device: str | None = param("storage device of the table's tablespace (CUST_0) " + UNPLACED, default=None)
    index_device: str | None = param("storage device of the index's tablespace " + UNPLACED, default=None)
    read_size: float = param("bytes per read of the scan: one block of the table's tablespace", kind="size",
                             default="8 KB", choices=BLOCK_SIZES)   # a tablespace's block size: as db_block_size
    write_size: float = param("bytes per direct-path write of the index", kind="size", default="1 MB",
                              positive=True)


_check_devices = device_checker("table_device", "index_device", whole_blocks=("write_size",),
                                fits=(("table_size", "table_device"),))


def check_scenario(spec, profile, params, src) -> None:
    _check_devices(spec, profile, params, src)
    if spec.os.bits == 32 and params.read_size > MAX_BLOCK_SIZE_32:   # a tablespace block, as database.block_size
        raise src.at("params").at("read_size").bad(format_quantity(params.read_size, "size"),
                                                   "at most 16 KB on a 32-bit operating system (os.bits: 32), "
                                                   "as Oracle allows for any block size")


class Workload(ParallelStatement):
    def __init__(self, system, params: Params):
        super().__init__(system, params, mpki=MPKI, total_bytes=params.table_size)
        self.rows = params.table_size / ROW_BYTES

    def job(self):
        p, inst = self.params, self.instance
        per_mb_rows = MB / ROW_BYTES
        produce = INSTRUCTIONS_PER_ROW * PRODUCER_SHARE * per_mb_rows
        consume_ipm = INSTRUCTIONS_PER_ROW * (1.0 - PRODUCER_SHARE) * per_mb_rows
        names = list(self.system.devices)
        index_device = self.system.devices[device_of(p, "index_device", names)]

        def consume(session, nbytes):
            self.done_bytes += nbytes
            yield session.cpu(consume_ipm * nbytes / MB, SYS_SHARE)

        def finish(session, index, got):
            left = got / ROW_BYTES * KEY_BYTES
            while left > 0:
                n = min(p.write_size, left)
                yield from session.io(index_device, "write", n, None, "direct path write")
                left -= n

        def statement(dop):
            return PxStatement(inst, dop=dop, device=self.system.devices[device_of(p, "table_device", names)],
                               segment_offset=0.0,
                               segment_bytes=p.table_size, read_size=p.read_size,
                               read_event="db file sequential read", message_bytes=MB,
                               produce_instructions_per_mb=produce, consume=consume, finish=finish,
                               sys_share=SYS_SHARE)
        yield from self.run_parallel(p.table_size, self.rows * INSTRUCTIONS_PER_ROW, statement)
