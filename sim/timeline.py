"""A run interval by interval, as `vmstat 10`, `iostat 10` and AWR's snapshots show a real one.

The run's figures are means over the measured time; a timeline shows how they moved within it: a
batch job's phases (create index's scan, then its sort, then its build), RMAN's channels ending one by
one until the largest file's runs alone, a checkpoint's burst of writes. Every run.interval seconds of
simulated time it reads the same counters the Result is made of and keeps what changed.

Watching must not change what it watches: each reading is computed from the counters as they stand,
never by bringing them up to date (which would split a processor-sharing group's integration step and
move its next finish by a rounding), so a run with a timeline gives the same figures as one without.
"""

from __future__ import annotations

from sim.config import OltpsimError
from sim.engine import wake_after
from sim.units import format_quantity


class Timeline:
    """Rows of what changed in each interval of `interval` seconds from start(), and one for the part interval at
    close(). A steady run starts one before its warm-up and again at its measured start, when the counters have
    been reset: the warm-up's rows are kept, flagged, at times before 0 (the measured start)."""

    def __init__(self, system, workload, interval: float):
        self.system, self.workload, self.interval = system, workload, interval
        self.rows: list[dict] = []
        self._beside = False   # (rebase: a background job runs)
        self._callbacks = (self._tick,)
        self._wake = None

    def start(self) -> None:
        """Intervals from now, the counters' zero; the rows so far (a warm-up's) are flagged and timed from now."""
        env = self.system.env
        if self._wake is not None:   # (stale: SimPy's loop pops it and calls nothing)
            self._wake.callbacks = ()
            for row in self.rows:
                row["time_s"] -= env.now - self.t0
                row["warmup"] = True
        self.t0 = self._from = env.now
        self._last = self._reading()
        self._next = 1
        self._wake = wake_after(env, self.interval, self._callbacks)

    def rebase(self) -> None:
        """Intervals from now, still timed from the measured start: the counters have just been reset mid-run (a
        background job starts; close() first, before the reset, for the part interval up to it). Every row says
        from now on whether it is beside the job (beside_job)."""
        for row in self.rows:   # (next to warmup, as the rows beside the job have it: a flag of the row's window)
            rest = {k: row.pop(k) for k in list(row) if k not in ("time_s", "span_s", "warmup")}
            row.update({"beside_job": False, **rest})
        self._beside = True
        self._wake.callbacks = ()
        self._from = self.system.env.now
        self._last = self._reading()
        self._next = 1
        self._wake = wake_after(self.system.env, self.interval, self._callbacks)

    def _tick(self, _wake) -> None:
        self._row()
        self._next += 1
        # (from the start, not now + interval: a sum of intervals drifts)
        self._wake = wake_after(self.system.env, self._from + self._next * self.interval - self.system.env.now,
                                self._callbacks)

    def close(self) -> None:
        """The last, part interval, up to now (none if an interval ended exactly now)."""
        if self.system.env.now > self._last["t"]:
            self._row()

    def _reading(self) -> dict:
        """The counters since their last reset, as they stand now (read-only)."""
        s, w = self.system, self.workload
        busy, sys, issue = s.cpu.areas_now()
        devices = {}
        for name, dev in s.devices.items():
            disks = getattr(dev, "disks", [dev])
            devices[name] = (dev.ios, dev.bytes, sum(d.util.area_now() for d in disks) / len(disks))
        return {"t": s.env.now, "busy": busy, "sys": sys, "issue": issue, "runq": s.dispatcher.run_queue_area_now(),
                "done": w.completed if w.kind == "steady" else w.progress(), "devices": devices,
                "waits": {k: (st.waits, st.time) for k, st in s.instance.waits.events.items()}}

    def _row(self) -> None:
        now, last = self._reading(), self._last
        span = now["t"] - last["t"]
        strands = self.system.cpu.cpu_count * span
        busy, sys = now["busy"] - last["busy"], now["sys"] - last["sys"]
        row = {"time_s": now["t"] - self.t0, "span_s": span, "warmup": False,
               **({"beside_job": True} if self._beside else {})}
        if self.workload.kind == "steady":   # completions in the unit of the run's TPM, per minute
            row["tpm"] = 60.0 * (now["done"] - last["done"]) / span
        else:
            row["done_pct"] = 100.0 * now["done"]
        row.update(run_queue=(now["runq"] - last["runq"]) / span, cpu_usr=100.0 * (busy - sys) / strands,
                   cpu_sys=100.0 * sys / strands, cpu_idle=100.0 * max(0.0, 1.0 - busy / strands),
                   core_utilisation_mean=100.0 * (now["issue"] - last["issue"]) / (
                       span * self.system.cpu.spec.cores * self.system.cpu.spec.pipelines_per_core),
                   db_cpu_s=busy)
        for name, (ios, nbytes, util) in now["devices"].items():
            ios0, bytes0, util0 = last["devices"][name]
            row[f"device.{name}.iops"] = (ios - ios0) / span
            row[f"device.{name}.mb_per_s"] = (nbytes - bytes0) / span / 2**20
            row[f"device.{name}.util_pct"] = 100.0 * (util - util0) / span
        for event, (waits, time) in now["waits"].items():   # AWR's snapshots: the waits that ended in the interval
            waits0, time0 = last["waits"].get(event, (0, 0.0))
            if waits > waits0:
                row[f"wait.{event}.waits"] = waits - waits0
                row[f"wait.{event}.time_s"] = time - time0
        self.rows.append(row)
        self._last = now


def plot(result, path=None, events: int = 5):
    """The timeline as four panels over time: throughput (or a batch job's progress); vmstat's us and sy with its
    run queue; each device's %b; DB CPU and the `events` wait events with the most time, in sessions (their time
    per second of the interval, as Enterprise Manager's Top Activity draws average active sessions). Returns
    the matplotlib Figure; saves it to `path` if given."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    frame = result.timeline_frame()
    if frame.empty:
        raise OltpsimError(f"{result.label}: no timeline to plot; give run.interval (e.g. --set run.interval='10 s')")
    span = frame["span_s"].to_numpy()
    t = np.append(frame.index.to_numpy() - span, frame.index[-1])   # each interval's start, and the last one's end

    def steps(values) -> np.ndarray:   # an interval's value held from its start to its end
        values = np.asarray(values, dtype=float)
        return np.append(values, values[-1])

    fig, axes = plt.subplots(4, 1, figsize=(9, 10), sharex=True)
    steady = "tpm" in frame
    axes[0].plot(t, steps(frame["tpm" if steady else "done_pct"]), drawstyle="steps-post")
    axes[0].set_ylabel("TPM" if steady else "done %")
    axes[0].set_ylim(bottom=0)
    axes[1].stackplot(t, steps(frame["cpu_usr"]), steps(frame["cpu_sys"]), labels=["us", "sy"], step="post")
    axes[1].set_ylabel("% of strands")
    axes[1].set_ylim(0, 100)
    queue = axes[1].twinx()
    queue.plot(t, steps(frame["run_queue"]), color="black", drawstyle="steps-post")
    queue.set_ylabel("run queue r (line)")
    queue.set_ylim(0, max(1.0, 1.1 * frame["run_queue"].max()))
    axes[1].legend(loc="upper left")
    for c in (c for c in frame if c.endswith(".util_pct") and frame[c].max() > 0.0):
        axes[2].plot(t, steps(frame[c]), drawstyle="steps-post", label=c[7:-9])
    axes[2].set_ylabel("device %b")
    axes[2].set_ylim(0, 100)
    if axes[2].lines:
        axes[2].legend(loc="upper left")
    waits = {c[5:-7]: frame[c] / span for c in frame if c.startswith("wait.") and c.endswith(".time_s")}
    top = sorted(waits, key=lambda e: -waits[e].sum())[:events]
    axes[3].stackplot(t, steps(frame["db_cpu_s"] / span), *(steps(waits[e]) for e in top), labels=["DB CPU", *top],
                      step="post")
    axes[3].set_ylabel("sessions")
    axes[3].legend(loc="upper left", fontsize="small")
    axes[3].set_xlabel("simulated time from the measured start (s)")
    if frame["warmup"].any():   # (a steady run's: discarded from its figures)
        for ax in axes:
            ax.axvspan(t[0], 0.0, color="grey", alpha=0.15, lw=0)
        axes[0].text(t[0], 0.0, " warm-up", va="bottom", color="grey")
    job = result.extra.get("background")
    if job and result.elapsed is not None:   # the background job's span, beside the workload
        for ax in axes:
            ax.axvspan(job["started_s"], job["started_s"] + result.elapsed, color="tab:orange", alpha=0.12, lw=0)
        axes[0].text(job["started_s"], 0.0, f" {job['workload']}", va="bottom", color="tab:orange")
    # (run.interval, not the first row's span: a warm-up shorter than an interval gives a part one first)
    every = format_quantity(result.inputs["run.interval"], "time")
    axes[0].set_title(f"{result.label} ({result.profile}, {result.workload}): every {every}")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
