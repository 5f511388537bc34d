"""SQL*Loader: conventional path, direct path, and parallel direct path with N sessions.

Each session is a sqlldr client and its server process taking turns on one input slice
(the input file is cut into `sessions` parts, as the paper's parallel load did): the client
reads a buffer of input and parses it into rows, the server loads them. So one session keeps
about one strand busy, and a single session is bound by one T2 strand's speed.

- conventional: array INSERTs through the buffer cache, committed a round (BUFFER) at a time;
  DBWR writes the dirty blocks later (asynchronously). The rows' redo goes into the log buffer as
  they are inserted (the round's CPU in steps of LGWR's trigger, sim/db/redo.py), LGWR writing it
  meanwhile in writes no larger than the buffer (sim/db/redo.py), so the commit waits ('log file
  sync') for the round's last redo only. The table: an asynchronous write of the round's bytes to
  table_device, at most WRITE_SLOTS behind: the buffer cache's size and DBWR's settings do not
  enter, so they are refused (USES).
- direct: the server formats whole blocks in its own memory and writes them straight to the
  datafiles (asynchronous direct path writes); no buffer cache, no redo for the data.
- parallel direct: `sessions` direct loads at once into the same table (APPEND), each over its
  own slice of the input and its own extents.

Constants (each with its source or the single published row it was fitted to):
- CONVENTIONAL_INSTRUCTIONS_PER_MB = 8.15e7 (client parse + INSERT, ~78 instructions per input
  byte): fitted to tseries.sqlldr, row conventional (elapsed).
- DIRECT_INSTRUCTIONS_PER_MB = 5.3e7 (client parse + block formatting): fitted to tseries.sqlldr,
  row direct (elapsed).
- REDO_PER_BYTE = 1.1: conventional insert redo per byte loaded (row image plus change-vector
  headers); estimate.
- SYS_SHARE = 0.08: kernel share (read/write system calls, SQL*Net between client and server);
  estimate.
- MPKI = 2: parsing and formatting stream through memory; estimate.
- BUFFER = 16 MB: input per round (sixteen 1 MB READSIZE/BINDSIZE arrays; the unit of simulated work,
  one commit per round); estimate.
- WRITE_SLOTS = 2: a session's rounds written but not yet on disk. Direct: its asynchronous direct
  path writes, at most 2 in flight (Oracle's default of 2 slots for direct path I/O, as for reads in
  sim/db/physical_io.py; estimate for writes), waited for ('direct path write') when both are taken
  and at the end of the load. Conventional: DBWR writes the array's blocks behind the load; a session
  more than 2 rounds ahead of it waits ('free buffer waits'), and the load ends without waiting for
  DBWR's last writes (an estimate standing for the buffer cache's dirty limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import simpy

from sim.config import Source, param
from sim.db.physical_io import ReadAhead, WriteBehind
from sim.units import format_quantity
from workloads.batch import MB, UNPLACED, BatchWorkload, check_fits, device_checker, device_of

CONVENTIONAL_INSTRUCTIONS_PER_MB = 8.15e7  # fitted: tseries.sqlldr, conventional
DIRECT_INSTRUCTIONS_PER_MB = 5.3e7         # fitted: tseries.sqlldr, direct
REDO_PER_BYTE = 1.1
SYS_SHARE = 0.08
MPKI = 2.0
BUFFER = 16.0 * MB
WRITE_SLOTS = 2


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): the conventional path commits
# each array (LGWR); the session writes the table to its device on either path (no buffer cache).
USES = ("redo",)


def idle(params) -> dict[str, str]:
    """The parts of USES these parameters leave idle, each with the parameter that says so."""
    return {"redo": "direct: true (a direct path load writes no redo for its data and commits nothing)"} \
        if params.direct else {}


@dataclass(frozen=True, kw_only=True)
class Params:
    data_size: float = param("size of the input datafile", kind="size", default="725 GB", positive=True)
    direct: bool = param("direct path load (direct=true)", default=False)
    parallel: bool = param("parallel direct path (parallel=true): several sessions load one table", default=False)
    sessions: int = param("concurrent sqlldr sessions, each over its slice of the input", default=1, minimum=1)
    input_device: str | None = param("storage device holding the input file (omit: a device other than the "
                                     "table's, where the profile has one)", default=None)
    table_device: str | None = param("storage device of the table's tablespace " + UNPLACED, default=None)

    def check(self, src: Source) -> None:
        if self.sessions > 1 and not (self.direct and self.parallel):
            raise src.at("sessions").bad(self.sessions, "1 unless direct and parallel are both true: only "
                                         "parallel direct path loads run concurrent sessions into one table")
        if self.parallel and not self.direct:
            raise src.at("parallel").bad(self.parallel, "false unless direct is true (parallel applies to direct path)")


_check_devices = device_checker("input_device", "table_device")


def devices(params: Params, names: list[str]) -> tuple[str, str]:
    """(input, table) devices: the table where named, else on the database storage; the input file where
    named, else on another device where there is one (a flat file is staged off the database's drives, as
    the paper's was on the internal disks), else beside the table."""
    table = device_of(params, "table_device", names)
    if params.input_device is not None:
        return params.input_device, table
    return next((n for n in names if n != table), table), table


def check_scenario(spec, profile, params: Params, src: Source) -> None:
    """The input file must fit its device, and so must the loaded table, which is as large as its input here
    (each input byte is written to the table's device: _session); on one device, both together."""
    _check_devices(spec, profile, params, src)
    size = params.data_size
    input_device, table_device = devices(params, profile.storage.device_names())
    if input_device == table_device:
        check_fits(spec, profile, src, "data_size", 2 * size, table_device,
                   f"that holds both the input file and the table loaded from it ({format_quantity(2 * size, 'size')}"
                   "; the table is as large as its input: each input byte is written to it)", value=size)
        return
    key = src.at("params").at("input_device").path   # (beside a workload: background.params.input_device)
    chosen = "" if params.input_device is not None else f" (the first device other than the table's: {key} places " \
                                                           "it on another)"
    check_fits(spec, profile, src, "data_size", size, input_device, f"that holds the input file{chosen}")
    check_fits(spec, profile, src, "data_size", size, table_device, "that holds the table loaded from it "
               "(as large as its input: each input byte is written to the table)")


class Workload(BatchWorkload):
    def __init__(self, system, params: Params):
        super().__init__(system, params, mpki=MPKI, total_bytes=params.data_size)

    def job(self):
        p = self.params
        share = p.data_size / p.sessions
        procs = [self.env.process(self._session(self.instance.new_session(), i * share, share))
                 for i in range(p.sessions)]
        yield simpy.AllOf(self.env, procs)

    def _session(self, session, start: float, size: float):
        p = self.params
        input_device, table_device = devices(p, list(self.system.devices))
        table = self.system.devices[table_device]
        ipm = DIRECT_INSTRUCTIONS_PER_MB if p.direct else CONVENTIONAL_INSTRUCTIONS_PER_MB
        # the client's input slice, read ahead of the parser by the OS; while a buffer has not arrived the
        # server waits on its client, which AWR names 'SQL*Net more data from client'
        src = ReadAhead(session, self.system.devices[input_device], start, size, BUFFER,
                        "SQL*Net more data from client")
        writes = WriteBehind(session, table, WRITE_SLOTS, "direct path write" if p.direct else "free buffer waits")
        lgwr = self.instance.lgwr
        while src.left > 0:
            n = yield from src.next_buffer()
            if p.direct:
                yield session.cpu(ipm * n / MB, SYS_SHARE)
            else:   # the rows' redo goes into the log buffer as they are inserted, LGWR writing it meanwhile: the
                # round in steps of at least LGWR's trigger (a third of the buffer, at most 1 MB), each its CPU then
                # its redo: each step starts a write, and fits while LGWR writes the last, however large the buffer
                steps = max(1, math.floor(n * REDO_PER_BYTE / lgwr.flush_at))
                for _ in range(steps):
                    yield session.cpu(ipm * n / MB / steps, SYS_SHARE)
                    yield from session.redo(n * REDO_PER_BYTE / steps)
            # direct: the server's asynchronous direct path write of the blocks it formatted; conventional: the
            # array's blocks, which DBWR writes behind the load (no buffer cache here: WRITE_SLOTS rounds of them)
            yield from writes.write(n)
            if not p.direct:
                yield from session.commit(0.0)   # the round's commit: once its last redo is written
            self.done_bytes += n
        if p.direct:
            yield from writes.drain()   # the load is done once its blocks are in the datafiles
