"""Result: what one run shows, in the users' language, as data (dict / pandas)."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

from sim.config import dotted, suggest


# A batch job's full strands (mpstat) are named when the rest idle: its processes (RMAN channels, PX servers) each
# keep a strand busy, and its parallelism, not the strands, bounds it. The dispatcher fills the lowest idle strand
# (and reuses the one freed last), so the k busiest are busy about while k processes run: k full strands are about
# k processes always on a strand.
# Under a load of users (who would keep as many busy however many strands there were) it says nothing of the kind.
SERIAL_SKEW = 20.0   # points the full strands' mean is above the mean of all
SERIAL_BUSY = 90.0   # % busy at least


@dataclass
class Result:
    label: str
    profile: str
    workload: str
    inputs: dict[str, Any]
    status: str = "ok"                 # ok | timeout (a batch job cut at run.max_time) | out_of_memory | error
    message: str = ""
    # throughput (steady-state runs) or elapsed time (batch jobs)
    tpm: float | None = None
    throughput_per_s: float | None = None
    tpm_half_width: float | None = None  # 95% CI half-width, same unit as tpm
    elapsed: float | None = None
    # CPU, as vmstat / mpstat / corestat show it (percent); None where the run measured nothing (out of memory)
    cpu_idle: float | None = None
    cpu_usr: float | None = None
    cpu_sys: float | None = None
    run_queue: float | None = None
    core_utilisation: list[float] = field(default_factory=list)
    strand_utilisation: list[float] = field(default_factory=list)
    # AWR-like
    top_events: list[dict] = field(default_factory=list)
    response: dict[str, dict] = field(default_factory=dict)
    devices: dict[str, dict] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    # run.interval's rows: the figures of each interval (sim/timeline.py), flat as flat()'s are
    timeline: list[dict] = field(default_factory=list)
    # provenance
    seed: int = 0
    simulated_time: float = 0.0
    measured_time: float = 0.0
    wall_time: float = 0.0
    events: int = 0

    @property
    def cpu(self) -> tuple[float, float, float]:
        return (self.cpu_idle, self.cpu_usr, self.cpu_sys)

    @property
    def cmt(self) -> bool:
        """A chip multithreading CPU (UltraSPARC T1/T2: 4 and 8 strands a core), whose pipelines corestat reads."""
        return bool(self.core_utilisation) and len(self.strand_utilisation) >= 4 * len(self.core_utilisation)

    @property
    def paging_bound(self) -> bool:
        """No transaction completed while part of every working set was on swap: thrashing, which a longer run
        or less thinking would not mend (fewer users or more memory would)."""
        return self.tpm == 0 and (self.extra.get("memory") or {}).get("working_set_paged_out_pct", 0.0) > 0.0

    def busiest(self) -> list[tuple[str, float]]:
        """The shared resources by utilisation (%), busiest first: if each one's work per transaction stays fixed,
        the one nearest 100% bounds the throughput and more load only queues there (operational analysis's
        bottleneck; a mechanism that changes the work, as group commit does LGWR's, can move the bound). The CPU
        is its strands, and on a CMT chip (4 or more strands a core) its pipelines too: elsewhere the per-core
        figure is the share of cycles that issue, no capacity. In a batch job, strands nearly full while the rest
        idle ('3 strands full') are its processes each always on a strand (RMAN channels compressing their files,
        PX servers): more strands do not speed them up, more processes might. LGWR is one process, busy on a strand or writing the log (its queue at
        a device it shares included; not its wait for a strand or a checkpoint): near 100% it bounds the commits
        once group commit (more commits in each write) no longer keeps up. Those under 0.5% are left out."""
        x, busy = self.extra, []
        if self.strand_utilisation:
            mean = sum(self.strand_utilisation) / len(self.strand_utilisation)
            busy.append(("strands (mpstat)", mean))
            full = [u for u in self.strand_utilisation if u >= SERIAL_BUSY]
            # (a batch job's alone: beside a load of users, as under one, full strands say nothing of the kind)
            if self.elapsed is not None and self.tpm is None and full and sum(full) / len(full) > mean + SERIAL_SKEW:
                busy.append((f"{len(full)} strand{'s' * (len(full) > 1)} full", sum(full) / len(full)))
        if self.cmt:
            busy.append(("pipelines (corestat)", sum(self.core_utilisation) / len(self.core_utilisation)))
        if "memory_bandwidth_util_pct" in x:
            busy.append(("memory bandwidth", x["memory_bandwidth_util_pct"]))
        if "lgwr_busy_pct" in x:
            busy.append(("LGWR", x["lgwr_busy_pct"]))
        tp = x.get("tp_monitor")
        if tp and tp["sessions"]:
            busy.append(("TP monitor sessions", 100.0 * tp["sessions_busy"] / tp["sessions"]))
        for n, d in self.devices.items():
            busy += [(f"{n} %b", d.get("util_pct", 0.0)), (f"{n} controller", d.get("controller_util_pct", 0.0))]
        return sorted(((k, v) for k, v in busy if v >= 0.5), key=lambda kv: -kv[1])

    def metric(self, name: str) -> Any:
        """A named figure: a field, 'cpu' as [idle, usr, sys], a figure of a transaction type, wait event or device
        as flat() names it (rt.new_order.p90), or a key of `extra`."""
        if name == "cpu":
            return None if self.cpu_idle is None else [self.cpu_idle, self.cpu_usr, self.cpu_sys]
        if name == "throughput":
            return self.tpm
        if hasattr(self, name):
            return getattr(self, name)
        if name.startswith(BY_NAME_PREFIXES):   # a transaction type's, an event's, a device's: as flat() names it
            return self.flat().get(name)
        return self.extra.get(name)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        """Standard JSON: a figure that is not a number (NaN, an infinite interval) is null, which
        every JSON reader takes; Python's NaN/Infinity tokens are not JSON."""
        return json.dumps(finite(self.to_dict()), indent=2, default=float, allow_nan=False)

    def flat(self) -> dict[str, Any]:
        """One flat row: inputs and scalar outputs as columns (for pandas, CSV, Parquet), with
        every figure the text report prints. Times in seconds unless the name says ms."""
        row = {f"in.{k}": v for k, v in self.inputs.items()}
        for k, v in self.to_dict().items():
            if k in ("inputs", "core_utilisation", "strand_utilisation", "top_events", "response", "devices", "extra",
                     "timeline"):
                continue
            row[k] = v
        row.update({k: v for k, v in dotted("extra", self.extra).items()   # lists (e.g. level_table) left out
                    if isinstance(v, (int, float, str, bool)) or v is None})
        if self.core_utilisation:
            row["core_utilisation_mean"] = sum(self.core_utilisation) / len(self.core_utilisation)
        if self.strand_utilisation:
            row["strand_utilisation_mean"] = sum(self.strand_utilisation) / len(self.strand_utilisation)
        ranked = self.busiest()   # the report's busiest line's first: its name, and its utilisation as a figure
        row["busiest"], row["busiest_pct"] = ranked[0] if ranked else ("", 0.0)
        for ev in self.top_events:   # every event waited on (the text report prints the top 5)
            for k in STATS["wait"]:
                row[f"wait.{ev['event']}.{k}"] = ev[k]
        for t, r in self.response.items():
            for k, v in r.items():
                row[f"rt.{t}.{k}"] = v
        for name, d in self.devices.items():
            for k, v in d.items():
                row[f"device.{name}.{k}"] = v
        return row

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([self.flat()])

    def timeline_frame(self):
        """The timeline (run.interval) as pandas, one row per interval indexed by its end (s from the measured
        start); an event with no wait ending in an interval has 0 there."""
        import pandas as pd

        frame = pd.DataFrame(self.timeline)
        if frame.empty:
            return frame
        waits = [c for c in frame.columns if c.startswith("wait.")]
        frame[waits] = frame[waits].fillna(0)
        return frame.set_index("time_s")


# The figures flat() gives every run, whatever its workload (core/strand utilisation as their means), and
# the prefixes of those that depend on the run: a workload's own figures (extra.iops), wait events
# (wait.log file sync.time_s), response times (rt.new_order.p90) and devices (device.array.iops).
FIGURES = ("tpm", "throughput_per_s", "tpm_half_width", "elapsed", "cpu_idle", "cpu_usr", "cpu_sys", "run_queue",
           "core_utilisation_mean", "strand_utilisation_mean", "busiest_pct", "simulated_time", "measured_time",
           "wall_time", "events")
FIGURE_PREFIXES = ("extra.", "wait.", "rt.", "device.")
BY_NAME_PREFIXES = ("wait.", "rt.", "device.")   # the figures of something the run names (NAME.STAT)
# The figures of each wait event, transaction type and device, whatever the run (wait.NAME.STAT): the events' of
# flat(), the response times of workloads/tpcc.py, the devices of sim/run.py (a test holds them to a run's)
STATS = {"wait": ("waits", "time_s", "avg_ms", "pct_call_time"),
         "rt": ("count", "mean", "mean_ci95", "p50", "p90", "p99"),
         "device": ("iops", "reads_per_s", "writes_per_s", "mb_per_s", "util_pct", "avg_service_ms", "avg_response_ms", "drive_ops_per_s",
                      "controller_util_pct")}


def stat_problem(name: str) -> str | None:
    """What is wrong with wait.NAME.STAT, rt.NAME.STAT or device.NAME.STAT whose STAT no event, type or device
    has (None: nothing, or not such a figure): known before any run."""
    prefix, _, rest = name.partition(".")
    stat = rest.rpartition(".")[2]
    if prefix not in STATS or stat in STATS[prefix]:
        return None
    if prefix == "device" and stat == "write_cache":   # (a column of a device behind a write-back cache)
        return "write_cache is whether the device has a write-back cache (true), not a figure with a number"
    of = {"wait": "a wait event", "rt": "a transaction type", "device": "a device"}[prefix]
    return (f"no figure {stat!r}{suggest(stat, STATS[prefix])} of {of}; expected {prefix}.NAME.STAT, STAT one of "
            f"{', '.join(STATS[prefix])}")


def figure_unit(name: str) -> str:
    """The unit of a figure as flat() gives it, from its name: s, ms, %, TPM, tx/s, MB/s, IOPS, or '' (a count, a
    ratio). Times are in seconds unless the name says ms."""
    last = name.rsplit(".", 1)[-1]
    if name in ("tpm", "tpm_half_width", "extra.tpm_alone", "extra.tpm_alone_half_width"):   # (alone: before a job)
        return "TPM"
    if name == "throughput_per_s":
        return "tx/s"
    # (or a mapping's of times in ms: extra.response_alone_ms.new_order)
    if last.endswith("_ms") or (name.startswith("extra.") and name.rsplit(".", 2)[-2].endswith("_ms")):
        return "ms"
    if name in ("elapsed", "simulated_time", "measured_time", "wall_time") or (last.endswith("_s") and not
                                                                               last.endswith("_per_s")):
        return "s"   # (wait.EVENT.time_s, extra.px_queue_time_s; not the rates)
    if name.startswith("rt.") and (last in ("mean", "mean_ci95") or (last[:1] == "p" and last[1:].isdigit())):
        return "s"
    if name.startswith("cpu_") or last.endswith(("_pct", "pct_call_time")) or name.endswith("utilisation_mean"):
        return "%"
    if last == "mb_per_s":
        return "MB/s"
    if last in ("iops", "max_iops"):
        return "IOPS"
    return ""


def shown_unit(name: str) -> tuple[float, str]:
    """(scale, unit) a figure is printed in: figure_unit's, but a response time in ms, as the report prints them
    (flat() keeps seconds)."""
    unit = figure_unit(name)
    return (1000.0, "ms") if name.startswith("rt.") and unit == "s" else (1.0, unit)


def known_figure(name: str) -> bool:
    """Whether `name` can be a figure of a run: one every run has, or one under a prefix whose
    names only the run knows (checked against the results once they exist)."""
    return name in FIGURES or any(name.startswith(p) and len(name) > len(p) for p in FIGURE_PREFIXES)


def is_number(v: Any) -> bool:
    """A figure that is a number: finite, not a flag (True is 1 to Python)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# a figure whose 95% half-width the run gives beside it (the TPM's from batch means, a mean response time's)
HALF_WIDTH = {"tpm": "tpm_half_width", "extra.tpm_alone": "extra.tpm_alone_half_width"}   # (alone: before a job)


def half_width(row: dict, name: str) -> float | None:
    """The figure's 95% half-width where the run gives one (a flat() row): the TPM's, a mean response time's
    (rt.T.mean_ci95)."""
    if name in HALF_WIDTH:
        hw = row.get(HALF_WIDTH[name])
    elif name.startswith("rt.") and name.endswith(".mean"):
        hw = row.get(name + "_ci95")
    else:
        return None
    return hw if is_number(hw) else None


def finite(x: Any) -> Any:
    """x with every float that is not a number (NaN, an infinite interval) as None, JSON's null, all the way down."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x
