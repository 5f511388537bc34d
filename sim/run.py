"""Run one scenario: warm up, measure in batches until the confidence interval is tight
(steady-state workloads) or run to completion (batch jobs), and collect a Result."""

from __future__ import annotations

import dataclasses
import gc
import math
import threading
import time
from contextlib import contextmanager

import simpy

from sim.config import OltpsimError
from sim.db.checkpoint import PACE_WINDOW
from sim.db.dbwr import TIMEOUT as DBWR_TIMEOUT
from sim.db.instance import redo_device
from sim.metrics import BatchMeans, RatioBatchMeans, batch_means_halfwidth
from sim.result import Result
from sim.scenario import BATCH_MAX_TIME, Scenario
from sim.system import System
from sim.timeline import Timeline
import workloads

_SURE_OF_ZERO = 10   # batches, all equal, before a zero half-width is taken as a run that does not vary


def _events_scheduled(env) -> int:
    # SimPy numbers every scheduled event with an itertools.count; reading it costs nothing.
    return env._eid.__reduce__()[1][0]


def run(scenario: Scenario, progress=None) -> Result:
    """Simulate a resolved scenario. `progress(fraction)` is called now and then if given."""
    if not isinstance(scenario, Scenario):   # a notebook's slip: a mapping or a path instead of a Scenario
        raise OltpsimError(f"run: scenario: got {type(scenario).__name__} {scenario!r:.80}; expected a resolved "
                           "Scenario: scenario.load(path, overrides, profile=..., workload=...) or "
                           "scenario.resolve(mapping)")
    t_wall = time.perf_counter()
    system = System(scenario)
    module = workloads.get(scenario.spec.workload)
    if scenario.background is not None:   # two workloads share the instance: each one's sessions count their own
        system.instance.serve(scenario.spec.workload)
    workload = module.Workload(system, scenario.params)
    env, spec = system.env, scenario.spec.run
    result = Result(label=scenario.label, profile=scenario.profile.name, workload=scenario.spec.workload,
                    inputs=scenario.describe(), seed=spec.seed)
    outcome = system.admit()
    if outcome is None:
        workload.start()
        outcome = system.admit()   # (the sessions start() made)
    if outcome is not None:  # out of memory before the first transaction
        result.status, result.message = outcome
    else:
        with _collector_spared():
            if workload.kind == "steady":
                _run_steady(system, workload, result, progress)
            else:
                _run_batch(system, workload, result, progress)
        result.simulated_time = env.now
        result.events = _events_scheduled(env)
    if result.status == "out_of_memory":   # the account that ran out, as the message adds it up
        result.extra["memory"] = system.vm.describe()
    result.wall_time = time.perf_counter() - t_wall
    return result


# Python's cycle collector runs every ~700 net allocations and now and then walks every live object.
# A run allocates an event or two per step and keeps a generator per user alive throughout, so the
# walks grow with the users: on the rx5670 with 58,500 idle generators beside 6,500 users, 335 us of
# wall per transaction against 251 without them. The model is built by now, so its objects are frozen
# out of the walks for the run, and the youngest generation is collected every GEN0_THRESHOLD
# allocations (garbage cycles still go, in larger batches). benchmarks/many_users.py, same load:
# 6,500 users 281 -> 230 us per transaction, 65,000 users 338 -> 304. Results are unchanged: nothing
# in the model depends on when garbage goes. Runs in threads of one process (a Dask worker) share
# the collector: the first in sets it up, the last out puts it back.
GEN0_THRESHOLD = 50_000
_spared = {"runs": 0, "threshold": gc.get_threshold()}
_spared_lock = threading.Lock()


@contextmanager
def _collector_spared():
    with _spared_lock:
        if not _spared["runs"]:
            _spared["threshold"] = gc.get_threshold()
            gc.set_threshold(GEN0_THRESHOLD, *_spared["threshold"][1:])
        _spared["runs"] += 1
        gc.freeze()
    try:
        yield
    finally:
        with _spared_lock:
            _spared["runs"] -= 1
            if not _spared["runs"]:
                gc.set_threshold(*_spared["threshold"])
                gc.unfreeze()


def _advance(env, seconds: float) -> None:
    """Run the simulation `seconds` on (none for 0: SimPy refuses an until that is not ahead)."""
    if seconds > 0.0:
        env.run(until=env.now + seconds)


def _until_the_writer_has_written(system: System) -> None:
    """Warm up on while a watched DBWR has written nothing: it waits for a batch's worth or its timeout, and
    a watch with no write of its own cannot tell whether it keeps up (a single slow I/O slave, 94 writes/s
    against 214 dirtied, had been judged keeping up after a 2-s warm-up). Its timeout bounds the wait."""
    env, limit = system.env, system.env.now + DBWR_TIMEOUT + 1.0
    while system.instance.writer_unjudged() and env.now < limit:
        env.run(until=min(limit, env.now + 0.1))


def precise_enough(batches: BatchMeans, min_batches: int, target: float) -> bool:
    """The stopping rule: at least min_batches batch means (as merged while autocorrelated), and a 95% half-width
    within `target` of their mean. Equal counts in a few short batches are chance, not precision: a zero
    half-width stops only from 10."""
    means, _per = batches.batches()
    if len(means) < min_batches:
        return False
    mean = batches.mean
    hw = batch_means_halfwidth(means)
    return mean > 0 and hw / mean <= target and (hw > 0 or len(means) >= _SURE_OF_ZERO)


def _write_caches(system: System) -> list:
    """(device, cache) of the controllers' write-back caches of the system's volumes (sim/hardware/write_cache.py)."""
    return [(name, dev.cache) for name, dev in system.devices.items() if getattr(dev, "cache", None) is not None]


def _fill_caches(system: System, result: Result, caches: list, warmup: float) -> list:
    """End the caches' watch and fill those filling (WriteBackCache.settle); then warm up watching them and
    DBWR: a filled cache whose writes stop waiting for room is draining to a level part full and takes
    its stand-ins back (unfill; DBWR is then watched again, over one more warm-up). The caches left full."""
    env = system.env
    filled = [(name, c) for name, c in caches if c.settle() > 0.0]
    if not filled:
        return []
    for _name, c in filled:
        c.watch(env.now)
    system.instance.watch_writer(env.now)
    _advance(env, warmup)
    kept = []
    for name, c in filled:
        if c.stays_full():
            kept.append((name, c))
            result.extra[f"write_cache_fill_mb_per_s.{name}"] = c.fill_rate / 2**20
        else:
            c.unfill()
    if len(kept) < len(filled):   # DBWR's watch saw a cache that is no longer full: watch it afresh
        system.instance.watch_writer(env.now + warmup / 2)
        _advance(env, warmup)
    return kept


def _settle_writer(system: System, result: Result) -> int:
    """Judge the watched DBWR (once it has written) and move one behind to its free-buffer limit."""
    _until_the_writer_has_written(system)
    skipped = system.instance.settle_writer()
    if skipped:
        result.extra["dbwr_backlog_skipped"] = skipped
        result.extra["dbwr_net_fill_per_s"] = system.instance.dbwr.fill_rate
    return skipped


DRAIN_STEP = 5.0      # s: a step long enough that a draining cache's occupancy falls across it despite the writes' noise
DRAIN_RISE = 0.002    # a rise over a step above this share of the cache: still filling (with DBWR's backlog)
DRAIN_LIMIT = 300.0   # s of warm-up at most


def _until_drained(env, caches: list) -> None:
    """Warm up on while a cache fills with DBWR's backlog of the timeout's writes, held again, or drains it (1,900
    blocks into the opteron 4-way's cache, 25 s to destage, all into a measured run). It has settled when its
    occupancy over a step neither fell nor rose by more than DRAIN_RISE, or is under 0.1%."""
    end = env.now + DRAIN_LIMIT
    while caches and env.now < end:
        before = [c.occupancy() for c in caches]
        env.run(until=min(end, env.now + DRAIN_STEP))
        if all(c.occupancy() < 0.001 or b <= c.occupancy() <= b + DRAIN_RISE for b, c in zip(before, caches)):
            return


def _warm_up(system: System, result: Result) -> None:
    """Run the warm-up, and with run.settle_writer start the writers where a long run has them: a
    controller's write-back cache that fills starts full (_fill_caches), then DBWR is judged at the pace
    that leaves it (one behind starts at its free-buffer limit, sim/db/dbwr.py), then the checkpoint
    timeout's writes start where DBWR keeps up. Where a cache is full with them, DBWR is judged again; if
    they put it behind, they are held after all (a cache filled with them gives back every write not yet
    destaged, and the warm-up goes on until it has settled). Each change is followed by a warm-up at it."""
    env, spec = system.env, system.scenario.spec.run
    caches = _write_caches(system) if spec.settle_writer else []
    if spec.settle_writer:
        system.instance.watch_writer(env.now + spec.warmup / 2)
        for _name, c in caches:
            c.watch(env.now + spec.warmup / 2)
    _advance(env, spec.warmup)   # run.warmup may be 0 s: no warm-up
    skipped, full = 0, []
    if spec.settle_writer:
        full = _fill_caches(system, result, caches, spec.warmup) if caches else []
        skipped = _settle_writer(system, result)
    # a DBWR that keeps up starts the timeout's checkpoint writes: warm up again with them (for at least
    # one PACE_WINDOW, the first of which applies them, so a warm-up shorter than it still sees them); a
    # DBWR found behind (catch_up's net fill rate above 0, whether or not it moved the backlog: one already
    # at its free-buffer limit adds nothing) keeps them held
    if system.instance.release_checkpoints(writer_behind=system.instance.writer_behind()):
        if caches:   # watched from the first window that applies the timeout's writes
            system.instance.watch_writer(env.now + PACE_WINDOW)
            for _name, c in caches:
                c.watch(env.now + PACE_WINDOW)
        env.run(until=env.now + max(spec.warmup, PACE_WINDOW) + (PACE_WINDOW if caches else 0.0))
        if caches:
            filled = _fill_caches(system, result, caches, spec.warmup)
            if filled or full:   # DBWR at a full cache's pace, with the timeout's writes
                _until_the_writer_has_written(system)
                if system.instance.writer_fill_rate() > 0.0:   # behind: the timeout's writes stay held
                    system.instance.hold_checkpoints()
                    for name, c in filled:
                        # every write not yet destaged, not only the stand-ins: the real ones, mostly the timeout's,
                        # kept the drives ~50% busier for ~90 s of a measured run (opteron 4-way, 2,500 users)
                        # while they drained; without the timeout this cache keeps up, near empty
                        c.unfill(everything=True)
                        result.extra.pop(f"write_cache_fill_mb_per_s.{name}", None)
                    _advance(env, spec.warmup)
                    _until_drained(env, [c for _name, c in filled])
            system.instance.unwatch_writer()
    elif skipped:
        _advance(env, spec.warmup)


def _run_steady(system: System, workload, result: Result, progress) -> None:
    """Warm up, then measure until the throughput's interval is tight (or run.max_time). With a background job,
    that is the throughput alone; the job then starts, and the run measures the workload beside it to its end."""
    env, spec, job = system.env, system.scenario.spec.run, system.scenario.background
    timeline = _watch(system, workload)   # (the warm-up's rows too: how the run got to where it is measured)
    _warm_up(system, result)
    checkpoints = system.instance.cached_block_checkpoints
    if checkpoints is not None and checkpoints.timeout is not None:
        result.extra["checkpoint_timeout_held"] = checkpoints.held
    if timeline is not None:
        timeline.close()
    system.reset_stats()
    workload.reset_stats()
    if timeline is not None:
        timeline.start()
    window = _Window(system, workload)
    exhausted = system.vm.exhausted   # (every steady workload so far starts its processes by start(): admitted)
    max_time = spec.cap(batch=False)
    while True:
        # a batch's end from the start, not now + batch: that sum drifts (30,000 10-ms batches ended at 302.59999999987 s)
        env.run(until=window.next_end())
        if exhausted.triggered:   # processes started since, past RAM + swap
            _out_of_memory(system, result, timeline)
            return
        window.add()
        if progress:
            progress(min(1.0, window.span() / max_time) * (1.0 if job is None else 0.5))
        if precise_enough(window.batches, spec.min_batches, spec.target_half_width):
            break
        if window.span() >= max_time - 1e-9:
            break
    if job is None:
        _close(timeline, result)
        _steady_figures(system, workload, result, window)
    else:
        _beside(system, workload, result, progress, timeline, _alone(system, workload, result, window))


def _alone(system: System, workload, result: Result, window: _Window) -> dict:
    """The figures of the window alone, before a background job: kept aside, and forgotten in `result`, so that a
    window beside the job that ends out of memory leaves none of them to read as its own."""
    before = dict(result.extra)   # (the warm-up's: the window beside the job keeps them, not the alone figures)
    _steady_figures(system, workload, result, window)
    alone = {"tpm_alone": result.tpm, "tpm_alone_half_width": result.tpm_half_width,
             "alone_measured_s": result.measured_time, "cpu_busy_alone_pct": 100.0 - result.cpu_idle,
             "response_alone_ms": {t: 1000.0 * v["mean"] for t, v in result.response.items()}}
    for f in dataclasses.fields(Result):
        if f.name in _WINDOW_FIGURES:
            setattr(result, f.name, f.default if f.default is not dataclasses.MISSING else f.default_factory())
    result.extra = before
    return alone


# What a steady window measures (_steady_figures), besides `extra`.
_WINDOW_FIGURES = ("tpm", "throughput_per_s", "tpm_half_width", "cpu_idle", "cpu_usr", "cpu_sys", "run_queue",
                   "core_utilisation", "strand_utilisation", "top_events", "response", "devices", "measured_time")


def _beside(system: System, workload, result: Result, progress, timeline, alone: dict) -> None:
    """Start the scenario's background job now and measure the workload beside it, in batches from now, to the job's
    end (a guard of 30 days, as a batch job's: run.max_time capped the window alone): the workload's figures are
    this window's, the job's elapsed time is result.elapsed and its own figures result.extra['background']; the
    figures `alone` go to result.extra. The counters are reset first, so that every resource figure (CPU, devices,
    waits) is the window's too."""
    env = system.env
    if timeline is not None:
        timeline.close()   # (up to the reset: the window alone's last interval)
    system.reset_stats()
    workload.reset_stats()
    if timeline is not None:
        timeline.rebase()
    name = system.scenario.spec.background.workload
    # (an outcome short of the job's end keeps them too: the job started, and when, and the figures alone)
    result.extra.update(alone, background={"workload": name, "started_s": alone["alone_measured_s"]})
    system.instance.serve(name)
    batch = workloads.get(name).Workload(system, system.scenario.background)
    batch.start()
    window = _Window(system, workload)
    done, exhausted, cap = batch.done, system.vm.exhausted, BATCH_MAX_TIME   # (run.max_time capped the alone window)
    stop = window.start + cap   # (an instant: now - start may fall a rounding short of cap there, and the loop spin)
    while not done.triggered and env.now < stop:
        end = min(window.next_end(), stop)
        env.run(until=simpy.AnyOf(env, [done, exhausted, env.timeout(max(0.0, end - env.now))]))
        if exhausted.triggered:   # the job's processes (PX servers, channels, sessions) past RAM + swap
            _out_of_memory(system, result, timeline)
            return
        if env.now >= window.next_end() - 1e-9:   # a whole batch (a part one at the job's end is in the mean only)
            window.add()
        if progress:
            progress(0.5 + 0.5 * min(1.0, batch.progress()))
    _close(timeline, result)
    if not done.triggered:
        result.status, result.message = "timeout", (f"the background job {name} had not finished after "
                                                     f"{cap:g} s simulated")
    # (no response time law: queues fill as the job starts and drain as it ends, by design, not for want of warm-up)
    _steady_figures(system, workload, result, window, law=False)
    result.elapsed = window.span()
    result.extra["background"].update(batch.report(window.span()))
    if alone["tpm_alone"]:
        result.extra["tpm_change_pct"] = 100.0 * (result.tpm / alone["tpm_alone"] - 1.0)


def _out_of_memory(system: System, result: Result, timeline) -> None:
    result.status, result.message = "out_of_memory", f"{system.vm.shortfall_message()} ({system.env.now:g} s in)"
    _close(timeline, result)   # (up to the run's end: the intervals that led there)


class _Window:
    """A steady workload's measured window, batch by batch from its start: its throughput by batch means, and the
    mean response time of each transaction type by batch (seconds of response, transactions), for their intervals."""

    def __init__(self, system: System, workload):
        self.env, self.workload = system.env, workload
        self.length = system.scenario.spec.run.batch
        keep = 2 * system.scenario.spec.run.min_batches
        self.start, self.last = system.env.now, 0
        self.batches = BatchMeans(keep=keep)
        self.timed = getattr(workload, "response", {})   # (Tally by type: the workloads that time transactions)
        self.responses = {t: RatioBatchMeans(keep=keep) for t in self.timed}
        self.seen = {t: (0.0, 0) for t in self.timed}

    def next_end(self) -> float:
        return self.start + (self.batches.count + 1) * self.length

    def span(self) -> float:
        return self.env.now - self.start

    def add(self) -> None:
        """The batch that ends now."""
        w = self.workload
        self.batches.add((w.completed - self.last) / self.length)
        self.last = w.completed
        for t, tally in self.timed.items():
            total, n = self.seen[t]
            self.responses[t].add(tally.total - total, tally.n - n)
            self.seen[t] = tally.total, tally.n


def _steady_figures(system: System, workload, result: Result, window: _Window, law: bool = True) -> None:
    """The window's throughput, response times and resources into `result` (with `law`, the response time law's
    check of a closed population's window: response_time_law)."""
    span = window.span()
    report = workload.report(span)
    result.tpm = report.pop("tpm")
    result.throughput_per_s = report.pop("throughput_per_s")
    means, per = window.batches.batches()
    # (nothing completed: no interval, not a ± 0 that would read as a measured zero)
    result.tpm_half_width = batch_means_halfwidth(means) * 60.0 if workload.completed else math.nan
    result.response = report.pop("response", {})
    for t, figures in result.response.items():   # (of the mean: the percentiles' would need the batches' histograms)
        figures["mean_ci95"] = window.responses[t].halfwidth() if t in window.responses else float("nan")
    result.extra.update(report)
    population = getattr(workload, "population", None)   # (a closed population of users that think)
    if law and population is not None and workload.completed:
        result.extra["response_time_law"] = response_time_law(*population(), result.throughput_per_s,
                                                              result.tpm_half_width / 60.0, window.timed.values())
    result.extra["batches"] = len(means)   # the interval's, as merged (of batch_s each)
    result.extra["batch_s"] = window.length * per   # the batches' length, as merged
    result.measured_time = span
    _collect(system, result, span)


LAW_MARGIN = 0.1   # a mean response within 10% of the law's is steady enough, whatever the intervals say


def response_time_law(users: int, think: float, throughput: float, halfwidth: float, tallies) -> dict:
    """The interactive response time law, N = X (R + Z): each of a closed population's N users is either
    waiting for a response or keying and thinking (Z a transaction), so in steady state the mean response R
    is N / X - Z. A window whose mean response is off it by more than the throughput's interval allows
    (twice it, either way) and by more than LAW_MARGIN saw its queues still filling (R below the law's:
    what completed had queued behind fewer) or draining (above): its response times are a transient's,
    whatever their intervals say. steady is None when the throughput has no interval (one batch)."""
    n = sum(t.n for t in tallies)
    measured = sum(t.total for t in tallies) / n
    law = users / throughput - think
    low = users / (throughput + 2.0 * halfwidth) - think
    high = users / (throughput - 2.0 * halfwidth) - think if throughput > 2.0 * halfwidth else math.inf
    steady = (None if not math.isfinite(halfwidth) else
              low <= measured <= high or abs(measured - law) <= LAW_MARGIN * max(measured, law))
    return {"users": users, "think_keying_s": think, "response_ms": 1000.0 * measured,
            "law_response_ms": 1000.0 * law, "steady": steady}


PROGRESS_STEP = 10.0   # s simulated between a batch job's progress reports: a bar that moves on a long job


def _run_batch(system: System, workload, result: Result, progress) -> None:
    env, spec = system.env, system.scenario.spec.run
    done, max_time = workload.done, spec.cap(batch=True)
    step = min(max_time / 100.0, PROGRESS_STEP)
    exhausted = system.vm.exhausted   # the job's processes (PX servers, channels, sessions) past RAM + swap
    timeline = _watch(system, workload)
    while not done.triggered and env.now < max_time:
        # Stop at the job's end, not at the next progress step: the elapsed time is the job's.
        tick = env.timeout(min(step, max_time - env.now))
        env.run(until=simpy.AnyOf(env, [done, tick, exhausted]))
        if exhausted.triggered:
            result.status, result.message = "out_of_memory", (f"{system.vm.shortfall_message()}, once the job had "
                                                              f"started its processes ({env.now:g} s in)")
            _close(timeline, result)
            return
        if progress:
            progress(min(1.0, workload.progress()))
    span = env.now
    _close(timeline, result)
    if not done.triggered:
        result.status, result.message = "timeout", (f"not finished after {max_time:g} s simulated (run.max_time; "
                                                     "a larger one lets it finish)")
    result.elapsed = span
    result.measured_time = span
    result.extra.update(workload.report(span))
    _collect(system, result, span)


def _watch(system: System, workload) -> Timeline | None:
    """A timeline from now, if run.interval asks for one."""
    interval = system.scenario.spec.run.interval
    if interval is None:
        return None
    timeline = Timeline(system, workload, interval)
    timeline.start()
    return timeline


def _close(timeline: Timeline | None, result: Result) -> None:
    if timeline is not None:
        timeline.close()
        result.timeline = timeline.rows


def _collect(system: System, result: Result, span: float) -> None:
    cpu, disp, inst = system.cpu, system.dispatcher, system.instance
    busy, sys = cpu.strand_time()
    capacity = cpu.cpu_count * span
    result.cpu_idle = 100.0 * max(0.0, 1.0 - busy / capacity)
    result.cpu_usr = 100.0 * (busy - sys) / capacity
    result.cpu_sys = 100.0 * sys / capacity
    result.run_queue = disp.mean_run_queue()
    result.core_utilisation = [100.0 * u for u in cpu.core_utilisation()]
    result.strand_utilisation = [100.0 * u for u in disp.strand_utilisation()]
    # mpstat's icsw: bursts sent back to the run queue at the end of their time slice
    result.extra["involuntary_switches_per_s"] = disp.involuntary_switches / span
    instructions = cpu.instructions_retired()
    result.extra["instructions_per_s"] = instructions / span
    result.extra.update(system.memory.report(busy, instructions))
    if cpu.codes > 1:   # beside a background job: each workload's code its own CPI stack, as per-process counters
        names = {code: tenant for tenant, code in inst.codes.items()}
        result.extra["cpi_by_workload"] = {
            names.get(k, f"code {k}"): system.memory.cpi_stack(held, n, missed / n, stalled / n)
            for k, (held, n, stalled, missed) in enumerate(cpu.by_code()) if n > 0}
    result.extra["memory"] = system.vm.describe()   # every workload's processes and segments, as free -m adds them
    if system.vm.page_ins:
        result.extra["paging"] = system.vm.paging(span)
    # AWR: top timed events, with CPU as "DB CPU" (busy strand time, foreground and background), each as a share
    # of CPU + waits ("% Total Call Time"; run-queue time is in neither, as in AWR)
    events = [{"event": name, "waits": st.waits, "time_s": st.time,
               "avg_ms": 1000.0 * st.time / st.waits if st.waits else 0.0}
              for name, st in inst.waits.events.items()]
    events.append({"event": "DB CPU", "waits": None, "time_s": busy, "avg_ms": None})
    total = sum(e["time_s"] for e in events) or 1.0
    for e in events:
        e["pct_call_time"] = 100.0 * e["time_s"] / total
    result.top_events = sorted(events, key=lambda e: -e["time_s"])
    for name, dev in system.devices.items():
        disks = getattr(dev, "disks", [dev])
        n = sum(d.service.n for d in disks)
        result.devices[name] = {
            "iops": dev.ios / span, "reads_per_s": (dev.ios - dev.writes) / span, "writes_per_s": dev.writes / span,
            "mb_per_s": dev.bytes / span / 2**20,
            "util_pct": 100.0 * sum(d.util.mean() for d in disks) / len(disks),
            "avg_service_ms": 1000.0 * sum(d.service.total for d in disks) / n if n else 0.0,
            # wait+svc as the host sees its I/Os (iops x it = I/Os in flight): the queues at the drives and at the
            # controller, and a striped I/O's slowest piece
            "avg_response_ms": 1000.0 * dev.response.mean if dev.response.n else 0.0,
            "drive_ops_per_s": n / span,
            # the busiest controller, bus or port between the drives and the host (0 where the profile gives none):
            # iostat does not show it, yet a saturated one queues every I/O (in wait+svc, not in the drives' %b)
            "controller_util_pct": 100.0 * max((c.utilisation() for c in getattr(dev, "controllers", [])), default=0.0),
        }
        if getattr(dev, "cache", None) is not None and dev.cache.writes:   # writes a write-back cache acknowledged
            result.devices[name]["write_cache"] = True
    if inst.datafiles is not None:   # physical I/O of the datafiles, as AWR's Load Profile shows it
        fs = inst.datafiles
        result.extra.update(physical_reads_per_s=inst.physical_reads / span, physical_writes_per_s=inst.dbwr.writes / span,
                            os_cache_hits_per_s=fs.cache_hits / span,
                            disk_reads_per_s=(inst.physical_reads - fs.cache_hits) / span)
    lg = inst.lgwr
    if lg.writes:
        result.extra["commits_per_log_write"] = lg.commits / lg.writes
    if lg.utilisation() > 0.0:   # (a write in hand counts, though none completed)
        result.extra["lgwr_busy_pct"] = 100.0 * lg.utilisation()   # (one process: near 100 it bounds the commits)
        result.extra["log_writes_per_s"] = lg.writes / span
        result.extra["redo_device"] = redo_device(inst.spec, list(inst.devices))
