"""Text reports in the users' language: throughput, vmstat, corestat, mpstat, AWR, iostat."""

from __future__ import annotations

import math

from sim.config import OltpsimError, declared, dotted, format_setting
from sim.result import Result, is_number
from sim.units import format_quantity


def table(headers: list[str], rows: list[list], align: str | None = None) -> str:
    """Columns padded to their widest cell under a dashed rule; align 'l'/'r' per column
    (default: the first left, the rest right)."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    align = align or "l" + "r" * (len(headers) - 1)
    out = []
    for j, r in enumerate(cells):
        out.append("  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align)))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


# Outcomes that end before any figure is measured: nothing but the outcome to report.
NO_FIGURES = ("out_of_memory", "error")
LGWR_FULL = 90.0     # % busy: LGWR near the end of what group commit can carry
DEVICE_BUSY = 50.0   # %b: a device whose queue a log write finds others in


def figure(x: float) -> str:
    """A figure as people read it: thousands separated from 100 up, three significant digits below."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _ms(x: float | None) -> str:
    return "" if x is None else f"{1000 * x:.2f}"


def _pipeline_tool(r: Result) -> str:
    # corestat reads the pipeline counters of CMT chips (UltraSPARC T1/T2: 4 and 8 strands a core); elsewhere
    # (one strand a core, or a Xeon's two hyper-threads under Linux) it does not exist, and the same figure is
    # the share of cycles that issue (cpustat's, perf's counters).
    return "corestat" if r.cmt else "cycles issuing, cpustat-like"


def settings(r: Result) -> list[tuple[str, str, bool]]:
    """The run's inputs as --set would write them (workload parameters by their plain names), each with whether
    it is at its declared default: (key, value, default)."""
    import workloads
    from sim.scenario import ScenarioSpec

    try:
        params = workloads.get(r.workload).Params
    except OltpsimError:   # a Result of a scenario that never resolved
        return []
    sections = [(k, d, m) for k, d, m in declared(ScenarioSpec) if k.split(".")[0] in ("database", "os", "run")]
    out = [(k, str(v), False) for k, v in r.inputs.items() if k.startswith("hardware.")]
    declared_keys = [(f"params.{k}", d, m) for k, d, m in declared(params)] + sections
    job = r.inputs.get("background.workload")
    if job is not None:   # a background job: its name, then its parameters
        out.append(("background.workload", job, False))
        declared_keys += [(f"background.params.{k}", d, m) for k, d, m in declared(workloads.get(job).Params)]
    for key, default, meta in declared_keys:
        leaves = dotted(key, default) if isinstance(default, dict) else {key: default}
        for k, d in leaves.items():
            if k in r.inputs:
                out.append((k.removeprefix("params."), format_setting(r.inputs[k], meta), r.inputs[k] == d))
    return out


def _cpi(x: dict) -> str:
    return (f"{x['cpi']:.2f} = issue {x['cpi_issue']:.2f} + data stalls {x['cpi_data_stall']:.2f} "
            f"+ other {round(x['cpi_other'], 2) + 0.0:.2f}")


def _changed_settings(r: Result) -> list[tuple[str, str]]:
    """The run's inputs that are not at their declared defaults, as --set would write them (a long list cut short:
    the datafiles of a backup of a workload's 1-TB database are 33)."""
    return [(k, _short(v)) for k, v, default in settings(r) if not default and k != "run.seed"]   # (seed: the title's)


def _short(value: str, items: int = 4) -> str:
    parts = value[1:-1].split(", ") if value.startswith("[") else []
    return value if len(parts) <= items + 1 else f"[{', '.join(parts[:items])}, ... {len(parts)} in all]"


def _interval(r) -> bool:
    return r.tpm_half_width is not None and math.isfinite(r.tpm_half_width)


PHASES_WIDE = 0.1   # an interval beside a job wider than this share of the TPM: its batches differ by phase


def _short_of_target(r) -> str:
    """Say so when a steady run stopped at run.max_time with its interval wider than its target: the
    figure is then as precise as the printed interval, not as the target asked (and a run of a
    DBWR-bound system varies from seed to seed by more: `oltpsim reproduce --seeds`). Beside a
    background job the window ends with the job: say why its interval is wide, where it is."""
    target = r.inputs.get("run.target_half_width")
    if "background" in r.extra:   # the window beside a job ends with the job, whatever the interval
        wide = r.tpm and _interval(r) and r.tpm_half_width / r.tpm > PHASES_WIDE
        return ("   [wide: the batch means beside the job differ phase to phase (run.interval's timeline shows them); "
                "runs replicated give the spread of the mean]" if wide else "")
    if not target or not r.tpm or r.tpm_half_width is None or r.tpm_half_width / r.tpm <= target:
        return ""
    if not math.isfinite(r.tpm_half_width):   # one batch: no spread to estimate an interval from
        return f"   [stopped at run.max_time {r.measured_time:g} s after one batch: no interval; run longer for one]"
    return (f"   [stopped at run.max_time {r.measured_time:g} s: ±{100 * r.tpm_half_width / r.tpm:.1f}%, "
            f"not the {100 * target:g}% target]")


def _not_steady(law: dict, throughput: float) -> str:
    """The response time law's verdict on a window that was not steady (sim/run.py response_time_law)."""
    n, z, measured, expected = law["users"], law["think_keying_s"], law["response_ms"] / 1e3, law["law_response_ms"] / 1e3
    who = f"{n:,} users at {throughput:,.1f} tx/s, keying and thinking {format_quantity(z, 'time')} a transaction,"
    said = (f"{who} wait {format_quantity(expected, 'time')} for a response by the response time law "
            f"(N = X (R + Z)), not the {format_quantity(measured, 'time')} measured" if expected > 0 else
            f"{who} complete more than keying and thinking alone allows (N / X = {format_quantity(n / throughput, 'time')})")
    return (f"NOT STEADY: {said}: the queues were {'still filling' if measured < expected else 'draining'} over the "
            "window, so its response times are a transient's; a longer run.warmup (several responses long) gives "
            "steady ones")


def _log_behind_other_io(r: Result) -> list[str]:
    """LGWR is near full (LGWR_FULL) writing a log on a device busy (DEVICE_BUSY) with other I/O too (a tenth of its
    I/Os or more): its writes wait behind that I/O, and every commit with them."""
    x = r.extra
    d = r.devices.get(x.get("redo_device"))
    if not d or x.get("lgwr_busy_pct", 0.0) < LGWR_FULL or d["util_pct"] < DEVICE_BUSY:
        return []
    other = d["iops"] - x.get("log_writes_per_s", 0.0)
    if other < 0.1 * d["iops"]:
        return []
    return [f"  {x['redo_device']}: LGWR is {x['lgwr_busy_pct']:.0f}% busy writing the log here, behind {other:,.0f} "
            f"other I/Os/s ({d['util_pct']:.0f}% busy): a log device of its own would take that queue off every commit"]


def busiest(r: Result, shown: int = 5) -> str:
    """'busiest: LGWR 100%   strands (mpstat) 82% ...': Result.busiest(), the first `shown`."""
    return _line("busiest", [(k, f"{v:.0f}%") for k, v in r.busiest()[:shown]])


def summary(r: Result) -> str:
    lines = [f"== {r.label}  ({r.profile}, {r.workload}, seed {r.seed})"]
    changed = _line("settings", [(k, v) for k, v in _changed_settings(r)])
    if changed:
        lines.append(changed)
    if r.status != "ok":
        lines.append(f"outcome: {r.status.upper().replace('_', ' ')}  {r.message}")
        if r.status in NO_FIGURES:
            return "\n".join(lines)
    if r.paging_bound:   # more time or less thinking would not help (AWR counts waits once done)
        lines.append(f"throughput: no transaction completed in the measured {r.measured_time:g} s: memory is "
                     f"overcommitted by {r.extra['memory']['overcommit_mb']:,.0f} MB and "
                     f"{r.extra['memory']['working_set_paged_out_pct']:.1f}% of every "
                     "working set is on swap, so the sessions wait for page-ins on the swap device (paging-bound); "
                     "fewer users or more hardware.memory.size give a figure")
    elif r.tpm == 0:   # a ± 0 interval of nothing would read as a measured zero
        job = r.extra.get("background")   # (beside a job the window is the job's: run.max_time caps the one alone)
        window = f" beside {job['workload']} (its elapsed)" if job else ""
        longer = "a longer job" if job else "a longer run.max_time"
        if "iops_per_db_cpu" in r.extra:   # SLOB: a window shorter than one read (it never thinks)
            lines.append(f"throughput: no block read completed in the measured {r.measured_time:g} s{window}; "
                         f"{longer} gives a figure")
        else:
            lines.append(f"throughput: no transaction completed in the measured {r.measured_time:g} s{window}; "
                         f"{longer} (or shorter think/keying times) gives a figure")
    elif r.tpm is not None:
        if "iops_per_db_cpu" in r.extra:   # SLOB's operations are block reads, not transactions: LIOPS
            hw = f" ± {r.tpm_half_width / 60.0:,.0f} (95% CI)" if _interval(r) else ""
            lines.append(f"throughput: {r.throughput_per_s:,.0f} logical reads/s{hw}{_short_of_target(r)}")
        else:
            hw = f" ± {r.tpm_half_width:,.0f} (95% CI)" if _interval(r) else ""
            # TPC-C's own figure counts New-Orders only (tpmC, about 45% of all transactions)
            tpmc = f"   tpmC (New-Order) {r.extra['new_order_tpm']:,.0f}" if "new_order_tpm" in r.extra else ""
            lines.append(f"throughput: {r.tpm:,.0f} TPM{' (all types)' if tpmc else ''}{hw}   "
                         f"({r.throughput_per_s:,.1f} tx/s){tpmc}"
                         f"{_short_of_target(r)}")
    x = r.extra
    job = x.get("background")
    if job and r.tpm is not None and x.get("tpm_alone") is not None:
        lines.append(_alone(r, job["workload"]))
    law = x.get("response_time_law")
    if law and law["steady"] is False:
        lines.append(_not_steady(law, r.throughput_per_s))
    if r.elapsed is not None:
        h, rem = divmod(round(r.elapsed, 2), 3600)   # (rounded first: 119.996 s had printed 0:01:60.00)
        m, s = divmod(rem, 60)
        what = f" of {job['workload']}, beside {r.workload} from {job['started_s']:g} s" if job else ""
        lines.append(f"elapsed{what}: {int(h)}:{int(m):02d}:{s:05.2f}  ({r.elapsed:,.1f} s)")
    cal = job if job and "level_table" in job else x   # (CALIBRATE_IO beside a workload: the job's figures)
    if "level_table" in cal:   # CALIBRATE_IO: max_iops and its level's figures (none within max_latency: 0)
        io = f"I/O of {job['workload']}" if cal is job else "I/O"
        if cal["iops"] > 0:
            lines.append(f"{io}: max_iops {cal['iops']:,.0f}   actual_latency {cal['actual_latency_ms']:.3f} ms   at "
                         f"that level {cal['iops_per_db_cpu']:,.0f} IOPS per DB CPU s, {cal['iops_per_core']:,.0f} "
                         f"IOPS per core, DB CPU {cal['db_cpu_per_s']:.1f} s/s")
        else:
            lines.append(f"{io}: max_iops 0: no load level was within max_latency {cal['max_latency_ms']:g} ms "
                         f"(the job's reads: {cal['mean_iops']:,.0f} IOPS)")
    if "iops_per_db_cpu" in x and "level_table" not in x:  # SLOB: the cost of an I/O in CPU
        reads = _slob_reads(r.tpm, x)
        per_cpu = "—" if math.isnan(x["iops_per_db_cpu"]) else f"{x['iops_per_db_cpu']:,.0f}"   # (no DB CPU yet)
        lines.append(f"I/O: {x['iops']:,.0f} IOPS   {per_cpu} IOPS per DB CPU s   "
                     f"{x['iops_per_core']:,.0f} IOPS per core   DB CPU {x['db_cpu_per_s']:.1f} s/s   {reads}")
    lines.append(f"cpu (vmstat): r {r.run_queue:.1f}  us {r.cpu_usr:.0f}  sy {r.cpu_sys:.0f}  id {r.cpu_idle:.0f}")
    if r.core_utilisation:
        cu = r.core_utilisation
        su = r.strand_utilisation
        lines.append(f"pipeline utilisation per core ({_pipeline_tool(r)}) mean {sum(cu) / len(cu):.0f}% "
                     f"(min {min(cu):.0f}%, max {max(cu):.0f}%);  mpstat: strands busy mean "
                     f"{sum(su) / len(su):.0f}% (min {min(su):.0f}%, max {max(su):.0f}%)"
                     + (f", icsw {x['involuntary_switches_per_s']:,.0f}/s" if "involuntary_switches_per_s" in x else ""))
    ranked = busiest(r)
    if ranked:
        lines.append(ranked)
    lines.append(f"simulated {r.simulated_time:,.1f} s (measured {r.measured_time:,.1f} s) in {r.wall_time:.2f} s wall, "
                 f"{r.events:,} events")
    return "\n".join(lines)


def _alone_mean(alone: dict, kind: str) -> str:
    """A transaction type's mean response alone, in ms ("—": none completed in the window alone)."""
    return f"{alone[kind]:.2f}" if kind in alone else "—"


def _alone(r: Result, job: str) -> str:
    """The throughput beside a background job against the same workload's alone, measured before the job."""
    x = r.extra
    slob = "iops_per_db_cpu" in x   # (logical reads/s, as its throughput line gives them)
    unit, scale = ("logical reads/s", 1 / 60.0) if slob else ("TPM", 1.0)
    hw = x["tpm_alone_half_width"]
    if not x["tpm_alone"]:   # (no change to give against nothing)
        what = "block read" if slob else "transaction"
        return (f"beside {job}: no {what} completed alone either (its first {x['alone_measured_s']:g} s measured, "
                "before the job started; a longer run.max_time gives a figure)")
    alone = f"{scale * x['tpm_alone']:,.0f}" + (f" ± {scale * hw:,.0f}" if hw is not None and math.isfinite(hw) else "")
    # (+ 0.0: no '-0.0%' for a tiny negative, read as a loss)
    change = f"{round(x['tpm_change_pct'], 1) + 0.0:+.1f}% " if "tpm_change_pct" in x else ""
    # (the alone interval only: the window beside runs through the job's phases, PX servers starting then I/O, and
    # its batch means' spread is theirs, not noise: -52% of a T5440's TPM under CTAS had read as within it)
    if change and is_number(hw) and abs(r.tpm - x["tpm_alone"]) <= hw:
        change += "(within noise) "
    # (the CPU then beside vmstat's line of the window beside the job: the headroom the job took)
    cpu = f"; cpu busy {x['cpu_busy_alone_pct']:.0f}% then" if "cpu_busy_alone_pct" in x else ""
    return (f"beside {job}: {change}against {alone} {unit} alone (its first {x['alone_measured_s']:g} s measured, "
            f"before the job started{cpu})")


def _slob_reads(logical: float | None, x: dict) -> str:
    """SLOB's physical reads in a phrase: their wait event's average, or why there is none."""
    if x["iops"] <= 0:   # the cache held the schema where logical reads completed, else none completed at all
        return "no physical read (the buffer cache holds the schema)" if logical else "no read completed"
    wait = x["avg_read_wait_ms"]
    if not wait or math.isnan(wait):   # direct path reads whose slots always held a completed read
        return f"{x['read_wait_event']}: no waits (every read had completed when the session took it)"
    return f"{x['read_wait_event']} avg {wait:.3f} ms"


def full(r: Result) -> str:
    parts = [summary(r)]
    if r.status in NO_FIGURES:
        return parts[0]
    if r.response:
        def ci(v: dict) -> list[str]:   # the mean's 95% interval from batch means ("—": none, see below)
            if not intervals:   # (a result saved before there were any)
                return []
            hw = v.get("mean_ci95")
            return [_ms(hw) if hw is not None and math.isfinite(hw) else "—"]

        intervals = any("mean_ci95" in v for v in r.response.values())
        alone = r.extra.get("response_alone_ms")   # (beside a background job: the mean before it started)
        rows = [[t, f"{v['count']:,}", _ms(v["mean"]), *ci(v), *([_alone_mean(alone, t)] if alone else []),
                 _ms(v["p50"]), _ms(v["p90"]), _ms(v["p99"])] for t, v in r.response.items()]
        head = ["transaction", "count", "mean", *(["± 95%"] if intervals else []), *(["mean alone"] if alone else []),
                "p50", "p90", "p99"]
        text = "Response time (ms)\n" + table(head, rows)
        if intervals and any(row[3] == "—" for row in rows):
            text += ("\n  —: no interval for the mean: under 20 batches, or batches still correlated (a queue whose "
                     "memory is long against the run); a longer run.max_time gives one")
        tp = r.extra.get("tp_monitor")
        if tp:   # a response behind a TP monitor = its wait there for a server session + the transaction
            text += "\n" + _line("TP monitor", [
                ("sessions busy", f"{tp['sessions_busy']:,.1f} of {tp['sessions']:,}"),
                ("requests queued", f"{tp['queued']:,.1f} (at the end {tp['queued_at_end']:,})"),
                # (NaN: the responses measured all took their session up before the window; none in it)
                ("queue wait", "— (no request was taken up by a session in the measured time)"
                 if math.isnan(tp["queue_wait_ms"]) else f"{tp['queue_wait_ms']:.2f} ms, in every response time")])
        parts.append(text)
    if r.top_events:
        rows = [[e["event"], "" if e["waits"] is None else f"{e['waits']:,}", f"{e['time_s']:,.1f}",
                 "" if e["avg_ms"] is None else f"{e['avg_ms']:.2f}", f"{e['pct_call_time']:.1f}"]
                for e in r.top_events[:5]]
        # the share of DB CPU plus waits, as 10g AWR's "% Total Call Time": time a session spends runnable on the
        # run queue is in neither, so a CPU-starved system shows it in vmstat's r, not here
        parts.append("Top 5 timed events (AWR-like; % of DB CPU + wait time, as AWR's % Total Call Time)\n"
                     + table(["event", "waits", "time (s)", "avg wait (ms)", "% call time"], rows))
    if r.devices:
        # (three significant digits below 100/s, as figure() gives: 12 IOPS beside r/s 4 and w/s 9 did not add up)
        rows = [[n, figure(d["iops"]), figure(d["reads_per_s"]), figure(d["writes_per_s"]), f"{d['mb_per_s']:.1f}",
                 f"{d['util_pct']:.0f}", f"{d['avg_service_ms']:.2f}", f"{d['avg_response_ms']:.2f}"]
                for n, d in r.devices.items() if d["iops"] > 0]
        if rows:
            text = "Devices (iostat-like)\n" + table(["device", "IOPS", "r/s", "w/s", "MB/s", "%b", "svc_t (ms)",
                                                       "wait+svc (ms)"], rows)
            # a mirrored or RAID5 write, or a striped I/O split over drives, is several drive operations
            notes = [f"  {n}: {figure(d['iops'])} I/Os/s to the device are {figure(d['drive_ops_per_s'])} drive operations/s; "
                     f"svc_t and %b are the drives', wait+svc the device's I/Os'" for n, d in r.devices.items()
                     if d["iops"] > 0 and abs(d.get("drive_ops_per_s", d["iops"]) / d["iops"] - 1.0) > 0.01]
            # a cache acknowledges a write before the drives destage it, so wait+svc may be below svc_t
            notes += [f"  {n}: writes are acknowledged by the controller's write-back cache; svc_t includes the drives' "
                      "destages, a write's wait+svc is its wait for the cache" for n, d in r.devices.items()
                      if d["iops"] > 0 and d.get("write_cache")]
            # iostat does not show a controller (or a flash array's ports); past half busy and busier than the drives,
            # its FCFS queue is what the I/Os wait in
            notes += [f"  {n}: its busiest controller is {d['controller_util_pct']:.0f}% busy, more than the drives: "
                      "I/Os queue there, in wait+svc and not in %b" for n, d in r.devices.items()
                      if d["iops"] > 0 and d.get("controller_util_pct", 0.0) >= 50.0
                      and d["controller_util_pct"] > d["util_pct"]]
            # LGWR near full where its log writes wait behind other I/O on the device: the log's own device would free it
            notes += _log_behind_other_io(r)
            # a controller's write-back cache that filled in the warm-up starts full (sim/hardware/write_cache.py)
            notes += [f"  {k.split('.', 1)[1]}: its write-back cache filled at {v:.2f} MB/s in the warm-up, so the "
                      "run starts it full (writes wait for destages)"
                      for k, v in r.extra.items() if k.startswith("write_cache_fill_mb_per_s.")]
            parts.append("\n".join([text, *notes]))
    job = r.extra.get("background", {})   # (a background job's own figures: its channels, DOP or load levels)
    parts += [p for p in (_calibration(r.extra), _calibration(job), _load_profile(r.extra), _parallel(r.extra),
                          _parallel(job), _memory(r.extra)) if p]
    if r.core_utilisation:
        rows = [[f"core {i}", f"{u:.0f}"] for i, u in enumerate(r.core_utilisation)]
        if len(rows) <= 16:
            parts.append(f"Pipeline utilisation ({_pipeline_tool(r)})\n" + table(["core", "% pipeline busy"], rows))
    if r.timeline:
        parts.append(timeline(r))
    return "\n\n".join(parts)


def timeline(r: Result) -> str:
    """run.interval's rows as vmstat, corestat, iostat and AWR's snapshots would show each interval: the busiest
    device and the wait event with the most time in it (of the waits that ended there)."""
    steady, cmt = any("tpm" in row for row in r.timeline), r.cmt   # (a steady run's, beside a background job too)
    slob = "iops_per_db_cpu" in r.extra   # (its operations are logical reads: per second, as the summary gives them)
    rows = []
    for row in r.timeline:
        util = {k[7:-9]: v for k, v in row.items() if k.startswith("device.") and k.endswith(".util_pct")}
        dev = max(util, key=util.get, default=None)
        waits = {k[5:-7]: v for k, v in row.items() if k.startswith("wait.") and k.endswith(".time_s")}
        top = max(waits, key=waits.get, default=None)
        if top is None or row["db_cpu_s"] >= waits[top]:   # AWR ranks DB CPU among the timed events
            top = "DB CPU" if row["db_cpu_s"] > 0.0 else None
        rows.append([figure(row["time_s"]), (figure(row["tpm"] / 60.0 if slob else row["tpm"]) if steady
                                             else f"{row['done_pct']:.1f}"),
                     f"{row['run_queue']:.1f}", f"{row['cpu_usr']:.0f}", f"{row['cpu_sys']:.0f}",
                     f"{row['cpu_idle']:.0f}", *([f"{row['core_utilisation_mean']:.0f}"] if cmt else []),
                     f"{sum(v for k, v in row.items() if k.endswith('.iops')):,.0f}",
                     f"{sum(v for k, v in row.items() if k.endswith('.mb_per_s')):,.1f}",
                     "" if dev is None else f"{dev} {util[dev]:.0f}%",
                     top if top in (None, "DB CPU") else f"{top} {_ms(waits[top] / row[f'wait.{top}.waits'])} ms"])
    head = ["t (s)", ("logical reads/s" if slob else "TPM") if steady else "done %", "r", "us", "sy", "id",
            *(["pipe %"] if cmt else []), "IOPS", "MB/s", "busiest %b", "top event (avg wait)"]
    every = format_quantity(r.inputs["run.interval"], "time")
    warm = ("; t up to 0: the warm-up, left out of every figure above" if any(row["warmup"] for row in r.timeline)
            else "")
    job = r.extra.get("background")
    if job:   # (where the job started: its rows are those of the figures above, the earlier of the 'alone' ones)
        warm += (f"; to {job['started_s']:g} s: {r.workload} alone (the figures 'alone' above); after "
                 f"{job['started_s']:g} s: beside {job['workload']} (the others)")
    return (f"Timeline (every {every}, as vmstat, iostat and AWR snapshots show it; result.timeline_frame() in "
            f"Python{warm})\n"
            + "\n".join(line.rstrip() for line in table(head, rows, "r" * (len(head) - 2) + "ll").split("\n")))


def _line(title: str, items: list[tuple[str, str]], width: int = 100) -> str:
    """'Title: name value   name value ...', wrapped between items before `width` columns."""
    if not items:
        return ""
    lines, sep = [f"{title}:"], " "
    for name, value in items:
        item = f"{name} {value}"
        if len(lines[-1]) + len(sep) + len(item) > width:
            lines.append("  " + item)
        else:
            lines[-1] += sep + item
        sep = "   "
    return "\n".join(lines)


def _load_profile(x: dict) -> str:
    """The buffer cache and the datafiles' I/O, as AWR's Load Profile and Instance Efficiency show them."""
    items = []
    if "buffer_hit_ratio" in x:
        items.append(("buffer hit", f"{100 * x['buffer_hit_ratio']:.2f}%"))
    for key, name in (("physical_reads_per_s", "physical reads/s"), ("physical_writes_per_s", "physical writes/s"),
                      ("os_cache_hits_per_s", "OS page-cache hits/s"), ("disk_reads_per_s", "disk reads/s")):
        if key in x:
            items.append((name, f"{x[key]:,.1f}"))
    if "commits_per_log_write" in x:
        items.append(("commits per log write", f"{x['commits_per_log_write']:.2f}"))
    parts = [_line("Load profile", items)]
    latches = sorted({k.split(".")[1] for k in x if k.startswith("latch.") and k.endswith(".gets_per_s")})
    for name in latches:   # AWR's Latch Activity: gets, the share that found it held, sleeps
        parts.append(_line(f"Latch {name}", [("gets/s", f"{x[f'latch.{name}.gets_per_s']:,.0f}"),
                                             ("miss", f"{x[f'latch.{name}.miss_pct']:.2f}%"),
                                             ("sleeps", f"{x[f'latch.{name}.sleeps']:,}")]))
    if x.get("dbwr_backlog_skipped"):   # a steady state at DBWR's free-buffer limit (sim/db/dbwr.py catch_up)
        writes = x.get("physical_writes_per_s") or 0.0
        span = f", ~{x['dbwr_backlog_skipped'] / writes / 60:.0f} min of its writes" if writes else ""
        parts.append(f"DBWR: {x['dbwr_net_fill_per_s']:,.1f} buffers/s behind in the warm-up, so started at its "
                     f"free-buffer limit\n  ({x['dbwr_backlog_skipped']:,} dirty buffers added{span})")
    if x.get("checkpoint_timeout_held"):   # a low-priority checkpoint gets none of a DBWR behind (sim/db/checkpoint.py)
        parts.append("Checkpoint: log_checkpoint_timeout's writes held (DBWR is behind on the LRU, so every "
                     "changed block\n  is written when it leaves the cache)")
    if "file_lock_write_held_pct" in x:   # the file system's per-file (inode) lock
        parts.append(_line("File lock (inode rwlock)", [
            ("write-held", f"{x['file_lock_write_held_pct']:.1f}% of the time"),
            ("readers waiting", f"{x['file_lock_readers_waiting']:.2f}"),
            ("read wait", f"{x['file_lock_read_wait_ms']:.2f} ms"),
            ("write wait", f"{x['file_lock_write_wait_ms']:.2f} ms")]))
    return "\n".join(p for p in parts if p)


def _calibration(x: dict) -> str:
    """CALIBRATE_IO's load levels, and which one gave max_iops (none when every level's latency was over
    max_latency: then max_iops is 0, not a measured zero)."""
    levels = x.get("level_table")
    if not levels:
        return ""
    limit = x["max_latency_ms"]
    rows = [[f"{lv['in_flight']:,}", f"{lv['iops']:,.0f}", f"{lv['latency_ms']:.2f}",
             "max_iops" if lv["iops"] == x["iops"] and lv["latency_ms"] <= limit
             else ("" if lv["latency_ms"] <= limit else "over max_latency")] for lv in levels]
    head = f"CALIBRATE_IO load levels (max_latency {limit:g} ms)"
    if not any(lv["latency_ms"] <= limit for lv in levels):
        head += ": no level was within max_latency, so max_iops is 0; fewer num_physical_disks start lighter"
    return head + "\n" + table(["reads in flight", "IOPS", "latency (ms)", ""], rows)


def _parallel(x: dict) -> str:
    """Parallel execution (V$PX_PROCESS_SYSSTAT-like) and RMAN channels, for batch jobs that used them."""
    items = [("DOP", f"{x['dop']}")] if x.get("dop") else []
    if x.get("px_servers_started"):
        items += [("PX servers started", f"{x['px_servers_started']:,}"), ("peak busy", f"{x['px_peak_busy']:,}"),
                  ("statements queued", f"{x['px_queued']}"), ("downgraded", f"{x['px_downgraded']}")]
        if x.get("px_servers_spawning"):   # busy counts them: more busy than started says why
            items.append(("still being spawned", f"{x['px_servers_spawning']:,}"))
    if x.get("channels_used"):
        used = f"{x['channels_used']}"
        if x.get("channels", x["channels_used"]) > x["channels_used"]:   # a channel takes a file or section at a time
            n = x["work_items"]   # (beside a workload, its database: often one file)
            used += f" of {x['channels']} (a channel backs up one file or section at a time: {n:,} in all)"
        items += [("RMAN channels", used), ("backup pieces", f"{x['pieces']:,}"),
                  ("largest channel", f"{x['largest_channel_mb']:,.0f} MB")]
        if x.get("compressors_mean"):   # they share the last-level cache (workloads/rman.py)
            items.append(("compressing at once (mean)", f"{x['compressors_mean']:.1f}"))
    return _line("Parallel", items)


def _memory(x: dict) -> str:
    """The memory account (MB, as the OS counts it) and what memory costs the CPU (cpustat-like)."""
    out = []
    account = x.get("memory") or {}
    if account:
        out.append(_line("Memory (MB)", [(k.removesuffix("_mb").removesuffix("_pct").replace("_", " "),
                                          f"{v:.1f}%" if k.endswith("_pct") else f"{v:,.0f}")
                                         for k, v in account.items()]))
    paging = x.get("paging")
    if account.get("working_set_paged_out_pct", 0.0) > 0.0 and not paging:
        # (sim/os/vm.py: a process faults its pages back as it wakes from idling; a batch job's run without pause)
        out.append(f"  {account['working_set_paged_out_pct']:.1f}% of every working set is on swap, yet no process "
                   "faulted a page back in the window: only processes that wake after idling (tpcc's terminals) "
                   "page in here, so these figures carry no paging cost")
    if paging:
        out.append(_line("Paging (vmstat)", [("page-ins/s", f"{paging['page_ins_per_s']:,.0f}"),
                                             ("si", f"{paging['swap_in_kb_per_s']:,.0f} KB/s"),
                                             ("so", f"{paging['swap_out_kb_per_s']:,.0f} KB/s"),
                                             ("swap reads/s", f"{paging['swap_reads_per_s']:,.1f}")]))
    if "cpi" in x:
        out.append(_line("Memory stalls", [
            ("latency", f"{x['memory_latency_ns']:.0f} ns ({x['memory_latency_cycles']:.0f} cycles)"),
            ("bandwidth used", f"{x['memory_bandwidth_util_pct']:.1f}%"),
            ("CPI", _cpi(x))]))
        for name, stack in x.get("cpi_by_workload", {}).items():   # (beside a background job: each code's own)
            out.append(f"  {name}'s code: CPI {_cpi(stack)}")
    return "\n".join(out)
