"""CALIBRATE_IO: asynchronous random block reads into process memory, ramped to a knee.

DBMS_RESOURCE_MANAGER.CALIBRATE_IO(num_physical_disks, max_latency) reads random
database blocks from the data files with asynchronous I/O into the process heap and never
looks at them (Closson 2015). It reports max_iops: the highest rate sustained with an
average latency within max_latency. How it loads the storage is not documented; this
model does what the documented parameters and Closson's observations suggest:

- the load is stepped: level k keeps num_physical_disks x 2^k reads in flight (so a small
  num_physical_disks needs more levels and a longer run, as Closson saw), each level for
  `level_time`;
- it stops at the first level whose average latency exceeds max_latency, or that raises
  IOPS by less than KNEE_GAIN over the previous one (the storage's knee), or when the
  reads in flight reach its concurrency limit;
- the concurrency limit is a hypothesis for Closson's "+13% after adding a tablespace,
  back within 1% after taking it offline": the reads are spread file by file, at most
  IOS_PER_FILE in flight per online data file, so more files allow more reads in flight.
  It raises IOPS only when the storage is not already at its knee.

The work is spread over min(cpu_count, in-flight reads) processes, each with its share of the
reads in flight: CALIBRATE_IO starts one ora_cs process per logical CPU, each doing
"large-batch asynchronous I/O" (Closson 2012, kevinclosson.net, "SLOB Is Not An Unrealistic
Platform Performance Measurement Tool - Part III", ps and strace on a 2s8c16t host). A process
submits its share as one batch and reaps the whole batch before the next (an assumption: the
strace shows batches, the post does not say how they are reaped), so a batch of k reads takes
the slowest of k: fewer processes mean bigger batches and more time per read at the same
reads in flight. Each read costs the asynchronous-read system calls only
(ASYNC_IO_INSTRUCTIONS in workloads/slob.py).

Constants: KNEE_GAIN 5% and IOS_PER_FILE 32 (estimates; not fitted).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.config import Source, param
from sim.db.instance import MAX_DATAFILES
from sim.db.physical_io import BatchReader
from workloads.slob import ASYNC_IO_INSTRUCTIONS, build_read_paths, check_data_fits, data_device, io_report
from workloads.tpcc import run_server_code

KNEE_GAIN = 0.05
IOS_PER_FILE = 32


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): reads into process memory: no
# buffer cache, no commits, no PX servers.
USES = ("cpu_count",)


@dataclass(frozen=True, kw_only=True)
class Params:
    num_physical_disks: int = param("approximate number of physical disks (CALIBRATE_IO's first argument)",
                                    default=1, minimum=1)
    max_latency: float = param("maximum tolerable latency of a block read (second argument, in ms there)",
                               kind="time", default="20 ms", positive=True)
    datafiles: int = param("online data files the reads are spread over", default=5, minimum=1,
                           maximum=MAX_DATAFILES)   # (a database's most: sim/db/instance.py)
    database_size: float = param("size of the data files read", kind="size", default="1 TB", positive=True)
    level_time: float = param("simulated time of one load level", kind="time", default="0.5 s", positive=True)
    device: str | None = param("storage device holding the data files (omit: the first flash array, else the "
                               "first device)", default=None)


def check_scenario(spec, profile, params: Params, src: Source) -> None:
    names = profile.storage.device_names()
    if params.device is not None and params.device not in names:
        raise src.at("params").at("device").bad(params.device, "one of the profile's devices: " + ", ".join(names))
    check_data_fits(spec, profile, params.device, params.database_size, "database_size", src)


class Workload:
    kind = "batch"
    primary = "iops"      # its max_iops

    def __init__(self, system, params: Params):
        self.system, self.params = system, params
        self.env = system.env
        self.tenant = system.instance.tenant   # (whose sessions' CPU is its DB CPU, beside a workload)
        run_server_code(system)
        self.paths = build_read_paths(system, data_device(system.profile, params.device), params.database_size,
                                      "calibrate_io")
        self.limit = params.datafiles * IOS_PER_FILE
        self.done = self.env.event()
        self.levels: list[dict] = []
        self.slaves: list[BatchReader] = []
        self.completed = 0

    def start(self) -> None:
        self.env.process(self._calibrate())

    def progress(self) -> float:
        return 1.0 if self.done.triggered else min(0.99, len(self.levels) / 16.0)

    def _process(self, slave: BatchReader):
        while slave.slots:                      # a slave retires when its share drops to 0
            n = yield from slave.next_batch()   # (not `+=`: other slaves add while this one waits)
            self.completed += n

    def _set_in_flight(self, target: int) -> None:
        """Spread `target` reads in flight over the slaves, adding slaves as needed."""
        want = min(self.system.instance.cpu_count, target)
        while len(self.slaves) < want:
            slave = BatchReader(self.paths, self.system.instance.new_session(), "Disk file I/O Calibration",
                                ASYNC_IO_INSTRUCTIONS)
            self.slaves.append(slave)
            self.env.process(self._process(slave))
        base, extra = divmod(target, len(self.slaves))
        for i, slave in enumerate(self.slaves):
            slave.slots = base + (1 if i < extra else 0)

    def _latency_sums(self) -> tuple[float, int]:
        """Seconds from submission to completion summed over the reads completed, and their count."""
        return sum(s.read_time for s in self.slaves), sum(s.reads_done for s in self.slaves)

    def _calibrate(self):
        p, env = self.params, self.env
        in_flight = p.num_physical_disks
        while True:
            target = min(in_flight, self.limit)
            self._set_in_flight(target)
            yield env.timeout(p.level_time / 5)          # let the level settle
            n0, lat0, cpu0 = self.completed, self._latency_sums(), self.system.instance.db_cpu(self.tenant)
            yield env.timeout(p.level_time)
            iops = (self.completed - n0) / p.level_time
            lat1 = self._latency_sums()
            latency = (lat1[0] - lat0[0]) / max(lat1[1] - lat0[1], 1)
            cpu = (self.system.instance.db_cpu(self.tenant) - cpu0) / p.level_time
            self.levels.append({"in_flight": target, "iops": iops, "latency_ms": 1000.0 * latency,
                                "db_cpu_per_s": cpu})
            # (a level that completed no read, shorter than a read on slow storage, has no rate to gain over and
            # shows no knee: the ramp goes on)
            prev = self.levels[-2]["iops"] if len(self.levels) > 1 else 0.0
            gain = iops / prev - 1.0 if prev > 0 else 1.0
            if latency > p.max_latency or gain < KNEE_GAIN or target >= self.limit:
                break
            in_flight *= 2
        self._set_in_flight(0)
        self.done.succeed()

    def report(self, span: float) -> dict:
        ok = [lv for lv in self.levels if lv["latency_ms"] <= 1000.0 * self.params.max_latency]
        best = max(ok, key=lambda lv: lv["iops"]) if ok else None
        out = io_report(self.system, self.paths, self.completed, span, "Disk file I/O Calibration", self.tenant)
        # the headline figures are max_iops's level's, as CALIBRATE_IO reports them: the CPU beside them too
        # (the job's mean had put 1.6 DB CPU s/s beside 450,780 IOPS that took 4.1; helper probe)
        out.update({
            "iops": best["iops"] if best else 0.0,            # CALIBRATE_IO's max_iops
            "actual_latency_ms": best["latency_ms"] if best else float("nan"),
            "db_cpu_per_s": best["db_cpu_per_s"] if best else float("nan"),
            "iops_per_db_cpu": best["iops"] / best["db_cpu_per_s"] if best and best["db_cpu_per_s"] > 0
            else float("nan"),
            "mean_iops": self.completed / span if span > 0 else 0.0,
            "levels": len(self.levels),
            "max_latency_ms": 1000.0 * self.params.max_latency,
            "level_table": self.levels,
        })
        out["iops_per_core"] = out["iops"] / self.system.profile.cpu.cores
        return out
